/* papi_flops_run --mask-sampling PERIOD: masked AVX-512 lanes corrected
 * from sampled opmask registers (utils/pf_run_mask.c,
 * docs/masked-lanes.md). */
#ifndef PF_RUN_MASK_H
#define PF_RUN_MASK_H
#include "papi_flops.h"
#include "pf_report.h"

/* --source hw: sample this machine's FP_ARITH events that can be masked,
 * every period counts, with k0-k7.  Refuses (125, saying why and what
 * to do) where counters or the kernel's opmask sampling are missing. */
int pf_mask_hw(const struct pflops_table *t, char **argv, unsigned metrics, unsigned period, struct pf_report *r);

#endif
