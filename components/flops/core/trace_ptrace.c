/*
 * trace_ptrace.c: the ptrace engine.  Runs a program, follows its threads
 * and forked children, and stops each thread once per basic block:
 *
 *   BP blocks      int3 at the terminating branch; at the stop we count
 *                  the whole block from the cache and emulate the branch
 *                  (trace_emul.c), so the next block starts without a
 *                  second stop.
 *   SYSCALL blocks PTRACE_SYSCALL: count at syscall entry, find where the
 *                  thread went at syscall exit (rt_sigreturn, execve).
 *   STEP blocks    single-step (unknown branches, opmask written inside
 *                  the block, the --single-step reference mode).
 *
 * PTRACE_SINGLEBLOCK (DEBUGCTL.BTF) is not used: in the KVM guests this
 * project runs on it stops after every instruction (BTF is not passed
 * through; measured: rip advances 2, 5, 5, 3 bytes per stop), and where
 * it works it still needs a stop per branch plus one to place the next
 * block; int3 + emulation needs one.
 *
 * Signals: a signal the program catches is injected with a single-step,
 * which stops at the handler's first instruction; the interrupted block
 * is counted up to the interrupted instruction, and after sigreturn the
 * thread resumes in a block decoded from that address.  Uncaught signals
 * are passed through unchanged.
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
#include <sys/wait.h>
#include <sys/user.h>

#include "trace_internal.h"

enum { TH_RUN, TH_WAIT_PARENT, TH_WAIT_STOP };

struct thr {
	pid_t tid;
	int state;
	struct pflops_space *sp;
	struct pflops_block *blk;
	int resume;		/* PTRACE_CONT / _SYSCALL / _SINGLESTEP */
	int in_syscall;		/* between syscall-entry and -exit stops */
	int to_handler;		/* a caught signal was injected */
	int raw_step;		/* a branch runs for real (see go()) */
	uint64_t reinsert;	/* breakpoint lifted to run a faulting branch */
	uint64_t step_pc;	/* STEP blocks: instruction being stepped */
	int step_idx;
	int in_region;
	uint64_t region_ret, region_sp;
	struct thr *next;
};

struct tracer {
	const struct pflops_trace_opts *o;
	struct pflops_mix *mix;
	struct pflops_trace_stats st;
	struct pflops_error *err;
	struct thr *threads;
	pid_t root;
	int root_status, root_done;
	struct timespec last;
	unsigned progress_ms;
};

static int fail(struct pflops_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct pflops_error *err, int code, const char *fmt, ...)
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

