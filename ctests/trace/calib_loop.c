/*
 * calib_loop.c: one-block loops, whose copies the code cache emits twice
 * (docs/trace-engine.md, "Cheaper counting"): the loop left from either
 * half, odd and even trip counts, the flags kept past the way out, and a
 * timer interrupting either half.
 *
 *   calib_loop KIND REPS N [OUT]
 *       REPS times a one-block loop of N + (rep % 5) runs (odd and even),
 *       each run one addpd xmm (2 DP FLOPs).  KIND picks how the copy
 *       counts:
 *         cmp    addpd; add; cmp; jne    (the increment, the load through
 *                                        a zeroed register: no store)
 *         store  the same with a movapd store (the plain increment)
 *         shl    addpd; mov $1,%ecx; shl; jnz, n <= 60 (no flag writer
 *                the increment may precede: a borrowed register)
 *         axpy   c[j] += a * b[j], 4 floats a run (movaps, mulps, addps
 *                from memory, movaps store, add, cmp, jne: the inner
 *                loop of PAPI's flops_validation), n <= 1020; 4 SP
 *                mulps and 4 SP addps FLOPs a run, no addpd
 *       After each loop the flags its last compare set are checked (exit
 *       status 1 if they changed on the way out).  With OUT a 100 us
 *       timer interrupts the loops (the handler does no FP work) and the
 *       number of signals is written to OUT.
 *
 * Expected: 2 DP FLOPs (one addpd xmm) a run, Sum(N + rep % 5) runs.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile long alarms;
static double buf[2] __attribute__((aligned(16)));
static float vb[4096] __attribute__((aligned(16))), vc[4096] __attribute__((aligned(16)));

static void on_alrm(int sig)
{
	(void)sig;
	alarms++;
}

/* the arithmetic flags after the loop, as its last `cmp` left them */
static unsigned long cmp_loop(long n, int store)
{
	unsigned long fl;
	long i = 0;

	if (store)
		__asm__ volatile("1: addpd %%xmm1, %%xmm0\n movapd %%xmm0, (%3)\n add $1, %0\n cmp %2, %0\n jne 1b\n"
				 " pushf\n pop %1"
				 : "+r"(i), "=r"(fl)
				 : "r"(n), "r"(buf)
				 : "xmm0", "cc", "memory");
	else
		__asm__ volatile("1: addpd %%xmm1, %%xmm0\n add $1, %0\n cmp %2, %0\n jne 1b\n"
				 " pushf\n pop %1"
				 : "+r"(i), "=r"(fl)
				 : "r"(n)
				 : "xmm0", "cc");
	return fl & 0x8d5;
}

/* n runs of a loop whose only flag writer is a shift (n <= 60) */
static unsigned long shl_loop(long n)
{
	unsigned long v = 1UL << (64 - n), fl;

	__asm__ volatile("1: addpd %%xmm1, %%xmm0\n mov $1, %%ecx\n shl %%cl, %0\n jnz 1b\n"
			 " pushf\n pop %1"
			 : "+r"(v), "=r"(fl)
			 :
			 : "xmm0", "rcx", "cc");
	return fl & 0x8c5; /* (AF: undefined after a shift) */
}

static unsigned long axpy_loop(long n)
{
	unsigned long fl;
	long j = 0;

	__asm__ volatile("1: movaps (%3,%0), %%xmm0\n mulps %%xmm1, %%xmm0\n addps (%4,%0), %%xmm0\n"
			 " movaps %%xmm0, (%4,%0)\n add $16, %0\n cmp %2, %0\n jne 1b\n"
			 " pushf\n pop %1"
			 : "+r"(j), "=r"(fl)
			 : "r"(16 * n), "r"(vb), "r"(vc)
			 : "xmm0", "cc", "memory");
	return fl & 0x8d5;
}

int main(int argc, char **argv)
{
	long reps, n0;
	int kind;

	if (argc < 4)
		return 2;
	kind = !strcmp(argv[1], "cmp")	   ? 0
	       : !strcmp(argv[1], "store") ? 1
	       : !strcmp(argv[1], "shl")   ? 2
	       : !strcmp(argv[1], "axpy")  ? 3
					   : -1;
	reps = atol(argv[2]);
	n0 = atol(argv[3]);
	if (kind < 0 || reps < 1 || n0 < 1 || (kind == 2 && n0 + 4 > 60) || (kind == 3 && n0 + 4 > 1024))
		return 2;
	if (argc > 4) {
		struct sigaction sa;
		struct itimerval it = { { 0, 100 }, { 0, 100 } };
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alrm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	for (long r = 0; r < reps; r++) {
		long n = n0 + r % 5;
		/* cmp equal: ZF and PF set; the last shl by 1 to 0: CF
		 * (the bit out), ZF, PF, OF (CF xor the top bit) */
		unsigned long want = kind == 2 ? 0x845 : 0x44;
		if ((kind == 3 ? axpy_loop(n) : kind == 2 ? shl_loop(n) : cmp_loop(n, kind)) != want)
			return 1;
	}
	if (argc > 4) {
		struct itimerval it;
		FILE *f;
		memset(&it, 0, sizeof it);
		setitimer(ITIMER_REAL, &it, NULL);
		if (!(f = fopen(argv[4], "w")))
			return 3;
		fprintf(f, "%ld\n", (long)alarms);
		if (fclose(f))
			return 3;
	}
	return 0;
}
