/*
 * test_trace.c: the tracer on real programs (ctests/trace/), exact counts.
 *
 * Expected numbers come from the programs' loop counts and the
 * instruction semantics, never from a previous run.  The calibration
 * programs are built under $B/ctests/trace (B from the environment, as
 * `make check` sets it; default build).  Run from the repository root.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <pthread.h>
#include <time.h>
#include <errno.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "pflops_trace.h"
#include "trace/trace_internal.h"
#include "calib_gate.h"

#define N 1000

#include "calib_prog.h"
#include "trace/calib_list.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

static int under_valgrind; /* PF_UNDER_VALGRIND, set by make check-valgrind */

/* Trace argv; assert the tracer itself succeeded. */
static int vtrace(struct pflops_mix *m, const struct pflops_trace_opts *o, struct pft_stats *st, char **argv)
{
	int status = -1, rc;
	struct pflops_error err = { 0 };
	struct pflops_trace_opts opts = o ? *o : (struct pflops_trace_opts){ 0 };

	opts.stats = st;
	memset(m, 0, sizeof *m);
	rc = pft_run(argv, &opts, m, &status, &err);
	if (rc)
		print_error("trace %s: %s\n", argv[0], err.msg);
	assert_int_equal(rc, 0);
	return status;
}

static int trace(struct pflops_mix *m, const struct pflops_trace_opts *o, struct pft_stats *st, ...)
{
	char *argv[16];
	va_list ap;
	int n = 0;

	va_start(ap, st);
	while (n < 15 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return vtrace(m, o, st, argv);
}

/* sum of one counter array over all cells */
static uint64_t total(uint64_t a[PFLOPS_NPREC][PFLOPS_NWIDTH][PFLOPS_NOP])
{
	uint64_t s = 0;
	for (int p = 0; p < PFLOPS_NPREC; p++)
		for (int w = 0; w < PFLOPS_NWIDTH; w++)
			for (int o = 0; o < PFLOPS_NOP; o++)
				s += a[p][w][o];
	return s;
}

/* ------------------------------------------------------------------ */
/* calib_fp: one instruction class per kernel, N iterations            */

struct expect {
	const char *kernel;
	int prec, width, op;
	unsigned full;	 /* lanes of the width */
	unsigned active; /* lanes the mask lets through */
	int masked;
	unsigned flops; /* per instruction, by hand */
};

enum {
	X87 = PFLOPS_X87,
	HP = PFLOPS_HP,
	BF = PFLOPS_BF16,
	SP = PFLOPS_SP,
	DP = PFLOPS_DP,
	S = PFLOPS_SCALAR,
	X = PFLOPS_W128,
	Y = PFLOPS_W256,
	Z = PFLOPS_W512,
	ADD = PFLOPS_OP_ADD,
	MUL = PFLOPS_OP_MUL,
	DIV = PFLOPS_OP_DIV,
	SQRT = PFLOPS_OP_SQRT,
	RCP = PFLOPS_OP_RCP,
	FMA = PFLOPS_OP_FMA,
	DPP = PFLOPS_OP_DPP,
	MM = PFLOPS_OP_MINMAX,
	CX = PFLOPS_OP_CMPLX
};

#define EXPECT_(k, p, w, o, full, act, masked, flops, chk) \
	{ #k, PFLOPS_##p, PFLOPS_##w, PFLOPS_OP_##o, full, act, masked, flops },
static const struct expect expects[] = { CALIB_FP_TRUTH(EXPECT_) };
#undef EXPECT_

static void check_kernel(const struct expect *e, int single_step)
{
	struct pflops_mix m;
	struct pflops_trace_opts o = { .single_step = single_step };
	struct pft_stats st;
	char n[16];
	int status;

	if (!calib_runs("test_trace", e->kernel))
		return;
	snprintf(n, sizeof n, "%d", N);
	status = trace(&m, &o, &st, prog("calib_fp"), e->kernel, n, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		print_error("%s: status 0x%x\n", e->kernel, status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (m.insts[e->prec][e->width][e->op] != N ||
	    (!under_valgrind && m.lanes_active[e->prec][e->width][e->op] != (uint64_t)N * e->active))
		print_error("%s: insts %lu active %lu\n", e->kernel, (unsigned long)m.insts[e->prec][e->width][e->op],
			    (unsigned long)m.lanes_active[e->prec][e->width][e->op]);
	assert_int_equal(m.insts[e->prec][e->width][e->op], N);
	assert_int_equal(m.lanes_full[e->prec][e->width][e->op], (uint64_t)N * e->full);
	assert_int_equal(m.masked[e->prec][e->width][e->op], e->masked ? N : 0);
	assert_int_equal(total(m.insts), N); /* freestanding: nothing else */
	assert_int_equal(st.desync, 0);
	if (e->masked && under_valgrind) {
		/* valgrind's CPUID hides AVX-512, so the XSAVE layout is
		 * unknown: the tracer must say it could not read the masks */
		assert_true(st.mask_unknown > 0);
		return;
	}
	assert_int_equal(st.mask_unknown, 0);
	assert_int_equal(m.lanes_active[e->prec][e->width][e->op], (uint64_t)N * e->active);
	assert_int_equal(pflops_mix_flops(&m, -1), (uint64_t)N * e->flops);
}

static void test_every_class(void **state)
{
	(void)state;
	/* under valgrind every 8th kernel, to keep the run short */
	for (size_t i = 0; i < sizeof expects / sizeof expects[0]; i += under_valgrind ? 8 : 1)
		check_kernel(&expects[i], 0);
}

/* The reference mode (a stop per instruction) must agree exactly. */
static void test_single_step_agrees(void **state)
{
	static const char *const k[] = { "vaddpd_z_k1", "vfmulcph_z_k1", "fmul", "kmask_in_block", "calls" };
	struct pflops_mix a, b;
	struct pflops_trace_opts o = { .single_step = 1 };
	struct pflops_trace_opts all = { .count_all = 1 }; /* the instruction total too */
	struct pft_stats sa, sb;

	(void)state;
	/* Under valgrind the program runs under valgrind until its exec;
	 * valgrind 3.19 there dies of an internal assertion (VEX
	 * chainXDirect_AMD64) in one of these runs, so the mixes differ. */
	if (under_valgrind)
		skip();
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
		if (!calib_runs("test_single_step_agrees", k[i]))
			continue;
		trace(&a, &all, &sa, prog("calib_fp"), k[i], "300", NULL);
		trace(&b, &o, &sb, prog("calib_fp"), k[i], "300", NULL);
		assert_memory_equal(&a, &b, sizeof a);
		/* and the block mode really stopped less often (not where
		 * k1 is written in the block: that block is stepped) */
		if (strcmp(k[i], "kmask_in_block"))
			assert_true(sa.stops * 2 < sb.stops);
	}
}

/* k1 rewritten inside the loop: k1 = i & 0xff for i = N..1 */
static void test_mask_written_in_block(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;
	uint64_t active = 0;

	(void)state;
	if (!calib_runs("test_mask_written_in_block", "kmask_in_block"))
		skip();
	for (long i = 1; i <= N; i++)
		active += (uint64_t)__builtin_popcountl(i & 0xff);
	trace(&m, NULL, &st, prog("calib_fp"), "kmask_in_block", "1000", NULL);
	assert_int_equal(m.insts[DP][Z][ADD], N);
	assert_int_equal(m.masked[DP][Z][ADD], N);
	assert_int_equal(m.lanes_full[DP][Z][ADD], 8 * N);
	if (under_valgrind)
		skip();
	assert_int_equal(m.lanes_active[DP][Z][ADD], active);
}

/* The counter increment must not change flags a later block reads. */
static void test_flags_live(void **state)
{
	struct pflops_trace_opts o[] = { { .engine = PFT_ENGINE_STOP }, { .engine = PFT_ENGINE_CACHE } };
	struct pflops_mix m;
	struct pft_stats st;
	uint64_t even = 0, even5 = 0;

	(void)state;
	for (long i = N - 1; i >= 1; i--)
		even += !(__builtin_popcountl(i & 0xff) & 1);
	for (long j = 1; j < N; j++)
		even5 += !(__builtin_popcountl((5 * j) & 0xff) & 1);
	for (int k = 0; k < 2; k++) {
		trace(&m, &o[k], &st, prog("calib_fp"), "flags_live", "1000", NULL);
		assert_int_equal(m.insts[DP][X][ADD], N);
		assert_int_equal(m.insts[DP][X][MUL], even);
		trace(&m, &o[k], &st, prog("calib_fp"), "flags_rep", "1000", NULL);
		assert_int_equal(m.insts[DP][X][ADD], N);
		assert_int_equal(m.insts[DP][X][MUL], even5);
	}
}

/* Indirect calls through a register, RIP-relative memory, an indexed
 * table and the stack; and a program using %gs itself. */
static void test_indirect_and_gs(void **state)
{
	struct pflops_trace_opts o[] = { { .engine = PFT_ENGINE_STOP }, { .engine = PFT_ENGINE_CACHE } };
	struct pflops_mix m;
	struct pft_stats st;
	int s;

	(void)state;
	for (int k = 0; k < 2; k++) {
		trace(&m, &o[k], &st, prog("calib_fp"), "indirect", "1000", NULL);
		assert_int_equal(m.insts[DP][X][ADD], N);
		assert_int_equal(m.insts[DP][X][MUL], 4 * N);
		s = trace(&m, &o[k], &st, prog("calib_gs"), "1000", NULL);
		assert_true(WIFEXITED(s));
		assert_int_equal(WEXITSTATUS(s), 0); /* it saw its own %gs */
		assert_int_equal(m.insts[DP][Y][ADD], N);
	}
	assert_true(st.nocache[PFT_NC_GS] >= 1);
}

static void test_calls_and_extras(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;

	(void)state;
	/* direct call + call through a pointer, each one vaddpd ymm */
	trace(&m, NULL, &st, prog("calib_fp"), "calls", "1000", NULL);
	assert_int_equal(m.insts[DP][Y][ADD], 2 * N);
	assert_int_equal(total(m.insts), 2 * N);
	trace(&m, NULL, &st, prog("calib_fp"), "vinsertf128", "1000", NULL);
	assert_int_equal(m.extra[PFLOPS_X_VINSERTF128], N);
	assert_int_equal(total(m.insts), 0);
	trace(&m, NULL, &st, prog("calib_fp"), "vandpd_y", "1000", NULL);
	assert_int_equal(m.extra[PFLOPS_X_256_NONFP], N);
	assert_int_equal(total(m.insts), 0);
}

/* Integer SIMD, moves, logic, compares, conversions: no FLOP.  The loop
 * body is 8 instructions + dec + jnz, so N more iterations retire 10N
 * more instructions (count_all); by default its copy has no count, so
 * they add none (and the stats say the total is partial). */
static void test_zero_flops_and_total(void **state)
{
	struct pflops_trace_opts all = { .count_all = 1 };
	struct pflops_mix a, b;
	struct pft_stats st;

	(void)state;
	if (!calib_runs("test_zero_flops_and_total", "intloop"))
		skip();
	trace(&a, &all, &st, prog("calib_fp"), "intloop", "1000", NULL);
	assert_int_equal(st.cache_nocount, 0);
	trace(&b, &all, &st, prog("calib_fp"), "intloop", "2000", NULL);
	assert_int_equal(total(a.insts), 0);
	assert_int_equal(total(b.insts), 0);
	assert_int_equal(pflops_mix_flops(&b, -1), 0);
	assert_int_equal(b.total_insts - a.total_insts, 10 * N);

	trace(&a, NULL, &st, prog("calib_fp"), "intloop", "1000", NULL);
	trace(&b, NULL, &st, prog("calib_fp"), "intloop", "2000", NULL);
	assert_true(st.cache_nocount > 0);
	assert_true(st.cache_runs < N); /* (the loop's runs are not among them) */
	assert_int_equal(pflops_mix_flops(&b, -1), 0);
	assert_true(b.total_insts < a.total_insts + 10 * N);

	/* PFLOPS_TRACE_COUNT=all as count_all; a bad value is an error
	 * that names it */
	setenv("PFLOPS_TRACE_COUNT", "all", 1);
	trace(&a, NULL, &st, prog("calib_fp"), "intloop", "1000", NULL);
	trace(&b, NULL, &st, prog("calib_fp"), "intloop", "2000", NULL);
	unsetenv("PFLOPS_TRACE_COUNT");
	assert_int_equal(st.cache_nocount, 0);
	assert_int_equal(b.total_insts - a.total_insts, 10 * N);
	setenv("PFLOPS_TRACE_COUNT", "some", 1);
	{
		char *argv[] = { (char *)prog("calib_fp"), "intloop", "10", NULL };
		struct pflops_trace_opts o = { .stats = &st };
		struct pflops_error err = { 0 };
		int status = -1;
		int rc = pft_run(argv, &o, &b, &status, &err);
		unsetenv("PFLOPS_TRACE_COUNT");
		assert_int_equal(rc, PFLOPS_EINVAL);
		assert_non_null(strstr(err.msg, "PFLOPS_TRACE_COUNT='some'"));
	}
}

static void test_exit_status(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;
	int s;

	(void)state;
	s = trace(&m, NULL, &st, prog("calib_fp"), "addpd", "10", "42", NULL);
	assert_true(WIFEXITED(s));
	assert_int_equal(WEXITSTATUS(s), 42);
	s = trace(&m, NULL, &st, prog("calib_fp"), "no_such_kernel", "10", NULL);
	assert_int_equal(WEXITSTATUS(s), 101);
}

static void test_cannot_start(void **state)
{
	struct pflops_mix m;
	struct pflops_error err = { 0 };
	char *argv[] = { "/nonexistent/prog", NULL };
	int status = 0;

	(void)state;
	assert_int_equal(pft_run(argv, NULL, &m, &status, &err), PFLOPS_ECHILD);
	assert_non_null(strstr(err.msg, "/nonexistent/prog"));
	assert_non_null(strstr(err.msg, "No such file"));

	/* an engine that does not exist: named, with the choices */
	setenv("PFLOPS_TRACE_ENGINE", "fast", 1);
	argv[0] = (char *)prog("calib_fp");
	assert_int_equal(pft_run(argv, NULL, &m, &status, &err), PFLOPS_EINVAL);
	unsetenv("PFLOPS_TRACE_ENGINE");
	assert_non_null(strstr(err.msg, "'fast'"));
	assert_non_null(strstr(err.msg, "stop or cache"));
}

/* ------------------------------------------------------------------ */
/* C kernels: FLOPs known analytically, at -O2 and -O3 -march=native   */

static void check_c(const char *bin, const char *kernel, long n, uint64_t flops)
{
	struct pflops_mix m;
	struct pft_stats st;
	char a[16];

	snprintf(a, sizeof a, "%ld", n);
	trace(&m, NULL, &st, prog(bin), kernel, a, NULL);
	if (st.mask_unknown && under_valgrind)
		return; /* see check_kernel */
	if (pflops_mix_flops(&m, -1) != flops)
		print_error("%s %s %ld: %lu FLOPs, expected %lu\n", bin, kernel, n,
			    (unsigned long)pflops_mix_flops(&m, -1), (unsigned long)flops);
	assert_int_equal(pflops_mix_flops(&m, -1), flops);
	assert_int_equal(pflops_mix_flops(&m, PFLOPS_DP), flops);
}

static void test_c_kernels(void **state)
{
	static const char *const bins[] = { "calib_daxpy_O2", "calib_daxpy_O3" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		check_c(bins[i], "daxpy", 1003, 2 * 1003);
		check_c(bins[i], "matmul", 13, 2 * 13 * 13 * 13);
		check_c(bins[i], "matmul", 16, 2 * 16 * 16 * 16);
		/* x = 0..1002 > 1003/3 = 334: 1002 - 334 = 668 elements */
		check_c(bins[i], "cond", 1003, 2 * 668);
	}
}

/* ------------------------------------------------------------------ */
/* threads, processes, signals                                         */

static void test_threads(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;

	(void)state;
	/* threads t=0..2 run (t+1)N vaddpd ymm: 6N; main 2N vmulpd ymm */
	trace(&m, NULL, &st, prog("calib_threads"), "3", "1000", NULL);
	assert_int_equal(m.insts[DP][Y][ADD], 6 * N);
	assert_int_equal(m.insts[DP][Y][MUL], 2 * N);
	assert_int_equal(pflops_mix_flops(&m, -1), 6 * N * 4 + 2 * N * 4);
	assert_true(st.threads >= 4);
}

/* Translation requests through a futex (trace_freq.c; by default in a
 * process while it has one thread, PFLOPS_TRACE_FUTEX=1 in every one, 0
 * in none): 4 threads start 2,048 new call sites at once, through a
 * table of pointers (lookup misses) and a chain of direct calls (exits),
 * with SIGALRM every 200 us (threads stopped in a request); counted
 * exactly off, on and unset (served only before the first thread), and
 * one thread alone unset (served); under a seccomp
 * filter that kills at our futex calls, set before the threads start or
 * by one thread for all while the others ask; then a process detached
 * while its threads are in their cold start finishes right, untraced. */
static void test_futex(void **state)
{
	const int R = 3, T = 4;
	const uint64_t want = (uint64_t)(T + 1) * R * 2048; /* (+1: its own check) */
	struct pflops_mix m;
	struct pft_stats st;
	struct pflops_error err = { 0 };
	char *argv[] = { (char *)prog("calib_freq"), "run", "4", "3", NULL };
	char out[64], line[64], was[16] = "";
	int status, s, oks = 0;

	/* without futex_waitv (Linux before 5.16, valgrind) the switch
	 * does nothing: exact counts, nothing served */
	int waitv = !(syscall(SYS_futex_waitv, NULL, 0, 0, NULL, 0) < 0 && errno == ENOSYS);

	(void)state;
	if (!waitv)
		print_message("SKIP: test_futex: no futex_waitv here (Linux before 5.16, or valgrind): "
			      "requests through a futex are off, only the counts are checked\n");
	if (getenv("PFLOPS_TRACE_FUTEX"))
		snprintf(was, sizeof was, "%s", getenv("PFLOPS_TRACE_FUTEX"));
	for (int k = 0; k < 4; k++) {
		/* 0, 1, then unset (the default) with 4 threads and with the
		 * main thread alone: requests where some are to serve */
		int on = k == 1 || k == 3, nt = k == 3 ? 1 : T;
		const char *nts = k == 3 ? "1" : "4";
		if (k < 2)
			setenv("PFLOPS_TRACE_FUTEX", on ? "1" : "0", 1);
		else
			unsetenv("PFLOPS_TRACE_FUTEX");
		s = trace(&m, NULL, &st, prog("calib_freq"), "run", nts, "3", NULL);
		assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
		assert_int_equal(pflops_mix_flops(&m, -1), (uint64_t)(nt + 1) * R * 2048);
		print_message("calib_freq run %s 3, futex %s: stops %llu, served %llu (misses %llu), answered "
			      "the old way %llu, settled %llu, signals %llu\n",
			      nts,
			      k >= 2 ? "unset"
			      : on   ? "1"
				     : "0",
			      (unsigned long long)st.stops, (unsigned long long)st.freq_served,
			      (unsigned long long)st.freq_misses, (unsigned long long)st.freq_traps,
			      (unsigned long long)st.freq_settled, (unsigned long long)st.cache_signals);
		if ((on || k == 2) && !waitv) {
			assert_int_equal(st.freq_served, 0);
		} else if (on) { /* (one thread: about 1,400; the rest ahead) */
			assert_true(st.freq_served > (k == 3 ? 500u : 1000u));
			assert_true(st.freq_misses > 0 && st.freq_served > st.freq_misses);
		} else if (k == 2) {
			/* the main thread's start before its first
			 * pthread_create (about 330), none of the workers'
			 * 4 x 2,048 first calls */
			assert_true(st.freq_served > 0 && st.freq_served < 1000);
		} else {
			assert_int_equal(st.freq_served + st.freq_traps + st.freq_settled, 0);
		}
	}
	/* a seccomp filter that kills at a shared FUTEX_WAIT/WAKE, set
	 * while the switch is on: requests stop (pft_freq_off), counts
	 * exact */
	setenv("PFLOPS_TRACE_FUTEX", "1", 1);
	s = trace(&m, NULL, &st, prog("calib_freq"), "seccomp", "4", "3", NULL);
	assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
	assert_int_equal(pflops_mix_flops(&m, -1), want);
	assert_true(st.seccomp > 0 && st.cache_exits > 0);
	/* the same filter set by another thread on every thread at once
	 * (SECCOMP_FILTER_FLAG_TSYNC) while the workers ask for new code:
	 * those in a request are got out of it before the call runs, none
	 * makes a futex call after it (else SIGSYS); 5 runs, some thread
	 * running at the filter in at least one (not in all: they may all
	 * be in ptrace stops then, settled there) */
	uint64_t stopped = 0;
	for (int i = 0; i < 5; i++) {
		s = trace(&m, NULL, &st, prog("calib_freq"), "tsync", "4", "3", NULL);
		print_message("calib_freq tsync 4 3: status 0x%x, served %llu, settled %llu, stopped at the "
			      "filter %llu\n",
			      s, (unsigned long long)st.freq_served, (unsigned long long)st.freq_settled,
			      (unsigned long long)st.freq_stopped);
		assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
		assert_int_equal(pflops_mix_flops(&m, -1), want);
		assert_true(st.seccomp > 0);
		if (waitv)
			assert_true(st.freq_served > 0);
		stopped += st.freq_stopped;
	}
	if (waitv)
		assert_true(stopped > 0);
	/* the filter set by a vfork child while its parent waits in vfork
	 * (not stopped: it could not stop before the child execs) */
	s = trace(&m, NULL, &st, prog("calib_freq"), "vfork", "4", "3", NULL);
	assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
	assert_int_equal(pflops_mix_flops(&m, -1), want);
	/* detached in its cold start: 3 runs */
	snprintf(out, sizeof out, "/tmp/pft_freq_%d", (int)getpid());
	setenv("PFLOPS_TRACE_FUTEX", "1", 1);
	for (int i = 0; i < 3; i++) {
		FILE *f;
		unlink(out);
		s = trace(&m, NULL, &st, prog("calib_freq"), "daemon", "4", "3", out, NULL);
		assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
		for (int w = 0; w < 200 && access(out, F_OK); w++)
			usleep(50000);
		usleep(50000);
		f = fopen(out, "r");
		if (f && fgets(line, sizeof line, f) && !strcmp(line, "ok 24576\n"))
			oks++;
		else
			print_error("calib_freq daemon: %s", f ? line : "no result\n");
		if (f)
			fclose(f);
	}
	unlink(out);
	assert_int_equal(oks, 3);
	/* another value: an error naming it */
	setenv("PFLOPS_TRACE_FUTEX", "yes", 1);
	memset(&m, 0, sizeof m);
	assert_int_equal(pft_run(argv, NULL, &m, &status, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "PFLOPS_TRACE_FUTEX"));
	if (*was) /* (test_trace_futex.sh: PFLOPS_TRACE_FUTEX=1 for every test) */
		setenv("PFLOPS_TRACE_FUTEX", was, 1);
	else
		unsetenv("PFLOPS_TRACE_FUTEX");
}

static void test_fork(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;
	int s;

	(void)state;
	/* child N vaddps xmm, parent 2N vmulps xmm, parent exits 7 */
	s = trace(&m, NULL, &st, prog("calib_fork"), "fork", "1000", NULL);
	assert_true(WIFEXITED(s));
	assert_int_equal(WEXITSTATUS(s), 7);
	assert_int_equal(m.insts[SP][X][ADD], N);
	assert_int_equal(m.insts[SP][X][MUL], 2 * N);
	assert_int_equal(pflops_mix_flops(&m, -1), 3 * N * 4);

	/* vfork + exec of calib_fp vaddpd_y N; parent N vmulps xmm */
	s = trace(&m, NULL, &st, prog("calib_fork"), "vfork", "1000", NULL);
	assert_int_equal(WEXITSTATUS(s), 0);
	assert_int_equal(m.insts[DP][Y][ADD], N);
	assert_int_equal(m.insts[SP][X][MUL], N);
	assert_int_equal(pflops_mix_flops(&m, -1), N * 4 + N * 4);

	/* exec in place: calib_fp vsqrtpd_y N, exit 9 */
	s = trace(&m, NULL, &st, prog("calib_fork"), "exec", "1000", NULL);
	assert_int_equal(WEXITSTATUS(s), 9);
	assert_int_equal(m.insts[DP][Y][SQRT], N);
	assert_int_equal(pflops_mix_flops(&m, -1), N * 4);
}

static void test_crash(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;
	char buf[128];
	int s;

	(void)state;
	s = trace(&m, NULL, &st, prog("calib_signal"), "crash", "1000", NULL);
	assert_true(WIFSIGNALED(s));
	assert_int_equal(WTERMSIG(s), SIGSEGV);
	assert_int_equal(m.insts[DP][X][ADD], N);
	pft_status_str(s, buf, sizeof buf);
	assert_non_null(strstr(buf, "killed by signal 11"));
	pft_status_str(3 << 8, buf, sizeof buf);
	assert_string_equal(buf, "exited with status 3");
}

static void test_signal_handler(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;

	(void)state;
	/* handler: N vmulpd xmm; main: N vaddpd xmm */
	trace(&m, NULL, &st, prog("calib_signal"), "handler", "1000", NULL);
	assert_int_equal(m.insts[DP][X][ADD], N);
	assert_int_equal(m.insts[DP][X][MUL], N);
}

/* A signal-heavy run: a 1 ms timer interrupts the program anywhere (in
 * a block, in the cache's own code); the count stays exact.  LOOPS and
 * ALARMS come from the program itself (file OUT). */
static void signal_run(const struct pflops_trace_opts *o, const char *mode, const char *nthreads, const char *k)
{
	struct pflops_mix m;
	struct pft_stats st;
	char out[] = "/tmp/pflops_alarmsXXXXXX";
	long loops = -1, alarms = -1;
	int fd = mkstemp(out);
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	if (nthreads)
		trace(&m, o, &st, prog("calib_signal"), mode, nthreads, k, out, NULL);
	else
		trace(&m, o, &st, prog("calib_signal"), mode, k, out, NULL);
	f = fopen(out, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld", &loops, &alarms), 2);
	fclose(f);
	unlink(out);
	assert_true(alarms >= atol(k)); /* else the test proved nothing */
	assert_int_equal(m.insts[DP][X][ADD], 8 * (uint64_t)loops);
	assert_int_equal(m.insts[DP][X][DIV], (uint64_t)alarms);
	assert_int_equal(total(m.insts), 8 * (uint64_t)loops + (uint64_t)alarms);
	if (o->engine == PFT_ENGINE_CACHE && !under_valgrind) {
		assert_true(st.cache_signals > 0);
		/* most of a call/return loop is the cache's lookup code:
		 * signals there are stepped out of it first */
		if (!strcmp(mode, "calls"))
			assert_true(st.roll_steps > 0);
	}
}

static void test_async_signals(void **state)
{
	struct pflops_trace_opts stop = { .engine = PFT_ENGINE_STOP };
	struct pflops_trace_opts cache = { .engine = PFT_ENGINE_CACHE };
	struct pflops_mix m;
	struct pft_stats st;
	char out[] = "/tmp/pflops_alarmsXXXXXX";
	long alarms = -1;
	int fd = mkstemp(out);
	FILE *f;

	(void)state;
	/* a fixed loop count under the stopping engine (slow enough for
	 * the timer to fire) */
	assert_true(fd >= 0);
	close(fd);
	trace(&m, &stop, &st, prog("calib_signal"), "timer", "400000", out, NULL);
	f = fopen(out, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld", &alarms), 1);
	fclose(f);
	unlink(out);
	assert_true(alarms > 0);
	assert_int_equal(m.insts[DP][X][ADD], 400000);
	assert_int_equal(m.insts[DP][X][DIV], (uint64_t)alarms);
	/* a fixed number of signals, both engines, one thread and four */
	signal_run(&stop, "alarms", NULL, "20");
	signal_run(&cache, "alarms", NULL, under_valgrind ? "20" : "200");
	signal_run(&cache, "calls", NULL, under_valgrind ? "20" : "300");
	signal_run(&stop, "threads", "3", "20");
	signal_run(&cache, "threads", "3", under_valgrind ? "20" : "200");
}

/* The progress callback runs while the program computes in the cache,
 * with the counts so far (the program takes 100 timer signals of 1 ms:
 * at least 100 ms, whatever the speed). */
struct prog_seen {
	int calls;
	uint64_t last;
	int backwards;
};

static void on_progress(void *arg, const struct pflops_mix *m, const struct pft_stats *st)
{
	struct prog_seen *p = arg;
	uint64_t f = pflops_mix_flops(m, -1);

	(void)st;
	p->backwards |= f < p->last;
	p->last = f;
	p->calls++;
}

static void test_progress(void **state)
{
	struct prog_seen seen = { 0 };
	struct pflops_trace_opts o = {
		.engine = PFT_ENGINE_CACHE, .progress = on_progress, .progress_arg = &seen, .progress_ms = 10
	};
	struct pflops_mix m;
	struct pft_stats st;
	char out[] = "/tmp/pflops_alarmsXXXXXX";
	int fd = mkstemp(out);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	trace(&m, &o, &st, prog("calib_signal"), "alarms", "100", out, NULL);
	unlink(out);
	assert_true(seen.calls >= 2);
	assert_false(seen.backwards);
	assert_true(seen.last > 0 && seen.last <= pflops_mix_flops(&m, -1));
}

/* The waits while the program runs on without a stop (trace_wait.c),
 * with the timer signal (opts.wait_signal, as papi_flops_run) and without
 * (sigtimedwait): progress lines at their interval, the held CPU let go
 * and taken again at the next stop (stats.pins), the signal's
 * disposition and this thread's mask as they were afterwards; an
 * interrupt flag that a thread sets, no signal sent, ends the run
 * within a wait's timeout (250 ms). */
static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static volatile sig_atomic_t quiet_flag;

static void *flag_later(void *arg)
{
	(void)arg;
	usleep(300000);
	quiet_flag = SIGKILL | PFLOPS_INTERRUPT_FORWARD;
	return NULL;
}

static void test_quiet_waits(void **state)
{
	(void)state;
	for (int tick = 0; tick < 2; tick++) {
		struct prog_seen seen = { 0 };
		struct pflops_trace_opts o = { .engine = PFT_ENGINE_CACHE,
					       .progress = on_progress,
					       .progress_arg = &seen,
					       .progress_ms = 20,
					       .wait_signal = tick ? SIGRTMIN : 0 };
		struct pflops_mix m;
		struct pft_stats st;
		struct sigaction before, after;
		sigset_t mb, ma;
		pthread_t th;
		double t;

		sigaction(SIGRTMIN, NULL, &before);
		pthread_sigmask(SIG_SETMASK, NULL, &mb);
		/* 800 million dependent adds: 0.3 s or more in the cache */
		t = now_s();
		trace(&m, &o, &st, prog("calib_fp"), "addsd", "800000000", NULL);
		t = now_s() - t;
		assert_int_equal(pflops_mix_flops(&m, -1), 800000000);
		print_message("wait %s: %.3f s, %d progress calls, %llu stops, %llu holds\n", tick ? "tick" : "sigchld",
			      t, seen.calls, (unsigned long long)st.stops, (unsigned long long)st.pins);
		/* a line every 20 to 40 ms; an eighth of that at least (a
		 * CI run at load 10 to 20 on 2 CPUs: the tracer waits its
		 * turn for the CPU) */
		assert_true(seen.calls >= (int)(t * 1000 / 160));
		assert_false(seen.backwards);
		if (st.pins) /* held (2 CPUs or more): let go, held again at the exit */
			assert_true(st.pins >= 2);
		sigaction(SIGRTMIN, NULL, &after);
		pthread_sigmask(SIG_SETMASK, NULL, &ma);
		assert_ptr_equal((void *)after.sa_handler, (void *)before.sa_handler);
		/* (glibc adds SA_RESTORER to what it installs) */
		assert_int_equal(after.sa_flags & ~0x04000000, before.sa_flags & ~0x04000000);
		assert_int_equal(sigismember(&ma, SIGRTMIN), sigismember(&mb, SIGRTMIN));
		assert_int_equal(sigismember(&ma, SIGCHLD), sigismember(&mb, SIGCHLD));

		/* 30 billion: 15 s or more, ended by the flag after 0.3 s
		 * (within 8 s: a loaded machine) */
		memset(&o, 0, sizeof o);
		o.engine = PFT_ENGINE_CACHE;
		o.interrupt = &quiet_flag;
		o.wait_signal = tick ? SIGRTMIN : 0;
		quiet_flag = 0;
		assert_int_equal(pthread_create(&th, NULL, flag_later, NULL), 0);
		t = now_s();
		trace(&m, &o, &st, prog("calib_fp"), "addsd", "30000000000", NULL);
		t = now_s() - t;
		pthread_join(th, NULL);
		print_message("wait %s: interrupted after %.3f s\n", tick ? "tick" : "sigchld", t);
		assert_int_equal(st.interrupted, SIGKILL);
		assert_true(t < 8.0);
		assert_true(pflops_mix_flops(&m, -1) > 0);
		assert_true(pflops_mix_flops(&m, -1) < 30000000000ull);
	}
}

/* ------------------------------------------------------------------ */
/* region                                                              */

static void test_region(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;
	struct pflops_trace_opts o = { .count_all = 1 }; /* (total_insts too) */

	(void)state;
	/* in libcalibk.so, called twice: 2N vaddpd ymm + 2N vmulpd xmm from
	 * the nested calib_helper; nothing of outside() or main_kernel() */
	o.region = "calib_kernel";
	trace(&m, &o, &st, prog("calib_region"), "1000", NULL);
	assert_int_equal(st.region_calls, 2);
	assert_int_equal(m.insts[DP][Y][ADD], 2 * N);
	assert_int_equal(m.insts[DP][X][MUL], 2 * N);
	assert_int_equal(total(m.insts), 4 * N);

	/* a static function of the executable (.symtab): 2N vsubpd ymm;
	 * its instructions: N x (vsubpd, vsubpd, dec, jnz) + ret */
	o.region = "main_kernel";
	trace(&m, &o, &st, prog("calib_region"), "1000", NULL);
	assert_int_equal(st.region_calls, 1);
	assert_int_equal(m.insts[DP][Y][ADD], 2 * N);
	assert_int_equal(total(m.insts), 2 * N);
	assert_int_equal(m.total_insts, 4 * N + 1);

	/* never called: nothing counted, not an error */
	o.region = "no_such_function";
	trace(&m, &o, &st, prog("calib_region"), "1000", NULL);
	assert_int_equal(st.region_calls, 0);
	assert_int_equal(m.total_insts, 0);

	/* without region: everything, N vdivpd xmm from outside() too */
	trace(&m, NULL, &st, prog("calib_region"), "1000", NULL);
	assert_int_equal(m.insts[DP][X][DIV], N);
	assert_int_equal(total(m.insts), 7 * N);
}

/* Outside the region the program runs natively: the stops do not grow
 * with the work done outside it. */
static void test_region_native(void **state)
{
	struct pflops_mix m;
	struct pft_stats a, b;
	struct pflops_trace_opts o = { .region = "tkern" };

	(void)state;
	trace(&m, &o, &a, prog("calib_regionx"), "long", "1000", NULL);
	assert_int_equal(m.insts[DP][Y][ADD], 100);
	assert_int_equal(pflops_mix_flops(&m, -1), 400);
	trace(&m, &o, &b, prog("calib_regionx"), "long", "1000000", NULL);
	assert_int_equal(a.region_calls, 1);
	assert_int_equal(b.region_calls, 1);
	assert_int_equal(m.insts[DP][Y][ADD], 100);
	assert_int_equal(total(m.insts), 100);
	assert_true(b.native_resumes > 0);
	/* 2 million blocks ran outside; a stop each would be 2e6 */
	assert_true(b.stops < a.stops + 100);
}

/* Recursion, longjmp and a C++ exception out of the region, and threads
 * calling it beside threads working outside. */
static void test_region_exits(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;
	struct pflops_trace_opts o = { 0 };

	(void)state;
	/* 2 outermost calls of 4 nested levels */
	o.region = "rkern";
	trace(&m, &o, &st, prog("calib_regionx"), "recurse", "1000", "3", NULL);
	assert_int_equal(st.region_calls, 2);
	assert_int_equal(m.insts[DP][Y][ADD], 8 * N);
	assert_int_equal(total(m.insts), 8 * N);

	o.region = "jkern";
	trace(&m, &o, &st, prog("calib_regionx"), "longjmp", "1000", NULL);
	assert_int_equal(st.region_calls, 3);
	assert_int_equal(m.insts[DP][Y][MUL], 3 * N);
	assert_int_equal(total(m.insts), 3 * N); /* no vdivpd after it */

	o.region = "ekern";
	trace(&m, &o, &st, prog("calib_regioncxx"), "1000", NULL);
	assert_int_equal(st.region_calls, 3);
	assert_int_equal(m.insts[DP][Y][ADD], 3 * N);
	assert_int_equal(total(m.insts), 3 * N);

	/* every call counts whole; the other threads' outside() work during
	 * a call counts too (the window rule, docs/trace-engine.md): how
	 * much depends on the timing, but each FLOP is some thread's */
	o.region = "tkern";
	trace(&m, &o, &st, prog("calib_regionx"), "threads", "4", "1000", NULL);
	assert_int_equal(st.region_calls, 4);
	assert_int_equal(m.insts[DP][Y][ADD], 4 * N);
	assert_int_equal(total(m.insts), 4 * N + m.insts[DP][X][DIV]);
	uint64_t sum = st.region_more_flops;
	for (uint32_t i = 0; i < st.region_nthreads; i++)
		sum += st.region_thread[i].flops;
	assert_int_equal(sum, pflops_mix_flops(&m, -1));
	assert_true(st.region_busy_flops <= sum - 16 * N);
}

/* Windows that open while other threads reach F's int3: 4 threads meet
 * at a barrier and call tkern(100) at once, 400 rounds.  A thread
 * interrupted to join a window just after it ran the int3 has its
 * SIGTRAP still queued; it used to be moved from that stop to a block
 * decoded one byte into tkern, and then die of the SIGTRAP (exit 133,
 * most runs of this program). */
static void test_region_storm(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;
	struct pflops_trace_opts o = { .region = "tkern" };
	int status;

	(void)state;
	status = trace(&m, &o, &st, prog("calib_regionx"), "storm", "4", "400", "100", NULL);
	assert_int_equal(status, 0);
	assert_int_equal(st.region_calls, 1600);
	assert_int_equal(m.insts[DP][Y][ADD], 160000);
	assert_int_equal(total(m.insts), 160000);
}

/* Threads made before the call do its work (issue 19 item 1): two
 * pthread workers waiting on a condition variable run both calls of
 * pool_kernel(N), 2 FLOPs per element: 4N in all, 2N each, none by the
 * caller, none said to be possibly unrelated. */
static void test_region_pool(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;
	struct pflops_trace_opts o = { .region = "pool_kernel" };
	int pool = 0;

	(void)state;
	trace(&m, &o, &st, prog("calib_pool"), "pool", "100000", NULL);
	assert_int_equal(st.region_calls, 2);
	assert_int_equal(pflops_mix_flops(&m, -1), 400000);
	assert_int_equal(st.region_busy_threads, 0);
	for (uint32_t i = 0; i < st.region_nthreads; i++) {
		const struct pft_region_thread *e = &st.region_thread[i];
		if (e->role == PFT_RT_CALLER) {
			assert_int_equal(e->flops, 0);
		} else {
			assert_int_equal(e->role, PFT_RT_POOL);
			assert_int_equal(e->flops, 200000);
			pool++;
		}
	}
	assert_int_equal(pool, 2);
}

/* Where a code-cache chunk goes: within reach of the code, in a gap,
 * preferring below the code; libraries sit near the top of user space
 * and [vsyscall] lies above it. */
static void test_gap_near(void **state)
{
	struct pft_map v[] = {
		{ 0x400000, 0x401000, 0, 1, 0, 1, 0, 0, 0, NULL },	       /* non-PIE text */
		{ 0x7ff6cb800000, 0x7ff6cb900000, 0, 1, 0, 1, 0, 0, 0, NULL }, /* a library */
		{ 0x7ff6cba00000, 0x7ff6cbb00000, 0, 1, 1, 0, 0, 0, 0, NULL },
		{ 0x7ffc00000000, 0x7ffc00100000, 0, 1, 1, 0, 0, 0, 0, NULL }, /* stack */
		{ 0xffffffffff600000ULL, 0xffffffffff601000ULL, 0, 0, 0, 1, 0, 0, 0, NULL },
	};
	struct pft_maps m = { .v = v, .n = 5 };
	const uint64_t size = 4 << 20, reach = (1ULL << 31) - (1 << 24);
	uint64_t a;

	(void)state;
	a = pft_maps_gap_near(&m, 0x7ff6cb894000, 0x7ff6cb895000, size, reach);
	assert_true(a != 0);
	assert_true(a + size <= 0x7ff6cb800000); /* below the library */
	assert_true(0x7ff6cb895000 - a <= reach);
	/* nothing below 16 MiB: above the executable, far from its brk */
	a = pft_maps_gap_near(&m, 0x400000, 0x401000, size, reach);
	assert_true(a >= 0x401000 + (1 << 30));
	assert_true(a + size - 0x400000 <= reach);
	/* no room in reach: 0 */
	struct pft_map full[] = { { 0x1000000, 0x7ffffffff000ULL, 0, 1, 0, 1, 0, 0, 0, NULL } };
	struct pft_maps mf = { .v = full, .n = 1 };
	assert_int_equal(pft_maps_gap_near(&mf, 0x2000000, 0x2001000, size, reach), 0);
}

/* ------------------------------------------------------------------ */
/* the two engines: every counter of every calibration program          */

static int report_diff(const char *what, const struct pflops_mix *a, const struct pflops_mix *b)
{
	int bad = 0;

	for (int p = 0; p < PFLOPS_NPREC; p++)
		for (int w = 0; w < PFLOPS_NWIDTH; w++)
			for (int o = 0; o < PFLOPS_NOP; o++)
				if (a->insts[p][w][o] != b->insts[p][w][o] ||
				    a->masked[p][w][o] != b->masked[p][w][o] ||
				    a->lanes_full[p][w][o] != b->lanes_full[p][w][o] ||
				    a->lanes_active[p][w][o] != b->lanes_active[p][w][o]) {
					print_error("%s: %s/%s/%s stop %lu/%lu/%lu/%lu "
						    "cache %lu/%lu/%lu/%lu\n",
						    what, pflops_prec_name(p), pflops_width_name(w), pflops_op_name(o),
						    (unsigned long)a->insts[p][w][o], (unsigned long)a->masked[p][w][o],
						    (unsigned long)a->lanes_full[p][w][o],
						    (unsigned long)a->lanes_active[p][w][o],
						    (unsigned long)b->insts[p][w][o], (unsigned long)b->masked[p][w][o],
						    (unsigned long)b->lanes_full[p][w][o],
						    (unsigned long)b->lanes_active[p][w][o]);
					bad = 1;
				}
	for (int x = 0; x < PFLOPS_NEXTRA; x++)
		if (a->extra[x] != b->extra[x]) {
			print_error("%s: extra %d stop %lu cache %lu\n", what, x, (unsigned long)a->extra[x],
				    (unsigned long)b->extra[x]);
			bad = 1;
		}
	if (a->total_insts != b->total_insts) {
		print_error("%s: instructions stop %lu cache %lu\n", what, (unsigned long)a->total_insts,
			    (unsigned long)b->total_insts);
		bad = 1;
	}
	return bad;
}

/* Run argv under both engines and compare every counter.  Threaded
 * programs wait for each other (futex, join) a timing-dependent number
 * of instructions: there only the FP counters must agree.  The string
 * functions of libc take paths that depend on the alignment of their
 * arguments, so the runs are made without address randomization
 * (test_engines_agree). */
static void engines_agree(const char *region, int threaded, ...)
{
	struct pflops_trace_opts os = { .engine = PFT_ENGINE_STOP, .region = region };
	struct pflops_trace_opts oc = { .engine = PFT_ENGINE_CACHE, .region = region, .count_all = 1 };
	struct pflops_trace_opts of = { .engine = PFT_ENGINE_CACHE, .region = region };
	struct pft_stats ss, sc, sf;
	struct pflops_mix a, b, f;
	char *argv[16], what[256];
	int n = 0, sa, sb;
	size_t at = 0;
	va_list ap;

	va_start(ap, threaded);
	while (n < 15 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	for (int i = 0; i < n && at < sizeof what - 1; i++)
		at += (size_t)snprintf(what + at, sizeof what - at, "%s%s", i ? " " : "",
				       i ? argv[i] : strrchr(argv[0], '/') + 1);
	sa = vtrace(&a, &os, &ss, argv);
	sb = vtrace(&b, &oc, &sc, argv);
	assert_int_equal(sa, sb);
	/* counting only what FLOPs need (the default): the same but the
	 * instruction total, which is then partial */
	assert_int_equal(vtrace(&f, &of, &sf, argv), sa);
	assert_int_equal(sc.cache_nocount, 0);
	assert_true(sf.cache_nocount > 0 || !sf.cache_blocks);
	f.total_insts = a.total_insts;
	snprintf(what + at, sizeof what - at, " (fp)");
	if (report_diff(what, &a, &f))
		fail_msg("%s: the engines disagree", what);
	what[at] = 0;
	assert_int_equal(ss.engine, PFT_ENGINE_STOP);
	assert_int_equal(sc.engine, PFT_ENGINE_CACHE);
	assert_int_equal(ss.region_calls, sc.region_calls);
	assert_int_equal(sc.cache_setup_failed, 0);
	if (threaded) {
		a.total_insts = b.total_insts = 0;
	}
	if (report_diff(what, &a, &b))
		fail_msg("%s: the engines disagree", what);
	/* and the cache did the counting */
	assert_true(sc.cache_runs > 0 || region);
}

/* One-block loops, whose copies are emitted twice, one count per two
 * runs (trace_gen.c, emit_unrolled): each form of the count, odd and
 * even trip counts (the loop left from either half), the flags kept on
 * the way out (else calib_loop exits 1); the same as the stopping engine
 * and as by hand, and under a 100 us timer that interrupts either half
 * (the signal's correction: trace_signal.c). */
static uint64_t loop_runs(long reps, long n0)
{
	uint64_t runs = 0;

	for (long r = 0; r < reps; r++)
		runs += (uint64_t)(n0 + r % 5);
	return runs;
}

static void test_unrolled_loops(void **state)
{
	static const char *const kinds[] = { "cmp", "store", "shl" };
	/* (count_all: these loops have no FP, and the count is what is tested) */
	struct pflops_trace_opts cache = { .engine = PFT_ENGINE_CACHE, .count_all = 1 };
	const char *reps = under_valgrind ? "20000" : "400000";
	struct pflops_mix m;
	struct pft_stats st;
	int s, pers = personality(0xffffffff);

	(void)state;
	/* the same addresses in both engines' runs: libc's start-up
	 * instructions follow them (engines_agree compares every one) */
	assert_true(pers != -1 && personality((unsigned long)pers | ADDR_NO_RANDOMIZE) != -1);
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		char out[] = "/tmp/pflops_loopXXXXXX";
		long alarms = -1;
		int fd;
		FILE *f;

		engines_agree(NULL, 0, prog("calib_loop"), kinds[k], "2000", "7", NULL);
		s = trace(&m, &cache, &st, prog("calib_loop"), kinds[k], "2000", "8", NULL);
		assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
		assert_int_equal(m.insts[DP][X][ADD], loop_runs(2000, 8));
		assert_true(st.cache_unrolled > 0); /* else nothing here was unrolled */

		assert_true((fd = mkstemp(out)) >= 0);
		close(fd);
		s = trace(&m, &cache, &st, prog("calib_loop"), kinds[k], reps, "7", out, NULL);
		assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
		assert_non_null(f = fopen(out, "r"));
		assert_int_equal(fscanf(f, "%ld", &alarms), 1);
		fclose(f);
		unlink(out);
		assert_int_equal(m.insts[DP][X][ADD], loop_runs(atol(reps), 7));
		assert_int_equal(pflops_mix_flops(&m, -1), 2 * loop_runs(atol(reps), 7));
		assert_true(st.cache_unrolled > 0);
		if (!under_valgrind)
			assert_true(alarms >= 20 && st.cache_signals > 0); /* else it proved little */
	}
	/* the shape of PAPI's flops_validation kernel (single precision) */
	engines_agree(NULL, 0, prog("calib_loop"), "axpy", "2000", "7", NULL);
	s = trace(&m, &cache, &st, prog("calib_loop"), "axpy", "2000", "8", NULL);
	assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
	assert_int_equal(m.insts[SP][X][MUL], loop_runs(2000, 8));
	assert_int_equal(m.insts[SP][X][ADD], loop_runs(2000, 8));
	assert_true(st.cache_unrolled > 0);
	/* PFLOPS_TRACE_UNROLL=0: none unrolled, the same count; a bad value
	 * is an error that names it */
	setenv("PFLOPS_TRACE_UNROLL", "0", 1);
	s = trace(&m, &cache, &st, prog("calib_loop"), "cmp", "2000", "8", NULL);
	assert_true(WIFEXITED(s) && WEXITSTATUS(s) == 0);
	assert_int_equal(m.insts[DP][X][ADD], loop_runs(2000, 8));
	assert_int_equal(st.cache_unrolled, 0);
	setenv("PFLOPS_TRACE_UNROLL", "2", 1);
	{
		char *argv[] = { (char *)prog("calib_loop"), "cmp", "10", "8", NULL };
		struct pflops_trace_opts o = cache;
		struct pflops_error err = { 0 };
		int status = -1;
		o.stats = &st;
		assert_int_equal(pft_run(argv, &o, &m, &status, &err), PFLOPS_EINVAL);
		assert_non_null(strstr(err.msg, "PFLOPS_TRACE_UNROLL='2'"));
	}
	unsetenv("PFLOPS_TRACE_UNROLL");
}

static void test_engines_agree(void **state)
{
	static const char *const more[] = { "intloop",	      "vinsertf128",  "vandpd_y",   "bench16",
					    "kmask_in_block", "calls",	      "flags_live", "flags_rep",
					    "indirect",	      "daxpy_masked", "fma_kmix" };
	int step = under_valgrind ? 9 : 1;
	int pers = personality(0xffffffff);

	(void)state;
	/* inherited by the traced programs */
	assert_true(pers != -1 && personality((unsigned long)pers | ADDR_NO_RANDOMIZE) != -1);
	for (size_t i = 0; i < sizeof expects / sizeof expects[0]; i += step)
		if (calib_runs("test_engines_agree", expects[i].kernel))
			engines_agree(NULL, 0, prog("calib_fp"), expects[i].kernel, "300", NULL);
	for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
		if (calib_runs("test_engines_agree", more[i]))
			engines_agree(NULL, 0, prog("calib_fp"), more[i], "300", NULL);
	for (int o = 2; o <= 3; o++) {
		const char *bin = o == 2 ? "calib_daxpy_O2" : "calib_daxpy_O3";
		engines_agree(NULL, 0, prog(bin), "daxpy", "1003", NULL);
		engines_agree(NULL, 0, prog(bin), "matmul", "13", NULL);
		engines_agree(NULL, 0, prog(bin), "cond", "1003", NULL);
	}
	engines_agree(NULL, 1, prog("calib_threads"), "3", "1000", NULL);
	engines_agree(NULL, 0, prog("calib_fork"), "fork", "1000", NULL);
	engines_agree(NULL, 0, prog("calib_fork"), "vfork", "1000", NULL);
	engines_agree(NULL, 0, prog("calib_fork"), "exec", "1000", NULL);
	engines_agree(NULL, 0, prog("calib_signal"), "crash", "1000", NULL);
	engines_agree(NULL, 0, prog("calib_signal"), "handler", "1000", NULL);
	engines_agree(NULL, 0, prog("calib_jit"), "1000", NULL);
	engines_agree(NULL, 0, prog("calib_gs"), "1000", NULL);
	engines_agree(NULL, 0, prog("calib_region"), "1000", NULL);
	engines_agree("calib_kernel", 0, prog("calib_region"), "1000", NULL);
	engines_agree("main_kernel", 0, prog("calib_region"), "1000", NULL);
	engines_agree("rkern", 0, prog("calib_regionx"), "recurse", "1000", "3", NULL);
	engines_agree("jkern", 0, prog("calib_regionx"), "longjmp", "1000", NULL);
	engines_agree("pool_kernel", 1, prog("calib_pool"), "pool", "20000", NULL);
	engines_agree("ekern", 0, prog("calib_regioncxx"), "1000", NULL);
	personality((unsigned long)pers);
}

/* Translation ahead (PFLOPS_TRACE_AHEAD): a dynamically linked C++
 * program (PLT calls into libstdc++ and libc, an exception) counts the
 * same with it, without it and under the stopping engine; with it,
 * blocks translated ahead run without a first stop and the targets of
 * returns and of PLT slots are in the lookup table before they are
 * reached, so it stops less. */
static void test_cache_ahead(void **state)
{
	struct pflops_trace_opts os = { .engine = PFT_ENGINE_STOP };
	struct pflops_trace_opts oc = { .engine = PFT_ENGINE_CACHE };
	struct pflops_error err = { 0 };
	struct pft_stats s0, s1, ss;
	struct pflops_mix m0, m1, ms;
	char *argv[] = { (char *)prog("calib_regioncxx"), "1000", NULL };
	int st0, st1, sts, status, rc;
	int pers = personality(0xffffffff);
	char dflt[16];

	(void)state;
	/* the same addresses in every run: the loader's own work depends
	 * on them (inherited by the traced programs) */
	assert_true(pers != -1 && personality((unsigned long)pers | ADDR_NO_RANDOMIZE) != -1);
	/* the variable in every run, its value as long: the loader's work
	 * depends on the environment's size */
	snprintf(dflt, sizeof dflt, "%d", PFT_AHEAD);
	assert_int_equal(strlen(dflt), 2);
	setenv("PFLOPS_TRACE_AHEAD", "00", 1);
	st0 = vtrace(&m0, &oc, &s0, argv);
	sts = vtrace(&ms, &os, &ss, argv);
	setenv("PFLOPS_TRACE_AHEAD", dflt, 1);
	st1 = vtrace(&m1, &oc, &s1, argv);
	unsetenv("PFLOPS_TRACE_AHEAD");
	assert_int_equal(st0, sts);
	assert_int_equal(st1, sts);
	/* every instruction the same with and without; every FP cell as
	 * the stopping engine counts it (its total differs by 8 of 1.7
	 * million on this dynamically linked program, with or without
	 * translation ahead; the static calibration programs' totals agree
	 * in test_engines_agree) */
	assert_int_equal(m0.total_insts, m1.total_insts);
	m0.total_insts = m1.total_insts = ms.total_insts;
	if (report_diff("calib_regioncxx, cache without ahead vs stop", &m0, &ms) ||
	    report_diff("calib_regioncxx, cache with ahead vs stop", &m1, &ms))
		fail_msg("translation ahead changed the counts");
	assert_int_equal(ms.insts[DP][Y][ADD], 3 * 1000); /* 3 calls of ekern */
	assert_int_equal(s0.ahead_blocks, 0);
	assert_true(s1.ahead_blocks > 100);
	print_message("calib_regioncxx: stops %llu -> %llu, exits %llu -> %llu, lookup misses %llu -> %llu, "
		      "%llu blocks ahead\n",
		      (unsigned long long)s0.stops, (unsigned long long)s1.stops, (unsigned long long)s0.cache_exits,
		      (unsigned long long)s1.cache_exits, (unsigned long long)s0.ibl_misses,
		      (unsigned long long)s1.ibl_misses, (unsigned long long)s1.ahead_blocks);
	/* first runs of exits and lookup misses, with or without a stop
	 * (PFLOPS_TRACE_FUTEX=1 serves them by request) */
	assert_true(2 * (s1.cache_exits + s1.freq_served - s1.freq_misses) <
		    s0.cache_exits + s0.freq_served - s0.freq_misses);
	assert_true(s1.ibl_misses + s1.freq_misses < s0.ibl_misses + s0.freq_misses);
	assert_true(s1.stops + s1.freq_served < s0.stops + s0.freq_served);

	/* a value that is no number of blocks: an error naming it */
	setenv("PFLOPS_TRACE_AHEAD", "lots", 1);
	memset(&m0, 0, sizeof m0);
	rc = pft_run(argv, &oc, &m0, &status, &err);
	unsetenv("PFLOPS_TRACE_AHEAD");
	assert_int_equal(rc, PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "PFLOPS_TRACE_AHEAD='lots'"));
	personality((unsigned long)pers);
}

/* Translation ahead skips code far back (pft_xlate_ahead's edge_chance:
 * a branch 64 KiB or more back goes to code split off as unlikely):
 * calib_far's hot function branches back, never taken, to a chain of 16
 * blocks 64 KiB before it ("far") or right before it ("near"); the near
 * chain is translated ahead (its head at the backward branch's chance,
 * then fall-throughs while the chance stays at 1/8 or more), the far one
 * not.  Both count every instruction, as the stopping engine does. */
static void test_cache_far(void **state)
{
	struct pflops_trace_opts os = { .engine = PFT_ENGINE_STOP };
	struct pflops_trace_opts oc = { .engine = PFT_ENGINE_CACHE, .count_all = 1 };
	struct pft_stats sf, sn, ss;
	struct pflops_mix mf, mn, ms;
	const char *far[] = { "far", "near" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(trace(&ms, &os, &ss, prog("calib_far"), far[i], NULL), 0);
		assert_int_equal(trace(i ? &mn : &mf, &oc, i ? &sn : &sf, prog("calib_far"), far[i], NULL), 0);
		assert_int_equal((i ? &mn : &mf)->total_insts, ms.total_insts);
		assert_true(ms.total_insts > 4 * 1000);
	}
	print_message("calib_far: blocks decoded far %llu, near %llu; ahead %llu, %llu\n",
		      (unsigned long long)sf.blocks_decoded, (unsigned long long)sn.blocks_decoded,
		      (unsigned long long)sf.ahead_blocks, (unsigned long long)sn.ahead_blocks);
	/* the near chain's head at 80/256, then 7 fall-throughs of 225/256
	 * each while the product stays at 1/8 or more */
	assert_true(sn.ahead_blocks >= sf.ahead_blocks + 8);
}

/* What the cache does, seen in its statistics: a hot loop stops a few
 * times in all, indirect branches find their targets in the table,
 * masked blocks run from copies that stop at their end (the opmasks
 * read there), code that changes is dropped. */
static void test_cache_stats(void **state)
{
	struct pflops_trace_opts o = { .engine = PFT_ENGINE_CACHE };
	struct pft_stats st;
	struct pflops_mix m;

	(void)state;
	if (calib_runs("test_cache_stats", "bench16")) {
		trace(&m, &o, &st, prog("calib_fp"), "bench16", "200000", NULL);
		assert_int_equal(m.insts[DP][Z][FMA], 8 * 200000);
		assert_true(st.stops < 100); /* 200000 loop iterations */
		assert_true(st.cache_runs >= 200000);
		assert_true(st.cache_links > 0);
	}

	trace(&m, &o, &st, prog("calib_fp"), "calls", "2000", NULL);
	assert_int_equal(m.insts[DP][Y][ADD], 2 * 2000);
	assert_true(st.ibl_misses < 10); /* 4000 returns, 2000 calls via a pointer */
	/* translation ahead makes fall-throughs next: some of their jumps
	 * become nops (the start-up's thousands of copies) */
	print_message("calls: links %llu, falling through %llu\n", (unsigned long long)st.cache_links,
		      (unsigned long long)st.cache_falls);
	assert_true(st.cache_falls > 0 && st.cache_falls < st.cache_links);

	if (calib_runs("test_cache_stats", "vaddpd_z_k1")) {
		trace(&m, &o, &st, prog("calib_fp"), "vaddpd_z_k1", "1000", NULL);
		assert_int_equal(st.nocache[PFT_NC_MASK], 0);
		/* a stop per masked run; the first one, in the block that
		 * sets k1 too, is stepped */
		assert_true(st.mask_exits >= 999);
		assert_true(st.stops >= 1000);
	}

	/* vaddpd, then vmulpd, then vsubpd (an ADD) at the same address */
	trace(&m, &o, &st, prog("calib_jit"), "1000", NULL);
	assert_int_equal(m.insts[DP][Y][ADD], 2 * N);
	assert_int_equal(m.insts[DP][Y][MUL], N);
	assert_int_equal(total(m.insts), 3 * N);
	assert_true(st.invalidated >= 2);
}

/* Code that changes while it stays executable (trace_wprot.c): an RWX
 * page rewritten in place, a W^X JIT, a rewrite by another thread, code
 * and data on one page, a program catching its own write faults.  Both
 * engines count the true FLOPs; the cache runs the code from copies. */
/* A JIT that drops its code all the time (calib_smc churn): every
 * dropped copy leaves a tombstone in the lookup table, which is built
 * anew once they are many (trace_link.c), while a second thread looks
 * its own target up all the while and checks each call's result.
 * Before, the table filled with tombstones after about 66,000 dropped
 * entries; every insert failed from then on, and each of the helper's
 * calls stopped (99,000 lookup misses for 5 rounds, 4.9 s against
 * 0.9 s). */
static void test_table_renew(void **state)
{
	struct pflops_trace_opts o = { .engine = PFT_ENGINE_CACHE };
	struct pft_stats st;
	struct pflops_mix m;
	const char *rounds = under_valgrind ? "2" : "5";
	uint64_t r = (uint64_t)atoi(rounds);

	(void)state;
	assert_int_equal(trace(&m, &o, &st, prog("calib_smc"), "churn", rounds, NULL), 0);
	assert_int_equal(m.insts[DP][Y][ADD], 32768 * ((r + 1) / 2));
	assert_int_equal(m.insts[DP][Y][MUL], 32768 * (r / 2));
	assert_true(st.table_renewed >= 1);
	assert_int_equal(st.table_full, 0);
	/* a miss per function a round, a few for libc and the helper */
	assert_true(st.ibl_misses < r * 16384 + 2000);
}

/* A page left writable for its writes (calib_smc hotdata: data beside
 * code, written 100 times) whose code then runs 20,000 times: its blocks
 * ran stepped, a stop per instruction, for good (javac: 2.4 million
 * steps in some runs); now the page is guarded again after 256 such
 * runs, and the rest run from the cache. */
static void test_hot_page_cools(void **state)
{
	struct pflops_trace_opts o = { .engine = PFT_ENGINE_CACHE };
	struct pft_stats st;
	struct pflops_mix m;

	(void)state;
	assert_int_equal(trace(&m, &o, &st, prog("calib_smc"), "hotdata", "20000", NULL), 0);
	assert_int_equal(m.insts[DP][Y][ADD], 20100);
	assert_true(st.wprot_hot >= 1);
	assert_true(st.wprot_cooled >= 1);
	/* without it: about 4 stops a call */
	assert_true(st.stops < 10000);
}

/* The map of a process (here this one) after its mapping calls
 * (pft_maps_dirty, trace_maps.c): a lookup of an entry a call touched,
 * or of an address the map lacks, reads the map again; a lookup
 * elsewhere does not, and its answer is still right. */
static void test_maps_dirty(void **state)
{
	struct pft_maps ms = { 0 };
	const struct pft_map *e;
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *a = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *b;
	unsigned long n;

	(void)state;
	assert_true(a != MAP_FAILED);
	assert_non_null(e = pft_maps_find(&ms, getpid(), (uint64_t)(a + pg)));
	assert_true(e->w && !e->x);
	n = ms.loads;
	/* a page of it read-only: the entry splits, its lookup reloads */
	assert_int_equal(mprotect(a + pg, pg, PROT_READ), 0);
	pft_maps_dirty(&ms, (uint64_t)(a + pg), (uint64_t)(a + 2 * pg));
	assert_non_null(e = pft_maps_find(&ms, getpid(), (uint64_t)(a + pg)));
	assert_true(!e->w && e->lo == (uint64_t)(a + pg) && e->hi == (uint64_t)(a + 2 * pg));
	assert_int_equal(ms.loads, n + 1);
	/* elsewhere (this function's code): no reload */
	assert_non_null(e = pft_maps_find(&ms, getpid(), (uint64_t)(uintptr_t)test_maps_dirty));
	assert_true(e->x);
	pft_maps_dirty(&ms, (uint64_t)a, (uint64_t)(a + pg));
	assert_non_null(e = pft_maps_find(&ms, getpid(), (uint64_t)(uintptr_t)test_maps_dirty));
	assert_int_equal(ms.loads, n + 1);
	/* a new mapping: not in the map, read again */
	b = mmap(NULL, pg, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(b != MAP_FAILED);
	pft_maps_dirty(&ms, (uint64_t)b, (uint64_t)(b + pg));
	assert_non_null(e = pft_maps_find(&ms, getpid(), (uint64_t)b));
	assert_true(e->x && !e->w);
	assert_int_equal(ms.loads, n + 2);
	/* unmapped, and a neighbour of a touched range: reloaded, gone */
	assert_int_equal(munmap(a, 4 * pg), 0);
	pft_maps_dirty(&ms, (uint64_t)a, (uint64_t)(a + 4 * pg));
	e = pft_maps_find(&ms, getpid(), (uint64_t)(a + 3 * pg));
	assert_true(!e || e->lo >= (uint64_t)(a + 4 * pg) || e->hi <= (uint64_t)(a + 3 * pg));
	assert_int_equal(ms.loads, n + 3);
	/* more ranges than it keeps: all stale */
	for (int i = 0; i <= PFT_MAPS_DIRTY; i++)
		pft_maps_dirty(&ms, (uint64_t)(i + 1) << 32, ((uint64_t)(i + 1) << 32) + 4096);
	assert_int_equal(ms.stale, 1);
	assert_non_null(pft_maps_find(&ms, getpid(), (uint64_t)(uintptr_t)test_maps_dirty));
	assert_int_equal(ms.loads, n + 4);
	munmap(b, pg);
	pft_maps_free(&ms);
}

static void test_code_changes(void **state)
{
	static const struct {
		const char *mode;
		uint64_t add, mul;
	} v[] = {
		{ "wx", N, N },		  /* first: its stops are the base */
		{ "inplace", 15 * N, 0 }, /* 1..5 vaddpd per iteration */
		{ "threads", 3 * N, 3 * N },
		{ "writers", 40 * N, 0 },
		{ "fork", 2 * N, N },
		{ "selfpage", N, 0 },
		{ "segv", 2 * N, N },
	};
	struct pflops_trace_opts os = { .engine = PFT_ENGINE_STOP };
	struct pflops_trace_opts oc = { .engine = PFT_ENGINE_CACHE, .count_all = 1 };
	struct pft_stats ss, sc;
	struct pflops_mix a, b;
	char n[32];
	uint64_t base = 0;
	int pers = personality(0xffffffff);

	(void)state;
	snprintf(n, sizeof n, "%d", N);
	/* the same addresses in both runs: libc's instruction counts follow them */
	assert_true(pers != -1 && personality((unsigned long)pers | ADDR_NO_RANDOMIZE) != -1);
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		assert_int_equal(trace(&a, &os, &ss, prog("calib_smc"), v[i].mode, n, NULL), 0);
		assert_int_equal(trace(&b, &oc, &sc, prog("calib_smc"), v[i].mode, n, NULL), 0);
		print_message(
			"calib_smc %s: wprot pages %llu, faults %llu, hot %llu; cache runs %llu; stops %llu (stop engine %llu); "
			"unrolled %llu\n",
			v[i].mode, (unsigned long long)sc.wprot_pages, (unsigned long long)sc.wprot_faults,
			(unsigned long long)sc.wprot_hot, (unsigned long long)sc.cache_runs,
			(unsigned long long)sc.stops, (unsigned long long)ss.stops,
			(unsigned long long)sc.cache_unrolled);
		/* its loops (but selfpage's) are unrolled copies, dropped as
		 * the code changes (trace_gen.c, emit_unrolled): writers'
		 * 40 rounds each a new one (libc's loops: about 28 more) */
		if (!strcmp(v[i].mode, "writers"))
			assert_true(sc.cache_unrolled >= 40);
		for (int e = 0; e < 2; e++) {
			struct pflops_mix *m = e ? &b : &a;
			assert_int_equal(m->insts[DP][Y][ADD], v[i].add);
			assert_int_equal(m->insts[DP][Y][MUL], v[i].mul);
			assert_int_equal(total(m->insts), v[i].add + v[i].mul);
		}
		if (strcmp(v[i].mode, "threads") && strcmp(v[i].mode, "writers")) {
			/* (spin loops and barriers vary) */
			char what[64];
			snprintf(what, sizeof what, "calib_smc %s", v[i].mode);
			if (report_diff(what, &a, &b))
				fail_msg("%s: the engines disagree", what);
		}
		if (!strcmp(v[i].mode, "inplace") || !strcmp(v[i].mode, "threads") || !strcmp(v[i].mode, "segv")) {
			/* guarded, caught, and run from the cache */
			assert_true(sc.wprot_pages >= 1);
			assert_true(sc.wprot_faults >= 1);
			assert_int_equal(sc.wprot_hot, 0);
			assert_int_equal(sc.nocache[PFT_NC_WRITABLE], 0);
			/* not a stop per iteration: about the stops of a
			 * W^X JIT (cached since its mprotect) */
			assert_true(sc.stops < base + N / 2);
		}
		if (!strcmp(v[i].mode, "wx"))
			base = sc.stops;
		if (!strcmp(v[i].mode, "inplace"))
			assert_true(sc.wprot_faults >= 4 && ss.wprot_faults >= 4);
		if (!strcmp(v[i].mode, "selfpage")) {
			/* the page stays writable: stopping path, counted */
			assert_true(sc.wprot_hot >= 1);
			assert_true(sc.nocache[PFT_NC_WRITABLE] >= 1);
		}
	}
	personality((unsigned long)pers);
}

int main(void)
{
	/* the traced test programs besides calib_fp use AVX (ymm) */
	if (!calib_cpu_has("test_trace", NULL, "avx"))
		return 77;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_class),
		cmocka_unit_test(test_single_step_agrees),
		cmocka_unit_test(test_mask_written_in_block),
		cmocka_unit_test(test_flags_live),
		cmocka_unit_test(test_indirect_and_gs),
		cmocka_unit_test(test_calls_and_extras),
		cmocka_unit_test(test_zero_flops_and_total),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_cannot_start),
		cmocka_unit_test(test_c_kernels),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_futex),
		cmocka_unit_test(test_region_pool),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_crash),
		cmocka_unit_test(test_signal_handler),
		cmocka_unit_test(test_async_signals),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_quiet_waits),
		cmocka_unit_test(test_region),
		cmocka_unit_test(test_region_native),
		cmocka_unit_test(test_region_exits),
		cmocka_unit_test(test_region_storm),
		cmocka_unit_test(test_gap_near),
		cmocka_unit_test(test_engines_agree),
		cmocka_unit_test(test_unrolled_loops),
		cmocka_unit_test(test_cache_stats),
		cmocka_unit_test(test_cache_ahead),
		cmocka_unit_test(test_cache_far),
		cmocka_unit_test(test_code_changes),
		cmocka_unit_test(test_table_renew),
		cmocka_unit_test(test_hot_page_cools),
		cmocka_unit_test(test_maps_dirty),
	};

	calib_prog_init();
	/* no hint store (as make check runs it): test_cache_ahead counts the
	 * blocks translated ahead, which a warm store makes fewer */
	setenv("PFLOPS_TRACE_HINTS", "0", 1);
	under_valgrind = getenv("PF_UNDER_VALGRIND") != NULL;
	if (access(prog("calib_fp"), X_OK)) {
		fprintf(stderr,
			"test_trace: %s missing; run `make check` "
			"(it builds the calibration programs)\n",
			prog("calib_fp"));
		return 1;
	}
	return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
