#!/bin/sh
# The flops component's trace sources (PAPI_FLOPS_SOURCE=trace and
# model:PMU) in the libpapi that `make` built, through PAPI's public API
# (flops_trace_test) and utilities, and papi_flops_run --pid, the same
# attach from outside.  Exit 77 when libpapi was not built or ptrace is
# not allowed here.
B=${B:-build}
P=$B/papi/src
T=$B/flops_trace_test
RUN=$B/papi_flops_run
[ -f "$B/papi/.built" ] && [ -x "$T" ] && [ -x "$RUN" ] || { echo "skip: libpapi with flops not built"; exit 77; }
$RUN -q -s trace -- true 2>/dev/null || { echo "SKIP: papi_trace.sh: ptrace is not allowed here ($RUN -s trace -- true fails)"; exit 77; }
export LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PAPI_FLOPS_TRACER=$RUN
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# make check-asan builds the test program with ASan: its LeakSanitizer
# stops threads with ptrace at exit, which a traced program does not allow
# (it would wait for ever: the component detaches at exit only a process
# down to one thread; papi_flops_run never does), and its SEGV
# handler would turn the crash test's signal into an exit status.
NOLEAK="ASAN_OPTIONS=detect_leaks=0:handle_segv=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
out=$(mktemp) && err=$(mktemp) && trap 'rm -f "$out" "$err"' EXIT

# A helper tracing process $1 runs (its command line, from /proc).
helper_of() {
	for d in /proc/[0-9]*; do
		{ tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null | grep -q -- "--pid $1 --papi-fd" && return 0
	done
	return 1
}
# The helper of process $1 is gone within 3 s (it ends with the process).
helper_gone() {
	for i in 1 2 3 4 5 6; do
		helper_of "$1" || return 0
		sleep 0.5
	done
	return 1
}

# The source is visible: component description, event descriptions.
PAPI_FLOPS_SOURCE=trace $P/utils/papi_component_avail > "$out" 2>&1
sed -n '/^Active components/,$p' "$out" | grep '^Name: *flops' | grep -q 'PAPI_FLOPS_SOURCE=trace' &&
	echo "ok:   papi_component_avail: flops active, described as the trace source" ||
	{ bad "papi_component_avail: flops not active under PAPI_FLOPS_SOURCE=trace"; cat "$out"; }
PAPI_FLOPS_SOURCE=trace $P/utils/papi_native_avail -e flops:::DP_OPS > "$out" 2>&1
tr -d '|\n ' < "$out" | grep -q 'Sourcetrace(PAPI_FLOPS_SOURCE=trace).*\[exact\]' &&
	echo "ok:   papi_native_avail: DP_OPS names the trace source and its class [exact]" ||
	{ bad "papi_native_avail: no source or class in DP_OPS"; cat "$out"; }
PAPI_FLOPS_SOURCE=model:skx $P/utils/papi_native_avail -e flops:::DP_OPS > "$out" 2>&1
tr -d '|\n ' < "$out" | grep -q 'model:skx.*\[masked-full\]' &&
	echo "ok:   papi_native_avail: under model:skx DP_OPS names the model and skx's class [masked-full]" ||
	{ bad "papi_native_avail: model:skx not described"; cat "$out"; }
PAPI_FLOPS_SOURCE=bogus $P/utils/papi_component_avail > "$out" 2>&1
grep -A1 '^Name: *flops' "$out" | grep -q 'PAPI_FLOPS_SOURCE=bogus is no source' &&
	echo "ok:   PAPI_FLOPS_SOURCE=bogus: disabled, the reason names the values" ||
	{ bad "PAPI_FLOPS_SOURCE=bogus not refused with its reason"; cat "$out"; }
PAPI_FLOPS_SOURCE=model:nope $P/utils/papi_component_avail > "$out" 2>&1
grep -A1 '^Name: *flops' "$out" | grep -q "no PMU 'nope'" &&
	echo "ok:   PAPI_FLOPS_SOURCE=model:nope: disabled, no such PMU" || { bad "model:nope not refused"; cat "$out"; }
# Without counters the default source says how to count anyway.
env -u PAPI_FLOPS_SOURCE $P/utils/papi_component_avail > "$out" 2>&1
if grep -A1 '^Name: *flops' "$out" | grep -q 'counting impossible'; then
	grep -A1 '^Name: *flops' "$out" | grep -q 'PAPI_FLOPS_SOURCE=trace' &&
		echo "ok:   no counters, source hw: the disabled reason names PAPI_FLOPS_SOURCE=trace" ||
		{ bad "the no-counter reason does not name PAPI_FLOPS_SOURCE=trace"; cat "$out"; }
fi

# Exact counts of known loops through PAPI_read/reset/accum/stop, threads,
# fork+exec, PAPI_shutdown, a timer signal while the helper starts, a
# futex wait the kernel restarts.
for c in exact threads fork shutdown shutdown-threads reinit preset itimer restart; do
	# shutdown-threads, reinit: PAPI_shutdown frees only the calling
	# thread's event sets (PAPI 7.0 by design: the others' are still
	# running), which LeakSanitizer reports under make check-asan; what
	# these check is no crash, untraced after, and an exact count
	leak=; case $c in shutdown-threads | reinit) leak=$NOLEAK ;; esac
	env $leak PAPI_FLOPS_SOURCE=trace timeout 120 $T $c > "$out" 2>&1
	rc=$?
	grep -E '^(FAIL|SKIP|note)' "$out"
	if [ $rc != 0 ]; then
		bad "flops_trace_test $c exit $rc"; cat "$out"
	else
		echo "ok:   flops_trace_test $c: $(grep -c '^ok' "$out") checks"
	fi
