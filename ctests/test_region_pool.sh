#!/bin/sh
# --region F counts what runs on behalf of F (issue 19 item 1): every
# thread's work between F's entry and its return, pool threads made
# before the call included, per thread in --json; a thread that was
# running (not waiting) when the call began and did FP work in it is said
# in one line.  calib_pool (ctests/trace/calib_pool.c): an OpenMP team,
# a pthread pool on a condition variable, an unrelated busy thread; then
# OpenBLAS dgemm with 1 and 2 threads where libopenblas-dev is installed
# (bench_dgemm).  Both engines: the code cache must count what the
# stopping engine counts.
B=${B:-build}
RUN=$B/papi_flops_run
TD=$B/ctests/trace
P=$TD/calib_pool
N=20000
. "$(dirname "$0")/testlib.sh"
command -v jq >/dev/null || { echo "SKIP: test_region_pool: jq not installed"; exit 77; }

# run ENGINE NAME REGION PROG ARGS...: the JSON report in $tmp/NAME.json
run() {
	e=$1 n=$2 r=$3; shift 3
	PFLOPS_TRACE_ENGINE=$e $RUN --source trace --json -o "$tmp/$n.json" --region "$r" -- "$@" >/dev/null 2>"$tmp/$n.err"
}
j() { jq -r "$2" "$tmp/$1.json"; }
jc() { jq -c "$2" "$tmp/$1.json"; }
# the threads' FLOPs add up to the count
sum_ok() { [ "$(j "$1" '[.region_threads[].flops] | add')" = "$(j "$1" .metrics.DP_OPS)" ]; }
no_note() { ! grep -q "running (not waiting)" "$tmp/$1.json"; }

for e in stop cache; do
	# pthread pool: 2 workers waiting on a condition variable do the two
	# calls' work (2N each), the caller none
	if run $e pool$e pool_kernel $P pool $N; then
		[ "$(j pool$e .metrics.DP_OPS)" = $((4 * N)) ] && ok || bad "$e pool: DP_OPS $(j pool$e .metrics.DP_OPS), want $((4 * N))"
		[ "$(j pool$e '[.region_threads[] | select(.role == "pool" and .flops == '$((2 * N))')] | length')" = 2 ] &&
			[ "$(j pool$e '[.region_threads[] | select(.role == "caller")][0].flops')" = 0 ] && sum_ok pool$e && no_note pool$e &&
			ok || bad "$e pool: threads $(jc pool$e .region_threads) $(jc pool$e .caveats)"
	else
		bad "$e pool: rc $? $(cat "$tmp/pool$e.err")"
	fi

	# OpenMP: the team made by a parallel region before the call, waiting
	# in a futex (passive) or spinning when the call begins
	OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive run $e omp$e omp_kernel $P omp $N; rc=$?
	if [ $rc = 3 ]; then
		echo "SKIP: test_region_pool: calib_pool was built without OpenMP (the compiler lacks -fopenmp)"
	elif [ $rc = 0 ]; then
		[ "$(j omp$e .metrics.DP_OPS)" = $((4 * N)) ] && ok || bad "$e omp: DP_OPS $(j omp$e .metrics.DP_OPS), want $((4 * N))"
		[ "$(j omp$e '[.region_threads[] | select(.role == "pool" and .flops > 0)] | length')" = 1 ] &&
			[ "$(j omp$e '[.region_threads[] | select(.role == "caller" and .flops > 0)] | length')" = 1 ] &&
			sum_ok omp$e && no_note omp$e && ok || bad "$e omp: threads $(jc omp$e .region_threads) $(jc omp$e .caveats)"
		# spinning (PAUSE loop) when each call begins: waiting too
		OMP_NUM_THREADS=2 OMP_WAIT_POLICY=active run $e ompspin$e omp_kernel $P ompspin $N &&
			[ "$(j ompspin$e .metrics.DP_OPS)" = $((4 * N)) ] && sum_ok ompspin$e && no_note ompspin$e &&
			[ "$(j ompspin$e '[.region_threads[] | select(.role == "pool" and .flops > 0)] | length')" = 1 ] &&
			ok || bad "$e omp (spinning team): DP_OPS $(j ompspin$e .metrics.DP_OPS), want $((4 * N)); $(jc ompspin$e .region_threads) $(jc ompspin$e .caveats)"
	else
		bad "$e omp: rc $rc $(cat "$tmp/omp$e.err")"
	fi

	# many short calls while two threads wait in a futex all along: each
	# call stops them inside the system call, which must carry on as if
	# nothing happened (the program checks the futex's return)
	if run $e many$e tiny_kernel $P many 500; then
		[ "$(j many$e .metrics.DP_OPS)" = 1000 ] && [ "$(j many$e .exit_status)" = 0 ] && no_note many$e && ok ||
			bad "$e many: DP_OPS $(j many$e .metrics.DP_OPS), want 1000; exit $(j many$e .exit_status)"
	else
		bad "$e many: rc $? $(cat "$tmp/many$e.err")"
	fi

	# a busy thread that is not the kernel's: counted, and said
	if run $e busy$e busy_kernel $P busy $N; then
		grep -q "1 time a thread that was running (not waiting) when a call to busy_kernel began did FP work during it: [0-9]* FLOPs counted that may be unrelated" \
			"$tmp/busy$e.json" &&
			[ "$(j busy$e '[.region_threads[] | select(.role == "caller")][0].flops')" = $((2 * N)) ] &&
			[ "$(j busy$e '[.region_threads[] | select(.role == "running" and .flops > 0)] | length')" = 1 ] &&
			sum_ok busy$e && ok || bad "$e busy: $(jc busy$e .region_threads) $(jc busy$e .caveats)"
	else
		bad "$e busy: rc $? $(cat "$tmp/busy$e.err")"
	fi
done

# OpenBLAS: its pool (made when the library loads) does the call's work;
# 2 threads count what 1 counts but for the split's own edge code, and
# the cache what the stopping engine counts
D=$B/bench_dgemm
if [ -x "$D" ]; then
	OPENBLAS_NUM_THREADS=1 run cache blas1 cblas_dgemm $D 200 &&
		OPENBLAS_NUM_THREADS=2 run cache blas2 cblas_dgemm $D 200 &&
		OPENBLAS_NUM_THREADS=2 run stop blas2s cblas_dgemm $D 200 || bad "dgemm: $(cat "$tmp"/blas*.err)"
	one=$(j blas1 .metrics.DP_OPS) two=$(j blas2 .metrics.DP_OPS)
	d=$((two - one)); [ $d -lt 0 ] && d=$((-d))
	[ "$one" -ge 16000000 ] && [ $((d * 1000)) -le "$one" ] && ok || bad "dgemm 200: 1 thread $one, 2 threads $two"
	[ "$two" = "$(j blas2s .metrics.DP_OPS)" ] && ok || bad "dgemm 200, 2 threads: cache $two, stop $(j blas2s .metrics.DP_OPS)"
	[ "$(j blas2 '[.region_threads[] | select(.flops > 0)] | length')" = 2 ] && sum_ok blas2 && ok ||
		bad "dgemm 200, 2 threads: $(jc blas2 .region_threads)"
else
	echo "SKIP: test_region_pool: OpenBLAS (libopenblas-dev) not installed: the dgemm part did not run"
fi

echo "test_region_pool: $pass passed, $fail failed"
[ $fail = 0 ]
