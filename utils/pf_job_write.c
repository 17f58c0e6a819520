/*
 * papi_flops_report's output: the job (ranks, launcher, wall time, what
 * is missing or partial), per metric the total and its spread over the
 * ranks, each rank's values, the functions summed over the ranks, and
 * the ranks' caveats, once each.  Text, JSON and CSV carry the same.
 */
#include <string.h>
#include "pf_job.h"
#include "pf_json.h"
#include "pf_version.h"

#define is_flop pflops_metric_is_flop
#define TEXT_FUNCS 20 /* functions the text lists; JSON and CSV list all */

static int has(const struct pf_job *j, int m)
{
	return j->metrics >> m & 1;
}

static int rate(const struct pf_job *j, int m, double *g)
{
	if (!has(j, m) || !is_flop(m) || !j->wall_native || j->wall <= 0)
		return 0;
	*g = j->st[m].total / j->wall / 1e9;
	return 1;
}

static const char *klass(const struct pf_job *j, int m)
{
	return j->klass[m] < 0 ? "mixed" : pflops_class_name(j->klass[m]);
}

static const char *source(const struct pf_job *j, char *buf, size_t len)
{
	const struct pf_rankrep *r = &j->r[0];
	if (!strcmp(r->source, "model") || (r->pmu[0] && strcmp(r->source, "trace")))
		snprintf(buf, len, "%s%s%s", r->source, !strcmp(r->source, "model") ? ":" : " on ", r->pmu);
	else
		snprintf(buf, len, "%s", r->source);
	return buf;
}

/* the key metric's total over the ranks with function data */
static double func_base(const struct pf_job *j)
{
	double t = 0;
	for (size_t i = 0; i < j->n; i++)
		if (j->r[i].fmetrics)
			t += j->r[i].v[j->fkey];
	return t;
}

/* Notes on the job as a whole, one sentence each; i from 0 until NULL */
static const char *job_note(const struct pf_job *j, int i, char *buf, size_t len)
{
	int k = 0;
	if (j->wall > 0 && !j->wall_native && i == k++)
		return "the ranks' wall times are those of traced runs (the tracer's own work included): no GFLOP/s";
	if (j->wall > 0 && !j->started && i == k++)
		return "the reports have no start and end times (the source ran no program): the job's wall time is the "
		       "longest rank's";
	if (j->wall <= 0 && i == k++)
		return "the reports give no wall time: no GFLOP/s";
	if (j->nempty && i == k++) {
		snprintf(buf, len, "%zu report file%s empty (papi_flops_run killed before it wrote): left out",
			 j->nempty, j->nempty == 1 ? " was" : "s were");
		return buf;
	}
	if (j->size < 0 && i == k++)
		return "the launcher did not give the job's size: ranks missing above the highest cannot be seen";
	if (j->fmetrics && j->franks < j->n && i == k++) {
		snprintf(buf, len, "only %zu of the %zu ranks have --by-function data: the functions cover those ranks",
			 j->franks, j->n);
		return buf;
	}
	if (j->fmetrics && j->frest_count && i == k++)
		return "the ranks listed their top functions only (--by-function=N): the functions below each rank's top are "
		       "summed in one row; --by-function=0 lists all";
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (has(j, m) && j->klass[m] < 0 && i == k++) {
			snprintf(buf, len,
				 "%s has different accuracy classes on different ranks (multiplexed or masked "
				 "counts on some): the total is as good as the worst",
				 pflops_metric_name(m));
			return buf;
		}
	return NULL;
}

/* ---- text ---------------------------------------------------------- */

static void text_ranks_list(FILE *o, const int *v, size_t n, size_t total)
{
	for (size_t i = 0; i < n; i++)
		fprintf(o, "%s%d", i ? ", " : "", v[i]);
	if (total > n)
		fprintf(o, " and %zu more", total - n);
}

