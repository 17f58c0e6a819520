#!/bin/sh
# The flops component inside the libpapi that `make` built: the public-API
# test program under several formula tables, and PAPI's own utilities
# (papi_component_avail, papi_native_avail, papi_command_line) showing our
# events and errors.  Exit 77 (skipped) when libpapi was not built
# (./configure --without-papi-src).
B=${B:-build}
P=$B/papi/src
[ -f "$B/papi/.built" ] && [ -x "$B/flops_papi_test" ] || { echo "skip: libpapi with flops not built"; exit 77; }
export LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
out=$(mktemp) && trap 'rm -f "$out"' EXIT

# Counting possible here?  The component says so itself.
$P/utils/papi_component_avail > "$out" 2>&1 || bad "papi_component_avail exit $?"
if grep -A1 '^Name: *flops' "$out" | grep -q 'Disabled: events listed, counting impossible'; then
	mode=nocounting
	echo "ok:   papi_component_avail: flops disabled with the probe's reason:"
	grep -A1 '^Name: *flops' "$out" | sed -n 2p | cut -c1-150
elif sed -n '/^Active components/,$p' "$out" | grep -q '^Name: *flops'; then
	mode=counting
	echo "ok:   papi_component_avail: flops active"
elif [ -n "$TEST_WRAPPER" ] && grep -A1 '^Name: *flops' "$out" | grep -q 'Disabled: unknown CPU: the topology names no CPU vendor'; then
	mode=nocounting	# an emulator (scripts/test-aarch64.sh): /proc/cpuinfo is the host's, another architecture's
	echo "ok:   papi_component_avail under $TEST_WRAPPER: flops disabled, the host CPU being another architecture's"
else
	bad "papi_component_avail shows no flops component"; cat "$out"; mode=nocounting
fi

# Several formula tables: libpfm4 PMUs by LIBPFM_FORCE_PMU, raw-only ones
# (no libpfm4 4.13 PMU) by PAPI_FLOPS_PMU.
for pmu in snb hsw skx spr amd64_fam19h_zen4; do
	LIBPFM_FORCE_PMU=$pmu $B/flops_papi_test $pmu $mode > "$out" 2>&1 || { bad "flops_papi_test $pmu"; cat "$out"; }
	echo "== $pmu: $(tail -n 1 "$out")"
done
for pmu in adl_glc lnc amd64_fam1ah_zen5; do
	PAPI_FLOPS_PMU=$pmu $B/flops_papi_test $pmu $mode > "$out" 2>&1 || { bad "flops_papi_test $pmu"; cat "$out"; }
	echo "== $pmu (PAPI_FLOPS_PMU): $(tail -n 1 "$out")"
done

# PAPI_FLOPS_PMU=srf / cwf on an E-core-only part's sysfs, where the kernel
# registers the one core PMU as `cpu` (arch/x86/events/core.c, not hybrid):
# the component counts on it and looks for no cpu_atom; a hybrid E-core
# block (mtl_cmt, on cpu_atom) there names the PMU it does not find.
# PAPI_FLOPS_SYSFS points the component at that sysfs.
sys=$(mktemp -d) && mkdir "$sys/cpu" && echo 4 > "$sys/cpu/type"
for pmu in srf cwf mtl_cmt; do
	PAPI_FLOPS_SYSFS=$sys PAPI_FLOPS_PMU=$pmu $P/utils/papi_component_avail > "$out" 2>&1
	reason=$(grep -A1 '^Name: *flops' "$out" | sed -n 2p)
	case "$pmu:$reason" in
	*perf_event_paranoid*) echo "skip: PAPI_FLOPS_PMU=$pmu: counting not permitted here: $reason" ;;
	mtl_cmt:*"no perf PMU 'cpu_atom'"*) echo "ok:   PAPI_FLOPS_PMU=mtl_cmt on a cpu-only sysfs: names cpu_atom" ;;
	mtl_cmt:*) bad "PAPI_FLOPS_PMU=mtl_cmt on a cpu-only sysfs: [$reason]" ;;
	*Disabled*) bad "PAPI_FLOPS_PMU=$pmu on a cpu-only sysfs: $reason" ;;
	*) sed -n '/^Active components/,$p' "$out" | grep -q '^Name: *flops' && echo "ok:   PAPI_FLOPS_PMU=$pmu: active on cpu" ||
		{ bad "PAPI_FLOPS_PMU=$pmu: flops not active"; cat "$out"; } ;;
	esac
