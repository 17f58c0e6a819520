/*
 * bench_trace.c: how fast the tracer runs a loop kernel, in traced
 * instructions per second: one stop per basic block (the default) vs a
 * stop per instruction (single-stepping, opts.single_step) vs native.
 *
 *   bench_trace DIR     DIR holds calib_fp and calib_daxpy_O2
 *
 * Not a timed test: it prints numbers and ratios, it does not judge them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "pflops_trace.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double run_native(char *const argv[])
{
	double t0 = now();
	int st;
	pid_t p = fork();

	if (p == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(p, &st, 0);
	return now() - t0;
}

/* traced instructions per second; *insts receives the count */
static double run_traced(char *const argv[], int step, uint64_t *insts)
{
	struct pflops_mix m;
	struct pflops_trace_opts o = { .single_step = step };
	struct pflops_error err;
	int st;
	double t0;

	memset(&m, 0, sizeof m);
	t0 = now();
	if (pflops_trace_run(argv, &o, &m, &st, &err)) {
		fprintf(stderr, "bench_trace: %s\n", err.msg);
		exit(1);
	}
	*insts = m.total_insts;
	return (double)m.total_insts / (now() - t0);
}

static void bench(const char *dir, const char *bin, const char *kernel,
		  const char *n_block, const char *n_step)
{
	char path[1024];
	char *a_block[] = { path, (char *)kernel, (char *)n_block, NULL };
	char *a_step[] = { path, (char *)kernel, (char *)n_step, NULL };
	uint64_t ib, is;
	double block, step, native, tn;

	snprintf(path, sizeof path, "%s/%s", dir, bin);
	block = run_traced(a_block, 0, &ib);
	step = run_traced(a_step, 1, &is);
	tn = run_native(a_block);
	native = (double)ib / tn;
	printf("%-16s %-8s block %9.3g inst/s  single-step %9.3g inst/s  "
	       "native %9.3g inst/s\n", bin, kernel, block, step, native);
	printf("%-16s %-8s block/single-step = %.1fx   native/block = %.0fx\n",
	       "", "", block / step, native / block);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "build/ctests/trace";

	/* 16 instructions per block: an unrolled FP inner loop */
	bench(dir, "calib_fp", "bench16", "200000", "20000");
	/* compiled daxpy at -O2: short blocks (about 8 instructions) */
	bench(dir, "calib_daxpy_O2", "daxpy", "4096", "1000");
	return 0;
}
