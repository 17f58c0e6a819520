/*
 * trace_freq.c: translation requests without a ptrace stop, by default
 * in a process while it has one thread (a cold numpy run 2 to 5% less
 * CPU with them; javac, dozens of threads, 20% more): PFLOPS_TRACE_FUTEX=1
 * for every process, 0 for none (docs/trace-engine.md, "Requests
 * through a futex").
 *
 * A copy's exit to a block not yet translated runs its stub, which,
 * instead of an int3, asks the tracer through the thread's slot (the
 * request routine, x86_64/trace_ibl.c; a lookup miss has one of its
 * own, with the target in Q_TGT): the registers a futex call
 * clobbers saved, Q_STATE = 1, its process's bell rung (FUTEX_WAKE), a
 * FUTEX_WAIT until the tracer writes Q_TO and Q_STATE = 2.  The tracer's
 * single thread waits on the bells and on a word its SIGCHLD handler
 * sets (futex_waitv), so ptrace events and requests wake it alike.
 *
 * It serves a request only when the outcome is the plain one (the target
 * gets a copy without a system call injected into the process, the
 * thread stays in the cache); otherwise it answers with the stub's int3,
 * and the thread goes the old way with its registers as they were.
 *
 * A thread stopped by ptrace (a signal, an interrupt, a group stop, a
 * system-call stop) while in the request path is settled first
 * (pft_freq_settle): its registers back from the slot where the routine
 * had saved them, pc at its stub's int3 (not run yet: the old way when
 * it runs on), orig_rax -1 (an interrupted FUTEX_WAIT is not restarted
 * into our code), the request cancelled.  At that pc the engine sees a
 * thread at its copy's exit (PFT_XP_DONE), as for a stop at the int3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "trace_internal.h"
#include "trace_hints.h"
#include "trace_wprot.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#ifndef FUTEX_32
#define FUTEX_32 2
struct futex_waitv {
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t __reserved;
};
#endif

#define MAX_BELLS 64 /* processes whose bells one wait watches */

static uint32_t chld_word; /* set by the SIGCHLD handler */
/* the last waitpid found no event, and no SIGCHLD came after it began:
 * none waits (a request's turn then saves its waitpid) */
static int drained;

static void on_chld(int sig)
{
	int e = errno;

	(void)sig;
	__atomic_store_n(&chld_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &chld_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = e;
}

int pft_freq_pick(struct pft_tracer *T, struct pflops_error *err)
{
	const char *e = getenv("PFLOPS_TRACE_FUTEX");

	T->freq = PFT_FREQ_OFF;
	if (e && *e && strcmp(e, "0") && strcmp(e, "1"))
		return pfc_err(err, PFLOPS_EINVAL,
			       "PFLOPS_TRACE_FUTEX=%s: give 0 (off), 1 (every process) or leave it "
			       "unset (the default: a process while it has one thread)",
			       e);
	if (e && !strcmp(e, "0"))
		return 0;
	/* the plain cases only: no --region, overflow, single steps, and
	 * system calls from the cache without stops */
	if (T->engine != PFT_ENGINE_CACHE || !T->sysfast || T->o->region || T->o->single_step || pft_ovf_on(T))
		return 0;
	errno = 0;
	if (syscall(SYS_futex_waitv, NULL, 0, 0, NULL, 0) < 0 && errno == ENOSYS)
		return 0;
	T->freq = e && *e ? PFT_FREQ_ALL : PFT_FREQ_ONE;
	return 0;
}

void pft_freq_start(struct pft_tracer *T)
{
	struct sigaction sa;
	sigset_t chld;

	if (!T->freq)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigaction(SIGCHLD, &sa, &T->freq_oldact)) {
		T->freq = 0;
		return;
	}
	pthread_sigmask(SIG_UNBLOCK, &chld, &T->freq_oldmask);
	drained = 0; /* (stops before the handler came: waitpid first) */
	T->freq_on = 1;
}

void pft_freq_stop(struct pft_tracer *T)
{
	if (!T->freq_on)
		return;
	sigaction(SIGCHLD, &T->freq_oldact, NULL);
	pthread_sigmask(SIG_SETMASK, &T->freq_oldmask, NULL);
	T->freq_on = 0;
}

