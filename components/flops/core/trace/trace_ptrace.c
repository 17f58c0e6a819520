/*
 * trace_ptrace.c: the ptrace engine.  Runs a program, follows its threads
 * and forked children, and gives each thread one of three modes
 * (trace_internal.h) at each block it starts (trace_enter.c):
 *
 *   CACHE   the block's copy in the code cache (trace_xlate.c) runs and
 *           counts itself; the thread stops only at a copy's exit whose
 *           target is not yet translated (an int3 stub: the target is
 *           translated, the exit linked to it), at an indirect branch
 *           whose target the lookup table lacks, at system calls the
 *           tracer watches (int3s in the copy around the call:
 *           sigreturn, mappings that change code, clone, exec...; the
 *           others run without a stop, trace_sys.c) and at signals
 *           (trace_signal.c).
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
#include <sys/resource.h>
#include <pthread.h>

#include "trace_internal.h"

#define fail pfc_err

static int start_thread(struct pft_tracer *T, struct pft_thr *t)
{
	struct user_regs_struct r;

	t->state = PFT_TH_RUN;
	if (t->fork_pending) {
		struct pft_arena *a = t->sp->arena;
		int rc;
		t->fork_pending = 0;
		/* a limit lowered where it was not seen (--region: outside
		 * the function; another process's prlimit): the child's
		 * cache fitted to it first, its thread's slot kept */
		if (a && t->slot >= 0 && t->slot < a->nslots)
			a->slot_used[t->slot] = 1;
		rc = pft_arena_fit(T, t);
		if (rc == PFLOPS_ECHILD)
			return 0; /* gone already */
		rc = pft_arena_fork(T, t, t->fork_from);
		t->fork_from = NULL;
		if (rc == PFLOPS_ECHILD)
			return 0; /* gone already */
		/* the thread's slot, same place, new memory */
		if (!rc && t->slot >= 0 && pft_slot_init(t->sp->arena, t->slot) < 0)
			rc = PFLOPS_ENOMEM;
		if (rc) {
			struct rlimit rl;
			uint64_t took = pft_arena_as_bytes(t->sp->arena) >> 20;
			int low = !prlimit(t->tid, RLIMIT_AS, NULL, &rl) && rl.rlim_cur != RLIM_INFINITY &&
				  (rl.rlim_cur >> 20) <= took + 64;
			kill(t->tid, SIGKILL);
			/* the limit is read when a process's cache is made: a
			 * shell that lowers its own ulimit -v below what the
			 * cache took, then forks (bash's $(...)) */
			if (low)
				return fail(T->err, PFLOPS_ESYS,
					    "could not give the forked process %d its own code cache: its ulimit -v "
					    "(%llu MiB) was set below the %llu MiB of address space the cache had "
					    "taken before; rerun with PFLOPS_TRACE_IDS=65536 (about %llu MiB), or "
					    "PFLOPS_TRACE_ENGINE=stop",
					    (int)t->tid, (unsigned long long)(rl.rlim_cur >> 20),
					    (unsigned long long)took,
					    (unsigned long long)(pft_arena_as_need(65536) >> 20));
			return fail(T->err, PFLOPS_ESYS,
				    "could not give the forked "
				    "process %d its own code cache (%d); rerun with "
				    "PFLOPS_TRACE_ENGINE=stop",
				    (int)t->tid, rc);
		}
	}
	if (pft_getregs(t->tid, &r))
		return 0; /* gone already */
	return pft_go(T, t, &r, 0);
}

/* What a finished system call changed: code unmapped or made writable
 * (its blocks are dropped), the program's own value of the base register
 * the cache borrows (pft_arch_base_call). */
