#!/bin/sh
# make bench: what PAPI_FLOPS_SOURCE=trace costs a PAPI program, beside
# papi_flops_run --source trace on the same work and the native run
# (flops_trace_test: scalar, FMA and AVX-512 kernels, N times).
B=${B:-build}
T=$B/flops_trace_test
N=${N:-4000}
[ -x "$T" ] && [ -f "$B/papi/.built" ] || { echo "bench-papi-trace: libpapi not built"; exit 0; }
export LD_LIBRARY_PATH=$B/papi/src PAPI_FLOPS_TRACER=$B/papi_flops_run
secs() { s=$(date +%s.%N); "$@" > /dev/null 2>&1 || echo "bench-papi-trace: $* failed" >&2; awk "BEGIN { print $(date +%s.%N) - $s }"; }
native=$(secs $T work $N)
run=$(secs $B/papi_flops_run -q -s trace -- $T work $N)
papi=$(secs env PAPI_FLOPS_SOURCE=trace $T papiwork $N)
awk -v n=$N -v a="$native" -v r="$run" -v p="$papi" 'BEGIN {
	printf "bench-papi-trace: %d x the kernels: native %.3f s, papi_flops_run --source trace %.3f s (x%.1f), PAPI with PAPI_FLOPS_SOURCE=trace %.3f s (x%.1f)\n",
	       n, a, r, r / a, p, p / a }'
