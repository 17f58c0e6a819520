#!/bin/sh
# papi_flops_run --sample P: a FLOP profile per function and call path.
# hw: no counters here, so perf software events stand in for the natives
# (PAPI_FLOPS_TEST_SWEVENT, as for the component): page-faults (exact
# counts: periods and crediting) and task-clock (stacks of the FP
# functions).  The stand-in's numbers are not FLOPs; the tool says so.
B=${B:-build}
RUN=$B/papi_flops_run
S=$B/ctests/trace/calib_sample
[ -x "$S" ] || { echo "SKIP: $S not built"; exit 77; }
. "$(dirname "$0")/testlib.sh"
need_jq

# ---- usage ----
for args in "--folded $tmp/x --source trace" "--top 3 --source trace" "--sample 0" "--sample -5" "--sample 1x" \
	    "--sample 100 --source model:skx" "--sample 100 --csv" "--sample 100 --mask-sampling 7"; do
	$RUN $args -- $S 10 >/dev/null 2>"$tmp/e"; rc=$?
	[ $rc = 2 ] && [ -s "$tmp/e" ] && ok || bad "papi_flops_run $args: exit $rc, expected 2 with a sentence: $(cat "$tmp/e")"
done

# ---- hw, page-faults standing in: periods and crediting, exactly ----
# skx's FP_OPS has natives of weight 1, 2, 4, 8, 16: periods
# ceil(64 / w); every native counts the same faults; each sample credits 64
if PAPI_FLOPS_TEST_SWEVENT=page-faults PAPI_FLOPS_PMU=skx $RUN --sample 64 --json -o "$tmp/pf.json" --folded "$tmp/pf.folded" \
	-- $S 1000 3000 >"$tmp/out" 2>"$tmp/err"; then
	ok
	grep -q "stand-in.*not FLOPs" "$tmp/err" && ok || bad "stand-in run: no word on stderr that the numbers are not FLOPs: $(cat "$tmp/err")"
	jq_is "$tmp/pf.json" '.sample.test_standin' page-faults
	jq_is "$tmp/pf.json" '[.sample.natives[] | select(.weight > 0) | .period == ((64 + .weight - 1) / .weight | floor)] | all' true
	jq_is "$tmp/pf.json" '[.sample.natives[] | .weight] | sort | unique | map(tostring) | join(",")' "1,2,4,8,16"
	jq_is "$tmp/pf.json" '.sample.sampled == .sample.samples * 64' true
	jq_is "$tmp/pf.json" '.sample.counted == .metrics.FP_OPS' true
	# (per native, this kernel records all the samples of one fault
	# under one event's id: only their sum is checked)
	# samples = sum of count / period over the natives (a count's
	# remainder under its period, per CPU the program ran on, is not a sample)
	jq_is "$tmp/pf.json" '([.sample.natives[] | select(.period > 0) | (.count / .period | floor)] | add) as $e
		| (.sample.samples <= $e) and (.sample.samples >= $e - 2 * (.sample.natives | length))' true
	jq_is "$tmp/pf.json" '.sample.counted >= 3000 * 44' true	# 44: the weights' sum, 3000 faults at least
	jq_is "$tmp/pf.json" '.sample.by_function[0].function' touch
	jq_is "$tmp/pf.json" '.sample.by_function[0].samples * 10 > .sample.samples * 9' true
	jq_is "$tmp/pf.json" '[.sample.by_path[] | select(.path[-2:] == ["main", "touch"])] | length' 1
	jq_is "$tmp/pf.json" '([.sample.by_function[].samples] | add) == .sample.samples' true
	# the folded file: every path, FLOPs adding up to the samples x P
	tot=$(awk '{ s += $NF } END { print s }' "$tmp/pf.folded")
	jq_is "$tmp/pf.json" ".sample.sampled == $tot" true
	grep -q ';main;touch [0-9]*$' "$tmp/pf.folded" && ok || bad "folded: no ...;main;touch line: $(head -5 "$tmp/pf.folded")"
	[ ! -s "$tmp/out" ] && ok || bad "the program's stdout got the report"
else
	bad "page-faults stand-in run failed: $(cat "$tmp/err")"
fi

