/*
 * test_trace_sys.c: system calls and signals of a program running in the
 * code cache (trace_sys.c, docs/trace-engine.md "System calls and
 * signals").  Those the tracer does not watch run there without a
 * ptrace stop: the counts stay exact (against the loop counts and the
 * stopping engine), %rcx and %r11 after `syscall` are the CPU's
 * (calib_sys checks them itself), and the stats show the calls run
 * unstopped, not stopped.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "pflops_trace.h"
#include "calib_prog.h"

#define N 20000L

static void run(struct pflops_mix *m, struct pft_stats *st, int engine, const char *mode, long n)
{
	struct pflops_error err = { 0 };
	struct pflops_trace_opts o = { .engine = engine, .stats = st };
	char num[32];
	char *argv[] = { (char *)prog("calib_sys"), (char *)mode, num, NULL };
	int status = -1, rc;

	snprintf(num, sizeof num, "%ld", n);
	memset(m, 0, sizeof *m);
	memset(st, 0, sizeof *st);
	rc = pft_run(argv, &o, m, &status, &err);
	if (rc)
		print_error("trace calib_sys %s: %s\n", mode, err.msg);
	assert_int_equal(rc, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static uint64_t dp(const struct pflops_mix *m, int op)
{
	return m->insts[PFLOPS_DP][PFLOPS_W128][op];
}

/* N loops of getpid + mprotect(0, 4096, PROT_READ) + write: 3N system calls, 2N
 * unwatched */
static void test_calls(void **state)
{
	struct pflops_mix m, ms;
	struct pft_stats st, sts;

	(void)state;
	run(&m, &st, PFT_ENGINE_CACHE, "calls", N);
	assert_int_equal(dp(&m, PFLOPS_OP_ADD), N);
	assert_int_equal(pflops_mix_flops(&m, -1), 2 * N);
	/* getpid and write: no stop; mprotect watched: trapped, then its
	 * entry and exit stops */
	assert_true(st.syscalls_fast >= 2 * N);
	assert_true(st.syscall_traps >= N && st.syscall_traps < N + 100);
	assert_true(st.syscalls < N + 100);
	assert_true(st.stops < 2 * N + 2000); /* 2 per watched call */
	print_message("calls: %ld loops, %llu stops, %llu unstopped, %llu trapped\n", N, (unsigned long long)st.stops,
		      (unsigned long long)st.syscalls_fast, (unsigned long long)st.syscall_traps);
	/* the stopping engine: a stop at each system call's entry, same
	 * counts */
	run(&ms, &sts, PFT_ENGINE_STOP, "calls", N / 10);
	assert_int_equal(dp(&ms, PFLOPS_OP_ADD), N / 10);
	assert_true(sts.syscalls >= 3 * (N / 10));
	assert_int_equal(sts.syscalls_fast, 0);
}

/* every system call stops when asked (PFLOPS_TRACE_SYSCALL_STOPS=1): the
 * same counts, the calls seen one by one */
static void test_calls_stopped(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;

	(void)state;
	setenv("PFLOPS_TRACE_SYSCALL_STOPS", "1", 1);
	run(&m, &st, PFT_ENGINE_CACHE, "calls", N / 10);
	unsetenv("PFLOPS_TRACE_SYSCALL_STOPS");
	assert_int_equal(dp(&m, PFLOPS_OP_ADD), N / 10);
	assert_int_equal(st.syscalls_fast, 0);
	assert_int_equal(st.syscall_traps, 0);
	assert_true(st.syscalls >= 3 * (N / 10));
}

/* N signals with a handler: exact counts in both, and from the cache
 * one stop at the signal, one at the handler's start; its sigreturn goes
 * back into the cache without a stop (looked up in the copy; the first
 * one traps, and enters its target in the table) */
static void test_signals(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;
	long n = N / 4;

	(void)state;
	run(&m, &st, PFT_ENGINE_CACHE, "signals", n);
	assert_int_equal(dp(&m, PFLOPS_OP_ADD), n);
	assert_int_equal(dp(&m, PFLOPS_OP_MUL), n);
	assert_true(st.cache_signals >= (uint64_t)n);
	assert_true(st.fast_sigreturns >= (uint64_t)n - 10);
	assert_true(st.stops < 2 * (uint64_t)n + 2000);
	print_message("signals: %ld, %llu stops, %llu sigreturns straight back\n", n, (unsigned long long)st.stops,
		      (unsigned long long)st.fast_sigreturns);
	run(&m, &st, PFT_ENGINE_STOP, "signals", n / 10);
	assert_int_equal(dp(&m, PFLOPS_OP_ADD), n / 10);
	assert_int_equal(dp(&m, PFLOPS_OP_MUL), n / 10);
}

