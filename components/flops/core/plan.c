/*
 * Counter planning: the requested metrics with the fewest hardware
 * counters.  Two table events share a counter when they are umasks of the
 * same event, carry the same weight in every requested metric, and the
 * hardware accepts them combined (libpfm4 decides for events it knows, by
 * listing the umasks together or naming their union; where it refuses, the
 * table's `combine` flag says the hardware ORs the umask bits, and the
 * counter is opened as the raw code).  FP_ARITH's SCALAR_DOUBLE and
 * SCALAR_SINGLE have weight 1 in FP_OPS and share a counter; in one event
 * set with DP_OPS they differ (1 vs 0) and take two.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflops_internal.h"

static double term_weight(const struct pflops_term *t, double vl128)
{
	return t->w0 + t->wvl * vl128 * 128; /* wvl is per bit of VL */
}

static int same_weights(const double *a, const double *b, unsigned metrics)
{
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if ((metrics & (1u << m)) && fabs(a[m] - b[m]) > 1e-12 * (fabs(a[m]) + fabs(b[m])))
			return 0;
	return 1;
}

/* x86 raw codes: same event select (bits 0-7, 32-35), umask bits OR-ed */
static int join_raw(uint64_t a, uint64_t b, uint64_t *out)
{
	const uint64_t umask = 0xff00ULL;
	if ((a & ~umask) != (b & ~umask))
		return -1;
	*out = a | b;
	return 0;
}

/* x86 event-select flags (USR OS INT EN) that every full code carries */
#define X86_FLAGS 0x530000ULL

static int try_merge(struct pflops_plan *p, struct pflops_counter *c, int ev)
{
	const struct pflops_pmu *pmu = p->pmu;
	const struct pflops_event *e = &pmu->events[ev];
	const struct pflops_event *first = &pmu->events[c->events[0]];
	if (c->nevents >= (int)(sizeof(c->events) / sizeof(c->events[0])) || e->pair != first->pair)
		return -1;
	int raw_e = !strncmp(e->spec, "raw:", 4), raw_c = !strncmp(c->spec, "raw:", 4);
	/* 1. libpfm4 knows whether its umasks may be combined (SNB's may not)
	 * and names unions (4_FLOPS): a named counter stays usable by name */
	char joined[sizeof(c->spec)];
	if (!raw_e && !raw_c && !pfc_encode_merge(pmu, c->spec, e->spec, joined, sizeof(joined))) {
		snprintf(c->spec, sizeof(c->spec), "%s", joined);
		return pflops_encode(pmu, c->spec, &c->config, NULL, 0, NULL) ? -1 : 0;
	}
	/* 2. the table says the hardware ORs the umask bits (`combine`), also
	 * where libpfm4 refuses a combination it has no name for (icx's
	 * 128B|256B|512B_PACKED_DOUBLE): the counter becomes a raw code */
	if (!e->combine || pmu->arch != PFLOPS_ARCH_X86)
		return -1;
	for (int k = 0; k < c->nevents; k++)
		if (!pmu->events[c->events[k]].combine)
			return -1;
	uint64_t b, j;
	if (pflops_encode(pmu, e->spec, &b, NULL, 0, NULL) || join_raw(c->config, b, &j))
		return -1;
	char spec[sizeof(c->spec)];
	snprintf(spec, sizeof(spec), "raw:0x%llx", (unsigned long long)(j & ~X86_FLAGS));
	uint64_t cfg;
	if (pflops_encode(pmu, spec, &cfg, NULL, 0, NULL))
		return -1;
	memcpy(c->spec, spec, sizeof(spec));
	c->config = cfg;
	c->pfm_encoded = 0;
	return 0;
}

int pflops_plan_make(struct pflops_plan *p, const struct pflops_pmu *pmu, unsigned metrics, int sve_bits,
		     struct pflops_error *err)
{
	memset(p, 0, sizeof(*p));
	p->pmu = pmu;
	p->metrics = metrics & ((1u << PFLOPS_NMETRIC) - 1);
	if (!p->metrics)
		return pfc_err(err, PFLOPS_EINVAL, "no metric requested");
	int bits = sve_bits ? sve_bits : pmu->sve_bits;
	p->vl128 = bits ? bits / 128.0 : 1.0;
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if ((p->metrics & (1u << m)) && pmu->metrics[m].klass == PFLOPS_UNAVAILABLE)
			return pfc_err(err, PFLOPS_EUNAVAIL, "%s is not available on %s: %s", pflops_metric_name(m),
				       pmu->title[0] ? pmu->title : pmu->name,
				       pmu->metrics[m].caveat ? pmu->metrics[m].caveat : "no formula");

