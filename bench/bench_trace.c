/*
 * bench_trace.c: how much slower a program runs under the tracer, per
 * engine: native, stopping (a ptrace stop per block), instrumented (the
 * code cache): CPU time of the tracer and the whole program (start-up
 * included, each run a child process: bench_progs.c) and slowdown; then
 * --region and per-block counts (wall time), then real programs
 * (bench_programs).
 *
 *   bench_trace DIR [DGEMM|- [CFILE]]
 *        DIR holds calib_fp and calib_daxpy_O2; DGEMM: the OpenBLAS
 *        benchmark program ("-": not built); CFILE: the C file gcc
 *        compiles in the real-program table (bench_progs.c)
 *
 * The stopping engine is timed on a smaller run where the full one
 * would take minutes, and scaled (marked "~").  A second table gives
 * the cost of per-block counts (papi_flops_run --by-function: the code
 * cache with pflops_trace_opts.block set, grouped by function).  Not a timed test: it
 * prints times and ratios (the targets are in docs/trace-engine.md), it
 * does not judge them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "pflops_trace.h"
#include "pflops_cpufeat.h"
#include "bench_progs.h"

/* the stopping engine's runs (seconds of wall time): dgemm 600^3 takes
 * minutes on a loaded machine */
#define STOP_LIMIT 900.0

/* bench16 is AVX-512 code */
static int avx512;

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
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 127) {
		fprintf(stderr, "bench_trace: %s did not run\n", argv[0]);
		exit(1);
	}
	return now() - t0;
}

static double run_traced(char *const argv[], int engine, const char *region, struct pflops_mix *m, struct pft_stats *st)
{
	struct pflops_trace_opts o = { .engine = engine, .region = region, .stats = st };
	struct pflops_error err;
	int status;
	double t0;

	memset(m, 0, sizeof *m);
	t0 = now();
	if (pft_run(argv, &o, m, &status, &err)) {
		fprintf(stderr, "bench_trace: %s\n", err.msg);
		exit(1);
	}
	return now() - t0;
}

/* the code cache with per-block counts grouped by function, as
 * --by-function runs it (symbols read, list sorted); *nfunc: functions */
static double run_byfunc(char *const argv[], struct pflops_mix *m, size_t *nfunc)
{
	struct pflops_error err;
	struct pft_funcs *f = pft_funcs_new(&err);
	struct pflops_trace_opts o = { .engine = PFT_ENGINE_CACHE, .block = pft_funcs_add, .block_arg = f };
	const struct pft_func *const *v;
	int status;
	double t0, t;

	memset(m, 0, sizeof *m);
	t0 = now();
	if (!f || pft_run(argv, &o, m, &status, &err) || pft_funcs_list(f, &v, nfunc, &err)) {
		fprintf(stderr, "bench_trace: %s\n", err.msg);
		exit(1);
	}
	t = now() - t0;
	pft_funcs_free(f);
	return t;
}

/* best of 5 each, plain cache and with per-block counts, alternating */
static void byfunc_row(const char *what, char **argv)
{
	struct pflops_mix mc, mb;
	struct pft_stats sc;
	double c = 1e30, b = 1e30;
	size_t nf = 0;

	for (int i = 0; i < 5; i++) {
		double t = run_traced(argv, PFT_ENGINE_CACHE, NULL, &mc, &sc);
		c = t < c ? t : c;
		t = run_byfunc(argv, &mb, &nf);
		b = t < b ? t : b;
	}
	printf("%-34s %9.3f s %9.3f s %8.2fx %6zu%s\n", what, c, b, b / c, nf,
	       pflops_mix_flops(&mc, -1) != pflops_mix_flops(&mb, -1) ? "  FLOPs DIFFER" : "");
}

static void byfunc_header(void)
{
	printf("\nper-block counts (--by-function), code cache, best of 5:\n");
	printf("%-34s %11s %11s %9s %6s\n", "program (whole run)", "cache", "+by-func", "ratio", "funcs");
}

