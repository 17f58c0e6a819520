# Utilities.
UTILS += $(B)/papi_flops_avail
MAN_PAGES += docs/man/papi_flops_avail.1

$(B)/papi_flops_avail: utils/papi_flops_avail.c $(CORE_LIB)
	$(CC) $(CPPFLAGS) -Iutils $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS)
