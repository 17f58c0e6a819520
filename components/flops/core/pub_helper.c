/*
 * pub_helper.c: the flops component's trace helper (PAPI_FLOPS_SOURCE=
 * trace), started from inside the process it traces.
 *
 * A process cannot ptrace itself, so a helper does: papi_flops_run
 * --pid PID --papi-fd SOCK,MEMFD (utils/pf_papi_helper.c), which traces
 * every thread and publishes per-thread counts in shared memory
 * (pflops_pub.h).  It is started by a double fork, so that it is not a
 * child of the process (a program waiting for all its children, or
 * reaping any, never meets it) and not in its process group (setsid:
 * the terminal's Ctrl-C and Ctrl-Z go to the program alone, which the
 * tracer follows as usual).  It is not killed by a parent-death signal
 * either: it traces every thread of the process, so it sees the process
 * end, however it ends (exit, a crash, SIGKILL), and then ends itself.
 * With Yama's ptrace_scope 1 the process names it with PR_SET_PTRACER
 * before it attaches.  At exit (atexit) and PAPI_shutdown it detaches.
 *
 * The helper program: $PAPI_FLOPS_TRACER, else papi_flops_run next to
 * this library (../bin, ../../bin, or ../.. in the build tree), else
 * papi_flops_run in PATH.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pflops_pub.h"
#include "pflops_pub_helper.h"

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif

static int sock = -1;
static pid_t owner; /* the process the helper traces */
static struct pfc_pub *pub;

static void helper_path(char *out, size_t len)
{
	const char *env = getenv("PAPI_FLOPS_TRACER");
	Dl_info di;
	static const char *const rel[] = { "../bin/papi_flops_run", "../../bin/papi_flops_run",
					   "../../papi_flops_run" };

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return;
	}
	if (dladdr((void *)helper_path, &di) && di.dli_fname && strchr(di.dli_fname, '/')) {
		char lib[PATH_MAX];
		snprintf(lib, sizeof(lib), "%s", di.dli_fname);
		char *dir = dirname(lib);
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			snprintf(out, len, "%s/%s", dir, rel[i]);
			if (!access(out, X_OK))
				return;
		}
	}
	snprintf(out, len, "papi_flops_run"); /* from PATH */
}

static void detach_at_exit(void);

/* read/write n bytes in one call (a byte, a pid_t on a pipe), again after
 * EINTR: a program's timer (a sampling tool's SIGALRM or SIGPROF without
 * SA_RESTART) must not fail the start */
static int xfer(int fd, void *buf, size_t n, int out)
{
	ssize_t r;

	do
		r = out ? write(fd, buf, n) : read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r == (ssize_t)n ? 0 : -1;
}

static int fail(char *why, size_t len, const char *fmt, const char *arg)
{
	snprintf(why, len, fmt, arg);
	return -1;
}

