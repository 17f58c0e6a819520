/*
 * The formula language of the presets table: a linear combination of
 * event aliases with constant weights, where a weight may carry the SVE
 * factor VL (vector length in bits).  Grammar:
 *     expr   := term (('+' | '-') term)*
 *     term   := factor (('*' factor) | ('/' number))*
 *     factor := number | ALIAS | 'VL' | '(' expr ')' | '-' factor
 * A product of two event aliases, VL squared, a constant term or a
 * division by anything but a non-zero number is an error: counts combine
 * linearly, so anything else is a typo in the table.  So are nesting
 * deeper than PF_FORMULA_DEPTH (the parser recurses; a bound keeps a
 * hostile PAPI_FLOPS_TABLE from overflowing the stack) and a weight that
 * is not finite or exceeds PF_WEIGHT_MAX FLOPs per count.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflops_internal.h"

#define PF_FORMULA_DEPTH 64 /* real formulas nest 2 or 3 levels */
#define PF_WEIGHT_MAX 1e6   /* FLOPs per count; the widest instruction does 64 */

struct lin { /* c + sum_i w[i] * count_i, each part a + b*VL */
	double c0, c1;
	double *w0, *w1;
};

struct parser {
	const char *s;
	const struct pflops_pmu *pmu;
	int n;	   /* events */
	int depth; /* factor() calls in progress */
	char *msg;
	size_t msglen;
	int failed;
};

static int fail(struct parser *p, const char *fmt, const char *arg)
{
	if (!p->failed)
		snprintf(p->msg, p->msglen, fmt, arg);
	p->failed = 1;
	return -1;
}

static int lin_new(struct parser *p, struct lin *l)
{
	l->c0 = l->c1 = 0;
	l->w0 = calloc(p->n + 1, sizeof(double));
	l->w1 = calloc(p->n + 1, sizeof(double));
	if (!l->w0 || !l->w1)
		return fail(p, "%sout of memory", "");
	return 0;
}

static void lin_free(struct lin *l)
{
	free(l->w0);
	free(l->w1);
	l->w0 = l->w1 = NULL;
}

static int lin_has_events(const struct parser *p, const struct lin *l)
{
	for (int i = 0; i < p->n; i++)
		if (l->w0[i] != 0 || l->w1[i] != 0)
			return 1;
	return 0;
}

/* after every operation: 1e300*1e300 must not become an infinite weight */
static int lin_finite(struct parser *p, const struct lin *l)
{
	int ok = isfinite(l->c0) && isfinite(l->c1);
	for (int i = 0; ok && i < p->n; i++)
		ok = isfinite(l->w0[i]) && isfinite(l->w1[i]);
	return ok ? 0 : fail(p, "%sa weight overflows (at most 1e6 FLOPs per count)", "");
}

static void skip(struct parser *p)
{
	while (isspace((unsigned char)*p->s))
		p->s++;
}

static int expr(struct parser *p, struct lin *out);

static int factor1(struct parser *p, struct lin *out);

static int factor(struct parser *p, struct lin *out)
{
	if (p->depth >= PF_FORMULA_DEPTH) {
		out->w0 = out->w1 = NULL;
		char lim[16];
		snprintf(lim, sizeof(lim), "%d", PF_FORMULA_DEPTH);
		return fail(p, "nested more than %s levels deep (parentheses or '-' signs); write the formula flat",
			    lim);
	}
	p->depth++;
	int rc = factor1(p, out);
	p->depth--;
	return rc;
}

static int factor1(struct parser *p, struct lin *out)
{
	skip(p);
	if (lin_new(p, out))
		return -1;
	if (*p->s == '(') {
		p->s++;
		lin_free(out);
		if (expr(p, out))
			return -1;
		skip(p);
		if (*p->s != ')')
			return fail(p, "missing ')' before '%s'", *p->s ? p->s : "end of formula");
		p->s++;
		return 0;
	}
	if (*p->s == '-') {
		p->s++;
		lin_free(out);
		if (factor(p, out))
			return -1;
		out->c0 = -out->c0;
		out->c1 = -out->c1;
		for (int i = 0; i < p->n; i++) {
			out->w0[i] = -out->w0[i];
			out->w1[i] = -out->w1[i];
		}
		return 0;
	}
	if (isdigit((unsigned char)*p->s) || *p->s == '.') {
		char *end;
		errno = 0;
		out->c0 = strtod(p->s, &end);
		if (end == p->s || errno == ERANGE || !isfinite(out->c0))
			return fail(p, "bad number at '%s'", p->s);
		p->s = end;
		return 0;
	}
	if (isalpha((unsigned char)*p->s) || *p->s == '_') {
		char name[PFLOPS_NAME_MAX];
		size_t k = 0;
		while ((isalnum((unsigned char)*p->s) || *p->s == '_') && k + 1 < sizeof(name))
			name[k++] = *p->s++;
		name[k] = 0;
		if (!strcmp(name, "VL")) {
			out->c1 = 1;
			return 0;
		}
		for (int i = 0; i < p->n; i++)
			if (!strcmp(p->pmu->events[i].alias, name)) {
				out->w0[i] = 1;
				return 0;
			}
		return fail(p, "unknown event alias '%s'; declare it with an 'event' line first", name);
	}
	return fail(p, "unexpected '%s'", *p->s ? p->s : "end of formula");
}