done
rm -r "$sys"

# papi_native_avail lists the events with formula, class and qualifiers.
LIBPFM_FORCE_PMU=skx $P/utils/papi_native_avail -i flops > "$out" 2>&1
grep -q 'flops:::DP_OPS' "$out" || bad "papi_native_avail does not list flops:::DP_OPS"
grep -q 'masked-full' "$out" || bad "papi_native_avail: no accuracy class in the descriptions"
grep -q ':W512' "$out" || bad "papi_native_avail: no width qualifier"
[ $fail = 0 ] && echo "ok:   papi_native_avail lists flops:::DP_OPS with class and qualifiers"

# papi_command_line, an unmodified PAPI client adding events by name, with
# no PAPI_VERBOSE: what fits is added, what does not is refused with one
# sentence on stderr (counters needed and available, what fits instead,
# the switch), and PAPI_FLOPS_MULTIPLEX=1 adds it anyway.
cl() { env "$@" $P/utils/papi_command_line $ev > "$out" 2>&1; }
adds() {	# adds PMU "EVENTS..." [ENV...]: every event added
	pmu=$1 ev=$2; shift 2
	cl LIBPFM_FORCE_PMU=$pmu "$@"
	for e in $ev; do grep -q "Successfully added: $e\$" "$out" || { bad "$pmu: $e not added ($*)"; cat "$out"; return; }; done
	echo "ok:   $pmu: added $ev${*:+ with $*}"
}
refuses() {	# refuses PMU EVENT SENTENCE-PIECE...: refused, each piece on stderr, once
	pmu=$1 ev=$2; shift 2
	cl LIBPFM_FORCE_PMU=$pmu
	grep -q "Failed adding: ${ev##* }\$" "$out" || { bad "$pmu: $ev was not refused"; cat "$out"; return; }
	for piece in "$@"; do
		[ "$(grep -c "^PAPI flops component: .*$piece" "$out")" = 1 ] || { bad "$pmu $ev: no (or repeated) sentence with '$piece'"; cat "$out"; return; }
	done
	echo "ok:   $pmu: $ev refused: $(grep '^PAPI flops component' "$out" | grep -v 'counting impossible' | cut -c1-150)..."
}
for pmu in spr icx bdw amd64_fam19h_zen4; do adds $pmu flops:::FP_OPS; done
# a PMU this process's libpfm4 does not have active (PAPI initialized it;
# 4.13 does not know Granite Rapids): the build's encodings serve
ev=flops:::FP_OPS; cl PAPI_FLOPS_PMU=gnr
grep -q "Successfully added: flops:::FP_OPS" "$out" && echo "ok:   gnr (not active in libpfm4): FP_OPS added from the build's encodings" ||
	{ bad "gnr FP_OPS not added without an active libpfm4 PMU"; cat "$out"; }
adds icx "flops:::FP_OPS flops:::DP_OPS flops:::SP_OPS"
for pmu in snb skx; do adds $pmu flops:::DP_OPS; adds $pmu flops:::SP_OPS; done
refuses skx flops:::FP_OPS "FP_OPS needs 5 hardware counters on Intel Skylake-SP, which has 4 general counters per thread (SMT on)" \
	"DP_OPS or SP_OPS fit alone" "set PAPI_FLOPS_MULTIPLEX=1"
refuses snb flops:::FP_OPS "FP_OPS needs [0-9]* hardware counters on Intel Sandy Bridge, which has 4 general counters" \
	"DP_OPS or SP_OPS fit alone" "set PAPI_FLOPS_MULTIPLEX=1"
