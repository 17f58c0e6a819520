/*
 * papi_flops_check: are the FLOP numbers right on this machine?
 * For every calibration kernel this CPU can run (one instruction class,
 * known iterations): the exact FLOPs by analysis; the trace count, which
 * must match exactly; what each PMU's formula reads (its event models);
 * and, where counters can be used, what the hardware reads, judged
 * against the formula with a tolerance per accuracy class.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "papi_flops.h"
#include "pflops_cpufeat.h"
#include "pflops_mask.h"
#include "pflops_trace.h"
#include "pf_json.h"
#include "pf_output.h"
#include "pf_kernels.h"
#include "pf_version.h"

#ifndef PF_KERNELS
#define PF_KERNELS "papi_flops_kernels"
#endif

/* CPUID, less what PFLOPS_CPU_HIDE hides (what a smaller CPU would check) */
static int has_feature(const char *f)
{
	return pfc_cpu_has(f, getenv(PFC_CPU_HIDE_ENV)) == 1;
}

/* every name in PFLOPS_CPU_HIDE is one we know: a typo would hide nothing */
static int hide_ok(void)
{
	const char *h = getenv(PFC_CPU_HIDE_ENV);
	char name[64];

	while (h && *h) {
		size_t n = strcspn(h, ",");
		snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), h);
		if (n && pfc_cpu_has(name, NULL) < 0) {
			fprintf(stderr,
				"papi_flops_check: %s names '%s', not a CPU feature it knows; use names of /proc/cpuinfo's flags:",
				PFC_CPU_HIDE_ENV, name);
			for (size_t i = 0; i < sizeof(pfc_cpufeats) / sizeof(pfc_cpufeats[0]); i++)
				fprintf(stderr, " %s", pfc_cpufeats[i].name);
			fprintf(stderr, "\n");
			return 0;
		}
		h += n + (h[n] == ',');
	}
	return 1;
}

/* The kernel program: $PAPI_FLOPS_KERNELS, next to us in a build tree, or installed. */
static const char *kernels_path(const char *argv0)
{
	static char buf[4096];
	const char *env = getenv("PAPI_FLOPS_KERNELS");
	if (env)
		return env;
	const char *slash = strrchr(argv0, '/');
	if (slash) {
		snprintf(buf, sizeof(buf), "%.*s/ctests/trace/calib_fp", (int)(slash - argv0), argv0);
		if (!access(buf, X_OK))
			return buf;
	}
	return PF_KERNELS;
}

/* model vs exact, one cell: "=" equal, "x1.50" ratio, "0" nothing counted */
static void cell(char *buf, size_t len, double model, double exact)
{
	if (model == exact)
		snprintf(buf, len, "=");
	else if (exact == 0)
		snprintf(buf, len, "+%.0f", model);
	else if (model == 0)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "x%.2f", model / exact);
}

struct kres {
	const struct pf_kernel *k;
	double exact[PFLOPS_NMETRIC];
	double traced[PFLOPS_NMETRIC];
	struct pflops_mix mix;
	int trace_ok;
};

/* Tolerance of a hardware reading against the formula's model, by class:
 * retired-instruction events match; execution-time events may overcount. */
static int hw_ok(enum pflops_class k, double hw, double model)
{
	double slack = 64 + 0.01 * model; /* a few stray instructions, 1% */
	switch (k) {
	case PFLOPS_EXACT:
	case PFLOPS_MASKED_FULL:
		return fabs(hw - model) <= slack;
	case PFLOPS_SPECULATIVE:
		return hw >= model - slack && hw <= 1.5 * model + slack;
	default:
		return fabs(hw - model) <= 64 + 0.1 * model;
	}
}

