/*
 * trace_enter.c: where a thread goes at the start of each block it runs
 * (pft_enter): which block, in which mode (trace_internal.h), with
 * the %gs base of that mode; the region's entries and the loader hook;
 * and the stopping path's own stops (int3 at a block's end, steps).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>

#include "trace_internal.h"

#define fail pfc_err

/* blocks translated ahead of a new one (what its copy jumps to next) */

int pft_counting(const struct pft_tracer *T, const struct pft_thr *t)
{
	return !T->o->region || t->in_region || (t->sp && t->sp->win_calls > 0);
}

/* The live opmask registers when the block has masked instructions;
 * NULL (lanes then count in full, and mask_unknown says so) otherwise. */
static const uint64_t *block_masks(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *b, uint64_t k[8])
{
	if (!b->has_mask)
		return NULL;
	if (pft_read_kregs(t->tid, k) == 0)
		return k;
	T->st.mask_unknown++;
	return NULL;
}

/* opts->fp_exec for the FP instructions [lo, hi) of a masked block
 * (each run of one is seen: at its copy's end, or on the stopping path) */
static void fp_exec(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *b, uint32_t lo, uint32_t hi,
		    const uint64_t *k)
{
	if (!T->o->fp_exec || !b->has_mask)
		return;
	for (uint32_t i = 0; i < b->nfp; i++) {
		const struct pft_fpent *e = &b->fp[i];
		if (e->idx < lo || e->idx >= hi)
			continue;
		struct pft_fp_exec x = { .addr = b->start + b->offs[e->idx],
					 .tid = t->tid,
					 .prec = e->prec,
					 .width = e->width,
					 .op = e->op,
					 .lanes = e->lanes,
					 .mask_reg = e->mask_reg,
					 .lanes_per_bit = e->lanes_per_bit,
					 .k = k };
		T->o->fp_exec(T->o->fp_exec_arg, &x);
	}
}

void pft_count_block(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, uint32_t n)
{
	uint64_t k[8], f0;
	const uint64_t *km;

	if (!pft_counting(T, t) || n == 0)
		return;
	km = block_masks(T, t, b, k);
	f0 = T->o->region ? pflops_mix_flops(T->mix, -1) : 0;
	pft_block_count(T->mix, b, n, km);
	if (T->o->region)
		pft_win_flops(T, t, f0);
	pft_pub_count(T, t, b, n, -1, km);
	pft_prof_count(b, n, km);
	pft_ovf_count(T, t, b, 0, n, km);
	fp_exec(T, t, b, 0, n, km);
	if (n >= b->ninsts)
		b->execs++;
	T->st.blocks_run++;
}

static void count_one(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, int idx)
{
	uint64_t k[8], f0;
	const uint64_t *km;

	if (!pft_counting(T, t))
		return;
	km = block_masks(T, t, b, k);
	f0 = T->o->region ? pflops_mix_flops(T->mix, -1) : 0;
	pft_block_count_one(T->mix, b, (uint32_t)idx, km);
	if (T->o->region)
		pft_win_flops(T, t, f0);
	pft_pub_count(T, t, b, 0, idx, km);
	pft_prof_one(b, (uint32_t)idx, km);
	pft_ovf_count(T, t, b, (uint32_t)idx, (uint32_t)idx + 1, km);
	fp_exec(T, t, b, (uint32_t)idx, (uint32_t)idx + 1, km);
	if ((uint32_t)idx + 1 == b->ninsts) {
		for (int x = 0; x < PFLOPS_NEXTRA; x++)
			T->mix->extra[x] += b->extra[x];
		b->execs++;
		T->st.blocks_run++;
	}
}

static int emulable(const struct pft_block *b)
{
	return pft_branch_emulable(b->term.term);
}

/* Mode of t from now on, and the %gs base that goes with it: the cache
 * counts through the thread's slot, the program's code sees its own. */
