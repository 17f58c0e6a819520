#!/bin/sh
# papi_flops_run through every source, on the calibration program
# (calib_fp KERNEL N [EXIT]: N iterations of one instruction).
B=${B:-build}
RUN=$B/papi_flops_run
K=$B/ctests/trace/calib_fp
[ -x "$K" ] || { echo "SKIP: $K not built"; exit 77; }
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
json_num() { sed -n "s/.*\"$1\": \([0-9][0-9.]*\).*/\1/p"; }

# trace: 1000 x vfmadd231pd zmm = 16000 DP FLOPs; exit status 3 passed through
out=$($RUN --source trace --json -- $K vfmadd231pd_z 1000 3); rc=$?
[ $rc = 3 ] && ok || bad "trace: exit status $rc, expected 3"
[ "$(echo "$out" | json_num DP_OPS)" = 16000 ] && ok || bad "trace DP_OPS: $out"
[ "$(echo "$out" | json_num FP_OPS)" = 16000 ] && ok || bad "trace FP_OPS: $out"
for k in '"source": "trace"' '"wall_seconds":' '"metrics": {' '"caveats": ['; do
	echo "$out" | grep -qF "$k" && ok || bad "trace --json lacks $k"; done

# model: masked zmm add with k1 = 0x0f (4 of 8 lanes): exact 4000, FP_ARITH reads 8000
out=$($RUN --source model:skx --json --metrics FP_OPS -- $K vaddpd_z_k1 1000)
[ "$(echo "$out" | json_num FP_OPS)" = 8000 ] && ok || bad "model:skx masked FP_OPS: $out"
echo "$out" | grep -q '"accuracy": {"FP_OPS": "masked-full"}' && ok || bad "model:skx class: $out"
out=$($RUN --source trace --json --metrics FP_OPS -- $K vaddpd_z_k1 1000)
[ "$(echo "$out" | json_num FP_OPS)" = 4000 ] && ok || bad "trace masked FP_OPS: $out"
# Haswell counts vinsertf128 as a 256-bit compute instruction (seed 004)
out=$($RUN --source model:hsw --json --metrics DP_OPS -- $K vinsertf128 100)
[ "$(echo "$out" | json_num DP_OPS)" = 400 ] && ok || bad "model:hsw vinsertf128: $out"
# DPPS: FP_ARITH counts "DPP and FM(N)ADD/SUB instructions ... twice"
# (Intel perfmon SKX/events/skylakex_core.json): 1000 dpps xmm = 8000 on
# skx; the trace counts one FLOP per element (SDE's DPP): 4000
out=$($RUN --source model:skx --json --metrics SP_OPS,VEC_SP -- $K dpps 1000)
[ "$(echo "$out" | json_num SP_OPS)" = 8000 ] && ok || bad "model:skx dpps SP_OPS: $out"
[ "$(echo "$out" | json_num VEC_SP)" = 2000 ] && ok || bad "model:skx dpps VEC_SP: $out"
out=$($RUN --source trace --json --metrics SP_OPS -- $K dpps 1000)
[ "$(echo "$out" | json_num SP_OPS)" = 4000 ] && ok || bad "trace dpps SP_OPS: $out"
out=$($RUN --source model:nosuchpmu -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "no PMU 'nosuchpmu' in the table" && ok || bad "unknown PMU: $rc $out"

# hw: on a machine without a PMU, the probe's reason, and the way out
if ! ls /sys/bus/event_source/devices | grep -qE '^(cpu|cpu_core|cpu_atom|armv8_.*)$'; then
	out=$($RUN -- $K addsd 10 2>&1); rc=$?
	[ $rc = 125 ] && echo "$out" | grep -q "no hardware PMU is exposed" &&
		echo "$out" | grep -q "papi_flops_run --source trace" && ok || bad "hw without PMU: rc=$rc $out"
fi

# perf-stat: seed 001's counts; a malformed file is named with its line
out=$($RUN --source perf-stat:ctests/fixtures/perfstat/snb_full.csv --arch snb --json)
[ "$(echo "$out" | json_num SP_OPS)" = 156781396204 ] && ok || bad "perf-stat SP_OPS: $out"
out=$($RUN --source perf-stat:ctests/fixtures/perfstat/malformed.csv --arch skx 2>&1); rc=$?
[ $rc = 125 ] && echo "$out" | grep -q "malformed.csv:2: not 'perf stat -x,' output" && ok || bad "malformed: rc=$rc $out"

# a program that crashes: reported, status 128+signal
out=$($RUN --source trace -- sh -c 'kill -SEGV $$' 2>&1); rc=$?
[ $rc = 139 ] && echo "$out" | grep -q "killed by signal 11" && ok || bad "crash: rc=$rc $out"
out=$($RUN --source trace -- /nonexistent/prog 2>&1); rc=$?
[ $rc = 125 ] && echo "$out" | grep -qi "nonexistent/prog" && ok || bad "missing program: rc=$rc $out"
echo "test_run: $pass passed, $fail failed"
[ $fail = 0 ]
