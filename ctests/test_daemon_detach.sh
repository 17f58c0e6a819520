#!/bin/sh
# A daemon the traced program leaves behind survives the tracer letting
# it go (issue 20 item 8): 20 runs per engine of calib_daemon in its spin
# mode, whose daemon is stopped at an int3 of the tracer (or has its
# SIGTRAP queued) about when the program ends.  Each daemon must then
# finish its work; before the fix about 4 in 10 died of SIGTRAP.
# About 1 s a run here; the limits are far above that (a run's tracer 120
# s, the FIFO's writer and the wait for OUT 60 s each): under a load of 20
# and more on 2 CPUs, with ASan, every ptrace round trip waits for the
# scheduler, and a CI run saw a tracer take over 30 s and a daemon not
# open the FIFO within 5 s, though both were right.  Then a daemon left in
# vfork (calib_fork vforkheld), 3 runs per engine.
B=${B:-build}
RUN=${RUN:-$B/papi_flops_run}
TD=$B/ctests/trace
N=${PF_DAEMON_RUNS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
want=$(awk 'BEGIN{x=1; for(i=0;i<1000000;i++) x=x*1.0000001+1e-9; printf "%.6f", x}')
for engine in cache stop; do
	good=0
	for i in $(seq "$N"); do
		rm -f "$tmp/fifo" "$tmp/out"; mkfifo "$tmp/fifo"
		PFLOPS_TRACE_ENGINE=$engine timeout 120 $RUN --source trace -o /dev/null -- \
			$TD/calib_daemon "$tmp/fifo" "$tmp/out" spin >/dev/null 2>"$tmp/err"; rc=$?
		# the daemon spins 0.3 s, then waits for the FIFO (a dead one
		# never opens it: the writer gives up after 60 s)
		timeout 60 sh -c "echo go > $tmp/fifo" 2>/dev/null
		j=0; while [ ! -s "$tmp/out" ] && [ $j -lt 600 ]; do sleep 0.1; j=$((j + 1)); done
		if [ $rc = 0 ] && [ "$(cat "$tmp/out" 2>/dev/null)" = "$want" ]; then
			good=$((good + 1))
		else
			echo "$engine: run $i: exit $rc, daemon wrote '$(cat "$tmp/out" 2>/dev/null)': $(cat "$tmp/err")"
		fi
	done
	if [ $good = "$N" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL: $engine: $good of $N detached daemons finished their work"
	fi
done
# A daemon left in vfork, its traced child asleep before its exec: the
# parent cannot stop until the child has exec'd, so the child must be let
# go first (before the fix the tracer waited for the parent's stop for
# ever, the child held stopped: killed here by timeout).  The daemon then
# writes "done" once its child has run.
for engine in cache stop; do
	good=0
	for i in 1 2 3; do
		rm -f "$tmp/out"
		PFLOPS_TRACE_ENGINE=$engine timeout -k 2 60 $RUN --source trace -o /dev/null -- \
			$B/ctests/trace/calib_fork vforkheld 1000 "$tmp/out" 2>"$tmp/err"; rc=$?
		j=0; while [ ! -s "$tmp/out" ] && [ $j -lt 300 ]; do sleep 0.1; j=$((j + 1)); done
		if [ $rc = 0 ] && [ "$(cat "$tmp/out" 2>/dev/null)" = done ]; then
			good=$((good + 1))
		else
			echo "$engine: vforkheld run $i: exit $rc (0), daemon wrote '$(cat "$tmp/out" 2>/dev/null)' (done): $(cat "$tmp/err")"
		fi
	done
	if [ $good = 3 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL: $engine: a daemon in vfork let go in $good of 3 runs"
	fi
done
echo "test_daemon_detach: $pass passed, $fail failed"
[ $fail = 0 ]