static int after_syscall(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *dirty)
{
	struct pft_space *sp = t->sp;
	const uint64_t *a = t->sys_args;
	int64_t ret = (int64_t)PFT_SYSRET(r);
	uint64_t lo = a[0] & ~4095ULL, len = (a[1] + (a[0] & 4095) + 4095) & ~4095ULL;
	int forget = 0;
	uint64_t v;

	if (ret < 0 && ret > -4096)
		return 0;
	switch (t->sys_nr) {
	case SYS_mmap:
		pft_maps_dirty(&sp->maps, (uint64_t)ret, (uint64_t)ret + len);
		break;
	case SYS_mremap: /* where it is now, and where it was */
		pft_maps_dirty(&sp->maps, (uint64_t)ret, (uint64_t)ret + ((a[2] + 4095) & ~4095ULL));
		/* fall through */
	case SYS_munmap:
	case SYS_mprotect:
	case SYS_pkey_mprotect:
		pft_maps_dirty(&sp->maps, lo, lo + len);
		break;
	case SYS_brk: /* (from the stopping path only) */
	case SYS_shmat:
	case SYS_shmdt:
		sp->maps.stale = 1;
		break;
	default:
		break;
	}
	if (sp->fv) /* which pages may no longer be their file's */
		switch (t->sys_nr) {
		case SYS_mmap:
			pft_fview_mapped(sp, (uint64_t)ret, (uint64_t)ret + ((a[1] + 4095) & ~4095ULL), (int)a[2]);
			break;
		case SYS_munmap:
			pft_fview_mapped(sp, lo, lo + len, -1);
			break;
		case SYS_mremap: /* the pages moved: marked, conservatively */
			pft_fview_mapped(sp, lo, lo + len, -1);
			pft_fview_mapped(sp, (uint64_t)ret, (uint64_t)ret + ((a[2] + 4095) & ~4095ULL), PROT_WRITE);
			break;
		case SYS_mprotect:
		case SYS_pkey_mprotect:
			pft_fview_protect(sp, lo, lo + len, (int)a[2]);
			break;
		case SYS_shmat: /* SHM_REMAP may map over anything */
		case SYS_shmdt:
			pft_fview_changed_all(sp);
			break;
		default:
			break;
		}
	if (sp->wp_used) { /* the program's protection replaces ours */
		switch (t->sys_nr) {
		case SYS_mremap:
			if ((uint64_t)ret != lo)
				pft_wprot_moved(T, t, lo, len, (uint64_t)ret);
			if ((uint64_t)ret != lo)
				pft_wprot_forget(sp, lo, lo + len, -1);
			break;
		case SYS_munmap:
			pft_wprot_forget(sp, lo, lo + len, -1);
			break;
		case SYS_mmap:
			if (a[3] & MAP_FIXED)
				pft_wprot_forget(sp, lo, lo + len, -1);
			break;
		case SYS_mprotect:
		case SYS_pkey_mprotect:
			pft_wprot_forget(sp, lo, lo + len, (int)(a[2] & 7));
			break;
		default:
			break;
		}
	}
	/* an RLIMIT_AS set (its own, or another's: the fit reads the
	 * process's own): fitted at this stop's end, not here, where a
	 * signal may be pending (an injected call would lose it) */
	if (sp->arena && ((t->sys_nr == SYS_setrlimit && a[0] == RLIMIT_AS && a[1]) ||
			  (t->sys_nr == SYS_prlimit64 && a[1] == RLIMIT_AS && a[2])))
		sp->as_refit = 1;
	switch (pft_arch_base_call(t->sys_nr, a, &v)) {
	case PFT_BASE_SET:
		t->prog_gs = v;
		if (t->mode == PFT_M_CACHE && t->slot >= 0) {
			PFT_CACHE_BASE(r) = pft_slot_addr(sp->arena, t->slot);
			*dirty = 1;
		}
		return 0;
	case PFT_BASE_GET:
		if (t->mode == PFT_M_CACHE)
			pft_mem_write64(t->tid, v, t->prog_gs);
		return 0;
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
		forget = 1; /* file pages come back from the file: our int3s go */
		break;
	case SYS_mmap:
		if (!(a[3] & MAP_FIXED))
			return 0;
		forget = 1;
		break;
	case SYS_mprotect:
	case SYS_pkey_mprotect:
		if (!(a[2] & PROT_WRITE) && (a[2] & PROT_EXEC))
			return 0;
		break;
	default:
		return 0;
	}
	pft_maps_dirty(&sp->maps, lo, lo + len);
	if (pft_block_invalidate(sp, lo, lo + len)) {
		T->st.invalidated++;
		if (!forget) /* code still there: give the program its bytes */
			pft_bp_clear(sp, t->tid, lo, lo + len);
	}
	if (forget)
		pft_bp_clear(sp, 0, lo, lo + len);
	return 0;
}

