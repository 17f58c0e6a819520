/*
 * trace_trap.c: the x86-64 breakpoint (int3, one byte; the trap leaves
 * rip past it) and the program's own arch_prctl calls on %gs, the base
 * register the code cache borrows for the thread's slot; the few
 * instructions the engine looks for (pft_arch.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/user.h>

#include "../pft_arch.h"

#ifndef ARCH_SET_GS
#define ARCH_SET_GS 0x1001
#define ARCH_GET_GS 0x1004
#endif

static const uint8_t brk[PFT_BRK_LEN] = { 0xcc };

const uint8_t *pft_arch_brk_bytes(void)
{
	return brk;
}

uint64_t pft_arch_trap_brk(uint64_t pc)
{
	return pc - 1;
}

int pft_arch_base_sys(long nr)
{
	return nr == SYS_arch_prctl;
}

int pft_arch_base_call(long nr, const uint64_t a[6], uint64_t *v)
{
	if (nr != SYS_arch_prctl)
		return 0;
	*v = a[1];
	if (a[0] == ARCH_SET_GS)
		return PFT_BASE_SET;
	return a[0] == ARCH_GET_GS ? PFT_BASE_GET : 0;
}

int pft_arch_is_syscall(const uint8_t *p, size_t n)
{
	return n >= 2 && p[0] == 0x0f && p[1] == 0x05;
}

int pft_arch_is_spin_hint(const uint8_t *p, size_t n)
{
	return n >= 2 && p[0] == 0xf3 && p[1] == 0x90;
}

/* 64-bit code runs with the user code segment 0x33 (__USER_CS); 32-bit
 * compatibility mode with 0x23 */
const char *pft_arch_foreign_mode(const struct user_regs_struct *r)
{
	return r->cs == 0x33 ? NULL : "runs in 32-bit mode; only x86-64 programs can be traced";
}
