/*
 * papi_flops_report: the ranks' reports merged into the job's.  They
 * must be one job's (one launcher, one size, each rank once) and measure
 * the same thing (one source, one PMU, one metric set): a sum over
 * different sources or formulas would be a number of no meaning, so such
 * a set is refused naming two files that differ.
 */
#include <stdlib.h>
#include <string.h>
#include "pf_job.h"
#include "pflops_internal.h"

static int by_rank(const void *a, const void *b)
{
	const struct pf_rankrep *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static void metric_list(unsigned set, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (int m = 0; m < PFLOPS_NMETRIC && o < len; m++)
		if (set >> m & 1)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "," : "", pflops_metric_name(m));
	if (!set)
		snprintf(buf, len, "none");
}

/* "trace", "model:skx", "hw (amd64_fam19h_zen3)" */
static void source_label(const struct pf_rankrep *r, char *buf, size_t len)
{
	if (!strcmp(r->source, "model"))
		snprintf(buf, len, "model:%s", r->pmu);
	else
		snprintf(buf, len, "%s", r->source);
}

/* a and b measured the same way in the same job, or an error naming both */
static int compatible(const struct pf_rankrep *a, const struct pf_rankrep *b, struct pflops_error *err)
{
	char x[160], y[160];
	if (a->rank == b->rank)
		return pfc_err(err, PFLOPS_EINVAL,
			       "%s and %s both hold rank %d: give each rank's report once, from one job", a->file,
			       b->file, a->rank);
	if (strcmp(a->source, b->source) || (!strcmp(a->source, "model") && strcmp(a->pmu, b->pmu))) {
		source_label(a, x, sizeof(x));
		source_label(b, y, sizeof(y));
		return pfc_err(err, PFLOPS_EINVAL,
			       "%s was written with --source %s, %s with --source %s: a job report adds up "
			       "counts of one source; run every rank with the same --source",
			       a->file, x, b->file, y);
	}
	if (strcmp(a->pmu, b->pmu))
		return pfc_err(err, PFLOPS_EINVAL,
			       "%s counted with the formulas of %s, %s with those of %s: ranks on different "
			       "CPUs count different things; report each kind of node apart, or use --source trace",
			       a->file, a->pmu, b->file, b->pmu);
	if (a->metrics != b->metrics || a->unavailable != b->unavailable) {
		metric_list(a->metrics, x, sizeof(x));
		metric_list(b->metrics, y, sizeof(y));
		return pfc_err(err, PFLOPS_EINVAL,
			       "%s has the metrics %s, %s has %s: run every rank with the same --metrics", a->file, x,
			       b->file, y);
	}
	if (strcmp(a->launcher, b->launcher) || a->size != b->size)
		return pfc_err(err, PFLOPS_EINVAL,
			       "%s and %s are from different jobs (launcher %s of %d ranks, %s of %d): "
			       "give one job's reports",
			       a->file, b->file, a->launcher, a->size, b->launcher, b->size);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void stats(const struct pf_rankrep *r, size_t n, int m, double *tmp, struct pf_jstat *s)
{
	memset(s, 0, sizeof(*s));
	s->min = s->max = r[0].v[m];
	s->min_rank = s->max_rank = r[0].rank;
	for (size_t i = 0; i < n; i++) {
		double v = r[i].v[m];
		s->total += v;
		tmp[i] = v;
		if (v < s->min) {
			s->min = v;
			s->min_rank = r[i].rank;
		}
		if (v > s->max) {
			s->max = v;
			s->max_rank = r[i].rank;
		}
	}
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	s->median = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
	s->mean = s->total / (double)n;
	s->imbalance = s->mean > 0 ? s->max / s->mean : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t count_hosts(const struct pf_rankrep *r, size_t n)
{
	char **h = malloc(n * sizeof(*h));
	size_t k = 1;
	if (!h)
		return 0;
	for (size_t i = 0; i < n; i++)
		h[i] = r[i].host;
	qsort(h, n, sizeof(*h), cmp_str);
	for (size_t i = 1; i < n; i++)
		k += strcmp(h[i - 1], h[i]) != 0;
	free(h);
	return k;
}

static int fkey; /* the metric functions are sorted by (qsort has no argument) */

static int func_by_name(const void *pa, const void *pb)
{
	const struct pf_jfunc *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->object ? a->object : "", b->object ? b->object : "");
}

static int func_by_value(const void *pa, const void *pb)
{
	const struct pf_jfunc *a = pa, *b = pb;
	if (a->v[fkey] != b->v[fkey])
		return a->v[fkey] > b->v[fkey] ? -1 : 1;
	return func_by_name(pa, pb);
}

/* every rank's listed functions summed by name and file; the ranks'
 * unlisted ones (their "rest") summed apart */
static int merge_funcs(const struct pf_rankrep *r, size_t n, struct pf_job *job, struct pflops_error *err)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		if (r[i].fmetrics) {
			if (job->franks && (r[i].fmetrics != job->fmetrics || strcmp(r[i].fvalues, job->fvalues)))
				return pfc_err(err, PFLOPS_EINVAL,
					       "%s and %s give different metrics per function: run every rank "
					       "with the same --by-function options",
					       job->r[0].file, r[i].file);
			job->fmetrics = r[i].fmetrics;
			job->fvalues = r[i].fvalues;
			job->franks++;
			total += r[i].nfuncs;
			job->frest_count += r[i].frest_count;
			for (int m = 0; m < PFLOPS_NMETRIC; m++)
				job->frest[m] += r[i].frest[m];
		}
	if (!job->franks)
		return 0;
	job->fkey = job->fmetrics & 1u << PFLOPS_FP_OPS ? PFLOPS_FP_OPS : __builtin_ctz(job->fmetrics);
	if (!total)
		return 0;
	struct pf_jfunc *all = malloc(total * sizeof(*all));
	if (!all)
		return pfc_err(err, PFLOPS_ENOMEM, "out of memory merging the functions");
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < r[i].nfuncs; j++)
			all[k++] = r[i].funcs[j]; /* names still owned by the reports */
	qsort(all, total, sizeof(*all), func_by_name);
	k = 0;
	for (size_t i = 0; i < total; i++) {
		if (k && !func_by_name(&all[k - 1], &all[i])) {
			for (int m = 0; m < PFLOPS_NMETRIC; m++)
				all[k - 1].v[m] += all[i].v[m];
			continue;
		}
		all[k++] = all[i];
	}
	fkey = job->fkey;
	qsort(all, k, sizeof(*all), func_by_value);
	job->funcs = all;
	job->nfuncs = k;
	return 0;
}

