/*
 * The FLOP profile of papi_flops_run --sample (pf_sample.h): frames
 * interned by (name, file), call paths counted in a hash by their frame
 * ids, and the tables and the folded file made from them at the end.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pf_sample.h"
#include "pf_json.h"
#include "pf_report.h"

struct pf_sample_frame {
	char *name, *object;
};

struct pf_sample_path {
	int *ids; /* innermost first */
	int depth;
	uint64_t n;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ULL;
}

static uint64_t str_hash(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = mix(h, (unsigned char)*s);
	return mix(h, 0xff);
}

static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? 2 * *cap : 64;
	void *q = realloc(*p, nc * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}

/* open addressing, -1 empty; rebuilt at half full */
static int rehash(int **tab, size_t *cap, size_t n, uint64_t (*key)(const struct pf_sample *, int),
		  const struct pf_sample *s)
{
	if (2 * (n + 1) <= *cap)
		return 0;
	size_t nc = *cap ? 2 * *cap : 256;
	int *t = malloc(nc * sizeof(*t));
	if (!t)
		return -1;
	memset(t, 0xff, nc * sizeof(*t));
	for (size_t i = 0; i < n; i++) {
		size_t h = key(s, (int)i) & (nc - 1);
		while (t[h] >= 0)
			h = (h + 1) & (nc - 1);
		t[h] = (int)i;
	}
	free(*tab);
	*tab = t;
	*cap = nc;
	return 0;
}

static uint64_t frame_key(const struct pf_sample *s, int i)
{
	return str_hash(str_hash(0xcbf29ce484222325ULL, s->frames[i].name), s->frames[i].object);
}

static uint64_t ids_hash(const int *ids, int depth)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (int i = 0; i < depth; i++)
		h = mix(mix(h, (uint32_t)ids[i]), (uint32_t)ids[i] >> 16);
	return mix(h, (uint64_t)depth);
}

static uint64_t path_key(const struct pf_sample *s, int i)
{
	return ids_hash(s->paths[i].ids, s->paths[i].depth);
}

struct pf_sample *pf_sample_new(uint64_t period, int metric, int exact)
{
	struct pf_sample *s = calloc(1, sizeof(*s));
	if (s) {
		s->period = period;
		s->metric = metric;
		s->exact = exact;
	}
	return s;
}

void pf_sample_free(struct pf_sample *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nframes; i++) {
		free(s->frames[i].name);
		free(s->frames[i].object);
	}
	for (size_t i = 0; i < s->npaths; i++)
		free(s->paths[i].ids);
	free(s->frames);
	free(s->paths);
	free(s->fhash);
	free(s->phash);
	free(s);
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

int pf_sample_frame_id(struct pf_sample *s, const char *name, const char *object)
{
	uint64_t h = str_hash(str_hash(0xcbf29ce484222325ULL, name), object);
	for (size_t i = s->fhcap ? h & (s->fhcap - 1) : 0; s->fhcap && s->fhash[i] >= 0; i = (i + 1) & (s->fhcap - 1)) {
		const struct pf_sample_frame *f = &s->frames[s->fhash[i]];
		if (!strcmp(f->name, name) && same(f->object, object))
			return s->fhash[i];
	}
	if (grow((void **)&s->frames, &s->capframes, s->nframes, sizeof(*s->frames)))
		goto oom;
	struct pf_sample_frame *f = &s->frames[s->nframes];
	f->name = strdup(name);
	f->object = object ? strdup(object) : NULL;
	if (!f->name || (object && !f->object)) {
		free(f->name);
		free(f->object);
		goto oom;
	}
	s->nframes++;
	if (rehash(&s->fhash, &s->fhcap, s->nframes - 1, frame_key, s)) {
		s->nframes--;
		free(f->name);
		free(f->object);
		goto oom;
	}
	size_t i = h & (s->fhcap - 1);
	while (s->fhash[i] >= 0)
		i = (i + 1) & (s->fhcap - 1);
	s->fhash[i] = (int)s->nframes - 1;
	return (int)s->nframes - 1;
oom:
	s->oom = 1;
	return -1;
}

