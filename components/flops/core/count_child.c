#define _GNU_SOURCE
/*
 * A program to count (pflops_perf.h): forked and held on a pipe until the
 * caller has opened its events on it with inherit (threads and children
 * count) and enable_on_exec (counting starts at the program, not at our
 * fork), then released and waited for.  pfc_child_count is that
 * sequence, used by pflops_count_child (plain events over the engine,
 * count_perf.c) and pfc_count_program (a counting set of the pipeline,
 * count.c: papi_flops_run --source hw).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "pflops_count.h"
#include "pflops_internal.h"
#include "pflops_perf.h"

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int pfc_child_spawn(struct pflops_child *c, char *const argv[], struct pflops_error *err)
{
	int go[2], fail[2];
	if (pipe2(go, O_CLOEXEC))
		return pfc_err(err, PFLOPS_ESYS, "pipe: %s", strerror(errno));
	if (pipe2(fail, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return pfc_err(err, PFLOPS_ESYS, "pipe: %s", strerror(errno));
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(go[0]), close(go[1]), close(fail[0]), close(fail[1]);
		return pfc_err(err, PFLOPS_ESYS, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		char ch;
		close(go[1]);
		close(fail[0]);
		/* held until the parent has opened the counters on us */
		if (read(go[0], &ch, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		int e = errno;
		if (write(fail[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(fail[1]);
	c->pid = pid;
	c->prog = argv[0];
	c->interrupt = NULL;
	c->go = go[1];
	c->fail = fail[0];
	return 0;
}

static void reap(pid_t pid, int *status)
{
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (status)
		*status = st;
}

static long pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
	return syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* The caller's interrupt flag, as the tracer reads it: the signal passed
 * on once (unless the program got it too), SIGKILL at a second signal or
 * when the grace time is over.  *since: when it was first seen (0: not). */
static void interrupt_step(const struct pflops_child *c, double *since)
{
	int v = c->interrupt ? *c->interrupt : 0;
	if (!v)
		return;
	if (!*since) {
		*since = seconds();
		if (v & PFLOPS_INTERRUPT_FORWARD)
			kill(c->pid, v & 0xff);
	} else if ((v & PFLOPS_INTERRUPT_NOW) || seconds() - *since >= PFLOPS_INTERRUPT_GRACE_MS / 1000.0) {
		kill(c->pid, SIGKILL);
	}
}

/* Wait for the program, calling tick about every tick_ms while it runs
 * and acting on the interrupt flag.  A pidfd wakes the wait the moment
 * the program ends, so the wall time stays exact; without one (kernels
 * before 5.3) the wait is a plain waitpid, or timed sleeps when ticking
 * or interrupts must be watched. */
static void wait_child(struct pflops_child *c, int *status, unsigned tick_ms, pfc_child_tick_fn tick, void *arg)
{
	int st = 0, pfd = (int)pidfd_of(c->pid);
	double since = 0;
	for (;;) {
		pid_t p = waitpid(c->pid, &st, WNOHANG);
		if (p == c->pid || (p < 0 && errno != EINTR))
			break;
		interrupt_step(c, &since);
		int timeout = tick ? (int)tick_ms : -1;
		if (c->interrupt && (timeout < 0 || timeout > (since ? 100 : 250)))
			timeout = since ? 100 : 250; /* signals can slip in before the wait */
		if (pfd >= 0) {
			struct pollfd pf = { pfd, POLLIN, 0 };
			poll(&pf, 1, timeout);
		} else if (timeout < 0) {
			reap(c->pid, &st);
			break;
		} else {
			struct timespec ts = { timeout / 1000, (long)(timeout % 1000) * 1000000 };
			nanosleep(&ts, NULL);
		}
		if (tick)
			tick(arg);
	}
	if (pfd >= 0)
		close(pfd);
	if (status)
		*status = st;
}

void pfc_child_abort(struct pflops_child *c)
{
	kill(c->pid, SIGKILL); /* never ran the program: nothing to count it with */
	close(c->go);
	close(c->fail);
	reap(c->pid, NULL);
}

int pfc_child_run_tick(struct pflops_child *c, int *status, double *wall_seconds, unsigned tick_ms,
		       pfc_child_tick_fn tick, void *arg, struct pflops_error *err)
{
	int rc = 0;
	double t0 = seconds();
	if (write(c->go, "g", 1) != 1) {
		rc = pfc_err(err, PFLOPS_ESYS, "cannot start the program: %s", strerror(errno));
		kill(c->pid, SIGKILL);
	}
	close(c->go);
	wait_child(c, status, tick_ms, tick, arg);
	if (wall_seconds)
		*wall_seconds = seconds() - t0;
	int exec_errno = 0;
	if (!rc && read(c->fail, &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno))
		rc = pfc_err(err, PFLOPS_ECHILD, "cannot run %s: %s", c->prog, strerror(exec_errno));
	close(c->fail);
	return rc;
}

int pfc_child_run(struct pflops_child *c, int *status, double *wall_seconds, struct pflops_error *err)
{
	return pfc_child_run_tick(c, status, wall_seconds, 0, NULL, NULL, err);
}

int pfc_child_count(char *const argv[], const volatile sig_atomic_t *interrupt, pfc_child_open_fn open, void *arg,
		    int *status, double *wall_seconds, struct pflops_error *err)
{
	struct pflops_child c;
	int rc = pfc_child_spawn(&c, argv, err);
	if (rc)
		return rc;
	c.interrupt = interrupt;
	if ((rc = open(arg, c.pid, err))) {
		pfc_child_abort(&c);
		return rc;
	}
	return pfc_child_run(&c, status, wall_seconds, err);
}

struct open_events {
	struct pfc_perf_set **set;
	const struct pfc_perf_event *ev;
	int n;
	struct pfc_perf_attr a;
};

static int open_events(void *arg, pid_t pid, struct pflops_error *err)
{
	struct open_events *o = arg;
	o->a.tid = pid;
	return pfc_perf_open(o->set, o->ev, o->n, &o->a, err);
}

int pflops_count_child(char *const argv[], struct pflops_child_event *ev, int n, int *status, double *wall_seconds,
		       struct pflops_error *err)
{
	struct pfc_perf_event *pe = calloc(n > 0 ? n : 1, sizeof(*pe));
	struct pfc_perf_value *v = calloc(n > 0 ? n : 1, sizeof(*v));
	struct pfc_perf_set *set = NULL;
	int rc = !pe || !v ? pfc_err(err, PFLOPS_ENOMEM, "out of memory") : 0;
	for (int i = 0; !rc && i < n; i++) {
		/* each its own group: a plain list of events, none may wait for another */
		pe[i] = (struct pfc_perf_event){
			.type = ev[i].type, .config = ev[i].config, .group = i, .slot = i, .cpu = -1
		};
		snprintf(pe[i].name, sizeof(pe[i].name), "event type %u config 0x%llx", ev[i].type,
			 (unsigned long long)ev[i].config);
	}
	struct open_events o = {
		&set,
		pe,
		n,
		{ .inherit = 1, .enable_on_exec = 1, .exclude_hv = 1, .exclude_kernel = n > 0 && ev[0].exclude_kernel }
	};
	if (!rc)
		rc = pfc_child_count(argv, NULL, open_events, &o, status, wall_seconds, err);
	if (!rc)
		rc = pfc_perf_read(set, v, err);
	for (int i = 0; !rc && i < n; i++) {
		ev[i].raw = v[i].raw;
		ev[i].enabled = v[i].enabled;
		ev[i].running = v[i].running;
		ev[i].scaled = pfc_perf_scale(v[i].raw, v[i].enabled, v[i].running, NULL);
	}
	pfc_perf_close(set);
	free(pe);
	free(v);
	return rc;
}

struct open_count {
	struct pfc_count *c;
	struct pfc_perf_attr a;
};

static int open_count(void *arg, pid_t pid, struct pflops_error *err)
{
	struct open_count *o = arg;
	o->a.tid = pid;
	return pfc_count_open(o->c, &o->a, err);
}

int pfc_count_program(struct pfc_count *c, char *const argv[], const struct pfc_perf_attr *a,
		      const volatile sig_atomic_t *interrupt, int *status, double *wall_seconds,
		      struct pflops_error *err)
{
	struct open_count o = { c, *a };
	o.a.inherit = o.a.enable_on_exec = 1;
	int rc = pfc_child_count(argv, interrupt, open_count, &o, status, wall_seconds, err);
	if (!rc)
		rc = pfc_count_read(c, err);
	return rc;
}
