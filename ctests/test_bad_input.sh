#!/bin/sh
# Every bad input issue 13 found, through the tools a user runs: a
# non-zero exit with the cause and the fix, never a crash (exit >= 128),
# never a number.  Fixtures: ctests/fixtures/{broken,perfstat},
# fuzz/regress/topology.
B=${B:-build}
AVAIL=$B/papi_flops_avail
RUN=$B/papi_flops_run
P=$B/papi/src
BROKEN=ctests/fixtures/broken
PS=ctests/fixtures/perfstat
REG=fuzz/regress/topology
# aarch64: hwloc has no x86 backend, so a valid CPUID dump is refused, said
ARCH=$(sed -n 's/^ARCH *= *//p' Makefile 2>/dev/null)
NO_REPLAY="which only an x86-64 hwloc replays; give an hwloc XML file of that machine instead"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run COMMAND...: its output (stdout and stderr) in $out, exit status in $rc
run() { out=$("$@" 2>&1); rc=$?; }
# check WHAT RC TEXT...: the last run exited RC and printed every TEXT
check() {
	what=$1 want=$2; shift 2
	[ "$rc" = "$want" ] || { bad "$what: exit $rc, expected $want: $out"; return; }
	for t; do echo "$out" | grep -qF -- "$t" || { bad "$what: output lacks '$t': $out"; return; }; done
	ok
}

# A CPUID dump packed as one file (hwloc-cpuid-info, then pu0, pu1 ...
# after "====" lines, as fuzz_topology.c reads it) into directory $2.
unpack() {
	mkdir -p "$2"
	awk -v d="$2" 'BEGIN { f = d "/hwloc-cpuid-info"; n = 0 }
		$0 == "====" { close(f); f = d "/pu" n++; printf "" > f; next }
		{ print > f }' "$1"
}

# 1. A formula nested 100000 deep: was a stack overflow in every tool and
#    every PAPI program at PAPI_library_init.
run env PAPI_FLOPS_TABLE=$BROKEN/deep_formula.pft $AVAIL
check "deep formula" 1 "deep_formula.pft:6: metric FP_OPS: nested more than 64 levels deep" "write the formula flat"
if [ -f "$B/papi/.built" ]; then
	run env PAPI_FLOPS_TABLE=$BROKEN/deep_formula.pft $P/utils/papi_component_avail
	check "deep formula, PAPI" 0 "nested more than 64 levels deep"
fi

# 8. An empty stepping= (read uninitialised memory) and an infinite weight.
run env PAPI_FLOPS_TABLE=$BROKEN/empty_stepping.pft $AVAIL --arch all
check "empty stepping" 1 "empty_stepping.pft:3: bad stepping range ''; write stepping=N or stepping=LO-HI"
run env PAPI_FLOPS_TABLE=$BROKEN/weight_overflow.pft $AVAIL --arch all
check "1e300*1e300" 1 "weight_overflow.pft:6: metric FP_OPS: a weight overflows (at most 1e6 FLOPs per count)"

# 2. A CPUID dump hwloc does not take: it used to replay this machine.
mkdir -p "$tmp/junk" && echo junk > "$tmp/junk/hwloc-cpuid-info" && echo x > "$tmp/junk/pu0"
run $AVAIL --topology "$tmp/junk"
check "junk hwloc-cpuid-info" 1 "junk/hwloc-cpuid-info: not an x86 CPUID dump" "make the directory with hwloc-gather-cpuid"
unpack $REG/no_pu.dump "$tmp/nopu"
run $AVAIL --topology "$tmp/nopu"
check "no pu0" 1 "nopu: no pu0 file"
mkdir -p "$tmp/gap" && printf 'Architecture: x86\n' > "$tmp/gap/hwloc-cpuid-info" && : > "$tmp/gap/pu0" && : > "$tmp/gap/pu2"
run $AVAIL --topology "$tmp/gap"
check "pu0, pu2" 1 "gap: the pu files are not numbered 0 to N-1 without gaps"
unpack $REG/no_leaf.dump "$tmp/noleaf"
run $AVAIL --topology "$tmp/noleaf"
check "no leaf 0/1" 1 "noleaf/pu0: no CPUID leaf 0 or 1"
# hwloc kept from the dump (its x86 backend off): what it built is checked against the dump
mkdir -p "$tmp/skl" && tar -C "$tmp/skl" -xjf ctests/fixtures/topologies/Intel-Skylake-2xXeon6140.tar.bz2
if [ "$ARCH" = aarch64 ]; then
	run $AVAIL --topology "$tmp/skl/Intel-Skylake-2xXeon6140"
	check "dump on aarch64" 1 "a CPUID dump of GenuineIntel family 6 model 85, $NO_REPLAY"