int pfc_pub_helper_start(struct pfc_pub **out, char *why, size_t len)
{
	char path[PATH_MAX], c = 0;
	int sv[2] = { -1, -1 }, pp[2] = { -1, -1 }, memfd = -1, rc = -1;
	pid_t mid, helper = -1;

	if (pub && owner == getpid()) {
		*out = pub;
		return 0;
	}
	if (pub)
		return fail(why, len, "%s",
			    "this process was forked from the one that started the trace source: "
			    "its event sets count nothing here; start them before fork in the parent, or call "
			    "PAPI_library_init in the child only");
	helper_path(path, sizeof(path));
	memfd = (int)syscall(SYS_memfd_create, "papi-flops-trace", 1u /* MFD_CLOEXEC */);
	if (memfd < 0 || ftruncate(memfd, sizeof(struct pfc_pub)))
		return fail(why, len, "cannot make the shared memory of the trace source (memfd: %s)", strerror(errno));
	struct pfc_pub *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, memfd, 0);
	if (p == MAP_FAILED) {
		close(memfd);
		return fail(why, len, "cannot map the shared memory of the trace source: %s", strerror(errno));
	}
	p->size = sizeof(*p); /* the helper checks it is its layout */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || pipe2(pp, O_CLOEXEC)) {
		snprintf(why, len, "socketpair/pipe: %s", strerror(errno));
		goto out;
	}
	char pid_s[24], fds[48];
	snprintf(pid_s, sizeof(pid_s), "%d", (int)getpid());
	snprintf(fds, sizeof(fds), "%d,%d", sv[1], memfd);
	if ((mid = fork()) < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		goto out;
	}
	if (mid == 0) {
		pid_t h = fork();
		if (h == 0) {
			char *argv[] = { path, "--source", "trace", "--pid", pid_s, "--papi-fd", fds, NULL };
			int null = open("/dev/null", O_RDWR);
			setsid();
			/* it writes nothing there: a pipe on the program's stdin
			 * or stdout is not held open by it */
			if (null >= 0) {
				dup2(null, 0);
				dup2(null, 1);
			}
			fcntl(sv[1], F_SETFD, 0);
			fcntl(memfd, F_SETFD, 0);
			/* attach only once the process has named us its tracer */
			if (!xfer(sv[1], &c, 1, 0) && c == 'g') {
				if (strchr(path, '/'))
					execv(path, argv);
				else
					execvp(path, argv);
			}
			_exit(127);
		}
		if (xfer(pp[1], &h, sizeof(h), 1))
			_exit(1);
		_exit(0);
	}
	close(pp[1]);
	pp[1] = -1;
	if (xfer(pp[0], &helper, sizeof(helper), 0) || helper < 0)
		helper = -1;
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	close(sv[1]);
	sv[1] = -1;
	if (helper < 0) {
		snprintf(why, len, "cannot start the trace helper (fork failed)");
		goto out;
	}
	prctl(PR_SET_PTRACER, (unsigned long)helper, 0, 0, 0); /* Yama; harmless elsewhere */
	c = 'g';
	if (xfer(sv[0], &c, 1, 1) || xfer(sv[0], &c, 1, 0) || c != 'r') {
		if (p->state == PFC_PUB_FAILED && p->msg[0])
			snprintf(why, len, "%s", p->msg);
		else
			snprintf(why, len,
				 "the trace helper %s did not start (install papi-flops' papi_flops_run "
				 "there or in PATH, or name it in PAPI_FLOPS_TRACER)",
				 path);
		goto out;
	}
	sock = sv[0];
	sv[0] = -1;
	owner = getpid();
	pub = p;
	static int at_exit;
	if (!at_exit++)
		atexit(detach_at_exit);
	*out = p;
	rc = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (sv[i] >= 0)
			close(sv[i]);
		if (pp[i] >= 0)
			close(pp[i]);
	}
	close(memfd);
	if (rc)
		munmap(p, sizeof(*p));
	return rc;
}

/* Let the helper go: it puts every thread back in its own code and
 * detaches; its end closes the socket. */
static void detach(void)
{
	char c = 'd';
	ssize_t r;

	if (sock < 0 || owner != getpid())
		return;
	/* until the helper's end closes it (errno only where read failed:
	 * an EINTR left from before made this loop for ever) */
	if (!xfer(sock, &c, 1, 1))
		do
			r = read(sock, &c, 1);
		while (r > 0 || (r < 0 && errno == EINTR));
	close(sock);
	sock = -1;
}

/* At exit, before the atexit handlers registered earlier run (LeakSanitizer's
 * stops every thread with ptrace, which a traced process does not allow:
 * it would hang): the memory stays mapped, reads say the helper detached.
 * Only a process down to one thread: a detach while exit() runs in one
 * thread and others still run is not tested yet (the helper sees them
 * end anyway). */
static void detach_at_exit(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	if (n == 1)
		detach();
}

void pfc_pub_helper_stop(void)
{
	if (!pub || owner != getpid())
		return;
	detach();
	munmap(pub, sizeof(*pub));
	pub = NULL;
	owner = 0;
}
