/*
 * flops_plan.c: the flops component's planning, apart from PAPI (see
 * flops_plan.h): its core kinds, and an event set planned on them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flops_plan.h"
#include "core/pflops_internal.h"
#include "core/pflops_evname.h"

int flo_add_kind(struct pfc_count_kinds *ks, const struct pflops_pmu *p, int own_pmu, int several, int nmi,
		 int sve_bits)
{
	int ref = own_pmu && (several || p->arch == PFLOPS_ARCH_X86);
	return pfc_count_kind_add(ks, p, -1, 1, own_pmu, ref, nmi, sve_bits, NULL);
}

/* PAPI_FLOPS_PMU: an empty name (',', 'zen4,') or a PMU named twice is
 * refused: the one would leave no event, the other count every FLOP twice. */
static int named_kinds(struct pfc_count_kinds *ks, const struct pflops_table *t, const char *env, int nmi, int sve_bits,
		       struct pflops_error *err)
{
	char *list = strdup(env);
	int n = 0, rc = 0;
	if (!list)
		return pfc_err(err, PFLOPS_ENOMEM, "PAPI_FLOPS_PMU: out of memory");
	for (char *q = list; *q; q++)
		n += *q == ',';
	for (char *s = list, *next; s && !rc; s = next) {
		next = strchr(s, ',');
		if (next)
			*next++ = 0;
		const struct pflops_pmu *p = *s ? pflops_table_find(t, s) : NULL;
		if (!*s)
			rc = pfc_err(
				err, PFLOPS_EINVAL,
				"PAPI_FLOPS_PMU='%.60s' has an empty PMU name; give table names separated by ',' (papi_flops_avail --arch all lists them), or unset it",
				env);
		else if (!p)
			rc = pfc_err(
				err, PFLOPS_ENOENT,
				"PAPI_FLOPS_PMU names '%.60s', which is not in the formula table (papi_flops_avail --arch all lists it)",
				s);
		for (int k = 0; !rc && k < ks->n; k++)
			if (ks->kind[k].pmu == p)
				rc = pfc_err(
					err, PFLOPS_EINVAL,
					"PAPI_FLOPS_PMU names %s twice (as '%.40s' the second time), which would count its FLOPs twice; name each core kind's PMU once",
					p->name, s);
		if (!rc && flo_add_kind(ks, p, n > 0 || strcmp(p->sysfs, "cpu"), n > 0, nmi, sve_bits))
			rc = pfc_err(err, PFLOPS_EINVAL,
				     "PAPI_FLOPS_PMU names more than %d PMUs, one per core kind at most",
				     PFLOPS_MAX_KINDS);
	}
	free(list);
	return rc;
}

int flo_choose_kinds(struct pfc_count_kinds *ks, const struct pflops_table *t, const struct pflops_probe *pr,
		     int sve_bits, struct pflops_error *err)
{
	const char *env = getenv("PAPI_FLOPS_PMU");
	const char *force = getenv("LIBPFM_FORCE_PMU");
	memset(ks, 0, sizeof(*ks));
	if (env && *env)
		return named_kinds(ks, t, env, pr->nmi_watchdog, sve_bits, err);
	if (force && *force) {
		const struct pflops_pmu *p = pflops_table_find(t, force);
		if (!p)
			return pfc_err(err, PFLOPS_ENOCPU, "LIBPFM_FORCE_PMU=%s has no FLOP formula in the table",
				       force);
		flo_add_kind(ks, p, strcmp(p->sysfs, "cpu") != 0, 0, pr->nmi_watchdog, sve_bits);
		return 0;
	}
	if (!pfc_count_kinds_probe(ks, pr))
		return pfc_err(err, PFLOPS_ENOCPU, "%.200s", pr->nkinds ? pr->kinds[0].why : "the probe found no CPU");
	return 0;
}

/* "FP_OPS+DP_OPS:W512": the set's FLOP entries by name. */
static void metric_list(const unsigned *code, const int *slot_of, int n, char *out, size_t len)
{
	out[0] = 0;
	for (int i = 0; i < n; i++) {
		char name[64];
		struct pfc_evname e = { FLO_ENTRY(code[i]), FLO_WQ(code[i]), FLO_PQ(code[i]) };
		if (slot_of[i] < 0 || pfc_evname_format(&e, NULL, name, sizeof(name)))
			continue;
		size_t l = strlen(out);
		snprintf(out + l, len - l, "%s%s", l ? "+" : "", name);
	}
}

/* "4 general counters per thread (SMT on, one held by the NMI watchdog)" */
static void budget_words(const struct pfc_count_kind *kd, int nmi_watchdog, char *out, size_t len)
{
	const struct pflops_pmu *p = kd->pmu;
	int nmi = pflops_budget(p, kd->smt, nmi_watchdog, 0) < pflops_budget(p, kd->smt, 0, 0);
	int ref = kd->ref && pflops_budget(p, kd->smt, nmi_watchdog, 1) < pflops_budget(p, kd->smt, nmi_watchdog, 0);
	snprintf(out, len, "%d general counter%s per thread (SMT %s%s%s)", kd->budget, kd->budget == 1 ? "" : "s",
		 kd->smt ? "on" : "off", nmi ? ", one held by the NMI watchdog" : "",
		 ref ? ", one counting cycles to time the core kind" : "");
}

