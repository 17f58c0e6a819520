/*
 * trace_ptrace.c: the ptrace engine.  Runs a program, follows its threads
 * and forked children, and gives each thread one of three modes
 * (trace_internal.h) at each block it starts (enter()):
 *
 *   CACHE   the block's copy in the code cache (trace_xlate.c) runs and
 *           counts itself; the thread stops only at a copy's exit whose
 *           target is not yet translated (an int3 stub: the target is
 *           translated, the exit linked to it), at an indirect branch
 *           whose target the lookup table lacks, at system calls
 *           (PTRACE_SYSCALL: sigreturn, mappings that change code) and at
 *           signals (trace_signal.c).
 *   STOP    the stopping path, for blocks the cache does not take (masked
 *           AVX-512: the opmask is read at every run) and for the stop
 *           engine:
 *             BP blocks      int3 at the terminating branch; at the stop
 *                            we count the whole block and emulate the
 *                            branch (trace_emul.c), so the next block
 *                            starts without a second stop.
 *             SYSCALL blocks PTRACE_SYSCALL: count at syscall entry.
 *             STEP blocks    single-step (unknown branches, opmask
 *                            written inside the block, --single-step).
 *   NATIVE  --region, outside the region: the program runs untouched
 *           until an int3 of ours: the region function's entries, the
 *           dynamic loader's hook (a library loaded: look for the
 *           function in it) and branches of blocks decoded in the region
 *           (emulated, then native again).  A thread is in the region
 *           from an entry until its stack pointer is above the entry's
 *           (return, longjmp, exception); a thread that enters the
 *           region while another is inside is counted on its own.
 *
 * PTRACE_SINGLEBLOCK (DEBUGCTL.BTF) is not used: in the KVM guests this
 * project runs on it stops after every instruction (BTF is not passed
 * through; measured: rip advances 2, 5, 5, 3 bytes per stop), and where
 * it works it still needs a stop per branch plus one to place the next
 * block; int3 + emulation needs one.
 *
 * The tracer waits with waitpid(-1, __WALL): the caller must not have
 * other children of its own ending while a trace runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/user.h>
#include <sys/mman.h>

#include "trace_internal.h"

#ifndef ARCH_SET_GS
#define ARCH_SET_GS 0x1001
#define ARCH_GET_GS 0x1004
#endif

int pflops_fail(struct pflops_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}
#define fail pflops_fail

static struct pflops_thr *find(struct pflops_tracer *T, pid_t tid)
{
	for (struct pflops_thr *t = T->threads; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static struct pflops_thr *add(struct pflops_tracer *T, pid_t tid, int state)
{
	struct pflops_thr *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	t->tid = tid;
	t->state = state;
	t->resume = PTRACE_CONT;
	t->mode = PFLOPS_M_STOP;
	t->slot = -1;
	t->next = T->threads;
	T->threads = t;
	T->st.threads++;
	return t;
}

/* The thread's counts in the cache go into the mix; its slot is freed. */
static void harvest_thread(struct pflops_tracer *T, struct pflops_thr *t)
{
	if (t->slot >= 0 && t->sp && t->sp->arena) {
		T->st.cache_runs += pflops_harvest(t->sp->arena, t->slot, T->mix, 1);
		pflops_slot_free(t->sp->arena, t->slot);
	}
	t->slot = -1;
}

static void drop(struct pflops_tracer *T, pid_t tid)
{
	for (struct pflops_thr **p = &T->threads; *p; p = &(*p)->next)
		if ((*p)->tid == tid) {
			struct pflops_thr *t = *p;
			*p = t->next;
			harvest_thread(T, t);
			pflops_space_put(t->sp);
			free(t);
			return;
		}
}

int pflops_counting(const struct pflops_tracer *T, const struct pflops_thr *t)
{
	return !T->o->region || t->in_region;
}

/* The live opmask registers when the block has masked instructions;
 * NULL (lanes then count in full, and mask_unknown says so) otherwise. */
static const uint64_t *block_masks(struct pflops_tracer *T, struct pflops_thr *t,
				   const struct pflops_block *b, uint64_t k[8])
{
	if (!b->has_mask)
		return NULL;
	if (pflops_read_kregs(t->tid, k) == 0)
		return k;
	T->st.mask_unknown++;
	return NULL;
}

void pflops_count_block(struct pflops_tracer *T, struct pflops_thr *t,
			struct pflops_block *b, uint32_t n)
{
	uint64_t k[8];

	if (!pflops_counting(T, t) || n == 0)
		return;
	pflops_block_count(T->mix, b, n, block_masks(T, t, b, k));
	if (n >= b->ninsts)
		b->execs++;
	T->st.blocks_run++;
}