/* A process with a seccomp filter may be killed for a system call of
 * ours: the old way there. */
int pft_freq_space_ok(const struct pft_tracer *T, const struct pft_space *sp)
{
	unsigned long long mode = 1;

	return T->freq && !(T->freq == PFT_FREQ_ONE && sp->threaded) &&
	       !pft_proc_status(sp->pid, "Seccomp", 10, &mode) && mode == 0;
}

void pft_freq_thread(struct pft_tracer *T, struct pft_space *sp)
{
	sp->threaded = 1;
	if (T->freq != PFT_FREQ_ONE)
		return;
	pft_freq_off(sp);
	for (const struct pft_thr *u = T->threads; u; u = u->next)
		if (u->sp && u->sp->arena && u->sp->arena->freq && !u->sp->arena->freq_off)
			return; /* a process that asks still */
	/* None can ask now, and none will (pft_freq_space_ok): the tracer
	 * waits for stops alone again, not woken by its SIGCHLD handler
	 * at each (javac: 100,000 to 170,000 stops) */
	T->freq = PFT_FREQ_OFF;
	pft_freq_stop(T);
	pft_wait_start(T);
}

int pft_freq_bell(struct pft_arena *a)
{
	uint8_t *m = pft_slot_mem(a, 0);

	if (!m)
		return -1;
	a->bell = (uint32_t *)(m + PFT_SLOT_BELL);
	return 0;
}

int pft_freq_off(struct pft_space *sp)
{
	struct pft_arena *a = sp->arena;

	if (!a || !a->freq || a->freq_off)
		return 0;
	a->freq_off = 1;
	for (size_t i = 0; i < a->nchunks; i++) {
		struct pft_chunk *c = a->chunks[i];
		if (!c->ibl.req)
			continue;
		/* one-byte and aligned two-byte stores: a thread running
		 * there sees the old or the new instruction's first bytes */
		__atomic_store_n(c->mem + (c->ibl.miss - c->addr), 0xcc, __ATOMIC_RELEASE);
		for (size_t j = 0; j < c->nxb; j++) {
			struct pft_xblock *x = c->xb[j];
			for (int k = 0; x->fstub && k < x->nex; k++)
				__atomic_store_n((uint16_t *)(c->mem + (x->addr + x->ex[k].stub - c->addr)), 0xcccc,
						 __ATOMIC_RELEASE);
		}
	}
	return 1;
}

/* u is blocked in vfork until a child of its memory execs or exits */
static int in_vfork(const struct pft_tracer *T, const struct pft_thr *u)
{
	for (const struct pft_thr *w = T->threads; w; w = w->next)
		if (w->vfork_parent == u->tid)
			return 1;
	return 0;
}

void pft_freq_seccomp(struct pft_tracer *T, struct pft_thr *t)
{
	struct pft_arena *a = t->sp ? t->sp->arena : NULL;

	if (!pft_freq_off(t->sp))
		return;
	/* A filter set with SECCOMP_FILTER_FLAG_TSYNC holds for the other
	 * threads as soon as the call runs: one between its stub and its
	 * FUTEX_WAIT would make a futex call under it.  Each one running
	 * now is stopped here and its stop left to the event loop
	 * (pft_defer), whose pft_freq_settle puts it back at an int3
	 * before it runs on.  One already in a ptrace stop is settled when
	 * that stop is handled.  Stopping them all, not only those whose
	 * Q_ID is set: one may have passed its stub's first bytes before
	 * they became an int3, and not yet stored Q_ID.  Not a vfork
	 * parent: it runs none of its code until its child (maybe t,
	 * stopped here) execs, and would not stop before (no wait could
	 * end). */
	for (struct pft_thr *u = T->threads; u; u = u->next) {
		struct user_regs_struct r;
		int st;
		pid_t p;

		if (u == t || !u->sp || u->sp->arena != a || u->state != PFT_TH_RUN || u->detach_sig ||
		    in_vfork(T, u) || ptrace(PTRACE_GETREGS, u->tid, NULL, &r) == 0 ||
		    ptrace(PTRACE_INTERRUPT, u->tid, NULL, NULL))
			continue;
		while ((p = waitpid(u->tid, &st, __WALL)) < 0 && errno == EINTR)
			;
		if (p != u->tid)
			continue;
		pft_defer(T, p, st);
		T->st.freq_stopped++;
	}
}

