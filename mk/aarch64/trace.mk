# No tracer on aarch64 yet (core/trace/ decodes and rewrites x86-64 code):
# its entry points refuse with one sentence (trace_none.c), so the tools
# build unchanged; the trace source, model:PMU, --by-function and
# papi_flops_check's kernels say they are x86-64 only.  ctests/test_arm.sh
# checks that, and what does work here.
CORE_SRCS += components/flops/core/trace_none.c
CHECK_SCRIPTS += ctests/test_arm.sh