static void count_one(struct pflops_tracer *T, struct pflops_thr *t,
		      struct pflops_block *b, int idx)
{
	uint64_t k[8];

	if (!pflops_counting(T, t))
		return;
	pflops_block_count_one(T->mix, b, (uint32_t)idx, block_masks(T, t, b, k));
	if ((uint32_t)idx + 1 == b->ninsts) {
		for (int x = 0; x < PFLOPS_NEXTRA; x++)
			T->mix->extra[x] += b->extra[x];
		b->execs++;
		T->st.blocks_run++;
	}
}

static int emulable(const struct pflops_block *b)
{
	switch (b->term.term) {
	case PFLOPS_T_JCC: case PFLOPS_T_JMP: case PFLOPS_T_CALL:
	case PFLOPS_T_RET: case PFLOPS_T_LOOP: case PFLOPS_T_JRCXZ:
		return 1;
	default:
		return 0;
	}
}

/* Mode of t from now on, and the %gs base that goes with it: the cache
 * counts through the thread's slot, the program's code sees its own. */
int pflops_set_mode(struct pflops_tracer *T, struct pflops_thr *t,
		    struct user_regs_struct *r, int mode, int *dirty)
{
	uint64_t gs = t->prog_gs;

	if (mode == PFLOPS_M_CACHE) {
		struct pflops_arena *a = t->sp->arena;
		uint8_t *m;
		if (!a)
			return -1;
		if (t->slot < 0 && (t->slot = pflops_slot_alloc(a)) < 0)
			return -1;
		if (!(m = pflops_slot_mem(a, t->slot)))
			return -1;
		memcpy(m + PFLOPS_SLOT_RSP0, &t->region_sp, 8);
		gs = pflops_slot_addr(a, t->slot);
	}
	if (r->gs_base != gs) {
		r->gs_base = gs;
		*dirty = 1;
	}
	t->mode = mode;
	return 0;
}

/* Arm what the region scan found: int3s at the function's entries and
 * at the end of the loader hook's block. */
static void arm_region(struct pflops_tracer *T, struct pflops_thr *t, int reload)
{
	struct pflops_space *sp = t->sp;
	uint64_t *found;
	size_t n, ne;

	if (!sp->region || !sp->arena ||
	    pflops_region_scan(sp->region, reload ? t->tid : 0, &found, &n, &ne))
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = found[i];
		if (i >= ne) {
			struct pflops_block *b = pflops_block_get(sp, t->tid, a, 0,
							  &T->st.blocks_decoded);
			if (!b || b->mode != PFLOPS_BLK_BP)
				continue;
			a = b->last;
		}
		pflops_bp_insert(sp, t->tid, a);
	}
	free(found);
}

/* After the loader reported a change: forget code that is gone. */
static void drop_unmapped(struct pflops_tracer *T, struct pflops_thr *t)
{
	struct pflops_space *sp = t->sp;
	uint64_t prev = 0;

	if (pflops_maps_load(&sp->maps, t->tid))
		return;
	for (size_t i = 0; i <= sp->maps.n; i++) {
		const struct pflops_map *m = i < sp->maps.n ? &sp->maps.v[i] : NULL;
		uint64_t lo = m ? m->lo : 0x800000000000ULL;
		if (m && !m->x)
			continue;
		if (lo > prev) {
			T->st.invalidated += pflops_block_invalidate(sp, prev, lo);
			pflops_bp_forget(sp, prev, lo);
		}
		prev = m ? m->hi : lo;
	}
}

static int need_arena(const struct pflops_tracer *T)
{
	return (T->engine == PFLOPS_ENGINE_CACHE && !T->o->single_step) ||
	       T->o->region;
}

static uint64_t tramp_next(const struct pflops_block *b)
{
	return b->ninsts > 1 ? b->start + b->offs[1] : b->end;
}

/*
 * The thread is about to run the instruction at regs->rip, the start of
 * a block: pick the block and how to run it.  Blocks that consist of
 * their branch alone are executed here at once.  *dirty: regs changed.
 * Returns 1 when the terminator at rip could not be emulated (the caller
 * lets it run for real), else 0 or a negative error.
 */
int pflops_enter(struct pflops_tracer *T, struct pflops_thr *t,
		 struct user_regs_struct *r, int *dirty)
{
	struct pflops_space *sp = t->sp;

