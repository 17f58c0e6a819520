/*
 * tp_regs.c MODE: registers a program may look at after its own
 * instructions; prints what it saw, exit 0 when it is what the CPU
 * defines.  DP_OPS 4000 * rounds (tp_work(1000) each round).
 *
 *   rcx  `syscall` leaves the address of the next instruction in %rcx
 *        (and rflags in %r11): 1000 getpid calls compared with it.
 *   gs   wrgsbase then ARCH_GET_GS, rdgsbase and a %gs: load give back
 *        the base written (10 rounds, a new base each); prints a SKIP
 *        line where the CPU or kernel lacks FSGSBASE.
 *   tf   the program single-steps 2 loops of its own with EFLAGS.TF and
 *        a SIGTRAP handler, and prints how many traps it saw.
 *   flags  code on an RWX page (JIT stubs do this: HotSpot's CPUID
 *        check) saves EFLAGS with pushf, flips EFLAGS.ID with popf and
 *        puts them back, 10 times; prints how often the flags it
 *        pushed showed TF (0: the tracer's single-steps stay hidden; a
 *        leaked TF ended the program with SIGTRAP at the last popf).
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include "tp.h"

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

static int rcx(void)
{
	int bad = 0;

	for (int i = 0; i < 1000; i++) {
		unsigned long c, next, r11;
		__asm__ volatile("mov $39, %%eax\n syscall\n 1: lea 1b(%%rip), %1"
				 : "=c"(c), "=r"(next), "=&r"(r11)
				 :
				 : "rax", "r11", "memory");
		(void)r11;
		bad += c != next;
		if (i % 100 == 0)
			tp_work(1000);
	}
	printf("rcx: %d of 1000 wrong\n", bad);
	return bad != 0;
}

static int gs(void)
{
	static unsigned long buf[10][2];
	int bad = 0;

	if (!(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE)) {
		printf("SKIP: tp_regs gs: no FSGSBASE (CPU or kernel)\n");
		return 0;
	}
	for (int i = 0; i < 10; i++) {
		unsigned long g = 0, rd = 0, v = 0;
		buf[i][1] = 100 + (unsigned long)i;
		__asm__ volatile("wrgsbase %0" : : "r"(buf[i]) : "memory");
		tp_work(1000);
		if (syscall(SYS_arch_prctl, ARCH_GET_GS, &g))
			return 2;
		__asm__ volatile("rdgsbase %0" : "=r"(rd));
		__asm__ volatile("mov %%gs:8, %0" : "=r"(v));
		bad += (g != (unsigned long)buf[i]) + (rd != (unsigned long)buf[i]) + (v != 100 + (unsigned long)i);
	}
	printf("gs: %d of 30 wrong\n", bad);
	return bad != 0;
}

static volatile long traps;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	traps++;
}

static int tf(void)
{
	struct sigaction sa;
	long n = 5;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGTRAP, &sa, NULL))
		return 2;
	for (int round = 0; round < 2; round++) {
		n = 5;
		__asm__ volatile("pushfq\n orq $0x100, (%%rsp)\n popfq\n"
				 "1: vaddpd %%ymm1, %%ymm2, %%ymm0\n"
				 "dec %0\n jnz 1b\n"
				 "pushfq\n andq $~0x100, (%%rsp)\n popfq\n"
				 : "+r"(n)
				 :
				 : "xmm0", "cc", "memory");
		tp_work(1000);
	}
	printf("tf: %ld traps\n", traps);
	return 0;
}

static int flags(void)
{
	/* pushf; pop rax; mov rcx,rax; xor eax,0x200000; push rax; popf;
	 * pushf; pop rax; push rcx; popf; ret: the flags popf loaded */
	static const unsigned char code[] = { 0x9c, 0x58, 0x48, 0x89, 0xc1, 0x35, 0x00, 0x00, 0x20,
					      0x00, 0x50, 0x9d, 0x9c, 0x58, 0x51, 0x9d, 0xc3 };
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int tfs = 0;

	if (p == MAP_FAILED)
		return 2;
	memcpy(p, code, sizeof code);
	for (int i = 0; i < 10; i++) {
		tfs += !!(((unsigned long (*)(void))(void *)p)() & 0x100);
		tp_work(1000);
	}
	printf("flags: TF pushed %d of 10 times\n", tfs);
	return tfs != 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "rcx";

	if (!strcmp(m, "rcx"))
		return rcx();
	if (!strcmp(m, "gs"))
		return gs();
	if (!strcmp(m, "tf"))
		return tf();
	if (!strcmp(m, "flags"))
		return flags();
	return 2;
}
