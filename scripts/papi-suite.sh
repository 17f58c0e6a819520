#!/bin/sh
# make check-papi-suite: PAPI's own test programs (ctests and
# validation_tests of the PAPI source libpapi was built from), built once
# against that source's papi.h, run against Debian's libpapi (the same
# soname, libpapi.so.7.0) and against ours with PAPI_FLOPS_SOURCE=trace.
# Writes a table (OUT, default $B/papi-suite.md) and fails when a test
# does worse with ours than with Debian's (passed -> skipped or failed,
# skipped -> failed).  Exit 77 when libpapi or Debian's is missing.
#   B=build scripts/papi-suite.sh [TEST...]     (default: every test)
# FORCE_PMU=skx runs both with LIBPFM_FORCE_PMU=skx: libpfm4 then names a
# PMU on a machine that exposes none, so PAPI loads its preset table
# (PAPI_FP_OPS ... are the flops component's events in ours).
B=${B:-build}
OUT=${OUT:-$B/papi-suite.md}
TIMEOUT=${TIMEOUT:-60}
ours=$(cd "$B/papi/src" 2>/dev/null && pwd)
[ -f "$B/papi/.built" ] && [ -n "$ours" ] || { echo "SKIP: papi-suite: libpapi with flops not built"; exit 77; }
# Debian's, of this machine's architecture (others may be installed)
deb=/usr/lib/$(gcc -print-multiarch 2>/dev/null)
[ -f "$deb/libpapi.so.7.0" ] || deb=/usr/lib
[ -f "$deb/libpapi.so.7.0" ] || { echo "SKIP: papi-suite: Debian's libpapi.so.7.0 is not installed (apt-get install libpapi7.0)"; exit 77; }
S=$B/papi-suite
log=$S/build.log

# one copy of the configured tree: PAPI's own rules build its tests
if [ ! -f "$S/.built" ] || [ "$ours/libpapi.so" -nt "$S/.built" ]; then
	rm -rf "$S" && mkdir -p "$S" && cp -a "$ours" "$S/src" || exit 1
	echo "papi-suite: building PAPI's ctests, validation_tests and component tests (log: $log)"
	{ make -k -C "$S/src" ctests; r=$?; make -k -C "$S/src" comp_tests && [ $r = 0 ]; } > "$log" 2>&1 ||
		echo "papi-suite: some tests did not build (see $log)"
	touch "$S/.built"
fi

# which libpapi a test loads with LD_LIBRARY_PATH=$1: never the wrong one
loads() { LD_LIBRARY_PATH=$1 ldd "$2" | sed -n 's/.*libpapi.so[^ ]* => \([^ ]*\).*/\1/p'; }

# one run: passed | skipped | failed (exit N / signal / timeout)
run() {	# run LIBDIR PROGRAM [ENV...] -> prints the outcome
	lib=$1 prog=$2; shift 2
	# output to a file: a test's stopped or traced children must not
	# hold a pipe open; timeout signals the whole group, KILL after 5 s
	# (a test's own libraries in lib/ beside it, as PAPI's run_tests.sh)
	(cd "$(dirname "$prog")" && env "$@" LD_LIBRARY_PATH="$lib:$PWD/lib" timeout -k 5 "$TIMEOUT" "./$(basename "$prog")" TESTS_QUIET) \
		> "$S/run.out" 2>&1 < /dev/null
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then echo "failed (timeout ${TIMEOUT} s)"
	elif [ $rc -gt 128 ]; then echo "failed (signal $((rc - 128)))"
	elif [ $rc != 0 ] || grep -q 'FAILED' "$S/run.out"; then echo "failed (exit $rc)"
	elif grep -q 'SKIPPED' "$S/run.out"; then echo "skipped"
	else echo "passed"; fi
}
rank() { case "$1" in passed*) echo 2 ;; skipped*) echo 1 ;; *) echo 0 ;; esac; }

