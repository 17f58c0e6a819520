#!/bin/sh
# papi_flops_avail shows the table as its sources have it: listings,
# classes, caveats, counter plans, and the `perf stat` arguments (bare raw
# codes on a `cpu` PMU, PMU-qualified on hybrid core PMUs).  Each check
# names the public source of the fact it checks.
B=${B:-build}
A=$B/papi_flops_avail
[ -x "$A" ] || { echo "FAIL: $A not built"; exit 1; }
TOPO=ctests/fixtures/topologies
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# metric METRIC KEY < json: the value of "KEY" in that metric's object
metric() {
	grep -o "\"$1\": {\"available\"[^]]*" | sed -n "s/.*\"$2\": \"\([^\"]*\)\".*/\1/p; t; s/.*\"$2\": \([^,}]*\).*/\1/p"
}

# Sandy Bridge: FP_COMP_OPS_EXE.X87 also counts integer MUL/IMUL, DIV/IDIV
# (Intel perfmon SNB/events/sandybridge_core.json); Intel's TMA #FLOP_Count
# leaves it out: FP_OPS has no X87 and says why
out=$($A --arch snb)
echo "$out" | grep -A1 '^  FP_OPS ' | grep -q 'X87' && bad "snb FP_OPS still has X87: $out" || ok
echo "$out" | grep -q 'caveat: .*x87 is left out because FP_COMP_OPS_EXE.X87 also counts integer MUL and DIV' && ok ||
	bad "snb FP_OPS caveat does not name integer MUL/DIV"
# ... and seed 001's five codes stay printable, x87 with its note
perf=$($A --arch snb --perf 2>"$B/avail.err")
for c in r530110 r531010 r532010 r534010 r538010; do
	echo "$perf" | grep -qw -- "-e $c" && ok || bad "snb --perf lacks seed 001's $c: $perf"; done
grep -q 'FP_COMP_OPS_EXE:X87, in no formula: .*integer MUL/IMUL and DIV/IDIV' "$B/avail.err" && ok ||
	bad "snb --perf: no note for r530110: $(cat "$B/avail.err")"
$A --arch snb --perf DP_OPS 2>/dev/null | grep -q r530110 && bad "snb --perf DP_OPS prints x87" || ok

# Ice Lake-SP and Sapphire Rapids: VEC_DP / VEC_SP in one counter each (the
# umask bits OR: Intel's VECTOR 0xFC, ICX/SPR *_core.json)
for p in icx spr; do
	for m in VEC_DP VEC_SP; do
		n=$($A --arch $p --json | metric $m counters)
		[ "$n" = 1 ] && ok || bad "$p $m needs $n counters, expected 1"
	done
done
# ... but no Intel list names 0x54 or 0xA8 (ICL/ICX/SPR/GNR *_core.json name
# 0x03, 0x18, 0x60, 0xFC), nor the client cores' 0x14/0x28 (ADL/MTL/ARL
# lists), and libpfm4 4.13 refuses them by name: exact by inference, said
for p in icl icx spr gnr adl_glc mtl_rwc lnc nvl_cyc; do
	for m in VEC_DP VEC_SP; do
		$A --arch $p --json | metric $m caveat | grep -q 'unions Intel.s lists* do.* not name .*exact rests on inference until hardware shows it' &&
			ok || bad "$p $m caveat does not say exact rests on inference: $($A --arch $p --json | metric $m caveat)"
	done
done
# Core 2: DP_OPS and SP_OPS from SIMD_COMP_INST_RETIRED (LIKWID groups/core2)
for m in DP_OPS SP_OPS; do
	[ "$($A --arch core --json | metric $m accuracy)" = estimate ] && ok || bad "core $m not available as estimate"
