/* bench_progs.h: make bench's runs in child processes, timed by wait4,
 * and its table of real programs (bench_progs.c) */
#ifndef BENCH_PROGS_H
#define BENCH_PROGS_H

#include "pflops_trace.h"

#define BENCH_NATIVE (-1) /* an engine: not traced */

/* one run, native or traced */
struct bench_run {
	double wall, cpu;  /* s; cpu: user + system of the tracer and
				 * the program (all its threads, children) */
	double tracer_cpu; /* s, the tracer's own (traced runs) */
	long rss_kb;	   /* the tracer's peak RSS */
	int timed_out, status, failed;
	uint64_t flops;
	struct pft_stats st;
	char err[600];
};

/* Run argv n times, natively (engine BENCH_NATIVE) or under the tracer
 * (a PFLOPS_ENGINE_*), each run a child process stopped after limit
 * seconds of wall time.  *b: the least wall and the least CPU time, the
 * stats of the run with the least CPU time.  -1: a run failed or passed
 * the limit (*b is that run, b->err says why). */
int bench_best(char *const argv[], int engine, int n, double limit, struct bench_run *b);

/* the hint store for the traced runs: a fresh one of the bench's own
 * (on), or none (off: the kernels, timed without hints) */
void bench_hints(int on);

/* dgemm: bench_dgemm (NULL: not built); cfile: the C file gcc compiles
 * (NULL: none).  Prints two tables on stdout. */
void bench_programs(const char *dgemm, const char *cfile);

#endif
