# Utilities.
UTILS += $(B)/papi_flops_avail
MAN_PAGES += docs/man/papi_flops_avail.1

$(B)/papi_flops_avail: utils/papi_flops_avail.c $(CORE_LIB)
	$(CC) $(CPPFLAGS) -Iutils $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS)

UTILS += $(B)/papi_flops_run
MAN_PAGES += docs/man/papi_flops_run.1
$(B)/papi_flops_run: utils/papi_flops_run.c utils/pf_run_hw.c utils/pf_run_hw.h $(CORE_LIB)
	$(CC) $(CPPFLAGS) -Iutils $(PF_CFLAGS) utils/papi_flops_run.c utils/pf_run_hw.c -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS)
CHECK_SCRIPTS += ctests/test_run.sh