refuses spr "flops:::FP_OPS flops:::HP_OPS" "FP_OPS+HP_OPS need 10 hardware counters" "PAPI_FLOPS_MULTIPLEX=1"
for pmu in skx snb; do adds $pmu flops:::FP_OPS PAPI_FLOPS_MULTIPLEX=1; done
# a switch value other than 0 or 1 is said, and taken as 0 (exact first)
ev=flops:::FP_OPS; cl LIBPFM_FORCE_PMU=skx PAPI_FLOPS_MULTIPLEX=yes
grep -q "PAPI_FLOPS_MULTIPLEX=yes is neither 0 nor 1: taken as 0" "$out" && grep -q "Failed adding: flops:::FP_OPS" "$out" &&
	echo "ok:   PAPI_FLOPS_MULTIPLEX=yes: said, taken as 0" || { bad "PAPI_FLOPS_MULTIPLEX=yes"; cat "$out"; }
refuses amd64_fam19h_zen4 flops:::DP_OPS "DP_OPS cannot be counted here: on AMD Zen 4.*every precision together"
refuses icl flops:::HP_OPS "HP_OPS cannot be counted here: on Intel Ice Lake.*no half-precision"
# two kinds, one of which lacks the metric: refused (its sum would miss
# that kind's time), what both count is added
ev=flops:::HP_OPS; cl PAPI_FLOPS_PMU=spr,adl_glc
grep -q "Failed adding: flops:::HP_OPS" "$out" &&
	grep -q "^PAPI flops component: HP_OPS is not counted on Intel Golden Cove.*cores.*would miss the time there" "$out" &&
	echo "ok:   spr,adl_glc: HP_OPS (not on adl_glc) refused" || { bad "spr,adl_glc: HP_OPS not refused"; cat "$out"; }
ev=flops:::DP_OPS; cl PAPI_FLOPS_PMU=spr,adl_glc
grep -q "Successfully added: flops:::DP_OPS" "$out" || { bad "spr,adl_glc: DP_OPS not added"; cat "$out"; }
# the status event of the reduced Sapphire Rapids plan, and the reasons in
# papi_native_avail's description
ev="flops:::FP_OPS flops:::UNWEIGHTED_FP16"; cl LIBPFM_FORCE_PMU=spr
grep -q "Successfully added: flops:::UNWEIGHTED_FP16" "$out" || { bad "spr: UNWEIGHTED_FP16 not added"; cat "$out"; }
LIBPFM_FORCE_PMU=amd64_fam19h_zen4 $P/utils/papi_native_avail -e flops:::DP_OPS > "$out" 2>&1
grep -q "Description:.*amd64_fam19h_zen4: not counted (Zen 2 to Zen 4 count FLOPs of every precision together" "$out" &&
	echo "ok:   papi_native_avail -e flops:::DP_OPS on zen4 gives the reason" || { bad "papi_native_avail -e DP_OPS on zen4"; cat "$out"; }
# names are read whole: junk after 200 colons is not the same event
ev="flops:::DP_OPS$(printf ':%.0s' $(seq 200))BOGUS"; cl LIBPFM_FORCE_PMU=skx
grep -q "Failed adding" "$out" && echo "ok:   a name with 200 colons and junk is refused" || { bad "long junk name accepted"; head -5 "$out"; }
ev=flops:::NO_SUCH; cl LIBPFM_FORCE_PMU=skx
grep -q 'Failed adding: flops:::NO_SUCH' "$out" || bad "papi_command_line accepted an unknown event"
# without counters: start refused, the component's reason on stderr, no zero printed as a count
ev=flops:::DP_OPS; cl LIBPFM_FORCE_PMU=skx
if [ $mode = nocounting ]; then
	# the trace source is suggested where it exists (x86-64), never elsewhere
	case $(uname -m)$TEST_WRAPPER in
	x86_64) hint='PAPI_FLOPS_SOURCE=trace' ;;
	*) hint='no count without counters here: the trace source is x86-64 only for now' ;;
	esac
	grep -q "^PAPI flops component: events listed, counting impossible: no hardware PMU is exposed.*$hint" "$out" &&
		grep -q 'Error! PAPI_start' "$out" ||
		{ bad "papi_command_line flops:::DP_OPS: start not refused with the reason"; cat "$out"; }
	grep -q 'flops:::DP_OPS : *0' "$out" && bad "papi_command_line printed a zero count"