/* Read kernel k with this machine's counters (median of runs); 0 or an error. */
static int hw_measure(const struct pflops_plan *plan, char **av, int runs, double *out, struct pflops_error *err)
{
	double vals[PFLOPS_NMETRIC][16];
	runs = runs > 16 ? 16 : runs;
	for (int r = 0; r < runs; r++) {
		struct pflops_child_event ev[PFLOPS_MAX_COUNTERS];
		for (int c = 0; c < plan->ncounters; c++)
			ev[c] = (struct pflops_child_event){ .type = 4 /* PERF_TYPE_RAW */,
							     .config = plan->counter[c].config,
							     .exclude_kernel = 1 };
		int st, rc = pflops_count_child(av, ev, plan->ncounters, &st, NULL, err);
		if (rc)
			return rc;
		double counts[PFLOPS_MAX_COUNTERS];
		for (int c = 0; c < plan->ncounters; c++)
			counts[c] = ev[c].scaled;
		for (int m = 0; m < PFLOPS_NMETRIC; m++)
			vals[m][r] = plan->metrics & (1u << m) ? pflops_plan_eval(plan, m, counts) : 0;
	}
	for (int m = 0; m < PFLOPS_NMETRIC; m++) { /* median */
		for (int i = 1; i < runs; i++)
			for (int j = i; j > 0 && vals[m][j] < vals[m][j - 1]; j--) {
				double x = vals[m][j];
				vals[m][j] = vals[m][j - 1];
				vals[m][j - 1] = x;
			}
		out[m] = vals[m][runs / 2];
	}
	return 0;
}

/*
 * Masked-lane sampling, validated on the trace: each masked kernel traced
 * once, its FP_ARITH counts sampled every P-th count at several periods
 * and phases (the counters' sampling, without skid), the estimate and its
 * 95% interval set against the exact count.  Bias: mean relative error;
 * coverage: intervals holding the exact count.  Fails a verdict when the
 * interval at P = 7 misses, coverage is under 90%, or unmasked code gets
 * a correction.
 */
static const unsigned mask_periods[] = { 3, 5, 7, 11, 13, 17, 19, 23, 29, 31 };
#define MASK_PHASES 4
#define MASK_NSTREAMS (int)(sizeof(mask_periods) / sizeof(mask_periods[0]) * MASK_PHASES)
#define MASK_P 7