/* A system call starts: number nr, its arguments in r. */
static int sys_begin(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, long nr)
{
	T->st.syscalls++;
	if (t->mode == PFT_M_STOP && t->blk && t->blk->mode == PFT_BLK_SYSCALL)
		pft_count_block(T, t, t->blk, t->blk->ninsts);
	t->in_syscall = 1;
	t->sys_nr = nr;
	t->sys_args[0] = PFT_SYSARG0(r);
	t->sys_args[1] = PFT_SYSARG1(r);
	t->sys_args[2] = PFT_SYSARG2(r);
	t->sys_args[3] = PFT_SYSARG3(r);
	t->sys_args[4] = PFT_SYSARG4(r);
	t->sys_args[5] = PFT_SYSARG5(r);
	return pft_sys_entry(T, t, r);
}

/* The copy's trap before a watched system call (trace_xlate.c), r at
 * it: what its entry stop does, then the call runs without syscall
 * stops up to the trap after it (pft_sys_trapped_exit). */
int pft_sys_trapped_entry(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r)
{
	int rc = sys_begin(T, t, r, (long)PFT_SYSRET(r));

	if (rc)
		return rc;
	t->resume = pft_cache_resume(T);
	return pft_restart(T, t, t->resume, 0);
}

static int cache_sys_done(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int dirty)
{
	int rc;

	if (dirty && (rc = pft_setregs(T, t, r)))
		return rc;
	t->resume = pft_sys_restarting(r) ? PTRACE_SYSCALL : pft_cache_resume(T);
	return pft_restart(T, t, t->resume, 0);
}

/* What a finished system call changed (its result in r); 1 when the
 * thread goes on in the copy (restarted), else 0 or <0. */
static int sys_end(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *dirty)
{
	int rc;

	t->in_syscall = 0;
	pft_sys_exit(T, t, r, dirty);
	if ((rc = after_syscall(T, t, r, dirty)))
		return rc;
	return !pft_ovf_rearm(T, t) && t->mode == PFT_M_CACHE && t->sys_nr != SYS_rt_sigreturn && t->sp->arena &&
	       pft_arena_chunk_of(t->sp->arena, PFT_PC(r)) && (pft_counting(T, t) || pft_sys_restarting(r));
}

/* An RLIMIT_AS set by the call just ended: the cache fitted to the
 * process's limit now (pft_arena_fit), at a stop where no signal is
 * pending.  Not a vfork child's: its limit is its own, the space its
 * parent's.  A failure leaves the cache as it was (a fork's error says
 * so later, if it matters). */
static void refit(struct pft_tracer *T, struct pft_thr *t)
{
	t->sp->as_refit = 0;
	if (!t->vfork_parent)
		(void)pft_arena_fit(T, t);
}

/* The copy's trap after a watched system call: its exit stop's work. */
int pft_sys_trapped_exit(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r)
{
	int dirty = 0, rc;

	if (!t->in_syscall) /* not seen going in (a new child): on */
		return pft_restart(T, t, t->resume = pft_cache_resume(T), 0);
	if ((rc = sys_end(T, t, r, &dirty)) < 0)
		return rc;
	if (t->sp->as_refit)
		refit(T, t);
	if (rc)
		return cache_sys_done(T, t, r, dirty);
	return pft_go(T, t, r, dirty);
}

int pft_sys_exit_at_signal(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *dirty)
{
	int rc = sys_end(T, t, r, dirty);

	return rc < 0 ? rc : 0;
}

static int on_syscall(struct pft_tracer *T, struct pft_thr *t)
{
	struct user_regs_struct r;
	int dirty = 0, rc;

	if (!t->in_syscall) {
		if (pft_getregs(t->tid, &r) == 0) {
			if ((rc = sys_begin(T, t, &r, (long)PFT_SYSNR(&r))))
				return rc;
		} else {
			t->in_syscall = 1;
		}
		return pft_restart(T, t, PTRACE_SYSCALL, 0);
	}
	t->in_syscall = 0;
	if (pft_getregs(t->tid, &r))
		return 0;
	if ((rc = sys_end(T, t, &r, &dirty)) < 0)
		return rc;
	if (t->sp->as_refit)
		refit(T, t);
	if (rc) {
		/* back in the copy, after its syscall (past the trap that
		 * follows it: its work is done); a call the kernel restarts
		 * is seen again */
		if (!pft_sys_restarting(&r) && pft_cache_past_exit_trap(t, &r))
			dirty = 1;
		return cache_sys_done(T, t, &r, dirty);
	}
	if (pft_sys_restarting(&r)) {
		/* a call the kernel restarts (a signal woke it, taken by
		 * another thread or not to be handled): as the thread
		 * resumes it backs rip up over the `syscall`, so rip must
		 * not move; a copy's entry there ran the two bytes before
		 * it (SIGSEGV, SIGILL, SIGTRAP in a futex wait under a
		 * SIGPROF timer).  The restarted call is seen again, the
		 * thread goes on from its exit; its block was counted at
		 * the first entry (sys_begin, the stopping path), not again */
		t->blk = NULL;
		t->resume = PTRACE_SYSCALL;
		if (dirty && (rc = pft_setregs(T, t, &r)))
			return rc;
		return pft_restart(T, t, PTRACE_SYSCALL, 0);
	}
	return pft_go(T, t, &r, dirty);
}

