# MPI jobs (docs/mpi.md): papi_flops_report merges the per-rank reports
# papi_flops_run writes under mpirun or srun; its JSON reader's fuzz
# harness; the tests, with the launchers' variables set by hand and with a
# real Open MPI.  After utils.mk (the file name sorts so): it uses
# $(PF_VERSION_H).
UTILS += $(B)/papi_flops_report
MAN_PAGES += docs/man/papi_flops_report.1
PF_JOB_SRCS = utils/pf_job_read.c utils/pf_job.c utils/pf_job_write.c utils/pf_jread.c utils/pf_report.c
PF_JOB_HDRS = utils/pf_job.h utils/pf_jread.h utils/pf_report.h utils/pf_json.h utils/pf_mpi.h
$(B)/papi_flops_report: utils/papi_flops_report.c $(PF_JOB_SRCS) $(PF_JOB_HDRS) $(PF_VERSION_H) $(CORE_LIB)
	$(CC) $(CPPFLAGS) -Iutils $(PF_CFLAGS) utils/papi_flops_report.c $(PF_JOB_SRCS) -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS)
CHECK_SCRIPTS += ctests/test_report.sh ctests/test_mpi.sh

# The fuzz harness of the report reader (fuzz/fuzz_report.c): it needs
# the reader's files of utils/, so it has its own rule.
FUZZ_NAMES += report
fuzz-harnesses: $(B)/fuzz/fuzz_report
$(B)/fuzz/fuzz_report: fuzz/fuzz_report.c fuzz/fuzz.h $(PF_JOB_SRCS) $(PF_JOB_HDRS) $(PF_VERSION_H) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Iutils $(PF_CFLAGS) -fsanitize=fuzzer $< $(PF_JOB_SRCS) -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS)
