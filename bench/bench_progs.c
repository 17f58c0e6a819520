/*
 * bench_progs.c: `make bench` on real programs (issue 19's list): each
 * runs natively and under the tracer (the code cache), and a table gives
 * wall and CPU time of both, the CPU-time ratio traced/native beside the
 * issue's target, and the tracer's peak RSS; a second table shows where
 * the tracer's time went (pft_stats).
 *
 * CPU time is the tracer's plus the program's (all its threads and child
 * processes), from wait4's rusage: the machine is shared, and CPU time
 * moves less with the load than wall time.  Each run is a child process
 * (the tracer in its own child, so its peak RSS is its own).  A traced
 * run that passes BENCH_LIMIT seconds of wall time (default 60) is
 * interrupted: the tracer kills the program and returns its stats, and
 * the row says ">Ns" and "unfin" (a tracer that does not return is
 * killed 30 s later, with all it started).  A program that is not
 * installed, or fails natively, is skipped, with the reason.  Not a
 * timed test: it prints, it does not fail.
 *
 * Each program is traced cold (an empty hint store: what a first run
 * costs), warm (the store its cold run left: a run of the same files
 * again, which counts the copies the cold run left without a count, to
 * learn which ran) and hot (the store the warm run left: every run
 * after), in a store of the bench's own, so no earlier run or ~/.cache
 * changes a figure (docs/trace-engine.md#the-hint-store).
 *
 * Environment: BENCH_LIMIT (seconds), BENCH_PROGS (comma-separated words:
 * only the rows whose name holds one), PFLOPS_TRACE_ENGINE (stop|cache).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>

#include "pflops_trace.h"
#include "bench_progs.h"

/* rounds per program (BENCH_REPS): each runs it natively, traced cold,
 * warm and hot, one after the other, so that a slower spell of a shared
 * machine falls on the four alike */
#define REPS 3
#define REPS_MAX 20

/* what the tracer's child sends back through a pipe */
struct report {
	int ok, status, timed_out;
	uint64_t flops;
	double tracer_cpu;
	long rss_kb;
	struct pft_stats st;
	char err[600];
};

struct prog {
	const char *name;
	double target;		/* the CPU-time ratio target */
	const char *threads;	/* OPENBLAS_NUM_THREADS */
	char *argv[12];		/* argv[0]: a name looked up in PATH or a path */
	const char *need;	/* a Python module the program imports */
	const char *pkg;	/* what installs it */
	const char *absent;	/* known missing already: why */
	const char *input;	/* hpcc: its hpccinf.txt, written to a fresh
				 * directory that the program runs in */
	const char *input_name; /* that file's name (NULL: hpccinf.txt) */
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double tv(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec * 1e-6;
}

/* argv[0] in PATH (or as given, if it holds a '/'); NULL: not found */
static const char *which(const char *cmd, char *buf, size_t n)
{
	const char *p = getenv("PATH");

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) ? NULL : cmd;
	for (p = p ? p : "/usr/bin:/bin"; *p;) {
		size_t l = strcspn(p, ":");

		snprintf(buf, n, "%.*s/%s", (int)l, p, cmd);
		if (l && access(buf, X_OK) == 0)
			return buf;
		p += l + (p[l] == ':');
	}
	return NULL;
}

static void quiet(void)
{
	int fd = open("/dev/null", O_RDWR);

	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
}

static volatile sig_atomic_t stop_now;

static void on_alarm(int sig)
{
	(void)sig;
	stop_now = SIGKILL | PFLOPS_INTERRUPT_FORWARD | PFLOPS_INTERRUPT_NOW;
}

/* the tracer's child: trace argv, send a struct report down fd.  At the
 * limit the tracer is interrupted (it kills the program and returns what
 * it counted, with its stats). */