# ---- hw, task-clock standing in: the stacks of the FP functions ----
# calib_sample N: kern_a 4N loop turns (N via caller_x, 3N via caller_y),
# kern_b N: time (the stand-in) goes as turns times the loop's latency,
# an addpd chain for kern_a, mulsd for kern_b: the same on Zen and Skylake
# (4 times the time), but 2 against 4 cycles on Golden Cove (Sapphire
# Rapids: twice the time), so more than 1.3 times.  In a VM the guest's
# task-clock also runs while the host holds its vCPU (steal time): on a
# loaded host one run in a few gives kern_b as many samples as kern_a
# (seen: 25,939 against 24,936, where 24,106 against 11,912 is usual),
# so up to 5 runs, the checks on the first where kern_a leads by that ratio
# (or the last; seen 2026-11-27: kern_b 1.3 times kern_a's, which the ratio
# alone took for a good run; 2026-11-28: 3 such runs in a row in CI's
# check-nofp16 pass, while 3 runs alone right after passed)
try=0
while :; do
	try=$((try + 1))
	PAPI_FLOPS_TEST_SWEVENT=task-clock $RUN --sample 200000 --json -o "$tmp/tc.json" -- $S 20000000 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc = 0 ] && [ $try -lt 5 ] &&
		[ "$(jq -r '.sample.by_function[0].function == "kern_a" and
			.sample.by_function[0].samples > 1.3 * .sample.by_function[1].samples' "$tmp/tc.json")" != true ] ||
		break
done
if [ $rc = 0 ]; then
	ok
	jq_is "$tmp/tc.json" '.sample.by_function[0].function' kern_a
	jq_is "$tmp/tc.json" '.sample.by_function[1].function' kern_b
	jq_is "$tmp/tc.json" '(.sample.by_function[0].samples > 1.3 * .sample.by_function[1].samples)' true
	for p in caller_x,kern_a caller_y,kern_a kern_b; do
		jq_is "$tmp/tc.json" "[.sample.by_path[] | select(.path | join(\",\") | test(\"(^|,)main,$p\$\"))] | length" 1
	done
	jq_is "$tmp/tc.json" '([.sample.by_path[] | select(.path[-2:] == ["caller_y", "kern_a"]) | .samples] | add) >
		([.sample.by_path[] | select(.path[-2:] == ["caller_x", "kern_a"]) | .samples] | add)' true
else
	bad "task-clock stand-in run failed: $(cat "$tmp/err")"
fi

# ---- trace: exact overflows, stacks unwound by CFI ----
# calib_sample 20000: kern_a 160,000 FP_OPS (40,000 via caller_x, then
# 120,000 via caller_y), kern_b 20,000, nothing else; at P = 1000 every
# stretch ends on a multiple of P, so the profile is exact
trace_ok=0
$RUN --source trace --sample 1000 --by-function=0 --json -o "$tmp/t.json" --folded "$tmp/t.folded" -- $S 20000 >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc != 0 ] && grep -q "does not deliver them" "$tmp/err"; then
	echo "SKIP: test_sample: --sample --source trace: $(cat "$tmp/err")"
elif [ $rc = 0 ]; then
	ok
	trace_ok=1
	jq_is "$tmp/t.json" '.metrics.FP_OPS' 180000
	jq_is "$tmp/t.json" '.sample | "\(.samples) \(.sampled) \(.counted) \(.source)"' "180 180000 180000 trace"
	jq_is "$tmp/t.json" '[.sample.by_function[] | "\(.function)=\(.flops)"] | join(" ")' "kern_a=160000 kern_b=20000"
	jq_is "$tmp/t.json" '[.by_function.rows[] | "\(.function)=\(.FP_OPS)"] | join(" ")' "kern_a=160000 kern_b=20000"
	jq_is "$tmp/t.json" '[.sample.by_path[] | "\(.path[-3:] | join(";"))=\(.flops)"] | join(" ")' \
		"main;caller_y;kern_a=120000 main;caller_x;kern_a=40000 libc.so.6 (no symbol);main;kern_b=20000"
	grep -q '^_start;__libc_start_main;.*;main;caller_x;kern_a 40000$' "$tmp/t.folded" && ok || bad "trace folded: $(cat "$tmp/t.folded")"
	[ ! -s "$tmp/out" ] && ok || bad "trace: the program's stdout got the report"