int pft_set_mode(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int mode, int *dirty)
{
	uint64_t gs;
	const struct pft_arena *sa = t->sp->arena;

	/* Outside the cache the %gs base is the program's own, which it may
	 * have set with wrgsbase (run on the stopping path): keep it.  Not a
	 * slot's (a new thread or child has its parent's). */
	if (t->mode != PFT_M_CACHE && !(sa && PFT_CACHE_BASE(r) >= sa->slots &&
					PFT_CACHE_BASE(r) < sa->slots + (uint64_t)sa->nslots * sa->slot_bytes))
		t->prog_gs = PFT_CACHE_BASE(r);
	gs = t->prog_gs;
	if (t->mode == PFT_M_CACHE && mode != PFT_M_CACHE)
		pft_ovf_sync(T, t, 0); /* what it ran there */
	if (mode == PFT_M_CACHE) {
		struct pft_arena *a = t->sp->arena;
		/* the lookup routine leaves the cache above rsp0: the
		 * function's return; a thread counting for a window of
		 * another's call stays */
		uint64_t rsp0 = t->in_region ? t->region_sp : PFT_WIN_RSP0;
		uint8_t *m;
		if (!a)
			return -1;
		if (t->slot < 0 && (t->slot = pft_slot_alloc(a)) < 0)
			return -1;
		pft_pub_slot(T, t);
		if (!(m = pft_slot_mem(a, t->slot)))
			return -1;
		memcpy(m + PFT_SLOT_RSP0, &rsp0, 8);
		pft_ovf_sync(T, t, 1);
		gs = pft_slot_addr(a, t->slot);
	}
	if (PFT_CACHE_BASE(r) != gs) {
		PFT_CACHE_BASE(r) = gs;
		*dirty = 1;
	}
	t->mode = mode;
	return 0;
}

/* Arm what the region scan found: int3s at the function's entries and
 * at the end of the loader hook's block. */
static void arm_region(struct pft_tracer *T, struct pft_thr *t, int reload)
{
	struct pft_space *sp = t->sp;
	uint64_t *found;
	size_t n, ne;

	if (!sp->region || !sp->arena || pft_region_scan(sp->region, reload ? t->tid : 0, &found, &n, &ne))
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = found[i];
		if (i >= ne) {
			struct pft_block *b = pft_block_get(sp, t->tid, a, 0, &T->st.blocks_decoded);
			if (!b || b->mode != PFT_BLK_BP)
				continue;
			a = b->last;
			pft_region_hook_armed(sp->region, a);
		}
		pft_bp_insert(sp, t->tid, a);
	}
	free(found);
}

/* After the loader reported a change: forget code that is gone. */
static void drop_unmapped(struct pft_tracer *T, struct pft_thr *t)
{
	struct pft_space *sp = t->sp;
	uint64_t prev = 0;

	if (pft_maps_load(&sp->maps, t->tid))
		return;
	for (size_t i = 0; i <= sp->maps.n; i++) {
		const struct pft_map *m = i < sp->maps.n ? &sp->maps.v[i] : NULL;
		uint64_t lo = m ? m->lo : 0x800000000000ULL;
		if (m && !m->x)
			continue;
		if (lo > prev) {
			T->st.invalidated += pft_block_invalidate(sp, prev, lo);
			pft_bp_clear(sp, 0, prev, lo);
		}
		prev = m ? m->hi : lo;
	}
}

static int need_arena(const struct pft_tracer *T)
{
	return (T->engine == PFT_ENGINE_CACHE && !T->o->single_step) || T->o->region;
}

static uint64_t tramp_next(const struct pft_block *b)
{
	return b->ninsts > 1 ? b->start + b->offs[1] : b->end;
}

/*
 * The thread is about to run the instruction at PFT_PC(regs), the start of
 * a block: pick the block and how to run it.  Blocks that consist of
 * their branch alone are executed here at once.  *dirty: regs changed.
 * Returns 1 when the terminator at rip could not be emulated (the caller
 * lets it run for real), else 0 or a negative error.
 */