/* a *= b, where one side must be free of events */
static int lin_mul(struct parser *p, struct lin *a, struct lin *b)
{
	struct lin *f = a, *s = b; /* f: form (may hold events), s: scalar */
	if (lin_has_events(p, a) && lin_has_events(p, b))
		return fail(p, "%sproduct of two events is not linear", "");
	if (lin_has_events(p, b)) {
		f = b;
		s = a;
	}
	double sa = s->c0, sb = s->c1;
	if (sb != 0 && f->c1 != 0)
		return fail(p, "%sVL squared is not supported", "");
	for (int i = 0; i < p->n; i++) {
		if (sb != 0 && f->w1[i] != 0)
			return fail(p, "%sVL squared is not supported", "");
		double w0 = f->w0[i], w1 = f->w1[i];
		a->w0[i] = sa * w0;
		a->w1[i] = sa * w1 + sb * w0;
	}
	double c0 = f->c0, c1 = f->c1;
	a->c0 = sa * c0;
	a->c1 = sa * c1 + sb * c0;
	return 0;
}

static int term(struct parser *p, struct lin *out)
{
	if (factor(p, out))
		return -1;
	for (;;) {
		skip(p);
		char op = *p->s;
		if (op != '*' && op != '/')
			return 0;
		p->s++;
		struct lin r;
		if (factor(p, &r)) {
			lin_free(&r);
			return -1;
		}
		int rc = 0;
		if (op == '*') {
			rc = lin_mul(p, out, &r);
		} else if (lin_has_events(p, &r) || r.c1 != 0 || r.c0 == 0) {
			rc = fail(p, "%sdivide only by a non-zero number", "");
		} else {
			out->c0 /= r.c0;
			out->c1 /= r.c0;
			for (int i = 0; i < p->n; i++) {
				out->w0[i] /= r.c0;
				out->w1[i] /= r.c0;
			}
		}
		lin_free(&r);
		if (rc || lin_finite(p, out))
			return -1;
	}
}

static int expr(struct parser *p, struct lin *out)
{
	if (term(p, out))
		return -1;
	for (;;) {
		skip(p);
		char op = *p->s;
		if (op != '+' && op != '-')
			return 0;
		p->s++;
		struct lin r;
		if (term(p, &r)) {
			lin_free(&r);
			return -1;
		}
		double sg = op == '+' ? 1 : -1;
		out->c0 += sg * r.c0;
		out->c1 += sg * r.c1;
		for (int i = 0; i < p->n; i++) {
			out->w0[i] += sg * r.w0[i];
			out->w1[i] += sg * r.w1[i];
		}
		lin_free(&r);
		if (lin_finite(p, out))
			return -1;
	}
}

int pfc_formula_parse(const char *text, const struct pflops_pmu *pmu, struct pflops_term **terms, int *nterms,
		      char *msg, size_t msglen)
{
	struct parser p = { .s = text, .pmu = pmu, .n = pmu->nevents, .msg = msg, .msglen = msglen };
	struct lin l = { 0 };
	*terms = NULL;
	*nterms = 0;
	if (expr(&p, &l) == 0) {
		skip(&p);
		if (*p.s)
			fail(&p, "unexpected '%s' after the formula", p.s);
		else if (l.c0 != 0 || l.c1 != 0)
			fail(&p, "%sa constant term is not a count", "");
		else if (!lin_has_events(&p, &l))
			fail(&p, "%sthe formula uses no event", "");
		/* 2048: the longest SVE vector, the largest VL can be */
		for (int i = 0; i < p.n && !p.failed; i++)
			if (!isfinite(l.w0[i]) || !isfinite(l.w1[i]) ||
			    fabs(l.w0[i]) + fabs(l.w1[i]) * 2048 > PF_WEIGHT_MAX)
				fail(&p, "the weight of %s is out of range (at most 1e6 FLOPs per count)",
				     pmu->events[i].alias);
	}
	if (!p.failed) {
		*terms = calloc(p.n, sizeof(**terms));
		if (!*terms)
			fail(&p, "%sout of memory", "");
		for (int i = 0; i < p.n && *terms; i++)
			if (l.w0[i] != 0 || l.w1[i] != 0) {
				struct pflops_term *t = &(*terms)[(*nterms)++];
				t->event = i;
				t->w0 = l.w0[i];
				t->wvl = l.w1[i];
			}
	}
	lin_free(&l);
	return p.failed ? PFLOPS_EINVAL : PFLOPS_OK;
}
