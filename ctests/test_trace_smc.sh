#!/bin/sh
# Code that changes while it stays executable (calib_smc: an RWX page
# rewritten in place, a W^X JIT, a rewrite by another thread, two
# threads writing at once, code and
# data on one page, the program's own SIGSEGV handler, a file's code
# rewritten or truncated): traced by both
# engines, the program prints and exits as it does natively, and the
# FLOPs are the true ones.
B=${B:-build}
RUN=$B/papi_flops_run
SMC=$B/ctests/trace/calib_smc
. "$(dirname "$0")/testlib.sh"

if ! grep -qw avx /proc/cpuinfo; then
	echo "SKIP: test_trace_smc: this CPU lacks avx"
	exit 77
fi
n=3000
# traced MODE ENGINE VEC [DP]: MODE traced by ENGINE against its native
# run (nrc, $tmp/native.out): exit status, output, VEC_DP (and DP_OPS)
traced() {
	TMPDIR=$tmp PFLOPS_TRACE_ENGINE=$2 "$RUN" --source trace --json -o "$tmp/r.json" -- "$SMC" "$1" $n \
		> "$tmp/traced.out" 2>"$tmp/err"; rc=$?
	[ $rc = $nrc ] && ok || bad "$1 $2: exit $rc, natively $nrc: $(cat "$tmp/err")"
	cmp -s "$tmp/native.out" "$tmp/traced.out" && ok ||
		bad "$1 $2: output '$(cat "$tmp/traced.out")', natively '$(cat "$tmp/native.out")'"
	got=$(jq -r .metrics.VEC_DP "$tmp/r.json")
	[ "$got" = "$3" ] && ok || bad "$1 $2: VEC_DP $got, expected $3"
	if [ -n "$4" ]; then
		got=$(jq -r .metrics.DP_OPS "$tmp/r.json")
		[ "$got" = "$4" ] && ok || bad "$1 $2: DP_OPS $got, expected $4"
	fi
}
# mode and its vector DP instructions (4 lanes each)
for mv in inplace:15 wx:2 threads:6 writers:40 fork:3 selfpage:1 segv:3; do
	mode=${mv%%:*} vec=$((${mv#*:} * n))
	"$SMC" "$mode" $n > "$tmp/native.out"; nrc=$?
	for engine in cache stop; do
		traced "$mode" $engine $vec $((4 * vec))
		case $mode:$engine in
		inplace:*)
			jq -r '.caveats[]?' "$tmp/r.json" | grep -q "page.* write-protected by the tracer" && ok ||
				bad "$mode $engine: no note on write-protected pages: $(jq -c .caveats "$tmp/r.json")" ;;
		selfpage:cache)
			jq -r '.caveats[]?' "$tmp/r.json" | grep -q "writable page.* left writable" && ok ||
				bad "$mode $engine: no note on the page left writable: $(jq -c .caveats "$tmp/r.json")" ;;
		esac
	done
done
# code of a file the program maps (not its own): read by the tracer from
# its own mapping of the file only while the program's bytes are the
# file's (trace_codemap.c): rewritten after mprotect, in a mapping made
# writable, through /proc/self/mem; and a file truncated under the
# mapping (the tracer must not read past its end: SIGBUS); code run from
# the part cut off (truncrun: a SIGBUS in the program, caught, as
# natively; the tracer decodes that page in place from its view of the
# file, cut under it: its own SIGBUS guarded, else the tracer dies of
# it); two files of
# code mapped in turn at one address under a 100 us timer (a signal as
# a munmap returns: its exit's work still done, else the first file's
# copies ran for the second's, 35,944 to 36,136 vaddpd for 36,000).
# mode, its vaddpd ymm and its DP FLOPs, per N
for mv in filemap:2:11 trunc:2:8 truncrun:2:8 sigremap:12:48; do
	mode=${mv%%:*} v=${mv#*:} vec=$((${v%%:*} * n)) dp=$((${v#*:} * n))
	TMPDIR=$tmp "$SMC" "$mode" $n > "$tmp/native.out"; nrc=$?
	[ $nrc = 0 ] && ok || bad "$mode: natively exit $nrc"
	for engine in cache stop; do
		traced "$mode" $engine $vec $dp
	done
done
# code run from a file's part cut off, the program not catching the
# SIGBUS (truncdie: it dies of it, N vaddpd before, as natively); and run
# there before the cut too (truncrerun: 3 N vaddpd; the cache engine's
# copies of that code are dropped at the ftruncate's exit, else they ran
# on: no SIGBUS), the file cut by truncate with a relative path, by an
# O_TRUNC open, by creat, by openat2 with O_TRUNC (77: no openat2), or
# by a forked child, in another address space (truncpath, truncopen,
# trunccreat, truncopenat2, truncfork: 3 N vaddpd)
for me in truncdie:1:cache truncdie:1:stop truncrerun:3:cache truncrerun:3:stop truncpath:3:cache \
	truncpath:3:stop truncopen:3:cache truncopen:3:stop trunccreat:3:cache trunccreat:3:stop \
	truncopenat2:3:cache truncopenat2:3:stop truncfork:3:cache truncfork:3:stop; do
	mode=${me%%:*} e=${me#*:} vec=$((${e%%:*} * n)) engine=${e#*:}
	TMPDIR=$tmp "$SMC" "$mode" $n > "$tmp/native.out" 2>/dev/null; nrc=$?
	if [ $nrc = 77 ]; then
		echo "SKIP: $mode $engine: $(cat "$tmp/native.out")"
		continue
	fi
	traced "$mode" $engine $vec
	case $mode in
	truncdie) [ $nrc = 135 ] && [ "$(cat "$tmp/native.out")" = "truncdie: cut" ] ;;
	*) [ $nrc = 0 ] && [ "$(cat "$tmp/native.out")" = "$mode: SIGBUS at +4096" ] ;;
	esac && ok || bad "$mode: natively exit $nrc, '$(cat "$tmp/native.out")': not killed by SIGBUS after the cut"
done
# a file's bytes changed under its code by fallocate: a page punched out
# or zeroed and written back as a vaddsd loop (trunchole, trunczero: run,
# no SIGBUS; the cache engine only: the stopping engine's int3 made the
# program's page a private copy, which a hole or zeros leave as it was:
# a known gap, docs/trace-engine.md), the first page collapsed away, the
# second's vaddsd loop moved there (trunccollapse), a page inserted
# before the first, its vaddpd loop moved to the second page, the first
# written as a loop of two (truncinsert: 4 N vaddpd, N vaddsd; the
# copies run on would swap the loops: 2 N of each); 77: the file system
# cannot
for me in trunchole:3:13:cache trunczero:3:13:cache trunccollapse:1:6:cache trunccollapse:1:6:stop \
	truncinsert:4:17:cache truncinsert:4:17:stop; do
	mode=${me%%:*} e=${me#*:} vec=$((${e%%:*} * n)) e=${e#*:} dp=$((${e%%:*} * n)) engine=${e#*:}
	TMPDIR=$tmp "$SMC" "$mode" $n > "$tmp/native.out" 2>/dev/null; nrc=$?
	if [ $nrc = 77 ]; then
		echo "SKIP: $mode $engine: $(cat "$tmp/native.out")"
		continue
	fi
	[ $nrc = 0 ] && ok || bad "$mode: natively exit $nrc: $(cat "$tmp/native.out")"
	traced "$mode" $engine $vec $dp
done
# a child that outlives the program is let go with its page writable
# again: it rewrites and runs its code untraced, unharmed
for engine in cache stop; do
	rm -f "$tmp/ok"
	PFLOPS_TRACE_ENGINE=$engine "$RUN" --source trace -q -- "$SMC" detach $n "$tmp/ok"; rc=$?
	[ $rc = 0 ] && ok || bad "detach $engine: exit $rc"
	i=0; while [ ! -s "$tmp/ok" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(cat "$tmp/ok" 2>/dev/null)" = ok ] && ok || bad "detach $engine: the child let go did not finish its rewrite"
done
echo "test_trace_smc: $pass passed, $fail failed"
[ $fail = 0 ]
