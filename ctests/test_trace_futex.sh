#!/bin/sh
# The code cache's translation requests through a futex are on by default
# (trace_freq.c); the trace tests run again with them off
# (PFLOPS_TRACE_FUTEX=0), so that the int3 path they replace, which the
# attach path, seccomp and masked copies still take, stays covered
# everywhere: every count must be the stopping engine's and the
# program's own either way (docs/trace-engine.md, "Requests through a
# futex").
B=${B:-build}
. "$(dirname "$0")/testlib.sh"

for t in test_trace test_trace_sys test_trace_hints test_funcs; do
	PFLOPS_TRACE_FUTEX=0 ./$B/ctests/$t >"$tmp/$t.log" 2>&1 && ok ||
		{ grep -v '^\[ *OK\|^\[ RUN\|^SKIP' "$tmp/$t.log" | tail -20; bad "$t with PFLOPS_TRACE_FUTEX=0"; }
done
echo "test_trace_futex: $pass passed, $fail failed"
[ $fail = 0 ]
