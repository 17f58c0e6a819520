/*
 * trace_detach.c: letting go of processes the traced program left behind.
 *
 * When the program itself has ended, processes it started and did not
 * wait for (daemons, background jobs) are counted up to that moment and
 * then detached: they go on running untraced, and the tracer does not
 * wait for them (as perf stat, and a shell, do not).  A process cannot
 * simply be detached where it stands: its threads may be in the code
 * cache, with %gs pointing at a counter slot, and int3s of ours sit in
 * its code.  So every thread is stopped (PTRACE_INTERRUPT), put back at
 * its original instruction with the program's own %gs, the int3s are
 * taken out, its counts harvested, and then it is detached, with the
 * signal it was stopped for, if any, passed on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "trace_internal.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

/* A thread inside the cache's own code (a counter increment, the lookup
 * routine) is stepped until it reaches a clean point of a copy. */
#define MAX_ROLL_STEPS 64

static int step(pid_t tid)
{
	int st;

	if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL))
		return -1;
	while (waitpid(tid, &st, __WALL) < 0)
		if (errno != EINTR)
			return -1;
	return WIFSTOPPED(st) ? 0 : -1;
}

/* Put a stopped thread back in the program's own code.  *trapped: it
 * stopped on an int3 (rip is one past it); cleared when the int3 was one
 * of ours (its SIGTRAP is not the program's). */
static int put_back(struct pft_tracer *T, struct pft_thr *t, int *trapped)
{
	struct user_regs_struct r;
	int dirty = 0, ex;

	if (pft_freq_settle(T, t) < 0 || pft_getregs(t->tid, &r)) /* (in a request) */
		return -1;
	if (*trapped && pft_bp_has(t->sp, pft_arch_trap_brk(PFT_PC(&r)))) {
		/* one of ours: the program's instruction is there */
		PFT_PC(&r) = pft_arch_trap_brk(PFT_PC(&r));
		dirty = 1;
		*trapped = 0;
	} else if (*trapped && !pft_cache_trap_target(T, t, &r, &ex)) {
		dirty = 1; /* a copy's exit, the lookup routine: where it goes */
		*trapped = 0;
	}
	for (int n = 0; t->sp->arena && pft_arena_chunk_of(t->sp->arena, PFT_PC(&r)); n++) {
		/* a step from the lookup's miss into a request (trace_freq.c):
		 * back at the miss's int3, never on to a FUTEX_WAIT */
		if (n > 0 && pft_freq_settle(T, t) > 0 && pft_getregs(t->tid, &r))
			return -1;
		if (t->tramp && t->blk && PFT_PC(&r) == t->tramp) {
			PFT_PC(&r) = t->blk->start;
		} else if (t->tramp && t->blk && PFT_PC(&r) == t->tramp_back) {
			PFT_PC(&r) = t->blk->ninsts > 1 ? t->blk->start + t->blk->offs[1] : t->blk->end;
		} else if (n > 0 && !pft_cache_trap_target(T, t, &r, &ex) && ex != -2) {
			/* the step ran a trap of the cache (the lookup
			 * routine's miss, a masked copy's end): where it goes */
		} else if (pft_cache_to_orig(T, t, &r)) {
			if (n == MAX_ROLL_STEPS || step(t->tid) || pft_getregs(t->tid, &r))
				return -1;
			continue;
		}
		dirty = 1;
		break;
	}
	t->tramp = 0;
	t->blk = NULL;
	if (pft_set_mode(T, t, &r, PFT_M_STOP, &dirty))
		return -1;
	return dirty ? pft_setregs(T, t, &r) : 0;
}

/* The signal a stop holds for the thread (0: none to pass on);
 * PFT_DETACH_TRAP: a SIGTRAP of an int3 (ours, or the program's). */
#define PFT_DETACH_TRAP 0x1000
static int held_signal(pid_t tid, int status)
{
	int sig = WSTOPSIG(status);
	siginfo_t si;

	if ((status >> 16) || sig == (SIGTRAP | 0x80))
		return 0;
	if (sig == SIGTRAP)
		return !ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) && si.si_code == SI_KERNEL ? PFT_DETACH_TRAP : 0;
	return sig;
}