/* the request words of t's slot (NULL: t cannot ask) */
static uint8_t *qslot(const struct pft_thr *t)
{
	struct pft_arena *a = t->sp ? t->sp->arena : NULL;

	if (!a || !a->freq || t->slot < 0)
		return NULL;
	return pft_slot_mem(a, t->slot);
}

static uint32_t *qword(uint8_t *m, int off)
{
	return (uint32_t *)(m + off);
}

void pft_freq_outside(const struct pft_thr *t)
{
	uint8_t *m = qslot(t);

	if (m && *qword(m, PFT_SLOT_Q_ID))
		__atomic_store_n(qword(m, PFT_SLOT_Q_ID), 0, __ATOMIC_RELAXED);
}

int pft_freq_settle(struct pft_tracer *T, struct pft_thr *t)
{
	uint8_t *m = qslot(t);
	struct pft_arena *a;
	struct user_regs_struct r;
	const struct pft_xpoint *pt;
	struct pft_chunk *ch;
	struct pft_xblock *x;
	uint64_t pc, trap = 0;

	if (!m || !__atomic_load_n(qword(m, PFT_SLOT_Q_ID), __ATOMIC_ACQUIRE))
		return 0;
	a = t->sp->arena;
	if (pft_getregs(t->tid, &r))
		return 0;
	pc = PFT_PC(&r);
	ch = pft_arena_chunk_of(a, pc);
	if (ch && ch->ibl.req &&
	    ((pc >= ch->ibl.miss && pc < ch->ibl.exit) || (pc >= ch->ibl.mreq && pc < ch->ibl.req_end))) {
		/* a lookup miss's: back at the old miss (target in %rax) */
		if (pc > ch->ibl.mreq && pc < ch->ibl.req_end)
			pft_arch_req_target(&r, m);
		if (pc >= ch->ibl.mreq_saved && pc < ch->ibl.req_end)
			pft_arch_req_restore(&r, m, 1);
		trap = ch->ibl.mtrap;
	} else if (ch && ch->ibl.req && pc >= ch->ibl.req && pc < ch->ibl.mreq) {
		/* an exit's: its stub is the one Q_ID names */
		if (pc >= ch->ibl.req_saved)
			pft_arch_req_restore(&r, m, 0);
		trap = ch->addr + *qword(m, PFT_SLOT_Q_ID) + PFT_FSTUB_TRAP;
	} else if (ch && (x = pft_xlate_find(a, pc, &pt)) && x->fstub && pt && pt->kind == PFT_XP_DONE) {
		uint64_t stub = x->addr + x->ex[pt->arg].stub;
		if (pc >= stub + PFT_FSTUB_REQ && pc < stub + PFT_FSTUB_TRAP)
			trap = stub + PFT_FSTUB_TRAP; /* on its way in */
	}
	__atomic_store_n(qword(m, PFT_SLOT_Q_STATE), 0, __ATOMIC_RELEASE);
	__atomic_store_n(qword(m, PFT_SLOT_Q_ID), 0, __ATOMIC_RELAXED);
	if (!trap)
		return 0;
	PFT_PC(&r) = trap;
	PFT_SYSNR(&r) = (unsigned long long)-1; /* no restart of a FUTEX_WAIT */
	T->st.freq_settled++;
	if (pft_setregs(T, t, &r))
		return -1;
	return 1;
}

/* May t's request be served (the plain case)? */
static int plain(const struct pft_tracer *T, const struct pft_thr *t)
{
	return t->mode == PFT_M_CACHE && t->resume == PTRACE_CONT && !t->roll_sig && !t->resend_sig &&
	       t->state == PFT_TH_RUN && pft_counting(T, t);
}

/* target's copy, made now if it needs no system call injected into the
 * process (t runs), or 0 */