static void tracer_child(char *const argv[], int engine, double limit, int fd)
{
	struct report r = { 0 };
	struct pflops_mix m = { 0 };
	struct pflops_trace_opts o = {
		.engine = engine, .stats = &r.st, .interrupt = &stop_now, .wait_signal = SIGRTMIN
	};
	struct pflops_error err = { 0 };
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	struct itimerval it = { .it_value = { (time_t)limit, (suseconds_t)((limit - (double)(time_t)limit) * 1e6) } };
	struct rusage ru;

	quiet(); /* the program's output, not the bench's */
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	if (pft_run(argv, &o, &m, &r.status, &err))
		snprintf(r.err, sizeof r.err, "%s", err.msg);
	else
		r.ok = 1;
	r.timed_out = r.st.interrupted != 0;
	r.flops = pflops_mix_flops(&m, -1);
	getrusage(RUSAGE_SELF, &ru);
	r.tracer_cpu = tv(ru.ru_utime) + tv(ru.ru_stime);
	r.rss_kb = ru.ru_maxrss;
	if (write(fd, &r, sizeof r) != (ssize_t)sizeof r)
		_exit(1);
	_exit(0);
}

/* Run argv natively or traced, in a process group of its own, killed
 * after limit seconds.  The bench is a child subreaper, so what a killed
 * tracer leaves (its tracees, which PTRACE_O_EXITKILL kills) comes back
 * here and its CPU time is counted too. */
static void run(char *const argv[], int engine, double limit, struct bench_run *m)
{
	int traced = engine != BENCH_NATIVE;
	int p[2] = { -1, -1 }, st;
	struct report r = { 0 };
	struct rusage ru;
	double t0 = now();
	pid_t pid;

	memset(m, 0, sizeof *m);
	prctl(PR_SET_CHILD_SUBREAPER, 1); /* what a killed tracer leaves */
	if (traced && pipe(p)) {
		m->failed = 1;
		snprintf(m->err, sizeof m->err, "pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		if (traced) {
			close(p[0]);
			tracer_child(argv, engine, limit, p[1]);
		}
		quiet();
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0) {
		m->failed = 1;
		snprintf(m->err, sizeof m->err, "fork: %s", strerror(errno));
		return;
	}
	setpgid(pid, pid);
	if (traced) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		/* the tracer stops at the limit itself; this is the backstop */
		int left = (int)(limit * 1000) + 30000, n;

		close(p[1]);
		do
			n = poll(&pf, 1, left);
		while (n < 0 && errno == EINTR);
		if (n == 0)
			m->timed_out = 1;
		else if (read(p[0], &r, sizeof r) != (ssize_t)sizeof r)
			r.ok = 0, snprintf(r.err, sizeof r.err, "the tracer died");
		close(p[0]);
	} else {
		/* native: poll the child, leaving it to wait4 */
		siginfo_t si;

		for (;;) {
			si.si_pid = 0;
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) || si.si_pid)
				break;
			if (now() - t0 > limit) {
				m->timed_out = 1;
				break;
			}
			usleep(2000);
		}
	}
	if (m->timed_out) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	if (wait4(pid, &st, 0, &ru) == pid)
		m->cpu = tv(ru.ru_utime) + tv(ru.ru_stime);
	m->wall = now() - t0;
	if (m->timed_out) { /* reap what the tracer left */
		double t1 = now();
		pid_t q;

		while (now() - t1 < 5) {
			q = wait4(-1, &st, WNOHANG | __WALL, &ru);
			if (q > 0)
				m->cpu += tv(ru.ru_utime) + tv(ru.ru_stime);
			else if (q < 0)
				break;
			else
				usleep(2000);
		}
		return;
	}
	if (!traced) {
		m->status = st;
		m->failed = !WIFEXITED(st) || WEXITSTATUS(st) == 127;
		if (m->failed)
			snprintf(m->err, sizeof m->err, "%s",
				 WIFEXITED(st) ? "could not run" : strsignal(WTERMSIG(st)));
		return;
	}
	m->timed_out = r.timed_out;
	m->status = r.status;
	m->flops = r.flops;
	m->tracer_cpu = r.tracer_cpu;
	m->rss_kb = r.rss_kb;
	m->st = r.st;
	m->failed = !r.ok || r.timed_out || !WIFEXITED(r.status);
	if (!r.ok)
		snprintf(m->err, sizeof m->err, "%s", r.err);
	else if (m->failed) {
		char b[128];

		pft_status_str(r.status, b, sizeof b);
		snprintf(m->err, sizeof m->err, "the traced program %s", b);
	}
}

