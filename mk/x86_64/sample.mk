# papi_flops_run --sample (utils/pf_sample*.c): its test program, built
# with frame pointers (the hw path's stacks are the kernel's frame-pointer
# walk), and its test (the hw path on software events standing in for
# the natives; the trace source exactly).
$(B)/ctests/trace/calib_sample: ctests/trace/calib_sample.c
	@mkdir -p $(dir $@)
	$(CC) -O0 -fno-omit-frame-pointer $(CALIB_CFLAGS) $< -o $@
CHECK_DEPS += $(B)/ctests/trace/calib_sample
CHECK_SCRIPTS += ctests/test_sample.sh
