/*
 * calib_kernel.c: the shared library of the region test (libcalibk.so).
 * calib_kernel(n): n vaddpd ymm, then calib_helper(n): n vmulpd xmm.
 */
void calib_helper(long n);

void calib_helper(long n)
{
	__asm__ volatile("1: vmulpd %%xmm1, %%xmm2, %%xmm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
}

void calib_kernel(long n)
{
	long m = n;

	__asm__ volatile("1: vaddpd %%ymm1, %%ymm2, %%ymm0\n dec %0\n jnz 1b" : "+r"(m) : : "xmm0", "cc");
	calib_helper(n);
}
