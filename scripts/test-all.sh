#!/bin/sh
# The whole test suite: unit and integration tests (make check), the same
# as a CPU without AVX-512 and without AVX512-FP16 runs it, under
# ASan+UBSan and under valgrind, a short run of every fuzz harness, PAPI's
# own test suite against Debian's libpapi and ours, and an aarch64 cross
# build tested under qemu-user.
# Every suite runs even when one fails; a table at the end says what
# passed, failed and was skipped (and why).  Installs what is missing
# first, saying what.  Exit status: 0 only when no suite failed.
set -e
cd "$(dirname "$0")/.."
missing=$(./scripts/install-deps.sh --tests --missing)
if [ -n "$missing" ]; then
	echo "test-all: first installs the missing Debian packages the build and the tests need (apt-get update, apt-get install):$missing"
fi
./scripts/install-deps.sh --tests
[ -f Makefile ] || ./configure --prefix="$PWD/_inst"
make -j"$(nproc)"
set +e
L=build/test-logs
mkdir -p "$L"
: > "$L/summary"

# suite NAME COMMAND...: run it, keep its log, add a row to the summary
suite() {
	name=$1
	shift
	echo "==== test-all: $name: $*"
	t0=$(date +%s)
	{ "$@" 2>&1; echo $? > "$L/$name.rc"; } | tee "$L/$name.log"
	rc=$(cat "$L/$name.rc")
	secs=$(($(date +%s) - t0))
	# the runner's closing line: "N passed, N failed[, N skipped]"
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$L/$name.log" | tail -n 1)
	p=$(echo "$line" | sed -nE 's/(^|.*[^0-9])([0-9]+) passed.*/\2/p')
	f=$(echo "$line" | sed -nE 's/(^|.*[^0-9])([0-9]+) failed.*/\2/p')
	s=$(echo "$line" | sed -nE 's/(^|.*[^0-9])([0-9]+) skipped.*/\2/p')
	[ -n "$p" ] || p=0
	[ -n "$f" ] || f=0
	[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1	# it stopped before its closing line
	k=$(grep -c '^SKIP: ' "$L/$name.log")
	echo "$name $p $f ${s:-0} $k $secs $rc" >> "$L/summary"
}

# the suite as a smaller CPU runs it, unless this CPU is already that
nofp16() {
	if PFLOPS_CPU_HIDE= build/ctests/trace/calib_fp --needs vaddph_x 2>/dev/null; then
		make check-nofp16
	else
		echo "SKIP: check-nofp16: this CPU lacks avx512_fp16 already: make check ran as check-nofp16 would"
		echo "check-nofp16: 0 passed, 0 failed, 1 skipped"
	fi
}

suite format make check-format
suite check make check
suite check-noavx512 make check-noavx512
suite check-nofp16 nofp16
suite check-asan make check-asan
suite check-valgrind make check-valgrind
suite fuzz-smoke make fuzz-smoke
# PAPI's own tests against Debian's libpapi and ours (PAPI_FLOPS_SOURCE=trace):
# none may do worse with ours
suite papi-suite make check-papi-suite
# aarch64: a cross build whose tests run under qemu-user (it installs its
# own packages: arm64 multiarch, the cross compiler, qemu-user)
if [ "$(uname -m)" = x86_64 ] && { command -v qemu-aarch64 || apt-cache show qemu-user; } >/dev/null 2>&1; then
	suite aarch64 scripts/test-aarch64.sh
fi

echo
echo "test-all: summary (logs in $L/)"
printf '  %-16s %7s %7s %8s %7s %7s\n' suite passed failed skipped checks time
tp=0 tf=0 ts=0
while read -r name p f s k secs rc; do
	printf '  %-16s %7s %7s %8s %7s %6ss%s\n' "$name" "$p" "$f" "$s" "$k" "$secs" \
		"$([ "$rc" = 0 ] || echo "  FAILED (exit $rc)")"
	tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
done < "$L/summary"
echo "  (passed/failed/skipped: test programs and scripts, or fuzz harnesses; checks: single checks"
echo "   inside them skipped for the reasons below)"
echo
echo "Skipped, by reason:"
for name in $(cut -d' ' -f1 "$L/summary"); do
	grep -h '^SKIP: ' "$L/$name.log" | sed -E 's/^SKIP: ([^:]+): (.*: )?(this CPU lacks .*)$/\3/; s/^SKIP: //' |
		sort | uniq -c | sort -rn | sed "s/^ *\([0-9]*\) /  $name: \1 x /"
done
echo
echo "test-all: $tp passed, $tf failed, $ts skipped"
[ "$tf" = 0 ]
