/*
 * trace_sys.c: system calls the tracer answers or changes so that the
 * traced program behaves as it does untraced (docs/trace-engine.md,
 * "Transparency"), and those it can only report:
 *
 *   rseq      registration refused (ENOSYS), as valgrind does: the
 *             kernel restarts a critical section only when the thread is
 *             at the section's own addresses, never in its cache copy,
 *             and each stop of the stopping path inside a section would
 *             restart it forever.  glibc (2.35 on) then runs without
 *             rseq (sched_getcpu reads the vDSO), and so do programs
 *             that check the result.  Not refused where rseq may already
 *             be on (--pid, --region's native threads): glibc aborts a
 *             new thread whose registration fails after the first
 *             succeeded.
 *   clone     CLONE_UNTRACED cleared: a child cloned in the code cache
 *             starts there, and untraced it would die on the cache's
 *             int3s (LeakSanitizer clones its helper so).  Whether a
 *             child shares its parent's memory is read from the flags,
 *             not from the event's kind.
 *   seccomp   once a process turns it on, nothing more is injected
 *             into it (strict mode kills the process at the first
 *             call that is not read, write, exit or sigreturn; a filter
 *             may too): its new code runs on the stopping path.
 *   ptrace, open("/proc/.../status")   counted only: a process has one
 *             tracer (the program's own ptrace fails, TracerPid shows
 *             ours); the report says so.
 *
 * Every other system call of a thread running in the code cache runs
 * there without a ptrace stop (the thread runs under PTRACE_CONT): the
 * copy of a block ending in `syscall` looks the number up in a map
 * (pft_sys_map_fill) and either runs it at once or runs it between two
 * int3s of the copy, at which the tracer does what it does at the
 * call's entry and exit stops (trace_ptrace.c; sigreturn without its
 * fast way, rseq and int 0x80 get PTRACE_SYSCALL stops instead).  Those that trap are the ones the
 * tracer handles: above, and mappings that may change code or guarded
 * pages (trace_ptrace.c's after_syscall), sigreturn (the thread goes
 * back to the address in its frame), arch_prctl (%gs), clone, fork,
 * exec and exit.  Not with --region (threads are moved between native
 * code and the cache at system calls), an overflow callback (the
 * period is rearmed at system calls) or PFLOPS_TRACE_SYSCALL_STOPS=1:
 * then every system call stops, as on the stopping path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <linux/seccomp.h>

#include "trace_internal.h"

#ifndef CLONE_UNTRACED
#define CLONE_UNTRACED 0x00800000
#endif
#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f
#endif

static int read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)addr, len };

	return process_vm_readv(tid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

void pft_sys_fast_pick(struct pft_tracer *T)
{
	const char *e = getenv("PFLOPS_TRACE_SYSCALL_STOPS");

	T->sysfast = T->engine == PFT_ENGINE_CACHE && !T->o->single_step && !T->o->region && !pft_ovf_on(T) &&
		     !(e && *e && strcmp(e, "0"));
}

int pft_cache_resume(const struct pft_tracer *T)
{
	return T->sysfast ? PTRACE_CONT : PTRACE_SYSCALL;
}

int pft_sys_watched(long nr)
{
	switch (nr) {
	case SYS_rt_sigreturn: /* back to the frame's address */
	case SYS_mmap:	       /* code mapped over, unmapped, made writable */
	case SYS_munmap:
	case SYS_mremap:
	case SYS_mprotect:
	case SYS_pkey_mprotect:
	case SYS_madvise:
	case SYS_shmat:
	case SYS_shmdt:
	case SYS_arch_prctl: /* the program's %gs base */
	case SYS_clone:	     /* CLONE_UNTRACED, shared memory or not */
	case SYS_clone3:
	case SYS_fork:
	case SYS_vfork:
	case SYS_execve:
	case SYS_execveat:
	case SYS_exit:
	case SYS_exit_group:
	case SYS_rseq: /* refused */
	case SYS_seccomp:
	case SYS_prctl: /* PR_SET_SECCOMP */
	case SYS_ptrace:
	case SYS_open: /* /proc/.../status: counted */
	case SYS_openat:
		return 1;
	default:
		/* brk too: the heap only grows into free space or shrinks
		 * (code made executable there needs mprotect, watched); a
		 * lookup that misses the map reloads it */
		return 0;
	}
}

void pft_sys_map_fill(uint8_t *map)
{
	/* the kernel reads the low 32 bits of the number: one whose low 16
	 * bits are not a plain x86-64 system call (x32's, numbers past the
	 * table) traps; one that merely aliases a plain one fails with
	 * ENOSYS in the kernel either way */
	for (long i = 0; i < PFT_SYSMAP_BYTES; i++)
		map[i] = (uint8_t)(i >= 512 || pft_sys_watched(i));
}

/* rseq refused only where no thread can have registered untraced */
static int refuse_rseq(const struct pft_tracer *T)
{
	return !T->o->region && !T->attached;
}

/* /proc/self/status, /proc/PID/status, /proc/.../task/TID/status */
static int status_path(const char *p)
{
	size_t n = strlen(p);

	return !strncmp(p, "/proc/", 6) && n > 7 && !strcmp(p + n - 7, "/status");
}

