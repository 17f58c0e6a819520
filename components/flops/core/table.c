/*
 * Parser of the presets table (format: presets/README.md).  Every error
 * names file:line and what to write instead; the table is data, so a
 * mistake in it must stop the build, never reach a user as a wrong count.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "pflops_internal.h"

struct ctx {
	struct pflops_table *t;
	const char *file;
	int line;
	struct pflops_error *err;
	struct pflops_pmu *pmu; /* block being read */
	int nlines_in_block;	/* directives since `pmu` (for `like`) */
	int pmus;		/* blocks this text opened */
};

/* every parse error reads "file:line: what is wrong; what to write" */
#define PERR(c, fmt, ...) pfc_err((c)->err, PFLOPS_EINVAL, "%s:%d: " fmt, (c)->file, (c)->line, ##__VA_ARGS__)

static char *next_word(char **s)
{
	char *p = *s;
	while (isspace((unsigned char)*p))
		p++;
	if (!*p)
		return NULL;
	char *w = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	if (*p)
		*p++ = 0;
	*s = p;
	return w;
}

static char *rest_of_line(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

static int parse_uint(const char *s, unsigned *v)
{
	char *end;
	errno = 0;
	unsigned long x = strtoul(s, &end, 0);
	if (errno || end == s || *end || x > 0xffffffffUL)
		return -1;
	*v = (unsigned)x;
	return 0;
}

/* "5" or "0-4" or "0x55"; empty or longer than any number: bad */
static int parse_range(const char *s, unsigned *lo, unsigned *hi)
{
	char buf[64];
	if (!*s || strlen(s) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", s);
	char *dash = strchr(buf + 1, '-');
	if (dash) {
		*dash = 0;
		return parse_uint(buf, lo) || parse_uint(dash + 1, hi) || *lo > *hi ? -1 : 0;
	}
	if (parse_uint(buf, lo))
		return -1;
	*hi = *lo;
	return 0;
}

static int find_event(const struct pflops_pmu *pmu, const char *alias)
{
	for (int i = 0; i < pmu->nevents; i++)
		if (!strcmp(pmu->events[i].alias, alias))
			return i;
	return -1;
}

static void metric_clear(struct pflops_metric_def *m)
{
	free(m->formula);
	free(m->caveat);
	free(m->terms);
	memset(m, 0, sizeof(*m));
	m->klass = -1;
}

static void pmu_free(struct pflops_pmu *pmu)
{
	for (int i = 0; i < pmu->nevents; i++) {
		free(pmu->events[i].spec);
		free(pmu->events[i].model);
		free(pmu->events[i].note);
	}
	free(pmu->events);
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		metric_clear(&pmu->metrics[m]);
	free(pmu->matches);
	free((char *)pmu->file);
}

void pflops_table_free(struct pflops_table *t)
{
	for (int i = 0; i < t->npmus; i++)
		pmu_free(&t->pmus[i]);
	free(t->pmus);
	t->pmus = NULL;
	t->npmus = 0;
}

const struct pflops_pmu *pflops_table_find(const struct pflops_table *t, const char *name)
{
	for (int i = 0; i < t->npmus; i++) {
		const struct pflops_pmu *p = &t->pmus[i];
		if (!strcasecmp(p->name, name))
			return p;
		for (int a = 0; a < 4; a++)
			if (p->aliases[a][0] && !strcasecmp(p->aliases[a], name))
				return p;
	}
	return NULL;
}

/* Copy everything a `like` block inherits: events, metrics, counters,
 * encoding settings.  Not: name, title, aliases, matches. */
static int pmu_inherit(struct ctx *c, struct pflops_pmu *dst, const struct pflops_pmu *src)
{
	/* libpfm4's PMU is the block's own name unless the parent set one */
	snprintf(dst->libpfm, sizeof(dst->libpfm), "%s", strcmp(src->libpfm, src->name) ? src->libpfm : dst->name);
	snprintf(dst->sysfs, sizeof(dst->sysfs), "%s", src->sysfs);
	dst->arch = src->arch;
	dst->counters_smt = src->counters_smt;
	dst->counters_nosmt = src->counters_nosmt;
	dst->sve_bits = src->sve_bits;
	dst->cycles_general = src->cycles_general;
	dst->detect = src->detect;
	dst->events = calloc(src->nevents ? src->nevents : 1, sizeof(*dst->events));
	if (!dst->events)
		return pfc_err(c->err, PFLOPS_ENOMEM, "out of memory");
	for (int i = 0; i < src->nevents; i++) {
		dst->events[i] = src->events[i];
		dst->events[i].spec = pfc_strdup(src->events[i].spec);
		dst->events[i].model = pfc_strdup(src->events[i].model);
		dst->events[i].note = pfc_strdup(src->events[i].note);
	}
	dst->nevents = src->nevents;
	for (int m = 0; m < PFLOPS_NMETRIC; m++) {
		const struct pflops_metric_def *s = &src->metrics[m];
		struct pflops_metric_def *d = &dst->metrics[m];
		*d = *s;
		d->formula = pfc_strdup(s->formula);
		d->caveat = pfc_strdup(s->caveat);
		d->terms = NULL;
		if (s->nterms) {
			d->terms = malloc(s->nterms * sizeof(*d->terms));
			if (!d->terms)
				return pfc_err(c->err, PFLOPS_ENOMEM, "out of memory");
			memcpy(d->terms, s->terms, s->nterms * sizeof(*d->terms));
		}
	}
	return 0;
}

/* weight of event ev in metric d (0 when absent) */
static void term_of(const struct pflops_metric_def *d, int ev, double *w0, double *wvl)
{
	*w0 = *wvl = 0;
	for (int k = 0; k < d->nterms; k++)
		if (d->terms[k].event == ev) {
			*w0 += d->terms[k].w0;
			*wvl += d->terms[k].wvl;
		}
}

/* A detect line makes sense when both metrics are available and PART's
 * formula is a piece of METRIC's: each of PART's events carries the same
 * weight in both, so METRIC minus PART is METRIC without those events. */
static int detect_check(struct ctx *c, const struct pflops_pmu *p)
{
	const struct pflops_detect *d = &p->detect;
	const struct pflops_metric_def *m = &p->metrics[d->metric], *part = &p->metrics[d->part];
	c->line = d->line;
	if (m->klass == PFLOPS_UNAVAILABLE || part->klass == PFLOPS_UNAVAILABLE)
		return PERR(c, "pmu %s: detect %s %s: both metrics must be available", p->name,
			    pflops_metric_name(d->metric), pflops_metric_name(d->part));
	c->pmu->detect.drop = 0;
	for (int k = 0; k < part->nterms; k++) {
		double a0, avl, b0, bvl;
		if (part->terms[k].event >= 64)
			return PERR(c, "pmu %s: detect: %s's events must be among the block's first 64", p->name,
				    pflops_metric_name(d->part));
		c->pmu->detect.drop |= 1ULL << part->terms[k].event;
		term_of(part, part->terms[k].event, &a0, &avl);
		term_of(m, part->terms[k].event, &b0, &bvl);
		if (a0 != b0 || avl != bvl)
			return PERR(
				c,
				"pmu %s: detect: event %s weighs differently in %s and %s; %s must be a piece of %s's formula",
				p->name, p->events[part->terms[k].event].alias, pflops_metric_name(d->metric),
				pflops_metric_name(d->part), pflops_metric_name(d->part),
				pflops_metric_name(d->metric));
	}
	return 0;
}

/* A block is complete: every metric declared, every caveat present. */
static int pmu_finish(struct ctx *c)
{
	struct pflops_pmu *p = c->pmu;
	if (!p)
		return 0;
	int save = c->line;
	c->line = p->line;
	int rc = 0;
	if (!p->nmatches)
		rc = PERR(c, "pmu %s: no 'match' line; say which CPUs use it", p->name);
	else if (p->counters_smt <= 0)
		rc = PERR(c, "pmu %s: no 'counters' line; give the general-purpose counters per logical thread",
			  p->name);
	for (int m = 0; !rc && m < PFLOPS_NMETRIC; m++) {
		const struct pflops_metric_def *d = &p->metrics[m];
		if ((int)d->klass < 0)
			rc = PERR(
				c,
				"pmu %s: metric %s not declared; add 'metric %s CLASS = FORMULA' or 'metric %s unavailable'",
				p->name, pflops_metric_name(m), pflops_metric_name(m), pflops_metric_name(m));
		else if (d->klass != PFLOPS_EXACT && (!d->caveat || !*d->caveat))
			rc = PERR(c, "pmu %s: metric %s (%s) has no caveat; add 'caveat %s TEXT' saying %s", p->name,
				  pflops_metric_name(m), pflops_class_name(d->klass), pflops_metric_name(m),
				  d->klass == PFLOPS_UNAVAILABLE ? "why" : "what the number misses or adds");
	}
	if (!rc && p->detect.line)
		rc = detect_check(c, p);
	for (int i = 0; !rc && i < p->nevents; i++) {
		int used = p->detect.line && p->detect.event == i;
		for (int m = 0; m < PFLOPS_NMETRIC; m++)
			for (int k = 0; k < p->metrics[m].nterms; k++)
				used |= p->metrics[m].terms[k].event == i;
		if (!used && !p->events[i].note) {
			c->line = p->events[i].line;
			rc = PERR(
				c,
				"pmu %s: event %s is used by no metric; remove it, use it, or say why it is kept with 'note %s TEXT'",
				p->name, p->events[i].alias, p->events[i].alias);
		}
	}
	c->line = save;
	c->pmu = NULL;
	return rc;
}

static int do_pmu(struct ctx *c, char *args)
{
	char *name = next_word(&args);
	if (!name || next_word(&args))
		return PERR(c, "usage: pmu NAME");
	if (pmu_finish(c))
		return PFLOPS_EINVAL;
	if (pflops_table_find(c->t, name))
		return PERR(c, "pmu %s defined twice", name);
	if (strlen(name) >= PFLOPS_NAME_MAX)
		return PERR(c, "pmu name '%s' too long", name);
	struct pflops_pmu *np = realloc(c->t->pmus, (c->t->npmus + 1) * sizeof(*np));
	if (!np)
		return pfc_err(c->err, PFLOPS_ENOMEM, "out of memory");
	c->t->pmus = np;
	struct pflops_pmu *p = &np[c->t->npmus++];
	c->pmus++;
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->libpfm, sizeof(p->libpfm), "%s", name);
	snprintf(p->sysfs, sizeof(p->sysfs), "cpu");
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		p->metrics[m].klass = -1;
	p->file = pfc_strdup(c->file);
	p->line = c->line;
	c->pmu = p;
	c->nlines_in_block = 0;
	return 0;
}

static int do_like(struct ctx *c, char *args)
{
	char *other = next_word(&args);
	if (!other || next_word(&args))
		return PERR(c, "usage: like PMU");
	if (c->nlines_in_block != 1)
		return PERR(c, "'like' must be the first line after 'pmu %s'", c->pmu->name);
	const struct pflops_pmu *src = pflops_table_find(c->t, other);
	if (!src || src == c->pmu)
		return PERR(c, "like %s: no such pmu defined above", other);
	return pmu_inherit(c, c->pmu, src);
}

static int do_match(struct ctx *c, char *args)
{
	char *vendor = next_word(&args), *fam = next_word(&args), *models = next_word(&args);
	struct pflops_match m = { .step_lo = 0, .step_hi = 0xffffffff, .line = c->line };
	if (!vendor || !fam || !models)
		return PERR(c, "usage: match VENDOR FAMILY MODEL[,MODEL|LO-HI...] [stepping=LO-HI] [core=CORETYPE]");
	if (strcmp(vendor, "intel") && strcmp(vendor, "amd") && strcmp(vendor, "hygon") && strcmp(vendor, "arm"))
		return PERR(c, "unknown vendor '%s'; use intel, amd, hygon or arm", vendor);
	snprintf(m.vendor, sizeof(m.vendor), "%s", vendor);
	if (parse_uint(fam, &m.family))
		return PERR(c, "bad family '%s'; write a number (6, 0x19)", fam);
	for (char *w; (w = next_word(&args));) {
		if (!strncmp(w, "stepping=", 9)) {
			if (parse_range(w + 9, &m.step_lo, &m.step_hi))
				return PERR(c, "bad stepping range '%s'; write stepping=N or stepping=LO-HI", w + 9);
		} else if (!strncmp(w, "core=", 5)) {
			if (!w[5] || strlen(w + 5) >= sizeof(m.coretype))
				return PERR(c, "bad core type '%s'; write hwloc's CoreType (IntelCore, IntelAtom)",
					    w + 5);
			snprintf(m.coretype, sizeof(m.coretype), "%s", w + 5);
		} else {
			return PERR(c, "unknown match option '%s'; use stepping=LO-HI or core=TYPE", w);
		}
	}
	/* one entry per model or model range */
	for (char *save = NULL, *tok = strtok_r(models, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_range(tok, &m.model_lo, &m.model_hi))
			return PERR(c, "bad model '%s'; use numbers (0x55 or 85) or LO-HI", tok);
		struct pflops_match *nm = realloc(c->pmu->matches, (c->pmu->nmatches + 1) * sizeof(*nm));
		if (!nm)
			return pfc_err(c->err, PFLOPS_ENOMEM, "out of memory");
		c->pmu->matches = nm;
		nm[c->pmu->nmatches++] = m;
	}
	return 0;
}

static int do_counters(struct ctx *c, char *args)
{
	char *n = next_word(&args), *kw = next_word(&args), *n2 = next_word(&args);
	unsigned a, b;
	if (!n || parse_uint(n, &a) || a == 0 || a > PFLOPS_MAX_COUNTERS)
		return PERR(c, "usage: counters N [nosmt M]  (N: counters per logical thread with SMT on)");
	b = a;
	if (kw && (strcmp(kw, "nosmt") || !n2 || parse_uint(n2, &b) || b < a || b > PFLOPS_MAX_COUNTERS))
		return PERR(c, "usage: counters N [nosmt M]  (M >= N: counters per thread with SMT off)");
	c->pmu->counters_smt = a;
	c->pmu->counters_nosmt = b;
	return 0;
}

static int valid_spec(const char *s)
{
	if (!strncmp(s, "raw:0x", 6)) {
		const char *h = s + 6;
		if (!*h)
			return 0;
		for (; *h; h++)
			if (!isxdigit((unsigned char)*h))
				return 0;
		return 1;
	}
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != ':' && *s != '.' && *s != '=')
			return 0;
	return 1;
}

