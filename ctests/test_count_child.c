/*
 * pflops_count_child and the pipeline's pfc_count_program (papi_flops_run
 * --source hw) on perf software events, which open for real here: the
 * counts cover the program's children (inherit), start at exec, and the
 * exit status comes back; failures name the event or the program.
 */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <cmocka.h>
#include "papi_flops.h"
#include "pflops_perf.h"
#include "pflops_count.h"

/* A busy loop in a forked subshell: its CPU time is a child's, not sh's. */
static char *busy_child[] = { "sh", "-c", "( i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done ); exit 7", NULL };

static void test_children_counted(void **state)
{
	struct pflops_child_event ev[2] = {
		{ .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK },
		{ .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS },
	};
	int status = -1;
	double wall = 0;
	struct pflops_error err = { 0 };
	if (pflops_count_child(busy_child, ev, 2, &status, &wall, &err))
		fail_msg("%s", err.msg);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 7);
	/* the subshell's loop takes well over 20 ms of CPU; without inherit
	 * sh itself would show a few ms at most */
	if (ev[0].raw < 20000000ULL)
		fail_msg("task-clock %llu ns: the child's CPU time was not counted", (unsigned long long)ev[0].raw);
	assert_true(ev[0].raw <= (uint64_t)(wall * 2.2e9)); /* at most both CPUs for the whole run */
	assert_true(ev[1].raw > 10);			    /* a fork and two execs fault pages */
	assert_true(ev[0].enabled > 0 && ev[0].running == ev[0].enabled);
	assert_true(ev[0].scaled == (double)ev[0].raw);
}

/* Counting starts at exec: our own work before it is not counted. */
static void test_starts_at_exec(void **state)
{
	char *quick[] = { "true", NULL };
	struct pflops_child_event ev = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK };
	int status;
	assert_int_equal(pflops_count_child(quick, &ev, 1, &status, NULL, NULL), 0);
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(ev.raw < 20000000ULL); /* `true` runs for far less than 20 ms */
}

static void test_errors(void **state)
{
	char path[] = "/tmp/pflops_count_child_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "touch %s", path);
	char *touch[] = { "sh", "-c", cmd, NULL };
	/* an event this kernel rejects: config far beyond the software events */
	struct pflops_child_event bad = { .type = PERF_TYPE_SOFTWARE, .config = 0x7fff };
	struct pflops_error err = { 0 };
	int status;
	int rc = pflops_count_child(touch, &bad, 1, &status, NULL, &err);
	assert_true(rc < 0);
	if (!strstr(err.msg, "perf_event_open(event type 1 config 0x7fff)"))
		fail_msg("%s", err.msg);
	/* and the program never ran: nothing measured it */
	assert_int_not_equal(access(path, F_OK), 0);

	char *missing[] = { "/nonexistent/program", NULL };
	struct pflops_child_event ok = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK };
	rc = pflops_count_child(missing, &ok, 1, &status, NULL, &err);
	assert_int_equal(rc, PFLOPS_ECHILD);
	assert_non_null(strstr(err.msg, "cannot run /nonexistent/program: No such file or directory"));
}

/* The engine on a held program, as papi_flops_run's hw source uses it:
 * one perf group over the program and its children (inherit), started at
 * exec, read with one read() and summed into slots. */
