/*
 * calib_sample.c: a FLOP profile's functions and call paths
 * (papi_flops_run --sample).  Built with frame pointers, not inlined.
 *
 *   calib_sample N: caller_x(N) -> kern_a(N); caller_y(3N) -> kern_a(3N);
 *   kern_b(N) from main.  kern_a: n addpd xmm (2n DP FLOPs); kern_b: n
 *   mulsd (n DP FLOPs).  FP_OPS: kern_a 8N (2N via caller_x, 6N via
 *   caller_y), kern_b N, nothing else (the program does no other FP).
 *   calib_sample N PAGES: touch(PAGES) first, one page fault a page
 *   (the hw path's test stand-in, perf's page-faults, counts them).
 */
#include <stdlib.h>
#include <sys/mman.h>

__attribute__((noinline)) void touch(long pages)
{
	volatile char *p = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(3);
	madvise((void *)p, pages * 4096, MADV_NOHUGEPAGE); /* a fault per 4 KiB page */
	for (long i = 0; i < pages; i++)
		p[i * 4096] = 1;
}

__attribute__((noinline)) void kern_a(long n)
{
	__asm__ volatile("1: addpd %%xmm1, %%xmm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
}

__attribute__((noinline)) void kern_b(long n)
{
	__asm__ volatile("1: mulsd %%xmm1, %%xmm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
}

__attribute__((noinline)) void caller_x(long n)
{
	kern_a(n);
	__asm__ volatile("" ::: "memory"); /* not a tail call: caller_x stays on the stack */
}

__attribute__((noinline)) void caller_y(long n)
{
	kern_a(n);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;

	if (n < 1)
		return 2;
	if (argc > 2)
		touch(atol(argv[2]));
	caller_x(n);
	caller_y(3 * n);
	kern_b(n);
	return 0;
}
