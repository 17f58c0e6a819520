#!/bin/sh
# The code cache under a ulimit -v (RLIMIT_AS; issue 20 item 9): it takes
# at most 1/8 of the limit, the report says how much it took, and where
# 1/8 holds no cache the process is traced by the stopping engine, with a
# note, and counted the same.  The limit is set on the program only (the
# tool may be an ASan build, which needs more address space).
B=${B:-build}
RUN=$B/papi_flops_run
TD=$B/ctests/trace
. "$(dirname "$0")/testlib.sh"
notes() { jq -r '.notes[]?, .caveats[]?' "$1"; }

# 1. 1 GiB: the program keeps at least 7/8 of what it gets natively
#    (it lost 512 MiB of 1 GiB before), and the report says what the cache took
native=$(sh -c "ulimit -v 1048576; exec $TD/calib_alloc")
traced=$($RUN --source trace --json -o "$tmp/a.json" -- sh -c "ulimit -v 1048576; exec $TD/calib_alloc" 2>"$tmp/err"); rc=$?
[ $rc = 0 ] && [ -n "$native" ] && [ -n "$traced" ] && [ $((traced * 8)) -ge $((native * 7)) ] && ok ||
	bad "1 GiB: the traced program got $traced MiB, natively $native MiB (rc=$rc): $(cat "$tmp/err")"
notes "$tmp/a.json" | grep -q "^the code cache took [0-9]* MiB of the program's address space (virtual memory; its ulimit -v is 1024 MiB, of which the cache takes at most 1/8)" &&
	ok || bad "1 GiB: no note of the cache's address space: $(notes "$tmp/a.json")"
# (the cost of this note: one line, the figure)
took=$(notes "$tmp/a.json" | sed -n 's/^the code cache took \([0-9]*\) MiB.*ulimit -v is 1024 MiB.*/\1/p')
[ -n "$took" ] && [ "$took" -le 128 ] && ok || bad "1 GiB: the cache took '$took' MiB, more than 1/8 of the limit"

# 2. no limit: the cost is said too
$RUN --source trace --json -o "$tmp/u.json" -- $TD/calib_fp addsd 1000 >/dev/null 2>"$tmp/err"
notes "$tmp/u.json" | grep -q "^the code cache took [0-9]* MiB of the program's address space (virtual memory, not RAM; under a ulimit -v it takes at most 1/8 of the limit)" &&
	ok || bad "no limit: no note of the cache's address space: $(notes "$tmp/u.json")"
want=$(jq -r .metrics.FP_OPS "$tmp/u.json")

# 3. 32 MiB: 1/8 holds no cache: the stopping engine, said, same counts
$RUN --source trace --json -o "$tmp/s.json" -- sh -c "ulimit -v 32768; exec $TD/calib_fp addsd 1000" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 0 ] && [ "$(jq -r .metrics.FP_OPS "$tmp/s.json")" = "$want" ] && [ -n "$want" ] && ok ||
	bad "32 MiB: rc=$rc FP_OPS $(jq -r .metrics.FP_OPS "$tmp/s.json"), $want unlimited: $(cat "$tmp/err")"
notes "$tmp/s.json" | grep -q "^1 process was traced by the stopping engine (same counts, a stop per block: slower): 1/8 of a ulimit -v of 32 MiB is too small for the code cache" &&
	ok || bad "32 MiB: no note of the stopping engine: $(notes "$tmp/s.json")"

echo "test_trace_aslimit: $pass passed, $fail failed"
[ $fail = 0 ]