/* a syscall-entry stop (system calls are injected differently there) */
static int at_entry(const struct pft_thr *t, int status)
{
	return WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80) && !(status >> 16) && !t->in_syscall;
}

int pft_proc_status(pid_t tid, const char *key, int base, unsigned long long *v)
{
	char fn[64], line[128];
	size_t n = strlen(key);
	int rc = -1;
	FILE *f;

	snprintf(fn, sizeof fn, "/proc/%d/status", (int)tid);
	if (!(f = fopen(fn, "re")))
		return -1;
	while (rc && fgets(line, sizeof line, f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			*v = strtoull(line + n + 1, NULL, base);
			rc = 0;
		}
	fclose(f);
	return rc;
}

/* Is a SIGTRAP queued for the thread (not yet delivered)?  An int3 that
 * a thread ran just as it was interrupted: the interrupt's stop comes
 * first (the kernel reports it before dequeuing signals), the SIGTRAP
 * stays queued, the thread's pc just past the int3: once detached, it
 * kills the thread; moved elsewhere first, it is reported there. */
int pft_trap_queued(pid_t tid)
{
	unsigned long long pend = 0;

	return !pft_proc_status(tid, "SigPnd", 16, &pend) && ((pend >> (SIGTRAP - 1)) & 1);
}

/* Let a stopped thread take its queued SIGTRAP as a signal stop, so that
 * the int3 it comes from is known (ours: dropped and the thread moved
 * back; the program's: kept).  The thread runs no instruction: a
 * stopped thread resumed with a signal queued stops again to report it.
 * Returns -1 when the thread ended. */
static int take_queued_trap(struct pft_tracer *T, struct pft_thr *t)
{
	int st;

	/* SIGTRAP is synchronous: dequeued before any other signal */
	for (int n = 0; n < 4 && t->detach_sig == 0 && pft_trap_queued(t->tid); n++) {
		if (ptrace(PTRACE_CONT, t->tid, NULL, NULL))
			return 0;
		while (waitpid(t->tid, &st, __WALL) < 0)
			if (errno != EINTR)
				return 0;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			pft_thread_drop(T, t->tid);
			return -1;
		}
		t->detach_sig = held_signal(t->tid, st);
	}
	return 0;
}

/* Step 2 of pft_detach_rest for a stopped thread: back in the program's
 * own code, with the signal it keeps. */
static void settle(struct pft_tracer *T, struct pft_thr *t)
{
	int trapped = t->detach_sig == PFT_DETACH_TRAP;

	if (t->detach_sig < 0 || !t->sp)
		return;
	if (put_back(T, t, &trapped)) {
		fprintf(stderr, "papi-flops: thread %d could not be put back in its own code; it is stopped instead\n",
			(int)t->tid);
		t->detach_sig = SIGKILL;
	} else if (t->detach_sig == PFT_DETACH_TRAP) {
		t->detach_sig = trapped ? SIGTRAP : 0; /* the program's own int3 keeps its signal */
	}
}

/* Step 3: our int3s out of its memory, the program's protections back */
static void clean(struct pft_tracer *T, struct pft_thr *t)
{
	if (t->sp && t->detach_sig >= 0 && t->detach_sig != SIGKILL) {
		pft_bp_clear(t->sp, t->tid, 1, UINT64_MAX);
		pft_wprot_restore(T, t); /* its pages writable again */
	}
}

/* Step 4: counted (harvested) and detached with its signal */
static void let_go(struct pft_tracer *T, struct pft_thr *t)
{
	pid_t tid = t->tid;
	int sig = t->detach_sig > 0 ? t->detach_sig : 0;

	if (sig == SIGKILL) {
		kill(tid, SIGKILL);
		sig = 0;
	}
	if (t->detach_sig >= 0 && t->sp && t->sp->pid == tid) {
		T->st.detached++;
		T->st.detached_pid = tid;
	}
	pft_thread_drop(T, tid); /* harvests its counts */
	ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
}