static void text_head(FILE *o, const struct pf_job *j)
{
	char src[200];
	const struct pf_rankrep *r0 = &j->r[0];
	fprintf(o, "papi_flops_report: %zu rank%s", j->n, j->n == 1 ? "" : "s");
	if (j->size >= 0)
		fprintf(o, " of %d", j->size);
	fprintf(o, " (%s, %zu host%s)\n", r0->launcher, j->nhosts, j->nhosts == 1 ? "" : "s");
	fprintf(o, "source      : %s\n", source(j, src, sizeof(src)));
	if (r0->program)
		fprintf(o, "program     : %s\n", r0->program);
	if (j->wall > 0)
		fprintf(o, "wall time   : %.3f s, %s%s\n", j->wall,
			j->started ? "the first rank's start to the last rank's end" : "the longest rank's",
			j->wall_native ? "" : " (traced runs)");
	if (j->nmissing) {
		fprintf(o, "MISSING     : rank%s ", j->nmissing == 1 ? "" : "s");
		text_ranks_list(o, j->missing, j->nlisted, j->nmissing);
		fprintf(o, " (no report): every figure below covers %zu rank%s only\n", j->n, j->n == 1 ? "" : "s");
	}
	if (j->npartial) {
		fprintf(o, "PARTIAL     : ");
		for (size_t i = 0, k = 0; i < j->n; i++)
			if (j->r[i].partial)
				fprintf(o, "%srank %d (%s)", k++ ? ", " : "", j->r[i].rank, j->r[i].why);
		fprintf(o, ": %s counts cover %s run up to then\n", j->npartial == 1 ? "its" : "their",
			j->npartial == 1 ? "its" : "each one's");
	}
}

static void text_metric(FILE *o, const struct pf_job *j, int m)
{
	const struct pf_jstat *s = &j->st[m];
	char t[64], lo[64], md[64], hi[64], ib[32] = "n/a", lor[80], hir[80];
	double g;
	if (!has(j, m)) {
		fprintf(o, "  %-9s %17s\n", pflops_metric_name(m), "n/a");
		return;
	}
	if (s->imbalance > 0)
		snprintf(ib, sizeof(ib), "%.3f", s->imbalance);
	snprintf(lor, sizeof(lor), "%s (%d)", pf_grouped(s->min, lo, sizeof(lo)), s->min_rank);
	snprintf(hir, sizeof(hir), "%s (%d)", pf_grouped(s->max, hi, sizeof(hi)), s->max_rank);
	fprintf(o, "  %-9s %17s %-12s %19s %15s %19s %9s  %s", pflops_metric_name(m),
		pf_grouped(s->total, t, sizeof(t)), pf_metric_unit(m), lor, pf_grouped(s->median, md, sizeof(md)), hir,
		ib, klass(j, m));
	if (rate(j, m, &g))
		fprintf(o, "  %.3f GFLOP/s", g);
	fprintf(o, "\n");
}

static void text_metrics(FILE *o, const struct pf_job *j)
{
	for (int pass = 0; pass < 2; pass++) {
		int any = 0;
		for (int m = 0; m < PFLOPS_NMETRIC; m++)
			any |= is_flop(m) == !pass && (j->metrics | j->unavailable) >> m & 1;
		if (!any)
			continue;
		fprintf(o, "\n%s\n  %-9s %17s %-12s %19s %15s %19s %9s  %s\n",
			pass ? "Packed vector instructions (not FLOPs)" : "Floating-point operations", "", "job total",
			"", "min (rank)", "median", "max (rank)", "max/mean", "accuracy");
		for (int m = 0; m < PFLOPS_NMETRIC; m++)
			if (is_flop(m) == !pass && (j->metrics | j->unavailable) >> m & 1)
				text_metric(o, j, m);
	}
}

/* per rank: the FLOP metrics the job did any of (the first one if none) */
static int rank_column(const struct pf_job *j, int m)
{
	if (!has(j, m) || !is_flop(m))
		return 0;
	if (j->st[m].total != 0)
		return 1;
	for (int k = 0; k < PFLOPS_NMETRIC; k++)
		if (has(j, k) && is_flop(k) && (j->st[k].total != 0 || k < m))
			return 0;
	return 1;
}