static int mask_check(const struct pflops_table *t, const struct pflops_probe *pr, const char *kp, int json)
{
	const struct pflops_pmu *pmu = NULL;
	struct pfc_mask_plan mp;
	struct pflops_error err = { 0 };
	unsigned dpsp = 1u << PFLOPS_DP_OPS | 1u << PFLOPS_SP_OPS;
	int failures = 0;

	const char *why = "this machine's PMU";

	if (!has_feature("avx512f")) {
		if (!json)
			printf("\nMasked-lane sampling: not checked (this CPU lacks avx512f to run the masked kernels)\n");
		return 0;
	}
	/* this machine's PMU when it counts masked lanes in full, else Sapphire Rapids' */
	if (pr->nkinds && pr->kinds[0].pmu && !pfc_mask_plan_make(&mp, pr->kinds[0].pmu, dpsp, NULL) &&
	    mp.corrected == dpsp)
		pmu = pr->kinds[0].pmu;
	else {
		pmu = pflops_table_find(t, "spr");
		why = pr->nkinds && pr->kinds[0].pmu
			      ? "standing in: this machine's PMU has no masked-full FLOP events to correct"
			      : "standing in: no PMU identified here";
	}
	if (!pmu)
		return 0;
	struct pfc_mask_stream st[MASK_NSTREAMS];
	int ns = 0, s7 = 0;
	for (size_t i = 0; i < sizeof(mask_periods) / sizeof(mask_periods[0]); i++)
		for (int ph = 0; ph < MASK_PHASES; ph++) {
			unsigned phase = mask_periods[i] * (unsigned)ph / MASK_PHASES;
			if (ph && phase == st[ns - 1].phase)
				continue; /* short periods: fewer distinct phases */
			if (mask_periods[i] == MASK_P && ph == 0)
				s7 = ns;
			st[ns++] = (struct pfc_mask_stream){ mask_periods[i], phase };
		}
	if (json)
		printf(", \"mask_sampling\": {\"pmu\": \"%s\", \"period\": %d, \"streams\": %d, \"kernels\": [",
		       pmu->name, MASK_P, ns);
	else
		printf("\nMasked-lane sampling on the trace: the FLOP events of %s (%s, %s) sampled every P-th\n"
		       "count with k0-k7 as the instruction ran; P = 3..31 at up to %d phases: %d samplings per kernel\n"
		       "(docs/masked-lanes.md)\n"
		       "  %-18s %-7s %9s %9s  %-30s %8s %8s  %s\n",
		       pmu->title, pmu->name, why, MASK_PHASES, ns, "kernel", "metric", "exact", "full",
		       "P=7 estimate [95% interval]", "bias", "max err", "coverage");
	for (int i = 0; i < PF_NMASK_KERNELS; i++) {
		const struct pf_mask_kernel *k = &pf_mask_kernels[i];
		struct pflops_mix mix;
		int status;
		char *av[] = { (char *)kp, (char *)k->name, (char *)k->iterations, NULL };
		if (pfc_mask_plan_make(&mp, pmu, 1u << k->metric, &err)) {
			fprintf(stderr, "papi_flops_check: %s\n", err.msg);
			failures++;
			continue;
		}
		struct pfc_mask_trace *mt = pfc_mask_trace_new(&mp, st, ns, &err);
		struct pflops_trace_opts o = { .region = k->region, .fp_exec = pfc_mask_trace_hook, .fp_exec_arg = mt };
		memset(&mix, 0, sizeof(mix));
		if (!mt || pft_run(av, &o, &mix, &status, &err) || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "papi_flops_check: cannot trace kernel %s: %s\n", k->name,
				err.msg[0] ? err.msg : "it failed");
			pfc_mask_trace_free(mt);
			failures++;
			continue;
		}
		double exact = (double)pflops_mix_flops(&mix, pflops_metric_info(k->metric)->prec);
		double full = 0, est7 = 0, lo7 = 0, hi7 = 0, bias = 0, maxerr = 0;
		int covered = 0, zero_ok = 1;
		for (int j = 0; j < ns; j++) {
			double counts[PFLOPS_MAX_COUNTERS], est, lo, hi;
			struct pfc_mask_result res[PFLOPS_MAX_COUNTERS];
			if (pfc_mask_trace_result(mt, &mix, j, counts, res, &err)) {
				fprintf(stderr, "papi_flops_check: %s\n", err.msg);
				failures++;
				break;
			}
			pfc_mask_metric(&mp, k->metric, counts, res, &full, &est, &lo, &hi);
			double e = exact > 0 ? (est - exact) / exact : 0;
			bias += e / ns;
			maxerr = fabs(e) > maxerr ? fabs(e) : maxerr;
			covered += lo <= exact && exact <= hi;
			zero_ok &= k->exact != k->full || est == full;
			if (j == s7) {
				est7 = est;
				lo7 = lo;
				hi7 = hi;
			}
		}
		pfc_mask_trace_free(mt);
		/* the trace agrees with the analysis, or nothing below means anything */
		int ok = exact == k->exact && full == k->full && lo7 <= exact && exact <= hi7 &&
			 covered * 10 >= ns * 9 && zero_ok;
		failures += !ok;
		if (json) {
			printf("%s{\"kernel\": \"%s\", \"metric\": \"%s\", \"exact\": %.0f, \"full_lanes\": %.0f, "
			       "\"estimate\": %.0f, \"low\": %.0f, \"high\": %.0f, \"bias_pct\": %.4f, \"max_error_pct\": %.4f, "
			       "\"covered\": %d, \"ok\": %s}",
			       i ? ", " : "", k->name, pflops_metric_name(k->metric), exact, full, est7, lo7, hi7,
			       100 * bias, 100 * maxerr, covered, ok ? "true" : "false");
			continue;
		}
		char iv[64];
		snprintf(iv, sizeof(iv), "%.0f [%.0f..%.0f]", est7, lo7, hi7);
		printf("  %-18s %-7s %9.0f %9.0f  %-30s %+7.2f%% %7.2f%%  %d/%d%s\n", k->name,
		       pflops_metric_name(k->metric), exact, full, iv, 100 * bias, 100 * maxerr, covered, ns,
		       ok		   ? ""
		       : exact != k->exact ? "  FAIL (trace != analysis)"
		       : !zero_ok	   ? "  FAIL (unmasked code corrected)"
					   : "  FAIL");
	}
	if (json)
		printf("]}");
	return failures;
}

