#!/bin/sh
# The tracer's transparency (docs/trace-engine.md#transparency): small
# programs written to hit what a dynamic translator under ptrace can get
# wrong (ctests/transp/), each run natively and under papi_flops_run
# --source trace with both engines; stdout and the exit status must be
# the native ones and DP_OPS the program's known count.  Where a
# difference is inherent to ptrace (LeakSanitizer attaching to its own
# threads) the run must still end and the report must say why.
B=${B:-build}
RUN=$B/papi_flops_run
TP=$B/ctests/transp
. "$(dirname "$0")/testlib.sh"

# same NAME DP ENGINES CMD...: stdout and status native vs traced, DP_OPS
same() {
	name=$1 dp=$2 engines=$3; shift 3
	timeout 60 "$@" >"$tmp/native.out" 2>"$tmp/native.err"; nrc=$?
	# a program that cannot run its case on this CPU says SKIP natively
	if [ $nrc = 0 ] && grep -q '^SKIP: ' "$tmp/native.out"; then
		sed -n 's/^SKIP: /SKIP: test_transp: /p' "$tmp/native.out"
		return
	fi
	for e in $engines; do
		PFLOPS_TRACE_ENGINE=$e timeout 120 $RUN --source trace --json -o "$tmp/$e.json" -- "$@" \
			>"$tmp/$e.out" 2>"$tmp/$e.err"; rc=$?
		if [ $rc != $nrc ] || ! cmp -s "$tmp/native.out" "$tmp/$e.out"; then
			bad "$name ($e): exit $rc, stdout '$(cat "$tmp/$e.out")'; natively exit $nrc, '$(cat "$tmp/native.out")'; $(tail -3 "$tmp/$e.err")"
			continue
		fi
		got=$(jq -r .metrics.DP_OPS "$tmp/$e.json" 2>/dev/null)
		[ "$got" = "$dp" ] && ok || bad "$name ($e): DP_OPS $got, expected $dp"
	done
}
# caveat ENGINE TEXT: the last run's report says TEXT
caveat() {
	jq -r '.caveats[]?' "$tmp/$1.json" | grep -q "$2" && ok || bad "$name ($1): no note '$2' in: $(jq -c .caveats "$tmp/$1.json")"
}

# 1. rseq: refused (ENOSYS) as valgrind does, so no critical section runs
#    unrestartable in the cache (or restarts forever at the stopping
#    path's stops): glibc's own registration falls back, and so does a
#    program registering its own; no per-CPU update is lost
same "rseq, glibc's registration" 200000 "cache stop" $TP/tp_rseq 2000
caveat stop "rseq registration refused [0-9]* times* (ENOSYS"
GLIBC_TUNABLES=glibc.pthread.rseq=0 same "rseq, the program's own" 200000 "cache stop" $TP/tp_rseq 2000
# --region: threads run natively outside it, where glibc registered
# rseq untraced; refusing it later would end glibc's new threads: said
name="rseq under --region"
$RUN --source trace --region worker --json -o "$tmp/cache.json" -- $TP/tp_rseq 2000 >/dev/null 2>&1
caveat cache "[0-9]* threads* had rseq registered before the tracer could refuse it"

# 2. clone flags: children sharing the memory without being threads,
#    without an exit signal, with another exit signal, CLONE_UNTRACED
#    (followed anyway: the child starts in the code cache)
for m in vm vmfs vm0 untraced sig clone3; do
	same "clone $m" 12000 "cache stop" $TP/tp_clone $m
done
caveat cache "clone(CLONE_UNTRACED) traced anyway"

