/* papi_flops_run --mask-sampling PERIOD: masked AVX-512 lanes corrected
 * from sampled opmask registers (utils/pf_run_mask.c,
 * docs/masked-lanes.md). */
#ifndef PF_RUN_MASK_H
#define PF_RUN_MASK_H
#include "papi_flops.h"
#include "pf_report.h"
#include "pflops_trace.h"

/* --source hw: sample this machine's FP_ARITH events that can be masked,
 * every period counts, with k0-k7.  Refuses (125, saying why and what
 * to do) where counters or the kernel's opmask sampling are missing. */
int pf_mask_hw(const struct pflops_table *t, char **argv, unsigned metrics, unsigned period, struct pf_report *r);

/* --source model:PMU --mask-sampling: the trace feeds the same estimator,
 * every period-th count of each modelled event with the opmask registers
 * as the instruction ran.  new: NULL after saying why (nothing to
 * correct on pmu); opts: sets the tracer's hook; report: after the
 * trace, fills r->mask (the caller fills r->v from the model) and frees
 * mm; 0 or an exit code. */
struct pf_mask_model;
struct pf_mask_model *pf_mask_model_new(const struct pflops_pmu *pmu, unsigned metrics, unsigned period);
void pf_mask_model_opts(struct pf_mask_model *mm, struct pflops_trace_opts *o);
int pf_mask_model_report(struct pf_mask_model *mm, const struct pflops_mix *mix, struct pf_report *r);
void pf_mask_model_free(struct pf_mask_model *mm); /* when the trace failed */
#endif
