/*
 * calib_gs.c: a program with its own %gs base (arch_prctl), which the
 * code cache also uses: the program must still read its own memory
 * through %gs and get its base back from ARCH_GET_GS.
 *
 *   calib_gs N   N vaddpd ymm; exits 0 when %gs:8 read 7 and
 *                ARCH_GET_GS returned the base it set, else 1.
 */
#include <asm/prctl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned long buf[4] = { 42, 7, 0, 0 };

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	unsigned long v = 0, g = 0;

	if (n < 1 || syscall(SYS_arch_prctl, ARCH_SET_GS, buf))
		return 2;
	__asm__ volatile("1: vaddpd %%ymm1, %%ymm2, %%ymm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
	__asm__ volatile("mov %%gs:8, %0" : "=r"(v));
	if (syscall(SYS_arch_prctl, ARCH_GET_GS, &g))
		return 3;
	return v == 7 && g == (unsigned long)buf ? 0 : 1;
}
