/*
 * x86_64/trace_wait.c: a blocking wait4 that a signal always ends
 * (pft_arch.h; used by trace_wait.c).  A handler that only sets a flag
 * races with the wait: a signal after the flag was looked at and before
 * the thread sleeps in the kernel would be lost, and under SA_RESTART
 * the kernel restarts the wait anyway.  Here the look at the flag and
 * the system call are a few instructions whose addresses the handler
 * knows: a signal that lands on them, or in the call (the kernel then
 * points the thread back at the `syscall` to restart it), sends the
 * thread to the -EINTR return instead.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <ucontext.h>
#include <sys/syscall.h>

#include "../pft_arch.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* pft_arch_wait4(rdi pid, rsi status, edx options, rcx flag) */
/* clang-format off */
__asm__(".text\n"
	".globl pft_arch_wait4\n"
	".hidden pft_arch_wait4\n"
	".type pft_arch_wait4, @function\n"
	"pft_arch_wait4:\n"
	"	xorl %r10d, %r10d\n" /* no rusage */
	"	movl $" STR(SYS_wait4) ", %eax\n"
	".globl pft_wait4_check\n"
	".hidden pft_wait4_check\n"
	"pft_wait4_check:\n" /* a signal from here ... */
	"	cmpl $0, (%rcx)\n"
	"	jne pft_wait4_intr\n"
	".globl pft_wait4_sys\n"
	".hidden pft_wait4_sys\n"
	"pft_wait4_sys:\n" /* ... to here, or in the call: -EINTR */
	"	syscall\n"
	"	ret\n"
	".globl pft_wait4_intr\n"
	".hidden pft_wait4_intr\n"
	"pft_wait4_intr:\n"
	"	movq $-4, %rax\n" /* -EINTR */
	"	ret\n"
	".size pft_arch_wait4, .-pft_arch_wait4\n");
/* clang-format on */

extern const char pft_wait4_check[], pft_wait4_sys[], pft_wait4_intr[];

void pft_arch_wait_wake(void *ucontext)
{
	greg_t *pc = &((ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RIP];

	if (*pc >= (greg_t)pft_wait4_check && *pc <= (greg_t)pft_wait4_sys)
		*pc = (greg_t)pft_wait4_intr;
}
