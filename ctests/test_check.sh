#!/bin/sh
# papi_flops_check: every kernel's trace count equals its analytic FLOPs,
# and the formulas read the kernels as each CPU family is documented to.
B=${B:-build}
CHK=$B/papi_flops_check
CALIB=$B/ctests/trace/calib_fp
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
out=$($CHK --all-pmus --iterations 200 --runs 2 2>&1); rc=$?
[ $rc = 0 ] && ok || bad "exit status $rc"
echo "$out" | grep -qE "^papi_flops_check: [0-9]+ kernels checked, 0 verdicts failed" && ok || bad "summary: $(echo "$out" | tail -1)"
# without counters: one sentence with the cause and the fix, not a dangling "here: "
if echo "$out" | head -1 | grep -q "no hardware PMU is exposed"; then
	echo "$out" | head -1 | grep -qE "^papi_flops_check: no hardware PMU is exposed: .*, so each kernel is checked .*; to check the hardware counters too, enable the guest PMU .*\.$" &&
		[ -z "$(echo "$out" | sed -n 2p)" ] && ok || bad "no-counter message: $(echo "$out" | head -2)"
fi
# one row: KERNEL then the seven metric cells of PMU's table
row() { echo "$out" | awk -v p="($1):" -v k="$2" 'index($0, p) {on=1; next} /^$/ {on=0} on && $1 == k {print; exit}'; }
# a kernel this CPU cannot run is not in the table: SKIP with calib_fp's reason
runs() { why=$($CALIB --needs "$1" 2>&1) && return 0; echo "SKIP: test_check: ${why#calib_fp: }"; return 1; }
expect() {
	runs "$2" || return 0
	r=$(row "$1" "$2"); [ "$(echo $r)" = "$3" ] && ok || bad "$1 $2: got [$(echo $r)], expected [$3]"
}
#                 kernel        FP_OPS DP_OPS SP_OPS HP_OPS BF16 VEC_DP VEC_SP
expect skx  vfmadd231pd_z "vfmadd231pd_z = = = - - = ="
expect skx  vaddpd_z_k1   "vaddpd_z_k1 x2.00 x2.00 = - - = ="
expect skx  fadd          "fadd 0 = = - - = ="
expect snb  fadd          "fadd 0 = = - - = ="               # x87 out of FP_OPS (Intel SNB list: X87 counts integer MUL/DIV too)
expect skx  dpps          "dpps x2.00 = x2.00 - - = x2.00"    # FP_ARITH counts DPP twice (Intel SKX list); trace 1 per element
expect core addpd         "addpd = = = - - = ="              # LIKWID core2 FLOPS_DP: 2*PD + SD
expect core fadd          "fadd 0 = = - - = ="
expect cpx  vdpbf16ps_z   "vdpbf16ps_z = = = - = = ="        # Intel CLX list: 64 operations per 512-bit VDPBF16PS
expect hsw  vinsertf128   "vinsertf128 - +800 +1600 - - +200 +200"     # 200 iterations: 4 and 8 per CALC
expect hsw  vfmadd231pd_z "vfmadd231pd_z - 0 = - - 0 ="               # 512-bit: CALC counts 256-bit only
expect spr  vfmaddcsh     "vfmaddcsh = = = = - = ="
expect amd64_fam19h_zen4 vaddpd_z_k1 "vaddpd_z_k1 x2.00 - - - = - -"
expect cmt  vaddpd_y      "vaddpd_y = = = - - = ="
expect arm_v1 addsd       "addsd n/m - - - - - -"
# masked-lane sampling from the trace (docs/masked-lanes.md): the estimate at
# P = 7 and its interval against the exact count; coverage over all samplings
if runs daxpy_masked; then
	m=$(echo "$out" | sed -n '/^Masked-lane sampling on the trace/,/^$/p')
	echo "$m" | grep -qE '^  daxpy_masked +DP_OPS +44000 +64000  4[34][0-9]{3} \[[0-9]+\.\.[0-9]+\] ' && ok || bad "masked daxpy row: $m"
	echo "$m" | grep -qE '^  vfmadd231pd_z +DP_OPS +16000 +16000  16000 \[' && ok || bad "unmasked row: $m"
	n=$(echo "$m" | grep -cE '  ([0-9]+)/\1$')
	[ "$n" = 7 ] && ok || bad "coverage below 100% or rows missing ($n of 7): $m"
	js=$($CHK --iterations 50 --runs 1 --json 2>/dev/null)
	echo "$js" | jq -e '.mask_sampling.kernels | length == 7 and all(.ok) and
		all(.low <= .exact and .exact <= .high) and
		(map(select(.kernel == "daxpy_masked"))[0] | ((.estimate - .exact) | fabs) < 0.05 * .exact)' >/dev/null && ok ||
		bad "mask_sampling JSON: $(echo "$js" | jq -c .mask_sampling)"
fi
# --json and --markdown
json=$($CHK --iterations 50 --runs 1 --json 2>/dev/null)
echo "$json" | grep -q '"failures": 0}' && ok || bad "json: $(echo "$json" | tail -c 200)"
tmp=$(mktemp); $CHK --all-pmus --iterations 50 --runs 1 --markdown "$tmp" >/dev/null 2>&1
if runs vaddpd_z_k1; then
	grep -q '^| vaddpd_z_k1 | x2.00 | x2.00 |' "$tmp" && ok || bad "markdown table"
else
	grep -q '^| addpd | = | = |' "$tmp" && ok || bad "markdown table"
fi
rm -f "$tmp"
# the table's legend; kernels this CPU cannot run named with the feature
# (PFLOPS_CPU_HIDE: what a CPU without AVX-512 prints); a typo is refused
out=$(PFLOPS_CPU_HIDE=avx512f $CHK --all-pmus --iterations 10 --runs 1 2>&1)
echo "$out" | grep -q "^Cells: '=' the formula reads the exact FLOPs; 'xR' R times them" && ok || bad "no legend"
echo "$out" | grep -qE "^  not run, this CPU lacks avx512f: vaddpd_z, .*; avx512_fp16: vaddph_x, .*\(PFLOPS_CPU_HIDE hides some\)$" && ok ||
	bad "not-run line: $(echo "$out" | grep 'not run')"
echo "$out" | grep -q "^Masked-lane sampling: not checked (this CPU lacks avx512f" && ok || bad "mask sampling not said skipped"
out=$(PFLOPS_CPU_HIDE=avx512 $CHK 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "PFLOPS_CPU_HIDE names 'avx512', not a CPU feature it knows; .* avx512f " && ok || bad "hide typo: $rc $out"
# a missing kernel program is named, not a crash
out=$(PAPI_FLOPS_KERNELS=/nonexistent/kernels $CHK --iterations 10 --runs 1 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "cannot run kernel .* with /nonexistent/kernels" && ok || bad "missing kernels: $rc $out"
echo "test_check: $pass passed, $fail failed"
[ $fail = 0 ]