# 3. registers: %rcx after syscall, the %gs base written by wrgsbase,
#    a program single-stepping itself with EFLAGS.TF
same "rcx after syscall" 40000 "cache stop" $TP/tp_regs rcx
same "wrgsbase" 40000 "cache stop" $TP/tp_regs gs
same "EFLAGS.TF" 8040 "cache stop" $TP/tp_regs tf
# the register a flag-free count borrows (overwritten by the instruction
# after it): a signal while the count holds it sees and changes the
# program's value; a fault between a block's start and its count
same "count's borrowed register, signals" 80000000 cache $TP/tp_regs dead
# a one-block loop's count, its load through a register zeroed (one the
# block leaves alone, kept in the slot; a flag-free one's dead
# register): the same
same "loop count's base register, signals" 40000000 cache $TP/tp_regs loop
# returns and indirect calls, looked up in the copy with %rax, %rcx,
# %rdx borrowed: a signal inside a look-up sees the program's registers
# and flags, and the program finds them after the return
same "look-up's registers, signals" 40000000 cache $TP/tp_regs ind
same "count's borrowed register, fault before it" 12000 "cache stop" $TP/tp_regs fault
# pushf/popf stepped (code on a writable page runs stepped on the
# stopping path): the flags pushed do not show the tracer's TF
same "pushf, popf stepped" 40000 "cache stop" $TP/tp_regs flags
# a system call the kernel restarts (a signal it ignores woke it): the
# thread is not moved, and the stopping path does not count the block
# again at each restart (560 for 80 before)
same "restarted nanosleep after 4 addsd" 80 "cache stop" $TP/tp_restart

# 4. strict seccomp: no system call may be injected after it
same "seccomp strict" 44000 "cache stop" $TP/tp_seccomp
caveat cache "1 process turned seccomp on"
# the far code's blocks: kept on the stopping path for want of injection,
# not for a full cache
noinj() {
	caveat cache "[1-9][0-9]* needing a new code cache chunk after a seccomp call"
	jq_is "$tmp/cache.json" '.engine.stopping_path_blocks | .no_injection > 0 and .cache_full == 0' true
	jq -r '.caveats[]' "$tmp/cache.json" | grep -q "code cache full" &&
		bad "$name: reported as code cache full: $(jq -c .caveats "$tmp/cache.json")" || ok
}
noinj
# a seccomp call that fails: injection stays off (the safe side) and the
# report says the call failed, not that seccomp was turned on
same "seccomp call failing" 44000 "cache stop" $TP/tp_seccomp fail
caveat cache "^1 seccomp call failed (seccomp was not turned on)"
caveat stop "^1 seccomp call failed (seccomp was not turned on)"
jq_is "$tmp/cache.json" '.engine | "\(.seccomp_processes) \(.seccomp_failed_calls)"' "0 1"
noinj
jq -r '.caveats[]' "$tmp/cache.json" | grep -q "turned seccomp on" &&
	bad "$name: a failed call reported as seccomp on: $(jq -c .caveats "$tmp/cache.json")" || ok
# and attached with --pid once in strict mode (seen in /proc: Seccomp)
name="seccomp strict, --pid"
rm -f "$tmp/fifo"; mkfifo "$tmp/fifo"
$TP/tp_seccomp wait "$tmp/fifo" >"$tmp/sc.out" 2>&1 & sp=$!
exec 7>"$tmp/fifo"	# the program's open returns; it then blocks in read
i=0; while ! grep -q "^Seccomp:.*1" /proc/$sp/status 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
PFLOPS_TRACE_ENGINE=cache timeout 60 $RUN --source trace --pid $sp --json -o "$tmp/cache.json" 2>"$tmp/sc.err" & rp=$!
i=0; while ! grep -q "^TracerPid:[[:space:]]*[1-9]" /proc/$sp/status 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3; echo x >&7; exec 7>&-
wait $sp; src=$?; wait $rp; rc=$?
[ $src = 0 ] && [ "$(cat "$tmp/sc.out")" = "seccomp: far code ran" ] && ok ||
	bad "$name: the program exited $src, '$(cat "$tmp/sc.out")' (137: killed by an injected system call)"
[ $rc = 0 ] && [ "$(jq -r .metrics.DP_OPS "$tmp/cache.json")" = 4000 ] && ok ||
	bad "$name: papi_flops_run exit $rc, DP_OPS $(jq -r .metrics.DP_OPS "$tmp/cache.json" 2>&1): $(cat "$tmp/sc.err")"
caveat cache "1 process turned seccomp on"

