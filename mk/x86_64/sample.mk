# papi_flops_run --sample (utils/pf_sample*.c): its test program, built
# with frame pointers (the hw path's stacks are the kernel's frame-pointer
# walk), and its test (the hw path on software events standing in for
# the natives; the trace source exactly).  The trace source's sampler
# (stacks unwound with libunwind) is x86-64 only, as the tracer: before
# mk/utils.mk, which adds the rest of papi_flops_run.
PF_RUN_SRCS += utils/pf_sample_trace.c
PF_RUN_LIBS += $(UNWIND_LIBS)
$(B)/ctests/trace/calib_sample: ctests/trace/calib_sample.c
	@mkdir -p $(dir $@)
	$(CC) -O0 -fno-omit-frame-pointer $(CALIB_CFLAGS) $< -o $@
# the same at -O2 without frame pointers: the trace source unwinds by CFI
$(B)/ctests/trace/calib_sample_nofp: ctests/trace/calib_sample.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -fomit-frame-pointer -fno-optimize-sibling-calls $(CALIB_CFLAGS) $< -o $@
CHECK_DEPS += $(B)/ctests/trace/calib_sample $(B)/ctests/trace/calib_sample_nofp
CHECK_SCRIPTS += ctests/test_sample.sh
# OpenBLAS dgemm (make bench's program, where libopenblas-dev is
# installed: trace.mk sets BENCH_DGEMM): the kernel named with its FLOPs
CHECK_DEPS += $(BENCH_DGEMM)
