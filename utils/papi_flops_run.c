/*
 * papi_flops_run: run a program and report its FLOPs from one source:
 *   hw           hardware counters (perf_event), the formula of each core kind
 *   trace        exact count of every executed instruction (the SDE method)
 *   model:PMU    trace, read through PMU's events and formulas
 *   perf-stat:F  `perf stat -x,` output recorded elsewhere (no program run)
 * The program's exit status is passed through (128+N when killed by N),
 * and its stdout is its own: the report goes to stderr or to -o FILE.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "papi_flops.h"
#include "pflops_trace.h"
#include "pf_output.h"
#include "pf_report.h"
#include "pf_signal.h"
#include "pf_run_hw.h"
#include "pf_run_mask.h"
#include "pf_run_funcs.h"
#include "pf_sample.h"
#include "pf_sample_hw.h"
#if defined(__x86_64__)
#include "pf_sample_trace.h"
#endif
#include "pf_mpi.h"
#include "pf_papi_helper.h"
#include "pf_version.h"

#define PF_MAX_SECONDS (10 * 365.25 * 86400) /* --seconds, as the perf-stat reader bounds duration_time */
#define EXIT_TOOL 125			     /* the tool failed, not the program (as env(1), timeout(1)) */

static void usage(FILE *o)
{
	fprintf(o,
		"usage: papi_flops_run [OPTIONS] -- PROGRAM [ARGS...]\n"
		"       papi_flops_run --source trace|model:PMU --pid PID [OPTIONS]\n"
		"       papi_flops_run --source perf-stat:FILE [--arch PMU] [--seconds S] [OPTIONS]\n"
		"Run PROGRAM and report its floating-point operations.  The program keeps\n"
		"stdout; the report goes to stderr, or to FILE with -o.\n"
		"\n"
		"Where the counts come from:\n"
		"  -s, --source hw           hardware counters, this CPU's formula (default)\n"
		"  -s, --source trace        exact count of every executed instruction, no counters needed\n"
		"  -s, --source model:PMU    the trace, read as PMU's counters would read it (skx, zen4 ...)\n"
		"  -s, --source perf-stat:F  counts recorded with 'perf stat -x, -o F' elsewhere; no program run\n"
		"  -m, --metrics LIST        comma list of %s\n"
		"                            (default: every metric the source can give)\n"
		"  -p, --pid PID             trace and model: count the running process PID (its threads and\n"
		"                            what it starts) until it ends or until Ctrl-C, then leave it\n"
		"                            running untraced\n"
		"  -r, --region SYMBOL       trace and model: count only inside calls to function SYMBOL\n"
		"      --by-function[=N]     trace and model: FLOPs per function too (ELF symbols of the program\n"
		"                            and its libraries; code without one grouped by mapping), the N\n"
		"                            with most listed (default 20; 0: all), the others summed\n"
		"      --sample P            hw and trace: a FLOP profile too: an overflow every P FLOPs (of\n"
		"                            FP_OPS, or the first FLOP metric of --metrics) with its call\n"
		"                            stack; FLOPs per function and per call path, each sample standing\n"
		"                            for P FLOPs, with the error it carries (trace: exact crossings,\n"
		"                            hw: sampled, stacks from frame pointers)\n"
		"      --top N               --sample: rows listed per table (default 20; 0: all)\n"
		"      --folded FILE         --sample: every call path into FILE as flame-graph input\n"
		"                            (frame;frame;frame FLOPs, outermost first)\n"
		"      --mask-sampling N     hw, model: correct masked AVX-512 lanes (masked-full metrics) from\n"
		"                            the opmask registers sampled every N counts of each FP_ARITH event\n"
		"                            (hw needs a kernel with perf SIMD-register sampling; model takes\n"
		"                            the samples from the trace)\n"
		"  -a, --arch PMU            perf-stat: the CPU FILE was recorded on (default: this one)\n"
		"      --seconds S           perf-stat: the run's wall time, for GFLOP/s, when FILE has no\n"
		"                            duration_time line (record with -e duration_time to have one)\n"
		"\n"
		"The report:\n"
		"  -o, --output FILE         write it to FILE instead of stderr; FILE.json is --json and\n"
		"                            FILE.csv --csv unless a format is given; in FILE, %%r is the MPI\n"
		"                            rank, %%s the job size, %%h the host, %%p the pid, %%%% a %%\n"
		"  -j, --json                as one JSON object\n"
		"      --csv                 as CSV: metric,value,unit,source,accuracy,caveat\n"
		"  -x, --field-separator C   as CSV with separator C (as perf stat -x)\n"
		"  -q, --quiet               no report on stderr and no progress line (-o still writes)\n"
		"  -h, --help                this text\n"
		"  -V, --version             the version\n"
		"\n"
		"Exit status: the program's; 128+N if it was killed by signal N; 125 if\n"
		"papi_flops_run could not count (it says why); 2 on bad usage.  papi_flops_run(1).\n",
		PFLOPS_METRIC_NAMES_COMMA);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* this process's CPU seconds, its threads' included (the tracer's:
 * the traced program is another process); -1: unknown */
static double self_cpu(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* wall-clock time (seconds since 1970): comparable between the ranks of
 * a job, for its start and end */
static double epoch_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress(void *arg, const struct pflops_mix *m, const struct pft_stats *st)
{
	if (st && st->cache_nocount) /* the instruction total is partial */
		fprintf(stderr, "\rpapi_flops_run: traced %llu FLOPs so far ",
			(unsigned long long)pflops_mix_flops(m, -1));
	else
		fprintf(stderr, "\rpapi_flops_run: traced %llu instructions, %llu FLOPs so far ",
			(unsigned long long)m->total_insts, (unsigned long long)pflops_mix_flops(m, -1));
}

static unsigned parse_metrics(const char *list)
{
	unsigned set = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int m = pflops_metric_from_name(t);
		if (m < 0) {
			fprintf(stderr, "papi_flops_run: unknown metric '%s'; use %s\n", t, PFLOPS_METRIC_NAMES);
			exit(2);
		}
		set |= 1u << m;
	}
	if (!set) {
		fprintf(stderr, "papi_flops_run: --metrics '%s' names no metric; use %s, or leave it out for all\n",
			list, PFLOPS_METRIC_NAMES);
		exit(2);
	}
	return set;
}

/* --by-function: the traced blocks go here (NULL: not asked) */
static struct pft_funcs *byfunc;
#if defined(__x86_64__)
/* --sample with the trace source: its sampler (NULL: not asked) */
static struct pf_sample_trace *strace;
#endif
/* --pid: the running process to count instead of a program (0: none) */
static pid_t attach_pid;

/* A note on n things when there are any: fmt takes n (%llu), then "s"
 * or "" (%s) */
static void count_note(struct pf_report *r, uint64_t n, const char *fmt)
{
	if (n)
		pf_report_note(r, fmt, (unsigned long long)n, n == 1 ? "" : "s");
}

/* What the tracer changed so the program behaves as untraced, what it
 * could not hide (inherent to ptrace), and its fallbacks to the stopping
 * path (same counts, slower): docs/trace-engine.md#transparency. */
static void trace_notes(struct pf_report *r, const struct pft_stats *st)
{
	char full[128];
	const char *const why[PFT_NC_N] = {
		[PFT_NC_MASK] = "masked AVX-512 ending at a system call",
		[PFT_NC_MODE] = "stepped or undecodable",
		[PFT_NC_GS] = "using %gs",
		[PFT_NC_REACH] = "no cache memory within 2 GiB",
		[PFT_NC_FULL] = full,
		[PFT_NC_NOINJ] = "needing a new code cache chunk after a seccomp call (no system call injected since)",
	};
	char buf[PF_REPORT_NOTE_LEN];
	size_t n = 0;

	/* what filled: the process's block ids (PFLOPS_TRACE_IDS, fewer
	 * under a ulimit -v) or its chunks of copies */
	if (st->full_ids && st->full_copy_mib)
		snprintf(full, sizeof full, "code cache full (its %llu block ids used, or its %llu MiB of copies)",
			 (unsigned long long)st->full_ids, (unsigned long long)st->full_copy_mib);
	else if (st->full_copy_mib)
		snprintf(full, sizeof full, "code cache full (its %llu MiB of copies used)",
			 (unsigned long long)st->full_copy_mib);
	else if (st->full_ids)
		snprintf(full, sizeof full, "code cache full (its %llu block ids used)",
			 (unsigned long long)st->full_ids);
	else /* no chunk could be mapped within reach, or grown */
		snprintf(full, sizeof full,
			 "code cache full (no more copies could be placed within reach of the code)");
	for (int i = 0; i < PFT_NC_N; i++)
		if (why[i] && st->nocache[i] && n < sizeof buf)
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%llu %s", n ? ", " : "",
					      (unsigned long long)st->nocache[i], why[i]);
	if (n)
		pf_report_note(r, "blocks on the stopping path (same counts, a stop per run): %s", buf);
	count_note(r, st->slotless_threads,
		   "%llu thread%s ran on the stopping path (same counts, slower): more "
		   "threads at once than the code cache's 256 counter slots (fewer under a ulimit -v)");
	if (st->cache_setup_failed > st->as_too_small)
		pf_report_note(r,
			       "%llu process%s traced by the stopping engine (same counts, slower): the code cache "
			       "could not be set up (no SSE4.2, or a seccomp filter refusing memfd_create or mmap)",
			       (unsigned long long)(st->cache_setup_failed - st->as_too_small),
			       st->cache_setup_failed - st->as_too_small == 1 ? " was" : "es were");
	count_note(r, st->rseq_refused,
		   "rseq registration refused %llu time%s (ENOSYS, as under valgrind): the "
		   "program and glibc ran without restartable sequences");
	count_note(r, st->rseq_kept,
		   "%llu thread%s had rseq registered before the tracer could refuse it (--pid, "
		   "or outside --region): rseq critical sections run in the code cache do not restart when preempted");
	if (st->untraced_cleared)
		pf_report_note(r, "%llu clone(CLONE_UNTRACED) traced anyway (the child starts in the code cache)",
			       (unsigned long long)st->untraced_cleared);
	count_note(
		r, st->prog_ptrace,
		"the program called ptrace %llu time%s: under papi_flops_run it is traced "
		"already, so attaching to itself or its threads fails (inherent to ptrace: debuggers, LeakSanitizer)");
	count_note(r, st->status_reads,
		   "the program read /proc/.../status %llu time%s, whose TracerPid shows the "
		   "tracer (inherent to ptrace)");
	count_note(r, st->mem_writes,
		   "the program rewrote code %llu time%s through /proc/PID/mem or process_vm_writev: the tracer saw "
		   "the call and dropped the code written, decoded again when run");
	if (st->maps_reads)
		pf_report_note(r,
			       "the program read /proc/.../maps or smaps %llu time%s while the tracer write-protected "
			       "its code pages: %llu page%s got the program's protection back first, so it saw its own "
			       "permissions (their code decoded and guarded again when run)",
			       (unsigned long long)st->maps_reads, st->maps_reads == 1 ? "" : "s",
			       (unsigned long long)st->maps_lifted, st->maps_lifted == 1 ? "" : "s");
	count_note(r, st->self_traps,
		   "the program's SIGTRAP handler ran %llu time%s (it single-steps itself, "
		   "EFLAGS.TF): each run is counted from its first system call or branch on, not before (a few "
		   "instructions)");
	if (st->seccomp)
		pf_report_note(r,
			       "%llu process%s turned seccomp on: no system call was injected into %s since; code "
			       "beyond the code cache %s had ran on the stopping path (same counts, slower)",
			       (unsigned long long)st->seccomp, st->seccomp == 1 ? "" : "es",
			       st->seccomp == 1 ? "it" : "them", st->seccomp == 1 ? "it" : "they");
	count_note(r, st->seccomp_failed,
		   "%llu seccomp call%s failed (seccomp was not turned on): the tracer stopped injecting system "
		   "calls at the call all the same, so code beyond that process's code cache ran on the stopping "
		   "path (same counts, slower)");
	if (st->hint_note[0]) /* the hint store (docs/trace-engine.md#the-hint-store) */
		pf_report_note(r, "%s", st->hint_note);
}