/* A new thread or process, whose first stop may not have come yet. */
static int first_stop(struct pft_tracer *T, struct pft_thr *n)
{
	int st;

	while (n->state == PFT_TH_WAIT_STOP) {
		pid_t p = waitpid(n->tid, &st, __WALL);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			pft_defer(T, p, st);
			return 0;
		}
		if (WIFSTOPPED(st))
			n->state = PFT_TH_WAIT_PARENT;
	}
	return 1;
}

static int on_event(struct pft_tracer *T, struct pft_thr *t, int ev)
{
	unsigned long msg = 0;
	struct pft_thr *n;
	struct user_regs_struct r;

	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg);
	switch (ev) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		n = pft_thread_find(T, (pid_t)msg);
		if (!n && !(n = pft_thread_add(T, (pid_t)msg, PFT_TH_WAIT_STOP)))
			return fail(T->err, PFLOPS_ENOMEM, "out of memory");
		n->prog_gs = t->prog_gs;
		if (!pft_sys_shares_vm(T, t, ev)) {
			/* what its earlier children ran, for this one to inherit */
			pft_want_take(T, t);
			/* its own copy of the memory, int3s and cache included */
			n->sp = pft_space_fork(t->sp, n->tid, T->o->region);
			if (!n->sp)
				return fail(T->err, PFLOPS_ENOMEM, "out of memory");
			if (!T->o->region) /* (which runs native code too) */
				pft_want_fork(n->sp, t->sp);
			n->in_region = t->in_region;
			n->region_ret = t->region_ret;
			n->region_sp = t->region_sp;
			n->win_caller = t->in_region;
			n->sp->win_calls = t->in_region;
			if (n->sp->arena) {
				/* its counters start at its parent's slot, in
				 * memory of its own (pft_arena_fork) */
				n->slot = t->slot;
				n->fork_pending = 1;
				n->fork_from = t->sp->arena;
			}
		} else { /* thread, vfork or CLONE_VM child until it execs */
			n->sp = t->sp;
			t->sp->refs++;
			if (ev != PTRACE_EVENT_VFORK) /* (a vfork parent runs none of its code) */
				pft_freq_thread(T, t->sp);
		}
		if (ev == PTRACE_EVENT_VFORK)
			n->vfork_parent = t->tid;
		/* the parent waits until the child runs on its own memory */
		if (first_stop(T, n) && n->state == PFT_TH_WAIT_PARENT) {
			int rc = start_thread(T, n);
			if (rc)
				return rc;
		}
		return pft_restart(T, t, t->resume, 0);
	case PTRACE_EVENT_EXEC: {
		const char *why;
		struct pft_space *sp = pft_space_new(t->tid, T->o->region);
		if (!sp)
			return fail(T->err, PFLOPS_ENOMEM, "out of memory");
		sp->prof = T->prof;
		sp->no_inject = t->sp->no_inject; /* seccomp survives exec */
		/* a new memory, seen from its start: its code may be read from
		 * our own mappings of its files (not with --region: native
		 * code's system calls are not seen) */
		if (!T->o->region && !T->procmem && pft_fview_start(sp)) {
			pft_space_put(sp);
			return fail(T->err, PFLOPS_ENOMEM, "out of memory");
		}
		if ((pid_t)msg != t->tid)
			pft_thread_drop(T, (pid_t)msg); /* a non-leader exec'd */
		pft_win_drop(T, t);
		pft_signal_forget(t); /* (its tid may have changed) */
		t->vfork_parent = 0;  /* (its parent goes on) */
		pft_thread_harvest(T, t);
		pft_space_release(T, t->sp);
		t->sp = sp;
		t->blk = NULL;
		t->in_region = 0;
		t->mode = PFT_M_STOP;
		t->prog_gs = 0; /* exec clears the %gs base */
		t->tramp = 0;
		if (pft_getregs(t->tid, &r))
			return 0;
		if ((why = pft_arch_foreign_mode(&r))) {
			kill(t->tid, SIGKILL);
			return fail(T->err, PFLOPS_EUNAVAIL, "the traced program %s", why);
		}
		/* still inside execve: start at its syscall-exit stop, where
		 * system calls can be injected (the code cache's memory) */
		t->in_syscall = 1;
		t->sys_nr = SYS_execve;
		return pft_restart(T, t, PTRACE_SYSCALL, 0);
	}
	default:
		return pft_restart(T, t, t->resume, 0);
	}
}