progs=""
if [ $# -gt 0 ]; then
	for t in "$@"; do progs="$progs $(ls "$S"/src/ctests/"$t" "$S"/src/validation_tests/"$t" 2>/dev/null)"; done
else
	for f in "$S"/src/ctests/* "$S"/src/validation_tests/* "$S"/src/components/*/tests/* "$S"/src/components/*/tests/*/*; do
		# programs: executable ELF files (no scripts, no libraries)
		[ -f "$f" ] && [ -x "$f" ] && [ "$(head -c 4 "$f" | tail -c 3)" = ELF ] || continue
		case "$f" in *.so|*.so.*) continue ;; esac
		progs="$progs $f"
	done
fi
set -- $progs
[ $# -gt 0 ] || { echo "papi-suite: no test program built (see $log)"; exit 1; }
case "$(loads "$deb" "$1")" in "$deb"/*) ;; *) echo "papi-suite: $1 does not load $deb/libpapi.so.7.0 with LD_LIBRARY_PATH=$deb"; exit 1 ;; esac
case "$(realpath "$(loads "$ours" "$1")")" in "$ours"/*) ;; *) echo "papi-suite: $1 does not load our libpapi"; exit 1 ;; esac
n=0 worse=0 better=0; dp=0 ds=0 df=0 op=0 os=0 of=0
{
	echo "# PAPI's own tests: Debian's libpapi and ours (PAPI_FLOPS_SOURCE=trace)"
	echo
	echo "The ctests, validation_tests and component tests (those of the components ours has) of $(basename "$(cat "$B/papi-src.path" 2>/dev/null)"), built from the source"
	echo "our libpapi was built from; run on $(uname -m) $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $(date -u +%Y-%m-%d);"
	echo "Debian's: $deb/libpapi.so.7.0; ours: $B/papi/src (flops component, \`PAPI_FLOPS_SOURCE=trace\`)."
	echo "Made by \`make check-papi-suite\` (scripts/papi-suite.sh)${FORCE_PMU:+, both with LIBPFM_FORCE_PMU=$FORCE_PMU}; the high-level"
	echo "FP validation tests (validation_tests/*_hl) with PAPI_EVENTS=PAPI_FP_OPS for both (PAPI's default list fails without a PMU)."
	echo
	echo "| test | Debian's libpapi | ours, PAPI_FLOPS_SOURCE=trace | |"
	echo "|---|---|---|---|"
} > "$OUT.tmp"
for p in $progs; do
	name=${p#"$S"/src/}
	# the high-level FP validation tests measure what PAPI_EVENTS names
	# (PAPI 7.0's default list starts with perf::TASK-CLOCK): the FLOPs,
	# for both libraries alike
	hl=""
	case "$name" in validation_tests/*_hl) hl=PAPI_EVENTS=PAPI_FP_OPS ;; esac
	a=$(run "$deb" "$p" PAPI_FLOPS_SOURCE=hw ${FORCE_PMU:+LIBPFM_FORCE_PMU=$FORCE_PMU} $hl)
	b=$(run "$ours" "$p" PAPI_FLOPS_SOURCE=trace PAPI_FLOPS_TRACER="$(cd "$B" && pwd)/papi_flops_run" ${FORCE_PMU:+LIBPFM_FORCE_PMU=$FORCE_PMU} $hl)
	ra=$(rank "$a") rb=$(rank "$b") mark=""
	if [ "$rb" -lt "$ra" ]; then	# once more: a loaded machine times out
		b2=$(run "$ours" "$p" PAPI_FLOPS_SOURCE=trace PAPI_FLOPS_TRACER="$(cd "$B" && pwd)/papi_flops_run" ${FORCE_PMU:+LIBPFM_FORCE_PMU=$FORCE_PMU} $hl)
		b="$b2 (run again; first: $b)"
		rb=$(rank "$b2")
	fi
	[ "$rb" -lt "$ra" ] && { mark="**worse**"; worse=$((worse + 1)); }
	[ "$rb" -gt "$ra" ] && { mark="better"; better=$((better + 1)); }
	case $ra in 2) dp=$((dp + 1)) ;; 1) ds=$((ds + 1)) ;; *) df=$((df + 1)) ;; esac
	case $rb in 2) op=$((op + 1)) ;; 1) os=$((os + 1)) ;; *) of=$((of + 1)) ;; esac
	n=$((n + 1))
	echo "| $name | $a | $b | $mark |" >> "$OUT.tmp"
	[ -n "$mark" ] && echo "papi-suite: $name: Debian's $a, ours $b ($mark)"
done
{
	echo
	echo "$n tests. Debian's: $dp passed, $ds skipped, $df failed. Ours: $op passed, $os skipped, $of failed;"
	echo "$better better, $worse worse."
} >> "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "papi-suite: $n tests; Debian's $dp passed / $ds skipped / $df failed; ours $op / $os / $of; $better better, $worse worse (table: $OUT)"
# the verdict as test-all counts it: a test passes when ours does no worse
echo "papi-suite: $((n - worse)) passed, $worse failed"
[ $worse = 0 ]