	if (need_arena(T) && !sp->arena && !sp->arena_failed) {
		if (pflops_arena_setup(T, t) == 0)
			arm_region(T, t, 1);
	}
	t->tramp = 0;
	for (int guard = 0; guard < 1000; guard++) {
		uint64_t pc = r->rip;
		struct pflops_block *b;

		if (sp->region && sp->arena && pflops_region_is_hook(sp->region, pc)) {
			arm_region(T, t, 1);
			drop_unmapped(T, t);
		}
		if (T->o->region) {
			if (t->in_region && r->rsp > t->region_sp)
				t->in_region = 0;
			if (!t->in_region && sp->region &&
			    pflops_region_is_entry(sp->region, sp->pid, pc)) {
				errno = 0;
				long ra = ptrace(PTRACE_PEEKDATA, t->tid, (void *)r->rsp, NULL);
				if (!errno) {
					t->in_region = 1;
					t->region_ret = (uint64_t)ra;
					t->region_sp = r->rsp;
					T->st.region_calls++;
				}
			}
			if (!t->in_region && sp->arena) {
				/* native; a branch of ours on the way is run here */
				if (pflops_bp_has(sp, pc)) {
					b = pflops_block_get(sp, t->tid, pc, 0,
							     &T->st.blocks_decoded);
					if (!b)
						return fail(T->err, PFLOPS_ENOMEM, "out of memory");
					if (pc == b->last && emulable(b)) {
						if (pflops_emulate(sp, t->tid, b, r))
							return 1;
						*dirty = 1;
						continue;
					}
				}
				if (pflops_set_mode(T, t, r, PFLOPS_M_NATIVE, dirty))
					return fail(T->err, PFLOPS_ESYS, "cannot set the %%gs base");
				t->blk = NULL;
				t->resume = PTRACE_CONT;
				T->st.native_resumes++;
				return 0;
			}
		}
		b = pflops_block_get(sp, t->tid, pc, T->o->single_step,
				     &T->st.blocks_decoded);
		if (!b)
			return fail(T->err, PFLOPS_ENOMEM,
				    "out of memory decoding the traced program");
		if (sp->region && sp->arena)
			arm_region(T, t, 0);	/* found by a lazy reload */
		if (T->engine == PFLOPS_ENGINE_CACHE && sp->arena &&
		    pflops_counting(T, t) && !T->o->single_step) {
			int was = b->nocache;
			uint64_t entry = pflops_xlate(T, t, b);
			if (!was && b->nocache)
				T->st.nocache[b->nocache]++;
			if (entry && pflops_set_mode(T, t, r, PFLOPS_M_CACHE, dirty) == 0) {
				r->rip = entry;
				*dirty = 1;
				t->blk = NULL;
				t->resume = PTRACE_SYSCALL;
				return 0;
			}
		}
		if (pflops_set_mode(T, t, r, PFLOPS_M_STOP, dirty))
			return fail(T->err, PFLOPS_ESYS, "cannot set the %%gs base");
		t->blk = b;
		if (b->mode == PFLOPS_BLK_BP &&
		    pflops_bp_insert(sp, t->tid, b->last) != 0)
			b->mode = PFLOPS_BLK_STEP;	/* unwritable code */
		if (pc == b->last && emulable(b) && pflops_bp_has(sp, pc)) {
			/* the branch alone: it carries an int3, run it here */
			if (b->mode == PFLOPS_BLK_STEP)
				count_one(T, t, b, 0);
			else
				pflops_count_block(T, t, b, b->ninsts);
			if (pflops_emulate(sp, t->tid, b, r))
				return 1;
			*dirty = 1;
			continue;
		}
		if (pflops_bp_has(sp, pc)) {
			/* an int3 of ours on its first instruction (a region
			 * entry): that instruction runs displaced */
			uint64_t back, tr = pflops_xlate_tramp(T, t, b, &back);
			if (!tr)
				return fail(T->err, PFLOPS_EUNAVAIL, "cannot run the "
					    "instruction at 0x%llx past the region "
					    "breakpoint (no code-cache memory near it)",
					    (unsigned long long)pc);
			t->tramp = tr;
			t->tramp_back = back;
			r->rip = tr;
			*dirty = 1;
		}
		if (b->mode == PFLOPS_BLK_SYSCALL) {
			t->resume = PTRACE_SYSCALL;
		} else if (b->mode == PFLOPS_BLK_STEP) {
			t->resume = PTRACE_SINGLESTEP;
			t->step_pc = r->rip;
			t->step_idx = 0;
		} else {
			t->resume = PTRACE_CONT;
		}
		return 0;
	}
	t->resume = PTRACE_CONT;	/* a tight self-loop: let the int3 trap */
	return 0;
}

int pflops_getregs(pid_t tid, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, r) ? -errno : 0;
}

int pflops_setregs(struct pflops_tracer *T, struct pflops_thr *t,
		   const struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, r) && errno != ESRCH)
		return fail(T->err, PFLOPS_ESYS, "PTRACE_SETREGS failed: %s",
			    strerror(errno));
	return 0;
}