/* The FLOP metrics that fit alone on a kind: "DP_OPS or SP_OPS fit alone". */
static void fits_instead(const struct pfc_count_kind *kd, unsigned asked, char *out, size_t len)
{
	int n = 0;
	out[0] = 0;
	for (int m = 0; m < PFLOPS_NMETRIC; m++) {
		struct pflops_plan plan;
		if (!pflops_metric_is_flop(m) || asked == 1u << m || kd->pmu->metrics[m].klass == PFLOPS_UNAVAILABLE ||
		    pflops_plan_fit(&plan, kd->pmu, 1u << m, kd->sve_bits, kd->budget, NULL, NULL) ||
		    plan.cost > kd->budget)
			continue;
		size_t l = strlen(out);
		snprintf(out + l, len - l, "%s%s", n ? " or " : "", pflops_metric_name(m));
		n++;
	}
	size_t l = strlen(out);
	snprintf(out + l, len - l, n > 1 ? " fit alone; " : n ? " fits alone; " : "");
}

/* A kind's plan over its budget without the multiplex switch: refused
 * (exact counts first) with what fits instead and the switch. */
static int refuse_over(const struct pfc_count *c, const struct pfc_count_kinds *ks, int k, const unsigned *code,
		       const int *slot_of, int n, int nmi, char *msg, size_t len)
{
	const struct pfc_count_kind *kd = &ks->kind[k];
	const struct pflops_pmu *p = kd->pmu;
	unsigned asked = 0;
	for (int i = 0; i < n; i++) {
		unsigned e = FLO_ENTRY(code[i]), wq = FLO_WQ(code[i]), pq = FLO_PQ(code[i]);
		if (slot_of[i] >= 0 && p->metrics[e].klass != PFLOPS_UNAVAILABLE &&
		    (!(wq || pq) || pfc_count_qualifier_ok(p, e, (int)wq - 1, (int)pq - 1)))
			asked |= 1u << e;
	}
	char names[256], have[160], instead[160];
	metric_list(code, slot_of, n, names, sizeof(names));
	budget_words(kd, nmi, have, sizeof(have));
	fits_instead(kd, asked, instead, sizeof(instead));
	snprintf(
		msg, len,
		"%s need%s %d hardware counters on %s, which has %s: not counted (exact counts first). %sto count %s anyway, set PAPI_FLOPS_MULTIPLEX=1 (the kernel multiplexes; values are scaled and flops:::SCALED reads 1) or call PAPI_set_multiplex",
		names, strchr(names, '+') ? "" : "s", c->plan[k].cost, p->title[0] ? p->title : p->name, have, instead,
		strchr(names, '+') ? "them" : "it");
	return PFLOPS_ECNFLCT;
}

int flo_plan_set(struct pfc_count *c, const struct pfc_count_kinds *ks, const unsigned *code, const int *slot_of, int n,
		 int nflops, int multiplex, int nmi, char *msg, size_t len)
{
	struct pfc_count_want want[PFLOPS_NMETRIC];
	msg[0] = 0;
	for (int s = 0; s < PFLOPS_NMETRIC; s++)
		want[s] = (struct pfc_count_want){ -1, -1, -1 };
	for (int i = 0; i < n; i++)
		if (slot_of[i] >= 0)
			want[slot_of[i]] = (struct pfc_count_want){ (int)FLO_ENTRY(code[i]), (int)FLO_WQ(code[i]) - 1,
								    (int)FLO_PQ(code[i]) - 1 };
	c->multiplex = multiplex;
	pfc_count_plan(c, ks, want, nflops, 0);
	for (int k = 0; k < ks->n; k++) {
		const struct pflops_pmu *p = ks->kind[k].pmu;
		if (!p)
			continue;
		if (c->rc[k]) {
			snprintf(msg, len, "%s", c->why[k]);
			return c->rc[k];
		}
		if (pfc_count_over(c, k) && !multiplex)
			return refuse_over(c, ks, k, code, slot_of, n, nmi, msg, len);
		if (c->skipped[k]) {
			/* its sum would miss the time on these cores, with no caveat */
			int s = __builtin_ctz(c->skipped[k]);
			snprintf(
				msg, len,
				"%s is not counted on %s cores, which this hybrid machine also runs the thread on: its value would miss the time there; leave it out of the event set (papi_flops_avail lists what each core counts)",
				pflops_metric_name(want[s].metric), p->title[0] ? p->title : p->name);
			return PFLOPS_EUNAVAIL;
		}
	}
	return 0;
}