static struct thr *find(struct tracer *T, pid_t tid)
{
	for (struct thr *t = T->threads; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static struct thr *add(struct tracer *T, pid_t tid, int state)
{
	struct thr *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	t->tid = tid;
	t->state = state;
	t->resume = PTRACE_CONT;
	t->next = T->threads;
	T->threads = t;
	T->st.threads++;
	return t;
}

static void drop(struct tracer *T, pid_t tid)
{
	for (struct thr **p = &T->threads; *p; p = &(*p)->next)
		if ((*p)->tid == tid) {
			struct thr *t = *p;
			*p = t->next;
			pflops_space_put(t->sp);
			free(t);
			return;
		}
}

static int counting(const struct tracer *T, const struct thr *t)
{
	return !T->o->region || t->in_region;
}

/* The live opmask registers when the block has masked instructions;
 * NULL (lanes then count in full, and mask_unknown says so) otherwise. */
static const uint64_t *block_masks(struct tracer *T, struct thr *t,
				   const struct pflops_block *b, uint64_t k[8])
{
	if (!b->has_mask)
		return NULL;
	if (pflops_read_kregs(t->tid, k) == 0)
		return k;
	T->st.mask_unknown++;
	return NULL;
}

/* opts->fp_exec for the FP instructions [lo, hi) of a masked block */
static void fp_exec(struct tracer *T, struct thr *t, const struct pflops_block *b,
		    uint32_t lo, uint32_t hi, const uint64_t *k)
{
	if (!T->o->fp_exec || !b->has_mask)
		return;
	for (uint32_t i = 0; i < b->nfp; i++) {
		const struct pflops_fpent *e = &b->fp[i];
		if (e->idx < lo || e->idx >= hi)
			continue;
		struct pflops_fp_exec x = {
			.addr = b->start + b->offs[e->idx], .tid = t->tid,
			.prec = e->prec, .width = e->width, .op = e->op,
			.lanes = e->lanes, .mask_reg = e->mask_reg,
			.lanes_per_bit = e->lanes_per_bit, .k = k };
		T->o->fp_exec(T->o->fp_exec_arg, &x);
	}
}

static void count_block(struct tracer *T, struct thr *t,
			const struct pflops_block *b, uint32_t n)
{
	uint64_t k[8];
	const uint64_t *km;

	if (!counting(T, t) || n == 0)
		return;
	km = block_masks(T, t, b, k);
	pflops_block_count(T->mix, b, n, km);
	fp_exec(T, t, b, 0, n, km);
	T->st.blocks_run++;
}

static void count_one(struct tracer *T, struct thr *t,
		      const struct pflops_block *b, int idx)
{
	uint64_t k[8];
	const uint64_t *km;

	if (!counting(T, t))
		return;
	km = block_masks(T, t, b, k);
	pflops_block_count_one(T->mix, b, (uint32_t)idx, km);
	fp_exec(T, t, b, (uint32_t)idx, (uint32_t)idx + 1, km);
	if ((uint32_t)idx + 1 == b->ninsts) {
		for (int x = 0; x < PFLOPS_NEXTRA; x++)
			T->mix->extra[x] += b->extra[x];
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

/*
 * The thread is about to run the instruction at regs->rip, the start of
 * a block: pick the block and how to run it.  Blocks that consist of
 * their branch alone are executed here at once.  *dirty: regs changed.
 * Returns 1 when the terminator at rip could not be emulated (the caller
 * lets it run for real), else 0 or a negative error.
 */
static int enter(struct tracer *T, struct thr *t, struct user_regs_struct *r,
		 int *dirty)
{
	for (int guard = 0; guard < 1000; guard++) {
		uint64_t pc = r->rip;
		struct pflops_block *b;

		if (t->in_region && pc == t->region_ret && r->rsp > t->region_sp)
			t->in_region = 0;
		b = pflops_block_get(t->sp, t->tid, pc, T->o->single_step,
				     &T->st.blocks_decoded);
		if (!b)
			return fail(T->err, PFLOPS_ENOMEM,
				    "out of memory decoding the traced program");
		if (b->region_entry && !t->in_region) {
			errno = 0;
			long ra = ptrace(PTRACE_PEEKDATA, t->tid, (void *)r->rsp, NULL);
			if (!errno) {
				t->in_region = 1;
				t->region_ret = (uint64_t)ra;
				t->region_sp = r->rsp;
				T->st.region_calls++;
			}
		}
		t->blk = b;
		if (b->mode == PFLOPS_BLK_SYSCALL) {
			t->resume = PTRACE_SYSCALL;
			return 0;
		}
		if (b->mode == PFLOPS_BLK_BP &&
		    pflops_bp_insert(t->sp, t->tid, b->last) != 0)
			b->mode = PFLOPS_BLK_STEP;	/* unwritable code */
		if (pc == b->last && emulable(b) && pflops_bp_has(t->sp, pc)) {
			/* the branch alone: it carries an int3, run it here */
			if (b->mode == PFLOPS_BLK_STEP)
				count_one(T, t, b, 0);
			else
				count_block(T, t, b, b->ninsts);
			if (pflops_emulate(t->sp, t->tid, b, r))
				return 1;
			*dirty = 1;
			continue;
		}
		if (b->mode == PFLOPS_BLK_STEP) {
			t->resume = PTRACE_SINGLESTEP;
			t->step_pc = pc;
			t->step_idx = 0;
		} else {
			t->resume = PTRACE_CONT;
		}
		return 0;
	}
	t->resume = PTRACE_CONT;	/* a tight self-loop: let the int3 trap */
	return 0;
}

static int getregs(pid_t tid, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, r) ? -errno : 0;
}

/* Restart t; ESRCH (killed meanwhile) is not an error: its exit comes. */
static int restart(struct tracer *T, struct thr *t, int req, int sig)
{
	if (ptrace((enum __ptrace_request)req, t->tid, NULL,
		   (void *)(long)sig) && errno != ESRCH)
		return fail(T->err, PFLOPS_ESYS, "ptrace restart of thread %d "
			    "failed: %s", (int)t->tid, strerror(errno));
	return 0;
}

/* Start a thread at its current position (regs), then restart it. */
static int go(struct tracer *T, struct thr *t, struct user_regs_struct *r,
	      int dirty)
{
	int rc = enter(T, t, r, &dirty);

	if (rc < 0)
		return rc;
	if (dirty && ptrace(PTRACE_SETREGS, t->tid, NULL, r) && errno != ESRCH)
		return fail(T->err, PFLOPS_ESYS, "PTRACE_SETREGS failed: %s",
			    strerror(errno));
	if (rc == 1) {
		/* a branch we cannot emulate (it faults, e.g. ret to a bad
		 * stack): lift its int3 and let the CPU run it */
		t->reinsert = r->rip;
		pflops_bp_remove(t->sp, t->tid, r->rip);
		t->resume = PTRACE_SINGLESTEP;
		t->raw_step = 1;
	}
	return restart(T, t, t->resume, 0);
}

static int start_thread(struct tracer *T, struct thr *t)
{
	struct user_regs_struct r;

	t->state = TH_RUN;
	if (getregs(t->tid, &r))
		return 0;	/* gone already */
	return go(T, t, &r, 0);
}

/* Does the program have a handler for sig?  (SigCgt in /proc) */
static int caught(pid_t tid, int sig)
{
	char fn[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(fn, sizeof fn, "/proc/%d/status", (int)tid);
	f = fopen(fn, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	fclose(f);
	return sig >= 1 && sig <= 64 && ((mask >> (sig - 1)) & 1);
}

static int on_signal(struct tracer *T, struct thr *t, int sig)
{
	struct user_regs_struct r;

	if (!caught(t->tid, sig))
		return restart(T, t, t->resume, sig);
	if (getregs(t->tid, &r))
		return 0;
	/* count what ran of the interrupted block */
	if (t->blk && t->blk->mode != PFLOPS_BLK_STEP && !t->in_syscall) {
		int idx = pflops_block_index(t->blk, r.rip);
		if (idx > 0)
			count_block(T, t, t->blk, (uint32_t)idx);
	}
	t->to_handler = 1;
	t->in_syscall = 0;
	t->resume = PTRACE_SINGLESTEP;
	return restart(T, t, PTRACE_SINGLESTEP, sig);
}

static int on_step(struct tracer *T, struct thr *t)
{
	struct user_regs_struct r;
	struct pflops_block *b = t->blk;

	T->st.steps++;
	if (getregs(t->tid, &r))
		return 0;
	if (t->to_handler || t->raw_step || !b) {
		t->to_handler = 0;
		t->raw_step = 0;
		return go(T, t, &r, 0);
	}
	int last = t->step_idx + 1 == (int)b->ninsts;
	if (r.rip == t->step_pc && !last)
		return restart(T, t, PTRACE_SINGLESTEP, 0);	/* rep */
	count_one(T, t, b, t->step_idx);
	if (last)
		return go(T, t, &r, 0);
	if (r.rip != b->start + b->offs[t->step_idx + 1]) {
		T->st.desync++;
		return go(T, t, &r, 0);
	}
	t->step_idx++;
	t->step_pc = r.rip;
	if (t->step_idx + 1 == (int)b->ninsts && emulable(b) &&
	    pflops_bp_has(t->sp, r.rip)) {
		/* the block's branch carries an int3 (another block ends
		 * there too): execute it here */
		count_one(T, t, b, t->step_idx);
		if (pflops_emulate(t->sp, t->tid, b, &r) == 0)
			return go(T, t, &r, 1);
		t->reinsert = r.rip;	/* faulting: let the CPU run it */
		pflops_bp_remove(t->sp, t->tid, r.rip);
		t->raw_step = 1;
		t->resume = PTRACE_SINGLESTEP;
		return restart(T, t, PTRACE_SINGLESTEP, 0);
	}
	return restart(T, t, PTRACE_SINGLESTEP, 0);
}

static int on_breakpoint(struct tracer *T, struct thr *t,
			 struct user_regs_struct *r)
{
	struct pflops_block *b = t->blk;
	uint64_t a = r->rip - 1;

	T->st.block_stops++;
	if (b && b->mode == PFLOPS_BLK_BP && a == b->last) {
		count_block(T, t, b, b->ninsts);
		r->rip = a;
		if (pflops_emulate(t->sp, t->tid, b, r) == 0)
			return go(T, t, r, 1);
		/* faulting branch: let the CPU run it (and raise the fault) */
		t->reinsert = a;
		pflops_bp_remove(t->sp, t->tid, a);
		t->raw_step = 1;
		t->resume = PTRACE_SINGLESTEP;
		if (ptrace(PTRACE_SETREGS, t->tid, NULL, r) && errno != ESRCH)
			return fail(T->err, PFLOPS_ESYS, "PTRACE_SETREGS failed: %s",
				    strerror(errno));
		return restart(T, t, PTRACE_SINGLESTEP, 0);
	}
	/* not where this thread's block ends: count what ran, resync */
	T->st.desync++;
	if (b) {
		int idx = pflops_block_index(b, a);
		if (idx > 0)
			count_block(T, t, b, (uint32_t)idx);
	}
	r->rip = a;
	return go(T, t, r, 1);
}

static int on_sigtrap(struct tracer *T, struct thr *t)
{
	siginfo_t si;
	struct user_regs_struct r;

	/* the common case first, without PTRACE_GETSIGINFO: a thread running
	 * a block to its int3 is now just past it */
	if (t->resume == PTRACE_CONT && t->blk && t->blk->mode == PFLOPS_BLK_BP) {
		if (getregs(t->tid, &r))
			return 0;
		if (r.rip - 1 == t->blk->last && pflops_bp_has(t->sp, t->blk->last))
			return on_breakpoint(T, t, &r);
	}
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si))
		return 0;
	if (si.si_code <= 0)		/* sent by a process: a real signal */
		return on_signal(T, t, SIGTRAP);
	if (t->resume == PTRACE_SINGLESTEP && si.si_code != SI_KERNEL)
		return on_step(T, t);
	if (si.si_code == SI_KERNEL) {
		if (getregs(t->tid, &r))
			return 0;
		if (pflops_bp_has(t->sp, r.rip - 1))
			return on_breakpoint(T, t, &r);
	}
	return on_signal(T, t, SIGTRAP);	/* the program's own int3 */
}

static int on_syscall(struct tracer *T, struct thr *t)
{
	struct user_regs_struct r;

	if (!t->in_syscall) {
		T->st.syscalls++;
		if (t->blk && t->blk->mode == PFLOPS_BLK_SYSCALL)
			count_block(T, t, t->blk, t->blk->ninsts);
		t->in_syscall = 1;
		return restart(T, t, PTRACE_SYSCALL, 0);
	}
	t->in_syscall = 0;
	if (getregs(t->tid, &r))
		return 0;
	return go(T, t, &r, 0);
}

static int on_event(struct tracer *T, struct thr *t, int ev)
{
	unsigned long msg = 0;
	struct thr *n;
	struct user_regs_struct r;

	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg);
	switch (ev) {
	case PTRACE_EVENT_CLONE: case PTRACE_EVENT_FORK: case PTRACE_EVENT_VFORK:
		n = find(T, (pid_t)msg);
		if (!n && !(n = add(T, (pid_t)msg, TH_WAIT_STOP)))
			return fail(T->err, PFLOPS_ENOMEM, "out of memory");
		if (ev == PTRACE_EVENT_FORK) {
			/* its own copy of the memory, int3s included */
			n->sp = pflops_space_fork(t->sp, n->tid, T->o->region);
			if (!n->sp)
				return fail(T->err, PFLOPS_ENOMEM, "out of memory");
			n->in_region = t->in_region;
			n->region_ret = t->region_ret;
			n->region_sp = t->region_sp;
		} else {	/* thread, or vfork child until it execs */
			n->sp = t->sp;
			t->sp->refs++;
		}
		if (n->state == TH_WAIT_PARENT) {
			int rc = start_thread(T, n);
			if (rc)
				return rc;
		}
		return restart(T, t, t->resume, 0);
	case PTRACE_EVENT_EXEC: {
		struct pflops_space *sp = pflops_space_new(t->tid, T->o->region);
		if (!sp)
			return fail(T->err, PFLOPS_ENOMEM, "out of memory");
		if ((pid_t)msg != t->tid)
			drop(T, (pid_t)msg);	/* a non-leader exec'd */
		pflops_space_put(t->sp);
		t->sp = sp;
		t->blk = NULL;
		t->in_region = 0;
		if (getregs(t->tid, &r))
			return 0;
		if (r.cs != 0x33) {
			kill(t->tid, SIGKILL);
			return fail(T->err, PFLOPS_EUNAVAIL, "the traced program "
				    "runs in 32-bit mode; only x86-64 programs "
				    "can be traced");
		}
		if (t->in_syscall)	/* the syscall-exit stop comes next */
			return restart(T, t, PTRACE_SYSCALL, 0);
		return go(T, t, &r, 0);
	}
	default:
		return restart(T, t, t->resume, 0);
	}
}

static void progress(struct tracer *T)
{
	struct timespec now;

	if (!T->o->progress || (T->st.stops & 1023))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - T->last.tv_sec) * 1000 +
	    (now.tv_nsec - T->last.tv_nsec) / 1000000 < (long)T->progress_ms)
		return;
	T->last = now;
	T->o->progress(T->o->progress_arg, T->mix, &T->st);
}

