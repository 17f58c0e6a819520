#define _GNU_SOURCE
/*
 * Count events over a whole program run: fork, open every event on the
 * child with inherit (threads and children are counted) and
 * enable_on_exec (the counts start at the program, not at our fork), let
 * it exec, wait, read.  Each event is its own fd: inherited events cannot
 * be read as a group.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "pflops_internal.h"

static int open_event(struct pflops_child_event *e, pid_t pid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = e->type;
	a.config = e->config;
	a.disabled = 1;
	a.enable_on_exec = 1;
	a.inherit = 1;
	a.exclude_kernel = e->exclude_kernel;
	a.exclude_hv = 1;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int pflops_count_child(char *const argv[], struct pflops_child_event *ev, int n, int *status,
		       double *wall_seconds, struct pflops_error *err)
{
	int go[2], fail[2];
	if (pipe2(go, O_CLOEXEC) || pipe2(fail, O_CLOEXEC))
		return pf_err(err, PFLOPS_ESYS, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		return pf_err(err, PFLOPS_ESYS, "fork: %s", strerror(errno));
	if (pid == 0) {
		char c;
		close(go[1]);
		close(fail[0]);
		/* wait until the parent has opened the counters on us */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		int e = errno;
		if (write(fail[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(fail[1]);
	int *fd = calloc(n ? n : 1, sizeof(int)), rc = 0;
	if (!fd)
		rc = pf_err(err, PFLOPS_ENOMEM, "out of memory");
	for (int i = 0; i < n && !rc; i++) {
		fd[i] = open_event(&ev[i], pid);
		if (fd[i] < 0) {
			int e = errno;
			fd[i] = -1;
			rc = pf_err(err, e == EACCES || e == EPERM ? PFLOPS_EPERM : e == ENOENT || e == EOPNOTSUPP ? PFLOPS_ENOPMU : PFLOPS_ESYS,
				    "cannot open event type %u config 0x%llx: %s", ev[i].type, (unsigned long long)ev[i].config,
				    strerror(e));
		}
	}
	double t0 = seconds();
	if (rc) {
		kill(pid, SIGKILL);	/* never ran the program: nothing to count it with */
		close(go[1]);
	} else if (write(go[1], "g", 1) != 1) {
		rc = pf_err(err, PFLOPS_ESYS, "cannot start the program: %s", strerror(errno));
		kill(pid, SIGKILL);
	} else {
		close(go[1]);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (wall_seconds)
		*wall_seconds = seconds() - t0;
	int exec_errno = 0;
	if (!rc && read(fail[0], &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno))
		rc = pf_err(err, PFLOPS_ECHILD, "cannot run %s: %s", argv[0], strerror(exec_errno));
	close(fail[0]);
	for (int i = 0; i < n; i++) {
		if (!rc) {
			uint64_t v[3];
			if (read(fd[i], v, sizeof(v)) != sizeof(v))
				rc = pf_err(err, PFLOPS_ESYS, "cannot read event %d: %s", i, strerror(errno));
			else {
				ev[i].raw = v[0];
				ev[i].enabled = v[1];
				ev[i].running = v[2];
				ev[i].scaled = v[2] ? (double)v[0] * ((double)v[1] / (double)v[2]) : 0;
			}
		}
		if (fd && fd[i] >= 0)
			close(fd[i]);
	}
	free(fd);
	if (status)
		*status = st;
	return rc;
}