/* Restart t; ESRCH (killed meanwhile) is not an error: its exit comes.
 * A signal held back while we used the thread is sent again now. */
int pflops_restart(struct pflops_tracer *T, struct pflops_thr *t, int req, int sig)
{
	if (t->resend_sig && !t->resend_armed && !t->roll_sig) {
		syscall(SYS_tgkill, t->sp ? t->sp->pid : t->tid, t->tid, t->resend_sig);
		t->resend_armed = 1;
	}
	if (ptrace((enum __ptrace_request)req, t->tid, NULL,
		   (void *)(long)sig) && errno != ESRCH)
		return fail(T->err, PFLOPS_ESYS, "ptrace restart of thread %d "
			    "failed: %s", (int)t->tid, strerror(errno));
	return 0;
}

/* Start a thread at its current position (regs), then restart it. */
int pflops_go(struct pflops_tracer *T, struct pflops_thr *t,
	      struct user_regs_struct *r, int dirty)
{
	struct pflops_arena *a = t->sp->arena;
	int rc;

	if (a && pflops_arena_chunk_of(a, r->rip)) {
		if (t->tramp && r->rip == t->tramp_back && t->blk) {
			r->rip = tramp_next(t->blk);
			dirty = 1;
		} else if (pflops_cache_to_orig(T, t, r) == 0) {
			dirty = 1;
		} else {
			/* inside the cache's own code: carry on there */
			if (pflops_set_mode(T, t, r, PFLOPS_M_CACHE, &dirty))
				return fail(T->err, PFLOPS_ESYS, "no counter slot");
			if (dirty && (rc = pflops_setregs(T, t, r)))
				return rc;
			t->resume = PTRACE_SYSCALL;
			return pflops_restart(T, t, PTRACE_SYSCALL, 0);
		}
	}
	return pflops_resume(T, t, r, dirty, pflops_enter(T, t, r, &dirty));
}

/* The tail of pflops_go: rc from pflops_enter. */
int pflops_resume(struct pflops_tracer *T, struct pflops_thr *t,
		  struct user_regs_struct *r, int dirty, int rc)
{
	int e;

	if (rc < 0)
		return rc;
	if (dirty && (e = pflops_setregs(T, t, r)))
		return e;
	if (rc == 1) {
		/* a branch we cannot emulate (it faults, e.g. ret to a bad
		 * stack): lift its int3 and let the CPU run it */
		t->reinsert = r->rip;
		pflops_bp_remove(t->sp, t->tid, r->rip);
		t->resume = PTRACE_SINGLESTEP;
		t->raw_step = 1;
	}
	return pflops_restart(T, t, t->resume, 0);
}

static int start_thread(struct pflops_tracer *T, struct pflops_thr *t)
{
	struct user_regs_struct r;

	t->state = PFLOPS_TH_RUN;
	if (t->fork_pending) {
		int rc;
		t->fork_pending = 0;
		rc = pflops_arena_fork(T, t, t->fork_from);
		t->fork_from = NULL;
		if (rc == PFLOPS_ECHILD)
			return 0;	/* gone already */
		/* the thread's slot, same place, new memory */
		if (!rc && t->slot >= 0 &&
		    pflops_slot_init(t->sp->arena, t->slot) < 0)
			rc = PFLOPS_ENOMEM;
		if (rc) {
			kill(t->tid, SIGKILL);
			return fail(T->err, PFLOPS_ESYS, "could not give the forked "
				    "process %d its own code cache (%d); rerun with "
				    "PFLOPS_TRACE_ENGINE=stop", (int)t->tid, rc);
		}
	}
	if (pflops_getregs(t->tid, &r))
		return 0;	/* gone already */
	return pflops_go(T, t, &r, 0);
}

