/*
 * Plans of core kinds laid out as perf events (pflops_perf.h), and the
 * metrics read back from the engine's summed slots.  The flops component
 * and papi_flops_run's hw source both count this way, so a plan is
 * opened, grouped, scaled and weighted the same wherever it runs.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include "pflops_internal.h"
#include "pflops_perf.h"

/* core cycles on the kind's own PMU: x86 raw 0x3c (fixed counter 1 where
 * free), Arm CPU_CYCLES 0x11 (architectural; the cycle counter): a raw
 * event of that PMU opens on any kernel, where the generic cycles event
 * with the PMU's type in bits 32-63 needs one that knows extended types */
static void cycles_event(const struct pfc_perf_kind *kd, struct pfc_perf_event *e)
{
	e->type = kd->type;
	e->config = kd->arch == PFLOPS_ARCH_X86 ? 0x3c : 0x11;
	snprintf(e->name, sizeof(e->name), "%.20s/cycles/", kd->pmu_name ? kd->pmu_name : "cpu");
}

int pfc_perf_layout(const struct pfc_perf_kind *kinds, int nkinds, struct pfc_perf_event *ev, int max,
		    int slot[][PFLOPS_MAX_COUNTERS], int *nslots)
{
	int n = 0, group = 0, s = 0;
	for (int k = 0; k < nkinds; k++) {
		const struct pfc_perf_kind *kd = &kinds[k];
		const struct pflops_plan *p = kd->plan;
		int need = !!kd->ref + (p ? p->ncounters : 0);
		if (n + need > max)
			return PFLOPS_EINVAL;
		if (kd->ref) {
			struct pfc_perf_event *e = &ev[n++];
			memset(e, 0, sizeof(*e));
			cycles_event(kd, e);
			e->group = group;
			e->slot = -1;
			e->kind = k;
			e->cpu = -1;
		}
		for (int c = 0; p && c < p->ncounters; c++) {
			struct pfc_perf_event *e = &ev[n++];
			memset(e, 0, sizeof(*e));
			e->type = kd->type;
			e->config = p->counter[c].config;
			e->group = kd->split && (c || kd->ref) ? ++group : group;
			e->slot = s;
			e->kind = k;
			e->cpu = -1;
			snprintf(e->name, sizeof(e->name), "%.20s/%.40s/", kd->pmu_name ? kd->pmu_name : "cpu",
				 p->counter[c].spec);
			slot[k][c] = s++;
		}
		group++;
	}
	*nslots = s;
	return n;
}

double pfc_perf_metric(const struct pfc_perf_kind *kinds, int nkinds, int slot[][PFLOPS_MAX_COUNTERS],
		       const double *slots, int s)
{
	double v = 0;
	for (int k = 0; k < nkinds; k++)
		for (int c = 0; kinds[k].plan && c < kinds[k].plan->ncounters; c++)
			v += kinds[k].plan->counter[c].weight[s] * slots[slot[k][c]];
	return v;
}

int pfc_perf_sample(const struct pfc_perf_kind *kinds, int nkinds, int slot[][PFLOPS_MAX_COUNTERS],
		    struct pfc_perf_event *ev, int n, int *owner, int s, uint64_t P, int tag, struct pflops_error *err)
{
	int nsample = 0;
	if (!P)
		return pfc_err(err, PFLOPS_EINVAL, "an overflow threshold of 0");
	for (int k = 0; k < nkinds; k++)
		for (int c = 0; kinds[k].plan && c < kinds[k].plan->ncounters; c++) {
			const struct pflops_counter *ct = &kinds[k].plan->counter[c];
			double w = ct->weight[s];
			if (w == 0)
				continue;
			if (w < 0)
				return pfc_err(err, PFLOPS_EINVAL,
					       "%s has weight %g in the formula: a subtracted count cannot overflow",
					       ct->spec, w);
			int i = 0;
			while (i < n && ev[i].slot != slot[k][c])
				i++;
			if (i == n)
				return pfc_err(err, PFLOPS_EINVAL, "counter %s is not in the layout", ct->spec);
			if (owner[i] >= 0 && owner[i] != tag)
				return pfc_err(
					err, PFLOPS_ECNFLCT,
					"%s counts for two overflowing events of this set and can sample for one only",
					ev[i].name);
			double q = (double)P / w, period = (double)(uint64_t)q;
			ev[i].sample_period = (uint64_t)(period < q ? period + 1 : period); /* ceil(P / w) */
			if (!ev[i].sample_period)
				ev[i].sample_period = 1;
			owner[i] = tag;
			nsample++;
		}
	if (!nsample)
		return pfc_err(err, PFLOPS_EUNAVAIL, "no counter of this set counts the event to overflow");
	return nsample;
}

double pfc_perf_detected(const struct pfc_perf_kind *kinds, int nkinds, int slot[][PFLOPS_MAX_COUNTERS],
			 const double *slots)
{
	double v = 0;
	for (int k = 0; k < nkinds; k++)
		for (int c = 0; kinds[k].plan && c < kinds[k].plan->ncounters; c++)
			if (kinds[k].plan->counter[c].detects)
				v += slots[slot[k][c]];
	return v;
}