else
run env HWLOC_COMPONENTS=-x86 $AVAIL --topology "$tmp/skl/Intel-Skylake-2xXeon6140"
check "dump not replayed" 1 "hwloc did not replay this CPUID dump: it describes GenuineIntel family 6 model 85 stepping 4 on 72 PUs"
run $B/ctests/probe_summary "$tmp/skl/Intel-Skylake-2xXeon6140"
check "dump replayed" 0 "cpus=0-71 n=72 intel 6/85/4" "pmu=skx"
fi

# 3. XML that crashes hwloc 2.9 itself (lstopo too), a dump it frees twice
#    (lstopo aborts), and a dump it loops on.
run $AVAIL --topology $REG/core_without_complete_cpuset.xml
check "hwloc crash" 1 "hwloc could not read $REG/core_without_complete_cpuset.xml (it crashed on it" \
	"make one with 'lstopo-no-graphics --of xml' again"
unpack $REG/hwloc_double_free.dump "$tmp/dfree"
run $AVAIL --topology "$tmp/dfree"
if [ "$ARCH" = aarch64 ]; then check "hwloc double free, aarch64" 1 "$NO_REPLAY"; else
check "hwloc double free" 1 "hwloc could not read $tmp/dfree (it crashed on it" "make the directory with hwloc-gather-cpuid again"
fi
unpack $REG/hwloc_hangs.dump "$tmp/hangs"
run $AVAIL --topology "$tmp/hangs"
if [ "$ARCH" = aarch64 ]; then check "hwloc hang, aarch64" 1 "$NO_REPLAY"; else
check "hwloc hang" 1 "hwloc could not read $tmp/hangs (it did not finish in 10 s)"
fi

# 4. Long lines: a comment's tail is not a count; line numbers stay right.
run $RUN --source perf-stat:$PS/long_comment.csv --arch skx --metrics FP_OPS --json
check "long comment" 0 '"FP_OPS": 277'
run $RUN --source perf-stat:$PS/long_comment_bad.csv --arch skx
check "long comment, bad line" 125 "long_comment_bad.csv:8: not 'perf stat -x,' output"

# 5. Counts that are not whole numbers 0..2^64-1, shares outside 0..100.
for f in nan:nan inf:inf huge:1e400 negative:-3 fraction:3.5; do
	run $RUN --source perf-stat:$PS/bad_${f%%:*}.csv --arch skx
	check "count ${f#*:}" 125 "bad_${f%%:*}.csv:3: bad count '${f#*:}' for r5303c7; a count is a whole number"
done
run $RUN --source perf-stat:$PS/bad_share.csv --arch skx
check "running share" 125 "bad_share.csv:3: bad running share '-80.00'" "a percentage from 0 to 100"

# 6. A missing file: the open error, not "has none of the events".
run $RUN --source perf-stat:$tmp/none.csv --arch skx
check "missing file" 125 "$tmp/none.csv: cannot open: No such file or directory"

echo "test_bad_input: $pass passed, $fail failed"
[ $fail = 0 ]