done

# JIT code rewritten while counting, with few block ids (PFLOPS_TRACE_IDS,
# read by the helper): ids of dropped code are reused, their counts move
# into what the threads read themselves; reads exact along the way.
env PFLOPS_TRACE_IDS=8192 PAPI_FLOPS_SOURCE=trace timeout 300 $T jit 20000 > "$out" 2>&1
rc=$?
grep -E '^(FAIL|SKIP|note)' "$out"
[ $rc = 0 ] && echo "ok:   flops_trace_test jit: $(grep -c '^ok' "$out") checks" || { bad "flops_trace_test jit exit $rc"; cat "$out"; }

# PAPI_overflow every P exact FLOPs, at the instruction (flops_trace_ovf_test).
O=$B/flops_trace_ovf_test
for c in loop threads together storm refuse; do
	PAPI_FLOPS_SOURCE=trace timeout 120 $O $c > "$out" 2>&1
	rc=$?
	grep -E '^(FAIL|SKIP)' "$out"
	[ $rc = 0 ] && echo "ok:   flops_trace_ovf_test $c: $(grep -c '^ok' "$out") checks" ||
		{ bad "flops_trace_ovf_test $c exit $rc"; cat "$out"; }
done
grep -q "^PAPI flops component: PAPI_overflow on flops:::SCALED refused: a status event" "$out" ||
	bad "trace overflow of a status event: no sentence"
# hpcrun -e PAPI_DP_OPS@P: the preset (loaded where libpfm4 names a PMU)
LIBPFM_FORCE_PMU=skx PAPI_FLOPS_SOURCE=trace timeout 120 $O preset > "$out" 2>&1
rc=$?
[ $rc = 0 ] && echo "ok:   LIBPFM_FORCE_PMU=skx: PAPI_overflow on PAPI_DP_OPS: $(grep '^ok' "$out" | sed 's/^ok: *//')" ||
	{ [ $rc = 77 ] && grep '^SKIP' "$out"; } || { bad "flops_trace_ovf_test preset exit $rc"; cat "$out"; }

# PAPI's presets where libpfm4 names this CPU's PMU (here forced: skx):
# PAPI_DP_OPS and PAPI_FP_OPS are the component's events, read exactly.
LIBPFM_FORCE_PMU=skx PAPI_FLOPS_SOURCE=trace timeout 60 $T preset > "$out" 2>&1
rc=$?
[ $rc = 0 ] && grep -q '^ok: *PAPI_DP_OPS 123457 (123457), PAPI_FP_OPS 124457' "$out" &&
	echo "ok:   LIBPFM_FORCE_PMU=skx: PAPI_DP_OPS and PAPI_FP_OPS read exactly through the trace source" ||
	{ bad "presets under skx: exit $rc"; cat "$out"; }