int bench_best(char *const argv[], int engine, int n, double limit, struct bench_run *b)
{
	struct bench_run m;

	for (int i = 0; i < n; i++) {
		run(argv, engine, limit, &m);
		if (m.failed || m.timed_out) {
			*b = m;
			return -1;
		}
		if (i == 0 || m.cpu < b->cpu) {
			double w = i ? (b->wall < m.wall ? b->wall : m.wall) : m.wall;

			*b = m;
			b->wall = w;
		} else if (m.wall < b->wall)
			b->wall = m.wall;
	}
	return 0;
}

static int wanted(const char *name)
{
	const char *f = getenv("BENCH_PROGS");
	char buf[256], *s, *w;

	if (!f || !*f)
		return 1;
	snprintf(buf, sizeof buf, "%s", f);
	for (w = strtok_r(buf, ",", &s); w; w = strtok_r(NULL, ",", &s))
		if (strstr(name, w))
			return 1;
	return 0;
}

/* does `python -c "import MOD"` work? */
static int has_module(const char *python, const char *mod)
{
	char code[128];
	char *a[] = { (char *)python, "-c", code, NULL };
	struct bench_run m;

	snprintf(code, sizeof code, "import %s", mod);
	run(a, BENCH_NATIVE, 30, &m);
	return !m.failed && !m.timed_out;
}

/* The bench's own hint store (PFLOPS_TRACE_HINTS_DIR), emptied for each
 * cold run. */
static char hints_dir[64];

void bench_hints(int on)
{
	if (on && !hints_dir[0]) {
		snprintf(hints_dir, sizeof hints_dir, "/tmp/pflops-hints.XXXXXX");
		if (!mkdtemp(hints_dir))
			hints_dir[0] = 0;
	}
	if (hints_dir[0])
		setenv("PFLOPS_TRACE_HINTS_DIR", hints_dir, 1);
	setenv("PFLOPS_TRACE_HINTS", on && hints_dir[0] ? "1" : "0", 1);
}

static void hints_clear(int and_dir)
{
	DIR *d = hints_dir[0] ? opendir(hints_dir) : NULL;
	struct dirent *e;
	char f[600];

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' || (e->d_name[1] && e->d_name[1] != '.')) {
			snprintf(f, sizeof f, "%s/%s", hints_dir, e->d_name);
			unlink(f);
		}
	if (d)
		closedir(d);
	if (and_dir && hints_dir[0]) {
		rmdir(hints_dir);
		hints_dir[0] = 0;
	}
}

static int reps(void)
{
	const char *e = getenv("BENCH_REPS");
	int n = e && *e ? atoi(e) : REPS;

	return n < 1 ? 1 : n > REPS_MAX ? REPS_MAX : n;
}

/* the least wall time and the least CPU time of n runs (and the stats of
 * the run with the least CPU time) */
