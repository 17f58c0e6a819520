/*
 * pflops_count_child on perf software events, which open for real here:
 * the counts cover the program's children (inherit), start at exec, and
 * the exit status comes back; failures name the event or the program.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <cmocka.h>
#include "papi_flops.h"

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
	assert_true(ev[0].raw <= (uint64_t)(wall * 2.2e9));	/* at most both CPUs for the whole run */
	assert_true(ev[1].raw > 10);				/* a fork and two execs fault pages */
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
	assert_true(ev.raw < 20000000ULL);	/* `true` runs for far less than 20 ms */
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
	assert_non_null(strstr(err.msg, "cannot open event type 1 config 0x7fff"));
	/* and the program never ran: nothing measured it */
	assert_int_not_equal(access(path, F_OK), 0);

	char *missing[] = { "/nonexistent/program", NULL };
	struct pflops_child_event ok = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK };
	rc = pflops_count_child(missing, &ok, 1, &status, NULL, &err);
	assert_int_equal(rc, PFLOPS_ECHILD);
	assert_non_null(strstr(err.msg, "cannot run /nonexistent/program: No such file or directory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_children_counted),
		cmocka_unit_test(test_starts_at_exec),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests_name("count_child", tests, NULL, NULL);
}
