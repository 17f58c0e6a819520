# The flops PAPI component: its counting engine (in the core library), the
# engine's tests, and (mk/papi.mk) the libpapi built with the component.
CORE_SRCS += components/flops/core/count_perf.c

CHECK_PROGS += $(B)/test_count_perf

$(B)/test_count_perf: ctests/test_count_perf.c $(CORE_LIB)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)
