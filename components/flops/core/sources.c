/*
 * Metrics from a traced mix: exactly (the trace source) and as a PMU's
 * formulas would read them (the model: source).  The model uses the same
 * plan and evaluation as the hardware path, so a formula checked here is
 * the formula the component runs.
 */
#include <string.h>
#include "pflops_internal.h"
#include "pflops_trace.h"

/* A metric's value in a mix, as the registry defines it: FLOPs (active
 * lanes x FLOPs per element) or instructions (an FMA counted twice, as
 * the PMUs' packed-instruction events do), of its precision and widths. */
static double registry_count(const struct pflops_mix *m, const struct pflops_metric_info *d)
{
	uint64_t n = 0;
	for (int p = 0; p < PFLOPS_NPREC; p++)
		for (int w = 0; w < PFLOPS_NWIDTH; w++) {
			if ((d->prec >= 0 && p != d->prec) || !(d->widths >> w & 1))
				continue;
			for (int o = 0; o < PFLOPS_NOP; o++)
				n += d->flop ? m->lanes_active[p][w][o] * pflops_op_flops((enum pflops_op)o)
					     : m->insts[p][w][o] * (o == PFLOPS_OP_FMA ? 2 : 1);
		}
	return (double)n;
}

void pflops_mix_metrics(const struct pflops_mix *m, double v[PFLOPS_NMETRIC])
{
	for (int k = 0; k < PFLOPS_NMETRIC; k++)
		v[k] = registry_count(m, pflops_metric_info(k));
}

void pflops_mix_widths(const struct pflops_mix *m, double w[PFLOPS_NWIDTH])
{
	for (int i = 0; i < PFLOPS_NWIDTH; i++) {
		w[i] = 0;
		for (int p = 0; p < PFLOPS_NPREC; p++)
			for (int o = 0; o < PFLOPS_NOP; o++)
				w[i] += (double)m->lanes_active[p][i][o] * pflops_op_flops((enum pflops_op)o);
	}
}

int pflops_model_metrics(const struct pflops_pmu *pmu, const struct pflops_mix *m, unsigned metrics, int sve_bits,
			 double v[PFLOPS_NMETRIC], unsigned *got, struct pflops_error *err)
{
	*got = 0;
	for (int k = 0; k < PFLOPS_NMETRIC; k++) {
		if (!(metrics & (1u << k)) || pmu->metrics[k].klass == PFLOPS_UNAVAILABLE)
			continue;
		struct pflops_plan plan;
		int rc = pflops_plan_make(&plan, pmu, 1u << k, sve_bits, err);
		if (rc)
			return rc;
		double counts[PFLOPS_MAX_COUNTERS] = { 0 };
		int modelled = 1;
		for (int c = 0; c < plan.ncounters && modelled; c++)
			for (int e = 0; e < plan.counter[c].nevents && modelled; e++) {
				const struct pflops_event *ev = &pmu->events[plan.counter[c].events[e]];
				double n;
				struct pflops_error e2;
				if (!ev->model) {
					modelled = 0;
					break;
				}
				rc = pfc_model_eval(ev->model, m, &n, &e2);
				if (rc == PFLOPS_EUNAVAIL) { /* `none`: not modelled on x86 */
					modelled = 0;
					break;
				}
				if (rc)
					return pfc_err(err, rc, "%s:%d: pmu %s event %s: %s", pmu->file, ev->line,
						       pmu->name, ev->alias, e2.msg);
				counts[c] += n;
			}
		if (!modelled)
			continue;
		v[k] = pflops_plan_eval(&plan, k, counts);
		*got |= 1u << k;
	}
	return 0;
}
