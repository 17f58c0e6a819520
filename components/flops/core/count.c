/*
 * The hardware counting pipeline (pflops_count.h): core kinds, a metric
 * set planned on each with the run-time SVE vector length, laid out,
 * opened, read, scaled and summed over the engine (count_perf.c,
 * perf_plans.c).  The flops component and papi_flops_run --source hw
 * both count through it, so they plan the same formulas.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__aarch64__)
#include <sys/prctl.h>
#endif
#include "pflops_count.h"
#include "pflops_internal.h"
#include "pflops_model.h"

int pfc_sve_vl_bits(void)
{
#if defined(__aarch64__) && defined(PR_SVE_GET_VL)
	int vl = prctl(PR_SVE_GET_VL);
	return vl > 0 ? (vl & PR_SVE_VL_LEN_MASK) * 8 : 0;
#else
	return 0;
#endif
}

#ifndef PR_SVE_VL_INHERIT
#define PR_SVE_VL_INHERIT (1 << 17)
#endif
#ifndef PR_SVE_VL_LEN_MASK
#define PR_SVE_VL_LEN_MASK 0xffff
#endif

int pfc_sve_exec_vl_bits(int vl, const char *default_file)
{
	if (vl <= 0)
		return 0;
	int bytes = 0;
	FILE *f = vl & PR_SVE_VL_INHERIT ? NULL : fopen(default_file, "r");
	if (f) {
		if (fscanf(f, "%d", &bytes) != 1 || bytes <= 0)
			bytes = 0;
		fclose(f);
	}
	return (bytes ? bytes : vl & PR_SVE_VL_LEN_MASK) * 8;
}

int pfc_sve_vl_exec(void)
{
#if defined(__aarch64__) && defined(PR_SVE_GET_VL)
	return pfc_sve_exec_vl_bits(prctl(PR_SVE_GET_VL), "/proc/sys/abi/sve_default_vector_length");
#else
	return 0;
#endif
}

void pfc_count_kinds_exec_vl(struct pfc_count_kinds *ks)
{
	int vl = pfc_sve_vl_exec();
	for (int k = 0; vl && k < ks->n; k++)
		if (ks->kind[k].pmu && ks->kind[k].pmu->sve_bits)
			ks->kind[k].sve_bits = vl;
}

int pfc_count_vl_differs(const struct pfc_count *c, int now, char *msg, size_t len)
{
	for (int k = 0; now > 0 && k < c->ks->n; k++) {
		const struct pfc_count_kind *kd = &c->ks->kind[k];
		if (!c->planned[k] || !kd->pmu->sve_bits || kd->sve_bits == now)
			continue;
		snprintf(
			msg, len,
			"this thread's SVE vector length is %d bits, but the FLOP formulas of %.60s were planned at %d bits (the length when the component was initialized): the counts would be weighted wrong; set the length (prctl PR_SVE_SET_VL) before PAPI_library_init, or count in a thread that has %d bits",
			now, kd->pmu->title[0] ? kd->pmu->title : kd->pmu->name, kd->sve_bits, kd->sve_bits);
		return 1;
	}
	return 0;
}

int pfc_count_kind_add(struct pfc_count_kinds *ks, const struct pflops_pmu *pmu, int budget, int smt, int own_pmu,
		       int ref, int nmi, int sve_bits, struct pflops_error *err)
{
	if (ks->n == PFLOPS_MAX_KINDS)
		return pfc_err(err, PFLOPS_EINVAL, "more than %d core kinds", PFLOPS_MAX_KINDS);
	struct pfc_count_kind *k = &ks->kind[ks->n++];
	memset(k, 0, sizeof(*k));
	k->pmu = pmu;
	k->type = PERF_TYPE_RAW;
	k->own_pmu = own_pmu;
	k->ref = ref;
	k->arch = pmu ? pmu->arch : PFLOPS_ARCH_X86;
	snprintf(k->perf_pmu, sizeof(k->perf_pmu), "%s", pmu ? pmu->sysfs : "");
	k->smt = budget < 0 ? 1 : smt;
	k->budget = budget >= 0 || !pmu ? budget : pflops_budget(pmu, 1, nmi > 0, k->ref);
	if (sve_bits < 0) {
		int vl = pmu && pmu->sve_bits ? pfc_sve_vl_bits() : 0;
		sve_bits = vl ? vl : pmu ? pmu->sve_bits : 0;
	}
	k->sve_bits = sve_bits;
	return 0;
}

int pfc_count_kinds_probe(struct pfc_count_kinds *ks, const struct pflops_probe *pr)
{
	int known = 0, hybrid = pr->nkinds > 1;
	ks->n = 0;
	for (int i = 0; i < pr->nkinds; i++) {
		const struct pflops_kind *kd = &pr->kinds[i];
		/* on a hybrid machine an event runs only while the thread is on
		 * its kind: cycles there time the kind, or scaling would take
		 * the time on the other kinds for multiplexing; a kind without a
		 * formula is timed too, so that its share of the run is reported */
		int ref = hybrid && (kd->pmu || kd->perf_pmu[0]);
		pfc_count_kind_add(ks, kd->pmu, ref ? kd->budget_cycles : kd->budget, kd->smt, hybrid, ref,
				   pr->nmi_watchdog, kd->sve_bits, NULL);
		struct pfc_count_kind *k = &ks->kind[ks->n - 1];
		if (kd->perf_pmu[0])
			snprintf(k->perf_pmu, sizeof(k->perf_pmu), "%s", kd->perf_pmu);
		snprintf(k->cpus, sizeof(k->cpus), "%s", kd->cpus);
		if (!kd->pmu) {
			k->arch = strcmp(kd->vendor, "arm") ? PFLOPS_ARCH_X86 : PFLOPS_ARCH_ARM;
			snprintf(k->why, sizeof(k->why), "%s", kd->why);
		}
		known += kd->pmu != NULL;
	}
	return known;
}