static void text_ranks(FILE *o, const struct pf_job *j)
{
	char num[64];
	fprintf(o, "\nPer rank\n  %6s", "rank");
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (rank_column(j, m))
			fprintf(o, " %17s", pflops_metric_name(m));
	fprintf(o, " %10s  host\n", "wall s");
	for (size_t i = 0; i < j->n; i++) {
		const struct pf_rankrep *r = &j->r[i];
		fprintf(o, "  %6d", r->rank);
		for (int m = 0; m < PFLOPS_NMETRIC; m++)
			if (rank_column(j, m))
				fprintf(o, " %17s", pf_grouped(r->v[m], num, sizeof(num)));
		if (r->wall > 0)
			fprintf(o, " %10.3f", r->wall);
		else
			fprintf(o, " %10s", "n/a");
		fprintf(o, "  %s%s%s%s\n", r->host, r->partial ? "  PARTIAL (" : "", r->partial ? r->why : "",
			r->partial ? ")" : "");
	}
}

/* the columns after the key: the other metrics the job did any of */
static int func_column(const struct pf_job *j, int m)
{
	return m != j->fkey && j->fmetrics >> m & 1 && j->st[m].total != 0;
}

static void text_func(FILE *o, const struct pf_job *j, const double *v, const char *label, double base)
{
	char num[64];
	fprintf(o, "  %15s %6.1f%%", pf_grouped(v[j->fkey], num, sizeof(num)),
		base > 0 ? 100 * v[j->fkey] / base : 0.0);
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (func_column(j, m))
			fprintf(o, " %15s", pf_grouped(v[m], num, sizeof(num)));
	fprintf(o, "  %s\n", label);
}

static void text_funcs(FILE *o, const struct pf_job *j)
{
	char label[600];
	double base = func_base(j), more[PFLOPS_NMETRIC] = { 0 };
	if (!j->fmetrics)
		return;
	fprintf(o, "\nFLOPs by function, summed over %zu rank%s (%s; %zu function%s)\n  %15s %7s", j->franks,
		j->franks == 1 ? "" : "s", j->fvalues, j->nfuncs, j->nfuncs == 1 ? "" : "s",
		pflops_metric_name(j->fkey), "share");
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (func_column(j, m))
			fprintf(o, " %15s", pflops_metric_name(m));
	fprintf(o, "  function\n");
	for (size_t i = 0; i < j->nfuncs; i++) {
		const struct pf_jfunc *f = &j->funcs[i];
		if (i >= TEXT_FUNCS) {
			for (int m = 0; m < PFLOPS_NMETRIC; m++)
				more[m] += f->v[m];
			continue;
		}
		pf_func_label(f->name, f->object, f->has_symbol, label, sizeof(label));
		text_func(o, j, f->v, label, base);
	}
	if (j->nfuncs > TEXT_FUNCS) {
		snprintf(label, sizeof(label), "(%zu more functions; --json lists all)", j->nfuncs - TEXT_FUNCS);
		text_func(o, j, more, label, base);
	}
	if (j->frest_count) {
		snprintf(label, sizeof(label), "(%zu functions below the ranks' own top lists)", j->frest_count);
		text_func(o, j, j->frest, label, base);
	}
}

static void text_notes(FILE *o, const struct pf_job *j)
{
	char buf[400];
	const char *t;
	if (j->nnotes)
		fprintf(o, "\nCaveats and notes of the ranks\n");
	for (size_t i = 0; i < j->nnotes; i++) {
		fprintf(o, "  %s", j->notes[i].text);
		if (j->notes[i].ranks < j->n)
			fprintf(o, " [%zu of %zu ranks]", j->notes[i].ranks, j->n);
		fprintf(o, "\n");
	}
	for (int i = 0; (t = job_note(j, i, buf, sizeof(buf))); i++)
		fprintf(o, "%s  %s\n", i ? "" : "\nNotes on the job\n", t);
}

/* ---- JSON ---------------------------------------------------------- */

static void json_metric_values(FILE *o, unsigned set, const double *v)
{
	for (int m = 0, first = 1; m < PFLOPS_NMETRIC; m++)
		if (set >> m & 1) {
			fprintf(o, "%s\"%s\": %.0f", first ? "" : ", ", pflops_metric_name(m), v[m]);
			first = 0;
		}
}