# The FLOP presets under the trace sources are the component's whatever
# PMU libpfm4 detects: none here without LIBPFM_FORCE_PMU (this CPU may be
# one libpfm4 does not know), Zen 4 (no DP_OPS formula), Westmere (PAPI's
# own PAPI_DP_OPS row on perf_event natives, kept by papi-flops' table).
PAPI_FLOPS_SOURCE=trace $P/utils/papi_command_line PAPI_DP_OPS flops:::DP_OPS PAPI_FP_OPS > "$out" 2>&1
a=$(sed -n 's/^PAPI_DP_OPS :[[:space:]]*\([0-9]*\).*/\1/p' "$out") b=$(sed -n 's/^flops:::DP_OPS :[[:space:]]*\([0-9]*\).*/\1/p' "$out")
f=$(sed -n 's/^PAPI_FP_OPS :[[:space:]]*\([0-9]*\).*/\1/p' "$out")
[ "$a" = 40000000 ] && [ "$b" = "$a" ] && [ "$f" = "$a" ] &&
	echo "ok:   papi_command_line PAPI_DP_OPS under trace, no forced PMU: $a = flops:::DP_OPS = PAPI_FP_OPS (its loop: 2*20000000)" ||
	{ bad "papi_command_line PAPI_DP_OPS '$a', flops:::DP_OPS '$b', PAPI_FP_OPS '$f' (40000000 each)"; cat "$out"; }
PAPI_FLOPS_SOURCE=trace $P/utils/papi_avail > "$out" 2>&1
for ev in PAPI_FP_OPS PAPI_DP_OPS PAPI_SP_OPS PAPI_VEC_DP PAPI_VEC_SP; do
	grep -q "^$ev .* Yes .*(papi-flops exact: .*PAPI_FLOPS_SOURCE=trace.*Counted by flops:::${ev#PAPI_}\." "$out" ||
		{ bad "papi_avail under trace: $ev not available with its note"; grep "^$ev " "$out"; }
done && echo "ok:   papi_avail under trace: PAPI_FP_OPS, PAPI_DP_OPS, PAPI_SP_OPS, PAPI_VEC_DP, PAPI_VEC_SP available, noted exact"
for pmu in amd64_fam19h_zen4 wsm; do
	LIBPFM_FORCE_PMU=$pmu PAPI_FLOPS_SOURCE=trace timeout 60 $T preset > "$out" 2>&1
	rc=$?
	[ $rc = 0 ] && grep -q '^note: PAPI_DP_OPS is .* of 1 native event(s): flops:::DP_OPS$' "$out" &&
		grep -q '^ok: *PAPI_DP_OPS 123457 (123457), PAPI_FP_OPS 124457' "$out" &&
		echo "ok:   LIBPFM_FORCE_PMU=$pmu + trace: PAPI_DP_OPS is flops:::DP_OPS, read exactly" ||
		{ bad "LIBPFM_FORCE_PMU=$pmu + trace: preset exit $rc"; cat "$out"; }
done
# model:PMU: the presets of that PMU's formulas only (Zen 4: FP_OPS).
PAPI_FLOPS_SOURCE=model:amd64_fam19h_zen4 $P/utils/papi_avail > "$out" 2>&1
grep -q '^PAPI_FP_OPS .* Yes .*(papi-flops masked-full: ' "$out" && grep -q '^PAPI_DP_OPS .* No ' "$out" &&
	echo "ok:   model:amd64_fam19h_zen4: PAPI_FP_OPS available (masked-full), PAPI_DP_OPS not (no formula)" ||
	{ bad "model:amd64_fam19h_zen4 presets"; grep -E '^PAPI_(FP|DP)_OPS ' "$out"; }

# Already traced (a debugger, papi_flops_run): PAPI_start fails, saying why.
$RUN -q -s trace -- env $NOLEAK PAPI_FLOPS_SOURCE=trace $T exact > "$out" 2>&1
grep -q 'FAIL: PAPI_start' "$out" && grep -q 'PAPI_FLOPS_SOURCE=trace: cannot trace process .*not be traced already' "$out" &&
	echo "ok:   a process traced already: PAPI_start fails with the reason" || { bad "traced twice: no clear failure"; cat "$out"; }

# A thread calls exit(7), a crash, a SIGKILL: the status is the program's,
# the helper ends with it.
env $NOLEAK PAPI_FLOPS_SOURCE=trace timeout 60 $T exit-thread > "$out" 2>&1
rc=$?
[ $rc = 7 ] && echo "ok:   exit(7) from a thread while counting: exit status 7" || { bad "exit-thread: status $rc (7)"; cat "$out"; }
env $NOLEAK PAPI_FLOPS_SOURCE=trace timeout 60 $T crash > "$out" 2>&1
rc=$?
[ $rc = 139 ] && echo "ok:   SIGSEGV while counting: killed by SIGSEGV as untraced (139)" || { bad "crash: status $rc (139)"; cat "$out"; }
PAPI_FLOPS_SOURCE=trace timeout 60 $T exec > "$out" 2>&1
rc=$?
[ $rc = 4 ] && grep -q 'TracerPid:.0$' "$out" && echo "ok:   exec while counting: the new image runs untraced, its status 4 kept" ||
	{ bad "exec: status $rc (4), $(grep TracerPid "$out")"; cat "$out"; }