# 5. AddressSanitizer: with LeakSanitizer off it runs as natively; with
#    it on (its helper ptrace-attaches to the program's threads, which
#    fails under a tracer as under gdb or strace) the run ends, LeakSanitizer
#    says it cannot work under ptrace, and the report says why
if [ -x $TP/tp_asan ]; then
	ASAN_OPTIONS=detect_leaks=0 same "asan" 12000 cache $TP/tp_asan
	PFLOPS_TRACE_ENGINE=cache timeout 120 $RUN --source trace --json -o "$tmp/lsan.json" -- $TP/tp_asan \
		>"$tmp/lsan.out" 2>"$tmp/lsan.err"; rc=$?
	name="asan + LeakSanitizer"
	[ $rc != 124 ] && [ "$(jq -r .metrics.DP_OPS "$tmp/lsan.json")" = 12000 ] && ok ||
		bad "$name: exit $rc (124: it hung), DP_OPS $(jq -r .metrics.DP_OPS "$tmp/lsan.json" 2>&1)"
	jq -r '.caveats[]?' "$tmp/lsan.json" | grep -q "the program called ptrace .*inherent to ptrace" && ok ||
		bad "$name: no note on ptrace: $(jq -c .caveats "$tmp/lsan.json")"
else
	echo "SKIP: test_transp asan: no ASan build of tp_asan (libasan missing)"
fi

# 6. fallbacks to the stopping path are said, with the same counts:
#    blocks using %gs (the cache owns it), and threads beyond the counter
#    slots (29 under a 1 GiB ulimit -v: 40 threads at a barrier)
name="fallback notes"
PFLOPS_TRACE_ENGINE=cache $RUN --source trace --json -o "$tmp/cache.json" -- $TP/tp_regs gs >/dev/null 2>&1
if $TP/tp_regs gs | grep -q SKIP; then echo "SKIP: test_transp: %gs fallback note: no FSGSBASE"
else caveat cache "blocks on the stopping path (same counts, a stop per run): .*[0-9] using %gs"; fi
PFLOPS_TRACE_ENGINE=cache $RUN --source trace --json -o "$tmp/cache.json" -- sh -c "ulimit -v 1048576; exec $TP/tp_threads 40" \
	>/dev/null 2>&1
[ "$(jq -r .metrics.DP_OPS "$tmp/cache.json")" = 160000 ] && ok || bad "$name: 40 threads: DP_OPS $(jq -r .metrics.DP_OPS "$tmp/cache.json")"
caveat cache "[0-9]* threads* ran on the stopping path (same counts, slower): more threads at once than the code cache's"

# 7. code changed other than by a store to the page it runs from
#    (tp_alias: a function rewritten from 1 to 2 vaddpd a turn): through
#    a second, writable mapping of a memfd (W^X double mapping), one
#    mapped only after the code ran, /proc/self/mem (pwrite, lseek+write),
#    process_vm_writev onto an RWX page the tracer guards (it failed
#    with EFAULT); the new code runs and is counted
same "memfd RW + RX views" 36000 "cache stop" $TP/tp_alias memfd
caveat cache "writable views* write-protected by the tracer"
same "memfd, RW view mapped later" 36000 "cache stop" $TP/tp_alias late
for m in pwrite write vmwrite; do
	same "code written with $m" 36000 "cache stop" $TP/tp_alias $m
	caveat cache "rewrote code 1 time through /proc/PID/mem or process_vm_writev"
done
# code on a writable page reads back as written under the stopping
# path too (its blocks are stepped there, never given an int3)
same "code read back" 36000 "cache stop" $TP/tp_alias read
# 8. /proc/self/maps shows the program's permissions: an RWX page whose
#    code ran, in one mapping with its neighbours (the tracer's guard is
#    lifted when the program opens or reads its maps)
same "/proc/self/maps" 36000 "cache stop" $TP/tp_alias maps
caveat cache "read /proc/.../maps or smaps 1 time"

