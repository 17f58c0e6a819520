#!/bin/sh
# papi_flops_run through every source, on the calibration program
# (calib_fp KERNEL N [EXIT]: N iterations of one instruction), and its
# report: on stderr or -o FILE, never on the program's stdout; text, JSON
# (checked with jq) and CSV.
B=${B:-build}
RUN=$B/papi_flops_run
K=$B/ctests/trace/calib_fp
EX=$B/papi_flops_example
[ -x "$K" ] || { echo "SKIP: $K not built"; exit 77; }
. "$(dirname "$0")/testlib.sh"
need_jq
# runs KERNEL: this CPU runs it, or a SKIP line with calib_fp's reason
runs() { why=$($K --needs "$1" 2>&1) && return 0; echo "SKIP: test_run: ${why#calib_fp: }"; return 1; }
# avx PROGRAM: this CPU runs PROGRAM's ymm code (as calib_fp's vaddpd_y), or a SKIP line
avx() { why=$($K --needs vaddpd_y 2>&1) && return 0; echo "SKIP: test_run: $1: ${why#*vaddpd_y: }"; return 1; }

# trace: 4000 x vfmadd213pd xmm = 16000 DP FLOPs; exit status 3 passed through; JSON to -o
if runs vfmadd213pd_x; then
	$RUN --source trace --json -o "$tmp/r.json" -- $K vfmadd213pd_x 4000 3 >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc = 3 ] && ok || bad "trace: exit status $rc, expected 3"
	jq -e . "$tmp/r.json" >/dev/null && ok || bad "--json -o: not valid JSON: $(cat "$tmp/r.json")"
	jq_is "$tmp/r.json" .metrics.DP_OPS 16000
	jq_is "$tmp/r.json" .metrics.FP_OPS 16000
	jq_is "$tmp/r.json" .units.DP_OPS FLOP
	jq_is "$tmp/r.json" .units.VEC_DP instructions
	jq_is "$tmp/r.json" .accuracy.DP_OPS exact
	jq_is "$tmp/r.json" .source trace
	jq_is "$tmp/r.json" .exit_status 3
	jq_is "$tmp/r.json" .wall_is_native false
	jq_is "$tmp/r.json" '.gflop_per_second | length' 0     # a traced run's time gives no rate
	jq_is "$tmp/r.json" '.caveats | length > 0' true
	[ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] && ok || bad "-o: something besides the file: [$(cat "$tmp/out" "$tmp/err")]"

	# the engine's own figures: the code cache runs the 4000 iterations
	# without a stop each, the stopping engine stops at every one
	PFLOPS_TRACE_ENGINE=cache $RUN --source trace --json -o "$tmp/ec.json" -- $K vfmadd213pd_x 4000 2>/dev/null
	PFLOPS_TRACE_ENGINE=stop $RUN --source trace --json -o "$tmp/es.json" -- $K vfmadd213pd_x 4000 2>/dev/null
	jq -e . "$tmp/ec.json" >/dev/null && jq -e . "$tmp/es.json" >/dev/null && ok ||
		bad "engine: not valid JSON: $(cat "$tmp/ec.json" "$tmp/es.json")"
	jq_is "$tmp/ec.json" .engine.name cache
	jq_is "$tmp/ec.json" '.engine | keys_unsorted | join(",")' \
		name,tracer_cpu_seconds,threads,stops,block_stops,syscall_stops,single_steps,blocks_decoded,blocks_invalidated,pins,blocks_translated,blocks_ahead,blocks_fork_given,blocks_hinted,loops_unrolled,blocks_uncounted,cache_exits,lookup_misses,table_renewed,table_full,links,links_fall_through,futex_served,syscalls_fast,syscall_traps,code_cache_bytes,address_space_bytes,stopping_path_processes,stopping_path_threads,seccomp_processes,seccomp_failed_calls,stopping_path_blocks
	jq_is "$tmp/ec.json" '.engine.stopping_path_blocks | keys_unsorted | join(",")' \
		masked_syscall,stepped,gs,writable,out_of_reach,cache_full,loader_hook,overflow,region_entry,no_injection
	jq_is "$tmp/ec.json" '.engine | .threads == 1 and .blocks_decoded > 0 and .stops > 0 and .stops < 4000 and
		.blocks_translated > 0 and .blocks_translated <= .blocks_decoded and .code_cache_bytes > 0 and
		.tracer_cpu_seconds >= 0 and .stopping_path_processes == 0' true
	jq_is "$tmp/ec.json" .engine.blocks_hinted 0	# PFLOPS_TRACE_HINTS=0 (testlib.sh)
	# copies of blocks without FP count nothing, so no instruction total
	# (PFLOPS_TRACE_COUNT=all: every copy counts, the total said)
	jq_is "$tmp/ec.json" '.engine.blocks_uncounted > 0 and .engine.blocks_uncounted < .engine.blocks_translated and .metrics.DP_OPS == 16000' true
	jq_is "$tmp/ec.json" .source_detail "exact: every executed instruction decoded, FP instructions counted"
	PFLOPS_TRACE_COUNT=all PFLOPS_TRACE_ENGINE=cache $RUN --source trace --json -o "$tmp/ea.json" -- $K vfmadd213pd_x 4000 2>/dev/null
	jq_is "$tmp/ea.json" '.engine.blocks_uncounted == 0 and .metrics.DP_OPS == 16000 and
		(.source_detail | test("^exact: every executed instruction decoded \\([0-9]+ instructions\\)$"))' true
	jq_is "$tmp/es.json" .metrics.DP_OPS 16000
	jq_is "$tmp/es.json" '.engine | keys_unsorted | join(",")' \
		name,tracer_cpu_seconds,threads,stops,block_stops,syscall_stops,single_steps,blocks_decoded,blocks_invalidated,pins
	jq_is "$tmp/es.json" '.engine | .name == "stop" and .block_stops >= 4000 and .stops >= .block_stops and
		.blocks_decoded > 0' true
	$RUN --source model:skx --json -o "$tmp/em.json" -- $K vfmadd213pd_x 400 2>/dev/null
	jq_is "$tmp/em.json" '.engine.blocks_decoded > 0' true
