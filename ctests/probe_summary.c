/* Test helper: the probe's answer for a topology, one line per core
 * kind, stable for diffing against ctests/probe/<machine>.expected. */
#include <stdio.h>
#include "papi_flops.h"

int main(int argc, char **argv)
{
	struct pflops_table t = { 0 };
	struct pflops_probe pr;
	struct pflops_error err = { 0 };
	if (pflops_table_builtin(&t, &err) || pflops_probe_run(&pr, &t, argc > 1 ? argv[1] : NULL, &err)) {
		fprintf(stderr, "probe_summary: %s\n", err.msg);
		pflops_table_free(&t);
		return 1;
	}
	for (int k = 0; k < pr.nkinds; k++) {
		const struct pflops_kind *kd = &pr.kinds[k];
		printf("kind %s cpus=%s n=%d %s %u/%u/%u smt=%s", kd->coretype[0] ? kd->coretype : "-", kd->cpus,
		       kd->ncpus, kd->vendor, kd->family, kd->model, kd->stepping, kd->smt ? "on" : "off");
		if (!kd->pmu) {
			printf(" pmu=- why=%s\n", kd->why);
			continue;
		}
		printf(" pmu=%s budget=%d\n", kd->pmu->name, kd->budget);
		for (int m = 0; m < PFLOPS_NMETRIC; m++) {
			struct pflops_plan plan;
			char msg[512];
			int rc = pflops_probe_fit(kd, 1u << m, &plan, msg, sizeof(msg));
			printf("  %-8s %s\n", pflops_metric_name(m),
			       rc == 0		       ? msg
			       : rc == 1	       ? msg
			       : rc == PFLOPS_EUNAVAIL ? "unavailable"
						       : msg);
		}
	}
	if (pr.live)
		printf("access %s: %s\n", pflops_strerror(pr.access.code), pr.access.msg);
	pflops_table_free(&t);
	return 0;
}