static int handle(struct tracer *T, pid_t tid, int status)
{
	struct thr *t = find(T, tid);

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
		if (!(t = add(T, tid, TH_WAIT_PARENT)))
			return fail(T->err, PFLOPS_ENOMEM, "out of memory");
		return 0;
	}
	if (t->state == TH_WAIT_STOP)
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
	return on_signal(T, t, sig);
}

static void kill_all(struct tracer *T)
{
	int st;

	for (struct thr *t = T->threads; t; t = t->next)
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

int pflops_trace_run(char *const argv[], const struct pflops_trace_opts *opts,
		     struct pflops_mix *mix, int *exit_status,
		     struct pflops_error *err)
{
	static const struct pflops_trace_opts defaults;
	struct tracer T;
	int pfd[2], st, rc = 0, child_errno = 0;
	pid_t pid;

	if (!argv || !argv[0] || !mix)
		return fail(err, PFLOPS_EINVAL, "no program to trace; pass "
			    "the command line as argv");
	memset(&T, 0, sizeof T);
	T.o = opts ? opts : &defaults;
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
	struct thr *t = add(&T, pid, TH_RUN);
	if (!t || !(t->sp = pflops_space_new(pid, T.o->region))) {
		rc = fail(err, PFLOPS_ENOMEM, "out of memory");
		goto out;
	}
	/* until the exec event the child runs our own code: not counted */
	if ((rc = restart(&T, t, PTRACE_CONT, 0)))
		goto out;

	while (T.threads) {
		pid_t p = waitpid(-1, &st, __WALL);
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
