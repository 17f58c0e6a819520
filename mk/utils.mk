# Utilities.
# The version every tool prints: AC_INIT's in configure.ac, nowhere else.
PF_VERSION_H = $(B)/gen/pf_version.h
$(PF_VERSION_H): Makefile
	@mkdir -p $(dir $@)
	@echo '#define PF_VERSION "$(PACKAGE_VERSION)"' > $@

UTILS += $(B)/papi_flops_avail
MAN_PAGES += docs/man/papi_flops_avail.1

$(B)/papi_flops_avail: utils/papi_flops_avail.c utils/pf_output.c utils/pf_output.h $(PF_VERSION_H) $(CORE_LIB)
	$(CC) $(CPPFLAGS) -Iutils $(PF_CFLAGS) $< utils/pf_output.c -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS)

UTILS += $(B)/papi_flops_run
MAN_PAGES += docs/man/papi_flops_run.1
PF_RUN_SRCS += utils/papi_flops_run.c utils/pf_run_hw.c utils/pf_run_mask.c utils/pf_run_funcs.c utils/pf_report.c utils/pf_mpi.c \
              utils/pf_signal.c utils/pf_output.c utils/pf_papi_helper.c utils/pf_sample.c utils/pf_sample_hw.c
$(B)/papi_flops_run: $(PF_RUN_SRCS) utils/pf_output.h utils/pf_signal.h utils/pf_run_hw.h utils/pf_run_mask.h utils/pf_run_funcs.h utils/pf_report.h utils/pf_mpi.h utils/pf_sample.h utils/pf_sample_hw.h utils/pf_sample_trace.h \
                     utils/pf_json.h utils/pf_papi_helper.h $(PF_VERSION_H) $(CORE_LIB)
	$(CC) $(CPPFLAGS) -Iutils $(PF_CFLAGS) $(PF_RUN_SRCS) -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(PF_RUN_LIBS) -lm
CHECK_SCRIPTS += ctests/test_avail.sh ctests/test_tools.sh

UTILS += $(B)/papi_flops_check
MAN_PAGES += docs/man/papi_flops_check.1
$(B)/papi_flops_check: utils/papi_flops_check.c utils/pf_output.c utils/pf_output.h utils/pf_kernels.h $(PF_VERSION_H) $(CORE_LIB) Makefile
	$(CC) $(CPPFLAGS) -Iutils $(PF_CFLAGS) -DPF_KERNELS='"$(libexecdir)/papi-flops/papi_flops_kernels"' $< utils/pf_output.c -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) -lm

# The quick start's example (the kernels papi_flops_check runs, x86-64:
# mk/x86_64/trace.mk).
PF_EXAMPLE = $(B)/papi_flops_example
default-target: $(PF_EXAMPLE)
$(PF_EXAMPLE): examples/matmul.c
	$(CC) -O2 -fno-tree-vectorize -Wall $< -o $@
install: install-example
install-example: $(PF_EXAMPLE)
	@$(INSTALL) -d $(DESTDIR)$(libexecdir)/papi-flops
	@$(INSTALL) -m 755 $(PF_EXAMPLE) $(DESTDIR)$(libexecdir)/papi-flops/papi_flops_example
	@echo "install: the example in $(DESTDIR)$(libexecdir)/papi-flops"
.PHONY: install-example
