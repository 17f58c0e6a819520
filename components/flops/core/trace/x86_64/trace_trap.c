/*
 * trace_trap.c: the x86-64 breakpoint (int3, one byte; the trap leaves
 * rip past it) and the program's own arch_prctl calls on %gs, the base
 * register the code cache borrows for the thread's slot (pft_arch.h).
 */
#include <stdint.h>
#include <sys/syscall.h>

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
