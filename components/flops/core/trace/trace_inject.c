/*
 * trace_inject.c: system calls made on behalf of the traced program
 * (memfd_create, mmap, close: the code cache's memory), and the
 * bookkeeping of what arrives meanwhile.
 *
 * The thread is pointed at a `syscall` instruction already in its
 * memory (the vDSO's, later the cache's own), run to its syscall-exit
 * stop with PTRACE_SYSCALL, and given its registers back.  A signal
 * that arrives meanwhile is held back and sent again afterwards with
 * its siginfo; an exit is passed to the main loop (pft_defer).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "trace_internal.h"

void pft_defer(struct pft_tracer *T, pid_t pid, int status)
{
	if (T->ndefer == T->defer_cap) {
		size_t nc = T->defer_cap ? 2 * T->defer_cap : 8;
		struct pft_deferred *n = realloc(T->defer, nc * sizeof *n);
		if (!n)
			return; /* lost: the thread stays listed until kill_all */
		T->defer = n;
		T->defer_cap = nc;
	}
	T->defer[T->ndefer++] = (struct pft_deferred){ pid, status };
}

void pft_hold_signal(struct pft_thr *t, int sig, const siginfo_t *si)
{
	/* one held signal: a second of the same kind merges, as standard
	 * signals do; another kind would be lost, so it replaces none */
	if (t->resend_sig)
		return;
	t->resend_sig = sig;
	if (si)
		t->resend_info = *si;
	else
		memset(&t->resend_info, 0, sizeof t->resend_info);
}

/* Wait for the next stop of tid; 1 = a syscall stop, 0 = gone, <0 error.
 * Other stops (signals) are held back and the thread resumed. */
static int wait_syscall_stop(struct pft_tracer *T, struct pft_thr *t)
{
	for (;;) {
		int st;
		pid_t p = waitpid(t->tid, &st, __WALL);

		pft_mem_fresh(); /* the program ran: pages read are old */
		if (p < 0) {
			if (errno == EINTR)
				continue;
			return PFLOPS_ESYS;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			pft_defer(T, p, st);
			return 0;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80))
			return 1;
		if (!(st >> 16)) {
			siginfo_t si;
			int sig = WSTOPSIG(st);
			if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) == 0)
				pft_hold_signal(t, sig, &si);
		}
		if (ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL) && errno == ESRCH)
			continue; /* its exit status comes next */
	}
}

int pft_inject(struct pft_tracer *T, struct pft_thr *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
	       uint64_t a4, uint64_t a5, int64_t *ret)
{
	struct user_regs_struct saved, r;
	int rc;

	if (t->sp->no_inject) /* seccomp on (trace_sys.c) */
		return PFLOPS_EUNAVAIL;
	if (!t->sp->gadget && !(t->sp->gadget = pft_find_gadget(t->sp, t->tid)))
		return PFLOPS_EUNAVAIL;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &saved))
		return PFLOPS_ECHILD;
	r = saved;
	PFT_SYSRET(&r) = (uint64_t)nr;
	PFT_SYSNR(&r) = (uint64_t)-1; /* no syscall restart on the way out */
	PFT_SYSARG0(&r) = a0;
	PFT_SYSARG1(&r) = a1;
	PFT_SYSARG2(&r) = a2;
	PFT_SYSARG3(&r) = a3;
	PFT_SYSARG4(&r) = a4;
	PFT_SYSARG5(&r) = a5;
	PFT_PC(&r) = t->sp->gadget;
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &r) || ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL))
		return PFLOPS_ECHILD;
	rc = wait_syscall_stop(T, t); /* entry */
	if (rc == 1) {
		if (ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL) == 0)
			rc = wait_syscall_stop(T, t); /* exit */
	}
	if (rc < 0)
		return rc;
	if (rc == 0)
		return PFLOPS_ECHILD;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r))
		return PFLOPS_ECHILD;
	*ret = (int64_t)PFT_SYSRET(&r);
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &saved))
		return PFLOPS_ECHILD;
	T->st.injected++;
	return 0;
}

int pft_inject_entry(struct pft_tracer *T, struct pft_thr *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
		     int64_t *ret)
{
	struct user_regs_struct saved, r;
	int rc;

	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &saved))
		return PFLOPS_ECHILD;
	r = saved;
	PFT_SYSNR(&r) = (uint64_t)nr; /* the kernel runs this one instead */
	PFT_SYSARG0(&r) = a0;
	PFT_SYSARG1(&r) = a1;
	PFT_SYSARG2(&r) = a2;
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &r) || ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL))
		return PFLOPS_ECHILD;
	rc = wait_syscall_stop(T, t); /* its exit */
	if (rc <= 0)
		return rc < 0 ? rc : PFLOPS_ECHILD;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r))
		return PFLOPS_ECHILD;
	*ret = (int64_t)PFT_SYSRET(&r);
	/* back at the program's syscall instruction (2 bytes: syscall,
	 * int 0x80, sysenter), its number in %rax: it runs again */
	PFT_PC(&saved) -= PFT_SYSCALL_LEN;
	PFT_SYSRET(&saved) = PFT_SYSNR(&saved);
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &saved))
		return PFLOPS_ECHILD;
	T->st.injected++;
	return 0;
}
