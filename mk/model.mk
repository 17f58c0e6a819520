# The instruction mix and the PMU models evaluated on it (the model:
# source, papi_flops_check): every architecture builds them; the tracer
# that fills the mix is mk/$(ARCH)/trace.mk.
MODEL_CORE = components/flops/core
CORE_SRCS += $(MODEL_CORE)/mix.c $(MODEL_CORE)/model.c

CHECK_PROGS += $(B)/ctests/test_model
$(B)/ctests/test_model: ctests/test_model.c $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)