static int do_event(struct ctx *c, char *args)
{
	char *alias = next_word(&args), *spec = next_word(&args);
	if (!alias || !spec)
		return PERR(c, "usage: event ALIAS LIBPFM_EVENT[:UMASK...] | raw:0xCODE  [pair] [combine]");
	if (!strcmp(alias, "VL") || !(isalpha((unsigned char)alias[0]) || alias[0] == '_') ||
	    strlen(alias) >= PFLOPS_NAME_MAX)
		return PERR(c, "bad event alias '%s' (letters, digits, '_'; not VL)", alias);
	for (const char *a = alias; *a; a++)
		if (!isalnum((unsigned char)*a) && *a != '_')
			return PERR(c, "bad event alias '%s' (letters, digits, '_'; not VL)", alias);
	if (find_event(c->pmu, alias) >= 0)
		return PERR(c, "event %s declared twice in pmu %s", alias, c->pmu->name);
	if (!valid_spec(spec))
		return PERR(c, "bad event '%s'; write EVENT:UMASK as libpfm4 names it, or raw:0xCODE", spec);
	struct pflops_event e = { .line = c->line };
	for (char *w; (w = next_word(&args));) {
		if (!strcmp(w, "pair"))
			e.pair = 1;
		else if (!strcmp(w, "combine"))
			e.combine = 1;
		else
			return PERR(c, "unknown event flag '%s'; use pair or combine", w);
	}
	snprintf(e.alias, sizeof(e.alias), "%s", alias);
	e.spec = pfc_strdup(spec);
	struct pflops_event *ne = realloc(c->pmu->events, (c->pmu->nevents + 1) * sizeof(*ne));
	if (!ne || !e.spec) {
		free(e.spec);
		return pfc_err(c->err, PFLOPS_ENOMEM, "out of memory");
	}
	c->pmu->events = ne;
	ne[c->pmu->nevents++] = e;
	return 0;
}

