#!/bin/sh
# papi_flops_run and signals, as perf stat users expect: SIGINT/SIGTERM to
# the tool stop the program and the counts so far are reported, marked
# partial, exit 128+N; a job-control stop of the program stops it; a
# daemon the program leaves behind is not waited for, and keeps running
# untraced; a --region name that exists nowhere is an error.  Each under
# both trace engines where it concerns the tracer.
B=${B:-build}
RUN=$B/papi_flops_run
TD=$B/ctests/trace
. "$(dirname "$0")/testlib.sh"

# wait until FILE holds a line (the program's pid), at most 10 s
wait_file() { i=0; while [ ! -s "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; }

# the program's work for test 3: a few seconds in each engine
for engine in cache stop; do
	export PFLOPS_TRACE_ENGINE=$engine
	case $engine in cache) work=3000000000 ;; stop) work=400000 ;; esac
	# 1. SIGINT sent to the tool (not the terminal's: the program did not
	#    get it): passed on, the program ends, partial counts, exit 130
	rm -f "$tmp/pid"
	$RUN --source trace --json -o "$tmp/int.json" -- sh -c "echo \$\$ > $tmp/pid; exec $TD/calib_fp addsd 100000000000" \
		2>"$tmp/int.err" & tp=$!
	wait_file "$tmp/pid"; sleep 0.5
	t0=$(date +%s%N); kill -INT $tp; wait $tp; rc=$?; ms=$((($(date +%s%N) - t0) / 1000000))
	[ $rc = 130 ] && ok || bad "$engine: SIGINT: exit $rc, expected 130"
	#    promptly: the tracer's wait ends at the signal (the program
	#    would compute for a minute; the grace time is 2 s)
	[ $ms -lt 1500 ] && ok || bad "$engine: SIGINT: the tool ended $ms ms after it, not at once"
	[ "$(jq -r .partial "$tmp/int.json")" = true ] && [ "$(jq -r .interrupted "$tmp/int.json")" = SIGINT ] && ok ||
		bad "$engine: SIGINT: report not marked partial: $(cat "$tmp/int.json")"
	n=$(jq -r .metrics.DP_OPS "$tmp/int.json")
	[ "${n:-0}" -gt 0 ] 2>/dev/null && [ "$n" -lt 100000000000 ] && ok || bad "$engine: SIGINT: DP_OPS so far '$n'"
	jq -r '.notes[]?, .caveats[]?' "$tmp/int.json" | grep -q "interrupted by Interrupt: the program was given the signal and ended" && ok ||
		bad "$engine: SIGINT: no note on the interruption: $(cat "$tmp/int.json")"

	# 2. SIGTERM, and a program that ignores it: killed after the grace time, exit 143
	rm -f "$tmp/pid"
	$RUN --source trace -- sh -c "trap '' TERM; echo \$\$ > $tmp/pid; exec $TD/calib_fp addsd 100000000000" \
		2>"$tmp/term.err" & tp=$!
	wait_file "$tmp/pid"; sleep 0.3
	t0=$(date +%s%N); kill -TERM $tp; wait $tp; rc=$?; ms=$((($(date +%s%N) - t0) / 1000000))
	[ $rc = 143 ] && ok || bad "$engine: SIGTERM: exit $rc, expected 143"
	[ $ms -ge 2000 ] && [ $ms -lt 4000 ] && ok || bad "$engine: SIGTERM ignored: killed $ms ms after it, not after the 2 s grace"
	grep -q "^interrupted : by SIGTERM: the counts cover the run up to then (partial)" "$tmp/term.err" &&
		grep -q "stopped (SIGKILL) after the 2 s it was given to end" "$tmp/term.err" && ok ||
		bad "$engine: SIGTERM ignored: $(cat "$tmp/term.err")"

	# 3. a job-control stop of the program stops it (it was swallowed),
	#    SIGCONT resumes it, and the count stays exact
	rm -f "$tmp/pid"
	$RUN --source trace --json -o "$tmp/stop.json" -- sh -c "echo \$\$ > $tmp/pid; exec $TD/calib_fp addsd $work" \
		2>/dev/null & tp=$!
	wait_file "$tmp/pid"; pid=$(cat "$tmp/pid"); sleep 0.3
	kill -STOP "$pid"; sleep 0.3
	t1=$(awk '{print $14}' /proc/$pid/stat); state=$(awk '{print $3}' /proc/$pid/stat)
	sleep 0.5
	t2=$(awk '{print $14}' /proc/$pid/stat)
	case "$state" in t|T) [ "$t1" = "$t2" ] && ok || bad "$engine: SIGSTOP: the program ran on while stopped ($t1 -> $t2 ticks)" ;;
	*) bad "$engine: SIGSTOP: the program is in state '$state', not stopped" ;; esac
	kill -CONT "$pid"; wait $tp; rc=$?
	[ $rc = 0 ] && [ "$(jq -r .metrics.DP_OPS "$tmp/stop.json")" = $work ] && ok ||
		bad "$engine: after SIGSTOP/SIGCONT: exit $rc, DP_OPS $(jq -r .metrics.DP_OPS "$tmp/stop.json" 2>&1)"

	# 4. a daemon left behind: not waited for, counted until the program
	#    ended, detached, and it runs on correctly without the tracer
	rm -f "$tmp/fifo" "$tmp/out"; mkfifo "$tmp/fifo"
	timeout 30 $RUN --source trace --json -o "$tmp/d.json" -- $TD/calib_daemon "$tmp/fifo" "$tmp/out" >/dev/null 2>"$tmp/d.err"; rc=$?
	[ $rc = 0 ] && ok || bad "$engine: daemon: the tool waited for it or failed (exit $rc): $(cat "$tmp/d.err")"
	[ "$(jq -r .metrics.FP_OPS "$tmp/d.json")" = 1000 ] && ok || bad "$engine: daemon: FP_OPS $(jq -r .metrics.FP_OPS "$tmp/d.json")"
	jq -r '.notes[]?, .caveats[]?' "$tmp/d.json" | grep -q "1 process (pid [0-9]* ...) still ran when the program ended: counted until then, then detached and not waited for" &&
		ok || bad "$engine: daemon: no note: $(cat "$tmp/d.json")"
	[ ! -e "$tmp/out" ] && ok || bad "$engine: daemon finished before it was told to"
	timeout 10 sh -c "echo go > $tmp/fifo"
	i=0; while [ ! -s "$tmp/out" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	# 1.0000001^1e6 with 1e-9 added each time, computed natively
	[ "$(cat "$tmp/out" 2>/dev/null)" = "$(awk 'BEGIN{x=1; for(i=0;i<1000000;i++) x=x*1.0000001+1e-9; printf "%.6f", x}')" ] && ok ||
		bad "$engine: the detached daemon did not finish its work correctly: '$(cat "$tmp/out" 2>/dev/null)'"
done
unset PFLOPS_TRACE_ENGINE

# 5. the progress line (stderr a terminal: script(1)'s) while the program
#    computes for a second or more in the code cache without a stop: one
#    every 500 ms, its FLOPs growing (FLOPs only: the copies of blocks
#    without FP count nothing, PFLOPS_TRACE_COUNT)
script -qec "$RUN --source trace -o /dev/null -- $TD/calib_fp addsd 3000000000" /dev/null >"$tmp/tty.out" 2>&1; rc=$?
tr '\r' '\n' <"$tmp/tty.out" | sed -n 's/^papi_flops_run: traced \([0-9]*\) FLOPs so far.*/\1/p' >"$tmp/lines"
n=$(wc -l <"$tmp/lines")
[ $rc = 0 ] && [ "$n" -ge 2 ] && sort -n -c "$tmp/lines" && [ "$(tail -n 1 "$tmp/lines")" -gt "$(head -n 1 "$tmp/lines")" ] && ok ||
	bad "progress: exit $rc, $n lines: $(tr '\r' '\n' <"$tmp/tty.out" | head -5)"

# 6. --region: a name that exists nowhere is an error; one never called is 0 with a note
out=$($RUN --source trace --region no_such_fn -- $TD/calib_fp addsd 1000 2>&1); rc=$?
[ $rc = 125 ] && echo "$out" | grep -q "\-\-region no_such_fn: no function of that name in .*calib_fp or the libraries it loaded" &&
	! echo "$out" | grep -q "FP_OPS" && ok || bad "--region no_such_fn: rc=$rc $out"
# calib_helper: 10 vmulpd xmm per calib_kernel call, two calls: 40 DP FLOPs
$RUN --source trace --json -o "$tmp/r.json" --region calib_helper -- $TD/calib_region 10 >/dev/null 2>&1; rc=$?
[ $rc = 0 ] && [ "$(jq -r .metrics.DP_OPS "$tmp/r.json")" = 40 ] && ok || bad "--region calib_helper: rc=$rc $(cat "$tmp/r.json")"

echo "test_signals: $pass passed, $fail failed"
[ $fail = 0 ]
