/*
 * trace_attach.c: the tracer on a process that is already running
 * (papi_flops_run --pid, the flops component's trace source).
 *
 * Every thread of /proc/PID/task is seized (PTRACE_SEIZE, the same
 * options as a launched program, without EXITKILL: the process outlives
 * the tracer) and interrupted; the scan is repeated until it finds no
 * new thread (threads cloned by seized ones are followed by the kernel).
 * At its interrupt stop a thread starts counting where it stands: in
 * user code it enters the engine at once (pft_go); inside a system
 * call that the stop interrupted (rax = -ERESTART*), it is resumed to
 * the syscall stops of the restarted call, so that it enters the engine
 * at the call's exit, as a launched program does after exec.  From then
 * on the engine's own loop steps apply (trace_ptrace.c).  A detach
 * request puts every thread back in its own code and lets it go
 * (pft_detach_rest), so the process runs on unharmed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "trace_internal.h"
#include "pflops_pub.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

#define SEIZE_OPTS \
	(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC)

/* Threads seized whose interrupt stop has not come yet. */
struct pending {
	pid_t *v;
	size_t n, cap;
};

static int pending_take(struct pending *p, pid_t tid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i] == tid) {
			p->v[i] = p->v[--p->n];
			return 1;
		}
	return 0;
}

static struct pft_thr *thread_of(struct pft_tracer *T, pid_t tid)
{
	for (struct pft_thr *t = T->threads; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

/* One pass over /proc/PID/task: seize and interrupt the threads not
 * yet traced.  *added: how many. */
static int seize_pass(struct pft_tracer *T, pid_t pid, struct pft_space *sp, struct pending *pd, int *added)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	*added = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return pfc_err(T->err, PFLOPS_ECHILD, "no process %d to attach to (%s: %s)", (int)pid, path,
			       strerror(errno));
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		struct pft_thr *t;
		if (tid <= 0 || thread_of(T, tid))
			continue;
		if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)SEIZE_OPTS)) {
			int e = errno;
			if (e == ESRCH)
				continue; /* ended meanwhile */
			closedir(d);
			return pfc_err(T->err, PFLOPS_ECHILD,
				       "cannot trace process %d (PTRACE_SEIZE of thread %d: %s); it must run as your "
				       "user, not be traced already (a debugger, another papi_flops_run), and ptrace "
				       "must be allowed: kernel.yama.ptrace_scope 0, or 1 with the process calling "
				       "prctl(PR_SET_PTRACER), or CAP_SYS_PTRACE; seccomp and container policies "
				       "can forbid it too",
				       (int)pid, (int)tid, strerror(e));
		}
		if (!(t = pft_thread_add(T, tid, PFT_TH_RUN)) ||
		    (pd->n == pd->cap && !(pd->v = realloc(pd->v, (pd->cap = pd->cap * 2 + 16) * sizeof(*pd->v))))) {
			closedir(d);
			return pfc_err(T->err, PFLOPS_ENOMEM, "out of memory");
		}
		t->sp = sp;
		sp->refs++;
		pd->v[pd->n++] = tid;
		if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) && errno != ESRCH) {
			closedir(d);
			return pfc_err(T->err, PFLOPS_ESYS, "PTRACE_INTERRUPT of thread %d: %s", (int)tid,
				       strerror(errno));
		}
		(*added)++;
	}
	closedir(d);
	return 0;
}

/* A thread at its first (interrupt) stop starts counting. */
static int start_counting(struct pft_tracer *T, struct pft_thr *t)
{
	struct user_regs_struct r;

	if (pft_getregs(t->tid, &r))
		return 0; /* gone: its exit comes */
	t->prog_gs = PFT_CACHE_BASE(&r);
	pft_sys_rseq_check(T, t); /* (its system calls may not stop) */
	if (pft_sys_restarting(&r)) {
		t->in_syscall = 0;	    /* the restarted call's entry stop comes next */
		t->resume = PTRACE_SYSCALL; /* (also past a signal before it) */
		return pft_restart(T, t, PTRACE_SYSCALL, 0);
	}
	return pft_go(T, t, &r, 0);
}

static int say(int fd, char c)
{
	return fd < 0 || write(fd, &c, 1) == 1 ? 0 : -1;
}

/* Wait for the next status; 0 with *detach set when asked to let go. */
static pid_t wait_or_detach(struct pft_tracer *T, const struct pft_attach_opts *a, int *st, int *detach)
{
	for (;;) {
		pid_t p = waitpid(-1, st, __WALL | WNOHANG);
		if (p != 0)
			return p;
		if (T->o->interrupt && *T->o->interrupt) {
			T->st.interrupted = *T->o->interrupt & 0xff;
			*detach = 1;
			return 0;
		}
		struct pollfd pf[2] = { { T->sfd, POLLIN, 0 }, { a->ctl_fd, POLLIN, 0 } };
		int n = poll(pf, 2, T->sfd >= 0 ? 250 : 20);
		if (n > 0 && (pf[0].revents & POLLIN)) {
			struct signalfd_siginfo si;
			while (read(T->sfd, &si, sizeof si) == sizeof si)
				;
		}
		if (n > 0 && pf[1].revents) {
			char c;
			if (read(a->ctl_fd, &c, 1) <= 0 || c)
				*detach = 1;
			if (*detach)
				return 0;
		}
	}
}

/* The engine failed at a thread's stop: a thread it left stopped there
 * reports no further stop, so the detach would wait for it for ever (it
 * hung); its stop is kept for pft_detach_rest.  (One it had resumed
 * stops again for the detach's interrupt.) */
static void keep_stop(struct pft_tracer *T, pid_t p, int st)
{
	struct user_regs_struct r;

	if (WIFSTOPPED(st) && pft_getregs(p, &r) == 0) /* (ESRCH: it runs) */
		pft_defer(T, p, st);
}