static void json_metrics(FILE *o, const struct pf_job *j)
{
	fprintf(o, ", \"metrics\": {");
	for (int m = 0, first = 1; m < PFLOPS_NMETRIC; m++) {
		const struct pf_jstat *s = &j->st[m];
		if (!has(j, m))
			continue;
		fprintf(o,
			"%s\"%s\": {\"total\": %.0f, \"unit\": \"%s\", \"accuracy\": \"%s\", \"min\": %.0f, \"min_rank\": %d, "
			"\"median\": %.1f, \"max\": %.0f, \"max_rank\": %d, \"mean\": %.3f, \"imbalance\": ",
			first ? "" : ", ", pflops_metric_name(m), s->total, pf_metric_unit(m), klass(j, m), s->min,
			s->min_rank, s->median, s->max, s->max_rank, s->mean);
		if (s->imbalance > 0)
			fprintf(o, "%.6f}", s->imbalance);
		else
			fprintf(o, "null}");
		first = 0;
	}
	fprintf(o, "}, \"gflop_per_second\": {");
	for (int m = 0, first = 1; m < PFLOPS_NMETRIC; m++) {
		double g;
		if (rate(j, m, &g)) {
			fprintf(o, "%s\"%s\": %.6f", first ? "" : ", ", pflops_metric_name(m), g);
			first = 0;
		}
	}
	fprintf(o, "}");
}

static void json_ranks(FILE *o, const struct pf_job *j)
{
	fprintf(o, ", \"ranks\": [");
	for (size_t i = 0; i < j->n; i++) {
		const struct pf_rankrep *r = &j->r[i];
		fprintf(o, "%s{\"rank\": %d, ", i ? ", " : "", r->rank);
		pf_json_kv(o, "file", r->file, 1);
		pf_json_kv(o, "host", r->host, 1);
		fprintf(o, "\"partial\": %s, ", r->partial ? "true" : "false");
		if (r->partial)
			pf_json_kv(o, "why", r->why, 1);
		if (r->wall > 0)
			fprintf(o, "\"wall_seconds\": %.6f, ", r->wall);
		if (r->started > 0)
			fprintf(o, "\"started\": %.6f, \"ended\": %.6f, ", r->started, r->ended);
		fprintf(o, "\"metrics\": {");
		json_metric_values(o, j->metrics, r->v);
		fprintf(o, "}}");
	}
	fprintf(o, "]");
}

static void json_funcs(FILE *o, const struct pf_job *j)
{
	double base = func_base(j);
	if (!j->fmetrics)
		return;
	fprintf(o, ", \"by_function\": {");
	pf_json_kv(o, "values", j->fvalues, 1);
	pf_json_kv(o, "sorted_by", pflops_metric_name(j->fkey), 1);
	fprintf(o, "\"ranks\": %zu, \"functions\": %zu, \"rows\": [", j->franks, j->nfuncs);
	for (size_t i = 0; i < j->nfuncs; i++) {
		const struct pf_jfunc *f = &j->funcs[i];
		fprintf(o, "%s{", i ? ", " : "");
		pf_json_kv(o, "function", f->name, 1);
		fprintf(o, "\"object\": ");
		if (f->object)
			pf_json_str(o, f->object);
		else
			fprintf(o, "null");
		fprintf(o, ", \"share\": %.6f, ", base > 0 ? f->v[j->fkey] / base : 0.0);
		json_metric_values(o, j->fmetrics, f->v);
		fprintf(o, "}");
	}
	fprintf(o, "], \"rest\": {\"functions\": %zu, \"share\": %.6f, ", j->frest_count,
		base > 0 ? j->frest[j->fkey] / base : 0.0);
	json_metric_values(o, j->fmetrics, j->frest);
	fprintf(o, "}}");
}