# 9. HotSpot, its interpreter alone (-Xint: issue 19 found it unfinished
#    after 600 s, 0.3 s natively; now about 3 s) and with its JIT (C1 and
#    C2): it patches its inline caches and
#    reads its call instructions back, its CPUID stub saves and restores
#    EFLAGS with pushf/popf, its compiled code faults on purpose (null
#    checks); output and exit status native, at least the loop's 600000
#    FLOPs (3 a turn; the JVM adds its own).  javac compiles that file
#    with C1 (-XX:TieredStopAtLevel=1) and with C2: about 6 and 11 s of
#    CPU traced since the lookup table is built anew without the
#    tombstones of dropped copies (2 and 5 minutes before: its JIT's
#    churn filled the table, and every new target stopped at each run)
if command -v java >/dev/null && command -v javac >/dev/null; then
	mkdir -p "$tmp/java"
	cat >"$tmp/java/Loop.java" <<'J'
import java.util.*;
public class Loop {
	static double f(double x) { return x * 0.5 + 1.0; }
	public static void main(String[] a) {
		double s = 0;
		Map<String, Integer> m = new HashMap<>();
		for (int i = 0; i < 200000; i++) { s += f(i); m.merge("k" + (i % 100), 1, Integer::sum); }
		System.out.println("sum " + s + " keys " + m.size() + " k7 " + m.get("k7"));
	}
}
J
	javac -d "$tmp/java" "$tmp/java/Loop.java"
	for tier in -Xint -XX:TieredStopAtLevel=1 -XX:+TieredCompilation; do
		name="java $tier"
		java $tier -cp "$tmp/java" Loop >"$tmp/native.out" 2>&1; nrc=$?
		timeout 300 $RUN --source trace --json -o "$tmp/j.json" -- java $tier -cp "$tmp/java" Loop \
			>"$tmp/j.out" 2>"$tmp/j.err"; rc=$?
		[ $rc = $nrc ] && cmp -s "$tmp/native.out" "$tmp/j.out" && [ "$(jq -r '.metrics.DP_OPS >= 600000' "$tmp/j.json")" = true ] &&
			ok || bad "$name: exit $rc (natively $nrc), '$(cat "$tmp/j.out")', DP_OPS $(jq -r .metrics.DP_OPS "$tmp/j.json" 2>&1); $(tail -3 "$tmp/j.err")"
	done
	for jit in -J-XX:TieredStopAtLevel=1 -J-XX:+TieredCompilation; do
		name="javac $jit"
		rm -f "$tmp/java/Loop.class"
		timeout 600 $RUN --source trace -q -- javac $jit -d "$tmp/java" "$tmp/java/Loop.java" >"$tmp/jc.out" 2>&1; rc=$?
		[ $rc = 0 ] && [ ! -s "$tmp/jc.out" ] && java -cp "$tmp/java" Loop | cmp -s - "$tmp/native.out" && ok ||
			bad "$name: exit $rc (124: over 10 minutes): $(tail -3 "$tmp/jc.out")"
	done
else
	echo "SKIP: test_transp java: no java/javac (openjdk-17-jdk-headless)"
fi

# 10. JIT churn: 300,000 distinct kernels written and run, more than the
#     262,144 block ids given (PFLOPS_TRACE_IDS; 524,288 by default); the
#     ids of dropped copies are reused (trace_ids.c): every kernel runs
#     from the cache, none on the stopping path for want of an id.  On RWX pages rewritten in
#     place (the tracer's write protection catches each page's first
#     write) and through mprotect (W^X).  DP_OPS: 10 per kernel (1 to 4
#     vaddpd ymm in turn)
# nofull NAME: the last cache run's report says ids were reused, none ran out
nofull() {
	jq -r '.caveats[]?' "$tmp/cache.json" | grep -q "code cache full" &&
		bad "$name: ran out of block ids: $(jq -c .caveats "$tmp/cache.json")" || ok
	caveat cache "([0-9][0-9][0-9]* block ids reused"
}
if $TP/tp_jit rwx 1 | grep -q "^SKIP"; then
	echo "SKIP: test_transp JIT churn: this CPU lacks AVX (tp_jit's kernels are vaddpd ymm)"
