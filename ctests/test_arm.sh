#!/bin/sh
# An aarch64 build (mk/aarch64/trace.mk): what works there (the Arm
# formulas, x86 ones replayed, the probe, --source hw and perf-stat:FILE, papi_flops_avail)
# and what says in one sentence that it is x86-64 only for now (the trace
# source, model:PMU, --by-function, papi_flops_check's kernels).
B=${B:-build}
RUN=$B/papi_flops_run
AVAIL=$B/papi_flops_avail
. "$(dirname "$0")/testlib.sh"
need_jq
X86_ONLY="is x86-64 only for now"

# the trace, the models read from it, per-function counts: one sentence, status 125
for args in "--source trace" "--source model:arm_v2" "--source trace --by-function"; do
	out=$($RUN $args -- true 2>&1); rc=$?
	[ $rc = 125 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "$X86_ONLY; on this machine count with --source hw" &&
		ok || bad "$args: rc=$rc $out"
done
out=$($B/papi_flops_check 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "calibration kernels and the trace source are x86-64 only for now" && ok ||
	bad "papi_flops_check: rc=$rc $out"

# perf-stat: counts recorded on a Neoverse V2 (device-tree PMU name)
$RUN --source perf-stat:ctests/fixtures/perfstat/arm_v2_devicetree.csv --arch neoverse_v2 --json -o "$tmp/p.json"; rc=$?
[ $rc = 0 ] && [ "$(jq -r .pmu "$tmp/p.json")" = arm_v2 ] && [ "$(jq -r .metrics.FP_OPS "$tmp/p.json")" = 107 ] && ok ||
	bad "perf-stat arm_v2: rc=$rc $(cat "$tmp/p.json")"

# hw: counts where the kernel exposes an Arm PMU, else the probe's reason,
# never a suggestion of the trace source
if ls /sys/bus/event_source/devices 2>/dev/null | grep -qE '^armv[89]_'; then
	$RUN --source hw --json -o "$tmp/h.json" -- true; rc=$?
	[ $rc = 0 ] && [ "$(jq -r .source "$tmp/h.json")" = hw ] && ok || bad "hw: rc=$rc $(cat "$tmp/h.json")"
else
	out=$($RUN --source hw -- true 2>&1); rc=$?
	[ $rc = 125 ] && echo "$out" | grep -q "cannot count with hardware counters" && ! echo "$out" | grep -q -- "--source trace" &&
		ok || bad "hw without PMU: rc=$rc $out"
	out=$($AVAIL 2>&1); rc=$?
	echo "$out" | grep -q "^No counters *: the trace source, which needs none, $X86_ONLY" && ok || bad "avail without PMU: $out"
fi

# the component in our libpapi: PAPI_FLOPS_SOURCE=trace is refused with the
# sentence; without counters its reason never suggests the trace source
PCA=$B/papi/src/utils/papi_component_avail
if [ -e "$PCA" ]; then
	out=$(PAPI_FLOPS_SOURCE=trace $PCA 2>&1 | grep -A1 '^Name: *flops')
	echo "$out" | grep -q "Disabled: PAPI_FLOPS_SOURCE=trace: the trace source .*$X86_ONLY; unset it" && ok ||
		bad "component, PAPI_FLOPS_SOURCE=trace: $out"
	out=$($PCA 2>&1 | grep -A1 '^Name: *flops')
	echo "$out" | grep -q "Disabled" && ! echo "$out" | grep -q "set PAPI_FLOPS_SOURCE=trace" && ok ||
		bad "component, hw source: $out"
else
	echo "SKIP: test_arm.sh: component: no $PCA (built without --with-papi-src)"
fi

# the Arm formulas: Neoverse V2's FP_OPS, its events as perf names them
out=$($AVAIL --arch neoverse_v2 --perf FP_OPS 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q "r80c0" && ok || bad "avail --perf neoverse_v2: rc=$rc $out"
# an x86 PMU's libpfm4-named events, which an aarch64 libpfm4 cannot encode:
# libpfm4's x86 answers replayed (presets/x86-libpfm.enc), seed 001's codes
out=$($AVAIL --arch snb --perf FP_OPS 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q -- "^-e r531010 -e r532010 " && ok || bad "avail --arch snb --perf on aarch64: rc=$rc $out"

echo "test_arm: $pass passed, $fail failed"
[ $fail = 0 ]