static void test_engine_group_on_child(void **state)
{
	struct pfc_perf_event ev[2] = {
		{ .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK, .group = 0, .slot = 0, .cpu = -1 },
		{ .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS, .group = 0, .slot = 1, .cpu = -1 },
	};
	struct pflops_child c;
	struct pfc_perf_set *set = NULL;
	struct pflops_error err = { 0 };
	if (pfc_child_spawn(&c, busy_child, &err))
		fail_msg("%s", err.msg);
	struct pfc_perf_attr a = { .tid = c.pid, .inherit = 1, .enable_on_exec = 1, .check_schedule = 1 };
	if (pfc_perf_open(&set, ev, 2, &a, &err)) {
		pfc_child_abort(&c);
		fail_msg("%s", err.msg);
	}
	int status = -1;
	double wall = 0;
	assert_int_equal(pfc_child_run(&c, &status, &wall, &err), 0);
	assert_int_equal(WEXITSTATUS(status), 7);
	struct pfc_perf_value v[2];
	double slots[2];
	struct pfc_perf_status st;
	assert_int_equal(pfc_perf_read(set, v, &err), 0);
	pfc_perf_sum(set, v, slots, 2, &st);
	pfc_perf_close(set);
	if (slots[0] < 20e6)
		fail_msg("task-clock %.0f ns: the grandchild's loop was not counted", slots[0]);
	assert_true(slots[0] <= wall * 2.2e9);
	assert_true(slots[1] > 10);
	assert_int_equal(st.estimated, 0);
	assert_true(v[0].enabled == v[1].enabled); /* one group: one pair of times */

	/* a program that cannot start: the held child is released into exec, which fails */
	char *missing[] = { "/nonexistent/program", NULL };
	assert_int_equal(pfc_child_spawn(&c, missing, &err), 0);
	assert_int_equal(pfc_child_run(&c, &status, NULL, &err), PFLOPS_ECHILD);
	assert_non_null(strstr(err.msg, "cannot run /nonexistent/program: No such file or directory"));
}

/* The interrupt flag of papi_flops_run's handler: a signal only the tool
 * got is passed on; one the terminal gave the program too is not; a
 * program that ignores it is killed after the grace time.  The flag is
 * set before the run: a signal that came before the wait is not lost. */
static void test_interrupt(void **state)
{
	static volatile sig_atomic_t flag;
	static char *sleeper[] = { "sleep", "30", NULL };
	static char *ignorer[] = { "sleep", "30", NULL }; /* SIGTERM ignored from the start: inherited */
	static char *quick[] = { "sh", "-c", "sleep 0.3; exit 5", NULL };
	struct pflops_child c;
	int status;
	double wall;

	flag = SIGTERM | PFLOPS_INTERRUPT_FORWARD;
	assert_int_equal(pfc_child_spawn(&c, sleeper, NULL), 0);
	c.interrupt = &flag;
	assert_int_equal(pfc_child_run(&c, &status, &wall, NULL), 0);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	assert_true(wall < 10);

	signal(SIGTERM, SIG_IGN);
	assert_int_equal(pfc_child_spawn(&c, ignorer, NULL), 0);
	signal(SIGTERM, SIG_DFL);
	c.interrupt = &flag;
	assert_int_equal(pfc_child_run(&c, &status, &wall, NULL), 0);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_true(wall >= PFLOPS_INTERRUPT_GRACE_MS / 1000.0 && wall < 15);

	flag = SIGINT; /* from the terminal: the program has its own */
	assert_int_equal(pfc_child_spawn(&c, quick, NULL), 0);
	c.interrupt = &flag;
	assert_int_equal(pfc_child_run(&c, &status, &wall, NULL), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 5);
}

/* Every event of the layout as task-clock, groups and slots kept. */
static void standin(struct pfc_count *c)
{
	for (int i = 0; i < c->nev; i++) {
		c->ev[i].type = PERF_TYPE_SOFTWARE;
		c->ev[i].config = PERF_COUNT_SW_TASK_CLOCK;
	}
}