PAPI_FLOPS_SOURCE=trace $T wait 30 > "$out" 2>&1 &
pid=$!
for i in $(seq 50); do grep -q '^ready' "$out" && break; sleep 0.2; done
grep -q '^ready 1000$' "$out" || bad "wait: no 'ready 1000' (a read right after 1000 FLOPs)"
helper_of $pid || bad "no helper tracing process $pid"
kill -9 $pid
wait $pid 2>/dev/null
helper_gone $pid && echo "ok:   SIGKILL of a counting process: its helper ended too" || bad "the helper of killed process $pid still runs"

# The same counts as papi_flops_run on the same code; model:skx reads
# what papi_flops_run --source model:skx reports (masked AVX-512 lanes
# in full there, active lanes in the trace).
cmp_run() {	# cmp_run SOURCE METRICS [ENV...]
	src=$1 m=$2; shift 2
	env PAPI_FLOPS_SOURCE=$src "$@" $T model $m > "$out" 2>&1 || { bad "$src: flops_trace_test model $m"; cat "$out"; return; }
	$RUN -q -s $src --region region_body -m $m -o "$err" -x, -- env $NOLEAK $T region
	for k in $(echo $m | tr , ' '); do
		a=$(grep "^$k," "$out" | cut -d, -f2) b=$(grep "^$k," "$err" | cut -d, -f2)
		[ -n "$a" ] && [ "$a" = "$b" ] || { bad "$src $k: PAPI read '$a', papi_flops_run '$b'"; return; }
	done
	echo "ok:   $src through PAPI = papi_flops_run --source $src: $(tr '\n' ' ' < "$out")"
}
cmp_run trace FP_OPS,DP_OPS,SP_OPS,VEC_DP
cmp_run model:skx DP_OPS
cmp_run model:skx FP_OPS,DP_OPS,SP_OPS,VEC_DP PAPI_FLOPS_MULTIPLEX=1
cmp_run model:amd64_fam19h_zen4 FP_OPS

# papi_flops_run --pid: counts a running program until it ends (the same
# count as --region around the same code), or until Ctrl-C, leaving it
# running unharmed.
env $NOLEAK $T late 1 > "$out" 2>&1 &
pid=$!
$RUN -s trace --pid $pid -m DP_OPS -x, -o "$err"
wait $pid
rc=$?
a=$(grep '^DP_OPS,' "$err" | cut -d, -f2)
$RUN -q -s trace --region region_body -m DP_OPS -x, -o "$out" -- env $NOLEAK $T region
b=$(grep '^DP_OPS,' "$out" | cut -d, -f2)
[ $rc = 3 ] && [ -n "$a" ] && [ "$a" = "$b" ] && echo "ok:   --pid until the end: DP_OPS $a (= --region), the program's status 3 kept" ||
	{ bad "--pid: DP_OPS '$a' ('$b'), status $rc (3)"; cat "$err"; }
env $NOLEAK $T spin 3 > "$out" 2>&1 &
pid=$!
sleep 0.5
$RUN -s trace --pid $pid -m DP_OPS -o "$err" &
rp=$!
sleep 1
kill -INT $rp
wait $rp
rrc=$?
wait $pid
rc=$?
grep -q 'then detached' "$err" && [ $rrc = 0 ] && [ $rc = 0 ] && grep -q '^spun$' "$out" &&
	echo "ok:   --pid then SIGINT: partial report, detached, the program ran on and ended normally ($(grep DP_OPS "$err" | tr -s ' '))" ||
	{ bad "--pid + SIGINT: tool $rrc, program $rc"; cat "$err" "$out"; }
$RUN -s trace --pid 999999999 -- true > "$out" 2>&1; [ $? = 2 ] || bad "--pid with a program accepted"
$RUN -s hw --pid $$ > "$out" 2>&1; [ $? = 2 ] && grep -q 'needs --source trace' "$out" || bad "--pid with hw accepted"

exit $fail
