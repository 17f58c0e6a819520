/* papi_flops_run --sample P: a FLOP profile from overflows every P FLOPs,
 * each with its call stack (utils/pf_sample.c); the hw source's sampling
 * in utils/pf_sample_hw.c, the trace source's in utils/pf_sample_trace.c.
 *
 * Each sample stands for P FLOPs of the sampled metric.  Rows are summed
 * samples: per function (the innermost frame, "self", as --by-function
 * counts) and per call path (outermost first); --folded writes the paths
 * as flame-graph input, "frame;frame;frame FLOPs" a line. */
#ifndef PF_SAMPLE_H
#define PF_SAMPLE_H
#include <stdint.h>
#include <stdio.h>
#include "papi_flops.h"

#define PF_SAMPLE_MAX_FRAMES 128

/* a native event of the hw formula and its sampling */
struct pf_sample_native {
	char name[64];
	double weight;	 /* in the sampled metric's formula */
	uint64_t period; /* ceil(P / weight) */
	uint64_t samples;
	double count; /* its total count (scaled if multiplexed) */
};

struct pf_sample_frame;
struct pf_sample_path;

struct pf_sample {
	uint64_t period;		       /* P */
	int metric;			       /* enum pflops_metric sampled */
	int exact;			       /* trace: an overflow at each crossing of a multiple of P */
	const char *standin;		       /* hw test stand-in event (PAPI_FLOPS_TEST_SWEVENT); NULL: none */
	uint64_t samples, lost, unwound_short; /* lost: records the kernel dropped; unwound_short: stacks cut */
	double counted;			       /* the metric's total as counted (0: unknown) */
	struct pf_sample_native native[PFLOPS_MAX_COUNTERS];
	int nnative;
	/* internals: the interned frames and the paths */
	struct pf_sample_frame *frames;
	size_t nframes, capframes;
	int *fhash;
	size_t fhcap;
	struct pf_sample_path *paths;
	size_t npaths, cappaths;
	int *phash;
	size_t phcap;
	int oom;
	unsigned top; /* rows listed per table (0: all) */
};

struct pf_sample *pf_sample_new(uint64_t period, int metric, int exact);
void pf_sample_free(struct pf_sample *s);
/* The id of a frame (function name and its file, NULL: none), interned;
 * -1 when out of memory. */
int pf_sample_frame_id(struct pf_sample *s, const char *name, const char *object);
/* Add n samples of the stack ids[0..depth-1], innermost first. */
void pf_sample_add(struct pf_sample *s, const int *ids, int depth, uint64_t n);

/* The profile in the report (struct pf_report's sample_text and
 * sample_json, s a struct pf_sample): text (s->top rows of each table;
 * 0: all) or the value of JSON's "sample". */
void pf_sample_text(FILE *o, const void *s);
void pf_sample_json(FILE *o, const void *s);
/* --folded FILE: every call path, outermost frame first.  0, or -1
 * after saying why on stderr. */
int pf_sample_folded(const struct pf_sample *s, const char *path);
#endif
