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

# 4. a program that lowers its own ulimit -v below what its cache took
#    (1 GiB of counter slots, made before the limit), then allocates and
#    forks (a shell's `ulimit -v` then $(...)): the cache gives back the
#    slots no thread holds, so the program and its fork keep about what
#    they get natively (before 2026-11-28: malloc failed at once, and the
#    fork ended the run with an error naming PFLOPS_TRACE_IDS=65536)
native=$($TD/calib_alloc limit 1024 fork | tr '\n' ' ')
$RUN --source trace --json -o "$tmp/l.json" -- $TD/calib_alloc limit 1024 fork >"$tmp/lo" 2>"$tmp/err"; rc=$?
traced=$(tr '\n' ' ' <"$tmp/lo")
set -- $native
nc=${1:-0} np=${2:-0}
set -- $traced
tc=${1:-0} tp=${2:-0}
[ $rc = 0 ] && [ $nc -gt 500 ] && [ $np -gt 500 ] && [ $((tc * 8)) -ge $((nc * 7)) ] && [ $((tp * 8)) -ge $((np * 7)) ] &&
	[ "$(jq -r .engine.name "$tmp/l.json")" = cache ] && ok ||
	bad "own 1 GiB limit: child and parent got '$traced' MiB traced, '$native' natively (rc=$rc, engine $(jq -r .engine.name "$tmp/l.json" 2>&1)): $(cat "$tmp/err")"
notes "$tmp/l.json" | grep -q "^the program lowered its own ulimit -v while traced (1 time): the code cache then gave back the address space of the thread slots no thread held" &&
	ok || bad "own 1 GiB limit: no note of the cache made smaller: $(notes "$tmp/l.json")"
# under --region the lowering runs outside the function, unseen: the
# fork's child is fitted at its start, the parent at its first entry
# (before: the same error, then 'no code-cache memory near it')
$RUN --source trace --region grab --json -o "$tmp/r.json" -- $TD/calib_alloc limit 1024 fork >"$tmp/lo" 2>"$tmp/err"; rc=$?
traced=$(tr '\n' ' ' <"$tmp/lo")
set -- $traced
tc=${1:-0} tp=${2:-0}
[ $rc = 0 ] && [ $((tc * 8)) -ge $((nc * 7)) ] && [ $((tp * 8)) -ge $((np * 7)) ] &&
	notes "$tmp/r.json" | grep -q "^the program lowered its own ulimit -v while traced (2 times)" && ok ||
	bad "own 1 GiB limit, --region grab: got '$traced' MiB traced, '$native' natively (rc=$rc): $(cat "$tmp/err") $(notes "$tmp/r.json" 2>&1)"
if ! bash -c 'x=$(echo hi); echo $x' >/dev/null 2>&1; then
	echo "SKIP: test_trace_aslimit 4 (bash): no bash"
else
	$RUN --source trace --json -o "$tmp/j.json" -- bash -c 'ulimit -v 1048576; x=$(echo hi); echo $x' >"$tmp/o" 2>"$tmp/err"; rc=$?
	[ $rc = 0 ] && [ "$(jq -r .engine.name "$tmp/j.json")" = cache ] && grep -qx hi "$tmp/o" && ok ||
		bad "shell's own 1 GiB limit: rc $rc '$(cat "$tmp/o")' $(jq -c .engine.name "$tmp/j.json" 2>&1): $(cat "$tmp/err")"
fi

echo "test_trace_aslimit: $pass passed, $fail failed"
[ $fail = 0 ]