static int on_step(struct pflops_tracer *T, struct pflops_thr *t)
{
	struct user_regs_struct r;
	struct pflops_block *b = t->blk;
	int dirty = 0, rc;

	T->st.steps++;
	if (pflops_getregs(t->tid, &r))
		return 0;
	if (t->to_handler || t->raw_step || !b) {
		t->to_handler = 0;
		t->raw_step = 0;
		return pflops_go(T, t, &r, 0);
	}
	if (t->tramp && r.rip == t->tramp_back) {
		r.rip = tramp_next(b);
		t->tramp = 0;
		dirty = 1;
	}
	int last = t->step_idx + 1 == (int)b->ninsts;
	if (r.rip == t->step_pc && !last)
		goto again;	/* rep */
	count_one(T, t, b, t->step_idx);
	if (last)
		return pflops_go(T, t, &r, dirty);
	if (r.rip != b->start + b->offs[t->step_idx + 1]) {
		T->st.desync++;
		return pflops_go(T, t, &r, dirty);
	}
	t->step_idx++;
	t->step_pc = r.rip;
	if (t->step_idx + 1 == (int)b->ninsts && emulable(b) &&
	    pflops_bp_has(t->sp, r.rip)) {
		/* the block's branch carries an int3 (another block ends
		 * there too): execute it here */
		count_one(T, t, b, t->step_idx);
		if (pflops_emulate(t->sp, t->tid, b, &r) == 0)
			return pflops_go(T, t, &r, 1);
		t->reinsert = r.rip;	/* faulting: let the CPU run it */
		pflops_bp_remove(t->sp, t->tid, r.rip);
		t->raw_step = 1;
		t->resume = PTRACE_SINGLESTEP;
	}
again:
	if (dirty && (rc = pflops_setregs(T, t, &r)))
		return rc;
	return pflops_restart(T, t, PTRACE_SINGLESTEP, 0);
}

static int on_breakpoint(struct pflops_tracer *T, struct pflops_thr *t,
			 struct user_regs_struct *r)
{
	struct pflops_block *b = t->blk;
	uint64_t a = r->rip - 1;

	T->st.block_stops++;
	if (t->mode == PFLOPS_M_STOP && b && b->mode == PFLOPS_BLK_BP &&
	    a == b->last) {
		pflops_count_block(T, t, b, b->ninsts);
		r->rip = a;
		if (pflops_emulate(t->sp, t->tid, b, r) == 0)
			return pflops_go(T, t, r, 1);
		/* faulting branch: let the CPU run it (and raise the fault) */
		t->reinsert = a;
		pflops_bp_remove(t->sp, t->tid, a);
		t->raw_step = 1;
		t->resume = PTRACE_SINGLESTEP;
		if (pflops_setregs(T, t, r))
			return PFLOPS_ESYS;
		return pflops_restart(T, t, PTRACE_SINGLESTEP, 0);
	}
	/* not where this thread's block ends (or a native thread at an
	 * int3 of ours): count what ran, resync */
	if (t->mode == PFLOPS_M_STOP) {
		T->st.desync++;
		if (b) {
			int idx = pflops_block_index(b, a);
			if (idx > 0)
				pflops_count_block(T, t, b, (uint32_t)idx);
		}
	}
	r->rip = a;
	return pflops_go(T, t, r, 1);
}

static int on_sigtrap(struct pflops_tracer *T, struct pflops_thr *t)
{
	siginfo_t si;
	struct user_regs_struct r;

	/* the common case first, without PTRACE_GETSIGINFO: a thread running
	 * a block to its int3 is now just past it */
	if (t->mode == PFLOPS_M_STOP && t->resume == PTRACE_CONT && t->blk &&
	    t->blk->mode == PFLOPS_BLK_BP) {
		if (pflops_getregs(t->tid, &r))
			return 0;
		if (r.rip - 1 == t->blk->last && pflops_bp_has(t->sp, t->blk->last))
			return on_breakpoint(T, t, &r);
	}
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si))
		return 0;
	if (t->mode == PFLOPS_M_CACHE || t->roll_sig)
		return pflops_cache_sigtrap(T, t, &si);
	if (si.si_code <= 0)		/* sent by a process: a real signal */
		return pflops_on_signal(T, t, SIGTRAP, &si);
	if (t->resume == PTRACE_SINGLESTEP && si.si_code != SI_KERNEL)
		return on_step(T, t);
	if (si.si_code == SI_KERNEL) {
		if (pflops_getregs(t->tid, &r))
			return 0;
		if (pflops_bp_has(t->sp, r.rip - 1))
			return on_breakpoint(T, t, &r);
	}
	return pflops_on_signal(T, t, SIGTRAP, &si);	/* the program's own int3 */
}

/* What a finished system call changed: code unmapped or made writable
 * (its blocks are dropped), the program's own %gs base. */
static int after_syscall(struct pflops_tracer *T, struct pflops_thr *t,
			 struct user_regs_struct *r, int *dirty)
{
	struct pflops_space *sp = t->sp;
	const uint64_t *a = t->sys_args;
	int64_t ret = (int64_t)r->rax;
	uint64_t lo = a[0] & ~4095ULL, len = (a[1] + (a[0] & 4095) + 4095) & ~4095ULL;
	int forget = 0;

