/* papi_flops_run --by-function[=N]: FLOPs per function for the trace and
 * model sources (utils/pf_run_funcs.c). */
#ifndef PF_RUN_FUNCS_H
#define PF_RUN_FUNCS_H
#include "papi_flops.h"
#include "pf_report.h"
#include "pflops_trace.h"

/* r->byfunc from the traced functions f: per function the report's FLOP
 * metrics (r->asked & r->got), exact, or what pmu's formulas read for
 * the function's mix (pmu non-NULL: the model source); sorted by FP_OPS
 * (else the first of them), the top `top` listed (0: all), the others
 * summed.  0, or EXIT_TOOL after saying why. */
int pf_byfunc_fill(struct pf_report *r, struct pft_funcs *f, const struct pflops_pmu *pmu, unsigned top);
void pf_byfunc_free(struct pf_byfunc *b);
#endif