int pft_enter(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *dirty)
{
	struct pft_space *sp = t->sp;

	if (need_arena(T) && !sp->arena && !sp->arena_failed) {
		if (pft_arena_setup(T, t) == 0)
			arm_region(T, t, 1);
	}
	t->tramp = 0;
	for (int guard = 0; guard < 1000; guard++) {
		uint64_t pc = PFT_PC(r);
		struct pft_block *b;
		int near;

		if (sp->region && sp->arena && pft_region_is_hook(sp->region, pc)) {
			arm_region(T, t, 1);
			drop_unmapped(T, t);
		}
		if (T->o->region) {
			if (t->in_region && PFT_SP(r) > t->region_sp) {
				t->in_region = 0;
				pft_win_leave(T, t);
			}
			if (!t->in_region && sp->region && pft_region_is_entry(sp->region, sp->pid, pc)) {
				errno = 0;
				long ra = ptrace(PTRACE_PEEKDATA, t->tid, (void *)PFT_SP(r), NULL);
				if (!errno) {
					t->in_region = 1;
					t->region_ret = (uint64_t)ra;
					t->region_sp = PFT_SP(r);
					T->st.region_calls++;
					pft_sys_rseq_check(T, t);
					pft_win_enter(T, t);
				}
			}
			if (!pft_counting(T, t) && sp->arena) {
				/* native; a branch of ours on the way is run here */
				if (pft_bp_has(sp, pc)) {
					b = pft_block_get(sp, t->tid, pc, 0, &T->st.blocks_decoded);
					if (!b)
						return fail(T->err, PFLOPS_ENOMEM, "out of memory");
					if (pc == b->last && emulable(b)) {
						if (pft_emulate(sp, t->tid, b, r))
							return 1;
						*dirty = 1;
						continue;
					}
				}
				if (pft_set_mode(T, t, r, PFT_M_NATIVE, dirty))
					return fail(T->err, PFLOPS_ESYS, "cannot set the %%gs base");
				t->blk = NULL;
				t->resume = PTRACE_CONT;
				T->st.native_resumes++;
				return 0;
			}
		}
		b = pft_block_get(sp, t->tid, pc, T->o->single_step, &T->st.blocks_decoded);
		if (!b)
			return fail(T->err, PFLOPS_ENOMEM, "out of memory decoding the traced program");
		if (!b->wp_done) { /* code on a writable page: guard it */
			int g = pft_wprot_code(T, t, b, r);
			if (g < 0)
				return fail(T->err, PFLOPS_ENOMEM, "out of memory");
			b->wp_done = 1;
			if (g & 2)
				continue; /* read before the guard: again */
		}
		if (sp->region && sp->arena)
			arm_region(T, t, 0); /* found by a lazy reload */
		if (T->engine == PFT_ENGINE_CACHE && sp->arena && pft_counting(T, t) && !T->o->single_step &&
		    pft_ovf_cache_ok(T, t) && !(PFT_FLAGS(r) & PFT_TF)) {
			int was = b->nocache, fresh = !b->x;
			uint64_t entry = pft_xlate(T, t, b);
			if (!was && b->nocache)
				T->st.nocache[b->nocache]++;
			if (entry && fresh)
				pft_xlate_ahead(T, t, b, pft_hints_touch(T, t, b, T->ahead));
			/* (a new copy may have raised sp->ovf_maxpre) */
			if (entry && pft_ovf_cache_ok(T, t) && pft_set_mode(T, t, r, PFT_M_CACHE, dirty) == 0) {
				PFT_PC(r) = entry;
				*dirty = 1;
				t->blk = NULL;
				t->resume = pft_cache_resume(T);
				return 0;
			}
			if (entry && t->slot < 0 && !t->slotless) {
				t->slotless = 1; /* no counter slot free */
				T->st.slotless_threads++;
			}
			if (!entry && b->nocache == PFT_NC_WRITABLE && pft_wprot_cool(T, t, b))
				continue; /* its page guarded again: decoded afresh */
		}
		if (pft_set_mode(T, t, r, PFT_M_STOP, dirty))
			return fail(T->err, PFLOPS_ESYS, "cannot set the %%gs base");
		t->blk = b;
		t->ovf_stepping = 0;
		if (b->mode == PFT_BLK_BP && pft_wprot_prog_writable(sp, b))
			b->mode = PFT_BLK_STEP; /* no int3 where the program reads
						 * and writes its own code (JIT) */
		if (b->mode == PFT_BLK_BP && b->has_mask && T->engine == PFT_ENGINE_CACHE && sp->arena) {
			/* masked, not run from its copy this time (near an
			 * overflow crossing, no counter slot, no copy):
			 * stepped, as exact, and no int3 in the program's
			 * code, as from its copy (a process the stopping
			 * engine traces has one at every block) */
			b->mode = PFT_BLK_STEP;
			b->mask_step = 1;
		}
		if (b->mode == PFT_BLK_BP && pft_bp_insert(sp, t->tid, b->last) != 0)
			b->mode = PFT_BLK_STEP; /* unwritable code */
		if (pc == b->last && emulable(b) && pft_bp_has(sp, pc)) {
			/* the branch alone: it carries an int3, run it here */
			if (b->mode == PFT_BLK_STEP)
				count_one(T, t, b, 0);
			else
				pft_count_block(T, t, b, b->ninsts);
			if (pft_emulate(sp, t->tid, b, r))
				return 1;
			*dirty = 1;
			if (PFT_FLAGS(r) & PFT_TF) {
				/* the program steps itself: the trap that
				 * follows the branch is owed */
				pft_sys_owe_trap(t);
				t->blk = NULL;
				t->resume = PTRACE_CONT;
				return 0;
			}
			continue;
		}
		if (pft_bp_has(sp, pc)) {
			/* an int3 of ours on its first instruction (a region
			 * entry): that instruction runs displaced */
			uint64_t back, tr = pft_xlate_tramp(T, t, b, &back);
			/* (no room: a limit lowered outside the function?) */
			if (!tr && pft_arena_fit(T, t) > 0)
				tr = pft_xlate_tramp(T, t, b, &back);
			if (!tr)
				return fail(T->err, PFLOPS_EUNAVAIL,
					    "cannot run the "
					    "instruction at 0x%llx past the region "
					    "breakpoint (no code-cache memory near it)",
					    (unsigned long long)pc);
			t->tramp = tr;
			t->tramp_back = back;
			PFT_PC(r) = tr;
			*dirty = 1;
		}
		near = !t->tramp && pft_ovf_near(T, t, b);
		if (b->mode == PFT_BLK_SYSCALL) {
			/* (a crossing here is seen late: stepping would
			 * skip the system call's stops) */
			t->resume = PTRACE_SYSCALL;
		} else if (b->mode == PFT_BLK_STEP || near) {
			/* stepped, or the overflow's crossing is in this
			 * run: stepped to the instruction that crosses */
			if (b->mode != PFT_BLK_STEP) {
				T->st.ovf_steps++;
				t->ovf_stepping = 1;
			}
			t->resume = PTRACE_SINGLESTEP;
			t->step_pc = PFT_PC(r);
			t->step_tf = PFT_FLAGS(r) & PFT_TF;
			t->step_idx = 0;
			if (!t->tramp)
				pft_ovf_at(T, t, b, 0, r);
		} else {
			t->resume = PTRACE_CONT;
		}
		return 0;
	}
	t->resume = PTRACE_CONT; /* a tight self-loop: let the int3 trap */
	return 0;
}