void pf_sample_add(struct pf_sample *s, const int *ids, int depth, uint64_t n)
{
	if (depth <= 0)
		return;
	s->samples += n;
	uint64_t h = ids_hash(ids, depth);
	for (size_t i = s->phcap ? h & (s->phcap - 1) : 0; s->phcap && s->phash[i] >= 0; i = (i + 1) & (s->phcap - 1)) {
		struct pf_sample_path *p = &s->paths[s->phash[i]];
		if (p->depth == depth && !memcmp(p->ids, ids, depth * sizeof(*ids))) {
			p->n += n;
			return;
		}
	}
	if (grow((void **)&s->paths, &s->cappaths, s->npaths, sizeof(*s->paths)))
		goto oom;
	struct pf_sample_path *p = &s->paths[s->npaths];
	if (!(p->ids = malloc(depth * sizeof(*ids))))
		goto oom;
	memcpy(p->ids, ids, depth * sizeof(*ids));
	p->depth = depth;
	p->n = n;
	s->npaths++;
	if (rehash(&s->phash, &s->phcap, s->npaths - 1, path_key, s)) {
		free(p->ids);
		s->npaths--;
		goto oom;
	}
	size_t i = h & (s->phcap - 1);
	while (s->phash[i] >= 0)
		i = (i + 1) & (s->phcap - 1);
	s->phash[i] = (int)s->npaths - 1;
	return;
oom:
	s->oom = 1;
}

/* ---- tables ------------------------------------------------------------ */

struct row {
	int id; /* a frame (by function) or a path */
	uint64_t n;
};

static const struct pf_sample *sort_s;
static int by_function;

static int row_cmp(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	if (by_function)
		return strcmp(sort_s->frames[a->id].name, sort_s->frames[b->id].name);
	return a->id - b->id;
}

/* the rows of one table, most samples first; *nrows of them */
static struct row *rows(const struct pf_sample *s, int func, size_t *nrows)
{
	size_t n = func ? s->nframes : s->npaths, k = 0;
	struct row *r = calloc(n ? n : 1, sizeof(*r));
	if (!r)
		return NULL;
	if (func) {
		for (size_t i = 0; i < n; i++)
			r[i].id = (int)i;
		for (size_t i = 0; i < s->npaths; i++)
			r[s->paths[i].ids[0]].n += s->paths[i].n;
		for (size_t i = 0; i < n; i++)
			if (r[i].n)
				r[k++] = r[i];
	} else {
		for (size_t i = 0; i < n; i++)
			r[k++] = (struct row){ (int)i, s->paths[i].n };
	}
	sort_s = s;
	by_function = func;
	qsort(r, k, sizeof(*r), row_cmp);
	*nrows = k;
	return r;
}

/* A row of n samples: P where the thresholds fall (a row's exact count
 * is within P of n * P for each stretch of the run spent in it, both
 * sources), and for hw sampling the statistical spread too, 2 sqrt(n) P
 * (95%, the overflows of a row as a Poisson count). */
static double row_error(const struct pf_sample *s, uint64_t n)
{
	double P = (double)s->period;
	return s->exact ? P : P + 2 * sqrt((double)n) * P;
}

static void path_string(const struct pf_sample *s, const struct pf_sample_path *p, char *buf, size_t len, int folded)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = p->depth; i-- > 0 && at + 1 < len;) {
		const char *nm = s->frames[p->ids[i]].name;
		int w = snprintf(buf + at, len - at, "%s%s", at ? folded ? ";" : " > " : "", nm);
		if (w < 0)
			break;
		if (folded) /* ';' separates frames, a line ends a path */
			for (size_t j = at + (at ? 1 : 0); j < at + (size_t)w && j < len; j++)
				if (buf[j] == '\n' || buf[j] == ';')
					buf[j] = buf[j] == '\n' ? ' ' : ':';
		at += (size_t)w;
	}
}

static const char *what(const struct pf_sample *s)
{
	return pflops_metric_name(s->metric);
}

static void method(const struct pf_sample *s, char *buf, size_t len)
{
	char p[32];
	pf_grouped((double)s->period, p, sizeof(p));
	if (s->exact)
		snprintf(buf, len,
			 "trace: an exact overflow each time %s crosses a multiple of %s, at the FP instruction "
			 "that crossed it; each stands for %s %s; a row is within +-%s of its exact count for "
			 "each stretch of the run spent in it",
			 what(s), p, p, what(s), p);
	else
		snprintf(buf, len,
			 "hw: each native event of the formula sampled every ceil(%s / weight) counts, each "
			 "sample stands for %s %s; a row of n samples: +-%s where the thresholds fall, +-2 "
			 "sqrt(n) x %s statistical (95%%)",
			 p, p, what(s), p, p);
}