/* a read blocked in the kernel without a stop, interrupted by signals
 * whose handler runs: restarted by the kernel (SA_RESTART: the same
 * `syscall` of the copy runs again, no stop) or ended with EINTR; the
 * program checks what it got (its exit status), the handler's runs are
 * counted exactly */
static void test_interrupted(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;
	const char *modes[] = { "restart", "eintr" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		run(&m, &st, PFT_ENGINE_CACHE, modes[i], 50);
		assert_int_equal(dp(&m, PFLOPS_OP_MUL), 50);
		assert_true(st.cache_signals >= 50);
		run(&m, &st, PFT_ENGINE_STOP, modes[i], 20);
		assert_int_equal(dp(&m, PFLOPS_OP_MUL), 20);
	}
}

/* swapcontext: two system calls per round trip, none stopped */
static void test_swapcontext(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;

	(void)state;
	run(&m, &st, PFT_ENGINE_CACHE, "swap", N);
	assert_int_equal(pflops_mix_flops(&m, -1), 0);
	assert_true(st.syscalls_fast >= 2 * N);
	assert_true(st.stops < 2000);
}

/* A program of one thread runs on the tracer's CPU (trace_pin.c), but
 * sees its own affinity: sched_getaffinity's result is given the
 * program's mask while it is held (alone; its forked child while it
 * waits for it in waitpid; alone again), and once the program opened
 * /proc/self/status (Cpus_allowed_list) it is never held again.  The
 * tracer's own mask is back after the run. */
static void test_affinity(void **state)
{
	struct pflops_mix m;
	struct pft_stats st;
	cpu_set_t before, after;
	int engines[] = { PFT_ENGINE_CACHE, PFT_ENGINE_STOP };

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof before, &before), 0);
	if (CPU_COUNT(&before) < 2) {
		print_message("SKIP: test_affinity: one CPU, nothing to hold the program on\n");
		return;
	}
	for (int i = 0; i < 2; i++) {
		run(&m, &st, engines[i], "affinity", CPU_COUNT(&before)); /* exits 1 at a wrong mask */
		print_message("affinity: held %llu times, %llu results given the program's mask\n",
			      (unsigned long long)st.pins, (unsigned long long)st.pin_fixes);
		/* at the start and after the child, and the child where the
		 * parent was waiting before it asked (the order varies) */
		assert_true(st.pins >= 2 && st.pins <= 3);
		assert_true(st.pin_fixes >= 2 && st.pin_fixes <= 3);
		assert_int_equal(sched_getaffinity(0, sizeof after, &after), 0);
		assert_true(CPU_EQUAL(&before, &after));
	}
	/* PFLOPS_TRACE_PIN=0: never held */
	setenv("PFLOPS_TRACE_PIN", "0", 1);
	run(&m, &st, PFT_ENGINE_CACHE, "affinity", CPU_COUNT(&before));
	assert_int_equal(st.pins, 0);
	assert_int_equal(st.pin_fixes, 0);
	/* another value: an error naming it, the program not run */
	{
		struct pflops_error err = { 0 };
		struct pflops_trace_opts o = { .stats = &st };
		char *argv[] = { (char *)prog("calib_sys"), "affinity", "1", NULL };
		int status = -1;

		setenv("PFLOPS_TRACE_PIN", "yes", 1);
		assert_int_equal(pft_run(argv, &o, &m, &status, &err), PFLOPS_EINVAL);
		assert_non_null(strstr(err.msg, "PFLOPS_TRACE_PIN='yes'"));
	}
	unsetenv("PFLOPS_TRACE_PIN");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calls),	    cmocka_unit_test(test_calls_stopped),
		cmocka_unit_test(test_signals),	    cmocka_unit_test(test_interrupted),
		cmocka_unit_test(test_swapcontext), cmocka_unit_test(test_affinity),
	};

	calib_prog_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