else
	for m in rwx wx; do
		name="JIT churn $m"
		$TP/tp_jit $m 300000 >"$tmp/native.out"; nrc=$?
		PFLOPS_TRACE_IDS=262144 PFLOPS_TRACE_ENGINE=cache timeout 300 $RUN --source trace --json -o "$tmp/cache.json" -- $TP/tp_jit $m 300000 \
			>"$tmp/cache.out" 2>"$tmp/cache.err"; rc=$?
		[ $rc = 0 ] && [ $nrc = 0 ] && cmp -s "$tmp/native.out" "$tmp/cache.out" && [ "$(jq -r .metrics.DP_OPS "$tmp/cache.json")" = 3000000 ] &&
			ok || bad "$name: exit $rc (natively $nrc), '$(cat "$tmp/cache.out")', DP_OPS $(jq -r .metrics.DP_OPS "$tmp/cache.json" 2>&1); $(tail -3 "$tmp/cache.err")"
		nofull
	done
	#     Kernels kept, none dropped: tp_jit chain 300,000 (each jumps to
	#     the next: more live blocks than the 262,144 ids a process had
	#     before 2026-11-28, the rest then ran on the stopping path, said
	#     as "code cache full") and tp_jit keep 100,000 (each called
	#     through a pointer: more lookup-table entries than the 65,536
	#     buckets then, said as "found no room in the code cache's lookup
	#     table", each one's run a miss and a request)
	for spec in "chain 300000 code cache full" "keep 100000 found no room"; do
		m=${spec%% *} rest=${spec#* }
		k=${rest%% *} what=${rest#* }
		name="JIT $m $k"
		$TP/tp_jit $m $k >"$tmp/native.out"; nrc=$?
		PFLOPS_TRACE_ENGINE=cache timeout 300 $RUN --source trace --json -o "$tmp/cache.json" -- $TP/tp_jit $m $k \
			>"$tmp/cache.out" 2>"$tmp/cache.err"; rc=$?
		[ $rc = 0 ] && [ $nrc = 0 ] && cmp -s "$tmp/native.out" "$tmp/cache.out" &&
			[ "$(jq -r .metrics.DP_OPS "$tmp/cache.json")" = $((k * 10)) ] &&
			ok || bad "$name: exit $rc (natively $nrc), '$(cat "$tmp/cache.out")', DP_OPS $(jq -r .metrics.DP_OPS "$tmp/cache.json" 2>&1); $(tail -3 "$tmp/cache.err")"
		jq -r '.caveats[]?' "$tmp/cache.json" | grep -q "$what" &&
			bad "$name: $what: $(jq -c .caveats "$tmp/cache.json")" || ok
	done
	#     The same with 8192 ids a process (PFLOPS_TRACE_IDS), 20,000 kernels
	#     on 32 pages, so that ids are reused in a forked child (which
	#     inherits the dropped copies) and while another thread computes
	#     without a stop (interrupted to be seen outside them) and another
	#     waits in read(); the stopping engine on 2,000
	for m in rwx wx fork threads; do
		PFLOPS_TRACE_IDS=8192 same "JIT churn $m, 8192 ids" 200000 cache $TP/tp_jit $m 20000 32
		nofull
		same "JIT churn $m, stopping engine" 20000 stop $TP/tp_jit $m 2000
	done
fi
name="PFLOPS_TRACE_IDS out of range"
PFLOPS_TRACE_IDS=3 $RUN --source trace -- true 2>"$tmp/ids.err"; rc=$?
[ $rc != 0 ] && grep -q "PFLOPS_TRACE_IDS='3' is not a number of block ids from 16 to 524288" "$tmp/ids.err" && ok ||
	bad "$name: exit $rc, '$(cat "$tmp/ids.err")'"
# ids used up: the rest on the stopping path, counts exact, and the
# report names the process's own number of ids (not the default's)
PFLOPS_TRACE_IDS=16 same "16 block ids" 80 cache $TP/tp_restart
caveat cache "[1-9][0-9]* code cache full (its 16 block ids used)"

# 11. masked AVX-512 (tp_mask: opmasks changing every turn, a function
#    that checksums its own bytes while it runs): the cache runs masked
#    blocks from copies that stop at their end in cache memory, where
#    the opmasks are read, so no int3 goes into the program's code (it
#    read 3 of them there); lanes exact, per function too, with timer
#    signals landing inside the copies, in 3 threads at once (the main
#    one reading the code) and in a forked child.  The stopping engine ends
#    every block at an int3, masked or not (its checksum is not compared)
out=$($TP/tp_mask 1)
case $out in
SKIP*) echo "$out" ;;
*)
	mdp=$($TP/tp_mask 20000 | sed -n 's/^flops \([0-9]*\),.*/\1/p')
	$TP/tp_mask 1 | grep -q "int3 bytes: 0$" || bad "tp_mask: 0xCC bytes in its code natively: $out"
	same "masked AVX-512, its own code read" "$mdp" cache $TP/tp_mask 20000
	name="masked AVX-512 copied"
	jq -r '.caveats[]?' "$tmp/cache.json" | grep -q "masked" && bad "$name: $(jq -c .caveats "$tmp/cache.json")" || ok
	same "masked AVX-512, timer signals in the copies" "$mdp" cache $TP/tp_mask 20000 sig
	same "masked AVX-512, 3 threads" "$((3 * mdp))" cache $TP/tp_mask 20000 threads
	same "masked AVX-512, fork" "$((2 * mdp))" cache $TP/tp_mask 20000 fork
	same "masked AVX-512 (stopping engine)" "$mdp" stop $TP/tp_mask 20000 nosum
	name="masked AVX-512 --by-function"
	for e in cache stop; do
		PFLOPS_TRACE_ENGINE=$e $RUN --source trace --by-function --json -o "$tmp/f$e.json" -- $TP/tp_mask 5000 >/dev/null 2>&1
	done
	leaf=$($TP/tp_mask 5000 | sed -n 's/.*tp_kern_leaf \([0-9]*\)$/\1/p')
	fc=$(jq -c '[.by_function.rows[] | [.function, .DP_OPS]]' "$tmp/fcache.json")
	[ "$fc" = "$(jq -c '[.by_function.rows[] | [.function, .DP_OPS]]' "$tmp/fstop.json")" ] &&
		echo "$fc" | grep -q "\"tp_kern_leaf\",$leaf]" && ok ||
		bad "$name: cache $fc, stop $(jq -c '[.by_function.rows[] | [.function, .DP_OPS]]' "$tmp/fstop.json"), tp_kern_leaf $leaf"
	;;