static uint64_t copy_of(struct pft_tracer *T, struct pft_thr *t, uint64_t target, struct pft_xblock **xp)
{
	struct pft_space *sp = t->sp;
	struct pft_block *b;
	uint64_t entry;
	int was, fresh;

	pft_mem_fresh();
	b = pft_block_get(sp, t->tid, target, 0, &T->st.blocks_decoded);
	if (!b || b->nocache)
		return 0;
	if (!b->wp_done) {
		if (!pft_wprot_quiet(sp, t->tid, b))
			return 0; /* guarding its page injects an mprotect */
		b->wp_done = 1;
	}
	T->noinject = 1;
	T->inject_wanted = 0;
	was = b->nocache;
	fresh = !b->x;
	entry = pft_xlate(T, t, b);
	if (!was && b->nocache)
		T->st.nocache[b->nocache]++;
	if (entry && fresh)
		pft_xlate_ahead(T, t, b, pft_hints_touch(T, t, b, T->ahead));
	T->noinject = 0;
	*xp = b->x;
	return entry && b->x && entry == b->x->addr ? entry : 0;
}

/* Where t's exit request goes: the target's copy (the exit linked to
 * it), or 0 (the stub's int3: the old way). */
static uint64_t serve_exit(struct pft_tracer *T, struct pft_thr *t, uint64_t stub)
{
	struct pft_arena *a = t->sp->arena;
	const struct pft_xpoint *pt;
	struct pft_xblock *from = pft_xlate_find(a, stub, &pt), *to;
	uint64_t entry;
	int k;

	if (!plain(T, t) || !from || !pt || pt->kind != PFT_XP_DONE || from->dead || from->masked || !from->fstub ||
	    from->addr + from->ex[pt->arg].stub != stub)
		return 0;
	k = (int)pt->arg;
	if (from->ex[k].to) /* linked meanwhile (another thread asked) */
		return from->ex[k].to->dead ? 0 : from->ex[k].to->addr;
	if (!(entry = copy_of(T, t, from->ex[k].target, &to)))
		return 0;
	if (!from->dead && !from->ex[k].to) {
		pft_xlate_link(&T->st, from, k, to);
	}
	return entry;
}

/* Where t's lookup miss goes: the target's copy (put in the lookup
 * table), or 0 (the old miss's int3) */
static uint64_t serve_miss(struct pft_tracer *T, struct pft_thr *t, uint64_t target)
{
	struct pft_xblock *x;
	uint64_t entry;

	if (!plain(T, t) || !(entry = copy_of(T, t, target, &x)))
		return 0;
	pft_table_renew(T, t->sp);
	if (pft_table_insert_looked(t->sp->arena, target, x, entry))
		T->st.table_full++;
	T->st.freq_misses++;
	return entry;
}

/* Answer every request posted (Q_STATE 1) in the traced threads' slots;
 * 1 if there was one. */
static int serve_all(struct pft_tracer *T)
{
	int n = 0;

	for (struct pft_thr *t = T->threads; t; t = t->next) {
		uint8_t *m = qslot(t);
		uint64_t stub, to, trap;
		uint32_t *st;

		if (!m)
			continue;
		st = qword(m, PFT_SLOT_Q_STATE);
		if (__atomic_load_n(st, __ATOMIC_ACQUIRE) != 1)
			continue;
		if (*qword(m, PFT_SLOT_Q_ID) == 1) { /* a lookup miss */
			uint64_t target = *(uint64_t *)(m + PFT_SLOT_Q_TGT);
			to = serve_miss(T, t, target);
			trap = t->sp->arena->chunks[0]->ibl.mtrap_pre; /* (any chunk's) */
		} else {
			stub = *(uint64_t *)(m + PFT_SLOT_Q_CHUNK) + *qword(m, PFT_SLOT_Q_ID);
			to = serve_exit(T, t, stub);
			trap = stub + PFT_FSTUB_TRAP;
		}
		if (to) {
			T->st.freq_served++;
		} else {
			to = trap;
			T->st.freq_traps++;
		}
		memcpy(m + PFT_SLOT_Q_TO, &to, 8);
		__atomic_store_n(st, 2, __ATOMIC_RELEASE);
		syscall(SYS_futex, st, FUTEX_WAKE, 1, NULL, NULL, 0);
		n++;
	}
	return n > 0;
}

