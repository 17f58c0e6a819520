/*
 * papi_flops_report: one rank's report (papi_flops_run --json) read back.
 * Outside input: a regular file of bounded size, strict JSON
 * (pf_jread.c), then every field the merge uses checked for its type and
 * range; fields it does not use are left alone.  Each error names the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pf_job.h"
#include "pf_jread.h"
#include "pflops_internal.h"

void pf_rankrep_free(struct pf_rankrep *r)
{
	free(r->file);
	free(r->host);
	free(r->launcher);
	free(r->source);
	free(r->pmu);
	free(r->source_detail);
	free(r->program);
	for (size_t i = 0; i < r->ncaveats; i++)
		free(r->caveats[i]);
	free(r->caveats);
	free(r->fvalues);
	for (size_t i = 0; i < r->nfuncs; i++) {
		free(r->funcs[i].name);
		free(r->funcs[i].object);
	}
	free(r->funcs);
	memset(r, 0, sizeof(*r));
}

struct ctx {
	const char *name;
	struct pflops_error *err;
};

static int bad(struct ctx *c, const char *fmt, const char *key)
{
	char what[256];
	snprintf(what, sizeof(what), fmt, key);
	return pfc_err(c->err, PFLOPS_EINVAL, "%s: %s", c->name, what);
}

static char *dup_or_fail(struct ctx *c, const char *s, int *rc)
{
	char *d = strdup(s);
	if (!d)
		*rc = pfc_err(c->err, PFLOPS_ENOMEM, "%s: out of memory", c->name);
	return d;
}

/* a string member: *out a copy, or NULL when absent and not required */
static int get_str(struct ctx *c, const struct pf_jval *o, const char *key, int required, char **out)
{
	const struct pf_jval *v = pf_json_get(o, key);
	int rc = 0;
	*out = NULL;
	if (!v && !required)
		return 0;
	if (!v || v->type != PF_JSTR)
		return bad(c, v ? "\"%s\" is not a string" : "no \"%s\": not a papi_flops_run --json report", key);
	*out = dup_or_fail(c, v->str, &rc);
	return rc;
}

/* a number member >= 0; *present 0 when absent (NULL: required) */
static int get_num(struct ctx *c, const struct pf_jval *o, const char *key, double *out, int *present)
{
	const struct pf_jval *v = pf_json_get(o, key);
	if (present)
		*present = v != NULL;
	if (!v && present)
		return 0;
	if (!v || v->type != PF_JNUM)
		return bad(c, v ? "\"%s\" is not a number" : "no \"%s\": not a papi_flops_run --json report", key);
	if (v->num < 0)
		return bad(c, "\"%s\" is negative", key);
	*out = v->num;
	return 0;
}

static int get_bool(struct ctx *c, const struct pf_jval *o, const char *key, int *out)
{
	const struct pf_jval *v = pf_json_get(o, key);
	if (!v || v->type != PF_JBOOL)
		return bad(c, v ? "\"%s\" is not true or false" : "no \"%s\": not a papi_flops_run --json report", key);
	*out = v->b;
	return 0;
}

/* rank and size: whole numbers below 2^31; size may be null (unknown) */
static int get_rank(struct ctx *c, const struct pf_jval *doc, struct pf_rankrep *r)
{
	const struct pf_jval *v = pf_json_get(doc, "rank"), *s = pf_json_get(doc, "size");
	if (!v)
		return pfc_err(c->err, PFLOPS_EINVAL,
			       "%s has no rank: papi_flops_run records one only inside an MPI job "
			       "(OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK or SLURM_PROCID set)",
			       c->name);
	if (v->type != PF_JNUM || v->num != floor(v->num) || v->num < 0 || v->num > 0x7fffffff)
		return bad(c, "\"%s\" is not a whole number from 0", "rank");
	r->rank = (int)v->num;
	r->size = -1;
	if (!s)
		return bad(c, "no \"%s\" beside the rank: not a papi_flops_run --json report", "size");
	if (s->type != PF_JNULL) {
		if (s->type != PF_JNUM || s->num != floor(s->num) || s->num < 1 || s->num > 0x7fffffff)
			return bad(c, "\"%s\" is not null or a whole number from 1", "size");
		r->size = (int)s->num;
		if (r->rank >= r->size)
			return pfc_err(c->err, PFLOPS_EINVAL, "%s: rank %d is not below the job size %d", c->name,
				       r->rank, r->size);
	}
	return 0;
}

