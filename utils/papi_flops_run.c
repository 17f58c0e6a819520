/*
 * papi_flops_run: run a program and report its FLOPs from one source:
 *   hw           hardware counters (perf_event), the formula of each core kind
 *   trace        exact count of every executed instruction (the SDE method)
 *   model:PMU    trace, read through PMU's events and formulas
 *   perf-stat:F  `perf stat -x,` output recorded elsewhere (no program run)
 * The program's exit status is passed through (128+N when killed by N).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "papi_flops.h"
#include "pflops_trace.h"
#include "pf_json.h"
#include "pf_run_hw.h"

#define EXIT_TOOL 125	/* the tool failed, not the program (as env(1), timeout(1)) */

struct result {
	const char *source;
	char source_detail[400];
	double v[PFLOPS_NMETRIC];
	unsigned got;
	const struct pflops_pmu *pmu;	/* formula used (hw, model, perf-stat), or NULL (trace) */
	double widths[PFLOPS_NWIDTH];
	int have_widths;
	double wall;
	int status;		/* wait status; -1: no program run */
	char notes[8][320];
	int nnotes;
};

static void note(struct result *r, const char *fmt, const char *a)
{
	if (r->nnotes < 8)
		snprintf(r->notes[r->nnotes++], sizeof(r->notes[0]), fmt, a);
}

static void usage(FILE *o)
{
	fprintf(o, "usage: papi_flops_run [--source hw|trace|model:PMU|perf-stat:FILE] [--metrics LIST]\n"
		   "                      [--region SYMBOL] [--arch PMU] [--json] [--quiet] -- PROGRAM [ARGS...]\n"
		   "  --source       where counts come from (default hw); see papi_flops_run(1)\n"
		   "  --metrics      comma list of FP_OPS,DP_OPS,SP_OPS,HP_OPS,BF16_OPS,VEC_DP,VEC_SP (default: all available)\n"
		   "  --region SYM   trace sources: count only inside calls to function SYM\n"
		   "  --arch PMU     perf-stat source: the CPU the file was recorded on (default: this one)\n");
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress(void *arg, const struct pflops_mix *m, const struct pflops_trace_stats *st)
{
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
			fprintf(stderr, "papi_flops_run: unknown metric '%s'; use FP_OPS DP_OPS SP_OPS HP_OPS BF16_OPS VEC_DP VEC_SP\n", t);
			exit(2);
		}
		set |= 1u << m;
	}
	return set;
}

static int run_trace(char **argv, const char *region, int quiet, struct pflops_mix *mix, struct result *r)
{
	struct pflops_trace_stats st;
	struct pflops_trace_opts o = { .region = region, .stats = &st };
	if (!quiet && isatty(2))
		o.progress = progress;
	struct pflops_error err = { 0 };
	double t0 = now();
	int rc = pflops_trace_run(argv, &o, mix, &r->status, &err);
	r->wall = now() - t0;
	if (o.progress)
		fprintf(stderr, "\r%60s\r", "");
	if (rc) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	if (region && !st.region_calls)
		note(r, "the region function '%s' was never called: every count is 0", region);
	else if (region)
		note(r, "counted only inside calls to %s", region);
	note(r, "%s", "wall time is that of the traced run (ptrace slows it greatly); GFLOP/s are not given");
	pflops_mix_widths(mix, r->widths);
	r->have_widths = 1;
	return 0;
}

static void print_text(const struct result *r, unsigned metrics, char **argv)
{
	printf("papi_flops_run: %s", argv && argv[0] ? argv[0] : "(no program)");
	if (r->status >= 0) {
		char st[96] = "";
		pflops_trace_status_str(r->status, st, sizeof(st));
		printf(" (%s)", st);
	}
	printf("\nsource      : %s%s%s\n", r->source, r->source_detail[0] ? ", " : "", r->source_detail);
	if (r->status >= 0)
		printf("wall time   : %.3f s\n", r->wall);
	for (int m = 0; m < PFLOPS_NMETRIC; m++) {
		if (!(metrics & (1u << m)))
			continue;
		if (!(r->got & (1u << m))) {
			const char *why = r->pmu && r->pmu->metrics[m].caveat ? r->pmu->metrics[m].caveat : "not measured";
			printf("%-11s : n/a  (%s)\n", pflops_metric_name(m), why);
			continue;
		}
		const char *cls = r->pmu ? pflops_class_name(r->pmu->metrics[m].klass) : "exact";
		printf("%-11s : %.0f  [%s]", pflops_metric_name(m), r->v[m], cls);
		if (r->wall > 0 && strcmp(r->source, "trace") && strncmp(r->source, "model", 5) && m <= PFLOPS_BF16_OPS)
			printf("  %.3f GFLOP/s", r->v[m] / r->wall / 1e9);
		printf("\n");
	}
	if (r->have_widths)
		printf("by width    : (exact) scalar %.0f, 128-bit %.0f, 256-bit %.0f, 512-bit %.0f FLOPs\n", r->widths[0],
		       r->widths[1], r->widths[2], r->widths[3]);
	int header = 0;
	for (int m = 0; r->pmu && m < PFLOPS_NMETRIC; m++)
		if ((metrics & r->got & (1u << m)) && r->pmu->metrics[m].caveat) {
			if (!header++)
				printf("caveats     :\n");
			printf("  %s: %s\n", pflops_metric_name(m), r->pmu->metrics[m].caveat);
		}
	for (int i = 0; i < r->nnotes; i++)
		printf("%s %s\n", i ? "           " : "notes       :", r->notes[i]);
}