int pft_getregs(pid_t tid, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, r) ? -errno : 0;
}

int pft_setregs(struct pft_tracer *T, struct pft_thr *t, const struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, r) && errno != ESRCH)
		return fail(T->err, PFLOPS_ESYS, "PTRACE_SETREGS failed: %s", strerror(errno));
	return 0;
}

/* Restart t; ESRCH (killed meanwhile) is not an error: its exit comes.
 * A signal held back while we used the thread is sent again now. */
int pft_restart(struct pft_tracer *T, struct pft_thr *t, int req, int sig)
{
	if (t->resend_sig && !t->resend_armed && !t->roll_sig) {
		syscall(SYS_tgkill, t->sp ? t->sp->pid : t->tid, t->tid, t->resend_sig);
		t->resend_armed = 1;
	}
	if (ptrace((enum __ptrace_request)req, t->tid, NULL, (void *)(long)sig) && errno != ESRCH)
		return fail(T->err, PFLOPS_ESYS,
			    "ptrace restart of thread %d "
			    "failed: %s",
			    (int)t->tid, strerror(errno));
	return 0;
}

/* Start a thread at its current position (regs), then restart it. */
int pft_go(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int dirty)
{
	struct pft_arena *a = t->sp->arena;
	int rc;

	if (a && pft_arena_chunk_of(a, PFT_PC(r))) {
		if (t->tramp && PFT_PC(r) == t->tramp_back && t->blk) {
			PFT_PC(r) = tramp_next(t->blk);
			dirty = 1;
		} else if (pft_cache_to_orig(T, t, r) == 0) {
			dirty = 1;
		} else {
			/* inside the cache's own code: carry on there */
			if (pft_set_mode(T, t, r, PFT_M_CACHE, &dirty))
				return fail(T->err, PFLOPS_ESYS, "no counter slot");
			if (dirty && (rc = pft_setregs(T, t, r)))
				return rc;
			t->resume = pft_cache_resume(T);
			return pft_restart(T, t, t->resume, 0);
		}
	}
	return pft_resume(T, t, r, dirty, pft_enter(T, t, r, &dirty));
}