static int do_model(struct ctx *c, char *args)
{
	char *alias = next_word(&args);
	char *spec = alias ? rest_of_line(args) : NULL;
	int i = alias ? find_event(c->pmu, alias) : -1;
	if (!alias || !*spec)
		return PERR(c, "usage: model ALIAS UNIT [prec=..] [width=..] [ops=..] [fma=N] [plus=..]");
	if (i < 0)
		return PERR(c, "model for unknown event alias '%s'", alias);
	free(c->pmu->events[i].model);
	c->pmu->events[i].model = pfc_strdup(spec);
	return 0;
}

/* An event kept out of every formula but listed with the perf arguments,
 * so that recordings made with it stay comparable (seed 001's x87 code). */
static int do_note(struct ctx *c, char *args)
{
	char *alias = next_word(&args);
	char *text = alias ? rest_of_line(args) : NULL;
	int i = alias ? find_event(c->pmu, alias) : -1;
	if (!alias || !*text)
		return PERR(c, "usage: note ALIAS TEXT  (what an event in no formula counts)");
	if (i < 0)
		return PERR(c, "note for unknown event alias '%s'", alias);
	free(c->pmu->events[i].note);
	c->pmu->events[i].note = pfc_strdup(text);
	return 0;
}

static int do_metric(struct ctx *c, char *args)
{
	char *name = next_word(&args), *cls = next_word(&args);
	if (!name || !cls)
		return PERR(c, "usage: metric NAME CLASS = FORMULA   or   metric NAME unavailable");
	int m = pflops_metric_from_name(name), k = pfc_class_from_name(cls);
	if (m < 0)
		return PERR(c, "unknown metric '%s'; use %s", name, PFLOPS_METRIC_NAMES);
	if (k < 0)
		return PERR(c, "unknown accuracy class '%s'; use exact masked-full speculative estimate unavailable",
			    cls);
	struct pflops_metric_def *d = &c->pmu->metrics[m];
	metric_clear(d);
	d->klass = k;
	d->line = c->line;
	char *rest = rest_of_line(args);
	if (k == PFLOPS_UNAVAILABLE) {
		if (*rest)
			return PERR(c, "an unavailable metric has no formula; give the reason with 'caveat %s'", name);
		return 0;
	}
	if (*rest != '=' || !*rest_of_line(rest + 1))
		return PERR(c, "metric %s %s needs '= FORMULA'", name, cls);
	rest = rest_of_line(rest + 1);
	char msg[256];
	if (pfc_formula_parse(rest, c->pmu, &d->terms, &d->nterms, msg, sizeof(msg)))
		return PERR(c, "metric %s: %s", name, msg);
	d->formula = pfc_strdup(rest);
	return 0;
}