done
# FUJITSU-MONAKA counts vector instructions by precision: ASE_SVE_FP_DP_SPEC
# 0x801F, ASE_SVE_FP_SP_SPEC 0x801B (PAPI's bundled libpfm4
# arm_fujitsu_monaka_events.h; PAPI papi_events.csv CPU,arm_monaka
# PAPI_VEC_DP/PAPI_VEC_SP); A64FX lists neither
[ "$($A --arch monaka --perf VEC_DP 2>/dev/null)" = "-e r801f" ] && [ "$($A --arch monaka --perf VEC_SP 2>/dev/null)" = "-e r801b" ] &&
	ok || bad "monaka --perf VEC_DP/VEC_SP: $($A --arch monaka --perf VEC_DP 2>&1) $($A --arch monaka --perf VEC_SP 2>&1)"
for m in VEC_DP VEC_SP; do
	[ "$($A --arch monaka --json | metric $m accuracy)" = speculative ] && ok || bad "monaka $m is not speculative"
	$A --arch monaka --json | metric $m caveat | grep -q 'not FLOPs: one per instruction' && ok || bad "monaka $m caveat"
	[ "$($A --arch a64fx --json | metric $m accuracy)" = unavailable ] && ok || bad "a64fx $m is not unavailable"
done
$A --arch monaka --json | metric BF16_OPS caveat | grep -q '0x8483, 0x848B' && ok || bad "monaka BF16_OPS caveat does not name the BF16 MIN events"
# Skylake-SP: Intel's FP_ARITH descriptions require MXCSR.DAZ and FTZ
$A --arch skx --json | metric DP_OPS caveat | grep -q 'DAZ and FTZ set: work on denormals' && ok ||
	bad "skx DP_OPS caveat does not name DAZ/FTZ and denormals"
$A --arch skx | grep -A1 '^  FP_OPS' >/dev/null && $A --arch skx | grep -q 'caveat: Needs 5 counters, 4 per thread with SMT on' && ok ||
	bad "skx FP_OPS caveat does not say 5 counters of 4"
# Zen 4 BF16_OPS: no source gives the FLOPs per VDPBF16PS lane
[ "$($A --arch zen4 --json | metric BF16_OPS accuracy)" = estimate ] && ok || bad "zen4 BF16_OPS is not estimate"
[ "$($A --arch zen5 --json | metric BF16_OPS accuracy)" = estimate ] && ok || bad "zen5 BF16_OPS is not estimate"

# perf stat arguments: a bare raw code on a hybrid part counts on every
# core PMU (and means another event on the E-cores): PMU-qualified there
chk_perf() { # PMU PATTERN
	out=$($A --arch "$1" --perf 2>/dev/null)
	echo "$out" | grep -qE -- "$2" && ok || bad "$1 --perf: [$out] does not match $2"
	case "$1" in adl_glc|lnc|skt|cmt|cmt_lp|nvl_cyc|nvl_awf|adl_grt)
		echo "$out" | grep -qE -- '-e r[0-9a-f]+' && bad "$1 --perf prints a bare raw code: $out" || ok ;;
	esac
}
chk_perf adl_glc '^-e cpu_core/event=0xc7,umask=0x1/ '
chk_perf lnc '-e cpu_core/event=0xc7,umask=0x20/'
chk_perf skt '-e cpu_atom/event=0xc8,umask=0x1/'
# Arrow Lake-H low-power E-cores: their own block on the kernel's cpu_lowpower
# PMU (Intel mapfile.csv 6-C5 LowPower_Atom; perf arrowlake JSON Unit cpu_lowpower)
chk_perf cmt_lp '^-e cpu_lowpower/event=0xc8,umask=0x1/ '
chk_perf skx '^-e r5301c7 '
# E-core-only parts are not hybrid: the kernel registers their core PMU as
# `cpu` (arch/x86/events/core.c: "cpu" when !is_hybrid(); Intel mapfile.csv
# lists 6-AF Sierra Forest, 6-B6 Grand Ridge, 6-DD Clearwater Forest as
# "core"), where perf takes a bare raw code; a cpu_atom/ event would be
# refused there (no such PMU)
for p in srf grr cwf; do
	out=$($A --arch $p --perf FP_OPS 2>/dev/null)
	[ "$out" = "-e r5303c8" ] && ok || bad "$p --perf FP_OPS: [$out], expected [-e r5303c8] (FP_FLOPS_RETIRED.ALL on cpu)"
	$A --arch $p --perf 2>/dev/null | grep -q 'cpu_atom' && bad "$p --perf names cpu_atom" || ok