	if (ret < 0 && ret > -4096)
		return 0;
	switch (t->sys_nr) {
	case SYS_mmap: case SYS_munmap: case SYS_mremap: case SYS_mprotect:
	case SYS_pkey_mprotect: case SYS_brk: case SYS_shmat: case SYS_shmdt:
		sp->maps.stale = 1;
		break;
	default:
		break;
	}
	switch (t->sys_nr) {
	case SYS_munmap:
		forget = 1;
		break;
	case SYS_mremap:
		forget = 1;
		break;
	case SYS_madvise:
		if (a[2] != MADV_DONTNEED && a[2] != MADV_REMOVE && a[2] != MADV_FREE)
			return 0;
		forget = 1;	/* file pages come back from the file: our int3s go */
		break;
	case SYS_mmap:
		if (!(a[3] & MAP_FIXED))
			return 0;
		forget = 1;
		break;
	case SYS_mprotect: case SYS_pkey_mprotect:
		if (!(a[2] & PROT_WRITE) && (a[2] & PROT_EXEC))
			return 0;
		break;
	case SYS_arch_prctl:
		if (a[0] == ARCH_SET_GS) {
			t->prog_gs = a[1];
			if (t->mode == PFLOPS_M_CACHE && t->slot >= 0) {
				r->gs_base = pflops_slot_addr(sp->arena, t->slot);
				*dirty = 1;
			}
		} else if (a[0] == ARCH_GET_GS && t->mode == PFLOPS_M_CACHE) {
			pflops_mem_write64(t->tid, a[1], t->prog_gs);
		}
		return 0;
	default:
		return 0;
	}
	sp->maps.stale = 1;
	if (pflops_block_invalidate(sp, lo, lo + len)) {
		T->st.invalidated++;
		if (!forget)	/* code still there: give the program its bytes */
			for (uint64_t p = lo; p < lo + len; p++)
				if (pflops_bp_has(sp, p))
					pflops_bp_remove(sp, t->tid, p);
	}
	if (forget)
		pflops_bp_forget(sp, lo, lo + len);
	return 0;
}

static int on_syscall(struct pflops_tracer *T, struct pflops_thr *t)
{
	struct user_regs_struct r;
	int dirty = 0, rc;

	if (!t->in_syscall) {
		T->st.syscalls++;
		if (t->mode == PFLOPS_M_STOP && t->blk &&
		    t->blk->mode == PFLOPS_BLK_SYSCALL)
			pflops_count_block(T, t, t->blk, t->blk->ninsts);
		t->in_syscall = 1;
		if (pflops_getregs(t->tid, &r) == 0) {
			t->sys_nr = (long)r.orig_rax;
			t->sys_args[0] = r.rdi;
			t->sys_args[1] = r.rsi;
			t->sys_args[2] = r.rdx;
			t->sys_args[3] = r.r10;
			t->sys_args[4] = r.r8;
			t->sys_args[5] = r.r9;
		}
		return pflops_restart(T, t, PTRACE_SYSCALL, 0);
	}
	t->in_syscall = 0;
	if (pflops_getregs(t->tid, &r))
		return 0;
	if ((rc = after_syscall(T, t, &r, &dirty)))
		return rc;
	if (t->mode == PFLOPS_M_CACHE && t->sys_nr != SYS_rt_sigreturn &&
	    t->sp->arena && pflops_arena_chunk_of(t->sp->arena, r.rip)) {
		/* back in the copy, after its syscall */
		if (dirty && (rc = pflops_setregs(T, t, &r)))
			return rc;
		return pflops_restart(T, t, PTRACE_SYSCALL, 0);
	}
	return pflops_go(T, t, &r, dirty);
}

/* A new thread or process, whose first stop may not have come yet. */
static int first_stop(struct pflops_tracer *T, struct pflops_thr *n)
{
	int st;

	while (n->state == PFLOPS_TH_WAIT_STOP) {
		pid_t p = waitpid(n->tid, &st, __WALL);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			pflops_defer(T, p, st);
			return 0;
		}
		if (WIFSTOPPED(st))
			n->state = PFLOPS_TH_WAIT_PARENT;
	}
	return 1;
}