int pfc_count_kinds_types(struct pfc_count_kinds *ks, struct pflops_error *err)
{
	for (int k = 0; k < ks->n; k++) {
		struct pfc_count_kind *kd = &ks->kind[k];
		if (!kd->own_pmu || (!kd->pmu && !kd->ref))
			continue;
		int rc = pfc_perf_pmu_type(kd->perf_pmu, &kd->type, kd->pmu ? err : NULL);
		if (rc && kd->pmu)
			return rc;
		if (rc)
			kd->ref = 0; /* no PMU to time it on: pfc_count_untimed says so */
	}
	return 0;
}

/* The one width or precision an event's model line gives, -1 when it
 * gives none or several (or has no model line). */
static void event_kind(const struct pflops_event *e, int *width, int *prec)
{
	struct pfc_model md;
	*width = *prec = -1;
	if (!e->model || pfc_model_parse(e->model, &md, NULL))
		return;
	*width = pfc_model_single(md.widths, PFLOPS_NWIDTH);
	*prec = pfc_model_single(md.precs, PFLOPS_NPREC);
}

int pfc_count_term_passes(const struct pflops_pmu *pmu, const struct pflops_term *t, int width, int prec)
{
	int w, p;
	event_kind(&pmu->events[t->event], &w, &p);
	return (width < 0 || w == width) && (prec < 0 || p == prec);
}

int pfc_count_qualifier_ok(const struct pflops_pmu *pmu, int m, int width, int prec)
{
	const struct pflops_metric_def *d = &pmu->metrics[m];
	if (d->klass == PFLOPS_UNAVAILABLE)
		return 0;
	int pass = 0, fail = 0;
	for (int k = 0; k < d->nterms; k++) {
		int w, p;
		event_kind(&pmu->events[d->terms[k].event], &w, &p);
		if ((width >= 0 && w < 0) || (prec >= 0 && p < 0))
			return 0;
		if (pfc_count_term_passes(pmu, &d->terms[k], width, prec))
			pass = 1;
		else
			fail = 1;
	}
	return pass && fail; /* a real split, not the whole metric */
}

void pfc_count_want_metrics(struct pfc_count_want want[PFLOPS_NMETRIC], unsigned metrics)
{
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		want[m] = (struct pfc_count_want){ metrics >> m & 1 ? m : -1, -1, -1 };
}

/* Why a kind plans nothing: a PMU without any FLOP formula says so with
 * the table's caveat (none may have been asked: no --metrics). */
