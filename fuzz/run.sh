#!/bin/sh
# Run one fuzz harness: every regression input once (each must pass),
# then libFuzzer for SECONDS on the seed corpora (fixtures of the
# repository).  New inputs go to $B/fuzz/corpus/NAME, crashes to
# $B/fuzz/crashes/NAME/ (never into the repository).
# usage: fuzz/run.sh NAME SECONDS     (B: the fuzz build, default build-fuzz)
set -u
B=${B:-build-fuzz}
name=$1 secs=$2
bin=$B/fuzz/fuzz_$name
[ -x "$bin" ] || { echo "fuzz/run.sh: $bin not built (make fuzz-build)"; exit 1; }
work=$B/fuzz/corpus/$name seeds=$B/fuzz/seeds/$name crashes=$B/fuzz/crashes/$name
rm -rf "$seeds" && mkdir -p "$work" "$seeds" "$crashes"

# Seeds and regression inputs, per harness.
regress=""
[ -d fuzz/regress/$name ] && regress="fuzz/regress/$name/*"
case $name in
table)
	maxlen=16384
	cp presets/*.pft "$seeds"/
	regress="$regress ctests/fixtures/broken/*.pft" ;;
formula)
	maxlen=1024
	# every formula of the table, one file each
	sed -n 's/^ *metric [A-Z0-9_]* [a-z-]* = //p' presets/*.pft | sort -u |
		awk -v d="$seeds" '{ f = d "/f" NR; printf "%s", $0 > f; close(f) }' ;;
perfstat)
	maxlen=8192
	cp ctests/fixtures/perfstat/*.csv "$seeds"/
	regress="$regress ctests/fixtures/perfstat/*.csv" ;;
topology)
	maxlen=65536
	for x in ctests/fixtures/topologies/*.xml; do
		[ "$(wc -c < "$x")" -le $maxlen ] && cp "$x" "$seeds"/
	done
	# CPUID dumps, their first 4 PUs, packed as fuzz_topology.c reads them
	t=$(mktemp -d)
	for a in ctests/fixtures/topologies/*.tar.bz2; do
		n=$(basename "$a" .tar.bz2)
		tar -C "$t" -xjf "$a"
		d=$(dirname "$(find "$t/$n" -name hwloc-cpuid-info | head -n 1)")
		{ cat "$d/hwloc-cpuid-info"; for i in 0 1 2 3; do printf '\n====\n'; cat "$d/pu$i"; done; } > "$seeds/$n.dump"
	done
	rm -rf "$t" ;;
elf)
	maxlen=65536
	# real binaries, small: the calibration library and a freestanding
	# program, compiled here (the system's cc) and stripped
	cc=${SEED_CC:-cc}
	$cc -O2 -fPIC -shared ctests/trace/calib_kernel.c -o "$seeds/libcalibk.so" &&
		$cc -O2 -fPIC -shared ctests/trace/calib_entry.c -o "$seeds/libcalibe.so" &&
		$cc -O2 -ffreestanding -fno-builtin -fno-stack-protector -fno-pie -no-pie -nostdlib -static \
			-Ictests/trace -Icomponents/flops/core ctests/trace/calib_fp.c -o "$seeds/calib_fp" ||
		{ echo "fuzz/run.sh: cannot compile the ELF seeds with $cc"; exit 1; }
	cp "$seeds/calib_fp" "$seeds/calib_fp_stripped" && strip --strip-all "$seeds/calib_fp_stripped"
	for f in "$seeds"/lib*.so "$seeds/calib_fp"; do strip --strip-debug "$f"; done ;;
hints)
	maxlen=4096
	cp fuzz/seeds/hints/* "$seeds"/ ;;
event_name)
	maxlen=512
	cp fuzz/seeds/event_name/* "$seeds"/ ;;
report)
	maxlen=65536
	cp ctests/fixtures/reports/*.json "$seeds"/ ;;
*)
	echo "fuzz/run.sh: unknown harness '$name'"; exit 1 ;;
esac

log=$B/fuzz/$name.log
if [ -n "$regress" ]; then
	# shellcheck disable=SC2086
	if ! "$bin" $regress > "$log" 2>&1; then
		tail -30 "$log"; echo "FAILED: fuzz $name: a regression input (log: $log)"; exit 1
	fi
	nreg=$(echo $regress | wc -w)
else
	nreg=0
fi
if ! "$bin" -max_total_time="$secs" -max_len=$maxlen -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
	-artifact_prefix="$crashes/" "$work" "$seeds" > "$log" 2>&1; then
	tail -40 "$log"; echo "FAILED: fuzz $name: input saved in $crashes/ (log: $log)"; exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
echo "fuzz $name: $nreg regression inputs pass; ${runs:-?} runs in ${secs}s, no crash"