/* {"METRIC": number ...}: *set the metrics named, v their values */
static int get_metrics(struct ctx *c, const struct pf_jval *o, const char *key, int skip_others, unsigned *set,
		       double *v)
{
	*set = 0;
	if (!o || o->type != PF_JOBJ)
		return bad(c, o ? "\"%s\" is not an object" : "no \"%s\": not a papi_flops_run --json report", key);
	for (size_t i = 0; i < o->n; i++) {
		int m = pflops_metric_from_name(o->keys[i]);
		if (m < 0 || strcmp(o->keys[i], pflops_metric_name(m))) {
			if (skip_others)
				continue;
			return pfc_err(c->err, PFLOPS_EINVAL, "%s: \"%s\" holds \"%s\", which is no metric", c->name,
				       key, o->keys[i]);
		}
		if (v && (o->items[i].type != PF_JNUM || o->items[i].num < 0))
			return pfc_err(c->err, PFLOPS_EINVAL, "%s: %s.%s is not a count (a number from 0)", c->name,
				       key, o->keys[i]);
		if (v)
			v[m] = o->items[i].num;
		*set |= 1u << m;
	}
	return 0;
}

static int get_accuracy(struct ctx *c, const struct pf_jval *o, struct pf_rankrep *r)
{
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		r->klass[m] = -1;
	if (!o)
		return 0;
	if (o->type != PF_JOBJ)
		return bad(c, "\"%s\" is not an object", "accuracy");
	for (size_t i = 0; i < o->n; i++) {
		int m = pflops_metric_from_name(o->keys[i]), k = 0;
		if (m < 0 || o->items[i].type != PF_JSTR)
			return bad(c, "\"%s\" holds something else than a metric's class", "accuracy");
		while (k < PFLOPS_NCLASS && strcmp(o->items[i].str, pflops_class_name(k)))
			k++;
		if (k == PFLOPS_NCLASS)
			return pfc_err(c->err, PFLOPS_EINVAL, "%s: accuracy.%s is \"%s\", no accuracy class", c->name,
				       o->keys[i], o->items[i].str);
		r->klass[m] = k;
	}
	return 0;
}

static int get_caveats(struct ctx *c, const struct pf_jval *a, struct pf_rankrep *r)
{
	int rc = 0;
	if (!a)
		return 0;
	if (a->type != PF_JARR)
		return bad(c, "\"%s\" is not an array", "caveats");
	if (!(r->caveats = calloc(a->n + 1, sizeof(char *))))
		return pfc_err(c->err, PFLOPS_ENOMEM, "%s: out of memory", c->name);
	for (size_t i = 0; i < a->n && !rc; i++) {
		if (a->items[i].type != PF_JSTR)
			return bad(c, "\"%s\" holds something else than a string", "caveats");
		if ((r->caveats[i] = dup_or_fail(c, a->items[i].str, &rc)))
			r->ncaveats++;
	}
	return rc;
}

