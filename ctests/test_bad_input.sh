#!/bin/sh
# Every bad input issues 13 and 20 found, through the tools a user runs: a
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
. "$(dirname "$0")/testlib.sh"

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

# Issue 20.  A hang shows as exit 124 (timeout), never as a pass.
T="timeout 20"
mkfifo "$tmp/fifo" && mkdir -p "$tmp/dir" && truncate -s 2G "$tmp/sparse"
printf '# only comments\n\n# no pmu block\n' > "$tmp/comments.pft"

# 1. Regular files only: a FIFO nobody writes, a directory, a device;
#    never a wait on the FIFO (it blocked PAPI_library_init).
for f in fifo:"a FIFO (named pipe)" dir:"a directory" /dev/null:"a character device"; do
	path=${f%%:*}; [ "${path#/}" = "$path" ] && path=$tmp/$path
	run env PAPI_FLOPS_TABLE=$path $T $AVAIL --arch all
	check "table ${f%%:*}" 1 "$path: ${f#*:}, not a regular file; formula tables are read from regular files only"
	run $T $AVAIL --topology $path
	case $f in dir:*) check "topology dir" 1 "$path: not a CPUID dump";;
	*) check "topology ${f%%:*}" 1 "$path: ${f#*:}, not a regular file; topology XML files are read from regular files only";; esac
done
mkdir -p "$tmp/fifodump" && printf 'Architecture: x86\n' > "$tmp/fifodump/hwloc-cpuid-info" && mkfifo "$tmp/fifodump/pu0"
run $T $AVAIL --topology "$tmp/fifodump"
check "CPUID dump with a FIFO" 1 "$tmp/fifodump/pu0: a FIFO (named pipe), not a regular file; CPUID dump files are read"
if [ -f "$B/papi/.built" ]; then
	run env PAPI_FLOPS_TABLE=$tmp/fifo $T $P/utils/papi_component_avail
	check "FIFO table, PAPI" 0 "Disabled: formula table: $tmp/fifo: a FIFO (named pipe), not a regular file"
fi

for f in fifo:"a FIFO (named pipe)" dir:"a directory" /dev/zero:"a character device"; do
	path=${f%%:*}; [ "${path#/}" = "$path" ] && path=$tmp/$path
	run $T $RUN --source perf-stat:$path --arch skx
	check "perf-stat ${f%%:*}" 125 "$path: ${f#*:}, not a regular file; perf-stat files are read from regular files only"
done

# 2. A size cap, named with the file: /dev/zero is refused as a device
#    (above), a 2 GB sparse file by its size.
run env PAPI_FLOPS_TABLE=$tmp/sparse $T $AVAIL --arch all
check "2 GB table" 1 "$tmp/sparse: 2147483648 bytes, over the 16 MiB limit for formula tables"
run $T $AVAIL --topology "$tmp/sparse"
check "2 GB topology" 1 "$tmp/sparse: 2147483648 bytes, over the 64 MiB limit for topology XML files"

run $T $RUN --source perf-stat:$tmp/sparse --arch skx
check "2 GB perf-stat file" 125 "$tmp/sparse: 2147483648 bytes, over the 256 MiB limit for perf-stat files"

# 5. perf-stat: counts as written (2^64-1, 2^53+1 and a sum over it, not
#    through a double); thousands separators, an event on two lines, a
#    duration no run has: refused with the lines; --seconds bounded.
run $RUN --source perf-stat:$PS/exact_u64.csv --arch zen4 --json
check "2^64-1, 2^53+1 exact" 0 '"FP_OPS": 18446744073709551615' '"BF16_OPS": 9007199254740993'
run $RUN --source perf-stat:$PS/exact_u64.csv --arch zen4 -m FP_OPS
check "2^64-1 text" 0 "FP_OPS    18,446,744,073,709,551,615 FLOP"
run $RUN --source perf-stat:$PS/exact_sum.csv --arch skx -m DP_OPS --csv
check "2^53+1 summed" 0 "DP_OPS,9007199254740995,FLOP"
run $RUN --source perf-stat:$PS/bad_grouped.csv --arch zen4
check "thousands separators" 125 "bad_grouped.csv:2: a count with thousands separators ('1,234...'); perf stat -x, never writes them (it turns --big-num off)"
run $RUN --source perf-stat:$PS/bad_twice.csv --arch skx
check "event twice" 125 "bad_twice.csv:4: r5303c7:k is the event of line 2 (r5303c7:u) again"
run $RUN --source perf-stat:$PS/bad_duration.csv --arch skx
check "duration 1e308 ns" 125 "bad_duration.csv:3: duration_time '1e308 ns' is no run's wall time"
for v in inf nan -1 0 1e308; do
	run $RUN --source perf-stat:$PS/skx_merged.csv --arch skx --seconds $v
	check "--seconds $v" 2 "--seconds takes the run's wall time in seconds, a number above 0 and at most 315576000 (10 years) (got '$v')"