static int do_caveat(struct ctx *c, char *args)
{
	char *list = next_word(&args);
	char *text = list ? rest_of_line(args) : NULL;
	if (!list || !*text)
		return PERR(c, "usage: caveat METRIC[,METRIC...]|* TEXT");
	unsigned set = 0;
	if (!strcmp(list, "*")) {
		set = (1u << PFLOPS_NMETRIC) - 1;
	} else {
		for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int m = pflops_metric_from_name(tok);
			if (m < 0)
				return PERR(c, "caveat for unknown metric '%s'", tok);
			if ((int)c->pmu->metrics[m].klass < 0)
				return PERR(c, "caveat for %s before its 'metric' line", tok);
			set |= 1u << m;
		}
	}
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (set & (1u << m) && (int)c->pmu->metrics[m].klass >= 0) {
			/* `*` only fills metrics that have none, so specific lines win */
			if (!strcmp(list, "*") && c->pmu->metrics[m].caveat)
				continue;
			free(c->pmu->metrics[m].caveat);
			c->pmu->metrics[m].caveat = pfc_strdup(text);
		}
	return 0;
}

static int do_detect(struct ctx *c, char *args)
{
	char *m = next_word(&args), *part = next_word(&args), *ev = next_word(&args), *st = next_word(&args);
	struct pflops_detect d = { .line = c->line };
	if (!st || next_word(&args))
		return PERR(
			c, "usage: detect METRIC PART EVENT STATUS  (e.g. detect FP_OPS HP_OPS H_ANY UNWEIGHTED_FP16)");
	d.metric = pflops_metric_from_name(m);
	d.part = pflops_metric_from_name(part);
	d.event = find_event(c->pmu, ev);
	if (d.metric < 0 || d.part < 0 || d.metric == d.part)
		return PERR(c, "detect: '%s %s' must name two different metrics (FP_OPS DP_OPS SP_OPS HP_OPS ...)", m,
			    part);
	if (d.event < 0)
		return PERR(c, "detect: unknown event alias '%s'; declare it with 'event' first", ev);
	if (strlen(st) >= sizeof(d.status) || pflops_metric_from_name(st) >= 0)
		return PERR(c, "detect: bad status name '%s' (at most %zu characters, not a metric name)", st,
			    sizeof(d.status) - 1);
	for (const char *q = st; *q; q++)
		if (!isupper((unsigned char)*q) && !isdigit((unsigned char)*q) && *q != '_')
			return PERR(c, "detect: status name '%s': use capitals, digits and '_'", st);
	snprintf(d.status, sizeof(d.status), "%s", st);
	c->pmu->detect = d;
	return 0;
}

