/*
 * papi_flops_run's hw source: what runs the program.  The probe says
 * whether counters can be used; the core's counting pipeline
 * (pflops_count.h, as the flops component uses it) plans every core kind
 * on its own perf PMU with the run-time SVE vector length, runs the
 * program held until its events are open (pfc_count_program), reads and
 * sums them; here: what to count, and the report.  Time on kinds without
 * a formula is reported as not covered, never folded in as zero FLOPs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pf_run_hw.h"
#include "pflops_count.h"
#include "pf_signal.h"

#define EXIT_TOOL 125

/* Plan the metrics on the probe's kinds: 0, or an exit code after saying why. */
static int plan(struct pfc_count *c, const struct pfc_count_kinds *ks, const struct pflops_probe *pr, unsigned metrics,
		struct pf_report *r)
{
	int hybrid = ks->n > 1;
	unsigned want = metrics;
	for (int k = 0; !want && k < ks->n; k++)
		if (ks->kind[k].pmu)
			want |= pflops_pmu_available(ks->kind[k].pmu);
	struct pfc_count_want w[PFLOPS_NMETRIC];
	pfc_count_want_metrics(w, want);
	c->multiplex = 1; /* a set over the counters is counted, as an estimate */
	pfc_count_plan(c, ks, w, PFLOPS_NMETRIC, metrics != 0);
	r->pmu = NULL;
	r->asked = 0;
	for (int k = 0; k < ks->n; k++) {
		const struct pfc_count_kind *kd = &ks->kind[k];
		if (!c->planned[k]) {
			/* no formula here: only the time spent on these cores is measured */
			char n[320];
			snprintf(n, sizeof(n), "%s cores (CPUs %.40s) cannot count FLOPs: %.220s",
				 pr->kinds[k].coretype[0] ? pr->kinds[k].coretype : "some", pr->kinds[k].cpus,
				 c->why[k]);
			if (!hybrid) {
				fprintf(stderr, "papi_flops_run: %s\n", n);
				return EXIT_TOOL;
			}
			pf_report_note(r, "%s", n);
			if (pfc_count_untimed(ks, k, n, sizeof(n)))
				pf_report_note(r, "%s", n);
			continue;
		}
		if (!r->pmu)
			r->pmu = kd->pmu;
		r->asked |= c->plan[k].metrics;
		if (pfc_count_over(c, k))
			pf_report_note(
				r,
				"%s cores: %d counters for %d per thread: the kernel multiplexes, values are scaled estimates",
				kd->pmu->name, c->plan[k].cost, kd->budget);
	}
	if (!r->pmu) {
		fprintf(stderr,
			"papi_flops_run: no core of this machine has a formula for the metrics asked; see papi_flops_avail\n");
		return EXIT_TOOL;
	}
	return 0;
}

int pf_run_hw(const struct pflops_table *t, char **argv, unsigned metrics, struct pf_report *r)
{
	struct pflops_probe pr;
	struct pflops_error err = { 0 };
	if (pflops_probe_run(&pr, t, NULL, &err)) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	if (pr.access.code) {
		fprintf(stderr, "papi_flops_run: cannot count with hardware counters: %s\n  fix: %s\n", pr.access.msg,
			pr.access.fix);
#if defined(__x86_64__) /* the trace source is x86-64 only for now */
		fprintf(stderr, "  or count exactly without them: papi_flops_run --source trace -- %s ...\n", argv[0]);
#endif
		return EXIT_TOOL;
	}
	static struct pfc_count_kinds ks;
	static struct pfc_count c;
	int paranoid_user = pr.paranoid > 1 && pr.access.fix[0];
	pfc_count_kinds_probe(&ks, &pr);
	pfc_count_kinds_exec_vl(&ks); /* the program's length, not this thread's */
	if (pfc_count_kinds_types(&ks, &err)) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	int rc = plan(&c, &ks, &pr, metrics, r);
	if (rc)
		return rc;
	if (paranoid_user)
		pf_report_note(r, "user-space FLOPs only (perf_event_paranoid > 1)");
	struct pfc_perf_attr a = { .exclude_hv = 1, .exclude_kernel = paranoid_user };
	if (pfc_count_layout(&c, &err) || pfc_count_program(&c, argv, &a, &pf_interrupt, &r->status, &r->wall, &err)) {
		pfc_count_close(&c);
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	r->got = 0;
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (r->asked >> m & 1) {
			r->v[m] = pfc_count_value(&c, m);
			r->got |= 1u << m;
		}
	double detected = pfc_count_detected(&c);
	struct pfc_perf_status st = c.st;
	/* a metric one kind lacks misses that kind's time: say how much */
	for (int k = 0; k < ks.n; k++)
		for (int m = 0; c.planned[k] && m < PFLOPS_NMETRIC; m++)
			if (c.skipped[k] >> m & r->got >> m & 1)
				pf_report_note(r,
					       "%s not counted on %s cores (%.1f%% of the run): its total misses them",
					       pflops_metric_name(m),
					       pr.kinds[k].coretype[0] ? pr.kinds[k].coretype : ks.kind[k].pmu->name,
					       100 * pfc_count_share(&c, k));
	pfc_count_close(&c);
	if (st.estimated)
		r->scaled = r->got; /* extrapolated: their class is estimate */
	if (st.unscheduled)
		pf_report_note(r,
			       "some counters never ran (the kernel could not schedule them): their metrics read low");
	if (detected > 0) {
		const char *part = pflops_metric_name(r->pmu->detect.part),
			   *m = pflops_metric_name(r->pmu->detect.metric);
		pf_report_note(
			r,
			"%.0f %s instructions ran but are not in %s (planned without %s to fit the counters): add --metrics %s,%s",
			detected, part, m, part, m, part);
	}
	if (st.uncovered_ns > 0)
		pf_report_note(r, "%.1f%% of the run was on cores that cannot count FLOPs: the totals miss that part",
			       100 * st.uncovered_share);
	int sve = 0;
	for (int k = 0; k < ks.n; k++)
		if (c.planned[k] && ks.kind[k].pmu->sve_bits)
			sve = ks.kind[k].sve_bits;
	char vl[64] = "";
	if (sve)
		snprintf(vl, sizeof(vl), ", SVE vector length %d bits", sve);
	snprintf(r->source_detail, sizeof(r->source_detail), "hardware counters, %d core kind%s, formula of %s%s%s",
		 pr.nkinds, pr.nkinds > 1 ? "s" : "", r->pmu->name, pr.nkinds > 1 ? " and the others" : "", vl);
	r->wall_real = 1;
	return 0;
}
