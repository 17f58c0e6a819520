/*
 * pft_regs.h: the registers the engine reads and sets in a stopped
 * thread's struct user_regs_struct (PTRACE_GETREGS), by their job; each
 * names an lvalue.  Included by pft_arch.h only.
 */
#ifndef PFT_REGS_H
#define PFT_REGS_H

#define PFT_PC(r) ((r)->rip)	   /* the next instruction */
#define PFT_SP(r) ((r)->rsp)	   /* the stack pointer */
#define PFT_FLAGS(r) ((r)->eflags) /* PFT_TF: the program steps itself */
#define PFT_CACHE_BASE(r) \
	((r)->gs_base)		     /* the base the cache's code finds
					  * the thread's slot at (%gs) */
#define PFT_SYSNR(r) ((r)->orig_rax) /* the system call at an entry stop */
#define PFT_SYSRET(r) ((r)->rax)     /* its number going in, result out */
#define PFT_SYSARG0(r) ((r)->rdi)
#define PFT_SYSARG1(r) ((r)->rsi)
#define PFT_SYSARG2(r) ((r)->rdx)
#define PFT_SYSARG3(r) ((r)->r10)
#define PFT_SYSARG4(r) ((r)->r8)
#define PFT_SYSARG5(r) ((r)->r9)
/* EFLAGS.TF set by the program (popf, sigreturn): it steps itself */
#define PFT_TF 0x100ULL
/* rt_sigreturn: where the signal frame (at the stack pointer as the
 * call is made: the ucontext) keeps the pc and flags it returns with
 * (uc_mcontext.gregs[REG_RIP], [REG_EFL]) */
#define PFT_SIGFRAME_PC 168
#define PFT_SIGFRAME_FLAGS 176
/* the length of the system call instruction (a restarted call goes back
 * by it) */
#define PFT_SYSCALL_LEN 2
/* the length of a breakpoint (int3; pft_arch_brk_bytes) */
#define PFT_BRK_LEN 1
/* the longest instruction */
#define PFT_INSN_MAX 15

#endif
