#!/bin/sh
# The code cache's translation requests through a futex (trace_freq.c;
# by default only in a process while it has one thread): the trace tests
# run again with PFLOPS_TRACE_FUTEX=1, requests in every process, threads
# included; every count must be the stopping engine's and the program's
# own either way (docs/trace-engine.md, "Requests through a futex").
B=${B:-build}
. "$(dirname "$0")/testlib.sh"

for t in test_trace test_trace_sys test_trace_hints test_funcs; do
	PFLOPS_TRACE_FUTEX=1 ./$B/ctests/$t >"$tmp/$t.log" 2>&1 && ok ||
		{ grep -E '^\[ *(ERROR|LINE) *\]' "$tmp/$t.log"; grep -v '^\[ *OK\|^\[ RUN\|^SKIP' "$tmp/$t.log" | tail -20
		  bad "$t with PFLOPS_TRACE_FUTEX=1"; }
done
echo "test_trace_futex: $pass passed, $fail failed"
[ $fail = 0 ]
