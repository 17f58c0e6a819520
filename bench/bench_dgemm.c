/*
 * bench_dgemm.c: OpenBLAS dgemm for `make bench` (the tracer's speed on a
 * real library).
 *
 *   bench_dgemm N [REPS]      C = A*B + C, N x N doubles, REPS times
 *   bench_dgemm long N WORK   WORK ms of scalar work outside, one N^3
 *                             dgemm in between (--region cblas_dgemm on a
 *                             short call in a long program)
 *
 * Prints nothing (stdout is the program's); exits 0.
 */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

__attribute__((noinline)) static double work(double ms)
{
	double s = 0, t0 = now();
	long i = 0;

	while ((now() - t0) * 1e3 < ms)
		for (int k = 0; k < 1000; k++)
			s += (double)(i++ & 7) * 0.5;
	return s;
}

static int gemm(int n, int reps)
{
	double *a = malloc(sizeof *a * n * n), *b = malloc(sizeof *b * n * n), *c = malloc(sizeof *c * n * n);

	if (!a || !b || !c)
		return 1;
	for (int i = 0; i < n * n; i++) {
		a[i] = (double)(i % 7);
		b[i] = (double)(i % 5);
		c[i] = 0;
	}
	for (int r = 0; r < reps; r++)
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 1.0, c, n);
	__asm__ volatile("" : : "r"(c) : "memory");
	free(a);
	free(b);
	free(c);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 3 && !strcmp(argv[1], "long")) {
		double w = atof(argv[3]);
		volatile double s = work(w / 2);
		int rc = gemm(atoi(argv[2]), 1);
		s += work(w / 2);
		return rc;
	}
	if (argc < 2)
		return 2;
	return gemm(atoi(argv[1]), argc > 2 ? atoi(argv[2]) : 1);
}