static void progress(struct pft_tracer *T, int force)
{
	struct timespec now;
	struct pflops_mix snap;

	if (!T->o->progress || (!force && (T->st.stops & 15)))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - T->last.tv_sec) * 1000 + (now.tv_nsec - T->last.tv_nsec) / 1000000 < (long)T->progress_ms)
		return;
	T->last = now;
	snap = *T->mix;
	for (struct pft_thr *t = T->threads; t; t = t->next)
		if (t->slot >= 0 && t->sp && t->sp->arena)
			pft_harvest(t->sp->arena, t->slot, &snap, 0);
	T->o->progress(T->o->progress_arg, &snap, &T->st);
}

static int handle(struct pft_tracer *T, pid_t tid, int status)
{
	struct pft_thr *t = pft_thread_find(T, tid);

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (tid == T->root) {
			T->root_status = status;
			T->root_done = 1;
		}
		pft_thread_drop(T, tid);
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0;
	T->st.stops++;
	progress(T, 0);
	if (T->pin == PFT_PIN_FREE) /* (let go at a wait's timeout) */
		pft_pin_update(T);
	if (!t) { /* a new thread or child, before its parent's event */
		if (!(t = pft_thread_add(T, tid, PFT_TH_WAIT_PARENT)))
			return fail(T->err, PFLOPS_ENOMEM, "out of memory");
		return 0;
	}
	if (t->state == PFT_TH_WAIT_STOP)
		return start_thread(T, t);
	if (t->reinsert) {
		pft_bp_insert(t->sp, t->tid, t->reinsert);
		t->reinsert = 0;
	}
	int sig = WSTOPSIG(status);
	if (T->freq && !(sig == SIGTRAP && !(status >> 16) && t->mode == PFT_M_CACHE && !t->roll_sig) &&
	    (status >> 16) != PTRACE_EVENT_EXEC) { /* (exec: its old cache is gone) */
		/* stopped in a request (not at an int3 of ours: there
		 * pft_cache_sigtrap looks): back at its exit's int3 */
		int moved = pft_freq_settle(T, t);
		if (moved < 0)
			return moved;
		if (moved && sig == (SIGTRAP | 0x80)) {
			/* our own futex call's stop: skipped, on to the int3 */
			t->resume = pft_cache_resume(T);
			return pft_restart(T, t, PTRACE_CONT, 0);
		}
	}
	pft_ids_observe(t); /* where it stopped, before we move it */

	if ((status >> 16) == PTRACE_EVENT_STOP) {
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			/* a job-control stop of the program: it stays stopped
			 * until SIGCONT, as it would untraced */
			T->st.group_stops++;
			if (ptrace(PTRACE_LISTEN, t->tid, NULL, NULL) && errno != ESRCH)
				return fail(T->err, PFLOPS_ESYS, "PTRACE_LISTEN of thread %d failed: %s", (int)t->tid,
					    strerror(errno));
			return 0;
		}
		/* PTRACE_INTERRUPT, or the end of a group stop: carry on */
		t->ids_intr = 0;		 /* (seen above, when it was for that) */
		if (t->win_join || t->win_leave) /* --region's windows */
			return pft_win_stop(T, t);
		return pft_restart(T, t, t->resume, 0);
	}
	if (sig == (SIGTRAP | 0x80))
		return on_syscall(T, t);
	if (sig == SIGTRAP && (status >> 16))
		return on_event(T, t, status >> 16);
	if (sig == SIGTRAP)
		return pft_on_sigtrap(T, t);
	return pft_on_signal(T, t, sig, NULL);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* An interrupt of ours (opts->interrupt): the first time, pass the
 * signal on to the program when it did not get it (another process sent
 * it to us) and start the grace time; 1 when the program must be stopped
 * now (the grace time is over). */
