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

#define EXIT_TOOL 125

static int sysfs_type(const char *pmu, uint32_t *type)
{
	char path[256];
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int rc = fscanf(f, "%u", type) == 1 ? 0 : -1;
	fclose(f);
	return rc;
}

static void add_note(char notes[][320], int *n, const char *text)
{
	if (*n < 8)
		snprintf(notes[(*n)++], 320, "%s", text);
}

int pf_run_hw(const struct pflops_table *t, char **argv, unsigned metrics_in, double *v, unsigned *got,
	      unsigned *metrics, double *wall, int *status, char *detail, size_t dlen,
	      const struct pflops_pmu **pmu_out, char notes[][320], int *nnotes)
{
	struct pflops_probe pr;
	struct pflops_error err = { 0 };
	if (pflops_probe_run(&pr, t, NULL, &err)) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	if (pr.access.code) {
		fprintf(stderr, "papi_flops_run: cannot count with hardware counters: %s\n"
				"  fix: %s\n"
				"  or count exactly without them: papi_flops_run --source trace -- %s ...\n",
			pr.access.msg, pr.access.fix, argv[0]);
		return EXIT_TOOL;
	}
	int hybrid = pr.nkinds > 1, paranoid_user = pr.paranoid > 1 && pr.access.fix[0];
	struct pflops_plan plan[PFLOPS_MAX_KINDS];
	struct pflops_child_event ev[PFLOPS_MAX_KINDS * (PFLOPS_MAX_COUNTERS + 1)];
	int first[PFLOPS_MAX_KINDS], ref[PFLOPS_MAX_KINDS], nev = 0;
	unsigned want = metrics_in;
	*pmu_out = NULL;
	for (int k = 0; k < pr.nkinds; k++) {
		const struct pflops_kind *kd = &pr.kinds[k];
		uint32_t type = PERF_TYPE_RAW;
		first[k] = ref[k] = -1;
		if (hybrid && sysfs_type(kd->pmu ? kd->pmu->sysfs : "cpu", &type)) {
			fprintf(stderr, "papi_flops_run: the kernel exposes no perf PMU '%s' for the %s cores\n",
				kd->pmu ? kd->pmu->sysfs : "cpu", kd->coretype);
			return EXIT_TOOL;
		}
		unsigned m = want;
		if (kd->pmu && !m)
			for (int i = 0; i < PFLOPS_NMETRIC; i++)
				m |= kd->pmu->metrics[i].klass != PFLOPS_UNAVAILABLE ? 1u << i : 0;
		if (kd->pmu && m && !pflops_plan_make(&plan[k], kd->pmu, m, kd->sve_bits, &err)) {
			if (!*pmu_out)
				*pmu_out = kd->pmu;
			want |= m;
			first[k] = nev;
			for (int c = 0; c < plan[k].ncounters; c++)
				ev[nev++] = (struct pflops_child_event){ .type = type, .config = plan[k].counter[c].config,
									 .exclude_kernel = paranoid_user };
			if (plan[k].cost > kd->budget) {
				char n[320];
				snprintf(n, sizeof(n), "%s cores: %d counters for %d per thread: the kernel multiplexes, values are scaled estimates",
					 kd->pmu->name, plan[k].cost, kd->budget);
				add_note(notes, nnotes, n);
			}
		} else {
			/* no formula here: count cycles, to report the time spent on these cores */
			char n[320];
			snprintf(n, sizeof(n), "%s cores (CPUs %.40s) cannot count FLOPs: %.220s", kd->coretype[0] ? kd->coretype : "some",
				 kd->cpus, kd->pmu ? err.msg : kd->why);
			add_note(notes, nnotes, n);
			ref[k] = nev;
			ev[nev++] = (struct pflops_child_event){ .type = PERF_TYPE_HARDWARE,
								 .config = PERF_COUNT_HW_CPU_CYCLES | (uint64_t)type << 32,
								 .exclude_kernel = paranoid_user };
		}
	}
	if (!*pmu_out) {
		fprintf(stderr, "papi_flops_run: no core of this machine has a formula for the metrics asked; see papi_flops_avail\n");
		return EXIT_TOOL;
	}
	if (paranoid_user)
		add_note(notes, nnotes, "user-space FLOPs only (perf_event_paranoid > 1)");
	if (pflops_count_child(argv, ev, nev, status, wall, &err)) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	*got = 0;
	double covered = 0, uncovered = 0;
	for (int k = 0; k < pr.nkinds; k++) {
		if (first[k] >= 0) {
			double counts[PFLOPS_MAX_COUNTERS];
			uint64_t run = 0;
			for (int c = 0; c < plan[k].ncounters; c++) {
				counts[c] = ev[first[k] + c].scaled;
				if (ev[first[k] + c].running > run)
					run = ev[first[k] + c].running;
			}
			covered += run;
			for (int m = 0; m < PFLOPS_NMETRIC; m++)
				if (plan[k].metrics & (1u << m)) {
					v[m] += pflops_plan_eval(&plan[k], m, counts);
					*got |= 1u << m;
				}
		} else if (ref[k] >= 0) {
			uncovered += ev[ref[k]].running;
		}
	}
	if (uncovered > 0) {
		char n[320];
		snprintf(n, sizeof(n), "%.1f%% of the run was on cores that cannot count FLOPs: the totals miss that part",
			 100 * uncovered / (covered + uncovered));
		add_note(notes, nnotes, n);
	}
	*metrics = want;
	snprintf(detail, dlen, "hardware counters, %d core kind%s, formula of %s%s", pr.nkinds, hybrid ? "s" : "",
		 (*pmu_out)->name, hybrid ? " and the others" : "");
	return 0;
}