static int do_word(struct ctx *c, char *args, char *dst, size_t len, const char *what)
{
	char *w = next_word(&args);
	if (!w || next_word(&args) || strlen(w) >= len)
		return PERR(c, "usage: %s NAME", what);
	snprintf(dst, len, "%s", strcmp(w, "none") ? w : "");
	return 0;
}

static int directive(struct ctx *c, char *line)
{
	char *args = line;
	char *kw = next_word(&args);
	if (!kw)
		return 0;
	if (!strcmp(kw, "pmu"))
		return do_pmu(c, args);
	if (!c->pmu)
		return PERR(c, "'%s' outside a block; start one with 'pmu NAME'", kw);
	c->nlines_in_block++;
	if (!strcmp(kw, "like"))
		return do_like(c, args);
	if (!strcmp(kw, "title")) {
		snprintf(c->pmu->title, sizeof(c->pmu->title), "%s", rest_of_line(args));
		return 0;
	}
	if (!strcmp(kw, "alias")) {
		int n = 0;
		for (char *w; (w = next_word(&args));) {
			if (n == 4 || strlen(w) >= PFLOPS_NAME_MAX)
				return PERR(c, "at most 4 aliases of up to %d characters", PFLOPS_NAME_MAX - 1);
			if (pflops_table_find(c->t, w))
				return PERR(c, "alias %s already names a pmu", w);
			snprintf(c->pmu->aliases[n++], PFLOPS_NAME_MAX, "%s", w);
		}
		return 0;
	}
	if (!strcmp(kw, "libpfm"))
		return do_word(c, args, c->pmu->libpfm, sizeof(c->pmu->libpfm), "libpfm");
	if (!strcmp(kw, "sysfs"))
		return do_word(c, args, c->pmu->sysfs, sizeof(c->pmu->sysfs), "sysfs");
	if (!strcmp(kw, "arch")) {
		char *w = next_word(&args);
		if (w && !strcmp(w, "x86"))
			c->pmu->arch = PFLOPS_ARCH_X86;
		else if (w && !strcmp(w, "arm"))
			c->pmu->arch = PFLOPS_ARCH_ARM;
		else
			return PERR(c, "usage: arch x86|arm");
		return 0;
	}
	if (!strcmp(kw, "sve")) {
		unsigned v;
		char *w = next_word(&args);
		if (!w || parse_uint(w, &v) || v % 128 || v > 2048)
			return PERR(c, "usage: sve BITS  (a multiple of 128, at most 2048)");
		c->pmu->sve_bits = v;
		return 0;
	}
	if (!strcmp(kw, "cycles")) {
		char *w = next_word(&args);
		if (!w || next_word(&args) || (strcmp(w, "fixed") && strcmp(w, "general")))
			return PERR(c, "usage: cycles fixed|general  (general: no fixed cycles counter, as on AMD)");
		c->pmu->cycles_general = !strcmp(w, "general");
		return 0;
	}
	if (!strcmp(kw, "detect"))
		return do_detect(c, args);
	if (!strcmp(kw, "match"))
		return do_match(c, args);
	if (!strcmp(kw, "counters"))
		return do_counters(c, args);
	if (!strcmp(kw, "event"))
		return do_event(c, args);
	if (!strcmp(kw, "model"))
		return do_model(c, args);
	if (!strcmp(kw, "note"))
		return do_note(c, args);
	if (!strcmp(kw, "metric"))
		return do_metric(c, args);
	if (!strcmp(kw, "caveat"))
		return do_caveat(c, args);
	return PERR(c, "unknown directive '%s' (see presets/README.md)", kw);
}