	for (int ev = 0; ev < pmu->nevents; ev++) {
		double w[PFLOPS_NMETRIC] = { 0 };
		int used = 0;
		for (int m = 0; m < PFLOPS_NMETRIC; m++) {
			if (!(p->metrics & (1u << m)))
				continue;
			const struct pflops_metric_def *d = &pmu->metrics[m];
			for (int k = 0; k < d->nterms; k++)
				if (d->terms[k].event == ev)
					w[m] += term_weight(&d->terms[k], p->vl128);
			used |= w[m] != 0;
		}
		if (!used)
			continue;
		int merged = 0;
		for (int c = 0; c < p->ncounters && !merged; c++) {
			struct pflops_counter *ct = &p->counter[c];
			if (same_weights(ct->weight, w, p->metrics) && try_merge(p, ct, ev) == 0) {
				ct->events[ct->nevents++] = ev;
				merged = 1;
			}
		}
		if (merged)
			continue;
		if (p->ncounters == PFLOPS_MAX_COUNTERS)
			return pfc_err(err, PFLOPS_ECNFLCT, "more than %d counters planned on %s", PFLOPS_MAX_COUNTERS,
				       pmu->name);
		struct pflops_counter *ct = &p->counter[p->ncounters];
		memset(ct, 0, sizeof(*ct));
		snprintf(ct->spec, sizeof(ct->spec), "%s", pmu->events[ev].spec);
		ct->events[ct->nevents++] = ev;
		ct->cost = pmu->events[ev].pair ? 2 : 1;
		memcpy(ct->weight, w, sizeof(w));
		char canon[sizeof(ct->spec)];
		int rc = pflops_encode(pmu, ct->spec, &ct->config, canon, sizeof(canon), err);
		if (rc)
			return rc;
		ct->pfm_encoded = strncmp(ct->spec, "raw:", 4) != 0;
		p->ncounters++;
	}
	for (int c = 0; c < p->ncounters; c++)
		p->cost += p->counter[c].cost;
	return 0;
}

int pflops_plan_fit(struct pflops_plan *p, const struct pflops_pmu *pmu, unsigned metrics, int sve_bits, int budget,
		    const int *slot_metric, struct pflops_error *err)
{
	int rc = pflops_plan_make(p, pmu, metrics, sve_bits, err);
	const struct pflops_detect *d = &pmu->detect;
	if (rc || p->cost <= budget || !d->line)
		return rc;
	/* the reduced copy: requested slots lose the PART's events */
	struct pflops_pmu r = *pmu;
	struct pflops_term *terms[PFLOPS_NMETRIC] = { 0 };
	unsigned reduced = 0;
	int ok = 1;
	for (int s = 0; s < PFLOPS_NMETRIC && ok; s++) {
		const struct pflops_metric_def *m = &pmu->metrics[s];
		if (!(p->metrics & (1u << s)))
			continue;
		int n = 0, dropped = 0;
		terms[s] = malloc((m->nterms ? m->nterms : 1) * sizeof(*terms[s]));
		if (!terms[s]) {
			rc = pfc_err(err, PFLOPS_ENOMEM, "out of memory");
			break;
		}
		for (int k = 0; k < m->nterms; k++) {
			if (m->terms[k].event < 64 && (d->drop >> m->terms[k].event & 1))
				dropped = 1;
			else
				terms[s][n++] = m->terms[k];
		}
		if (!dropped)
			continue;
		/* only the rule's METRIC may lose them, and not all of itself */
		ok = (slot_metric ? slot_metric[s] : s) == d->metric && n > 0;
		r.metrics[s].terms = terms[s];
		r.metrics[s].nterms = n;
		reduced |= 1u << s;
	}
	struct pflops_plan q;
	if (!rc && ok && reduced && !(rc = pflops_plan_make(&q, &r, metrics, sve_bits, err))) {
		struct pflops_counter *ct = &q.counter[q.ncounters];
		const struct pflops_event *e = &pmu->events[d->event];
		if (q.ncounters == PFLOPS_MAX_COUNTERS)
			rc = pfc_err(err, PFLOPS_ECNFLCT, "more than %d counters planned on %s", PFLOPS_MAX_COUNTERS,
				     pmu->name);
		else if (!(rc = pflops_encode(pmu, e->spec, &ct->config, NULL, 0, err))) {
			memset(ct->weight, 0, sizeof(ct->weight));
			snprintf(ct->spec, sizeof(ct->spec), "%s", e->spec);
			ct->events[0] = d->event;
			ct->nevents = 1;
			ct->cost = e->pair ? 2 : 1;
			ct->pfm_encoded = strncmp(e->spec, "raw:", 4) != 0;
			ct->detects = 1;
			q.ncounters++;
			q.cost += ct->cost;
			q.pmu = pmu;
			q.reduced = reduced;
			if (q.cost <= budget)
				*p = q;
		}
	}
	for (int s = 0; s < PFLOPS_NMETRIC; s++)
		free(terms[s]);
	return rc;
}

double pflops_plan_eval(const struct pflops_plan *p, enum pflops_metric m, const double *counts)
{
	double v = 0;
	for (int c = 0; c < p->ncounters; c++)
		v += p->counter[c].weight[m] * counts[c];
	return v;
}