esac

# 12. returns that go elsewhere than where their call was made (the
#     code cache looks every `ret` up: it must never take a wrong copy):
#     longjmp from deep recursion, swapcontext coroutines, return
#     addresses overwritten in asm, a helper that rewrites (mprotect)
#     the code it returns into, recursion 1000 deep with a fork inside,
#     4 threads, a `ret` and an indirect call whose targets change at
#     every run (each site's memo wrong nearly every time); output and
#     FLOPs native (the program counts what it ran), the stopping engine
#     on fewer turns
rsum() { grep -o 'flops [0-9]*' "$1" | awk '{s += $2} END {print s + 0}'; }
for m in "longjmp 2000" "ucontext 2000" "overwrite 20000" "deep 300" "rewrite 3000" "threads 1" "sites 30000"; do
	set -- $m
	$TP/tp_ret $1 $2 >"$tmp/rn.out"
	same "returns elsewhere: $1" "$(rsum "$tmp/rn.out")" cache $TP/tp_ret $1 $2
	[ $1 = deep ] && set -- deep 5
	[ $1 = rewrite ] && set -- rewrite 300
	[ $1 = sites ] && set -- sites 300
	$TP/tp_ret $1 $2 >"$tmp/rn.out"
	same "returns elsewhere: $1 (stopping engine)" "$(rsum "$tmp/rn.out")" stop $TP/tp_ret $1 $2
done
#     signals: a 2 kHz timer lands in calls and returns, its handler
#     siglongjmps out of nested calls; the program says on stderr what
#     it counted
name="returns elsewhere: signals"
$TP/tp_ret signal 3000000 >"$tmp/native.out" 2>/dev/null
PFLOPS_TRACE_ENGINE=cache timeout 120 $RUN --source trace --json -o "$tmp/cache.json" -- $TP/tp_ret signal 3000000 \
	>"$tmp/cache.out" 2>"$tmp/cache.err"; rc=$?