static int run_trace(char **argv, const char *region, int quiet, struct pflops_mix *mix, struct pf_report *r,
		     struct pf_mask_model *mm)
{
	struct pft_stats st;
	/* this process is the tracer's: its waits may take a timer signal */
	struct pflops_trace_opts o = {
		.region = region, .stats = &st, .interrupt = &pf_interrupt, .wait_signal = SIGRTMIN
	};
	if (byfunc) {
		o.block = pft_funcs_add;
		o.block_arg = byfunc;
	}
	if (mm)
		pf_mask_model_opts(mm, &o);
#if defined(__x86_64__)
	if (strace)
		pf_sample_trace_opts(strace, &o);
#endif
	if (!quiet && isatty(2))
		o.progress = progress;
	struct pflops_error err = { 0 };
	double t0 = now(), c0 = self_cpu();
	int rc, detached = 0;
	memset(&st, 0, sizeof st);
	if (attach_pid)
		rc = pft_attach(attach_pid, &o, NULL, mix, &r->status, &detached, &err);
	else
		rc = pft_run(argv, &o, mix, &r->status, &err);
	r->wall = now() - t0;
	r->engine.tracer_cpu = c0 < 0 ? -1 : self_cpu() - c0;
	if (o.progress)
		fprintf(stderr, "\r%60s\r", "");
	if (rc) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	if (region && st.region_refused[0]) {
		/* an int3 there would change the program: it ran untouched */
		fprintf(stderr,
			"papi_flops_run: --region %s: %s; no breakpoint was planted and nothing was counted "
			"(the program ran unchanged): fix or rebuild the file, or name another function\n",
			region, st.region_refused);
		return EXIT_TOOL;
	}
	if (region && !st.region_found && !st.interrupted) {
		fprintf(stderr,
			"papi_flops_run: --region %s: no function of that name in %s or the libraries it loaded "
			"(.symtab, .dynsym); nothing was counted: check the name (nm -D, nm) or build with symbols\n",
			region, attach_pid ? "the process" : argv[0]);
		return EXIT_TOOL;
	}
	if (region && !st.region_calls)
		pf_report_note(r, "the region function '%s' was never called: every count is 0", region);
	else if (region)
		pf_report_note(r, "counted only inside calls to %s: every thread's work from an entry to its return%s",
			       region,
			       st.region_nthreads > 1 || st.region_more_threads ? " (FLOPs per thread: --json)" : "");
	if (region && st.region_busy_threads)
		pf_report_note(
			r,
			"%llu time%s a thread that was running (not waiting) when a call to %s began did FP work during it: "
			"%llu FLOPs counted that may be unrelated concurrent work, not %s's (docs/trace-engine.md)",
			(unsigned long long)st.region_busy_threads, st.region_busy_threads == 1 ? "" : "s", region,
			(unsigned long long)st.region_busy_flops, region);
	if (region) {
		r->region.n = st.region_nthreads;
		memcpy(r->region.t, st.region_thread, sizeof r->region.t);
		r->region.more_threads = st.region_more_threads;
		r->region.more_flops = st.region_more_flops;
	}
	if (attach_pid && detached) {
		r->status = -1; /* still running: no exit status */
		pf_report_note(
			r, "process %d was counted from the attach for %.3f s, then detached%s: it runs on untraced",
			(int)attach_pid, r->wall, st.interrupted ? " at the interrupt" : "");
	} else if (attach_pid) {
		pf_report_note(r, "process %d was counted from the attach until it ended", (int)attach_pid);
	}
	if (st.interrupted && !attach_pid)
		pf_report_note(r, "interrupted by %s: the program was %s; the counts cover the run up to then",
			       strsignal(st.interrupted),
			       st.killed ? "stopped (SIGKILL) after the 2 s it was given to end"
					 : "given the signal and ended");
	if (st.mask_unknown) {
		pf_report_note(
			r,
			"%llu runs of masked AVX-512 blocks could not read the opmask registers: their lanes count in full (an upper bound)",
			(unsigned long long)st.mask_unknown);
		r->full_lanes = (1u << PFLOPS_NMETRIC) - 1;
	}
	if (st.wprot_pages)
		pf_report_note(
			r,
			"code on writable pages (JIT, self-modifying code): %llu page%s write-protected by the tracer while it held their code, %llu write%s to them caught (their code decoded again when run)",
			(unsigned long long)st.wprot_pages, st.wprot_pages == 1 ? "" : "s",
			(unsigned long long)st.wprot_faults, st.wprot_faults == 1 ? "" : "s");
	count_note(r, st.wprot_views,
		   "code in shared memory (memfd, shm) also mapped writable: %llu writable view%s write-protected by "
		   "the tracer, a write there drops the code of every view");
	if (st.nocache[PFT_NC_WRITABLE])
		pf_report_note(
			r,
			"%llu blocks ran from %llu writable page%s left writable (code and data on one page, written too often, a stack): counted stop by stop, exactly but slower (docs/trace-engine.md)%s",
			(unsigned long long)st.nocache[PFT_NC_WRITABLE], (unsigned long long)st.wprot_hot,
			st.wprot_hot == 1 ? "" : "s",
			st.wprot_cooled ? "; pages guarded again after many such runs" : "");
	if (st.invalidated)
		pf_report_note(
			r,
			"%llu decoded blocks were dropped when their code was unmapped or made writable (JIT, dlclose) and decoded again if run (%llu block ids reused%s%s)",
			(unsigned long long)st.invalidated, (unsigned long long)st.ids_reused,
			st.table_renewed ? ", the lookup table built anew" : "",
			st.ids_interrupts ? ", threads running code interrupted for that" : "");
	if (st.table_full)
		pf_report_note(
			r,
			"%llu indirect-branch targets found no room in the code cache's lookup table: each of their runs stopped (same counts, slower)",
			(unsigned long long)st.table_full);
	if (st.detached && !attach_pid)
		pf_report_note(
			r,
			"%llu process%s (pid %d ...) still ran when the program ended: counted until then, then detached and not waited for",
			(unsigned long long)st.detached, st.detached == 1 ? "" : "es", (int)st.detached_pid);
	if (st.cache_as_limited)
		pf_report_note(
			r,
			"the code cache took %.0f MiB of the program's address space (virtual memory; its ulimit -v is %.0f MiB, "
			"of which the cache takes at most 1/8)",
			st.cache_as_limited / 1048576.0, st.as_limit / 1048576.0);
	else if (st.cache_as_bytes)
		pf_report_note(r,
			       "the code cache took %.0f MiB of the program's address space (virtual memory, not RAM; "
			       "under a ulimit -v it takes at most 1/8 of the limit)",
			       st.cache_as_bytes / 1048576.0);
	if (st.cache_as_fit)
		pf_report_note(r,
			       "the program lowered its own ulimit -v while traced (%llu time%s): the code cache "
			       "then gave back the address space of the thread slots no thread held",
			       (unsigned long long)st.cache_as_fit, st.cache_as_fit == 1 ? "" : "s");
	if (st.as_too_small)
		pf_report_note(r,
			       "%llu process%s traced by the stopping engine (same counts, a stop per block: slower): "
			       "1/8 of a ulimit -v of %.0f MiB is too small for the code cache",
			       (unsigned long long)st.as_too_small, st.as_too_small == 1 ? " was" : "es were",
			       st.as_limit / 1048576.0);
	trace_notes(r, &st);
	r->engine.st = st;
	r->engine.have = 1;
	pf_report_note(r,
		       "wall time is that of the traced run (the tracer's own work included); GFLOP/s are not given");
	pflops_mix_widths(mix, r->widths);
	r->have_widths = 1;
	return 0;
}

