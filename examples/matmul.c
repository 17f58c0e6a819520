/*
 * The quick start's example: C = A * B for 64 x 64 doubles.  It does
 * 528,512 double-precision FLOPs, as `papi_flops_run --source trace`
 * counts them:
 *   524,288 = 2 * 64^3 in the loop nest (a multiply and an add per inner
 *           step, or an FMA where the compiler fuses them);
 *     4,224 around it: setting up A and B, 64 + 4,096 multiplies (gcc -O2
 *           keeps (i + 1) * 0.5 out of the inner loop), and 64 adds in
 *           the check loop.
 * The C library adds none.  It prints a checksum so the work cannot be
 * optimized away.
 */
#include <stdio.h>

#define N 64
static double a[N][N], b[N][N], c[N][N];

int main(void)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			a[i][j] = (i + 1) * 0.5;
			b[i][j] = (j + 1) * 0.25;
		}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < N; k++)
				s += a[i][k] * b[k][j];
			c[i][j] = s;
		}
	double sum = 0;
	for (int i = 0; i < N; i++)
		sum += c[i][i];
	printf("matmul %dx%d: trace(C) = %.1f\n", N, N, sum);
	return 0;
}