static void pub_end(struct pfc_pub *p, int state, const char *msg)
{
	if (!p)
		return;
	snprintf(p->msg, sizeof(p->msg), "%.511s", msg);
	__atomic_store_n(&p->state, state, __ATOMIC_RELEASE);
}

int pft_attach(pid_t pid, const struct pflops_trace_opts *opts, const struct pft_attach_opts *a, struct pflops_mix *mix,
	       int *exit_status, int *detached, struct pflops_error *err)
{
	static const struct pflops_trace_opts defaults;
	static const struct pft_attach_opts no_attach = { -1, -1, NULL };
	struct pft_tracer T;
	struct pending pd = { 0 };
	struct pft_space *sp;
	int rc, added, detach = 0, st;

	if (!a)
		a = &no_attach;
	if (detached)
		*detached = 0;
	if (pid <= 0 || !mix)
		return pfc_err(err, PFLOPS_EINVAL, "no process to attach to; pass its pid");
	if (pid == getpid())
		return pfc_err(err, PFLOPS_EINVAL,
			       "a process cannot trace itself; the flops component starts "
			       "a helper for that");
	memset(&T, 0, sizeof T);
	T.o = opts ? opts : &defaults;
	if ((rc = pft_engine_pick(T.o, &T, err))) {
		say(a->ready_fd, 'e');
		return rc;
	}
	T.st.engine = T.engine;
	pft_sys_fast_pick(&T);
	T.mix = mix;
	T.err = err;
	T.root = pid;
	T.sfd = -1;
	T.progress_ms = T.o->progress_ms ? T.o->progress_ms : 500;
	T.pub = a->pub;
	T.attached = 1;
	clock_gettime(CLOCK_MONOTONIC, &T.last);
	if (!(sp = pft_space_new(pid, T.o->region)) || (T.o->block && !(T.prof = pft_prof_new(T.o)))) {
		pft_space_put(sp);
		say(a->ready_fd, 'e');
		return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
	}
	sp->prof = T.prof;
	pft_sys_attached(&T, sp);
	T.pub_sp = sp;
	do
		rc = seize_pass(&T, pid, sp, &pd, &added);
	while (!rc && added);
	pft_space_put(sp); /* the threads hold it now */
	if (!rc && !T.threads)
		rc = pfc_err(err, PFLOPS_ECHILD, "process %d has no thread left to trace", (int)pid);
	if (rc) {
		pub_end(T.pub, PFC_PUB_FAILED, err ? err->msg : "attach failed");
		say(a->ready_fd, 'e');
		/* threads seized already are let go where they stand: none
		 * has entered the engine yet */
		for (struct pft_thr *t = T.threads; t; t = t->next)
			ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
		while (T.threads)
			pft_thread_drop(&T, T.threads->tid);
		free(pd.v);
		pft_prof_free(T.prof);
		return rc;
	}
	if (T.pub) {
		T.pub->pid = pid;
		T.pub->magic = PFC_PUB_MAGIC;
		__atomic_store_n(&T.pub->state, PFC_PUB_ATTACHED, __ATOMIC_RELEASE);
	}
	say(a->ready_fd, 'r');

	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (pthread_sigmask(SIG_BLOCK, &chld, &T.oldmask) == 0 &&
	    (T.sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		pthread_sigmask(SIG_SETMASK, &T.oldmask, NULL);
	while (T.threads) {
		struct pft_thr *t;
		pid_t p;
		if (T.ndefer) {
			struct pft_deferred d = T.defer[--T.ndefer];
			if (WIFEXITED(d.status) || WIFSIGNALED(d.status))
				pft_pub_forget(&T, d.pid);
			if ((rc = pft_engine_handle(&T, d.pid, d.status))) {
				keep_stop(&T, d.pid, d.status);
				break;
			}
			continue;
		}
		if (T.root_done || detach) {
			/* the process ended (what it started is let go), or
			 * we are asked to let go: every thread back in its own
			 * code, then detached */
			pub_end(T.pub, PFC_PUB_DETACHED, T.root_done ? "the process ended" : "the tracer detached");
			if (detach && detached)
				*detached = 1;
			rc = pft_detach_rest(&T);
			break;
		}
		p = wait_or_detach(&T, a, &st, &detach);
		if (p == 0)
			continue;
		if (p < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			pft_pub_forget(&T, p);
		t = thread_of(&T, p);
		if (t && WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_STOP && WSTOPSIG(st) == SIGTRAP &&
		    pending_take(&pd, p) && t->mode == PFT_M_STOP && !t->blk) {
			if ((rc = start_counting(&T, t))) {
				keep_stop(&T, p, st);
				break;
			}
			continue;
		}
		if (t && WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_EXEC && t->sp == T.pub_sp)
			T.pub_sp = NULL; /* a new image: nobody reads it */
		if ((rc = pft_engine_handle(&T, p, st))) {
			keep_stop(&T, p, st);
			break;
		}
	}
	if (rc) {
		pub_end(T.pub, PFC_PUB_FAILED, err ? err->msg : "the tracer failed");
		if (T.threads && pft_detach_rest(&T))
			pft_engine_kill_all(&T);
	}
	if (T.sfd >= 0) {
		close(T.sfd);
		pthread_sigmask(SIG_SETMASK, &T.oldmask, NULL);
	}
	free(pd.v);
	free(T.defer);
	pft_xlate_free(&T);
	if (!T.threads)
		pft_prof_free(T.prof);
	if (exit_status)
		*exit_status = T.root_done ? T.root_status : 0;
	if (T.o->stats)
		*T.o->stats = T.st;
	return rc;
}