/* "by_function": {"values", "rows": [{"function", "object", METRIC ...}], "rest": {"functions", METRIC ...}} */
static int get_byfunc(struct ctx *c, const struct pf_jval *b, struct pf_rankrep *r)
{
	int rc;
	if (!b)
		return 0;
	const struct pf_jval *rows = pf_json_get(b, "rows"), *rest = pf_json_get(b, "rest");
	if (b->type != PF_JOBJ || !rows || rows->type != PF_JARR || !rest)
		return bad(c, "\"%s\" is not an object with \"rows\" (an array) and \"rest\"", "by_function");
	if ((rc = get_str(c, b, "values", 1, &r->fvalues)) ||
	    (rc = get_metrics(c, rest, "by_function.rest", 1, &r->fmetrics, r->frest)))
		return rc;
	double nrest;
	if ((rc = get_num(c, rest, "functions", &nrest, NULL)))
		return rc;
	if (nrest != floor(nrest) || nrest > 1e12)
		return bad(c, "%s.rest.functions is not a count of functions", "by_function");
	r->frest_count = (size_t)nrest;
	if (r->fmetrics & ~r->metrics)
		return bad(c, "%s gives a metric per function that the report has no total for", "by_function");
	if (rows->n && !(r->funcs = calloc(rows->n, sizeof(*r->funcs))))
		return pfc_err(c->err, PFLOPS_ENOMEM, "%s: out of memory", c->name);
	for (size_t i = 0; i < rows->n; i++) {
		const struct pf_jval *row = &rows->items[i], *obj = pf_json_get(row, "object");
		struct pf_jfunc *f = &r->funcs[r->nfuncs];
		unsigned set;
		if (row->type != PF_JOBJ)
			return bad(c, "%s.rows holds something else than an object", "by_function");
		if ((rc = get_str(c, row, "function", 1, &f->name)))
			return rc;
		r->nfuncs++; /* freed with the report from here on */
		if (!obj || (obj->type != PF_JNULL && obj->type != PF_JSTR))
			return bad(c, "a row of %s has no \"object\" (a file name or null)", "by_function");
		if (obj->type == PF_JSTR && !(f->object = dup_or_fail(c, obj->str, &rc)))
			return rc;
		const struct pf_jval *sym = pf_json_get(row, "symbol");
		f->has_symbol = sym && sym->type == PF_JBOOL && sym->b;
		if ((rc = get_metrics(c, row, "by_function.rows", 1, &set, f->v)))
			return rc;
		if (set != r->fmetrics)
			return bad(c, "the rows of %s do not all give the same metrics", "by_function");
	}
	return 0;
}