/* CPU time of this process's waited-for children (wait4's rusage), ns. */
static double children_cpu_ns(void)
{
	struct rusage ru;
	assert_int_equal(getrusage(RUSAGE_CHILDREN, &ru), 0);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

/* Entries of /proc/self/fd (the directory's own fd counts each time). */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* The pipeline's program count: Skylake-SP's FP_OPS plan laid out as
 * papi_flops_run lays it out, every counter standing in as task-clock
 * (the layout's groups and slots kept): each slot holds the child's CPU
 * time as wait4 accounts it, and FP_OPS is the table's weights over them. */
static void test_count_program(void **state)
{
	static struct pflops_table t;
	static struct pfc_count_kinds ks;
	static struct pfc_count c;
	struct pflops_error err = { 0 };
	if (pflops_table_builtin(&t, &err))
		fail_msg("%s", err.msg);
	const struct pflops_pmu *skx = pflops_table_find(&t, "skx");
	assert_non_null(skx);
	assert_int_equal(pfc_count_kind_add(&ks, skx, PFLOPS_MAX_COUNTERS, 1, 0, 0, 0, -1, NULL), 0);
	struct pfc_count_want w[PFLOPS_NMETRIC];
	pfc_count_want_metrics(w, 1u << PFLOPS_FP_OPS);
	assert_int_equal(pfc_count_plan(&c, &ks, w, PFLOPS_NMETRIC, 1), 1);
	assert_int_equal(pfc_count_layout(&c, &err), 0);
	assert_true(c.nev == c.plan[0].ncounters && c.nev >= 2);
	standin(&c);
	struct pfc_perf_attr a = { .exclude_hv = 1 };
	int status = -1;
	double wall = 0;
	double cpu0 = children_cpu_ns();
	if (pfc_count_program(&c, busy_child, &a, NULL, &status, &wall, &err))
		fail_msg("%s", err.msg);
	double cpu = children_cpu_ns() - cpu0; /* the kernel's own account of the program */
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	assert_false(c.st.estimated);
	if (cpu < 20e6)
		fail_msg("the child ran %.0f ns of CPU: too short to compare", cpu);
	/* Skylake-SP's FP_OPS weights, from presets/intel-fp_arith.pft (by umask:
	 * SCALAR 1, 128B_PACKED_DOUBLE 2, 128B_PACKED_SINGLE+256B_PACKED_DOUBLE 4,
	 * 256B_PACKED_SINGLE+512B_PACKED_DOUBLE 8, 512B_PACKED_SINGLE 16) */
	static const struct {
		uint64_t code;
		double weight;
	} skx_fp_ops[] = { { 0x03c7, 1 }, { 0x04c7, 2 }, { 0x18c7, 4 }, { 0x60c7, 8 }, { 0x80c7, 16 } };
	assert_int_equal(c.plan[0].ncounters, 5);
	double wsum = 0;
	for (int k = 0; k < c.plan[0].ncounters; k++) {
		double ns = c.slots[c.counter_slot[0][k]], w = 0;
		/* every slot holds the program's CPU time (task-clock), within
		 * 25%: the two accounts of a KVM guest's busy child differ by
		 * up to 10% (task-clock 375 ms, wait4 341 ms, in a CI run
		 * 2026-11-27); a wrong slot is 0 or a multiple */
		if (ns < 0.75 * cpu || ns > 1.25 * cpu)
			fail_msg("slot of %s: %.0f ns, the program's CPU time (wait4) %.0f ns",
				 c.plan[0].counter[k].spec, ns, cpu);
		for (size_t i = 0; i < sizeof(skx_fp_ops) / sizeof(skx_fp_ops[0]); i++)
			if ((c.plan[0].counter[k].config & 0xffff) == skx_fp_ops[i].code)
				w = skx_fp_ops[i].weight;
		if (!w)
			fail_msg("counter %s is not one of Skylake-SP's FP_OPS events", c.plan[0].counter[k].spec);
		wsum += w;
	}
	assert_true(wsum == 31);
	/* FP_OPS = 31 x the CPU time, give or take the slots' 10% */
	double v = pfc_count_value(&c, PFLOPS_FP_OPS);
	if (v < 0.9 * 31 * cpu || v > 1.1 * 31 * cpu)
		fail_msg("FP_OPS %.0f, want about 31 x %.0f ns", v, cpu);
	pfc_count_close(&c);

	/* a program that cannot run: named, nothing left open */
	char *missing[] = { "/nonexistent/papi-flops-test", NULL };
	assert_int_equal(pfc_count_layout(&c, &err), 0);
	standin(&c);
	int fds = open_fds();
	assert_int_equal(pfc_count_program(&c, missing, &a, NULL, &status, NULL, &err), PFLOPS_ECHILD);
	assert_non_null(strstr(err.msg, "/nonexistent/papi-flops-test"));
	pfc_count_close(&c);
	assert_int_equal(open_fds(), fds); /* no event, no pipe left open */
	pflops_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_group_on_child),
		cmocka_unit_test(test_interrupt),
		cmocka_unit_test(test_children_counted),
		cmocka_unit_test(test_starts_at_exec),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_count_program),
	};
	return cmocka_run_group_tests_name("count_child", tests, NULL, NULL);
}
