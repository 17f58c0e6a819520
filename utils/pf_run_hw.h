/* The hw source of papi_flops_run (utils/pf_run_hw.c). */
#ifndef PF_RUN_HW_H
#define PF_RUN_HW_H
#include <stddef.h>
#include "papi_flops.h"

/* Count argv's FLOPs with hardware counters, every core kind with its own
 * formula.  Fills v/got (metric values), *metrics (what was asked, or all
 * available when 0), wall time, wait status, a source description, the
 * PMU whose caveats apply, notes, and *scaled: the metrics extrapolated
 * from multiplexed counters.  Returns 0, or an exit code after
 * printing why (125: counters unusable here, with the fix). */
int pf_run_hw(const struct pflops_table *t, char **argv, unsigned metrics_in, double *v, unsigned *got,
	      unsigned *metrics, double *wall, int *status, char *detail, size_t dlen, const struct pflops_pmu **pmu,
	      char notes[][320], int *nnotes, unsigned *scaled);
#endif
