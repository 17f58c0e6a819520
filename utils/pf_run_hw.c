/*
 * papi_flops_run's hw source: the probe says whether counters can be
 * used; each core kind gets its own plan on its own perf PMU; the counts
 * of all kinds add up; time on kinds without a formula is reported as not
 * covered, never folded in as zero FLOPs.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pf_run_hw.h"
#include "pflops_perf.h"
#include "pf_signal.h"

#define EXIT_TOOL 125

static void add_note(char notes[][320], int *n, const char *text)
{
	if (*n < 8)
		snprintf(notes[(*n)++], 320, "%s", text);
}

int pf_run_hw(const struct pflops_table *t, char **argv, unsigned metrics_in, double *v, unsigned *got,
	      unsigned *metrics, double *wall, int *status, char *detail, size_t dlen,
	      const struct pflops_pmu **pmu_out, char notes[][320], int *nnotes, unsigned *scaled)
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
	int hybrid = pr.nkinds > 1, paranoid_user = pr.paranoid > 1 && pr.access.fix[0];
	struct pflops_plan plan[PFLOPS_MAX_KINDS];
	struct pfc_perf_kind pk[PFLOPS_MAX_KINDS];
	unsigned want = metrics_in;
	*pmu_out = NULL;
	for (int k = 0; k < pr.nkinds; k++) {
		const struct pflops_kind *kd = &pr.kinds[k];
		pk[k] = (struct pfc_perf_kind){ .type = PERF_TYPE_RAW,
						.arch = kd->pmu ? kd->pmu->arch : PFLOPS_ARCH_X86,
						.ref = hybrid,
						.pmu_name = kd->pmu ? kd->pmu->sysfs : "cpu" };
		if (hybrid && pfc_perf_pmu_type(pk[k].pmu_name, &pk[k].type, &err)) {
			fprintf(stderr, "papi_flops_run: %s (the %s cores)\n", err.msg, kd->coretype);
			return EXIT_TOOL;
		}
		unsigned m = want;
		if (kd->pmu && !m)
			m = pflops_pmu_available(kd->pmu);
		int budget = hybrid ? kd->budget_cycles : kd->budget;
		if (kd->pmu && m && !pflops_plan_fit(&plan[k], kd->pmu, m, kd->sve_bits, budget, NULL, &err)) {
			if (!*pmu_out)
				*pmu_out = kd->pmu;
			want |= m;
			pk[k].plan = &plan[k];
			if (plan[k].cost > budget) {
				pk[k].split = 1;
				char n[320];
				snprintf(
					n, sizeof(n),
					"%s cores: %d counters for %d per thread: the kernel multiplexes, values are scaled estimates",
					kd->pmu->name, plan[k].cost, budget);
				add_note(notes, nnotes, n);
			}
		} else {
			/* no formula here: only the time spent on these cores is measured */
			char n[320];
			snprintf(n, sizeof(n), "%s cores (CPUs %.40s) cannot count FLOPs: %.220s",
				 kd->coretype[0] ? kd->coretype : "some", kd->cpus, kd->pmu ? err.msg : kd->why);
			add_note(notes, nnotes, n);
			if (!hybrid) {
				fprintf(stderr, "papi_flops_run: %s\n", n);
				return EXIT_TOOL;
			}
		}
	}
	if (!*pmu_out) {
		fprintf(stderr,
			"papi_flops_run: no core of this machine has a formula for the metrics asked; see papi_flops_avail\n");
		return EXIT_TOOL;
	}
	if (paranoid_user)
		add_note(notes, nnotes, "user-space FLOPs only (perf_event_paranoid > 1)");

	struct pfc_perf_event ev[PFLOPS_MAX_KINDS * (PFLOPS_MAX_COUNTERS + 1)];
	int slot[PFLOPS_MAX_KINDS][PFLOPS_MAX_COUNTERS], nslots = 0;
	int nev = pfc_perf_layout(pk, pr.nkinds, ev, sizeof(ev) / sizeof(ev[0]), slot, &nslots);
	struct pflops_child child;
	struct pfc_perf_set *set = NULL;
	struct pfc_perf_attr a = { .inherit = 1, .enable_on_exec = 1, .exclude_hv = 1, .exclude_kernel = paranoid_user };
	struct pfc_perf_value *val = calloc(nev > 0 ? nev : 1, sizeof(*val));
	double *slots = calloc(nslots ? nslots : 1, sizeof(*slots));
	int rc = 0;
	if (nev < 0 || !val || !slots) {
		snprintf(err.msg, sizeof(err.msg), "out of memory or too many events (%d)", nev);
		rc = PFLOPS_ENOMEM;
	}
	if (!rc)
		rc = pfc_child_spawn(&child, argv, &err);
	if (!rc) {
		child.interrupt = &pf_interrupt; /* passed on to the program */
		a.tid = child.pid;
		if ((rc = pfc_perf_open(&set, ev, nev, &a, &err)))
			pfc_child_abort(&child);
		else
			rc = pfc_child_run(&child, status, wall, &err);
	}
	struct pfc_perf_status st = { 0 };
	if (!rc && !(rc = pfc_perf_read(set, val, &err)))
		pfc_perf_sum(set, val, slots, nslots, &st);
	pfc_perf_close(set);
	free(val);
	if (rc) {
		free(slots);
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	*got = 0;
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (want & (1u << m)) {
			v[m] = pfc_perf_metric(pk, pr.nkinds, slot, slots, m);
			*got |= 1u << m;
		}
	double detected = pfc_perf_detected(pk, pr.nkinds, slot, slots);
	free(slots);
	if (st.estimated)
		*scaled = *got; /* extrapolated: their class is estimate */
	if (st.unscheduled)
		add_note(notes, nnotes,
			 "some counters never ran (the kernel could not schedule them): their metrics read low");
	if (detected > 0) {
		char n[320];
		snprintf(
			n, sizeof(n),
			"%.0f %s instructions ran but are not in %s (planned without %s to fit the counters): add --metrics %s,%s",
			detected, pflops_metric_name((*pmu_out)->detect.part),
			pflops_metric_name((*pmu_out)->detect.metric), pflops_metric_name((*pmu_out)->detect.part),
			pflops_metric_name((*pmu_out)->detect.metric), pflops_metric_name((*pmu_out)->detect.part));
		add_note(notes, nnotes, n);
	}
	if (st.uncovered_ns > 0) {
		char n[320];
		snprintf(n, sizeof(n),
			 "%.1f%% of the run was on cores that cannot count FLOPs: the totals miss that part",
			 100 * st.uncovered_share);
		add_note(notes, nnotes, n);
	}
	*metrics = want;
	snprintf(detail, dlen, "hardware counters, %d core kind%s, formula of %s%s", pr.nkinds, hybrid ? "s" : "",
		 (*pmu_out)->name, hybrid ? " and the others" : "");
	return 0;
}