/* The tail of pft_go: rc from pft_enter. */
int pft_resume(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int dirty, int rc)
{
	int e;

	if (rc < 0)
		return rc;
	if (dirty && (e = pft_setregs(T, t, r)))
		return e;
	if (rc == 1) {
		/* a branch we cannot emulate (it faults, e.g. ret to a bad
		 * stack): lift its int3 and let the CPU run it */
		t->reinsert = PFT_PC(r);
		pft_bp_remove(t->sp, t->tid, PFT_PC(r));
		t->resume = PTRACE_SINGLESTEP;
		t->raw_step = 1;
	}
	return pft_restart(T, t, t->resume, 0);
}

static int on_step(struct pft_tracer *T, struct pft_thr *t)
{
	struct user_regs_struct r;
	struct pft_block *b = t->blk;
	int dirty = 0, rc;

	T->st.steps++;
	if (pft_getregs(t->tid, &r))
		return 0;
	if (t->to_handler || t->raw_step || !b) {
		t->to_handler = 0;
		t->raw_step = 0;
		return pft_go(T, t, &r, 0);
	}
	if (t->tramp && PFT_PC(&r) == t->tramp_back) {
		PFT_PC(&r) = tramp_next(b);
		t->tramp = 0;
		dirty = 1;
	}
	/* Single-stepping sets the step flag, which the kernel hides from
	 * the registers but not from a pushf, and loses track of after a
	 * popf (a popf of it, or a run on, would then trap the program): the
	 * program's own (step_tf) is put back after every step. */
	if (b->has_flagsop && PFT_PC(&r) != t->step_pc)
		pft_step_flags(t->sp, t->tid, t->step_pc, &r, &t->step_tf);
	if ((PFT_FLAGS(&r) & PFT_TF) != t->step_tf) {
		PFT_FLAGS(&r) = (PFT_FLAGS(&r) & ~PFT_TF) | t->step_tf;
		dirty = 1;
	}
	int last = t->step_idx + 1 == (int)b->ninsts;
	if (PFT_PC(&r) == t->step_pc && !last)
		goto again; /* rep */
	count_one(T, t, b, t->step_idx);
	if (last)
		return pft_go(T, t, &r, dirty);
	if (PFT_PC(&r) != b->start + b->offs[t->step_idx + 1]) {
		T->st.desync++;
		return pft_go(T, t, &r, dirty);
	}
	t->step_idx++;
	t->step_pc = PFT_PC(&r);
	pft_ovf_at(T, t, b, (uint32_t)t->step_idx, &r);
	if (t->step_idx + 1 == (int)b->ninsts && emulable(b) && pft_bp_has(t->sp, PFT_PC(&r))) {
		/* the block's branch carries an int3 (another block ends
		 * there too): execute it here */
		count_one(T, t, b, t->step_idx);
		if (pft_emulate(t->sp, t->tid, b, &r) == 0)
			return pft_go(T, t, &r, 1);
		t->reinsert = PFT_PC(&r); /* faulting: let the CPU run it */
		pft_bp_remove(t->sp, t->tid, PFT_PC(&r));
		t->raw_step = 1;
		t->resume = PTRACE_SINGLESTEP;
	}
again:
	if (dirty && (rc = pft_setregs(T, t, &r)))
		return rc;
	return pft_restart(T, t, PTRACE_SINGLESTEP, 0);
}

