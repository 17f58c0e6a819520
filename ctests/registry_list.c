/* Test helper: the metric registry (PFLOPS_METRICS) as text, the oracle
 * ctests/test_registry.sh holds every consumer to.  One line a metric:
 *   NAME UNIT PAPI_PRESET|- QUALIFIERS
 * QUALIFIERS: what the component's trace source offers on it (the widths
 * the metric counts, then the precisions when it counts all of them). */
#include <stdio.h>
#include "papi_flops.h"
#include "pflops_evname.h"

int main(void)
{
	for (int m = 0; m < PFLOPS_NMETRIC; m++) {
		const struct pflops_metric_info *d = pflops_metric_info(m);
		printf("%s %s %s ", d->name, d->unit, d->papi ? d->papi : "-");
		const char *sep = "";
		for (int w = 0; w < PFLOPS_NWIDTH; w++)
			if (d->widths >> w & 1) {
				printf("%s%s", sep, pfc_width_qual[w]);
				sep = ",";
			}
		for (int p = 0; d->prec < 0 && p < PFLOPS_NPREC; p++)
			printf(",%s", pfc_prec_qual[p]);
		printf("\n");
	}
	return 0;
}