fi
[ $fail = 0 ] && echo "ok:   papi_command_line: added, refused with one sentence each, PAPI_FLOPS_MULTIPLEX, start refusal"
# PAPI picks preset rows by the perf_event PMU (libpfm4's): an aarch64
# libpfm4 has no x86 PMU to force, so the x86 presets are not there
if [ "$(sed -n 's/^ARCH *= *//p' Makefile 2>/dev/null)" = aarch64 ]; then
	echo "SKIP: papi_component: presets on x86 PMUs: an aarch64 libpfm4 cannot force them"
else
	# Presets from the component: in this libpapi PAPI_FP_OPS ... are each one
	# flops event, so papi_command_line adds and refuses them exactly as the
	# flops event, with the same sentence, and their notes say what they count.
	same() {	# same PMU METRIC: PAPI_<METRIC> and flops:::<METRIC> give the same verdict and stderr
		ev=PAPI_$2; cl LIBPFM_FORCE_PMU=$1; a=$(grep -E '^PAPI flops component|^(Successfully added|Failed adding)' "$out" | sed 's/PAPI_'$2'$/EV/')
		ev=flops:::$2; cl LIBPFM_FORCE_PMU=$1; b=$(grep -E '^PAPI flops component|^(Successfully added|Failed adding)' "$out" | sed 's/flops:::'$2'$/EV/')
		[ -n "$a" ] && [ "$a" = "$b" ] && echo "ok:   $1: PAPI_$2 as flops:::$2: $(echo "$a" | grep -E 'added|adding')" ||
			bad "$1: PAPI_$2 [$a] differs from flops:::$2 [$b]"
	}
	same skx FP_OPS; same skx DP_OPS; same snb FP_OPS; same snb VEC_DP; same icx FP_OPS; same spr FP_OPS; same amd64_fam19h_zen4 FP_OPS
	ev=PAPI_FP_OPS; cl LIBPFM_FORCE_PMU=skx
	[ "$(grep -c '^PAPI flops component: FP_OPS needs 5 hardware counters on Intel Skylake-SP' "$out")" = 1 ] ||
		{ bad "skx PAPI_FP_OPS: not refused with the component's sentence"; cat "$out"; }
	LIBPFM_FORCE_PMU=skx $P/utils/papi_avail > "$out" 2>&1
	grep -q '^PAPI_FP_OPS .* Yes ' "$out" && grep -q '^PAPI_DP_OPS .* Yes ' "$out" && echo "ok:   skx: papi_avail lists PAPI_FP_OPS and PAPI_DP_OPS" ||
		{ bad "skx: papi_avail does not list PAPI_FP_OPS / PAPI_DP_OPS as available"; grep _OPS "$out"; }
	note() {	# note PMU PRESET PIECE...: papi_avail -e shows the preset on flops:::, each piece in its note
		LIBPFM_FORCE_PMU=$1 $P/utils/papi_avail -e $2 > "$out" 2>&1
		grep -q "Native Code\[0\]: .*|flops:::${2#PAPI_}|" "$out" || { bad "$1 $2: not one flops:::${2#PAPI_} event"; cat "$out"; return; }
		shift 2
		for piece in "$@"; do grep -q "Developer's Notes: .*$piece" "$out" || { bad "$1 note lacks '$piece'"; cat "$out"; return; }; done
		echo "ok:   papi_avail -e: the note says: $*"
	}
	note skx PAPI_VEC_DP "packed (SIMD) double-precision instructions only; one per instruction; scalar instructions are not counted"
	note skx PAPI_VEC_SP "packed (SIMD) single-precision instructions only"
	note snb PAPI_FP_OPS "each weighted by its lanes (PAPI 7.0's own PAPI_FP_OPS here adds scalar SSE and x87 uops unweighted); x87 is left out"
	# (PAPI 7.0 has no PAPI_HP_OPS: pflops_gen writes it only --have-hp)
	# no preset where the component has no formula: Zen 4 DP_OPS (all precisions together)
	LIBPFM_FORCE_PMU=amd64_fam19h_zen4 $P/utils/papi_avail > "$out" 2>&1
	grep -q '^PAPI_DP_OPS .* Yes ' "$out" && bad "zen4: PAPI_DP_OPS listed, flops:::DP_OPS cannot count" ||
		echo "ok:   zen4: no PAPI_DP_OPS (flops:::DP_OPS cannot be counted there)"
