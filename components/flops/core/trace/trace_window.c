/*
 * trace_window.c: --region F with threads.  A call of F opens a window in
 * its address space, from F's entry to its return on the calling thread
 * (the union of the calls when several threads are inside F at once).
 * Every thread of the space counts while a window is open, as work done
 * on behalf of the call: threads started in it (an OpenMP team created
 * by the first parallel region), and threads that ran natively when it
 * opened (a BLAS or OpenMP pool started before the call), which are
 * stopped (PTRACE_INTERRUPT) and put on the counting path at once.
 *
 * What cannot be told apart: a thread that was running program code, not
 * waiting in a system call, when the window opened may be a pool worker
 * spinning for work, or unrelated concurrent work.  Its FP work in the
 * window is counted, and said apart (stats region_busy_*, role
 * RUNNING) so that the report can say so.
 *
 * A thread that counted in the code cache has its slot harvested when
 * the window closes (or when it leaves F); what its copies count after
 * that, before it is back on native code, is dropped.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "trace_internal.h"

/* FLOPs counted by t since `before` (the mix's FLOPs then) */
void pft_win_flops(struct pft_tracer *T, struct pft_thr *t, uint64_t before)
{
	t->win_flops += pflops_mix_flops(T->mix, -1) - before;
}

/* t's cache counts go into the mix, as its own */
static void keep(struct pft_tracer *T, struct pft_thr *t)
{
	uint64_t f0;

	if (t->slot < 0 || !t->sp->arena)
		return;
	f0 = pflops_mix_flops(T->mix, -1);
	T->st.cache_runs += pft_harvest(t->sp->arena, t->slot, T->mix, 1);
	pft_win_flops(T, t, f0);
}

/* t's cache counts are not the window's: dropped */
static void discard(struct pft_thr *t)
{
	struct pft_arena *a = t->sp->arena;
	uint8_t *m;

	if (t->slot < 0 || !a || !(m = pft_slot_mem(a, t->slot)))
		return;
	memset(m + PFT_SLOT_CNT, 0, (size_t)a->nids * 8);
}

/* The FP work of a thread that was busy when the window opened. */
static void settle(struct pft_tracer *T, struct pft_thr *t)
{
	if (t->win_busy) {
		uint64_t d = t->win_flops - t->win_open_flops;
		if (d) {
			T->st.region_busy_threads++;
			T->st.region_busy_flops += d;
			t->win_ran = 1;
		}
	}
	t->win_busy = 0;
	t->win_open_flops = t->win_flops;
}

static void open_window(struct pft_tracer *T, struct pft_thr *opener)
{
	struct pft_space *sp = opener->sp;

	T->st.region_windows++;
	for (struct pft_thr *u = T->threads; u; u = u->next) {
		if (u == opener || u->sp != sp)
			continue;
		u->win_open_flops = u->win_flops;
		u->win_busy = 0;
		if (u->state != PFT_TH_RUN || u->detach_sig)
			continue; /* not started yet: starts counting */
		switch (u->mode) {
		case PFT_M_NATIVE:
			/* where it is decides its role (pft_win_stop) */
			u->win_busy = -1;
			if (!u->win_join && ptrace(PTRACE_INTERRUPT, u->tid, NULL, NULL) == 0) {
				u->win_join = 1;
				T->st.region_joined++;
			}
			break;
		case PFT_M_CACHE:
			/* still in the cache since the last window: what
			 * it counted since is not this one's */
			discard(u);
			/* fall through */
		default:
			/* waiting in a system call (stops at its exit) */
			u->win_busy = !u->in_syscall;
			break;
		}
	}
}

static void close_window(struct pft_tracer *T, struct pft_thr *closer)
{
	struct pft_space *sp = closer->sp;

	for (struct pft_thr *u = T->threads; u; u = u->next) {
		if (u == closer || u->sp != sp)
			continue;
		if (u->mode == PFT_M_CACHE) {
			keep(T, u);
			/* back to native code at its next clean point */
			if (u->state == PFT_TH_RUN && !u->win_join && !u->win_leave && !u->detach_sig &&
			    ptrace(PTRACE_INTERRUPT, u->tid, NULL, NULL) == 0)
				u->win_leave = 1;
		}
		settle(T, u);
	}
}

void pft_win_enter(struct pft_tracer *T, struct pft_thr *t)
{
	settle(T, t); /* what it did in the window before it called F */
	t->win_caller = 1;
	if (t->sp->win_calls++ == 0)
		open_window(T, t);
}

void pft_win_leave(struct pft_tracer *T, struct pft_thr *t)
{
	keep(T, t);
	if (t->sp->win_calls > 0 && --t->sp->win_calls == 0)
		close_window(T, t);
}