static int source_trace(char **prog, const char *region, int quiet, struct pf_report *r)
{
	struct pflops_mix mix;
	memset(&mix, 0, sizeof(mix));
	int rc = run_trace(prog, region, quiet, &mix, r, NULL);
	if (!rc) {
		pflops_mix_metrics(&mix, r->v);
		r->got = (1u << PFLOPS_NMETRIC) - 1;
		if (r->engine.st.cache_nocount) /* PFLOPS_TRACE_COUNT=all counts them all */
			snprintf(r->source_detail, sizeof(r->source_detail),
				 "exact: every executed instruction decoded, FP instructions counted");
		else
			snprintf(r->source_detail, sizeof(r->source_detail),
				 "exact: every executed instruction decoded (%llu instructions)",
				 (unsigned long long)mix.total_insts);
	}
	if (!r->asked)
		r->asked = r->got;
	return rc;
}

static int source_model(const struct pflops_table *t, const char *pmu, char **prog, const char *region, int quiet,
			unsigned mask_period, struct pf_report *r)
{
	const struct pflops_pmu *p = pflops_table_find(t, pmu);
	if (!p) {
		fprintf(stderr, "papi_flops_run: no PMU '%s' in the table; 'papi_flops_avail --arch all' lists them\n",
			pmu);
		return 2;
	}
	struct pflops_mix mix;
	struct pflops_error err = { 0 };
	memset(&mix, 0, sizeof(mix));
	r->pmu = p;
	r->source = "model";
	snprintf(r->source_detail, sizeof(r->source_detail), "trace read through the events of %s (%s)", p->name,
		 p->title);
	if (!r->asked)
		r->asked = (1u << PFLOPS_NMETRIC) - 1;
	struct pf_mask_model *mm = NULL;
	if (mask_period && !(mm = pf_mask_model_new(p, r->asked, mask_period)))
		return EXIT_TOOL;
	int rc = run_trace(prog, region, quiet, &mix, r, mm);
	if (!rc && pflops_model_metrics(p, &mix, r->asked, 0, r->v, &r->got, &err)) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		rc = EXIT_TOOL;
	}
	if (mm && rc)
		pf_mask_model_free(mm);
	else if (mm)
		rc = pf_mask_model_report(mm, &mix, r);
	return rc;
}