static void usage(FILE *o)
{
	fprintf(o, "usage: papi_flops_check [--all-pmus] [--iterations N] [--runs N] [--json] [--markdown FILE]\n"
		   "Check the FLOP formulas: every calibration kernel this CPU can run is counted\n"
		   "exactly (by analysis and by the trace, which must agree), read through each\n"
		   "formula's event models, and, where counters can be used, read by the hardware.\n"
		   "\n"
		   "  -a, --all-pmus        model-vs-exact table for every PMU of the table (default: this machine's)\n"
		   "  -n, --iterations N    loop iterations per kernel (default 1000)\n"
		   "  -r, --runs N          runs per kernel; the trace must agree every time, the hardware\n"
		   "                        reading is their median (default 3)\n"
		   "  -j, --json            the results as one JSON object on stdout (messages on stderr)\n"
		   "  -m, --markdown FILE   also write the tables as markdown (the docs/ validation table)\n"
		   "  -h, --help            this text\n"
		   "  -V, --version         the version\n"
		   "\n"
		   "Environment: PAPI_FLOPS_KERNELS, the kernel program (default: the installed one).\n"
		   "Exit status: 0 when every verdict passes, 1 otherwise, 2 on bad usage.  papi_flops_check(1).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all-pmus", no_argument, 0, 'a' },	   { "iterations", required_argument, 0, 'n' },
		{ "runs", required_argument, 0, 'r' },	   { "json", no_argument, 0, 'j' },
		{ "markdown", required_argument, 0, 'm' }, { "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },	   { 0, 0, 0, 0 },
	};
	int all = 0, json = 0, runs = 3, c;
	long iters = 1000;
	const char *md = NULL;
	pf_output_init("papi_flops_check", 1);
	while ((c = getopt_long(argc, argv, "an:r:jm:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = 1;
			break;
		case 'n':
			iters = atol(optarg);
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		case 'j':
			json = 1;
			break;
		case 'm':
			md = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("papi_flops_check (papi-flops) %s\n", PF_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (iters <= 0 || runs <= 0) {
		fprintf(stderr, "papi_flops_check: --iterations and --runs take positive numbers\n");
		return 2;
	}
	if (!hide_ok())
		return 2;
#if !defined(__x86_64__)
	/* the kernels are x86 code, checked against the trace (x86-64 only) */
	fprintf(stderr,
		"papi_flops_check: the calibration kernels and the trace source are x86-64 only for now; "
		"on this machine papi_flops_avail lists the formulas and papi_flops_run --source hw counts a program\n");
	return 1;
#endif
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	struct pflops_probe pr;
	if (pflops_table_builtin(&t, &err) || pflops_probe_run(&pr, &t, NULL, &err)) {
		fprintf(stderr, "papi_flops_check: %s\n", err.msg);
		return 1;
	}
	const char *kp = kernels_path(argv[0]);
	FILE *o = json ? stderr : stdout;
	if (pr.access.code)
		fprintf(o,
			"papi_flops_check: %s, so each kernel is checked against its exact trace count and each formula through its event models; to check the hardware counters too, %s.\n",
			pr.access.msg, pr.access.fix);
	else
		fprintf(o, "papi_flops_check: %s\n", pr.access.msg);

	/* 1. the kernels: analytic FLOPs vs the trace, `runs` times */
	struct kres res[PF_NKERNELS];
	const struct pf_kernel *lacked[PF_NKERNELS];
	int nres = 0, nlacked = 0, failures = 0;
	char itstr[32];
	snprintf(itstr, sizeof(itstr), "%ld", iters);
	for (int i = 0; i < PF_NKERNELS; i++) {
		const struct pf_kernel *k = &pf_kernels[i];
		if (!has_feature(pf_kernel_feature(k))) {
			lacked[nlacked++] = k;
			continue;
		}
		struct kres *r = &res[nres++];
		memset(r, 0, sizeof(*r));
		r->k = k;
		struct pflops_mix expect;
		pf_kernel_mix(k, iters, &expect);
		pflops_mix_metrics(&expect, r->exact);
		r->trace_ok = 1;
		for (int run = 0; run < runs; run++) {
			char *av[] = { (char *)kp, (char *)k->name, itstr, NULL };
			struct pflops_mix m;
			memset(&m, 0, sizeof(m));
			int st;
			if (isatty(2) && !json)
				fprintf(stderr, "\rtracing %-20s run %d/%d", k->name, run + 1, runs);
			if (pft_run(av, NULL, &m, &st, &err) || !WIFEXITED(st) || WEXITSTATUS(st)) {
				fprintf(stderr, "\npapi_flops_check: cannot run kernel %s with %s: %s\n", k->name, kp,
					err.msg[0] ? err.msg
						   : "it failed (set PAPI_FLOPS_KERNELS to the kernel program)");
				return 1;
			}
			double v[PFLOPS_NMETRIC];
			pflops_mix_metrics(&m, v);
			for (int x = 0; x < PFLOPS_NMETRIC; x++)
				if (v[x] != r->exact[x] || (run && v[x] != r->traced[x]))
					r->trace_ok = 0;
			memcpy(r->traced, v, sizeof(v));
			r->mix = m;
		}
		failures += !r->trace_ok;
	}
	if (isatty(2) && !json)
		fprintf(stderr, "\r%50s\r", "");

	/* 2. which PMUs to read the kernels through */
	const struct pflops_pmu *pmus[256];
	int npmu = 0;
	for (int i = 0; i < t.npmus && npmu < 256; i++) {
		int mine = 0;
		for (int k = 0; k < pr.nkinds; k++)
			mine |= pr.kinds[k].pmu == &t.pmus[i];
		if (all || mine)
			pmus[npmu++] = &t.pmus[i];
	}

	FILE *mdf = md ? fopen(md, "w") : NULL;
	if (md && !mdf) {
		fprintf(stderr, "papi_flops_check: cannot write %s: %s\n", md, strerror(errno));
		return 1;
	}
	if (!json) {
		printf("\nKernels (%ld iterations, %d runs each): exact FLOPs by analysis vs the trace\n", iters, runs);
		printf("  %-20s", "kernel"); /* a column per FLOP metric */
		for (int m = 0; m < PFLOPS_NMETRIC; m++)
			if (pflops_metric_is_flop(m))
				printf(" %12s", pflops_metric_name(m));
		printf("  %s\n", "trace");
		for (int i = 0; i < nres; i++) {
			printf("  %-20s", res[i].k->name);
			for (int m = 0; m < PFLOPS_NMETRIC; m++)
				if (pflops_metric_is_flop(m))
					printf(" %12.0f", res[i].exact[m]);
			printf("  %s\n", res[i].trace_ok ? "exact" : "FAIL");
		}
		/* by feature, in table order: "lacks avx512f: a, b; avx512_fp16: c" */
		for (int i = 0; i < nlacked; i++) {
			const char *f = pf_kernel_feature(lacked[i]);
			int seen = 0;
			for (int j = 0; j < i; j++)
				seen |= !strcmp(pf_kernel_feature(lacked[j]), f);
			if (seen)
				continue;
			printf("%s %s:", i ? ";" : "  not run, this CPU lacks", f);
			for (int j = i, n = 0; j < nlacked; j++)
				if (!strcmp(pf_kernel_feature(lacked[j]), f))
					printf("%s %s", n++ ? "," : "", lacked[j]->name);
		}
		if (nlacked)
			printf("%s\n", getenv(PFC_CPU_HIDE_ENV) ? " (" PFC_CPU_HIDE_ENV " hides some)" : "");
	} else {
		printf("{\"hardware\": %s, \"iterations\": %ld, \"runs\": %d, \"kernels\": [",
		       pr.access.code ? "false" : "true", iters, runs);
		for (int i = 0; i < nres; i++) {
			printf("%s{\"kernel\": \"%s\", \"trace_exact\": %s, \"exact\": {", i ? ", " : "",
			       res[i].k->name, res[i].trace_ok ? "true" : "false");
			for (int m = 0; m < PFLOPS_NMETRIC; m++)
				printf("%s\"%s\": %.0f", m ? ", " : "", pflops_metric_name(m), res[i].exact[m]);
			printf("}}");
		}
		printf("], \"not_run\": [");
		for (int i = 0; i < nlacked; i++)
			printf("%s{\"kernel\": \"%s\", \"cpu_lacks\": \"%s\"}", i ? ", " : "", lacked[i]->name,
			       pf_kernel_feature(lacked[i]));
		printf("], \"pmus\": [");
	}
	if (mdf) {
		fprintf(mdf,
			"# Validation: what each formula reads on the calibration kernels\n\n"
			"Generated by `papi_flops_check --all-pmus --markdown` on %s (no hardware counters: the\n"
			"formulas are read through their event models on the traced kernels). Cells: `=` the formula\n"
			"gives the exact FLOPs; `xR` it gives R times them; `0` it counts nothing; `+N` it counts N\n"
			"where there are none; blank: metric unavailable. %ld iterations per kernel; VEC_* count\n"
			"packed instructions (FMA twice).\n\n",
			pr.kinds[0].model_name[0] ? pr.kinds[0].model_name : "this machine", iters);
	}
	/* 3. every formula on every kernel */
	for (int p = 0; p < npmu; p++) {
		const struct pflops_pmu *pm = pmus[p];
		if (!json)
			printf("\n%s (%s): formula vs exact\n  %-20s", pm->title, pm->name, "kernel");
		if (mdf) {
			fprintf(mdf, "## %s (`%s`)\n\n| kernel |", pm->title, pm->name);
			for (int m = 0; m < PFLOPS_NMETRIC; m++)
				fprintf(mdf, " %s |", pflops_metric_name(m));
			fprintf(mdf, "\n|---|");
			for (int m = 0; m < PFLOPS_NMETRIC; m++)
				fprintf(mdf, "---|");
			fprintf(mdf, "\n");
		}
		if (json)
			printf("%s{\"pmu\": \"%s\", \"kernels\": {", p ? ", " : "", pm->name);
		for (int m = 0; !json && m < PFLOPS_NMETRIC; m++)
			printf(" %9s", pflops_metric_name(m));
		if (!json)
			printf("\n");
		for (int i = 0; i < nres; i++) {
			double v[PFLOPS_NMETRIC] = { 0 };
			unsigned got = 0;
			if (pflops_model_metrics(pm, &res[i].mix, (1u << PFLOPS_NMETRIC) - 1, 0, v, &got, &err)) {
				fprintf(stderr, "papi_flops_check: %s\n", err.msg);
				return 1;
			}
			if (!json)
				printf("  %-20s", res[i].k->name);
			if (mdf)
				fprintf(mdf, "| %s |", res[i].k->name);
			if (json)
				printf("%s\"%s\": {", i ? ", " : "", res[i].k->name);
			int first = 1;
			for (int m = 0; m < PFLOPS_NMETRIC; m++) {
				char cb[32] = "";
				if (got & (1u << m))
					cell(cb, sizeof(cb), v[m], res[i].exact[m]);
				else if (pm->metrics[m].klass != PFLOPS_UNAVAILABLE)
					snprintf(cb, sizeof(cb), "n/m"); /* not modelled (Arm) */
				if (!json)
					printf(" %9s", cb[0] ? cb : "-");
				if (mdf)
					fprintf(mdf, " %s |", cb);
				if (json && (got & (1u << m))) {
					printf("%s\"%s\": %.0f", first ? "" : ", ", pflops_metric_name(m), v[m]);
					first = 0;
				}
			}
			if (!json)
				printf("\n");
			if (mdf)
				fprintf(mdf, "\n");
			if (json)
				printf("}");
		}
		if (json)
			printf("}}");
		if (mdf)
			fprintf(mdf, "\n");
	}
	if (json)
		printf("]");
	else if (npmu)
		printf("\nCells: '=' the formula reads the exact FLOPs; 'xR' R times them; '+N' N where there are\n"
		       "none; '0' nothing where there are some; '-' the metric is unavailable on that PMU; 'n/m' no\n"
		       "event model to read it through (Arm).  Read through each PMU's event models on the traced\n"
		       "kernels: what that CPU's counters would give, not a measurement.\n");
	/* 4. masked lanes: the sampled correction against the trace */
	failures += mask_check(&t, &pr, kp, json);
	if (json)
		printf(", \"failures\": %d}\n", failures);
	if (mdf && pf_output_close(mdf, md))
		return 1;
	/* 5. with counters: each kernel as this CPU's counters read it, against its formula */
	const struct pflops_kind *kd = pr.nkinds ? &pr.kinds[0] : NULL;
	if (!pr.access.code && kd && kd->pmu && !json) {
		unsigned want = pflops_pmu_available(kd->pmu);
		struct pflops_plan plan;
		if (want && !pflops_plan_make(&plan, kd->pmu, want, kd->sve_bits, &err)) {
			printf("\nHardware (%s, %d runs, median): counters vs formula%s\n", kd->pmu->name, runs,
			       pr.nkinds > 1 ? " (first core kind only; pin with taskset for the others)" : "");
			for (int i = 0; i < nres; i++) {
				char *av[] = { (char *)kp, (char *)res[i].k->name, itstr, NULL };
				double hw[PFLOPS_NMETRIC], model[PFLOPS_NMETRIC] = { 0 };
				unsigned got = 0;
				if (hw_measure(&plan, av, runs, hw, &err) ||
				    pflops_model_metrics(kd->pmu, &res[i].mix, want, kd->sve_bits, model, &got, &err)) {
					printf("  %-20s cannot measure: %s\n", res[i].k->name, err.msg);
					failures++;
					continue;
				}
				printf("  %-20s", res[i].k->name);
				for (int m = 0; m < PFLOPS_NMETRIC; m++) {
					if (!(want & got & (1u << m)))
						continue;
					int good = hw_ok(kd->pmu->metrics[m].klass, hw[m], model[m]);
					failures += !good;
					printf(" %s=%.0f(%s%.0f)", pflops_metric_name(m), hw[m],
					       good ? "ok, model " : "FAIL, model ", model[m]);
				}
				printf("\n");
			}
		}
	}
	fprintf(o, "\npapi_flops_check: %d kernel%s checked, %d verdict%s failed\n", nres, nres == 1 ? "" : "s",
		failures, failures == 1 ? "" : "s");
	pflops_table_free(&t);
	return failures ? 1 : 0;
}