int pflops_table_parse(struct pflops_table *t, const char *text, const char *file, struct pflops_error *err)
{
	struct ctx c = { .t = t, .file = file ? file : "<table>", .err = err };
	const char *p = text;
	int rc = 0;
	while (*p && !rc) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = malloc(n + 1);
		if (!line)
			return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
		memcpy(line, p, n);
		line[n] = 0;
		c.line++;
		char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		if (*s && *s != '#')
			rc = directive(&c, s);
		free(line);
		p = nl ? nl + 1 : p + n;
	}
	if (!rc)
		rc = pmu_finish(&c);
	/* only comments: every CPU would read as unknown, the fault this file's */
	if (!rc && !c.pmus)
		rc = pfc_err(
			err, PFLOPS_EINVAL,
			"%s: no PMU block in it (only comments or blank lines); a formula table holds 'pmu' blocks (presets/README.md)",
			c.file);
	return rc;
}

int pflops_table_load_file(struct pflops_table *t, const char *path, struct pflops_error *err)
{
	FILE *f = pfc_input_open(path, "formula tables", PF_MAX_TABLE_MIB, err);
	if (!f)
		return err ? err->code : PFLOPS_EINVAL;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	char chunk[8192];
	int rc = 0;
	while (!rc && (n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if ((rc = pfc_input_too_big(path, "formula tables", PF_MAX_TABLE_MIB, len + n, err)))
			break;
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				rc = pfc_err(err, PFLOPS_ENOMEM, "%s: out of memory reading it (%zu bytes)", path,
					     len + n);
				break;
			}
			buf = nb;
		}
		memcpy(buf + len, chunk, n);
		len += n;
	}
	if (!rc && ferror(f))
		rc = pfc_err(err, PFLOPS_ESYS, "%s: read error: %s", path, strerror(errno));
	fclose(f);
	if (rc || !buf) {
		free(buf);
		return rc ? rc
			  : pfc_err(err, PFLOPS_EINVAL,
				    "%s: empty file: no PMU block in it; a formula table holds 'pmu' blocks (presets/README.md)",
				    path);
	}
	buf[len] = 0;
	/* the parser stops at a NUL: the rest would be dropped unread */
	const char *nul = memchr(buf, 0, len);
	if (nul) {
		int line = 1;
		for (const char *q = buf; q < nul; q++)
			line += *q == '\n';
		free(buf);
		return pfc_err(err, PFLOPS_EINVAL, "%s:%d: a NUL byte; the table is text (is this the right file?)",
			       path, line);
	}
	rc = pflops_table_parse(t, buf, path, err);
	free(buf);
	return rc;
}

