/*
 * tp.h: what the transparency programs (ctests/test_transp.sh) share.
 * Each does a known amount of floating-point work, so the tracer's count
 * can be checked, and prints to stdout only what must be the same
 * natively and traced (details that differ go to stderr).
 */
#ifndef TP_H
#define TP_H

/* n vaddpd ymm: 4n double-precision FLOPs, nothing else floating-point */
__attribute__((noinline)) static void tp_work(long n)
{
	if (n > 0)
		__asm__ volatile("1: vaddpd %%ymm1, %%ymm2, %%ymm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
}

#endif