static int interrupted(struct pft_tracer *T)
{
	int v = T->o->interrupt ? *T->o->interrupt : 0;

	if (!v)
		return 0;
	if (!T->st.interrupted) {
		T->st.interrupted = v & 0xff;
		clock_gettime(CLOCK_MONOTONIC, &T->int_at);
		if ((v & PFLOPS_INTERRUPT_FORWARD) && !T->root_done)
			kill(T->root, v & 0xff);
		return 0;
	}
	return (v & PFLOPS_INTERRUPT_NOW) || ms_since(&T->int_at) >= PFLOPS_INTERRUPT_GRACE_MS;
}

/* An interrupt to act on now (errno EINTR) */
static int interrupt_due(const struct pft_tracer *T)
{
	if (T->o->interrupt && *T->o->interrupt &&
	    (!T->st.interrupted || (*T->o->interrupt & PFLOPS_INTERRUPT_NOW) ||
	     ms_since(&T->int_at) >= PFLOPS_INTERRUPT_GRACE_MS)) {
		errno = EINTR;
		return 1;
	}
	return 0;
}

/* The next wait status.  With a progress callback or an interrupt flag,
 * waits are bounded (trace_wait.c): a program running in the code cache
 * may not stop for seconds, and the caller's signal handler must be
 * looked at.  -1 with EINTR: an interrupt to act on. */
static pid_t wait_next(struct pft_tracer *T, int *st)
{
	while (T->freq_on) { /* requests through a futex, SIGCHLD wakes it */
		pid_t p = pft_freq_poll(T, st);
		int timeout = T->st.interrupted ? 100 : T->o->progress ? (int)T->progress_ms : 250;

		if (p != 0)
			return p;
		if (interrupt_due(T))
			return -1;
		if (pft_freq_sleep(T, T->o->progress || T->o->interrupt ? timeout : -1)) {
			pft_pin_relax(T); /* running on its own: free */
			progress(T, 1);
		}
	}
	for (;;) {
		pid_t p;

		if (interrupt_due(T))
			return -1;
		p = pft_wait(T, st);
		if (p > 0) {
			pft_mem_fresh(); /* a new event: pages read are old */
			return p;
		}
		if (p < 0)
			return -1;
		if (T->wait_quiet)
			pft_pin_relax(T); /* running on its own: free */
		progress(T, 1);
	}
}

static void kill_all(struct pft_tracer *T)
{
	int st;

	for (struct pft_thr *t = T->threads; t; t = t->next)
		kill(t->tid, SIGKILL);
	while (T->threads) {
		pid_t p = waitpid(-1, &st, __WALL);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (p == T->root) {
				T->root_status = st;
				T->root_done = 1;
			}
			pft_thread_drop(T, p);
		}
	}
	while (T->threads)
		pft_thread_drop(T, T->threads->tid);
}

/* A number from environment variable name in [lo, hi] into *v (def when
 * unset); what: what it counts, for the error */
static int env_number(const char *name, long lo, long hi, long def, long *v, const char *what, struct pflops_error *err)
{
	const char *e = getenv(name);
	char *end;
	long n;

	*v = def;
	if (!e || !*e)
		return 0;
	errno = 0;
	n = strtol(e, &end, 10);
	if (errno || *end || n < lo || n > hi)
		return fail(err, PFLOPS_EINVAL, "%s='%s' is not a number of %s from %ld to %ld", name, e, what, lo, hi);
	*v = n;
	return 0;
}

/* PFLOPS_TRACE_AHEAD=N: blocks translated ahead per new block (0: none,
 * each block's first run stops; for comparing and measuring);
 * PFLOPS_TRACE_IDS=N: block ids a process gets (at most PFT_MAX_IDS):
 * fewer make small programs reuse them (trace_ids.c; for tests);
 * PFLOPS_TRACE_UNROLL=0: one-block loops' copies not unrolled (for
 * comparing and measuring: trace_gen.c);
 * PFLOPS_TRACE_COUNT=all: every copy counts its runs, for the
 * instruction total (opts->count_all; fp, the default: only copies with
 * something for the mix) */