static int source_perfstat(const struct pflops_table *t, const char *file, const char *arch, double seconds,
			   struct pf_report *r)
{
	const struct pflops_pmu *p = NULL;
	struct pflops_error err = { 0 };
	if (arch) {
		if (!(p = pflops_table_find(t, arch))) {
			fprintf(stderr,
				"papi_flops_run: no PMU '%s' in the table; 'papi_flops_avail --arch all' lists them\n",
				arch);
			return 2;
		}
	} else {
		struct pflops_probe pr;
		if (pflops_probe_run(&pr, t, NULL, &err) || !pr.nkinds || !pr.kinds[0].pmu) {
			fprintf(stderr, "papi_flops_run: cannot tell which CPU recorded %s: give --arch PMU\n", file);
			return 2;
		}
		p = pr.kinds[0].pmu;
	}
	r->pmu = p;
	r->source = "perf-stat";
	snprintf(r->source_detail, sizeof(r->source_detail), "%s read as %s (%s)", file, p->name, p->title);
	unsigned want = r->asked;
	double rec = 0;
	if (!want)
		want = pflops_pmu_available(p);
	/* default set: take what the file has; an explicit list must be complete */
	for (int m = 0; m < PFLOPS_NMETRIC; m++) {
		if (!(want & (1u << m)) || p->metrics[m].klass == PFLOPS_UNAVAILABLE)
			continue;
		struct pflops_perfstat ps;
		if (pflops_perfstat_read(file, p, 1u << m, 0, &ps, &err)) {
			/* a metric the file lacks is skipped; a bad or unreadable file is not */
			if (r->asked || err.code != PFLOPS_ENOENT) {
				fprintf(stderr, "papi_flops_run: %s\n", err.msg);
				return EXIT_TOOL;
			}
			continue;
		}
		r->v[m] = ps.value[m];
		r->got |= 1u << m;
		if (ps.metrics_whole >> m & 1) { /* printed as read, not through a double */
			r->whole[m] = ps.whole[m];
			r->wholes |= 1u << m;
		}
		rec = ps.seconds; /* perf's duration_time (checked: ns, at most 10 years) */
		if (ps.min_pct < 100 && !r->nnotes)
			pf_report_note(r,
				       "perf multiplexed the counters (lowest running share %.2f%%): scaled estimates",
				       ps.min_pct);
	}
	if (!r->got) {
		fprintf(stderr,
			"papi_flops_run: %s has none of the events %s's metrics need; record with: perf stat -x, -o FILE $(papi_flops_avail --arch %s --perf) PROGRAM\n",
			file, p->name, p->name);
		return EXIT_TOOL;
	}
	r->asked = want;
	r->wall = seconds > 0 ? seconds : rec;
	r->wall_real = r->wall > 0;
	if (seconds > 0 && rec > 0)
		pf_report_note(r, "wall time from --seconds (%s also records %.6f s)", file, rec);
	else if (!r->wall_real)
		pf_report_note(r,
			       "no wall time in %s, so no GFLOP/s: record with -e duration_time too, or give --seconds",
			       file);
	return 0;
}