fi

# perf_event_open (sampling, software events) is not in qemu-user
if [ -n "$TEST_WRAPPER" ]; then
	echo "SKIP: papi_component: PAPI_overflow under $TEST_WRAPPER: it has no perf_event_open"
else
	# PAPI_overflow (flops_overflow_test.c): without counters it is refused
	# with one sentence each (never PAPI_OK without samples); with page faults
	# standing in for the natives (PAPI_FLOPS_TEST_SWEVENT) the handler runs
	# exactly as often as the periods ceil(P / weight) make it, at the faulting
	# store, in threads, through the preset, FORCE_SW; a multiplexed set, a
	# status event, two overflowing events on shared counters are refused.
	if [ $mode = nocounting ]; then
		LIBPFM_FORCE_PMU=skx $B/flops_overflow_test refuse > "$out" 2>&1 || { bad "flops_overflow_test refuse"; cat "$out"; }
		for piece in "PAPI_overflow on flops:::DP_OPS refused: events listed, counting impossible: no hardware PMU" \
			"PAPI_overflow on flops:::SCALED refused: a status event counts on no counter"; do
			[ "$(grep -c "^PAPI flops component: $piece" "$out")" = 1 ] || { bad "overflow refusal: no (or repeated) '$piece'"; cat "$out"; }
		done
		echo "== overflow without counters: $(tail -n 1 "$out")"
	fi
	PAPI_FLOPS_TEST_SWEVENT=page-faults LIBPFM_FORCE_PMU=skx $B/flops_overflow_test standin > "$out" 2>&1 || { bad "flops_overflow_test standin"; cat "$out"; }
	grep -q "^PAPI flops component: PAPI_overflow on flops events cannot be done in a multiplexed event set" "$out" ||
		{ bad "multiplexed overflow: no sentence"; cat "$out"; }
	grep "handler calls" "$out" | sed -n 1p
	echo "== overflow on page faults standing in for the natives: $(tail -n 1 "$out")"
	PAPI_FLOPS_TEST_SWEVENT=page-faults LIBPFM_FORCE_PMU=icx $B/flops_overflow_test shared > "$out" 2>&1 || { bad "flops_overflow_test shared"; cat "$out"; }
	grep -q "^PAPI flops component: PAPI_overflow on flops:::DP_OPS cannot be done: .* counts for two overflowing events" "$out" ||
		{ bad "shared counters: no sentence"; cat "$out"; }
	echo "== overflow of two events on shared counters: $(tail -n 1 "$out")"
	# the model source has no overflow: refused with the sentence (never
	# PAPI_OK without a handler call), the preset too; the trace source
	# overflows (papi_trace.sh)
	PAPI_FLOPS_SOURCE=model:skx LIBPFM_FORCE_PMU=skx $B/flops_overflow_test refuse > "$out" 2>&1 ||
		{ bad "flops_overflow_test refuse under PAPI_FLOPS_SOURCE=model:skx"; cat "$out"; }
	[ "$(grep -c "^PAPI flops component: PAPI_overflow on flops:::DP_OPS refused: PAPI_FLOPS_SOURCE=model has no overflow" "$out")" = 1 ] ||
		{ bad "model overflow refusal: no (or repeated) sentence"; cat "$out"; }
	echo "== overflow refused under PAPI_FLOPS_SOURCE=model:skx: $(tail -n 1 "$out")"
fi

# 64 threads under PAPI_thread_init (valgrind too, where installed).
LIBPFM_FORCE_PMU=skx $B/flops_threads64 > "$out" 2>&1 || { bad "flops_threads64"; cat "$out"; }
echo "== threads: $(tail -n 1 "$out")"
if command -v valgrind >/dev/null && [ -z "$PF_NO_VALGRIND" ] && case "$B" in *asan*) false;; *) true;; esac; then
	LIBPFM_FORCE_PMU=skx valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		$B/flops_threads64 > "$out" 2>&1 || { bad "flops_threads64 under valgrind"; cat "$out"; }
	echo "== threads under valgrind: $(tail -n 1 "$out")"
fi
exit $fail
