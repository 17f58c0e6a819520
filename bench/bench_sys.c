/*
 * bench_sys.c: what a system call and a signal cost under the tracer
 * (trace_sys.c): calib_sys's loops natively, traced from the code cache
 * with every system call stopped (PFLOPS_TRACE_SYSCALL_STOPS=1, as before
 * fast system calls; a tenth of the loops), and traced with fast system
 * calls.  CPU time of the tracer and the program together (rusage of
 * this process and its children) per loop, start-up included, best of
 * 3; per row also the ptrace stops per loop.
 *
 *   bench_sys CALIB_SYS [N]
 *
 * Prints figures, judges nothing (docs/trace-engine.md has the numbers).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "pflops_trace.h"

static double cpu(void)
{
	struct rusage s, c;

	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return (double)(s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec + c.ru_stime.tv_sec) +
	       (double)(s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec + c.ru_stime.tv_usec) * 1e-6;
}

/* one run: CPU seconds; traced < 0: natively */
static double once(char *const argv[], int traced, struct pft_stats *st)
{
	double t0 = cpu();

	if (traced < 0) {
		int s;
		pid_t p = fork();
		if (p == 0) {
			int fd = open("/dev/null", O_WRONLY);
			dup2(fd, 1);
			execv(argv[0], argv);
			_exit(127);
		}
		waitpid(p, &s, 0);
		if (!WIFEXITED(s) || WEXITSTATUS(s)) {
			fprintf(stderr, "bench_sys: %s %s failed\n", argv[0], argv[1]);
			exit(1);
		}
	} else {
		struct pflops_mix m;
		struct pflops_error err;
		struct pflops_trace_opts o = { .engine = PFT_ENGINE_CACHE, .stats = st };
		int s;
		if (traced)
			unsetenv("PFLOPS_TRACE_SYSCALL_STOPS");
		else
			setenv("PFLOPS_TRACE_SYSCALL_STOPS", "1", 1);
		memset(&m, 0, sizeof m);
		if (pft_run(argv, &o, &m, &s, &err) || !WIFEXITED(s) || WEXITSTATUS(s)) {
			fprintf(stderr, "bench_sys: %s %s traced failed: %s\n", argv[0], argv[1], err.msg);
			exit(1);
		}
	}
	return cpu() - t0;
}

static double best(char *const argv[], int traced, struct pft_stats *st)
{
	double b = 1e30;

	for (int i = 0; i < 3; i++) {
		double t = once(argv, traced, st);
		b = t < b ? t : b;
	}
	return b;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *mode, *what;
	} rows[] = {
		{ "getpid", "getpid()" },
		{ "swap", "swapcontext x2" },
		{ "signals", "raise + handler" },
	};
	long n = argc > 2 ? atol(argv[2]) : 1000000;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_sys CALIB_SYS [N]\n");
		return 2;
	}
	/* the traced program's stdout: /dev/null too; figures on stderr */
	if (!freopen("/dev/null", "w", stdout))
		return 1;
	fprintf(stderr, "CPU us per loop    %9s %9s | %9s %7s %6s | %9s %7s %6s\n", "loops", "native", "all stop",
		"ratio", "stops", "fast", "ratio", "stops");
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char num[32];
		long k = !strcmp(rows[i].mode, "signals") ? n / 10 : n;
		char *av[] = { argv[1], (char *)rows[i].mode, num, NULL };
		struct pft_stats s0, s1;
		double tn, t0, t1;
		snprintf(num, sizeof num, "%ld", k);
		tn = best(av, -1, NULL) / (double)k;
		t1 = best(av, 1, &s1) / (double)k;
		snprintf(num, sizeof num, "%ld", k / 10);
		t0 = best(av, 0, &s0) / (double)(k / 10);
		fprintf(stderr, "%-18s %9ld %9.3f | %9.2f %6.0fx %6.2f | %9.3f %6.1fx %6.2f\n", rows[i].what, k,
			tn * 1e6, t0 * 1e6, t0 / tn, (double)s0.stops / (double)(k / 10), t1 * 1e6, t1 / tn,
			(double)s1.stops / (double)k);
	}
	return 0;
}