static int add_note(struct pf_job *job, const char *text, size_t *cap)
{
	for (size_t i = 0; i < job->nnotes; i++)
		if (!strcmp(job->notes[i].text, text)) {
			job->notes[i].ranks++;
			return 0;
		}
	if (job->nnotes == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct pf_jnote *nn = realloc(job->notes, nc * sizeof(*nn));
		if (!nn)
			return PFLOPS_ENOMEM;
		job->notes = nn;
		*cap = nc;
	}
	job->notes[job->nnotes++] = (struct pf_jnote){ .text = text, .ranks = 1 };
	return 0;
}

void pf_job_free(struct pf_job *job)
{
	free(job->missing);
	free(job->funcs);
	free(job->notes);
	memset(job, 0, sizeof(*job));
}

int pf_job_merge(struct pf_rankrep *r, size_t n, struct pf_job *job, struct pflops_error *err)
{
	int rc;
	memset(job, 0, sizeof(*job));
	if (!n)
		return pfc_err(err, PFLOPS_EINVAL, "no report to merge");
	qsort(r, n, sizeof(*r), by_rank);
	for (size_t i = 1; i < n; i++)
		if ((rc = compatible(&r[i - 1], &r[i], err)))
			return rc;
	job->r = r;
	job->n = n;
	job->size = r[0].size;
	job->metrics = r[0].metrics;
	job->unavailable = r[0].unavailable;
	/* missing: ranks below the size without a report; size unknown, the
	 * gaps below the highest rank.  The first PF_JOB_MISSING_LIST listed. */
	long long ranks = job->size > 0 ? job->size : (long long)r[n - 1].rank + 1;
	if (ranks > (long long)n) {
		job->nmissing = (size_t)(ranks - (long long)n);
		size_t cap = job->nmissing < PF_JOB_MISSING_LIST ? job->nmissing : PF_JOB_MISSING_LIST;
		if (!(job->missing = malloc(cap * sizeof(int))))
			return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
		for (int rank = 0, i = 0; rank < ranks && job->nlisted < cap; rank++) {
			if ((size_t)i < n && r[i].rank == rank)
				i++;
			else
				job->missing[job->nlisted++] = rank;
		}
	}
	double *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
	for (int m = 0; m < PFLOPS_NMETRIC; m++) {
		job->klass[m] = r[0].klass[m];
		for (size_t i = 1; i < n; i++)
			if (r[i].klass[m] != job->klass[m])
				job->klass[m] = -1;
		if (job->metrics >> m & 1)
			stats(r, n, m, tmp, &job->st[m]);
	}
	free(tmp);
	/* the job's wall time: first start to last end; without them (a
	 * source that runs no program), the longest rank's */
	int times = 1, walls = 1;
	job->wall_native = 1;
	for (size_t i = 0; i < n; i++) {
		times &= r[i].started > 0;
		walls &= r[i].wall > 0;
		job->wall_native &= r[i].wall_native;
		job->npartial += r[i].partial != 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (times) {
			if (!i || r[i].started < job->started)
				job->started = r[i].started;
			if (r[i].ended > job->ended)
				job->ended = r[i].ended;
			job->wall = job->ended - job->started;
		} else if (walls && r[i].wall > job->wall) {
			job->wall = r[i].wall;
		}
	}
	if (!times && !walls)
		job->wall = 0;
	job->wall_native &= job->wall > 0;
	job->nhosts = count_hosts(r, n);
	if ((rc = merge_funcs(r, n, job, err)))
		goto fail;
	size_t cap = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < r[i].ncaveats; k++)
			if (add_note(job, r[i].caveats[k], &cap)) {
				rc = pfc_err(err, PFLOPS_ENOMEM, "out of memory");
				goto fail;
			}
	return 0;
fail:
	pf_job_free(job);
	return rc;
}