fi

# stdout is the program's: byte-identical with and without the tool, with the
# report on stderr (default) or in a file
"$EX" >"$tmp/plain"
$RUN --source trace -- "$EX" >"$tmp/traced" 2>"$tmp/report"
cmp -s "$tmp/plain" "$tmp/traced" && ok || bad "stdout differs under papi_flops_run: [$(cat "$tmp/traced")]"
grep -q '^  DP_OPS  *528,512 FLOP  *exact$' "$tmp/report" && ok || bad "text report on stderr: $(cat "$tmp/report")"
$RUN --source trace --json -- "$EX" >"$tmp/traced" 2>"$tmp/report.json"
cmp -s "$tmp/plain" "$tmp/traced" && ok || bad "stdout differs with --json"
# the example's count as its header and the quick start state it: 524,288 in the
# loop nest + 4,096 + 64 multiplies setting up A and B + 64 adds of the check loop
jq_is "$tmp/report.json" .metrics.DP_OPS 528512
$RUN --source trace --csv -o "$tmp/r.csv" -- "$EX" >"$tmp/traced" 2>&1
cmp -s "$tmp/plain" "$tmp/traced" && ok || bad "stdout differs with --csv -o"

# text: units, FLOP metrics apart from the VEC_* instruction counts
if runs vfmadd213pd_x; then
	$RUN --source trace -- $K vfmadd213pd_x 400 2>"$tmp/t" >/dev/null
	grep -q '^  FP_OPS  *1,600 FLOP  *exact$' "$tmp/t" && ok || bad "text FP_OPS line: $(cat "$tmp/t")"
	grep -q '^  VEC_DP  *800 instructions  *exact$' "$tmp/t" && ok || bad "text VEC_DP line: $(cat "$tmp/t")"
	awk '/^Floating-point operations/ {f=NR} /^Packed vector instructions/ {v=NR} /VEC_DP/ {d=NR} /DP_OPS/ {o=NR}
	     END {exit !(f && v && f < o && o < v && v < d)}' "$tmp/t" && ok || bad "text sections: $(cat "$tmp/t")"
	grep -q "[0-9] GFLOP/s" "$tmp/t" && bad "trace text gives GFLOP/s" || ok

	# CSV: a header, one row per metric, perf's -x separator
	$RUN --source trace --csv -- $K vfmadd213pd_x 400 2>"$tmp/c" >/dev/null
	[ "$(head -1 "$tmp/c")" = "metric,value,unit,source,accuracy,caveat" ] && ok || bad "csv header: $(head -1 "$tmp/c")"
	grep -qx 'DP_OPS,1600,FLOP,trace,exact,' "$tmp/c" && ok || bad "csv DP_OPS row: $(cat "$tmp/c")"
	grep -qx 'VEC_DP,800,instructions,trace,exact,' "$tmp/c" && ok || bad "csv VEC_DP row: $(cat "$tmp/c")"
	grep -qx 'FLOP_128bit,1600,FLOP,trace,exact,"all precisions, by vector width"' "$tmp/c" && ok || bad "csv width row (quoted): $(cat "$tmp/c")"
	$RUN --source trace -x';' -- $K vfmadd213pd_x 400 2>"$tmp/c" >/dev/null
	grep -qx 'DP_OPS;1600;FLOP;trace;exact;' "$tmp/c" && ok || bad "-x';' row: $(cat "$tmp/c")"