static void keep_best(struct bench_run *best, const struct bench_run *m, int first)
{
	if (first || m->cpu < best->cpu) {
		double w = !first && best->wall < m->wall ? best->wall : m->wall;

		*best = *m;
		best->wall = w;
	} else if (m->wall < best->wall)
		best->wall = m->wall;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, by_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* n rounds of a native run, a cold traced one (from an empty store), a
 * warm one (the store that cold run left) and a hot one (the store the
 * warm run left: copies without a count are learnt in the warm run,
 * docs/trace-engine.md): the best of each (keep_best) and the median
 * CPU times in med[0..3].  -1: a run failed or passed its limit
 * (native: *nat says why; traced: the first of *cold, *warm, *hot that
 * did) */
static int bench_rounds(char *const argv[], int n, double limit, struct bench_run *nat, struct bench_run *cold,
			struct bench_run *warm, struct bench_run *hot, double med[4])
{
	double cpu[4][REPS_MAX];
	struct bench_run m;
	int i, rc = 0;

	for (i = 0; i < n; i++) {
		if ((rc = bench_best(argv, BENCH_NATIVE, 1, 5 * limit, &m))) {
			*nat = m;
			break;
		}
		keep_best(nat, &m, i == 0);
		cpu[0][i] = m.cpu;
		hints_clear(0);
		if ((rc = bench_best(argv, PFT_ENGINE_AUTO, 1, limit, &m))) {
			*cold = m;
			break;
		}
		keep_best(cold, &m, i == 0);
		cpu[1][i] = m.cpu;
		if ((rc = bench_best(argv, PFT_ENGINE_AUTO, 1, limit, &m))) {
			*warm = m;
			break;
		}
		keep_best(warm, &m, i == 0);
		cpu[2][i] = m.cpu;
		if ((rc = bench_best(argv, PFT_ENGINE_AUTO, 1, limit, &m))) {
			*hot = m;
			break;
		}
		keep_best(hot, &m, i == 0);
		cpu[3][i] = m.cpu;
	}
	/* i: the rounds done whole; none: 0 (not printed) */
	for (int k = 0; k < 4; k++)
		med[k] = i > 0 ? median(cpu[k], i) : 0;
	return rc;
}

static void ratio(char *buf, size_t n, const struct bench_run *t, double native)
{
	snprintf(buf, n, "%s%.1fx", t->timed_out ? ">" : "", t->cpu / native);
}

struct done {
	char name[64];
	struct bench_run t;
	double native_cpu;
};

static void stats_table(const struct done *d, int n)
{
	printf("\nwhere the tracer's time went (the traced run with the least CPU time):\n");
	printf("%-38s %8s %8s %8s %8s %8s %8s %7s %7s %7s %6s %6s %6s %5s %6s %7s %7s %7s\n",
	       "program (*: stopped at the limit)", "tracer", "program", "stops", "blk-stop", "syscall", "decoded",
	       "ahead", "exits", "ibl-mis", "inval", "nocach", "writbl", "thr", "us/stop", "MFLOP", "hinted", "futex");
	for (int i = 0; i < n; i++) {
		const struct pft_stats *s = &d[i].t.st;
		uint64_t nc = 0;

		for (int k = 1; k < PFT_NC_N; k++)
			nc += s->nocache[k];
		printf("%-37.37s%c %7.3fs %7.3fs %8lu %8lu %8lu %8lu %7lu %7lu %7lu %6lu %6lu %6lu %5lu %6.1f %7.1f %7lu "
		       "%7lu\n",
		       d[i].name, d[i].t.timed_out ? '*' : ' ', d[i].t.tracer_cpu, d[i].t.cpu - d[i].t.tracer_cpu,
		       (unsigned long)s->stops, (unsigned long)s->block_stops, (unsigned long)s->syscalls,
		       (unsigned long)s->blocks_decoded, (unsigned long)s->ahead_blocks, (unsigned long)s->cache_exits,
		       (unsigned long)s->ibl_misses, (unsigned long)s->invalidated, (unsigned long)nc,
		       (unsigned long)s->nocache[PFT_NC_WRITABLE], (unsigned long)s->threads,
		       s->stops ? d[i].t.tracer_cpu * 1e6 / (double)s->stops : 0.0, (double)d[i].t.flops * 1e-6,
		       (unsigned long)s->hint_blocks, (unsigned long)s->freq_served);
	}
	printf("tracer/program: CPU seconds of the tracer process and of the traced\n"
	       "program (all its threads and children); stops: ptrace stops handled\n"
	       "(blk-stop: at block ends, syscall: system-call stops); decoded: blocks\n"
	       "decoded and translated; ahead: of them, translated ahead of their\n"
	       "first run (no stop there); exits: stops at an unlinked cache exit;\n"
	       "ibl-mis: indirect-branch lookups that missed; inval: blocks dropped\n"
	       "(code unmapped or made writable); nocach: blocks kept on the stopping\n"
	       "path, writbl: those on writable pages (JIT code); us/stop: tracer CPU\n"
	       "per stop; MFLOP: counted (until the limit where stopped there);\n"
	       "hinted: blocks translated from the hint store at their file's first\n"
	       "touch (cold: an empty store; warm: the store the cold run left; hot:\n"
	       "the store the warm run left);\n"
	       "futex: exits and lookup misses served by request without a stop\n"
	       "(by default while a process has one thread; PFLOPS_TRACE_FUTEX).\n");
}

/* a fresh directory holding hpccinf.txt, made the current one; the
 * previous one in old.  -1: could not. */
static int enter_input_dir(const char *input, const char *name, char *dir, size_t dn, char *old, size_t on)
{
	char f[1100];
	FILE *fp;

	snprintf(dir, dn, "/tmp/pflops-bench.XXXXXX");
	if (!getcwd(old, on) || !mkdtemp(dir))
		return -1;
	snprintf(f, sizeof f, "%s/%s", dir, name ? name : "hpccinf.txt");
	if (!(fp = fopen(f, "w")) || fputs(input, fp) < 0 || fclose(fp) || chdir(dir)) {
		if (fp)
			fclose(fp);
		return -1;
	}
	return 0;
}

/* back to old; dir and what the program wrote there removed */
static void leave_input_dir(const char *dir, const char *old)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char f[1400];

	if (chdir(old))
		fprintf(stderr, "bench_progs: cannot go back to %s\n", old);
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(f, sizeof f, "%s/%s", dir, e->d_name);
			unlink(f);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* HPL's input format (positional lines): N=1000, NB=80, one process
 * (P=Q=1), the rest as HPCC's example input */
static const char hpccinf[] = "HPLinpack benchmark input file\n"
			      "make bench (papi-flops)\n"
			      "HPL.out      output file name (if any)\n"
			      "8            device out (6=stdout,7=stderr,file)\n"
			      "1            # of problems sizes (N)\n"
			      "1000         Ns\n"
			      "1            # of NBs\n"
			      "80           NBs\n"
			      "0            PMAP process mapping (0=Row-,1=Column-major)\n"
			      "1            # of process grids (P x Q)\n"
			      "1            Ps\n"
			      "1            Qs\n"
			      "16.0         threshold\n"
			      "1            # of panel fact\n"
			      "2            PFACTs (0=left, 1=Crout, 2=Right)\n"
			      "1            # of recursive stopping criterium\n"
			      "4            NBMINs (>= 1)\n"
			      "1            # of panels in recursion\n"
			      "2            NDIVs\n"
			      "1            # of recursive panel fact.\n"
			      "1            RFACTs (0=left, 1=Crout, 2=Right)\n"
			      "1            # of broadcast\n"
			      "1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)\n"
			      "1            # of lookahead depth\n"
			      "1            DEPTHs (>=0)\n"
			      "2            SWAP (0=bin-exch,1=long,2=mix)\n"
			      "64           swapping threshold\n"
			      "0            L1 in (0=transposed,1=no-transposed) form\n"
			      "0            U  in (0=transposed,1=no-transposed) form\n"
			      "1            Equilibration (0=no,1=yes)\n"
			      "8            memory alignment in double (> 0)\n"
			      "##### This line (no. 32) is ignored (it serves as a separator). ######\n"
			      "0            Number of additional problem sizes for PTRANS\n"
			      "1200 10000 30000  values of N\n"
			      "0            number of additional blocking sizes for PTRANS\n"
			      "40 9 8 13 13 20 16 32 64  values of NB\n";

void bench_programs(const char *dgemm, const char *cfile)
{
	const char *limit_s = getenv("BENCH_LIMIT");
	double limit = limit_s && atof(limit_s) > 0 ? atof(limit_s) : 60;
	const char *py = access("/usr/bin/python3", X_OK) ? "python3" : "/usr/bin/python3";
	static char pyloop[] = "s = 0.0\nfor i in range(10**6):\n    s += i * 0.5 + i ** 0.5\nprint(s)";
	static char npsolve[] = "import numpy as np\nr = np.random.default_rng(1)\n"
				"a = r.random((1000, 1000)); b = r.random(1000)\nprint(np.linalg.solve(a, b)[0])";
	static char npmatmul[] = "import numpy as np\nr = np.random.default_rng(1)\n"
				 "a = r.random((1000, 1000))\nprint((a @ a)[0, 0])";
	static char pyimport[] = "import json, email, http.client, asyncio";
	static char jsloop[] = "let s = 0; for (let i = 0; i < 1e8; i++) s += i * 0.5 + Math.sqrt(i); console.log(s)";
	static char lualoop[] = "local s = 0 for i = 1, 1e8 do s = s + i * 0.5 + math.sqrt(i) end print(s)";
	/* javac compiles it with HotSpot's JIT (C1 and C2) running: code
	 * written, patched and dropped all the time (docs/trace-engine.md,
	 * HotSpot) */
	static const char javasrc[] =
		"import java.util.*;\npublic class Loop {\n\tstatic double f(double x) { return x * 0.5 + 1.0; }\n"
		"\tpublic static void main(String[] a) {\n\t\tdouble s = 0;\n"
		"\t\tMap<String, Integer> m = new HashMap<>();\n"
		"\t\tfor (int i = 0; i < 200000; i++) { s += f(i); m.merge(\"k\" + (i % 100), 1, Integer::sum); }\n"
		"\t\tSystem.out.println(\"sum \" + s + \" keys \" + m.size());\n\t}\n}\n";
	static char pypyloop[] = "s = 0.0\nfor i in range(10**7):\n    s += i * 0.5 + i ** 0.5\nprint(s)";
	/* numba compiles it with LLVM at the call: about 430,000 blocks of
	 * LLVM's and CPython's code, once (docs/trace-engine.md, Big
	 * programs); OpenBLAS (numpy's) on one thread: its worker spins */
	static char nbloop[] = "import numba\n@numba.njit\ndef f(n):\n    s = 0.0\n    for i in range(n):\n"
			       "        s += i * 0.5 + i ** 0.5\n    return s\nprint(f(10**7))";
	const char *nodgemm = dgemm ? NULL
				    : "bench_dgemm not built "
				      "(libopenblas-dev: scripts/install-deps.sh --bench, then ./configure)";
	struct prog progs[] = {
		{ .name = "OpenBLAS dgemm 600^3, 1 thread",
		  .target = 3,
		  .threads = "1",
		  .argv = { (char *)dgemm, "600" },
		  .absent = nodgemm },
		{ .name = "OpenBLAS dgemm 1000^3, 2 threads",
		  .target = 20,
		  .threads = "2",
		  .argv = { (char *)dgemm, "1000" },
		  .absent = nodgemm },
		{ .name = "numpy solve n=1000",
		  .target = 3,
		  .threads = "1",
		  .argv = { (char *)py, "-c", npsolve },
		  .need = "numpy",
		  .pkg = "python3-numpy" },
		{ .name = "numpy matmul n=1000",
		  .target = 20,
		  .threads = "1",
		  .argv = { (char *)py, "-c", npmatmul },
		  .need = "numpy",
		  .pkg = "python3-numpy" },
		{ .name = "hpcc N=1000, 1 process",
		  .target = 20,
		  .threads = "1",
		  .argv = { "hpcc" },
		  .pkg = "hpcc",
		  .input = hpccinf },
		{ .name = "python3 import json,email,http,asyncio",
		  .target = 5,
		  .argv = { (char *)py, "-c", pyimport },
		  .pkg = "python3" },
		{ .name = "python3 float loop 1e6",
		  .target = 20,
		  .argv = { (char *)py, "-c", pyloop },
		  .pkg = "python3" },
		{ .name = "gcc -O2 -c, 2050-line file",
		  .target = 5,
		  .argv = { "gcc", "-O2", "-c", (char *)cfile, "-o", "/dev/null" },
		  .pkg = "gcc",
		  .absent = cfile ? NULL : "no input file (bench/gen_big_c.sh makes it)" },
		{ .name = "node float loop 1e8 (V8 JIT)",
		  .target = 10,
		  .argv = { "node", "-e", jsloop },
		  .pkg = "nodejs" },
		{ .name = "luajit float loop 1e8 (JIT)",
		  .target = 20,
		  .argv = { "luajit", "-e", lualoop },
		  .pkg = "luajit" },
		{ .name = "pypy3 float loop 1e7 (JIT)",
		  .target = 20,
		  .argv = { "pypy3", "-c", pypyloop },
		  .pkg = "pypy3" },
		{ .name = "numba float loop 1e7 (LLVM JIT)",
		  .target = 20,
		  .threads = "1",
		  .argv = { (char *)py, "-c", nbloop },
		  .need = "numba",
		  .pkg = "python3-numba" },
		{ .name = "javac, one class (HotSpot JIT)",
		  .target = 20,
		  .argv = { "javac", "-d", ".", "Loop.java" },
		  .pkg = "openjdk-17-jdk-headless",
		  .input = javasrc,
		  .input_name = "Loop.java" },
	};
	int np = (int)(sizeof progs / sizeof progs[0]), nd = 0;
	struct done d[3 * sizeof progs / sizeof progs[0]];
	char skipped[2048] = "";

	printf("\nreal programs, native and traced (code cache): time and CPU-time ratio\n"
	       "(tracer + program), best of %d rounds (a native, a cold, a warm and a hot\n"
	       "run each, BENCH_REPS), limit %.0f s\n",
	       reps(), limit);
	printf("%-38s %8s %8s %9s %8s %8s %6s %7s %5s %8s %8s %8s %6s %5s %6s %6s\n", "program", "nat wall", "nat CPU",
	       "trc wall", "trc CPU", "CPU x", "med x", "target", "", "trc RSS", "warm CPU", "warm x", "med x", "",
	       "hot x", "med x");
	bench_hints(1);
	for (int i = 0; i < np; i++) {
		struct prog *p = &progs[i];
		char path[1024], r[32], why[1400] = "", dir[64], old[1024];
		int in_dir = 0;
		const char *exe = p->argv[0] ? which(p->argv[0], path, sizeof path) : NULL;
		struct bench_run n, t, w, h;
		double med[4] = { 0, 0, 0, 0 };

		if (!wanted(p->name))
			continue;
		if (p->absent)
			snprintf(why, sizeof why, "%s", p->absent);
		else if (!exe)
			snprintf(why, sizeof why, "%s not installed (%s: scripts/install-deps.sh --bench)",
				 p->argv[0] ? p->argv[0] : "the program", p->pkg);
		else if (p->need && !has_module(exe, p->need))
			snprintf(why, sizeof why, "%s cannot import %s (%s: scripts/install-deps.sh --bench)", exe,
				 p->need, p->pkg);
		if (!why[0] && p->input) {
			if (enter_input_dir(p->input, p->input_name, dir, sizeof dir, old, sizeof old))
				snprintf(why, sizeof why, "cannot make its input directory: %s", strerror(errno));
			else
				in_dir = 1;
		}
		if (!why[0]) {
			p->argv[0] = (char *)exe;
			if (p->threads)
				setenv("OPENBLAS_NUM_THREADS", p->threads, 1);
			else
				unsetenv("OPENBLAS_NUM_THREADS");
			fflush(stdout);
			memset(&n, 0, sizeof n);
			memset(&t, 0, sizeof t);
			memset(&w, 0, sizeof w);
			memset(&h, 0, sizeof h);
			/* what failed, if one did, is in its bench_run */
			(void)bench_rounds(p->argv, reps(), limit, &n, &t, &w, &h, med);
			if (n.failed || n.timed_out)
				snprintf(why, sizeof why, "native run: %s", n.timed_out ? "over 5 x the limit" : n.err);
			else if (WEXITSTATUS(n.status))
				snprintf(why, sizeof why, "native run: exit status %d", WEXITSTATUS(n.status));
			else if (t.failed || t.timed_out)
				h = w = t; /* no warm run */
			else if (w.failed || w.timed_out)
				h = w; /* no hot run */
		}
		if (in_dir)
			leave_input_dir(dir, old);
		if (why[0]) {
			printf("%-38s skipped: %s\n", p->name, why);
			snprintf(skipped + strlen(skipped), sizeof skipped - strlen(skipped), "%s%s",
				 skipped[0] ? ", " : "", p->name);
			continue;
		}
		if (!t.failed && t.status != n.status)
			snprintf(t.err, sizeof t.err, "exit status %d, native 0", WEXITSTATUS(t.status)), t.failed = 1;
		if (t.failed && !t.timed_out) {
			printf("%-38s %7.3fs %7.3fs  traced run failed: %s\n", p->name, n.wall, n.cpu, t.err);
			continue;
		}
		ratio(r, sizeof r, &t, n.cpu);
		if (t.timed_out) {
			char w[32];

			snprintf(w, sizeof w, ">%.0fs", limit);
			printf("%-38s %7.3fs %7.3fs %8s %7.1fs %8s %6s %6s%.0fx %5s", p->name, n.wall, n.cpu, w, t.cpu,
			       r, "-", "<=", p->target, "unfin");
		} else
			printf("%-38s %7.3fs %7.3fs %8.3fs %7.3fs %8s %5.1fx %6s%.0fx %5s", p->name, n.wall, n.cpu,
			       t.wall, t.cpu, r, med[0] > 0 ? med[1] / med[0] : 0.0, "<=", p->target,
			       t.cpu / n.cpu <= p->target ? "ok" : "OVER");
		if (t.rss_kb)
			printf(" %5.0f MiB", (double)t.rss_kb / 1024);
		else
			printf(" %8s", "-");
		ratio(r, sizeof r, &w, n.cpu);
		if (w.failed && !w.timed_out)
			printf("  warm run failed: %s\n", w.err);
		else {
			printf(" %7.3fs %8s %5.1fx %5s", w.cpu, r, med[0] > 0 ? med[2] / med[0] : 0.0,
			       w.timed_out		    ? "unfin"
			       : w.cpu / n.cpu <= p->target ? "ok"
							    : "OVER");
			ratio(r, sizeof r, &h, n.cpu);
			if (h.failed && !h.timed_out)
				printf("  hot run failed: %s\n", h.err);
			else
				printf(" %6s %5.1fx\n", r, med[0] > 0 ? med[3] / med[0] : 0.0);
		}
		fflush(stdout);
		if (t.st.threads) { /* stats came back */
			snprintf(d[nd].name, sizeof d[nd].name, "%s", p->name);
			d[nd].t = t;
			d[nd++].native_cpu = n.cpu;
		}
		if (w.st.threads && !t.timed_out) {
			snprintf(d[nd].name, sizeof d[nd].name, "%.30s, warm", p->name);
			d[nd].t = w;
			d[nd++].native_cpu = n.cpu;
		}
		if (h.st.threads && !w.timed_out && !t.timed_out) {
			snprintf(d[nd].name, sizeof d[nd].name, "%.31s, hot", p->name);
			d[nd].t = h;
			d[nd++].native_cpu = n.cpu;
		}
	}
	unsetenv("OPENBLAS_NUM_THREADS");
	hints_clear(1);
	bench_hints(0);
	printf("CPU x: traced CPU time / native CPU time, the least of each, cold (an empty hint\n"
	       "store); warm: the same with the hints the cold run left (it counts the copies the\n"
	       "cold run left uncounted, to learn which ran); hot: with the hints the warm run left;\n"
	       "med x: the medians' ratio\n"
	       "(a timed-out or failed round: the rounds before it); target: issue 19's;\n"
	       "ok/OVER: CPU x within/over it;\n"
	       ">Ns, unfin: stopped after BENCH_LIMIT=%.0f s of wall time, CPU time counted until then\n",
	       limit);
	if (skipped[0])
		printf("skipped: %s\n", skipped);
	if (nd)
		stats_table(d, nd);
}
