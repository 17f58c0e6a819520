# The tracer attached to a running process (papi_flops_run --pid) and the
# per-thread counts it publishes to that process (the flops component's
# PAPI_FLOPS_SOURCE=trace reads them: pub.c is in libpapi too).
CORE_SRCS += components/flops/core/pub.c \
             components/flops/core/trace/trace_pub.c components/flops/core/trace/trace_attach.c