done
# ... and the hybrid parts' Crestmont E-cores keep cpu_atom (Meteor Lake)
chk_perf cmt '^-e cpu_atom/event=0xc8,umask=0x1/ '
# Crestmont VEC_DP: Intel's Crestmont lists (SRF sierraforest_core.json,
# GRR, MTL/ARL crestmont) describe umask 0x08 as all FP retired
# instructions, and no list names the 0x28 union: an estimate that says so;
# Skymont's lists give 0x08 the packed-double text (exact there)
for p in srf cmt; do
	[ "$($A --arch $p --json | metric VEC_DP accuracy)" = estimate ] && ok || bad "$p VEC_DP is not estimate"
	$A --arch $p --json | metric VEC_DP caveat | grep -q 'describe umask 0x08 (128B_DP) as all FP retired instructions' && ok ||
		bad "$p VEC_DP caveat does not say why it is an estimate"
done
[ "$($A --arch skt --json | metric VEC_DP accuracy)" = exact ] && ok || bad "skt VEC_DP is not exact"
chk_perf arm_v2 '^-e r80c0 -e r80c1$'
# a replayed hybrid machine: the P-core line qualified, the Gracemont kind a
# comment (no FLOP event), and success
out=$($A --topology $TOPO/Intel-RaptorLake-Corei7-1370P.xml --perf 2>"$B/avail.err"); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q '^-e cpu_core/event=0xc7,umask=0x1/' && ok || bad "Raptor Lake --perf: rc=$rc $out"
grep -q 'Gracemont E-core (Alder Lake, Raptor Lake, Alder Lake-N) (adl_grt), CPUs 12-19: no FLOP metric' "$B/avail.err" && ok ||
	bad "Raptor Lake --perf: no comment for the E-cores: $(cat "$B/avail.err")"
rm -f "$B/avail.err"

# Opmask sampling (masked AVX-512 lanes): the kernel's answer, in the
# access section.  A kernel without the series (seed 002, v5) refuses the
# attr fields with E2BIG: "not supported by this kernel", and the fix
# names the series.  A replayed topology says nothing about this kernel,
# nor does an aarch64 build (AVX-512 opmasks are x86's).
if [ "$(sed -n 's/^ARCH *= *//p' Makefile 2>/dev/null)" = aarch64 ]; then
	$A | grep -q '^Opmask sampling' && bad "aarch64 reports opmask sampling" || ok
	$A --json | jq -e '.access | has("opmask_sampling") | not' >/dev/null && ok || bad "aarch64 JSON has opmask_sampling"
else
out=$($A)
line=$(echo "$out" | grep '^Opmask sampling: ')
case "$line" in
"Opmask sampling: supported: "*) ok ;;
"Opmask sampling: not "*)
	echo "$out" | grep -A1 '^Opmask sampling: ' | grep -q '^Fix            : ' && ok || bad "opmask sampling without a fix: $out" ;;
*) bad "no opmask-sampling line in the access section: $out" ;;
esac
if echo "$line" | grep -q 'E2BIG'; then
	echo "$line" | grep -q 'not supported by this kernel: Linux .* refuses perf_event_attr.s SIMD register fields' && ok ||
		bad "E2BIG line: $line"
	echo "$out" | grep -A1 '^Opmask sampling: ' | grep -q 'Support SIMD/eGPRs/SSP registers sampling for perf' && ok ||
		bad "the fix does not name the series: $out"
fi
js=$($A --json)
echo "$js" | jq -e '.access.opmask_sampling | (.supported | type == "boolean") and (.reason | length > 0)' >/dev/null && ok ||
	bad "JSON access.opmask_sampling: $js"
fi
$A --topology $TOPO/Intel-Skylake-2xXeon6140.xml | grep -q '^Opmask sampling' && bad "a replayed topology reports opmask sampling" || ok

echo "test_avail: $pass passed, $fail failed"
[ "$fail" = 0 ]
