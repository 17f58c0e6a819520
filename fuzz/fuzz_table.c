/*
 * Fuzz the presets table parser (components/flops/core/table.c) and the
 * planner on every block it accepts.  Input: a .pft file.
 * Invariants: a refused table names "fuzz.pft:LINE: "; an accepted one
 * has every metric declared with a caveat unless exact, terms on valid
 * events with finite weights, and plans that fit PFLOPS_MAX_COUNTERS or
 * are refused with a reason.
 */
#include <math.h>
#include "papi_flops.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return pflops_encode_init(NULL) ? 1 : 0;
}

static void check_pmu(const struct pflops_pmu *p)
{
	FUZZ_CHECK(p->nmatches > 0 && p->counters_smt > 0, "pmu %s complete", p->name);
	for (int m = 0; m < PFLOPS_NMETRIC; m++) {
		const struct pflops_metric_def *d = &p->metrics[m];
		FUZZ_CHECK((int)d->klass >= 0 && d->klass < PFLOPS_NCLASS, "%s %s declared", p->name,
			   pflops_metric_name(m));
		FUZZ_CHECK(d->klass == PFLOPS_EXACT || (d->caveat && *d->caveat), "%s %s has a caveat", p->name,
			   pflops_metric_name(m));
		FUZZ_CHECK((d->klass == PFLOPS_UNAVAILABLE) == (d->nterms == 0), "%s %s terms", p->name,
			   pflops_metric_name(m));
		for (int k = 0; k < d->nterms; k++)
			FUZZ_CHECK(d->terms[k].event >= 0 && d->terms[k].event < p->nevents &&
					   isfinite(d->terms[k].w0) && isfinite(d->terms[k].wvl),
				   "%s %s term %d", p->name, pflops_metric_name(m), k);
		if (d->klass == PFLOPS_UNAVAILABLE)
			continue;
		struct pflops_plan plan;
		struct pflops_error err = { 0 };
		int rc = pflops_plan_make(&plan, p, 1u << m, 0, &err);
		if (rc) {
			FUZZ_CHECK(err.msg[0], "plan of %s %s refused without a reason", p->name,
				   pflops_metric_name(m));
			continue;
		}
		FUZZ_CHECK(plan.ncounters >= 1 && plan.ncounters <= PFLOPS_MAX_COUNTERS && plan.cost >= plan.ncounters,
			   "plan of %s %s: %d counters, cost %d", p->name, pflops_metric_name(m), plan.ncounters,
			   plan.cost);
		double ones[PFLOPS_MAX_COUNTERS];
		for (int c = 0; c < plan.ncounters; c++)
			ones[c] = 1;
		FUZZ_CHECK(isfinite(pflops_plan_eval(&plan, m, ones)), "finite value");
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	int rc = pflops_table_parse(&t, text, "fuzz.pft", &err);
	if (rc)
		FUZZ_CHECK(rc == PFLOPS_ENOMEM || (rc == PFLOPS_EINVAL && !strncmp(err.msg, "fuzz.pft:", 9)),
			   "rc %d: '%s'", rc, err.msg);
	else
		for (int i = 0; i < t.npmus; i++)
			check_pmu(&t.pmus[i]);
	pflops_table_free(&t);
	free(text);
	return 0;
}