static void why_none(const struct pflops_pmu *p, const struct pfc_count_want *want, int n, char *out, size_t len)
{
	int asked = 0;
	for (int s = 0; s < n; s++)
		asked |= want[s].metric >= 0;
	if (asked && pflops_pmu_available(p)) {
		snprintf(out, len, "it counts none of the metrics asked");
		return;
	}
	const char *caveat = NULL;
	for (int m = 0; m < PFLOPS_NMETRIC && !caveat; m++)
		caveat = p->metrics[m].caveat;
	snprintf(out, len, "no FLOP formula on %.60s%s%.150s; papi_flops_avail lists what each core counts",
		 p->title[0] ? p->title : p->name, caveat ? ": " : "", caveat ? caveat : "");
}

/* Plan kind k: slot s of a copy of its PMU is want[s], the metric's terms
 * filtered by the slot's qualifiers, so that one pflops_plan_fit call
 * plans every slot together, shares counters between them, and reduces
 * them where the table says how (a detect rule). */
static int plan_kind(struct pfc_count *c, int k, const struct pfc_count_want *want, int n, int strict)
{
	const struct pfc_count_kind *kd = &c->ks->kind[k];
	const struct pflops_pmu *p = kd->pmu;
	struct pflops_pmu synth = *p;
	struct pflops_term *terms[PFLOPS_NMETRIC] = { 0 };
	int slot_metric[PFLOPS_NMETRIC];
	unsigned mask = 0;
	struct pflops_error err = { 0 };
	int rc = 0;
	for (int s = 0; s < PFLOPS_NMETRIC; s++) {
		synth.metrics[s].klass = PFLOPS_UNAVAILABLE;
		synth.metrics[s].nterms = 0;
		synth.metrics[s].terms = NULL;
		synth.metrics[s].caveat = NULL;
		slot_metric[s] = -1;
	}
	for (int s = 0; s < n && s < PFLOPS_NMETRIC && !rc; s++) {
		const struct pfc_count_want *w = &want[s];
		if (w->metric < 0 || w->metric >= PFLOPS_NMETRIC)
			continue;
		const struct pflops_metric_def *d = &p->metrics[w->metric];
		int qual = w->width >= 0 || w->prec >= 0;
		if (d->klass == PFLOPS_UNAVAILABLE ||
		    (qual && !pfc_count_qualifier_ok(p, w->metric, w->width, w->prec))) {
			if (strict) /* the planner's sentence for an unavailable metric */
				rc = pflops_plan_make(&c->plan[k], p, 1u << w->metric, kd->sve_bits, &err);
			if (strict && !rc)
				rc = pfc_err(&err, PFLOPS_EUNAVAIL, "%s does not split %s by %s%s%s", p->name,
					     pflops_metric_name(w->metric),
					     w->width >= 0 ? pflops_width_name(w->width) : "",
					     w->width >= 0 && w->prec >= 0 ? " and " : "",
					     w->prec >= 0 ? pflops_prec_name(w->prec) : "");
			if (!strict) /* not counted here: the caller says so */
				c->skipped[k] |= 1u << s;
			continue;
		}
		if (!(terms[s] = calloc(d->nterms ? d->nterms : 1, sizeof(*terms[s])))) {
			rc = pfc_err(&err, PFLOPS_ENOMEM, "out of memory");
			break;
		}
		int nt = 0;
		for (int t = 0; t < d->nterms; t++)
			if (pfc_count_term_passes(p, &d->terms[t], w->width, w->prec))
				terms[s][nt++] = d->terms[t];
		synth.metrics[s] = *d;
		synth.metrics[s].terms = terms[s];
		synth.metrics[s].nterms = nt;
		slot_metric[s] = w->metric;
		mask |= 1u << s;
	}
	if (!rc && mask &&
	    !(rc = pflops_plan_fit(&c->plan[k], &synth, mask, kd->sve_bits, kd->budget, slot_metric, &err)))
		c->plan[k].pmu = p; /* the copy goes out of scope */
	for (int s = 0; s < PFLOPS_NMETRIC; s++)
		free(terms[s]);
	c->rc[k] = rc;
	c->planned[k] = !rc && mask;
	if (rc || mask)
		snprintf(c->why[k], sizeof(c->why[k]), "%.250s", rc ? err.msg : "");
	else
		why_none(p, want, n, c->why[k], sizeof(c->why[k]));
	return rc;
}

