# The tracer attached to a running process (papi_flops_run --pid) and the
# per-thread counts it publishes to that process (the flops component's
# PAPI_FLOPS_SOURCE=trace reads them: pub.c is in libpapi too).
CORE_SRCS += components/flops/core/trace/trace_pub.c components/flops/core/trace/trace_attach.c

# The trace sources inside PAPI: a PAPI client on known loops.
CHECK_SCRIPTS += components/flops/tests/papi_trace.sh
ifneq ($(PAPI_SRC),no)
CHECK_DEPS += $(B)/flops_trace_test $(B)/flops_trace_ovf_test
endif
$(B)/flops_trace_test: components/flops/tests/flops_trace_test.c components/flops/tests/check.h $(PAPI_STAMP)
	$(CC) -I$(PAPI_BUILD)/src $(PF_CFLAGS) $< -o $@ $(LDFLAGS) -L$(PAPI_BUILD)/src -lpapi -lpthread -Wl,-rpath,$(abspath $(PAPI_BUILD)/src)
# PAPI_overflow under the trace source
$(B)/flops_trace_ovf_test: components/flops/tests/flops_trace_ovf_test.c components/flops/tests/check.h $(PAPI_STAMP)
	$(CC) -I$(PAPI_BUILD)/src $(PF_CFLAGS) $< -o $@ $(LDFLAGS) -L$(PAPI_BUILD)/src -lpapi -lpthread -Wl,-rpath,$(abspath $(PAPI_BUILD)/src)

# make bench: a PAPI program under PAPI_FLOPS_SOURCE=trace vs native and
# vs papi_flops_run --source trace.
BENCH_TARGETS += bench-papi-trace
bench-papi-trace: $(B)/flops_trace_test $(B)/papi_flops_run
	B=$(B) bench/bench_papi_trace.sh
.PHONY: bench-papi-trace
