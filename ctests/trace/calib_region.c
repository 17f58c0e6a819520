/*
 * calib_region.c: counting inside one function only.
 *
 *   calib_region N: outside(N) [N vdivpd xmm], calib_kernel(N) [in
 *   libcalibk.so: N vaddpd ymm + calib_helper: N vmulpd xmm],
 *   main_kernel(N) [static, here: 2N vsubpd ymm], calib_kernel(N) again.
 */
#include <stdlib.h>

void calib_kernel(long n);

__attribute__((noinline)) static void outside(long n)
{
	__asm__ volatile("1: vdivpd %%xmm1, %%xmm2, %%xmm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
}

__attribute__((noinline)) static void main_kernel(long n)
{
	__asm__ volatile("1: vsubpd %%ymm1, %%ymm2, %%ymm0\n vsubpd %%ymm1, %%ymm2, %%ymm0\n"
			 " dec %0\n jnz 1b"
			 : "+r"(n)
			 :
			 : "xmm0", "cc");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;

	outside(n);
	calib_kernel(n);
	main_kernel(n);
	calib_kernel(n);
	return 0;
}