const char *pflops_vendor_word(const char *v)
{
	if (!v)
		return "";
	if (!strcmp(v, "GenuineIntel") || !strcasecmp(v, "intel"))
		return "intel";
	if (!strcmp(v, "AuthenticAMD") || !strcasecmp(v, "amd"))
		return "amd";
	if (!strcmp(v, "HygonGenuine") || !strcasecmp(v, "hygon"))
		return "hygon";
	if (!strcasecmp(v, "arm"))
		return "arm";
	return v;
}

const struct pflops_pmu *pflops_table_match(const struct pflops_table *t, const char *vendor, unsigned family,
					    unsigned model, unsigned stepping, const char *coretype)
{
	const char *vw = pflops_vendor_word(vendor);
	const struct pflops_pmu *any = NULL;
	for (int i = 0; i < t->npmus; i++) {
		const struct pflops_pmu *p = &t->pmus[i];
		for (int k = 0; k < p->nmatches; k++) {
			const struct pflops_match *m = &p->matches[k];
			if (strcmp(m->vendor, vw) || m->family != family || model < m->model_lo ||
			    model > m->model_hi || stepping < m->step_lo || stepping > m->step_hi)
				continue;
			/* an exact core-type match wins over a core-agnostic line */
			if (m->coretype[0]) {
				if (coretype && !strcmp(coretype, m->coretype))
					return p;
			} else if (!any) {
				any = p;
			}
		}
	}
	return any;
}