static int pick_numbers(struct pft_tracer *T, struct pflops_error *err)
{
	long ahead, ids, unroll;
	const char *e;
	int rc = env_number("PFLOPS_TRACE_AHEAD", 0, PFT_AHEAD_MAX, PFT_AHEAD, &ahead, "blocks", err);

	if (!rc)
		rc = env_number("PFLOPS_TRACE_IDS", 16, PFT_MAX_IDS, PFT_MAX_IDS, &ids, "block ids", err);
	if (rc)
		return rc;
	unroll = !(e = getenv("PFLOPS_TRACE_UNROLL")) || !*e || !strcmp(e, "1");
	if (!unroll && strcmp(e, "0"))
		return fail(err, PFLOPS_EINVAL, "PFLOPS_TRACE_UNROLL='%s': give 0 (off) or 1 (on, the default)", e);
	e = getenv("PFLOPS_TRACE_COUNT");
	if (e && *e && strcmp(e, "all") && strcmp(e, "fp"))
		return fail(err, PFLOPS_EINVAL,
			    "PFLOPS_TRACE_COUNT='%s': give fp (FP instructions only, the default) or all (every "
			    "instruction too)",
			    e);
	T->count_all = e && !strcmp(e, "all");
	T->ahead = (int)ahead;
	T->unroll = (int)unroll;
	T->max_ids = (uint32_t)ids;
	return 0;
}

static int pick_engine(const struct pflops_trace_opts *o, int *engine, struct pflops_error *err)
{
	const char *e = getenv("PFLOPS_TRACE_ENGINE");

	*engine = o->engine;
	if (*engine == PFT_ENGINE_AUTO) {
		*engine = PFT_ENGINE_CACHE;
		if (e && *e) {
			if (!strcmp(e, "stop"))
				*engine = PFT_ENGINE_STOP;
			else if (!strcmp(e, "cache"))
				*engine = PFT_ENGINE_CACHE;
			else
				return fail(err, PFLOPS_EINVAL,
					    "PFLOPS_TRACE_ENGINE="
					    "'%s' is not an engine; use stop or "
					    "cache",
					    e);
		}
	}
	if (*engine != PFT_ENGINE_STOP && *engine != PFT_ENGINE_CACHE)
		return fail(err, PFLOPS_EINVAL,
			    "unknown trace engine %d; use "
			    "PFT_ENGINE_STOP or PFT_ENGINE_CACHE",
			    *engine);
	if (o->single_step)
		*engine = PFT_ENGINE_STOP;
	return 0;
}

int pft_run(char *const argv[], const struct pflops_trace_opts *opts, struct pflops_mix *mix, int *exit_status,
	    struct pflops_error *err)
{
	static const struct pflops_trace_opts defaults;
	struct pft_tracer T;
	int pfd[2], gofd[2], st, rc = 0, child_errno = 0;
	pid_t pid;

	if (!argv || !argv[0] || !mix)
		return fail(err, PFLOPS_EINVAL,
			    "no program to trace; pass "
			    "the command line as argv");
	memset(&T, 0, sizeof T);
	T.o = opts ? opts : &defaults;
	if ((rc = pft_engine_pick(T.o, &T, err)))
		return rc;
	T.st.engine = T.engine;
	pft_sys_fast_pick(&T);
	if ((rc = pft_freq_pick(&T, err)))
		return rc;
	T.mix = mix;
	T.err = err;
	T.progress_ms = T.o->progress_ms ? T.o->progress_ms : 500;
	clock_gettime(CLOCK_MONOTONIC, &T.last);