static void json_write(FILE *o, const struct pf_job *j)
{
	char src[200], buf[400];
	const struct pf_rankrep *r0 = &j->r[0];
	const char *t;
	fprintf(o, "{");
	pf_json_kv(o, "tool", "papi_flops_report", 1);
	pf_json_kv(o, "version", PF_VERSION, 1);
	pf_json_kv(o, "source", source(j, src, sizeof(src)), 1);
	pf_json_kv(o, "pmu", r0->pmu, 1);
	pf_json_kv(o, "launcher", r0->launcher, 1);
	if (r0->program)
		pf_json_kv(o, "program", r0->program, 1);
	fprintf(o, "\"size\": ");
	if (j->size >= 0)
		fprintf(o, "%d", j->size);
	else
		fprintf(o, "null");
	fprintf(o, ", \"reports\": %zu, \"hosts\": %zu, \"complete\": %s, \"missing_ranks\": [", j->n, j->nhosts,
		j->nmissing || j->npartial ? "false" : "true");
	for (size_t i = 0; i < j->nlisted; i++)
		fprintf(o, "%s%d", i ? ", " : "", j->missing[i]);
	fprintf(o, "], \"missing\": %zu, \"partial_ranks\": [", j->nmissing);
	for (size_t i = 0, k = 0; i < j->n; i++)
		if (j->r[i].partial)
			fprintf(o, "%s%d", k++ ? ", " : "", j->r[i].rank);
	fprintf(o, "]");
	if (j->wall > 0)
		fprintf(o, ", \"wall_seconds\": %.6f, \"wall_from\": \"%s\", \"wall_is_native\": %s", j->wall,
			j->started ? "first start to last end" : "longest rank", j->wall_native ? "true" : "false");
	if (j->started)
		fprintf(o, ", \"started\": %.6f, \"ended\": %.6f", j->started, j->ended);
	json_metrics(o, j);
	json_ranks(o, j);
	json_funcs(o, j);
	fprintf(o, ", \"caveats\": [");
	for (size_t i = 0; i < j->nnotes; i++) {
		fprintf(o, "%s{", i ? ", " : "");
		pf_json_kv(o, "text", j->notes[i].text, 1);
		fprintf(o, "\"ranks\": %zu}", j->notes[i].ranks);
	}
	fprintf(o, "], \"notes\": [");
	for (int i = 0; (t = job_note(j, i, buf, sizeof(buf))); i++) {
		fprintf(o, "%s", i ? ", " : "");
		pf_json_str(o, t);
	}
	fprintf(o, "]}\n");
}

/* ---- CSV: metric,statistic,rank,value,unit,accuracy,function,object,comment ---- */

static void csv_row(FILE *o, char sep, const char *metric, const char *stat, long rank, double value, const char *vfmt,
		    const char *unit, const char *acc, const char *fn, const char *obj, const char *comment)
{
	char rk[24] = "", val[64] = "";
	if (rank >= 0)
		snprintf(rk, sizeof(rk), "%ld", rank);
	if (vfmt)
		snprintf(val, sizeof(val), vfmt, value);
	pf_csv_field(o, metric, sep, 0);
	pf_csv_field(o, stat, sep, 0);
	pf_csv_field(o, rk, sep, 0);
	pf_csv_field(o, val, sep, 0);
	pf_csv_field(o, unit, sep, 0);
	pf_csv_field(o, acc, sep, 0);
	pf_csv_field(o, fn, sep, 0);
	pf_csv_field(o, obj, sep, 0);
	pf_csv_field(o, comment, sep, 1);
}