void pf_sample_text(FILE *o, const void *sv)
{
	const struct pf_sample *s = sv;
	unsigned top = s->top;
	char m[600], a[32], b[32], c[32], lab[1200];
	size_t nf = 0, np = 0;
	struct row *rf = rows(s, 1, &nf), *rp = rows(s, 0, &np);
	double P = (double)s->period, total = (double)s->samples * P;
	method(s, m, sizeof(m));
	fprintf(o, "\nFLOP profile (--sample %s)\n  %s\n", pf_grouped(P, a, sizeof(a)), m);
	if (s->standin)
		fprintf(o,
			"  TEST STAND-IN: every native event is the software event %s: the figures count it, not FLOPs\n",
			s->standin);
	fprintf(o, "  samples %s: %s %s", pf_grouped((double)s->samples, a, sizeof(a)), pf_grouped(total, b, sizeof(b)),
		what(s));
	if (s->counted > 0)
		fprintf(o, " (counted: %s)", pf_grouped(s->counted, c, sizeof(c)));
	if (s->lost)
		fprintf(o, "; %s sample records lost (ring full)", pf_grouped((double)s->lost, c, sizeof(c)));
	if (s->unwound_short)
		fprintf(o, "; %s stacks cut short (too deep, or at a function without %s: their paths start there)",
			pf_grouped((double)s->unwound_short, c, sizeof(c)),
			s->exact ? "call-frame information, such as hand-written assembly" : "a frame pointer");
	fprintf(o, "\n");
	for (int i = 0; i < s->nnative; i++)
		fprintf(o, "  %-40s weight %-3g period %-12llu samples %s\n", s->native[i].name, s->native[i].weight,
			(unsigned long long)s->native[i].period,
			pf_grouped((double)s->native[i].samples, a, sizeof(a)));
	if (!rf || !rp || s->oom) {
		fprintf(o, "  (out of memory: no table)\n");
		goto out;
	}
	size_t lf = top && nf > top ? top : nf, lp = top && np > top ? top : np;
	fprintf(o, "  by function (self, as --by-function; %zu of %zu):\n  %15s %7s %9s %15s  function\n", lf, nf,
		what(s), "share", "samples", "+-");
	for (size_t i = 0; i < lf; i++) {
		const struct pf_sample_frame *f = &s->frames[rf[i].id];
		pf_func_label(f->name, f->object, f->object && !strstr(f->name, " (no symbol)"), lab, sizeof(lab));
		fprintf(o, "  %15s %6.1f%% %9llu %15s  %s\n", pf_grouped((double)rf[i].n * P, a, sizeof(a)),
			100.0 * (double)rf[i].n / (double)(s->samples ? s->samples : 1), (unsigned long long)rf[i].n,
			pf_grouped(row_error(s, rf[i].n), b, sizeof(b)), lab);
	}
	fprintf(o, "  by call path (outermost first; %zu of %zu):\n  %15s %7s %9s  path\n", lp, np, what(s), "share",
		"samples");
	for (size_t i = 0; i < lp; i++) {
		path_string(s, &s->paths[rp[i].id], lab, sizeof(lab), 0);
		fprintf(o, "  %15s %6.1f%% %9llu  %s\n", pf_grouped((double)rp[i].n * P, a, sizeof(a)),
			100.0 * (double)rp[i].n / (double)(s->samples ? s->samples : 1), (unsigned long long)rp[i].n,
			lab);
	}
out:
	free(rf);
	free(rp);
}