static int on_event(struct pflops_tracer *T, struct pflops_thr *t, int ev)
{
	unsigned long msg = 0;
	struct pflops_thr *n;
	struct user_regs_struct r;

	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg);
	switch (ev) {
	case PTRACE_EVENT_CLONE: case PTRACE_EVENT_FORK: case PTRACE_EVENT_VFORK:
		n = find(T, (pid_t)msg);
		if (!n && !(n = add(T, (pid_t)msg, PFLOPS_TH_WAIT_STOP)))
			return fail(T->err, PFLOPS_ENOMEM, "out of memory");
		n->prog_gs = t->prog_gs;
		if (ev == PTRACE_EVENT_FORK) {
			/* its own copy of the memory, int3s and cache included */
			n->sp = pflops_space_fork(t->sp, n->tid, T->o->region);
			if (!n->sp)
				return fail(T->err, PFLOPS_ENOMEM, "out of memory");
			n->in_region = t->in_region;
			n->region_ret = t->region_ret;
			n->region_sp = t->region_sp;
			if (n->sp->arena) {
				/* its counters start at its parent's slot, in
				 * memory of its own (pflops_arena_fork) */
				n->slot = t->slot;
				n->fork_pending = 1;
				n->fork_from = t->sp->arena;
			}
		} else {	/* thread, or vfork child until it execs */
			n->sp = t->sp;
			t->sp->refs++;
		}
		/* the parent waits until the child runs on its own memory */
		if (first_stop(T, n) && n->state == PFLOPS_TH_WAIT_PARENT) {
			int rc = start_thread(T, n);
			if (rc)
				return rc;
		}
		return pflops_restart(T, t, t->resume, 0);
	case PTRACE_EVENT_EXEC: {
		struct pflops_space *sp = pflops_space_new(t->tid, T->o->region);
		if (!sp)
			return fail(T->err, PFLOPS_ENOMEM, "out of memory");
		if ((pid_t)msg != t->tid)
			drop(T, (pid_t)msg);	/* a non-leader exec'd */
		harvest_thread(T, t);
		pflops_space_put(t->sp);
		t->sp = sp;
		t->blk = NULL;
		t->in_region = 0;
		t->mode = PFLOPS_M_STOP;
		t->prog_gs = 0;		/* exec clears the %gs base */
		t->tramp = 0;
		if (pflops_getregs(t->tid, &r))
			return 0;
		if (r.cs != 0x33) {
			kill(t->tid, SIGKILL);
			return fail(T->err, PFLOPS_EUNAVAIL, "the traced program "
				    "runs in 32-bit mode; only x86-64 programs "
				    "can be traced");
		}
		/* still inside execve: start at its syscall-exit stop, where
		 * system calls can be injected (the code cache's memory) */
		t->in_syscall = 1;
		t->sys_nr = SYS_execve;
		return pflops_restart(T, t, PTRACE_SYSCALL, 0);
	}
	default:
		return pflops_restart(T, t, t->resume, 0);
	}
}

static void progress(struct pflops_tracer *T)
{
	struct timespec now;
	struct pflops_mix snap;

	if (!T->o->progress || (T->st.stops & 1023))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - T->last.tv_sec) * 1000 +
	    (now.tv_nsec - T->last.tv_nsec) / 1000000 < (long)T->progress_ms)
		return;
	T->last = now;
	snap = *T->mix;
	for (struct pflops_thr *t = T->threads; t; t = t->next)
		if (t->slot >= 0 && t->sp && t->sp->arena)
			pflops_harvest(t->sp->arena, t->slot, &snap, 0);
	T->o->progress(T->o->progress_arg, &snap, &T->st);
}

static int handle(struct pflops_tracer *T, pid_t tid, int status)
{
	struct pflops_thr *t = find(T, tid);

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (tid == T->root) {
			T->root_status = status;
			T->root_done = 1;
		}
		drop(T, tid);
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0;
	T->st.stops++;
	progress(T);
	if (!t) {	/* a new thread or child, before its parent's event */
		if (!(t = add(T, tid, PFLOPS_TH_WAIT_PARENT)))
			return fail(T->err, PFLOPS_ENOMEM, "out of memory");
		return 0;
	}
	if (t->state == PFLOPS_TH_WAIT_STOP)
		return start_thread(T, t);
	if (t->reinsert) {
		pflops_bp_insert(t->sp, t->tid, t->reinsert);
		t->reinsert = 0;
	}

	int sig = WSTOPSIG(status);
	if (sig == (SIGTRAP | 0x80))
		return on_syscall(T, t);
	if (sig == SIGTRAP && (status >> 16))
		return on_event(T, t, status >> 16);
	if (sig == SIGTRAP)
		return on_sigtrap(T, t);
	return pflops_on_signal(T, t, sig, NULL);
}

static void kill_all(struct pflops_tracer *T)
{
	int st;

	for (struct pflops_thr *t = T->threads; t; t = t->next)
		kill(t->tid, SIGKILL);
	while (T->threads) {
		pid_t p = waitpid(-1, &st, __WALL);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			drop(T, p);
	}
	while (T->threads)
		drop(T, T->threads->tid);
}

static int pick_engine(const struct pflops_trace_opts *o, int *engine,
		       struct pflops_error *err)
{
	const char *e = getenv("PFLOPS_TRACE_ENGINE");