static void record(struct pft_tracer *T, const struct pft_thr *t)
{
	struct pft_stats *st = &T->st;

	if (!t->win_flops && !t->win_caller)
		return;
	if (st->region_nthreads < PFT_REGION_THREADS) {
		struct pft_region_thread *e = &st->region_thread[st->region_nthreads++];
		e->tid = t->tid;
		e->role = t->win_caller ? PFT_RT_CALLER : t->win_ran ? PFT_RT_RUNNING : PFT_RT_POOL;
		e->flops = t->win_flops;
	} else {
		st->region_more_threads++;
		st->region_more_flops += t->win_flops;
	}
}

/* t ends (or execs): its counts, its call if it was inside F. */
void pft_win_drop(struct pft_tracer *T, struct pft_thr *t)
{
	if (!T->o->region || !t->sp)
		return;
	if (pft_counting(T, t))
		keep(T, t);
	else
		discard(t);
	settle(T, t);
	if (t->in_region) {
		t->in_region = 0;
		if (t->sp->win_calls > 0 && --t->sp->win_calls == 0)
			close_window(T, t);
	}
	record(T, t);
	t->win_flops = t->win_open_flops = 0;
	t->win_caller = t->win_ran = 0;
}

/* stopped on its way back from a system call that the kernel restarts
 * (rip may not move: the kernel backs it up over the syscall) */
int pft_sys_restarting(const struct user_regs_struct *r)
{
	int64_t rax = (int64_t)PFT_SYSRET(r);

	return (int64_t)PFT_SYSNR(r) >= 0 && (rax == -512 || rax == -513 || rax == -514 || rax == -516);
}

static int has_pause(struct pft_space *sp, pid_t tid, const struct pft_block *b)
{
	uint8_t op[2];

	for (uint32_t i = 0; i < b->ninsts; i++)
		if (pft_mem_read(sp, tid, b->start + b->offs[i], op, 2) == 2 && pft_arch_is_spin_hint(op, 2))
			return 1;
	return 0;
}

/* In a spin-wait loop: a PAUSE (the CPU's spin-wait hint: libgomp's
 * wait before it sleeps) in the block at pc or within two branches of
 * it, and no FP instruction in the block at pc. */
static int spinning(struct pft_tracer *T, struct pft_thr *t, uint64_t pc)
{
	uint64_t q[7];
	int n = 1;

	q[0] = pc;
	for (int i = 0; i < n; i++) {
		struct pft_block *b = pft_block_get(t->sp, t->tid, q[i], 0, &T->st.blocks_decoded);
		if (!b || (i == 0 && b->nfp))
			return 0;
		if (has_pause(t->sp, t->tid, b))
			return 1;
		if (i >= 3)
			continue; /* two branches away: no further */
		if ((b->term.term == PFT_T_JCC || b->term.term == PFT_T_JMP || b->term.term == PFT_T_LOOP) &&
		    !b->term.ind && b->term.target)
			q[n++] = b->term.target;
		if (b->term.term == PFT_T_JCC || b->term.term == PFT_T_LOOP || b->term.term == PFT_T_NONE)
			q[n++] = b->end;
	}
	return 0;
}

/*
 * The PTRACE_INTERRUPT stop of a thread sent to join a window or to
 * leave the cache after one.  Returns the restart's result.
 */
int pft_win_stop(struct pft_tracer *T, struct pft_thr *t)
{
	struct user_regs_struct r;
	int join = t->win_join;

	t->win_join = t->win_leave = 0;
	if (pft_getregs(t->tid, &r))
		return 0;
	if (pft_trap_queued(t->tid)) {
		/* it ran an int3 (F's entry, a copy's exit) as it was
		 * interrupted: its pc is past it and the SIGTRAP comes as
		 * soon as it resumes, before any instruction.  Moved from
		 * here, it would run a block decoded from the middle of an
		 * instruction and then take that SIGTRAP as the program's
		 * (it died of it); the trap's own stop joins or leaves. */
		if (join && t->win_busy < 0)
			t->win_busy = !spinning(T, t, pft_arch_trap_brk(PFT_PC(&r)));
		return pft_restart(T, t, t->resume, 0);
	}
	if (join && t->win_busy < 0)
		/* in the kernel (a system call) or spinning: waiting */
		t->win_busy = (int64_t)PFT_SYSNR(&r) < 0 && !spinning(T, t, PFT_PC(&r));
	if (t->mode == PFT_M_NATIVE && pft_counting(T, t)) {
		if (pft_sys_restarting(&r)) {
			/* count from the return of the restarted call */
			t->in_syscall = 0;
			t->resume = PTRACE_SYSCALL;
			return pft_restart(T, t, PTRACE_SYSCALL, 0);
		}
		return pft_go(T, t, &r, 0);
	}
	if (t->mode == PFT_M_CACHE && !pft_counting(T, t) && !t->in_syscall && !t->roll_sig && !pft_sys_restarting(&r))
		return pft_go(T, t, &r, 0);
	return pft_restart(T, t, t->resume, 0);
}