done

# 6. An empty table or table list: the file named, not "unknown CPU";
#    PAPI_FLOPS_PMU empty or naming a PMU twice: the component disabled.
run env PAPI_FLOPS_TABLE=$tmp/comments.pft $T $AVAIL
check "comments-only table" 1 "$tmp/comments.pft: no PMU block in it (only comments or blank lines)"
for v in : "::" "$tmp/comments.pft:"; do
	run env PAPI_FLOPS_TABLE="$v" $T $AVAIL
	check "PAPI_FLOPS_TABLE='$v'" 1 "PAPI_FLOPS_TABLE='$v' has an empty file name, so no PMU block would be read"
done
if [ -f "$B/papi/.built" ]; then
	run env PAPI_FLOPS_TABLE=: $T $P/utils/papi_component_avail
	check "PAPI_FLOPS_TABLE=:, PAPI" 0 "Disabled: formula table: PAPI_FLOPS_TABLE=':' has an empty file name"
	for v in , zen4, ,zen4; do
		run env PAPI_FLOPS_PMU=$v $T $P/utils/papi_component_avail
		check "PAPI_FLOPS_PMU=$v" 0 "Disabled: PAPI_FLOPS_PMU='$v' has an empty PMU name"
	done
	run env PAPI_FLOPS_PMU=zen4,amd64_fam19h_zen4 $T $P/utils/papi_component_avail
	check "PAPI_FLOPS_PMU twice" 0 "Disabled: PAPI_FLOPS_PMU names amd64_fam19h_zen4 twice (as 'amd64_fam19h_zen4' the second time), which would count its FLOPs twice"
	run env PAPI_FLOPS_PMU=zen4,zen5 $T $P/utils/papi_component_avail
	echo "$out" | grep -A1 "^Name: *flops" | grep -q "PAPI_FLOPS_PMU" && bad "zen4,zen5 refused: $out" || ok
fi

# 7. Write errors: every tool's output to a full device ends non-zero
#    with "TOOL: write error: FILE: REASON" (was exit 0 in silence).
full() { out=$("$@" 2>&1 >/dev/full); rc=$?; }
FULL="write error: standard output: No space left on device"
full $AVAIL; check "avail > /dev/full" 1 "papi_flops_avail: $FULL"
full $AVAIL --arch skx --perf; check "avail --perf > /dev/full" 1 "papi_flops_avail: $FULL"
full $AVAIL --arch all --json; check "avail --json > /dev/full" 1 "papi_flops_avail: $FULL"
full $AVAIL --help; check "avail --help > /dev/full" 1 "papi_flops_avail: $FULL"
full $RUN --version; check "run --version > /dev/full" 125 "papi_flops_run: $FULL"
run $RUN --source perf-stat:$PS/skx_merged.csv --arch skx -o /dev/full
check "run -o /dev/full" 125 "papi_flops_run: write error: /dev/full: No space left on device"
run sh -c "$RUN --source perf-stat:$PS/skx_merged.csv --arch skx --json 2>/dev/full"
check "run report > /dev/full" 125
CHK="$B/papi_flops_check --iterations 10 --runs 1"
if [ "$ARCH" = aarch64 ]; then	# it checks nothing there: x86-64 kernels
	echo "SKIP: test_bad_input: papi_flops_check > /dev/full: the calibration kernels are x86-64 only"
else
	full $CHK --json; check "check --json > /dev/full" 1 "papi_flops_check: $FULL"
	full $CHK; check "check > /dev/full" 1 "papi_flops_check: $FULL"
	run $CHK --markdown /dev/full
	check "check --markdown /dev/full" 1 "papi_flops_check: write error: /dev/full: No space left on device"
fi

echo "test_bad_input: $pass passed, $fail failed"
[ $fail = 0 ]