/* best of n: the machine is shared */
static double best_native(char *const argv[], int n)
{
	double b = 1e30;

	for (int i = 0; i < n; i++) {
		double t = run_native(argv);
		b = t < b ? t : b;
	}
	return b;
}

static void row(const char *what, double native, double stop, int scaled, double cache, uint64_t flops_stop,
		uint64_t flops_cache)
{
	char s[32], r[32] = "-";

	if (stop >= 0) {
		snprintf(s, sizeof s, "%s%.3f s", scaled ? "~" : "", stop);
		snprintf(r, sizeof r, "%.0fx", stop / native);
	} else
		snprintf(s, sizeof s, "-");
	printf("%-34s %9.3f s %12s %9.3f s %10s %8.1fx%s\n", what, native, s, cache, r, cache / native,
	       stop >= 0 && flops_stop != flops_cache ? "  FLOPs DIFFER" : "");
}

/* argv_full: the measured run; argv_small: the same at 1/scale of the
 * work for the stopping engine (NULL: run it at full size).  CPU time of
 * the tracer and the program (bench_best), best of 3 native, 2 cached.
 * Returns the stopping engine's (unscaled) CPU time, -1 past its limit;
 * *known: reuse it instead. */
static double bench(const char *what, char **argv_full, char **argv_small, double scale, const double *known)
{
	struct bench_run n, s = { 0 }, c;
	double stop;

	if (bench_best(argv_full, BENCH_NATIVE, 3, STOP_LIMIT, &n)) {
		printf("%-34s native run: %s\n", what, n.err);
		return -1;
	}
	if (known)
		stop = *known;
	else if (bench_best(argv_small ? argv_small : argv_full, PFT_ENGINE_STOP, 1, STOP_LIMIT, &s)) {
		printf("%-34s stopping engine: %s\n", what, s.timed_out ? "past the limit" : s.err);
		stop = -1;
	} else
		stop = s.cpu;
	if (bench_best(argv_full, PFT_ENGINE_CACHE, 2, STOP_LIMIT, &c)) {
		printf("%-34s traced run: %s\n", what, c.timed_out ? "past the limit" : c.err);
		return stop;
	}
	row(what, n.cpu, stop >= 0 ? stop * scale : -1, argv_small || known, c.cpu,
	    argv_small || known ? c.flops : s.flops, c.flops);
	return stop;
}

static void header(void)
{
	printf("CPU time (tracer + program), best of 3 native and 2 cached runs:\n");
	printf("%-34s %11s %12s %11s %10s %9s\n", "program (whole run)", "native", "stop", "cache", "stop/nat",
	       "cache/nat");
}

