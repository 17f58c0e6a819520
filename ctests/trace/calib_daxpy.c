/*
 * calib_daxpy.c: C kernels whose FLOPs are known analytically, built at
 * -O2 and at -O3 -march=native (whatever the compiler makes of them:
 * scalar, SSE, AVX-512 with masked remainders, FMA or not).
 *
 *   calib_daxpy daxpy N [R]  y = a*x + y over N doubles, R times (default
 *                          1; for the benchmark):         2NR FLOPs
 *   calib_daxpy matmul N [R] C += A*B, N x N doubles (N<=64), R times:
 *                                                         2N^3 R FLOPs
 *   calib_daxpy cond N     y += a*x where x > N/3, x = 0..N-1:
 *                          2*(N-1-N/3) FLOPs (at -O3 -march=native the
 *                          compiler masks the FMA with a compare result)
 *
 * Inputs come from integer conversions (cvtsi2sd: no FLOP) so that
 * initialisation adds none.
 */
#include "calib.h"

#define MAXN 4096
#define MAXM 64

static double x[MAXN], y[MAXN];
static double A[MAXM][MAXM], B[MAXM][MAXM], C[MAXM][MAXM];

__attribute__((noinline)) static void daxpy(long n, double a, double *restrict yy, const double *restrict xx)
{
	for (long i = 0; i < n; i++)
		yy[i] = a * xx[i] + yy[i];
}

__attribute__((noinline)) static void cond(long n, double a, double t, double *restrict yy, const double *restrict xx)
{
	for (long i = 0; i < n; i++)
		if (xx[i] > t)
			yy[i] += a * xx[i];
}

__attribute__((noinline)) static void matmul(long n)
{
	for (long i = 0; i < n; i++)
		for (long k = 0; k < n; k++)
			for (long j = 0; j < n; j++)
				C[i][j] += A[i][k] * B[k][j];
}

int calib_main(int argc, char **argv)
{
	long n, reps;

	if (argc < 3)
		return 100;
	n = calib_atol(argv[2]);
	reps = argc > 3 ? calib_atol(argv[3]) : 1;
	if ((calib_streq(argv[1], "daxpy") || calib_streq(argv[1], "cond")) && n > 0 && n <= MAXN) {
		for (long i = 0; i < n; i++) {
			x[i] = (double)i;
			y[i] = (double)(n - i);
		}
		if (argv[1][0] == 'd')
			for (long r = 0; r < reps; r++)
				daxpy(n, (double)argc, y, x);
		else
			cond(n, (double)argc, (double)(n / 3), y, x);
		__asm__ volatile("" : : "r"(y) : "memory");
		return (int)(long)y[n - 1] & 0x7f;
	}
	if (calib_streq(argv[1], "matmul") && n > 0 && n <= MAXM) {
		for (long i = 0; i < n; i++)
			for (long j = 0; j < n; j++) {
				A[i][j] = (double)(i + j);
				B[i][j] = (double)(i - j);
				C[i][j] = (double)(i ^ j);
			}
		for (long r = 0; r < reps; r++)
			matmul(n);
		__asm__ volatile("" : : "r"(C) : "memory");
		return (int)(long)C[n - 1][n - 1] & 0x7f;
	}
	return 101;
}