int pft_sys_entry(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r)
{
	uint64_t flags;
	char path[128];

	t->sys_refused = 0;
	t->sys_undo_addr = 0;
	if (T->attached)
		pft_sys_rseq_check(T, t);
	switch (t->sys_nr) {
	case SYS_rseq:
		if (!refuse_rseq(T)) {
			if (PFT_SYSARG2(r) == 0) /* a registration */
				T->st.rseq_kept++;
			return 0;
		}
		if (PFT_SYSARG2(r) == 0)
			T->st.rseq_refused++;
		PFT_SYSNR(r) = (uint64_t)-1; /* skipped */
		t->sys_refused = -ENOSYS;
		return pft_setregs(T, t, r);
	case SYS_clone:
		if (!(PFT_SYSARG0(r) & CLONE_UNTRACED))
			return 0;
		PFT_SYSARG0(r) &= ~(uint64_t)CLONE_UNTRACED;
		t->sys_args[0] = PFT_SYSARG0(r);
		T->st.untraced_cleared++;
		return pft_setregs(T, t, r);
	case SYS_clone3:
		/* struct clone_args starts with the flags */
		if (PFT_SYSARG1(r) < 8 || read_mem(t->tid, PFT_SYSARG0(r), &flags, 8) || !(flags & CLONE_UNTRACED))
			return 0;
		if (pft_mem_write64(t->tid, PFT_SYSARG0(r), flags & ~(uint64_t)CLONE_UNTRACED))
			return 0;
		t->sys_undo_addr = PFT_SYSARG0(r); /* the program's struct, put back */
		t->sys_undo_val = flags;
		T->st.untraced_cleared++;
		return 0;
	case SYS_ptrace:
		T->st.prog_ptrace++;
		return 0;
	case SYS_open:
	case SYS_openat:
		memset(path, 0, sizeof path);
		if (read_mem(t->tid, t->sys_nr == SYS_open ? PFT_SYSARG0(r) : PFT_SYSARG1(r), path, sizeof path - 1) &&
		    read_mem(t->tid, t->sys_nr == SYS_open ? PFT_SYSARG0(r) : PFT_SYSARG1(r), path,
			     32)) /* the string may end near a page end */
			return 0;
		if (status_path(path))
			T->st.status_reads++;
		return 0;
	default:
		return 0;
	}
}

void pft_sys_exit(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *dirty)
{
	const uint64_t *a = t->sys_args;
	int64_t ret = (int64_t)PFT_SYSRET(r);

	if (t->sys_refused) {
		PFT_SYSRET(r) = (uint64_t)(int64_t)t->sys_refused;
		t->sys_refused = 0;
		*dirty = 1;
		return;
	}
	if (t->sys_undo_addr) {
		pft_mem_write64(t->tid, t->sys_undo_addr, t->sys_undo_val);
		t->sys_undo_addr = 0;
	}
	if (ret < 0 && ret > -4096)
		return;
	if ((t->sys_nr == SYS_seccomp && (a[0] == SECCOMP_SET_MODE_STRICT || a[0] == SECCOMP_SET_MODE_FILTER)) ||
	    (t->sys_nr == SYS_prctl && a[0] == PR_SET_SECCOMP)) {
		if (!t->sp->no_inject)
			T->st.seccomp++;
		t->sp->no_inject = 1;
	}
}

int pft_sys_shares_vm(struct pft_tracer *T, struct pft_thr *t, int ev)
{
	struct user_regs_struct r;
	uint64_t flags;

	(void)T;
	/* at the event the parent's registers are those of its system call */
	if (pft_getregs(t->tid, &r) == 0) {
		switch ((long)PFT_SYSNR(&r)) {
		case SYS_clone:
			return !!(PFT_SYSARG0(&r) & CLONE_VM);
		case SYS_clone3:
			if (PFT_SYSARG1(&r) >= 8 && read_mem(t->tid, PFT_SYSARG0(&r), &flags, 8) == 0)
				return !!(flags & CLONE_VM);
			break;
		case SYS_fork:
			return 0;
		case SYS_vfork:
			return 1;
		default:
			break;
		}
	}
	return ev != PTRACE_EVENT_FORK;
}

void pft_sys_rseq_check(struct pft_tracer *T, struct pft_thr *t)
{
	struct {
		uint64_t ptr;
		uint32_t size, sig, flags, pad;
	} c;

	if (t->rseq_checked)
		return;
	t->rseq_checked = 1;
	memset(&c, 0, sizeof c);
	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, t->tid, (void *)sizeof c, &c) > 0 && c.ptr)
		T->st.rseq_kept++;
}

void pft_sys_owe_trap(struct pft_thr *t)
{
	siginfo_t si;

	memset(&si, 0, sizeof si);
	si.si_signo = SIGTRAP;
	si.si_code = TRAP_TRACE;
	pft_hold_signal(t, SIGTRAP, &si);
}

void pft_sys_attached(struct pft_tracer *T, struct pft_space *sp)
{
	char fn[64], line[128];
	int mode = 0;
	FILE *f;

	/* seccomp turned on before the attach: nothing may be injected */
	snprintf(fn, sizeof fn, "/proc/%d/status", (int)sp->pid);
	if (!(f = fopen(fn, "re")))
		return;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	if (mode > 0) {
		sp->no_inject = 1;
		T->st.seccomp++;
	}
}
