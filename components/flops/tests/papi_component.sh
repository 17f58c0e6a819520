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

# papi_native_avail lists the events with formula, class and qualifiers.
LIBPFM_FORCE_PMU=skx $P/utils/papi_native_avail -i flops > "$out" 2>&1
grep -q 'flops:::DP_OPS' "$out" || bad "papi_native_avail does not list flops:::DP_OPS"
grep -q 'masked-full' "$out" || bad "papi_native_avail: no accuracy class in the descriptions"
grep -q ':W512' "$out" || bad "papi_native_avail: no width qualifier"
[ $fail = 0 ] && echo "ok:   papi_native_avail lists flops:::DP_OPS with class and qualifiers"

# papi_command_line: the errors, each a PAPI code plus our sentence.
LIBPFM_FORCE_PMU=skx PAPI_VERBOSE=1 $P/utils/papi_command_line flops:::FP_OPS > "$out" 2>&1
grep -q 'FP_OPS need 5 hardware counters on Intel Skylake-SP, which has 4 per thread' "$out" ||
	{ bad "papi_command_line flops:::FP_OPS on skx: no counter-conflict sentence"; cat "$out"; }
grep -q 'Failed adding: flops:::FP_OPS' "$out" && grep -q 'hardware resource limits' "$out" ||
	bad "papi_command_line: FP_OPS on skx not refused with PAPI_ECNFLCT"
LIBPFM_FORCE_PMU=skx $P/utils/papi_command_line flops:::NO_SUCH > "$out" 2>&1
grep -q 'Failed adding: flops:::NO_SUCH' "$out" || bad "papi_command_line accepted an unknown event"
LIBPFM_FORCE_PMU=skx PAPI_VERBOSE=1 $P/utils/papi_command_line flops:::DP_OPS > "$out" 2>&1
grep -q 'Successfully added: flops:::DP_OPS' "$out" || { bad "papi_command_line could not add flops:::DP_OPS"; cat "$out"; }
if [ $mode = nocounting ]; then
	grep -q 'PAPI Error: flops: events listed, counting impossible' "$out" && grep -q 'Error! PAPI_start' "$out" ||
		{ bad "papi_command_line flops:::DP_OPS: start not refused with the reason"; cat "$out"; }
	grep -q 'flops:::DP_OPS : *0' "$out" && bad "papi_command_line printed a zero count"
fi
[ $fail = 0 ] && echo "ok:   papi_command_line: ECNFLCT, ENOEVNT and the start refusal, each with its sentence"
# 64 threads under PAPI_thread_init (valgrind too, where installed).
LIBPFM_FORCE_PMU=skx $B/flops_threads64 > "$out" 2>&1 || { bad "flops_threads64"; cat "$out"; }
echo "== threads: $(tail -n 1 "$out")"
if command -v valgrind >/dev/null && [ -z "$PF_NO_VALGRIND" ] && case "$B" in *asan*) false;; *) true;; esac; then
	LIBPFM_FORCE_PMU=skx valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		$B/flops_threads64 > "$out" 2>&1 || { bad "flops_threads64 under valgrind"; cat "$out"; }
	echo "== threads under valgrind: $(tail -n 1 "$out")"
fi
exit $fail