fi
out=$($RUN --source trace -x ab -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- "-x takes one character" && ok || bad "-x ab: rc=$rc $out"

# --quiet: nothing on the terminal, but -o still writes
out=$($RUN --source trace --quiet -- $K addsd 10 2>&1); rc=$?
[ $rc = 0 ] && [ -z "$out" ] && ok || bad "--quiet printed: rc=$rc [$out]"
$RUN --source trace --quiet --json -o "$tmp/q.json" -- $K addsd 10 2>/dev/null
jq_is "$tmp/q.json" .metrics.DP_OPS 10

# -o where it cannot be written: said before the program runs
out=$($RUN --source trace -o /nonexistent/dir/r.txt -- sh -c 'echo ran' 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "cannot write the report to /nonexistent/dir/r.txt" &&
	! echo "$out" | grep -q ran && ok || bad "-o unwritable: rc=$rc $out"
# the report file is not inherited by the program (close-on-exec)
$RUN --source trace -o "$tmp/fd.txt" -- sh -c 'ls -l /proc/$$/fd' >"$tmp/fds" 2>/dev/null
grep -q "fd.txt" "$tmp/fds" && bad "the program inherited the report file: $(cat "$tmp/fds")" || ok

# model: masked zmm add with k1 = 0x0f (4 of 8 lanes): exact 4000, FP_ARITH reads 8000
if runs vaddpd_z_k1; then
	$RUN --source model:skx --json -o "$tmp/m.json" --metrics FP_OPS,HP_OPS -- $K vaddpd_z_k1 1000
	jq_is "$tmp/m.json" .metrics.FP_OPS 8000
	jq_is "$tmp/m.json" .accuracy.FP_OPS masked-full
	jq_is "$tmp/m.json" '.unavailable.HP_OPS | test("no half-precision")' true
	$RUN --source trace --json -o "$tmp/m.json" --metrics FP_OPS -- $K vaddpd_z_k1 1000
	jq_is "$tmp/m.json" .metrics.FP_OPS 4000
fi
# Haswell counts vinsertf128 as a 256-bit compute instruction (seed 004)
if runs vinsertf128; then
	$RUN --source model:hsw --json -o "$tmp/m.json" --metrics DP_OPS -- $K vinsertf128 100
	jq_is "$tmp/m.json" .metrics.DP_OPS 400
fi
# DPPS: FP_ARITH counts "DPP and FM(N)ADD/SUB instructions ... twice"
# (Intel perfmon SKX/events/skylakex_core.json): 1000 dpps xmm = 8000 on
# skx; the trace counts one FLOP per element (SDE's DPP): 4000
if runs dpps; then
	$RUN --source model:skx --json -o "$tmp/d.json" --metrics SP_OPS,VEC_SP -- $K dpps 1000
	jq_is "$tmp/d.json" .metrics.SP_OPS 8000
	jq_is "$tmp/d.json" .metrics.VEC_SP 2000
	$RUN --source trace --json -o "$tmp/t.json" --metrics SP_OPS -- $K dpps 1000
	jq_is "$tmp/t.json" .metrics.SP_OPS 4000
fi
out=$($RUN --source model:nosuchpmu -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "no PMU 'nosuchpmu' in the table" && ok || bad "unknown PMU: $rc $out"

# hw: on a machine without a PMU, the probe's reason, and the way out
if ! ls /sys/bus/event_source/devices | grep -qE '^(cpu|cpu_core|cpu_atom|cpu_lowpower|armv[89]_.*)$'; then
	out=$($RUN -- $K addsd 10 2>&1); rc=$?
	[ $rc = 125 ] && echo "$out" | grep -q "no hardware PMU is exposed" &&
		echo "$out" | grep -q "papi_flops_run --source trace" && ok || bad "hw without PMU: rc=$rc $out"
fi

# perf-stat: seed 001's counts; GFLOP/s from perf's duration_time event or --seconds
PS=ctests/fixtures/perfstat
$RUN --source perf-stat:$PS/snb_full.csv --arch snb --json -o "$tmp/p.json"
jq_is "$tmp/p.json" .metrics.SP_OPS 156781396204
jq_is "$tmp/p.json" '.gflop_per_second | length' 0
jq_is "$tmp/p.json" '.caveats | map(select(test("no wall time"))) | length' 1
jq_is "$tmp/p.json" 'has("engine")' false	# nothing traced
$RUN --source perf-stat:$PS/snb_duration.csv --arch snb --json -o "$tmp/p.json"
jq_is "$tmp/p.json" .wall_seconds 2.5
jq_is "$tmp/p.json" .gflop_per_second.SP_OPS 62.712558      # 156781396204 FLOP / 2.5 s
jq_is "$tmp/p.json" '.gflop_per_second | has("VEC_SP")' false  # instructions, not FLOPs
$RUN --source perf-stat:$PS/snb_full.csv --arch snb --seconds 4 -m SP_OPS 2>"$tmp/t"
grep -q '^  SP_OPS  *156,781,396,204 FLOP  *speculative  *39.195 GFLOP/s$' "$tmp/t" && ok || bad "perf-stat --seconds text: $(cat "$tmp/t")"
out=$($RUN --source perf-stat:$PS/malformed.csv --arch skx 2>&1); rc=$?
[ $rc = 125 ] && echo "$out" | grep -q "malformed.csv:2: not 'perf stat -x,' output" && ok || bad "malformed: rc=$rc $out"

# options that do not apply are refused, not ignored
out=$($RUN --source trace --arch skx -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- "--arch applies to --source perf-stat:FILE only" && ok || bad "--arch with trace: rc=$rc $out"
out=$($RUN --source perf-stat:$PS/snb_full.csv --arch snb -- $K 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "runs no program" && ok || bad "perf-stat with a program: rc=$rc $out"
out=$($RUN --region main -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- "--region needs --source trace" && ok || bad "--region with hw: rc=$rc $out"
out=$($RUN --source perf-stat:$PS/snb_full.csv --arch snb --seconds -1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- "--seconds takes" && ok || bad "--seconds -1: rc=$rc $out"

# a program that crashes: reported, status 128+signal
out=$($RUN --source trace -- sh -c 'kill -SEGV $$' 2>&1); rc=$?
[ $rc = 139 ] && echo "$out" | grep -q "killed by signal 11" && ok || bad "crash: rc=$rc $out"
out=$($RUN --source trace -- /nonexistent/prog 2>&1); rc=$?
[ $rc = 125 ] && echo "$out" | grep -qi "nonexistent/prog" && ok || bad "missing program: rc=$rc $out"
# --mask-sampling on hardware (masked AVX-512 lanes from sampled opmask
# registers): where counters or the kernel's opmask sampling are missing,
# one refusal that names each missing part and its fix; the program never runs
avail=$($B/papi_flops_avail)
caps=$(echo "$avail" | sed -n 's/^Opmask sampling: //p')
$RUN --mask-sampling 7 -- sh -c "touch $tmp/ran" >/dev/null 2>"$tmp/m"; rc=$?
if echo "$avail" | grep -q '^Counter access : NO' || [ "${caps#supported}" = "$caps" ]; then
	[ $rc = 125 ] && ok || bad "--mask-sampling without counters or kernel support: rc=$rc, expected 125"
	[ ! -e "$tmp/ran" ] && ok || bad "--mask-sampling ran the program although it cannot sample"
	grep -q '^papi_flops_run: --mask-sampling cannot sample the opmask registers here:' "$tmp/m" && ok || bad "refusal: $(cat "$tmp/m")"
	if echo "$avail" | grep -q '^Counter access : NO'; then
		grep -q '^  counters: no hardware PMU is exposed' "$tmp/m" && grep -q '^    fix: enable the guest PMU' "$tmp/m" && ok ||
			bad "refusal does not name the missing PMU: $(cat "$tmp/m")"
	fi
	if [ "${caps#supported}" = "$caps" ]; then
		grep -qF "  opmask sampling: $caps" "$tmp/m" && ok || bad "refusal does not give the kernel's verdict [$caps]: $(cat "$tmp/m")"
	fi
fi
# model:PMU --mask-sampling: the trace feeds the same estimator.  The masked
# daxpy of issue 14: 2000 calls of daxpy(11), a full 512-bit FMA and one under
# k1 = 0x07 (3 of 8 lanes): 44,000 FLOPs, 64,000 as FP_ARITH counts (45% over)
if runs daxpy_masked; then
	$RUN --source model:spr --mask-sampling 7 --region daxpy --json -o "$tmp/mk.json" -- $K daxpy_masked 2000 >/dev/null 2>&1
	jq_is "$tmp/mk.json" .metrics.DP_OPS 64000
	jq_is "$tmp/mk.json" .accuracy.DP_OPS masked-full
	jq_is "$tmp/mk.json" .masked_sampled.DP_OPS.exact 44000
	jq_is "$tmp/mk.json" .masked_sampled.DP_OPS.full_lanes 64000
	jq_is "$tmp/mk.json" '.masked_sampled.DP_OPS | ((.value - .exact) | fabs) / .exact < 0.05' true
	jq_is "$tmp/mk.json" '.masked_sampled.DP_OPS | .low <= .exact and .exact <= .high and .high < .full_lanes' true
	jq_is "$tmp/mk.json" .mask_sampling.period 7
	jq_is "$tmp/mk.json" '.mask_sampling | .used + .skid + .no_opmask + .unreadable + .mask_changed + .in_unmasked_code == .samples' true
	$RUN --source model:spr --mask-sampling 7 --region daxpy -m DP_OPS -- $K daxpy_masked 2000 2>"$tmp/t" >/dev/null
	grep -q '^  DP_OPS  *64,000 FLOP  *masked-full$' "$tmp/t" &&
		grep -qE '^    sampled  *4[34],[0-9]{3} FLOP  *masked-sampled  95% [0-9,]+\.\.[0-9,]+, 6[0-9]\.[0-9]% of lanes active; exact \(trace\) 44,000$' "$tmp/t" &&
		grep -q '^Masked-lane sampling' "$tmp/t" && ok || bad "model --mask-sampling text: $(cat "$tmp/t")"
	$RUN --source model:spr --mask-sampling 7 --region daxpy -m DP_OPS --csv -- $K daxpy_masked 2000 2>"$tmp/c" >/dev/null
	grep -qE '^DP_OPS,4[34][0-9]{3},FLOP,model:spr,masked-sampled,' "$tmp/c" && grep -q '^DP_OPS.exact,44000,FLOP,model:spr,exact,' "$tmp/c" &&
		grep -q '^DP_OPS.low,' "$tmp/c" && grep -q '^DP_OPS.high,' "$tmp/c" && ok || bad "model --mask-sampling CSV: $(cat "$tmp/c")"
	grep -q 'period' "$tmp/t" && bad "a prime period gets the composite-period note: $(cat "$tmp/t")" || ok
	# a composite period locks onto a loop's period: 16 counts per fma_kmix
	# iteration, every 16th count is the same unmasked FMA; said in a note
	$RUN --source model:spr --mask-sampling 16 -m DP_OPS -- $K fma_kmix 100 2>"$tmp/t" >/dev/null
	grep -q 'the period 16 is not prime: .* a prime such as 17 avoids it' "$tmp/t" && ok || bad "composite period note: $(cat "$tmp/t")"
	# unmasked code: the correction is zero
	$RUN --source model:skx --mask-sampling 7 --json -o "$tmp/mk0.json" -- $K vfmadd231pd_z 1000 >/dev/null 2>&1
	jq_is "$tmp/mk0.json" '.masked_sampled.DP_OPS.value == .metrics.DP_OPS and .metrics.DP_OPS == 16000' true
fi
# a PMU without AVX-512 has nothing to correct
$RUN --source model:bdw --mask-sampling 7 -- $K addpd 10 >/dev/null 2>"$tmp/m"; rc=$?
[ $rc = 125 ] && grep -q 'nothing to correct on bdw' "$tmp/m" && ok || bad "model:bdw --mask-sampling: rc=$rc $(cat "$tmp/m")"
$RUN --source trace --mask-sampling 7 -- true >/dev/null 2>"$tmp/m"; rc=$?
[ $rc = 2 ] && grep -q 'mask-sampling applies to' "$tmp/m" && ok || bad "--source trace --mask-sampling: rc=$rc $(cat "$tmp/m")"
$RUN --source perf-stat:x --mask-sampling 7 >/dev/null 2>"$tmp/m"; rc=$?
[ $rc = 2 ] && grep -q 'mask-sampling applies to' "$tmp/m" && ok || bad "--source perf-stat --mask-sampling: rc=$rc $(cat "$tmp/m")"
for p in 0 -3 x 7x; do
	$RUN --mask-sampling "$p" -- true >/dev/null 2>"$tmp/m"; rc=$?
	[ $rc = 2 ] && grep -q 'takes the sampling period' "$tmp/m" && ok || bad "--mask-sampling $p: rc=$rc $(cat "$tmp/m")"
done

# --by-function: FLOPs per function.  calib_region N: outside() 2N and
# main_kernel() 8N in the executable, calib_kernel() 2 x 4N and calib_helper()
# 2 x 2N in libcalibk.so; the rows add up to the totals
R=$B/ctests/trace/calib_region
jq_is "$tmp/q.json" 'has("by_function")' false      # only when asked
if avx calib_region; then
	$RUN --source trace --by-function --json -o "$tmp/f.json" -- $R 1000 >/dev/null 2>&1
	jq_is "$tmp/f.json" '.by_function | "\(.values) \(.sorted_by) \(.functions) \(.listed)"' "exact FP_OPS 4 4"
	jq_is "$tmp/f.json" '[.by_function.rows[] | "\(.function)=\(.FP_OPS)"] | join(" ")' \
		"calib_kernel=8000 main_kernel=8000 calib_helper=4000 outside=2000"
	jq_is "$tmp/f.json" '[.by_function.rows[] | .object | split("/") | last] | join(" ")' \
		"libcalibk.so calib_region libcalibk.so calib_region"
	jq_is "$tmp/f.json" '.by_function.rows[0] | keys_unsorted | join(",")' \
		"function,object,symbol,address,share,FP_OPS,DP_OPS,SP_OPS,HP_OPS,BF16_OPS"
	jq_is "$tmp/f.json" '.by_function.rows | all(.symbol and (.address | test("^0x[0-9a-f]+$")))' true
	jq_is "$tmp/f.json" '.by_function.rows[0].share' 0.363636
	jq_is "$tmp/f.json" '.by_function.rows | map(.FP_OPS) | add' 22000
	jq_is "$tmp/f.json" '. as $r | [.by_function.rows[]] as $f | ["FP_OPS","DP_OPS","SP_OPS","HP_OPS","BF16_OPS"] |
		all(. as $m | ($f | map(.[$m]) | add) == $r.metrics[$m])' true
	# --by-function=N: the N with most FLOPs, the others summed
	$RUN --source trace --by-function=1 --json -o "$tmp/f1.json" -- $R 1000 >/dev/null 2>&1
	jq_is "$tmp/f1.json" '.by_function | "\(.functions) \(.listed) \(.rows[0].function) \(.rest.functions) \(.rest.FP_OPS) \(.rest.share)"' \
		"4 1 calib_kernel 3 14000 0.636364"
	$RUN --source trace --by-function=2 -- $R 1000 2>"$tmp/t" >/dev/null
	grep -qx 'FLOPs by function (exact; top 2 of 4)' "$tmp/t" &&
		grep -qE '^ +FP_OPS +share +DP_OPS +SP_OPS +HP_OPS  function$' "$tmp/t" &&
		grep -qE '^ +8,000 +36\.4% +8,000 +0 +0  calib_kernel \(libcalibk\.so\)$' "$tmp/t" &&
		grep -qE '^ +6,000 +27\.3% +6,000 +0 +0  \(2 more functions\)$' "$tmp/t" && ok || bad "--by-function text: $(cat "$tmp/t")"
	# CSV: two more columns, function and object, empty on the whole-program rows
	$RUN --source trace --by-function --csv -- $R 1000 2>"$tmp/c" >/dev/null
	[ "$(head -1 "$tmp/c")" = "metric,value,unit,source,accuracy,caveat,function,object" ] && ok || bad "--by-function csv header: $(head -1 "$tmp/c")"
	grep -qx 'DP_OPS,22000,FLOP,trace,exact,,,' "$tmp/c" && grep -qx "FP_OPS,8000,FLOP,trace,exact,,calib_kernel,$(cd "$(dirname "$R")" && pwd -P)/libcalibk.so" "$tmp/c" &&
		grep -q '^FP_OPS.share,0.181818,fraction,trace,exact,,calib_helper,' "$tmp/c" && ok || bad "--by-function csv rows: $(cat "$tmp/c")"
	awk -F, '$1 == "FP_OPS" && $7 != "" {s += $2} $1 == "FP_OPS" && $7 == "" {t = $2} END {exit !(s == t && t == 22000)}' "$tmp/c" &&
		ok || bad "--by-function csv: the functions do not add up: $(cat "$tmp/c")"
fi
# model: what skx's formulas read for each function's mix (masked lanes in full)
if runs vaddpd_z_k1; then
	$RUN --source model:skx --by-function --json -o "$tmp/fm.json" -- $K vaddpd_z_k1 1000 >/dev/null 2>&1
	jq_is "$tmp/fm.json" '.by_function | "\(.values) \(.rows[0].function) \(.rows[0].FP_OPS) \(.rows[0] | has("HP_OPS"))"' "model vaddpd_z_k1 8000 false"
fi
if avx calib_region; then
	$RUN --source model:skx --by-function --json -o "$tmp/fm.json" -- $R 1000 >/dev/null 2>&1
	jq_is "$tmp/fm.json" '(.by_function.rows | map(.DP_OPS) | add) == .metrics.DP_OPS and .metrics.DP_OPS == 22000' true
fi
# Haswell's event counts vinsertf128 as compute: a function with no FLOP is listed
if runs vinsertf128; then
	$RUN --source model:hsw --by-function --json -o "$tmp/fm.json" -- $K vinsertf128 100 >/dev/null 2>&1
	jq_is "$tmp/fm.json" '.by_function | "\(.sorted_by) \(.rows[0].function) \(.rows[0].DP_OPS)"' "DP_OPS vinsertf128 400"
fi
# code without symbols: JIT code in anonymous memory, grouped by mapping
if avx calib_jit; then
	$RUN --source trace --by-function --json -o "$tmp/fj.json" -- $B/ctests/trace/calib_jit 1000 >/dev/null 2>&1
	jq_is "$tmp/fj.json" '.by_function.rows[0] | (.function | test("^\\[anon 0x[0-9a-f]+\\]$")) and .object == null and .symbol == false and .FP_OPS == 12000' true
fi
if runs vaddpd_y; then
	$RUN --source trace --by-function -- $B/ctests/trace/calib_fp_stripped vaddpd_y 200 2>"$tmp/t" >/dev/null
	grep -qE '^ +800 +100\.0% +800 +0 +0  calib_fp_stripped\+0x[0-9a-f]+ \(no symbol\)$' "$tmp/t" && ok || bad "stripped: $(cat "$tmp/t")"
fi
if runs vandpd_y; then
	$RUN --source trace --by-function -- $K vandpd_y 100 2>"$tmp/t" >/dev/null
	grep -A1 -x 'FLOPs by function (exact)' "$tmp/t" | grep -qx '  no function did any' && ok || bad "no FLOPs: $(cat "$tmp/t")"
fi
# refused where it cannot apply
out=$($RUN --by-function -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- "--by-function needs --source trace or model:PMU" && ok || bad "--by-function with hw: rc=$rc $out"
for n in x -1 2x; do
	out=$($RUN --source trace --by-function="$n" -- $K addsd 1 2>&1); rc=$?
	[ $rc = 2 ] && echo "$out" | grep -q -- "--by-function=N takes" && ok || bad "--by-function=$n: rc=$rc $out"
done
out=$($RUN --source trace --by-function -m VEC_DP -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- "add FP_OPS" && ok || bad "--by-function -m VEC_DP: rc=$rc $out"

# JIT code: what the tracer dropped and decoded again is said in the report
if avx calib_jit; then
	out=$($RUN --source trace -- $B/ctests/trace/calib_jit 2>&1)
	echo "$out" | grep -q "decoded blocks were dropped when their code was unmapped or made writable (JIT, dlclose)" && ok ||
		bad "JIT: no note on the dropped blocks: $out"
fi

echo "test_run: $pass passed, $fail failed"
[ $fail = 0 ]