static int open_output(const char *path, FILE **o)
{
	if (!path)
		return 0;
	/* close-on-exec: the program must not inherit the report file */
	if (!(*o = fopen(path, "we"))) {
		fprintf(stderr, "papi_flops_run: cannot write the report to %s: %s\n", path, strerror(errno));
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_CSV = 256, OPT_SECONDS, OPT_MASK, OPT_BYFUNC, OPT_PAPI_FD, OPT_SAMPLE, OPT_TOP, OPT_FOLDED };
	static const struct option opts[] = {
		{ "source", required_argument, 0, 's' },
		{ "metrics", required_argument, 0, 'm' },
		{ "region", required_argument, 0, 'r' },
		{ "arch", required_argument, 0, 'a' },
		{ "seconds", required_argument, 0, OPT_SECONDS },
		{ "mask-sampling", required_argument, 0, OPT_MASK },
		{ "output", required_argument, 0, 'o' },
		{ "json", no_argument, 0, 'j' },
		{ "csv", no_argument, 0, OPT_CSV },
		{ "field-separator", required_argument, 0, 'x' },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ "by-function", optional_argument, 0, OPT_BYFUNC },
		{ "pid", required_argument, 0, 'p' },
		{ "papi-fd", required_argument, 0, OPT_PAPI_FD },
		{ "sample", required_argument, 0, OPT_SAMPLE },
		{ "top", required_argument, 0, OPT_TOP },
		{ "folded", required_argument, 0, OPT_FOLDED },
		{ 0, 0, 0, 0 },
	};
	const char *source = "hw", *region = NULL, *arch = NULL, *output = NULL;
	unsigned metrics = 0;
	enum pf_format format = PF_FORMAT_TEXT;
	char sep = ',';
	double seconds = 0;
	unsigned mask_period = 0, top = 20;
	int quiet = 0, by_function = 0, format_given = 0, c;
	pf_output_init("papi_flops_run", EXIT_TOOL); /* --help, --version: the program's stdout is its own */
	const char *papi_fd = NULL, *folded = NULL;
	uint64_t sample = 0;
	unsigned sample_top = 20;
	int top_given = 0;
	while ((c = getopt_long(argc, argv, "+s:m:r:a:o:jx:qhVp:", opts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || v <= 0 || v > INT32_MAX) {
				fprintf(stderr,
					"papi_flops_run: --pid takes the id of a running process, a number above 0 (got '%s')\n",
					optarg);
				return 2;
			}
			attach_pid = (pid_t)v;
			break;
		}
		case OPT_PAPI_FD:
			papi_fd = optarg;
			break;
		case 's':
			source = optarg;
			break;
		case 'm':
			metrics = parse_metrics(optarg);
			break;
		case 'r':
			region = optarg;
			break;
		case 'a':
			arch = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'j':
			format = PF_FORMAT_JSON;
			format_given = 1;
			break;
		case OPT_CSV:
			format = PF_FORMAT_CSV;
			format_given = 1;
			break;
		case 'x':
			if (strlen(optarg) != 1 || strchr("\"\r\n", optarg[0])) {
				fprintf(stderr,
					"papi_flops_run: -x takes one character other than a quote or line break, as in -x, or -x';'\n");
				return 2;
			}
			format = PF_FORMAT_CSV;
			format_given = 1;
			sep = optarg[0];
			break;
		case OPT_SECONDS: {
			char *end;
			seconds = strtod(optarg, &end);
			/* a wall time: not inf or nan, and no run lasts 10 years */
			if (end == optarg || *end || !(seconds > 0) || !(seconds <= PF_MAX_SECONDS)) {
				fprintf(stderr,
					"papi_flops_run: --seconds takes the run's wall time in seconds, a number above 0 and at most %.0f (10 years) (got '%s')\n",
					PF_MAX_SECONDS, optarg);
				return 2;
			}
			break;
		}
		case OPT_MASK: {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (end == optarg || *end || errno || v < 1 || v > 1000000000 || optarg[0] == '-') {
				fprintf(stderr,
					"papi_flops_run: --mask-sampling takes the sampling period, a count from 1 to 1000000000 (got '%s')\n",
					optarg);
				return 2;
			}
			mask_period = (unsigned)v;
			break;
		}
		case OPT_SAMPLE: {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (end == optarg || *end || errno || v < 1 || v > 1000000000000000ULL || optarg[0] == '-') {
				fprintf(stderr,
					"papi_flops_run: --sample takes the FLOPs per sample, a count from 1 to 10^15 (got '%s')\n",
					optarg);
				return 2;
			}
			sample = v;
			break;
		}
		case OPT_TOP: {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (end == optarg || *end || errno || v > 1000000 || optarg[0] == '-') {
				fprintf(stderr,
					"papi_flops_run: --top takes how many rows to list, 0 (all) to 1000000 (got '%s')\n",
					optarg);
				return 2;
			}
			sample_top = (unsigned)v;
			top_given = 1;
			break;
		}
		case OPT_FOLDED:
			folded = optarg;
			break;
		case OPT_BYFUNC: {
			char *end;
			errno = 0;
			unsigned long v = optarg ? strtoul(optarg, &end, 10) : 20;
			if (optarg && (end == optarg || *end || errno || v > 1000000 || optarg[0] == '-')) {
				fprintf(stderr,
					"papi_flops_run: --by-function=N takes how many functions to list, 0 (all) to 1000000 (got '%s')\n",
					optarg);
				return 2;
			}
			by_function = 1;
			top = (unsigned)v;
			break;
		}
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("papi_flops_run (papi-flops) %s\n", PF_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	char **prog = argv + optind;
	int perfstat = !strncmp(source, "perf-stat:", 10),
	    traced = !strcmp(source, "trace") || !strncmp(source, "model:", 6);
	if (papi_fd)
		return pf_papi_helper(papi_fd, attach_pid);
	if (attach_pid && *prog) {
		fprintf(stderr, "papi_flops_run: --pid counts a process that runs already; drop '%s' or --pid\n",
			*prog);
		return 2;
	}
	if (attach_pid && !traced) {
		fprintf(stderr,
			"papi_flops_run: --pid needs --source trace or model:PMU (attaching counters to a running process: perf stat -p)\n");
		return 2;
	}
	if (!*prog && !perfstat && !attach_pid) {
		fprintf(stderr, "papi_flops_run: no program given\n");
		usage(stderr);
		return 2;
	}
	if (*prog && perfstat) {
		fprintf(stderr,
			"papi_flops_run: --source perf-stat reads counts recorded earlier and runs no program; drop '%s' or use --source hw\n",
			*prog);
		return 2;
	}
	if ((arch || seconds > 0) && !perfstat) {
		fprintf(stderr, "papi_flops_run: %s applies to --source perf-stat:FILE only%s\n",
			arch ? "--arch" : "--seconds", arch ? " (model:PMU names the PMU for a trace)" : "");
		return 2;
	}
	if (mask_period && strcmp(source, "hw") && strncmp(source, "model:", 6)) {
		fprintf(stderr,
			"papi_flops_run: --mask-sampling applies to --source hw and model:PMU (counts that take masked lanes in full)\n");
		return 2;
	}
	if (by_function && !traced) {
		fprintf(stderr,
			"papi_flops_run: --by-function needs --source trace or model:PMU (counters cannot tell functions apart)\n");
		return 2;
	}
	if (by_function && metrics && !(metrics & pf_flop_metrics())) {
		fprintf(stderr,
			"papi_flops_run: --by-function lists FLOP metrics; add FP_OPS (or DP_OPS, SP_OPS ...) to --metrics\n");
		return 2;
	}
	if ((folded || top_given) && !sample) {
		fprintf(stderr, "papi_flops_run: %s goes with --sample P (the profile it lists or writes)\n",
			folded ? "--folded" : "--top");
		return 2;
	}
	if (sample && strcmp(source, "hw") && strcmp(source, "trace")) {
		fprintf(stderr,
			"papi_flops_run: --sample needs --source hw or trace (a %s count has no addresses to sample)\n",
			perfstat ? "perf-stat" : "model");
		return 2;
	}
	if (sample && mask_period) {
		fprintf(stderr,
			"papi_flops_run: --sample and --mask-sampling sample the counters differently: run them one at a time\n");
		return 2;
	}
	if (sample && attach_pid) {
		fprintf(stderr, "papi_flops_run: --sample profiles a program it starts: drop --pid, or --sample\n");
		return 2;
	}
	int sample_metric = PFLOPS_FP_OPS;
	if (sample && metrics && !(metrics >> PFLOPS_FP_OPS & 1)) {
		sample_metric = -1;
		for (int m = 0; m < PFLOPS_NMETRIC && sample_metric < 0; m++)
			if (metrics >> m & 1 && pflops_metric_is_flop(m))
				sample_metric = m;
		if (sample_metric < 0) {
			fprintf(stderr,
				"papi_flops_run: --sample counts FLOPs; add FP_OPS (or DP_OPS, SP_OPS ...) to --metrics\n");
			return 2;
		}
	}
	if (sample && format == PF_FORMAT_CSV) {
		fprintf(stderr,
			"papi_flops_run: --sample's profile is written as text or JSON (--json), and with --folded FILE for flame graphs; drop --csv\n");
		return 2;
	}
	if (region && !traced) {
		fprintf(stderr,
			"papi_flops_run: --region needs --source trace or model:PMU (counters cannot tell functions apart)\n");
		return 2;
	}
	/* -o r.%r.json: JSON, as papi_flops_report reads it, without --json */
	size_t olen = output ? strlen(output) : 0;
	if (!format_given && olen > 5 && !strcmp(output + olen - 5, ".json"))
		format = PF_FORMAT_JSON;
	else if (!format_given && olen > 4 && !strcmp(output + olen - 4, ".csv"))
		format = PF_FORMAT_CSV;
	/* in an MPI job: the rank, and -o's %r ... (docs/mpi.md) */
	struct pf_mpi mpi;
	struct pflops_error jerr = { 0 };
	char outpath[4096];
	if (pf_mpi_detect(&mpi, &jerr) || (output && pf_mpi_expand(output, &mpi, outpath, sizeof(outpath), &jerr))) {
		fprintf(stderr, "papi_flops_run: %s\n", jerr.msg);
		return 2;
	}
	if (output)
		output = outpath;
	FILE *out = stderr;
	int rc = open_output(output, &out);
	if (rc)
		return rc;
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	if (pflops_table_builtin(&t, &err)) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	char pidname[32];
	snprintf(pidname, sizeof(pidname), "pid %d", (int)attach_pid);
	struct pf_report r = { .source = source,
			       .status = -1,
			       .asked = metrics,
			       .program = perfstat     ? NULL
					  : attach_pid ? pidname
						       : prog[0],
			       .mpi = &mpi };
	struct pf_sample *prof = NULL;
	if (by_function && !(byfunc = pft_funcs_new(&err))) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	if (!perfstat) {
		pf_signal_install(); /* Ctrl-C, kill: stop the program, report what was counted */
		r.started = epoch_now();
	}
	if (!strcmp(source, "trace") && sample) {
#if defined(__x86_64__)
		if (!(strace = pf_sample_trace_new(sample_metric, sample))) {
			rc = EXIT_TOOL;
		} else {
			rc = source_trace(prog, region, quiet, &r);
			prof = pf_sample_trace_end(strace, rc ? 0 : r.v[sample_metric]);
			if (!rc && !prof)
				rc = EXIT_TOOL;
			strace = NULL;
		}
#else
		fprintf(stderr, "papi_flops_run: --sample --source trace: the trace source is x86-64 only for now\n");
		rc = EXIT_TOOL;
#endif
	} else if (!strcmp(source, "trace")) {
		rc = source_trace(prog, region, quiet, &r);
	} else if (!strncmp(source, "model:", 6)) {
		rc = source_model(&t, source + 6, prog, region, quiet, mask_period, &r);
	} else if (perfstat) {
		rc = source_perfstat(&t, source + 10, arch, seconds, &r);
	} else if (!strcmp(source, "hw") && sample) {
		rc = pf_sample_hw(&t, prog, metrics, sample_metric, sample, &r, &prof);
	} else if (!strcmp(source, "hw") && mask_period) {
		rc = pf_mask_hw(&t, prog, metrics, mask_period, &r);
	} else if (!strcmp(source, "hw")) {
		rc = pf_run_hw(&t, prog, metrics, &r);
	} else {
		fprintf(stderr, "papi_flops_run: unknown source '%s'; use hw, trace, model:PMU or perf-stat:FILE\n",
			source);
		rc = 2;
	}
	if (!perfstat)
		r.ended = epoch_now();
	if (!rc && byfunc)
		rc = pf_byfunc_fill(&r, byfunc, r.pmu, top);
	r.interrupted = pf_signal_seen();
	if (!rc && prof) {
		prof->top = sample_top;
		r.sample = prof;
		r.sample_text = pf_sample_text;
		r.sample_json = pf_sample_json;
		if (folded && pf_sample_folded(prof, folded))
			rc = EXIT_TOOL;
	}
	if (!rc) {
		if (output || !quiet)
			pf_report_write(out, &r, format, sep);
		if ((output || !quiet) && pf_output_close(out, output ? output : "standard error"))
			rc = EXIT_TOOL;
		if (!rc && r.interrupted && attach_pid) {
			rc = 0; /* Ctrl-C is how a count of a running process ends */
		} else if (!rc && r.interrupted) {
			rc = 128 + r.interrupted; /* as the shell reports an interrupted job */
		} else if (!rc && r.status >= 0) {
			if (WIFSIGNALED(r.status)) {
				fprintf(stderr, "papi_flops_run: %s was killed by signal %d (%s)\n", r.program,
					WTERMSIG(r.status), strsignal(WTERMSIG(r.status)));
				rc = 128 + WTERMSIG(r.status);
			} else {
				rc = WEXITSTATUS(r.status);
			}
		}
	}
	pf_byfunc_free(&r.byfunc);
	pft_funcs_free(byfunc);
	pf_sample_free(prof);
	pflops_table_free(&t);
	return rc;
}
