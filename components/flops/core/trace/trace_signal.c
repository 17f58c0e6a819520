/*
 * trace_signal.c: signals, per thread mode, and the code cache's traps.
 *
 * STOP    a signal the program catches is injected with a single-step,
 *         which stops at the handler's first instruction; the
 *         interrupted block is counted up to the interrupted
 *         instruction, and after sigreturn the thread resumes in a block
 *         decoded from that address.  A signal that ends the process
 *         counts the block up to there too; others pass unchanged.
 * NATIVE  every signal passes unchanged (a handler runs natively; if it
 *         calls the region function, the entry's int3 catches it).
 * CACHE   a signal that will run a handler or end the process is
 *         delivered at the original instruction: the thread is put back
 *         where it is in the program (the handler sees original
 *         addresses, a longjmp out of it leaves no half-counted block)
 *         and the block's count is corrected to the instructions that
 *         ran.  A fault is at an instruction of the program; another
 *         signal may find the thread inside the cache's own code (the
 *         counter's flag-free increment, the lookup routine): the thread
 *         is single-stepped out of it first, the signal held meanwhile.
 *         Signals that do neither (ignored, stop, continue) pass
 *         unchanged, wherever the thread is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "trace_internal.h"

enum { D_PASS, D_CAUGHT, D_FATAL };

/* A /proc/TID file of the thread, kept open (*fd: its fd + 1, 0: not
 * yet), read from its start into buf: the bytes, or -1. */
