# The tracer's system calls and signals from the code cache (trace_sys.c):
# run without a ptrace stop unless watched; exact counts, the stats, %rcx
# and %r11 after `syscall`.
CHECK_PROGS += $(B)/ctests/test_trace_sys
CHECK_DEPS += $(TD)/calib_sys

$(B)/ctests/test_trace_sys: ctests/test_trace_sys.c ctests/calib_prog.h $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)

$(TD)/calib_sys: ctests/trace/calib_sys.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@

# make bench: a system call and a signal natively, traced with every call
# stopped, traced with fast system calls (bench/bench_sys.c)
BENCH_TARGETS += bench-sys
$(B)/bench_sys: bench/bench_sys.c $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS)
bench-sys: $(B)/bench_sys $(TD)/calib_sys
	$(B)/bench_sys $(TD)/calib_sys $(BENCH_SYS_N)
.PHONY: bench-sys