/* the second table: per-block counts on the same programs */
static void byfunc_table(const char *dir, const char *fp, const char *dx, const char *dgemm)
{
	char cxx[1024];
	char *a[] = { (char *)fp, "bench16", "10000000", NULL };
	char *e[] = { cxx, "1000", NULL };
	char *b[] = { (char *)dx, "daxpy", "4096", "20000", NULL };
	char *c[] = { (char *)dx, "matmul", "64", "200", NULL };

	byfunc_header();
	if (avx512)
		byfunc_row("calib_fp bench16 1e7", a);
	byfunc_row("calib_daxpy_O2 daxpy 4096 x2e4", b);
	byfunc_row("calib_daxpy_O2 matmul 64 x200", c);
	/* much code run briefly: C++ start-up, an exception (libstdc++) */
	snprintf(cxx, sizeof cxx, "%s/calib_regioncxx", dir);
	byfunc_row("calib_regioncxx 1000 (C++ start-up)", e);
	if (dgemm) {
		char *d[] = { (char *)dgemm, "600", "4", NULL };
		setenv("OPENBLAS_NUM_THREADS", "1", 1);
		byfunc_row("OpenBLAS dgemm 600^3 x4, 1 thread", d);
	}
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "build/ctests/trace";
	const char *dgemm = argc > 2 && strcmp(argv[2], "-") ? argv[2] : NULL;
	const char *cfile = argc > 3 ? argv[3] : NULL;
	char fp[1024], dx[1024];

	bench_hints(0); /* the kernels: no hint store (hermetic, comparable) */
	if (getenv("BENCH_PROGS") && *getenv("BENCH_PROGS")) {
		bench_programs(dgemm, cfile); /* only those rows */
		return 0;
	}

	snprintf(fp, sizeof fp, "%s/calib_fp", dir);
	snprintf(dx, sizeof dx, "%s/calib_daxpy_O2", dir);
	avx512 = pfc_cpu_has("avx512f", getenv(PFC_CPU_HIDE_ENV)) == 1;
	header();
	if (avx512) { /* 16 instructions per block: an unrolled FP inner loop */
		char *full[] = { fp, "bench16", "10000000", NULL };
		char *small[] = { fp, "bench16", "100000", NULL };
		bench("calib_fp bench16 1e7", full, small, 100, NULL);
	} else
		printf("calib_fp bench16 1e7: not run, this CPU lacks avx512f\n");
	{ /* compiled daxpy at -O2: short blocks (about 8 instructions) */
		char *full[] = { dx, "daxpy", "4096", "20000", NULL };
		char *small[] = { dx, "daxpy", "4096", "20", NULL };
		bench("calib_daxpy_O2 daxpy 4096 x2e4", full, small, 1000, NULL);
	}
	{
		char *full[] = { dx, "matmul", "64", "200", NULL };
		char *small[] = { dx, "matmul", "64", "1", NULL };
		bench("calib_daxpy_O2 matmul 64 x200", full, small, 200, NULL);
	}
	if (!dgemm) {
		printf("OpenBLAS dgemm: not built (install libopenblas-dev: "
		       "scripts/install-deps.sh)\n");
		printf("(~: the stopping engine timed on a fraction of the work "
		       "and scaled)\n");
		byfunc_table(dir, fp, dx, NULL);
		bench_programs(NULL, cfile);
		return 0;
	}
	setenv("OPENBLAS_NUM_THREADS", "1", 1);
	{
		char *one[] = { (char *)dgemm, "600", NULL };
		char *four[] = { (char *)dgemm, "600", "4", NULL };
		double s1 = bench("OpenBLAS dgemm 600^3, 1 thread", one, NULL, 1, NULL);
		/* native >= 20 ms; the stopping engine: the single call, x4 */
		bench("OpenBLAS dgemm 600^3 x4, 1 thread", four, NULL, 4, &s1);
	}
	{
		/* --region on one short call (dgemm 32^3) in a 400 ms program */
		char *prog[] = { (char *)dgemm, "long", "32", "400", NULL };
		struct pflops_mix ms, mc;
		struct pft_stats ss, sc;
		double native = best_native(prog, 3);
		double stop = run_traced(prog, PFT_ENGINE_STOP, "cblas_dgemm", &ms, &ss);
		double cache = run_traced(prog, PFT_ENGINE_CACHE, "cblas_dgemm", &mc, &sc);

		printf("\n--region cblas_dgemm: one 32^3 call inside %s long 32 400\n", dgemm);
		printf("  native %.3f s, traced: stop %.3f s (+%.3f s), cache %.3f s "
		       "(+%.3f s); %lu call(s), %lu FLOPs%s\n",
		       native, stop, stop - native, cache, cache - native, (unsigned long)sc.region_calls,
		       (unsigned long)pflops_mix_flops(&mc, -1),
		       pflops_mix_flops(&ms, -1) != pflops_mix_flops(&mc, -1) ? "  FLOPs DIFFER" : "");
	}
	printf("(~: the stopping engine timed on a fraction of the work and "
	       "scaled)\n");
	byfunc_table(dir, fp, dx, dgemm);
	bench_programs(dgemm, cfile);
	return 0;
}