static int on_breakpoint(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r)
{
	struct pft_block *b = t->blk;
	uint64_t a = pft_arch_trap_brk(PFT_PC(r));

	T->st.block_stops++;
	if (t->mode == PFT_M_STOP && b && b->mode == PFT_BLK_BP && a == b->last) {
		pft_count_block(T, t, b, b->ninsts);
		PFT_PC(r) = a;
		if (pft_emulate(t->sp, t->tid, b, r) == 0) {
			if (!(PFT_FLAGS(r) & PFT_TF))
				return pft_go(T, t, r, 1);
			/* the program steps itself (EFLAGS.TF): the trap
			 * after the branch is owed before the next block */
			pft_sys_owe_trap(t);
			t->blk = NULL;
			t->resume = PTRACE_CONT;
			if (pft_setregs(T, t, r))
				return PFLOPS_ESYS;
			return pft_restart(T, t, PTRACE_CONT, 0);
		}
		/* faulting branch: let the CPU run it (and raise the fault) */
		t->reinsert = a;
		pft_bp_remove(t->sp, t->tid, a);
		t->raw_step = 1;
		t->resume = PTRACE_SINGLESTEP;
		if (pft_setregs(T, t, r))
			return PFLOPS_ESYS;
		return pft_restart(T, t, PTRACE_SINGLESTEP, 0);
	}
	/* not where this thread's block ends (or a native thread at an
	 * int3 of ours): count what ran, resync */
	if (t->mode == PFT_M_STOP) {
		T->st.desync++;
		if (b) {
			int idx = pft_block_index(b, a);
			if (idx > 0)
				pft_count_block(T, t, b, (uint32_t)idx);
		}
	}
	PFT_PC(r) = a;
	return pft_go(T, t, r, 1);
}

int pft_on_sigtrap(struct pft_tracer *T, struct pft_thr *t)
{
	siginfo_t si;
	struct user_regs_struct r;

	/* the common case first, without PTRACE_GETSIGINFO: a thread running
	 * a block to its int3 is now just past it */
	if (t->mode == PFT_M_STOP && t->resume == PTRACE_CONT && t->blk && t->blk->mode == PFT_BLK_BP) {
		if (pft_getregs(t->tid, &r))
			return 0;
		if (pft_arch_trap_brk(PFT_PC(&r)) == t->blk->last && pft_bp_has(t->sp, t->blk->last))
			return on_breakpoint(T, t, &r);
	}
	if (t->mode == PFT_M_CACHE && !t->roll_sig) /* (its own common case) */
		return pft_cache_sigtrap(T, t, NULL);
	/* a caught signal injected with a step: the kernel reports the step
	 * at the handler's first instruction as it sets the handler up,
	 * before it takes another signal */
	if (t->to_handler && t->resume == PTRACE_SINGLESTEP && !t->roll_sig)
		return on_step(T, t);
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si))
		return 0;
	if (t->mode == PFT_M_CACHE || t->roll_sig)
		return pft_cache_sigtrap(T, t, &si);
	if (si.si_code <= 0) /* sent by a process: a real signal */
		return pft_on_signal(T, t, SIGTRAP, &si);
	if (t->resume == PTRACE_SINGLESTEP && si.si_code != SI_KERNEL)
		return on_step(T, t);
	if (si.si_code == SI_KERNEL) {
		if (pft_getregs(t->tid, &r))
			return 0;
		if (pft_bp_has(t->sp, pft_arch_trap_brk(PFT_PC(&r))))
			return on_breakpoint(T, t, &r);
	}
	return pft_on_signal(T, t, SIGTRAP, &si); /* the program's own int3 */
}
