/* papi_flops_run --sample P --source hw (utils/pf_sample_hw.c). */
#ifndef PF_SAMPLE_HW_H
#define PF_SAMPLE_HW_H
#include "papi_flops.h"
#include "pf_report.h"
#include "pf_sample.h"

/* Run argv with every native event of metric's formula sampling every
 * ceil(period / weight) counts with its call chain: the report's metrics
 * (metrics, 0: all the PMU has) from the events' totals into r, the
 * profile into *out.  0, or an exit code after saying why. */
int pf_sample_hw(const struct pflops_table *t, char **argv, unsigned metrics, int metric, uint64_t period,
		 struct pf_report *r, struct pf_sample **out);
#endif