/* The bells of the traced processes into w after w[0] (the SIGCHLD
 * word); each rung is cleared, *rung set.  Returns how many. */
static int bells(struct pft_tracer *T, struct futex_waitv *w, int *rung, int *over)
{
	int nw = 1;

	for (struct pft_thr *t = T->threads; t; t = t->next) {
		struct pft_arena *a = t->sp ? t->sp->arena : NULL;
		int seen = 0;
		if (!a || !a->freq || !a->bell)
			continue;
		for (int i = 1; i < nw; i++)
			seen |= w[i].uaddr == (uint64_t)(uintptr_t)a->bell;
		if (seen)
			continue;
		if (rung)
			*rung |= __atomic_exchange_n(a->bell, 0, __ATOMIC_ACQ_REL) != 0;
		if (nw <= MAX_BELLS)
			w[nw++] = (struct futex_waitv){ 0, (uint64_t)(uintptr_t)a->bell, FUTEX_32, 0 };
		else
			*over = 1;
	}
	w[0] = (struct futex_waitv){ 0, (uint64_t)(uintptr_t)&chld_word, FUTEX_32 | FUTEX_PRIVATE_FLAG, 0 };
	return nw;
}

pid_t pft_freq_poll(struct pft_tracer *T, int *st)
{
	for (;;) {
		pid_t p;

		/* (an event after the exchange rings again: the next turn,
		 * or the sleep, sees the word set) */
		if (__atomic_exchange_n(&chld_word, 0, __ATOMIC_ACQ_REL) || !drained) {
			p = waitpid(-1, st, __WALL | WNOHANG);
			drained = p == 0;
			if (p != 0) {
				if (p > 0)
					pft_mem_fresh();
				return p;
			}
		}
		/* (the bells are left rung while awake: a request then makes
		 * no FUTEX_WAKE, pft_freq_sleep clears them) */
		if (!serve_all(T))
			return 0;
		if (T->ndefer) {
			/* a stop taken while serving (a thread interrupted to
			 * renew the lookup table, trace_ids.c): handled now, or
			 * that thread waits for as long as requests come */
			struct pft_deferred d = T->defer[--T->ndefer];
			*st = d.status;
			pft_mem_fresh();
			return d.pid;
		}
	}
}

/* a request posted and not yet answered */
static int asked(const struct pft_tracer *T)
{
	for (const struct pft_thr *t = T->threads; t; t = t->next) {
		uint8_t *m = qslot(t);
		if (m && __atomic_load_n(qword(m, PFT_SLOT_Q_STATE), __ATOMIC_ACQUIRE) == 1)
			return 1;
	}
	return 0;
}

/* The bells are cleared only here, before the tracer sleeps: while it
 * is awake (serving, or held back by the program it woke, which runs on
 * its CPU) a bell stays rung and a request makes one system call, its
 * FUTEX_WAIT, not two (a cold numpy solve: 8,300 requests, the tracer
 * asleep at about half of them).  A request posted before the clear is seen
 * by the look at the slots after it (the program's Q_STATE store comes
 * before its xchg of the bell, the tracer's xchg before its look); one
 * after it finds the bell 0 and wakes the tracer, or its futex_waitv
 * finds the bell rung and returns at once. */
int pft_freq_sleep(struct pft_tracer *T, int timeout_ms)
{
	struct futex_waitv w[MAX_BELLS + 1];
	struct timespec until, *tp = NULL;
	int over = 0, rung = 0, nw = bells(T, w, &rung, &over); /* (cleared) */

	if (asked(T))
		return 0;

	if (over && (timeout_ms < 0 || timeout_ms > 10))
		timeout_ms = 10; /* more processes than one wait watches */
	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		tp = &until;
	}
	if (syscall(SYS_futex_waitv, w, nw, 0, tp, CLOCK_MONOTONIC) < 0 && errno == ETIMEDOUT)
		return 1;
	return 0;
}