int pfc_count_plan(struct pfc_count *c, const struct pfc_count_kinds *ks, const struct pfc_count_want *want, int n,
		   int strict)
{
	int planned = 0;
	pfc_count_close(c);
	c->ks = ks;
	for (int k = 0; k < ks->n; k++) {
		c->planned[k] = 0;
		c->skipped[k] = 0;
		c->rc[k] = 0;
		c->why[k][0] = 0;
		if (!ks->kind[k].pmu) {
			c->rc[k] = PFLOPS_ENOCPU;
			snprintf(c->why[k], sizeof(c->why[k]), "%.250s",
				 ks->kind[k].why[0] ? ks->kind[k].why : "no formula");
			continue;
		}
		plan_kind(c, k, want, n, strict);
		planned += c->planned[k];
	}
	return planned;
}

int pfc_count_untimed(const struct pfc_count_kinds *ks, int k, char *msg, size_t len)
{
	const struct pfc_count_kind *kd = &ks->kind[k];
	if (ks->n < 2 || kd->ref)
		return 0;
	snprintf(msg, len,
		 "time on CPUs %.200s is not measured (no perf PMU found for them); totals miss an unknown share",
		 kd->cpus[0] ? kd->cpus : "of one core kind");
	return 1;
}

double pfc_count_share(const struct pfc_count *c, int k)
{
	uint64_t all = 0;
	for (int i = 0; i < c->ks->n; i++)
		all += c->st.kind_ns[i];
	return all ? (double)c->st.kind_ns[k] / (double)all : 0;
}

int pfc_count_over(const struct pfc_count *c, int k)
{
	return c->planned[k] && c->plan[k].cost > c->ks->kind[k].budget;
}

int pfc_count_layout(struct pfc_count *c, struct pflops_error *err)
{
	const struct pfc_count_kinds *ks = c->ks;
	pfc_count_close(c);
	for (int k = 0; k < ks->n; k++) {
		const struct pfc_count_kind *kd = &ks->kind[k];
		c->pk[k] = (struct pfc_perf_kind){ .plan = c->planned[k] ? &c->plan[k] : NULL,
						   .type = kd->type,
						   .arch = kd->arch,
						   .ref = kd->ref,
						   .split = c->multiplex && pfc_count_over(c, k),
						   .pmu_name = kd->perf_pmu[0] ? kd->perf_pmu : "cpu" };
	}
	int nslots = 0;
	int n = pfc_perf_layout(c->pk, ks->n, c->ev, sizeof(c->ev) / sizeof(c->ev[0]), c->counter_slot, &nslots);
	if (n < 0)
		return pfc_err(err, PFLOPS_EINVAL, "more than %d perf events", (int)(sizeof(c->ev) / sizeof(c->ev[0])));
	c->nev = n;
	c->nslots = nslots;
	if (!(c->slots = calloc(nslots ? nslots : 1, sizeof(*c->slots))))
		return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
	return 0;
}

int pfc_count_open(struct pfc_count *c, const struct pfc_perf_attr *a, struct pflops_error *err)
{
	if (!c->slots)
		return pfc_err(err, PFLOPS_EINVAL, "a counting set opened before its layout");
	if (!(c->vals = calloc(c->nev ? c->nev : 1, sizeof(*c->vals))))
		return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
	return pfc_perf_open(&c->set, c->ev, c->nev, a, err);
}

int pfc_count_read(struct pfc_count *c, struct pflops_error *err)
{
	memset(&c->st, 0, sizeof(c->st));
	if (!c->set)
		return pfc_err(err, PFLOPS_EINVAL, "a counting set read before it was opened");
	int rc = pfc_perf_read(c->set, c->vals, err);
	if (!rc)
		pfc_perf_sum(c->set, c->vals, c->slots, c->nslots, &c->st);
	return rc;
}

double pfc_count_value(const struct pfc_count *c, int s)
{
	return c->slots ? pfc_perf_metric(c->pk, c->ks->n, (int(*)[PFLOPS_MAX_COUNTERS])c->counter_slot, c->slots, s)
			: 0;
}

double pfc_count_detected(const struct pfc_count *c)
{
	return c->slots ? pfc_perf_detected(c->pk, c->ks->n, (int(*)[PFLOPS_MAX_COUNTERS])c->counter_slot, c->slots)
			: 0;
}

void pfc_count_close(struct pfc_count *c)
{
	pfc_perf_close(c->set);
	c->set = NULL;
	free(c->vals);
	free(c->slots);
	c->vals = NULL;
	c->slots = NULL;
	c->nev = c->nslots = 0;
}