want=$(sed -n 's/^tp_ret signal: \([0-9]*\) signals, flops \([0-9]*\)$/\2/p' "$tmp/cache.err")
sigs=$(sed -n 's/^tp_ret signal: \([0-9]*\) signals.*/\1/p' "$tmp/cache.err")
[ $rc = 0 ] && cmp -s "$tmp/native.out" "$tmp/cache.out" && [ -n "$want" ] && [ "${sigs:-0}" -gt 0 ] &&
	[ "$(jq -r .metrics.DP_OPS "$tmp/cache.json")" = "$want" ] && ok ||
	bad "$name: exit $rc, '$(cat "$tmp/cache.out")' (natively '$(cat "$tmp/native.out")'), $sigs signals, DP_OPS $(jq -r .metrics.DP_OPS "$tmp/cache.json" 2>&1), the program's $want"

# 13. fork from the cache: a shell's command substitutions, each a fork
#     whose child runs on in the parent's copies (pft_arena_fork copies
#     the parts of each chunk the parent wrote; with the start of a
#     chunk left out the traced bash hung)
#     A kernel run once in the parent, then in 20 children one after
#     another, each from the copy it inherits (and the blocks of the
#     children's exit given back to the parent at each next fork)
same "fork: 20 children run an inherited copy" 84000 "cache stop" $TP/tp_fork children 20 1000
#     The same kernel first run in a child: the parent makes its copy at
#     its next fork, from the child's note, and the other 19 run that
same "fork: the parent makes the copy its first child ran" 80000 "cache stop" $TP/tp_fork fresh 20 1000
jq_is "$tmp/cache.json" '.engine.blocks_fork_given > 0' true
if command -v bash >/dev/null; then
	name="fork: bash command substitutions"
	loop='i=0; while [ $i -lt 40 ]; do x=$(echo $i); i=$((i+1)); done; echo $x'
	PFLOPS_TRACE_ENGINE=cache timeout -s KILL 60 $RUN --source trace -o /dev/null -- bash -c "$loop" >"$tmp/fk.out" 2>"$tmp/fk.err"; rc=$?
	[ $rc = 0 ] && [ "$(cat "$tmp/fk.out")" = "$(bash -c "$loop")" ] && ok ||
		bad "$name: exit $rc (137: killed after 60 s), '$(cat "$tmp/fk.out")': $(tail -3 "$tmp/fk.err")"
	#     The blocks a child translates (fork's child side, the
	#     subshell, its exit: about 1,300 of bash's) are made in the
	#     parent at its next fork (trace_forkwant.c), so the later
	#     children inherit them: 30 forks more decode fewer than 3,000
	#     blocks more (each decoded them again before: 39,000)
	name="fork: children's blocks given to the parent"
	for n in 10 40; do
		PFLOPS_TRACE_ENGINE=cache PFLOPS_TRACE_HINTS=0 timeout -s KILL 60 $RUN --source trace --json -o "$tmp/fk$n.json" -- \
			bash -c "i=0; while [ \$i -lt $n ]; do x=\$(echo \$i); i=\$((i+1)); done; echo \$x" >"$tmp/fk.out" 2>"$tmp/fk.err"
	done
	d10=$(jq .engine.blocks_decoded "$tmp/fk10.json") d40=$(jq .engine.blocks_decoded "$tmp/fk40.json")
	given=$(jq .engine.blocks_fork_given "$tmp/fk40.json")
	[ "$(cat "$tmp/fk.out")" = 39 ] && [ "$given" -gt 0 ] && [ $((d40 - d10)) -lt 3000 ] && ok ||
		bad "$name: output '$(cat "$tmp/fk.out")', blocks decoded $d10 (10 forks), $d40 (40 forks), given $given"
else
	echo "SKIP: test_transp fork: no bash"
fi

echo "test_transp: $pass passed, $fail failed"
[ $fail = 0 ]