else
	bad "trace --sample: exit $rc: $(cat "$tmp/err")"
fi
# a period that does not divide the stretches: each function within P of
# --by-function per stretch (kern_a: 2 calls), the total within P
if [ $trace_ok = 1 ]; then
	for P in 777 65536; do
		$RUN --source trace --sample $P --by-function=0 --json -o "$tmp/p.json" -- $S 20000 >/dev/null 2>"$tmp/err" || bad "trace --sample $P: $(cat "$tmp/err")"
		jq_is "$tmp/p.json" ".sample.samples == (180000 / $P | floor)" true
		jq_is "$tmp/p.json" ". as \$r | [.by_function.rows[] | .function as \$f | .FP_OPS as \$x |
			(([\$r.sample.by_function[] | select(.function == \$f) | .flops] | add) // 0) as \$y |
			((\$x - \$y) | fabs) <= 2 * $P] | all" true
	done
fi
# threads: each its own count (calib_threads 3 1000: workers 4000, 8000,
# 12000 DP FLOPs of vaddpd ymm, main 8000 of vmulpd ymm), each multiple
# of P crossed in a thread is one sample of that thread's stack
T=$B/ctests/trace/calib_threads
if [ $trace_ok = 1 ] && [ -x "$T" ]; then
	$RUN --source trace --sample 1000 --json -o "$tmp/th.json" -- $T 3 1000 >/dev/null 2>"$tmp/err" || bad "trace threads: $(cat "$tmp/err")"
	jq_is "$tmp/th.json" '.sample.samples' 32
	jq_is "$tmp/th.json" '[.sample.by_function[] | "\(.function)=\(.flops)"] | join(" ")' "worker=24000 main=8000"
	jq_is "$tmp/th.json" '[.sample.by_path[] | .path[-1]] | join(" ")' "worker main"
fi
# -O2 without frame pointers: the same paths, from the files' CFI
if [ $trace_ok = 1 ]; then
	$RUN --source trace --sample 1000 --json -o "$tmp/n.json" -- ${S}_nofp 20000 >/dev/null 2>"$tmp/err" || bad "trace nofp: $(cat "$tmp/err")"
	jq_is "$tmp/n.json" '[.sample.by_path[] | "\(.path[-3:] | join(";"))=\(.flops)"] | join(" ")' \
		"main;caller_y;kern_a=120000 main;caller_x;kern_a=40000 libc.so.6 (no symbol);main;kern_b=20000"
fi
# OpenBLAS dgemm (make bench's program): the kernel function named, with
# --by-function's FLOPs within the error the profile states
D=$B/bench_dgemm
if [ $trace_ok = 1 ] && [ -x "$D" ]; then
	OPENBLAS_NUM_THREADS=1 $RUN --source trace --sample 100000 --by-function=0 --json -o "$tmp/d.json" -- $D 200 1 >/dev/null 2>"$tmp/err" ||
		bad "dgemm: $(cat "$tmp/err")"
	jq_is "$tmp/d.json" '.sample.by_function[0].function == .by_function.rows[0].function' true
	jq_is "$tmp/d.json" '(.sample.by_function[0].flops - .by_function.rows[0].FP_OPS | fabs) <= 2 * .sample.by_function[0].error' true
	jq -r '"dgemm 200: \(.sample.by_function[0].function) \(.sample.by_function[0].flops) sampled, \(.by_function.rows[0].FP_OPS) exact"' "$tmp/d.json"
elif [ $trace_ok = 1 ]; then
	echo "SKIP: test_sample: dgemm: $D not built (make bench builds it where libopenblas-dev is installed)"
fi

# ---- hw without counters and without a stand-in: refused, with the fix ----
if [ ! -e /sys/bus/event_source/devices/cpu/format ] && [ ! -e /sys/bus/event_source/devices/cpu_core ]; then
	$RUN --sample 1000 -- $S 10 >/dev/null 2>"$tmp/e"; rc=$?
	[ $rc = 125 ] && grep -q "source trace" "$tmp/e" && ok || bad "hw --sample without counters: exit $rc: $(cat "$tmp/e")"
fi

echo "test_sample: $pass passed, $fail failed"
[ $fail = 0 ]
