/* papi_flops_run --sample P --source trace (utils/pf_sample_trace.c,
 * x86-64 only, as the tracer). */
#ifndef PF_SAMPLE_TRACE_H
#define PF_SAMPLE_TRACE_H
#include "pf_sample.h"
#include "pflops_trace.h"

struct pf_sample_trace;

/* A sampler of metric every period FLOPs; NULL after saying why. */
struct pf_sample_trace *pf_sample_trace_new(int metric, uint64_t period);
/* Its hooks into the tracer's options (overflow_weight, overflow). */
void pf_sample_trace_opts(struct pf_sample_trace *t, struct pflops_trace_opts *o);
/* After the run: the profile (the caller frees it with pf_sample_free);
 * counted: the metric's exact total.  The sampler is freed. */
struct pf_sample *pf_sample_trace_end(struct pf_sample_trace *t, double counted);
#endif