/* The threads still to stop whose vfork child we hold stopped: such a
 * parent stops only once its child has exec'd or exited (the kernel
 * waits for that uninterruptibly), so the children go first. */
static int vfork_held(struct pft_tracer *T, int release)
{
	int n = 0;

	for (struct pft_thr *p = T->threads; p; p = p->next) {
		struct pft_thr *c;
		if (p->detach_sig >= 0)
			continue;
		for (c = T->threads; c && !(c->vfork_parent == p->tid && c->detach_sig >= 0); c = c->next)
			;
		if (!c)
			continue;
		n++;
		if (release) { /* steps 2 to 4 for the child alone */
			pid_t tid = c->tid;
			if (take_queued_trap(T, c) || !pft_thread_find(T, tid))
				continue; /* (it ended) */
			settle(T, c);
			clean(T, c);
			let_go(T, c);
		}
	}
	return n;
}

int pft_detach_rest(struct pft_tracer *T)
{
	int left = 0, st;

	/* 1. stop every thread: those whose stop we hold already (a new
	 * thread's first stop, a status taken but not handled) stay; the
	 * others are interrupted (one in a job-control stop reports again) */
	for (struct pft_thr *t = T->threads; t; t = t->next)
		t->detach_sig = t->state == PFT_TH_WAIT_PARENT ? 0 : -1;
	while (T->ndefer) {
		struct pft_deferred d = T->defer[--T->ndefer];
		struct pft_thr *t;
		for (t = T->threads; t && t->tid != d.pid; t = t->next)
			;
		if (WIFEXITED(d.status) || WIFSIGNALED(d.status))
			pft_thread_drop(T, d.pid);
		else if (t && WIFSTOPPED(d.status)) {
			t->detach_sig = held_signal(d.pid, d.status);
			t->detach_entry = at_entry(t, d.status);
		}
	}
	for (struct pft_thr *t = T->threads; t; t = t->next) {
		if (t->detach_sig >= 0)
			continue;
		if (t->state != PFT_TH_WAIT_STOP && ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) && errno != ESRCH)
			return pfc_err(T->err, PFLOPS_ESYS, "PTRACE_INTERRUPT of thread %d: %s", (int)t->tid,
				       strerror(errno));
		left++;
	}
	while (left > 0) {
		pid_t p;
		struct pft_thr *t;
		if (vfork_held(T, 0) == left)
			vfork_held(T, 1);
		p = waitpid(-1, &st, __WALL);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (t = T->threads; t && t->tid != p; t = t->next)
			;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (t && t->detach_sig < 0)
				left--;
			pft_thread_drop(T, p);
			continue;
		}
		if (!t) {
			/* born while we stop the others: it shares or copies a
			 * traced process; it is let go when its parent's event
			 * arrives, which the interrupt of the parent precedes */
			if (!(t = pft_thread_add(T, p, PFT_TH_RUN)))
				return pfc_err(T->err, PFLOPS_ENOMEM, "out of memory");
			t->detach_sig = held_signal(p, st);
			continue;
		}
		if (t->detach_sig < 0) {
			t->detach_sig = held_signal(p, st);
			t->detach_entry = at_entry(t, st);
			left--;
		}
	}
	/* 2. a SIGTRAP still queued is taken now, while our int3s tell
	 * whose it is; then every thread back in the program's own code */
	for (struct pft_thr *t = T->threads, *next; t; t = next) {
		next = t->next;
		if (t->detach_sig >= 0)
			take_queued_trap(T, t);
	}
	for (struct pft_thr *t = T->threads; t; t = t->next)
		settle(T, t);
	/* 3. our int3s out of each process's code and the program's page
	 * protections back, through a stopped thread */
	for (struct pft_thr *t = T->threads; t; t = t->next)
		clean(T, t);
	/* 4. each thread counted and let go, with the signal it stopped for
	 * (an int3 of the program's own gets its SIGTRAP back) */
	while (T->threads)
		let_go(T, T->threads);
	return 0;
}