static void csv_write(FILE *o, const struct pf_job *j, char sep)
{
	char src[200], buf[400];
	const char *t;
	pf_csv_field(o, "metric", sep, 0);
	pf_csv_field(o, "statistic", sep, 0);
	pf_csv_field(o, "rank", sep, 0);
	pf_csv_field(o, "value", sep, 0);
	pf_csv_field(o, "unit", sep, 0);
	pf_csv_field(o, "accuracy", sep, 0);
	pf_csv_field(o, "function", sep, 0);
	pf_csv_field(o, "object", sep, 0);
	pf_csv_field(o, "comment", sep, 1);
	csv_row(o, sep, "job", "source", -1, 0, NULL, "", "", NULL, NULL, source(j, src, sizeof(src)));
	csv_row(o, sep, "job", "launcher", -1, 0, NULL, "", "", NULL, NULL, j->r[0].launcher);
	if (j->size >= 0)
		csv_row(o, sep, "job", "size", -1, j->size, "%.0f", "ranks", "", NULL, NULL, NULL);
	csv_row(o, sep, "job", "reports", -1, (double)j->n, "%.0f", "ranks", "", NULL, NULL, NULL);
	csv_row(o, sep, "job", "hosts", -1, (double)j->nhosts, "%.0f", "hosts", "", NULL, NULL, NULL);
	for (size_t i = 0; i < j->nlisted; i++)
		csv_row(o, sep, "job", "missing", j->missing[i], 0, NULL, "", "", NULL, NULL, "no report");
	for (size_t i = 0; i < j->n; i++)
		if (j->r[i].partial)
			csv_row(o, sep, "job", "partial", j->r[i].rank, 0, NULL, "", "", NULL, NULL, j->r[i].why);
	if (j->wall > 0)
		csv_row(o, sep, "wall_time", "job", -1, j->wall, "%.6f", "s", "", NULL, NULL,
			j->started ? "first start to last end" : "longest rank");
	for (int pass = 0; pass < 2; pass++)
		for (int m = 0; m < PFLOPS_NMETRIC; m++) {
			const struct pf_jstat *s = &j->st[m];
			const char *n = pflops_metric_name(m), *u = pf_metric_unit(m), *k = klass(j, m);
			double g;
			if (!has(j, m) || is_flop(m) != !pass)
				continue;
			csv_row(o, sep, n, "total", -1, s->total, "%.0f", u, k, NULL, NULL, NULL);
			csv_row(o, sep, n, "min", s->min_rank, s->min, "%.0f", u, k, NULL, NULL, NULL);
			csv_row(o, sep, n, "median", -1, s->median, "%.1f", u, k, NULL, NULL, NULL);
			csv_row(o, sep, n, "max", s->max_rank, s->max, "%.0f", u, k, NULL, NULL, NULL);
			csv_row(o, sep, n, "imbalance", -1, s->imbalance, s->imbalance > 0 ? "%.6f" : NULL, "max/mean",
				"", NULL, NULL, s->imbalance > 0 ? NULL : "the mean is 0");
			if (rate(j, m, &g))
				csv_row(o, sep, n, "rate", -1, g, "%.6f", "GFLOP/s", k, NULL, NULL,
					"over the job's wall time");
			for (size_t i = 0; i < j->n; i++)
				csv_row(o, sep, n, "rank", j->r[i].rank, j->r[i].v[m], "%.0f", u, k, NULL, NULL,
					j->r[i].partial ? j->r[i].why : NULL);
		}
	for (size_t i = 0; i < j->nfuncs; i++)
		for (int m = 0; m < PFLOPS_NMETRIC; m++)
			if (j->fmetrics >> m & 1)
				csv_row(o, sep, pflops_metric_name(m), "function", -1, j->funcs[i].v[m], "%.0f", "FLOP",
					j->fvalues, j->funcs[i].name, j->funcs[i].object, NULL);
	if (j->frest_count)
		for (int m = 0; m < PFLOPS_NMETRIC; m++)
			if (j->fmetrics >> m & 1)
				csv_row(o, sep, pflops_metric_name(m), "function", -1, j->frest[m], "%.0f", "FLOP",
					j->fvalues, "(rest)", NULL, "functions below the ranks' own top lists, summed");
	for (size_t i = 0; i < j->nnotes; i++) {
		snprintf(buf, sizeof(buf), "%zu of %zu ranks", j->notes[i].ranks, j->n);
		csv_row(o, sep, "caveat", buf, -1, 0, NULL, "", "", NULL, NULL, j->notes[i].text);
	}
	for (int i = 0; (t = job_note(j, i, buf, sizeof(buf))); i++)
		csv_row(o, sep, "note", "job", -1, 0, NULL, "", "", NULL, NULL, t);
}

void pf_job_write(FILE *o, const struct pf_job *j, enum pf_format f, char sep)
{
	switch (f) {
	case PF_FORMAT_JSON:
		json_write(o, j);
		break;
	case PF_FORMAT_CSV:
		csv_write(o, j, sep);
		break;
	default:
		text_head(o, j);
		text_metrics(o, j);
		text_ranks(o, j);
		text_funcs(o, j);
		text_notes(o, j);
		break;
	}
	fflush(o);
}