static void print_json(const struct result *r, unsigned metrics, char **argv)
{
	printf("{");
	pf_json_kv(stdout, "source", r->source, 1);
	pf_json_kv(stdout, "source_detail", r->source_detail, 1);
	pf_json_kv(stdout, "pmu", r->pmu ? r->pmu->name : "", 1);
	if (r->status >= 0) {
		pf_json_kv(stdout, "program", argv[0], 1);
		printf("\"exit_status\": %d, ", WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 128 + WTERMSIG(r->status));
		printf("\"wall_seconds\": %.6f, ", r->wall);
	}
	printf("\"metrics\": {");
	int first = 1;
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (metrics & r->got & (1u << m)) {
			printf("%s\"%s\": %.0f", first ? "" : ", ", pflops_metric_name(m), r->v[m]);
			first = 0;
		}
	printf("}, \"accuracy\": {");
	first = 1;
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (metrics & r->got & (1u << m)) {
			printf("%s\"%s\": \"%s\"", first ? "" : ", ", pflops_metric_name(m),
			       r->pmu ? pflops_class_name(r->pmu->metrics[m].klass) : "exact");
			first = 0;
		}
	printf("}");
	if (r->have_widths)
		printf(", \"widths\": {\"scalar\": %.0f, \"128\": %.0f, \"256\": %.0f, \"512\": %.0f}", r->widths[0],
		       r->widths[1], r->widths[2], r->widths[3]);
	printf(", \"caveats\": [");
	first = 1;
	for (int m = 0; r->pmu && m < PFLOPS_NMETRIC; m++)
		if ((metrics & r->got & (1u << m)) && r->pmu->metrics[m].caveat) {
			char buf[600];
			snprintf(buf, sizeof(buf), "%s: %s", pflops_metric_name(m), r->pmu->metrics[m].caveat);
			printf("%s", first ? "" : ", ");
			pf_json_str(stdout, buf);
			first = 0;
		}
	for (int i = 0; i < r->nnotes; i++) {
		printf("%s", first ? "" : ", ");
		pf_json_str(stdout, r->notes[i]);
		first = 0;
	}
	printf("]}\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "source", required_argument, 0, 's' }, { "metrics", required_argument, 0, 'm' },
		{ "region", required_argument, 0, 'r' }, { "arch", required_argument, 0, 'a' },
		{ "json", no_argument, 0, 'j' },	 { "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },	 { 0, 0, 0, 0 },
	};
	const char *source = "hw", *region = NULL, *arch = NULL;
	unsigned metrics = 0;
	int json = 0, quiet = 0, c;
	while ((c = getopt_long(argc, argv, "+s:m:r:a:jqh", opts, NULL)) != -1) {
		switch (c) {
		case 's': source = optarg; break;
		case 'm': metrics = parse_metrics(optarg); break;
		case 'r': region = optarg; break;
		case 'a': arch = optarg; break;
		case 'j': json = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	char **prog = argv + optind;
	int perfstat = !strncmp(source, "perf-stat:", 10);
	if (!*prog && !perfstat) {
		fprintf(stderr, "papi_flops_run: no program given\n");
		usage(stderr);
		return 2;
	}
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	if (pflops_table_builtin(&t, &err)) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	struct result r = { .source = source, .status = -1 };
	int rc = 0;
	if (!strcmp(source, "trace")) {
		struct pflops_mix mix;
		memset(&mix, 0, sizeof(mix));
		if (!(rc = run_trace(prog, region, quiet, &mix, &r))) {
			pflops_mix_metrics(&mix, r.v);
			r.got = (1u << PFLOPS_NMETRIC) - 1;
			snprintf(r.source_detail, sizeof(r.source_detail), "exact: every executed instruction decoded (%llu)",
				 (unsigned long long)mix.total_insts);
		}
		if (!metrics)
			metrics = r.got;
	} else if (!strncmp(source, "model:", 6)) {
		const struct pflops_pmu *p = pflops_table_find(&t, source + 6);
		if (!p) {
			fprintf(stderr, "papi_flops_run: no PMU '%s' in the table; 'papi_flops_avail --arch all' lists them\n", source + 6);
			rc = 2;
		} else {
			struct pflops_mix mix;
			memset(&mix, 0, sizeof(mix));
			r.pmu = p;
			r.source = "model";
			snprintf(r.source_detail, sizeof(r.source_detail), "trace read through the events of %s (%s)", p->name,
				 p->title);
			if (!metrics)
				metrics = (1u << PFLOPS_NMETRIC) - 1;
			if (!(rc = run_trace(prog, region, quiet, &mix, &r)) &&
			    pflops_model_metrics(p, &mix, metrics, 0, r.v, &r.got, &err)) {
				fprintf(stderr, "papi_flops_run: %s\n", err.msg);
				rc = EXIT_TOOL;
			}
		}
	} else if (perfstat) {
		const struct pflops_pmu *p = NULL;
		if (arch) {
			p = pflops_table_find(&t, arch);
			if (!p)
				fprintf(stderr, "papi_flops_run: no PMU '%s' in the table\n", arch);
		} else {
			struct pflops_probe pr;
			if (pflops_probe_run(&pr, &t, NULL, &err) == 0 && pr.nkinds && pr.kinds[0].pmu)
				p = pr.kinds[0].pmu;
			else
				fprintf(stderr, "papi_flops_run: cannot tell which CPU recorded %s: give --arch PMU\n", source + 10);
		}
		if (!p) {
			rc = 2;
		} else {
			r.pmu = p;
			r.source = "perf-stat";
			snprintf(r.source_detail, sizeof(r.source_detail), "%s read as %s (%s)", source + 10, p->name, p->title);
			unsigned want = metrics;
			if (!want)
				for (int m = 0; m < PFLOPS_NMETRIC; m++)
					want |= p->metrics[m].klass != PFLOPS_UNAVAILABLE ? 1u << m : 0;
			struct pflops_perfstat ps;
			/* default set: take what the file has; an explicit list must be complete */
			int got_any = 0;
			for (int m = 0; m < PFLOPS_NMETRIC && !rc; m++) {
				if (!(want & (1u << m)) || p->metrics[m].klass == PFLOPS_UNAVAILABLE)
					continue;
				if (pflops_perfstat_read(source + 10, p, 1u << m, 0, &ps, &err)) {
					/* a metric the file lacks is skipped; a bad or unreadable file is not */
					if (metrics || err.code != PFLOPS_ENOENT) {
						fprintf(stderr, "papi_flops_run: %s\n", err.msg);
						rc = EXIT_TOOL;
					}
					continue;
				}
				r.v[m] = ps.value[m];
				r.got |= 1u << m;
				got_any = 1;
				if (ps.min_pct < 100 && !r.nnotes) {
					char pct[32];
					snprintf(pct, sizeof(pct), "%.2f", ps.min_pct);
					note(&r, "perf multiplexed the counters (lowest running share %s%%): scaled estimates", pct);
				}
			}
			if (!rc && !got_any) {
				fprintf(stderr, "papi_flops_run: %s has none of the events %s's metrics need; record with: perf stat -x, -o FILE $(papi_flops_avail --arch %s --perf) PROGRAM\n",
					source + 10, p->name, p->name);
				rc = EXIT_TOOL;
			}
			metrics = want;
		}
	} else if (!strcmp(source, "hw")) {
		rc = pf_run_hw(&t, prog, metrics, &r.v[0], &r.got, &metrics, &r.wall, &r.status, r.source_detail,
			       sizeof(r.source_detail), &r.pmu, r.notes, &r.nnotes);
	} else {
		fprintf(stderr, "papi_flops_run: unknown source '%s'; use hw, trace, model:PMU or perf-stat:FILE\n", source);
		rc = 2;
	}
	if (!rc) {
		if (json)
			print_json(&r, metrics, prog);
		else if (!quiet)
			print_text(&r, metrics, prog);
		if (r.status >= 0) {
			if (WIFSIGNALED(r.status)) {
				fprintf(stderr, "papi_flops_run: %s was killed by signal %d (%s)\n", prog[0], WTERMSIG(r.status),
					strsignal(WTERMSIG(r.status)));
				rc = 128 + WTERMSIG(r.status);
			} else {
				rc = WEXITSTATUS(r.status);
			}
		}
	}
	pflops_table_free(&t);
	return rc;
}