	*engine = o->engine;
	if (*engine == PFLOPS_ENGINE_AUTO) {
		*engine = PFLOPS_ENGINE_CACHE;
		if (e && *e) {
			if (!strcmp(e, "stop"))
				*engine = PFLOPS_ENGINE_STOP;
			else if (!strcmp(e, "cache"))
				*engine = PFLOPS_ENGINE_CACHE;
			else
				return fail(err, PFLOPS_EINVAL, "PFLOPS_TRACE_ENGINE="
					    "'%s' is not an engine; use stop or "
					    "cache", e);
		}
	}
	if (*engine != PFLOPS_ENGINE_STOP && *engine != PFLOPS_ENGINE_CACHE)
		return fail(err, PFLOPS_EINVAL, "unknown trace engine %d; use "
			    "PFLOPS_ENGINE_STOP or PFLOPS_ENGINE_CACHE", *engine);
	if (o->single_step)
		*engine = PFLOPS_ENGINE_STOP;
	return 0;
}

int pflops_trace_run(char *const argv[], const struct pflops_trace_opts *opts,
		     struct pflops_mix *mix, int *exit_status,
		     struct pflops_error *err)
{
	static const struct pflops_trace_opts defaults;
	struct pflops_tracer T;
	int pfd[2], st, rc = 0, child_errno = 0;
	pid_t pid;

	if (!argv || !argv[0] || !mix)
		return fail(err, PFLOPS_EINVAL, "no program to trace; pass "
			    "the command line as argv");
	memset(&T, 0, sizeof T);
	T.o = opts ? opts : &defaults;
	if ((rc = pick_engine(T.o, &T.engine, err)))
		return rc;
	T.st.engine = T.engine;
	T.mix = mix;
	T.err = err;
	T.progress_ms = T.o->progress_ms ? T.o->progress_ms : 500;
	clock_gettime(CLOCK_MONOTONIC, &T.last);

	if (pipe2(pfd, O_CLOEXEC))
		return fail(err, PFLOPS_ESYS, "pipe failed: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return fail(err, PFLOPS_ESYS, "fork failed: %s", strerror(errno));
	}
	if (pid == 0) {
		int e;
		close(pfd[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0) {
			raise(SIGSTOP);
			execvp(argv[0], argv);
		}
		e = errno;
		if (write(pfd[1], &e, sizeof e) < 0)
			_exit(126);
		_exit(127);
	}
	close(pfd[1]);
	T.root = pid;
	while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
	if (!WIFSTOPPED(st)) {
		close(pfd[0]);
		return fail(err, PFLOPS_ECHILD, "the program to trace did not "
			    "start under ptrace; check that ptrace is allowed "
			    "(seccomp, container policy)");
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE |
			    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
			    PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL))) {
		rc = fail(err, PFLOPS_ESYS, "PTRACE_SETOPTIONS failed: %s",
			  strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		close(pfd[0]);
		return rc;
	}
	struct pflops_thr *t = add(&T, pid, PFLOPS_TH_RUN);
	if (!t || !(t->sp = pflops_space_new(pid, T.o->region))) {
		rc = fail(err, PFLOPS_ENOMEM, "out of memory");
		goto out;
	}
	/* until the exec event the child runs our own code: not counted */
	if ((rc = pflops_restart(&T, t, PTRACE_CONT, 0)))
		goto out;

	while (T.threads) {
		pid_t p;
		if (T.ndefer) {
			struct pflops_deferred d = T.defer[--T.ndefer];
			if ((rc = handle(&T, d.pid, d.status)))
				goto out;
			continue;
		}
		p = waitpid(-1, &st, __WALL);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((rc = handle(&T, p, st)))
			goto out;
	}
out:
	if (rc)
		kill_all(&T);
	free(T.defer);
	if (read(pfd[0], &child_errno, sizeof child_errno) == sizeof child_errno &&
	    !rc) {
		rc = fail(err, PFLOPS_ECHILD, "cannot execute '%s': %s; check "
			  "the program path and its permissions", argv[0],
			  strerror(child_errno));
	}
	close(pfd[0]);
	if (!rc && !T.root_done)
		rc = fail(err, PFLOPS_ESYS, "lost track of the traced program "
			  "(waitpid: %s)", strerror(errno));
	if (!rc && exit_status)
		*exit_status = T.root_status;
	if (T.o->stats)
		*T.o->stats = T.st;
	return rc;
}

void pflops_trace_status_str(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(status),
			 strsignal(WTERMSIG(status)),
			 WCOREDUMP(status) ? ", core dumped" : "");
	else
		snprintf(buf, len, "wait status 0x%x", (unsigned)status);
}