static ssize_t proc_read(pid_t tid, const char *name, int *fd, char *buf, size_t cap)
{
	char fn[64];
	ssize_t n;

	if (!*fd) {
		int f;
		snprintf(fn, sizeof fn, "/proc/%d/%s", (int)tid, name);
		f = open(fn, O_RDONLY | O_CLOEXEC);
		*fd = f >= 0 ? f + 1 : 0;
	}
	if (!*fd || (n = pread(*fd - 1, buf, cap - 1, 0)) <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* What the signal will do: run a handler, end the process, or neither
 * (the caught and ignored masks in /proc; default actions from
 * signal(7)).  Signals 1 to 31 from /proc/TID/stat (sigignore and
 * sigcatch, fields 33 and 34: the kernel gives 31 bits there), which the
 * kernel makes in half the time of the status file (4 against 9 us a
 * read); others from its status file.  One pread a signal. */
static int disposition(struct pft_thr *t, int sig)
{
	char buf[4096], *p;
	unsigned long long cgt = 0, ign = 0;

	if (sig < 1 || sig > 64)
		return D_PASS;
	if (sig < 32 && proc_read(t->tid, "stat", &t->stat_fd, buf, sizeof buf) > 0 && (p = strrchr(buf, ')'))) {
		/* past the command's closing parenthesis: field 3 on */
		for (int f = 2; f < 33 && p; f++)
			p = strchr(p + 1, ' ');
		if (p) {
			ign = strtoull(p + 1, &p, 10);
			cgt = strtoull(p, NULL, 10);
		}
	} else if (proc_read(t->tid, "status", &t->status_fd, buf, sizeof buf) > 0) {
		if ((p = strstr(buf, "\nSigIgn:")))
			ign = strtoull(p + 8, NULL, 16);
		if ((p = strstr(buf, "\nSigCgt:")))
			cgt = strtoull(p + 8, NULL, 16);
	}
	if ((cgt >> (sig - 1)) & 1)
		return D_CAUGHT;
	if ((ign >> (sig - 1)) & 1)
		return D_PASS;
	switch (sig) {
	case SIGCHLD:
	case SIGURG:
	case SIGWINCH:
	case SIGCONT:
	case SIGSTOP:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		return D_PASS;
	default:
		return D_FATAL;
	}
}

void pft_signal_forget(struct pft_thr *t)
{
	if (t->status_fd)
		close(t->status_fd - 1);
	if (t->stat_fd)
		close(t->stat_fd - 1);
	t->status_fd = t->stat_fd = 0;
}

/* raised by the instruction at rip itself */
static int synchronous(int sig, const siginfo_t *si)
{
	switch (sig) {
	case SIGSEGV:
	case SIGBUS:
	case SIGFPE:
	case SIGILL:
	case SIGTRAP:
	case SIGSYS:
		return si->si_code > 0;
	default:
		return 0;
	}
}

static int clean(const struct pft_xpoint *pt)
{
	return pt && (pt->kind == PFT_XP_INC || pt->kind == PFT_XP_BODY || pt->kind == PFT_XP_DONE ||
		      pt->kind == PFT_XP_OVF || pt->kind == PFT_XP_OVFSTUB || pt->kind == PFT_XP_SYS ||
		      pt->kind == PFT_XP_INC2 || pt->kind == PFT_XP_OWED);
}

/* A masked copy ran to its end: counted now, the opmasks read (those
 * its instructions used: trace_xlate.c).  Under overflow no crossing is
 * in that run (its check at the start would have stopped it). */
static void masked_done(struct pft_tracer *T, struct pft_thr *t, const struct pft_xblock *x)
{
	T->st.mask_exits++;
	pft_count_block(T, t, x->b, x->b->ninsts);
}

/* Put the thread at the original instruction that a point of a copy
 * stands for; what ran of the block is counted, the copy's increment
 * taken back when it happened.  fault: a push faulted with %rcx in the
 * slot. */
static int translate(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, const struct pft_xblock *x,
		     const struct pft_xpoint *pt, int fault)
{
	struct pft_block *b = x->b;
	struct pft_arena *a = t->sp->arena;
	uint8_t *m = t->slot >= 0 ? pft_slot_mem(a, t->slot) : NULL;
	uint64_t *c = m ? (uint64_t *)(m + PFT_SLOT_CNT) + x->id : NULL;
	uint32_t i;
	int inc, ovf;

	switch (pt ? pt->kind : -1) {
	case PFT_XP_OWED: /* an unrolled loop's first half left: its run */
		if (c)
			(*c)++;
		PFT_PC(r) = x->ex[pt->arg].target;
		return 0;
	case PFT_XP_DONE:
		if (x->masked) /* ran, not yet counted (at its exit's trap) */
			masked_done(T, t, x);
		PFT_PC(r) = x->ex[pt->arg].target;
		if (b->term.term == PFT_T_SYSCALL)
			pft_arch_syscall_done(x->ch->mem + (x->addr - x->ch->addr), pt->off, r);
		return 0;
	case PFT_XP_RCX:
		if (!fault || !m)
			return -1;
		pft_arch_term_restore(r, m);
		i = b->ninsts - 1;
		inc = ovf = 1;
		break;
	case PFT_XP_INC2: /* an unrolled loop's second half: the first
			   * half's run too, which its count would add */
		if (c)
			(*c)++;
		i = pt->arg;
		inc = ovf = 0;
		break;
	case PFT_XP_INC:
		i = pt->arg;
		inc = ovf = 0;
		break;
	case PFT_XP_OVF:
	case PFT_XP_OVFSTUB:
		i = pt->arg;
		inc = 0;
		ovf = 1;
		break;
	case PFT_XP_BODY:
		i = pt->arg;
		inc = ovf = i >= x->inc_at;
		break;
	case PFT_XP_SYS: /* before the `syscall`: the program's registers */
		if (!m)
			return -1;
		pft_arch_sys_restore(r, m);
		i = pt->arg;
		inc = ovf = i >= x->inc_at;
		break;
	default:
		return -1;
	}
	if (ovf && x->ovf_w && m) { /* the overflow word: as before the block */
		uint64_t s;
		memcpy(&s, m + PFT_SLOT_OVF, 8);
		s += x->ovf_w;
		memcpy(m + PFT_SLOT_OVF, &s, 8);
	}
	if (x->ovf_cf && m && pt && (pt->kind == PFT_XP_OVF || pt->kind == PFT_XP_OVFSTUB))
		PFT_FLAGS(r) = (PFT_FLAGS(r) & ~1ULL) | (m[PFT_SLOT_CF] & 1);
	if (inc && c && !x->masked && !x->nocnt) { /* (those have no count) */
		if (*c)
			(*c)--;
	}
	if (i > 0)
		pft_count_block(T, t, b, i);
	PFT_PC(r) = b->start + b->offs[i];
	return 0;
}

int pft_cache_to_orig(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r)
{
	const struct pft_xpoint *pt;
	struct pft_xblock *x = t->sp->arena ? pft_xlate_find(t->sp->arena, PFT_PC(r), &pt) : NULL;

	if (!x || !clean(pt))
		return -1;
	return translate(T, t, r, x, pt, 0);
}

/* The program's SIGTRAP handler (it steps itself with EFLAGS.TF, or
 * runs int3s of its own): stepping into it would make the kernel report
 * the step with a SIGTRAP while SIGTRAP is blocked there, which resets
 * the handler to the default (the program dies at its next trap).  So
 * it starts untraced; tracing resumes at its first int3 of ours or
 * system call (its sigreturn at the latest): what ran before that is not
 * counted (stats.self_traps, said in the report). */
static int self_trap(struct pft_tracer *T, struct pft_thr *t)
{
	T->st.self_traps++;
	t->blk = NULL;
	t->in_syscall = 0;
	t->resume = PTRACE_SYSCALL;
	return pft_restart(T, t, PTRACE_SYSCALL, SIGTRAP);
}

int pft_cache_fault_to_orig(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r)
{
	const struct pft_xpoint *pt;
	struct pft_xblock *x = t->sp->arena ? pft_xlate_find(t->sp->arena, PFT_PC(r), &pt) : NULL;

	if (!x || !pt || !(clean(pt) || pt->kind == PFT_XP_RCX))
		return -1;
	return translate(T, t, r, x, pt, 1);
}

/* Deliver sig (caught or fatal) to a thread now at an original address. */
static int deliver(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int sig, int disp)
{
	int dirty = 1, rc;

	if (pft_set_mode(T, t, r, PFT_M_STOP, &dirty))
		return PFLOPS_ESYS;
	t->blk = NULL;
	t->in_syscall = 0;
	if ((rc = pft_setregs(T, t, r)))
		return rc;
	if (disp == D_CAUGHT && sig == SIGTRAP)
		return self_trap(T, t);
	if (disp == D_CAUGHT) {
		t->to_handler = 1;
		t->resume = PTRACE_SINGLESTEP;
		return pft_restart(T, t, PTRACE_SINGLESTEP, sig);
	}
	t->resume = PTRACE_CONT;
	return pft_restart(T, t, PTRACE_CONT, sig);
}

static int sys_trap(const struct pft_arena *a, uint64_t addr);

static int cache_signal(struct pft_tracer *T, struct pft_thr *t, int sig, siginfo_t *si, int unread)
{
	struct user_regs_struct r;
	const struct pft_xpoint *pt = NULL;
	struct pft_xblock *x;
	int disp = disposition(t, sig), sync = synchronous(sig, si);

	if (disp == D_PASS)
		return pft_restart(T, t, t->resume, sig);
	if (pft_getregs(t->tid, &r))
		return 0;
	if (t->in_syscall && t->sp->arena && sys_trap(t->sp->arena, PFT_PC(&r)) == 2 && !pft_sys_restarting(&r)) {
		/* the signal came as a watched call returned, before the trap
		 * after it ran: its exit's work now (a munmap's copies
		 * dropped, maps marked ...), else it is lost (calib_smc
		 * sigremap: old code's copies run for new code) */
		int dirty = 0, rc = pft_sys_exit_at_signal(T, t, &r, &dirty);
		if (rc < 0 || (dirty && (rc = pft_setregs(T, t, &r))))
			return rc;
		T->st.sys_exit_signals++;
	}
	x = t->sp->arena ? pft_xlate_find(t->sp->arena, PFT_PC(&r), &pt) : NULL;
	T->st.cache_signals++;
	if (x && (clean(pt) || (sync && pt && pt->kind == PFT_XP_RCX))) {
		if (translate(T, t, &r, x, pt, sync))
			return pfc_err(T->err, PFLOPS_ESYS,
				       "internal: "
				       "cannot place signal %d",
				       sig);
		return deliver(T, t, &r, sig, disp);
	}
	if (sync) /* only program instructions fault: say where, for a report */
		return pfc_err(T->err, PFLOPS_ESYS,
			       "internal: signal %d (code %d, address 0x%llx) raised by the code cache's own code at "
			       "0x%llx (%s, point kind %d at +%u; the block at 0x%llx)",
			       sig, si->si_code, (unsigned long long)(uintptr_t)si->si_addr,
			       (unsigned long long)PFT_PC(&r), x ? "in a copy" : "outside every copy",
			       pt ? (int)pt->kind : -1, x ? (unsigned)(PFT_PC(&r) - x->addr) : 0,
			       x ? (unsigned long long)x->b->start : 0ULL);
	/* in our own code: step out of it, hold the signal meanwhile (with
	 * its siginfo: it is delivered with it) */
	if (unread && ptrace(PTRACE_GETSIGINFO, t->tid, NULL, si))
		memset(si, 0, sizeof *si);
	t->roll_sig = sig;
	t->roll_info = *si;
	return pft_restart(T, t, PTRACE_SINGLESTEP, 0);
}

int pft_stop_to_orig(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r)
{
	int dirty = 0;

	if (t->tramp && t->blk) { /* in the displaced first instruction */
		if (PFT_PC(r) == t->tramp)
			PFT_PC(r) = t->blk->start, dirty = 1;
		else if (PFT_PC(r) == t->tramp_back)
			PFT_PC(r) = t->blk->ninsts > 1 ? t->blk->start + t->blk->offs[1] : t->blk->end, dirty = 1;
		t->tramp = 0;
	}
	/* count what ran of the interrupted block */
	if (t->blk && t->blk->mode != PFT_BLK_STEP && !t->ovf_stepping && !t->in_syscall) {
		int idx = pft_block_index(t->blk, PFT_PC(r));
		if (idx > 0)
			pft_count_block(T, t, t->blk, (uint32_t)idx);
	}
	return dirty;
}

static int stop_signal(struct pft_tracer *T, struct pft_thr *t, int sig)
{
	struct user_regs_struct r;
	int dirty = 0, rc, disp = disposition(t, sig);

	if (disp == D_PASS)
		return pft_restart(T, t, t->resume, sig);
	if (pft_getregs(t->tid, &r))
		return 0;
	dirty = pft_stop_to_orig(T, t, &r);
	if (dirty && (rc = pft_setregs(T, t, &r)))
		return rc;
	if (disp == D_FATAL) { /* the process ends here */
		t->blk = NULL;
		return pft_restart(T, t, PTRACE_CONT, sig);
	}
	if (sig == SIGTRAP)
		return self_trap(T, t);
	t->to_handler = 1;
	t->in_syscall = 0;
	t->resume = PTRACE_SINGLESTEP;
	return pft_restart(T, t, PTRACE_SINGLESTEP, sig);
}

int pft_on_signal(struct pft_tracer *T, struct pft_thr *t, int sig, siginfo_t *si)
{
	siginfo_t info;
	int unread = 0;

	if (!si) {
		/* read where it is used: a fault's cause (a write to code we
		 * guard too), ours sent again, one held while stepping out;
		 * cache_signal reads it when it holds this one */
		si = &info;
		unread = !synchronous(sig, &(siginfo_t){ .si_code = 1 }) && !t->resend_armed && !t->roll_sig;
		if (unread || ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &info))
			memset(&info, 0, sizeof info);
	}
	if (t->resend_armed && sig == t->resend_sig) {
		/* ours, sent again: give it its own siginfo back */
		ptrace(PTRACE_SETSIGINFO, t->tid, NULL, &t->resend_info);
		*si = t->resend_info;
		t->resend_sig = 0;
		t->resend_armed = 0;
	}
	if (t->roll_sig) {
		if (!synchronous(sig, si)) {
			/* another one while stepping out: later */
			pft_hold_signal(t, sig, si);
			return pft_restart(T, t, PTRACE_SINGLESTEP, 0);
		}
		/* the step faulted: that signal first, the held one later */
		pft_hold_signal(t, t->roll_sig, &t->roll_info);
		t->roll_sig = 0;
	}
	if (sig == SIGSEGV) { /* a write to code we guard (trace_wprot.c) */
		int rc = pft_wprot_fault(T, t, si);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	switch (t->mode) {
	case PFT_M_NATIVE: /* (PTRACE_SYSCALL to a restarted call's exit) */
		return pft_restart(T, t, t->resume, sig);
	case PFT_M_CACHE:
		return cache_signal(T, t, sig, si, unread);
	default:
		return stop_signal(T, t, sig);
	}
}

static int is_trap(const struct pft_arena *a, uint64_t addr)
{
	const struct pft_chunk *ch = pft_arena_chunk_of(a, addr);
	const struct pft_xpoint *pt;
	const struct pft_xblock *x;

	if (!ch)
		return 0;
	if (addr == ch->ibl.miss || addr == ch->ibl.exit || (ch->ibl.mtrap && addr == ch->ibl.mtrap))
		return 1;
	x = pft_xlate_find(a, addr, &pt);
	if (x && x->mtrap && addr == x->addr + x->mtrap)
		return 1;
	/* (a request stub's int3 is further on; at its start once
	 * requests are off: pft_freq_off) */
	return x && pt && pt->kind == PFT_XP_DONE &&
	       (addr == x->addr + x->ex[pt->arg].stub ||
		(x->fstub && addr == x->addr + x->ex[pt->arg].stub + PFT_FSTUB_TRAP));
}

/* rt_sigreturn from the cache, at its trap: the address the frame
 * returns to (the program's: signals are delivered at original
 * addresses, after the handler's own changes) becomes its copy's, so
 * the call runs at once and returns into the cache, not to the
 * original code (untraced).  The frame is the kernel's to read and
 * gone after the call: the program cannot see the change.  -1: the
 * slow way (syscall stops, then pft_go at the exit). */
static int fast_sigreturn(struct pft_tracer *T, struct pft_thr *t, const struct user_regs_struct *r)
{
	uint64_t at = PFT_SP(r) + PFT_SIGFRAME_PC, v[2], entry;
	struct pft_block *b;
	struct iovec l = { v, sizeof v }, rv = { (void *)at, sizeof v };
	int was;

	/* v: the frame's pc and flags */
	if (PFT_SIGFRAME_FLAGS != PFT_SIGFRAME_PC + 8 ||
	    process_vm_readv(t->tid, &l, 1, &rv, 1, 0) != (ssize_t)sizeof v || (v[1] & PFT_TF) ||
	    pft_arena_chunk_of(t->sp->arena, v[0]) || !pft_counting(T, t))
		return -1;
	b = pft_block_get(t->sp, t->tid, v[0], 0, &T->st.blocks_decoded);
	if (!b || !b->wp_done)
		return -1; /* new code: pft_enter guards its page first */
	was = b->nocache;
	entry = pft_xlate(T, t, b);
	if (!was && b->nocache)
		T->st.nocache[b->nocache]++;
	if (!entry || pft_mem_write64(t->tid, at, entry))
		return -1;
	/* the next return there is looked up in the copy itself
	 * (trace_gen.c): no stop */
	if (b->x && entry == b->x->addr)
		pft_table_insert_looked(t->sp->arena, v[0], b->x, entry);
	T->st.fast_sigreturns++;
	return 0;
}

/* the int3 before a watched system call's `syscall` (trace_xlate.c):
 * 1; the one after it: 2; else 0 */
static int sys_trap(const struct pft_arena *a, uint64_t addr)
{
	const struct pft_xpoint *pt;
	const struct pft_xblock *x = pft_xlate_find(a, addr, &pt);

	if (x && x->sys_trap && addr == x->addr + x->sys_trap)
		return 1;
	return x && x->sys_trap2 && addr == x->addr + x->sys_trap2 ? 2 : 0;
}

int pft_cache_past_exit_trap(const struct pft_thr *t, struct user_regs_struct *r)
{
	if (!t->sp->arena || sys_trap(t->sp->arena, PFT_PC(r)) != 2)
		return 0;
	PFT_PC(r) += PFT_BRK_LEN;
	return 1;
}

/* Where a thread stopped on a cache int3 goes in the program (see
 * trace_internal.h). */
int pft_cache_trap_target(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *exit)
{
	struct pft_arena *a = t->sp->arena;
	uint64_t at = pft_arch_trap_brk(PFT_PC(r));
	struct pft_chunk *ch;
	const struct pft_xpoint *pt;
	struct pft_xblock *from;

	if (a && sys_trap(a, at)) {
		*exit = -2; /* before its `syscall`, or past it: clean points */
		return 0;
	}
	if (!a || !is_trap(a, at))
		return -1;
	ch = pft_arena_chunk_of(a, at);
	*exit = -1;
	from = at == ch->ibl.miss || at == ch->ibl.exit || (ch->ibl.mtrap && at == ch->ibl.mtrap)
		       ? NULL
		       : pft_xlate_find(a, at, &pt);
	if (from && from->masked) /* its run ends here */
		masked_done(T, t, from);
	if (!from || (from->mtrap && at == from->addr + from->mtrap)) {
		uint8_t *m = pft_slot_mem(a, t->slot);
		pft_arch_ibl_restore(r, m);
		return 0;
	}
	*exit = (int)pt->arg;
	PFT_PC(r) = from->ex[*exit].target;
	return 0;
}

/* A copy's exit or the lookup routine trapped (on the breakpoint at
 * pft_arch_trap_brk(pc)):
 * decide where the thread goes, and link the way there for next time. */
static int resolve_trap(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *dirty)
{
	struct pft_arena *a = t->sp->arena;
	struct pft_xblock *from = NULL;
	const struct pft_xpoint *pt;
	uint64_t at = pft_arch_trap_brk(PFT_PC(r)), target;
	int k, rc;

	if (pft_cache_trap_target(T, t, r, &k))
		return PFLOPS_ESYS; /* the caller saw is_trap() */
	if (k >= 0) {
		from = pft_xlate_find(a, at, &pt);
		if (!from->masked) /* (a masked copy's exits stay traps) */
			T->st.cache_exits++;
	} else if (!pft_xlate_find(a, at, &pt)) {
		T->st.ibl_misses++;
	}
	target = PFT_PC(r);
	*dirty = 1;
	rc = pft_enter(T, t, r, dirty);
	if (rc == 0 && t->mode == PFT_M_CACHE) {
		struct pft_block *b = pft_block_get(t->sp, t->tid, target, 0, NULL);
		if (b && b->x && PFT_PC(r) == b->x->addr) {
			if (!from) {
				pft_table_renew(T, t->sp);
				if (pft_table_insert_looked(a, target, b->x, b->x->addr))
					T->st.table_full++;
			} else if (!from->dead && !from->masked && !from->ex[k].to) {
				pft_xlate_link(&T->st, from, k, b->x);
			}
		}
	}
	return rc;
}

static int finish_roll(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int dirty)
{
	int sig = t->roll_sig, rc;
	siginfo_t info = t->roll_info;

	t->roll_sig = 0;
	if (dirty && (rc = pft_setregs(T, t, r)))
		return rc;
	/* delivered from this (single-step) stop, with its own siginfo */
	ptrace(PTRACE_SETSIGINFO, t->tid, NULL, &info);
	return pft_on_signal(T, t, sig, &info);
}

int pft_cache_sigtrap(struct pft_tracer *T, struct pft_thr *t, siginfo_t *si)
{
	struct user_regs_struct r;
	struct pft_arena *a = t->sp->arena;
	siginfo_t own;
	int dirty = 0, rc, k;
	uint64_t at;

	if (pft_getregs(t->tid, &r))
		return 0;
	at = pft_arch_trap_brk(PFT_PC(&r)); /* the breakpoint, if one trapped */
	if (!si) {
		/* the common case first, without PTRACE_GETSIGINFO: just
		 * past the int3 of a copy's exit or the lookup routine (a
		 * thread gets there only by running it; masked copies stop
		 * there at every run) */
		if (a && !t->roll_sig && is_trap(a, at)) {
			pft_freq_outside(t);
			rc = resolve_trap(T, t, &r, &dirty);
			return rc < 0 ? rc : pft_resume(T, t, &r, dirty, rc);
		}
		if (T->freq && a && sys_trap(a, at)) /* at an int3 of ours: not in a request */
			pft_freq_outside(t);
		else if (T->freq && (rc = pft_freq_settle(T, t))) { /* (a step, a kill) */
			if (rc < 0 || pft_getregs(t->tid, &r))
				return rc < 0 ? rc : 0;
			at = pft_arch_trap_brk(PFT_PC(&r));
		}
		if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &own))
			return 0;
		si = &own;
	}
	if (a && si->si_code == SI_KERNEL && !t->roll_sig) {
		const struct pft_xpoint *pt;
		struct pft_xblock *x = pft_xlate_find(a, at, &pt);
		if (x && pt && pt->kind == PFT_XP_OVFSTUB && at == x->addr + x->ovf_stub) {
			/* near a crossing: on to the stopping path */
			pft_ovf_trapped(T, t);
			if (translate(T, t, &r, x, pt, 0))
				return PFLOPS_ESYS;
			return pft_go(T, t, &r, 1);
		}
	}
	if (a && si->si_code == SI_KERNEL && !t->roll_sig && (k = sys_trap(a, at))) {
		const struct pft_xpoint *pt;
		const struct pft_xblock *x = pft_xlate_find(a, at, &pt);
		long nr = (long)PFT_SYSRET(&r);
		if (k == 2) /* after the call: its exit's work */
			return pft_sys_trapped_exit(T, t, &r);
		/* before a system call the tracer must see */
		T->st.syscall_traps++;
		if (nr == SYS_rt_sigreturn && fast_sigreturn(T, t, &r) == 0) {
			t->resume = PTRACE_CONT;
			return pft_restart(T, t, PTRACE_CONT, 0);
		}
		if (x->sys_trap2 && nr != SYS_rt_sigreturn && nr != SYS_rseq)
			return pft_sys_trapped_entry(T, t, &r);
		/* its entry and exit stops (sigreturn goes elsewhere, rseq
		 * is skipped there, int 0x80), then on in the cache */
		t->resume = PTRACE_SYSCALL;
		return pft_restart(T, t, PTRACE_SYSCALL, 0);
	}
	if (a && si->si_code == SI_KERNEL && is_trap(a, at)) {
		rc = resolve_trap(T, t, &r, &dirty);
		if (rc < 0)
			return rc;
		if (t->roll_sig && rc == 0)
			return finish_roll(T, t, &r, dirty);
		return pft_resume(T, t, &r, dirty, rc);
	}
	if (t->roll_sig && si->si_code > 0) { /* a step out */
		const struct pft_xpoint *pt;
		T->st.roll_steps++;
		if (t->mode != PFT_M_CACHE || !a || (pft_xlate_find(a, PFT_PC(&r), &pt) && clean(pt)))
			return finish_roll(T, t, &r, 0);
		return pft_restart(T, t, PTRACE_SINGLESTEP, 0);
	}
	return pft_on_signal(T, t, SIGTRAP, si); /* the program's own */
}