void pf_sample_json(FILE *o, const void *sv)
{
	const struct pf_sample *s = sv;
	unsigned top = s->top;
	char m[600], lab[1200];
	size_t nf = 0, np = 0;
	struct row *rf = rows(s, 1, &nf), *rp = rows(s, 0, &np);
	double P = (double)s->period;
	method(s, m, sizeof(m));
	fprintf(o, "{\"period\": %llu, ", (unsigned long long)s->period);
	pf_json_kv(o, "metric", what(s), 1);
	pf_json_kv(o, "source", s->exact ? "trace" : "hw", 1);
	pf_json_kv(o, "method", m, 1);
	if (s->standin)
		pf_json_kv(o, "test_standin", s->standin, 1);
	fprintf(o, "\"samples\": %llu, \"sampled\": %.0f, \"counted\": %.0f, \"lost\": %llu, \"stacks_cut\": %llu",
		(unsigned long long)s->samples, (double)s->samples * P, s->counted, (unsigned long long)s->lost,
		(unsigned long long)s->unwound_short);
	fprintf(o, ", \"natives\": [");
	for (int i = 0; i < s->nnative; i++) {
		fprintf(o, "%s{", i ? ", " : "");
		pf_json_kv(o, "event", s->native[i].name, 1);
		fprintf(o, "\"weight\": %g, \"period\": %llu, \"samples\": %llu, \"count\": %.0f}", s->native[i].weight,
			(unsigned long long)s->native[i].period, (unsigned long long)s->native[i].samples,
			s->native[i].count);
	}
	fprintf(o, "]");
	if (!rf || !rp || s->oom) {
		fprintf(o, ", \"error\": \"out of memory\"}");
		goto out;
	}
	size_t lf = top && nf > top ? top : nf, lp = top && np > top ? top : np;
	fprintf(o, ", \"functions\": %zu, \"by_function\": [", nf);
	for (size_t i = 0; i < lf; i++) {
		const struct pf_sample_frame *f = &s->frames[rf[i].id];
		fprintf(o, "%s{", i ? ", " : "");
		pf_json_kv(o, "function", f->name, 1);
		fprintf(o, "\"object\": ");
		pf_json_str_or_null(o, f->object);
		fprintf(o, ", \"samples\": %llu, \"flops\": %.0f, \"error\": %.0f}", (unsigned long long)rf[i].n,
			(double)rf[i].n * P, row_error(s, rf[i].n));
	}
	fprintf(o, "], \"paths\": %zu, \"by_path\": [", np);
	for (size_t i = 0; i < lp; i++) {
		const struct pf_sample_path *p = &s->paths[rp[i].id];
		fprintf(o, "%s{\"path\": [", i ? ", " : "");
		for (int d = p->depth; d-- > 0;) {
			pf_json_str(o, s->frames[p->ids[d]].name);
			fprintf(o, "%s", d ? ", " : "");
		}
		fprintf(o, "], \"samples\": %llu, \"flops\": %.0f}", (unsigned long long)p->n, (double)p->n * P);
	}
	fprintf(o, "]}");
	(void)lab;
out:
	free(rf);
	free(rp);
}

static int path_cmp(const void *pa, const void *pb)
{
	return strcmp(*(char *const *)pa, *(char *const *)pb);
}

int pf_sample_folded(const struct pf_sample *s, const char *file)
{
	char **lines = calloc(s->npaths ? s->npaths : 1, sizeof(*lines));
	char buf[8192];
	int rc = 0;
	FILE *f = fopen(file, "we");
	if (!f || !lines || s->oom) {
		fprintf(stderr, "papi_flops_run: --folded %s: %s\n", file,
			!f ? strerror(errno) : "out of memory while sampling: no complete profile to write");
		if (f)
			fclose(f);
		free(lines);
		return -1;
	}
	size_t k = 0;
	for (size_t i = 0; i < s->npaths; i++) {
		path_string(s, &s->paths[i], buf, sizeof(buf), 1);
		char num[32];
		snprintf(num, sizeof(num), " %.0f", (double)s->paths[i].n * (double)s->period);
		size_t len = strlen(buf);
		if (!(lines[k] = malloc(len + strlen(num) + 1))) {
			rc = -1;
			break;
		}
		memcpy(lines[k], buf, len);
		strcpy(lines[k] + len, num);
		k++;
	}
	qsort(lines, k, sizeof(*lines), path_cmp); /* the same file for the same profile */
	for (size_t i = 0; i < k; i++) {
		fprintf(f, "%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	if (fclose(f) || rc) {
		fprintf(stderr, "papi_flops_run: --folded %s: %s\n", file, rc ? "out of memory" : strerror(errno));
		return -1;
	}
	return 0;
}
