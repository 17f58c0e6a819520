/* The hw source of papi_flops_run (utils/pf_run_hw.c). */
#ifndef PF_RUN_HW_H
#define PF_RUN_HW_H
#include "papi_flops.h"
#include "pf_report.h"

/* Count argv's FLOPs with hardware counters, every core kind with its own
 * formula (metrics 0: all each kind has), into r: values, the metrics
 * asked and got, wall time, wait status, the source's description, the
 * PMU whose caveats apply, notes, and the metrics extrapolated from
 * multiplexed counters.  Returns 0, or an exit code after printing why
 * (125: counters unusable here, with the fix). */
int pf_run_hw(const struct pflops_table *t, char **argv, unsigned metrics, struct pf_report *r);
#endif