int pf_rankrep_parse(const char *text, size_t len, const char *name, struct pf_rankrep *r, struct pflops_error *err)
{
	struct ctx c = { .name = name, .err = err };
	struct pf_jval doc;
	char *tool = NULL, *sig = NULL;
	int rc, have_start, have_end, have_wall;

	memset(r, 0, sizeof(*r));
	if (!(r->file = strdup(name)))
		return pfc_err(err, PFLOPS_ENOMEM, "%s: out of memory", name);
	if ((rc = pf_json_parse(text, len, &doc, err))) {
		char msg[PFLOPS_ERRMSG_MAX];
		snprintf(msg, sizeof(msg), "%s", err->msg);
		pfc_err(err, rc, "%s is not valid JSON: %s", name, msg);
		pf_rankrep_free(r);
		return rc;
	}
	if (doc.type != PF_JOBJ) {
		rc = bad(&c, "%s is not a JSON object, so no papi_flops_run --json report", "its content");
		goto out;
	}
	if ((rc = get_str(&c, &doc, "tool", 1, &tool)))
		goto out;
	if (!strcmp(tool, "papi_flops_report")) {
		rc = pfc_err(err, PFLOPS_EINVAL,
			     "%s is a job report (papi_flops_report --json), not one rank's: give the "
			     "per-rank files papi_flops_run wrote",
			     name);
		goto out;
	}
	if (strcmp(tool, "papi_flops_run")) {
		rc = pfc_err(err, PFLOPS_EINVAL, "%s was written by \"%s\", not papi_flops_run --json", name, tool);
		goto out;
	}
	if ((rc = get_rank(&c, &doc, r)) || (rc = get_str(&c, &doc, "host", 1, &r->host)) ||
	    (rc = get_str(&c, &doc, "launcher", 1, &r->launcher)) ||
	    (rc = get_str(&c, &doc, "source", 1, &r->source)) || (rc = get_str(&c, &doc, "pmu", 1, &r->pmu)) ||
	    (rc = get_str(&c, &doc, "source_detail", 0, &r->source_detail)) ||
	    (rc = get_str(&c, &doc, "program", 0, &r->program)) || (rc = get_bool(&c, &doc, "partial", &r->partial)) ||
	    (rc = get_num(&c, &doc, "wall_seconds", &r->wall, &have_wall)) ||
	    (have_wall && (rc = get_bool(&c, &doc, "wall_is_native", &r->wall_native))) ||
	    (rc = get_num(&c, &doc, "started", &r->started, &have_start)) ||
	    (rc = get_num(&c, &doc, "ended", &r->ended, &have_end)) ||
	    (rc = get_metrics(&c, pf_json_get(&doc, "metrics"), "metrics", 0, &r->metrics, r->v)) ||
	    (rc = get_accuracy(&c, pf_json_get(&doc, "accuracy"), r)) ||
	    (rc = get_caveats(&c, pf_json_get(&doc, "caveats"), r)) ||
	    (rc = get_byfunc(&c, pf_json_get(&doc, "by_function"), r)))
		goto out;
	const struct pf_jval *un = pf_json_get(&doc, "unavailable");
	if (un && (rc = get_metrics(&c, un, "unavailable", 0, &r->unavailable, NULL)))
		goto out;
	if (have_start != have_end || (have_start && !(r->started > 0 && r->ended >= r->started))) {
		rc = bad(&c, "%s: a start without an end, or an end before the start", "\"started\" and \"ended\"");
		goto out;
	}
	/* why partial: the tool's signal, or the program's */
	if ((rc = get_str(&c, &doc, "interrupted", 0, &sig)))
		goto out;
	if (!sig && (rc = get_str(&c, &doc, "killed_by", 0, &sig)))
		goto out;
	if (r->partial)
		snprintf(r->why, sizeof(r->why), "%s %.40s",
			 pf_json_get(&doc, "interrupted") ? "interrupted by" : "killed by", sig ? sig : "a signal");
out:
	free(tool);
	free(sig);
	pf_json_free(&doc);
	if (rc)
		pf_rankrep_free(r);
	return rc;
}

int pf_rankrep_load(const char *path, struct pf_rankrep *r, struct pflops_error *err)
{
	/* O_NONBLOCK: a FIFO given by mistake must not hang the open */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	memset(r, 0, sizeof(*r));
	if (fd < 0)
		return pfc_err(err, errno == ENOENT ? PFLOPS_ENOENT : PFLOPS_ESYS, "cannot read %s: %s", path,
			       strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return pfc_err(err, PFLOPS_EINVAL, "%s is not a regular file: give papi_flops_run's --json reports",
			       path);
	}
	if ((unsigned long long)st.st_size > PF_JOB_FILE_MAX) {
		close(fd);
		return pfc_err(err, PFLOPS_EINVAL, "%s has %lld bytes, more than a report has (%u MiB at most)", path,
			       (long long)st.st_size, PF_JOB_FILE_MAX >> 20);
	}
	size_t cap = (size_t)st.st_size + 1, n = 0; /* one more: a file that grew is seen */
	char *buf = malloc(cap);
	ssize_t k = 0;
	if (!buf) {
		close(fd);
		return pfc_err(err, PFLOPS_ENOMEM, "%s: out of memory", path);
	}
	while (n < cap && (k = read(fd, buf + n, cap - n)) > 0)
		n += (size_t)k;
	int e = errno;
	close(fd);
	int rc;
	if (k < 0)
		rc = pfc_err(err, PFLOPS_ESYS, "cannot read %s: %s", path, strerror(e));
	else if (n == cap)
		rc = pfc_err(err, PFLOPS_EINVAL, "%s grew while it was read: wait until papi_flops_run has written it",
			     path);
	else if (memchr(buf, 0, n))
		rc = pfc_err(err, PFLOPS_EINVAL, "%s holds a NUL byte: not a papi_flops_run --json report", path);
	else
		rc = pf_rankrep_parse(buf, n, path, r, err);
	free(buf);
	return rc;
}