	if (pipe2(pfd, O_CLOEXEC))
		return fail(err, PFLOPS_ESYS, "pipe failed: %s", strerror(errno));
	if (pipe2(gofd, O_CLOEXEC)) {
		close(pfd[0]);
		close(pfd[1]);
		return fail(err, PFLOPS_ESYS, "pipe failed: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		close(gofd[0]);
		close(gofd[1]);
		return fail(err, PFLOPS_ESYS, "fork failed: %s", strerror(errno));
	}
	if (pid == 0) {
		int e;
		char c;
		close(pfd[0]);
		close(gofd[1]);
		/* held until the tracer has seized us */
		if (read(gofd[0], &c, 1) == 1)
			execvp(argv[0], argv);
		e = errno;
		if (write(pfd[1], &e, sizeof e) < 0)
			_exit(126);
		_exit(127);
	}
	close(pfd[1]);
	close(gofd[0]);
	T.root = pid;
	/* PTRACE_SEIZE, not TRACEME: job-control stops of the program are
	 * reported as such (PTRACE_EVENT_STOP) and kept with PTRACE_LISTEN,
	 * and PTRACE_INTERRUPT can stop a thread to detach it */
	if (ptrace(PTRACE_SEIZE, pid, NULL,
		   (void *)(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
			    PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL))) {
		rc = fail(err, PFLOPS_ECHILD,
			  "the program to trace cannot be "
			  "traced (PTRACE_SEIZE: %s); check that ptrace is allowed "
			  "(kernel.yama.ptrace_scope, seccomp, container policy)",
			  strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		close(pfd[0]);
		close(gofd[1]);
		return rc;
	}
	struct pft_thr *t = pft_thread_add(&T, pid, PFT_TH_RUN);
	if (!t || !(t->sp = pft_space_new(pid, T.o->region)) || (T.o->block && !(T.prof = pft_prof_new(T.o)))) {
		close(gofd[1]);
		rc = fail(err, PFLOPS_ENOMEM, "out of memory");
		goto out;
	}
	t->sp->prof = T.prof;
	pft_pin_start(&T, pid);
	/* until the exec event the child runs our own code: not counted */
	if (write(gofd[1], "g", 1) != 1) {
		close(gofd[1]);
		rc = fail(err, PFLOPS_ESYS, "cannot release the program: %s", strerror(errno));
		goto out;
	}
	close(gofd[1]);

	T.sfd = -1;
	pft_freq_start(&T); /* (then SIGCHLD wakes its own wait) */
	if (!T.freq_on)
		pft_wait_start(&T);
	while (T.threads) {
		pid_t p;
		if (T.ndefer) {
			struct pft_deferred d = T.defer[--T.ndefer];
			if ((rc = handle(&T, d.pid, d.status)))
				goto out;
			continue;
		}
		if (T.root_done) {
			/* the program has ended: what it left running is
			 * counted until now, then detached, not waited for
			 * (stopped too when the run was interrupted) */
			pft_pin_off(&T);
			if (T.st.interrupted)
				kill_all(&T);
			else if ((rc = pft_detach_rest(&T)))
				goto out;
			break;
		}
		p = wait_next(&T, &st);
		if (p < 0) {
			if (errno != EINTR)
				break;
			if (interrupted(&T)) {
				T.st.killed = !T.root_done;
				kill_all(&T);
			}
			continue;
		}
		if ((rc = handle(&T, p, st)))
			goto out;
	}
out:
	pft_pin_off(&T);
	if (rc)
		kill_all(&T);
	pft_freq_stop(&T);
	pft_wait_end(&T);
	free(T.defer);
	pft_xlate_free(&T);
	if (!T.threads) /* else spaces still point to it */
		pft_prof_free(T.prof);
	if (read(pfd[0], &child_errno, sizeof child_errno) == sizeof child_errno && !rc) {
		rc = fail(err, PFLOPS_ECHILD,
			  "cannot execute '%s': %s; check "
			  "the program path and its permissions",
			  argv[0], strerror(child_errno));
	}
	close(pfd[0]);
	if (!rc && !T.root_done)
		rc = fail(err, PFLOPS_ESYS,
			  "lost track of the traced program "
			  "(waitpid: %s)",
			  strerror(errno));
	if (!rc && exit_status)
		*exit_status = T.root_status;
	if (T.o->stats)
		*T.o->stats = T.st;
	return rc;
}

/* The engine's steps, for the attach loop (trace_attach.c). */
int pft_engine_handle(struct pft_tracer *T, pid_t tid, int status)
{
	return handle(T, tid, status);
}

int pft_engine_pick(const struct pflops_trace_opts *o, struct pft_tracer *T, struct pflops_error *err)
{
	int rc = pick_numbers(T, err);

	T->count_all |= o->count_all;
	rc = rc ? rc : pick_engine(o, &T->engine, err);
	rc = rc ? rc : pft_pin_init(T, err);
	return rc || T->engine != PFT_ENGINE_CACHE ? rc : pft_hints_init(T, err);
}

void pft_engine_kill_all(struct pft_tracer *T)
{
	kill_all(T);
}
