#!/bin/sh
# make bench: user-space instructions per read (callgrind), flops engine
# read path vs the floor any perf_event component pays for the same group.
B=${B:-build}
N=2000
command -v valgrind >/dev/null || { echo "bench_read: valgrind not installed (apt-get install valgrind)"; exit 1; }
ir() {
	f=$(mktemp)
	valgrind --tool=callgrind --callgrind-out-file="$f" --toggle-collect="$2" "$B/bench_read" "$1" $N >/dev/null 2>&1 || { rm -f "$f"; echo 0; return; }
	sed -n 's/^summary: *//p;s/^totals: *//p' "$f" | head -n 1
	rm -f "$f"
}
e=$(ir engine bench_engine_read)
f=$(ir floor bench_floor_read)
[ "$e" -gt 0 ] && [ "$f" -gt 0 ] || { echo "bench_read: callgrind run failed"; exit 1; }
awk -v e="$e" -v f="$f" -v n=$N 'BEGIN {
	printf "read of a 5-counter flops group (user-space instructions per read, callgrind):\n";
	printf "  flops engine (read + scale + kinds + weights): %8.1f\n", e / n;
	printf "  floor (one read() + copy, any perf_event path): %8.1f\n", f / n;
	printf "  ratio engine/floor: %.2f\n", e / f }'
