/*
 * pflops_mask.h: masked AVX-512 lanes, estimated from samples.
 *
 * FP_ARITH_INST_RETIRED counts a masked instruction as if every lane ran
 * (class masked-full: an upper bound).  Sampling the event every P-th
 * count and reading, at each sample, the instruction and the opmask
 * register it uses gives the share of lanes that really ran:
 *
 *   FLOPs ~= weight x count x mean(active share of the sampled units)
 *
 * Each count of the event is equally likely to be sampled, so an FMA
 * (which FP_ARITH counts twice) is sampled twice as often as an add, as
 * its weight in the count requires.  The 95% interval is a score
 * interval for a mean of values in [0, 1] using the largest variance such
 * values can have, mu (1 - mu), with the finite-population correction
 * 1 - samples/count: it does not collapse when every sample has the same
 * share (all unmasked), and it is exact (zero width) when every count is
 * sampled.  Samples that cannot be used are counted and reported, never
 * folded in: the instruction at the sampled address is not one the event
 * counts (skid), its opmask register was not in the record, the bytes
 * could not be read, or the register may have been rewritten between the
 * sampled instruction and the register capture.
 *
 * PAPI-independent; the hardware path (perf records) and the model path
 * (the tracer) feed the same functions.  docs/masked-lanes.md.
 * Errors: papi_flops.h.
 */
#ifndef PFC_MASK_H
#define PFC_MASK_H

#include "papi_flops.h"
#include "pflops_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The accuracy class of a sampled correction (not a table class). */
#define PFC_CLASS_MASKED_SAMPLED "masked-sampled"

/* What one sampled event counts: per retired instruction of each class,
 * the event's increment at full lanes (0: the event does not count that
 * class).  FP_ARITH: 1 per instruction, 2 for an FMA or DPP. */
struct pfc_mask_event {
	float inc[PFLOPS_NPREC][PFLOPS_NWIDTH][PFLOPS_NOP];
	double weight; /* FLOPs per count at full lanes (the formula's weight) */
	/* How many instructions the register capture may trail the sampled
	 * one by (0: captured at it).  When > 0, a sample whose straight-line
	 * code after the instruction writes its mask register within that
	 * many instructions is not used (`changed`). */
	unsigned capture_lag;
};

/* The classes and increments of a table `model` spec (presets/README.md),
 * by evaluating it on one instruction of every class.  PFLOPS_EUNAVAIL
 * when the event counts no class (unit `none`), PFLOPS_EINVAL for a
 * malformed spec. */
int pfc_mask_event_from_model(const char *model, struct pfc_mask_event *ev, struct pflops_error *err);

/* One sample: where the event overflowed and the opmask registers then. */
struct pfc_mask_sample {
	uint64_t ip;
	uint32_t pid;	  /* whose memory ip is in (for the byte reader) */
	uint8_t have_k;	  /* k[] holds k0..k7 */
	uint8_t insn_len; /* > 0: insn[] holds the bytes at ip, no reader needed */
	uint8_t insn[15];
	uint64_t k[8];
};

/* Read up to len bytes of pid's memory at addr; returns the bytes read. */
typedef size_t (*pfc_mask_read_fn)(void *arg, uint32_t pid, uint64_t addr, uint8_t *buf, size_t len);

/* What became of a sample. */
enum pfc_mask_verdict {
	PFC_MS_USED,	   /* its share is in the estimate */
	PFC_MS_SKID,	   /* not an instruction of the event's classes */
	PFC_MS_NOMASK,	   /* masked, but no opmask registers in the sample */
	PFC_MS_UNREADABLE, /* no bytes at ip, or no valid instruction */
	PFC_MS_CHANGED,	   /* its mask register may be rewritten before the capture */
};

#define PFC_MASK_CACHE 1024 /* decoded instructions remembered per event */

/* Accumulates one event's samples.  Zero it, then set ev. */
struct pfc_mask_acc {
	const struct pfc_mask_event *ev;
	double sum_share; /* over used samples and known-full ones */
	uint64_t samples, used, masked, skid, nomask, unreadable, changed;
	uint64_t known_full; /* samples known to hit unmasked instructions */
	struct pfc_mask_cached {
		uint64_t ip;
		uint32_t pid;
		uint8_t valid, verdict, lanes, mask_reg, lanes_per_bit, kclobber;
	} cache[PFC_MASK_CACHE];
};

/* Judge one sample and, if usable, add its share.  read may be NULL when
 * every sample carries its bytes.  *share (may be NULL) receives the
 * share of a used sample. */
enum pfc_mask_verdict pfc_mask_add(struct pfc_mask_acc *a, const struct pfc_mask_sample *s, pfc_mask_read_fn read,
				   void *arg, double *share);
/* n samples that fell on instructions known to be unmasked (share 1) whose
 * address is not known: the tracer runs blocks without masked
 * instructions in bulk (the model path). */
void pfc_mask_add_full(struct pfc_mask_acc *a, uint64_t n);

struct pfc_mask_result {
	double count;			  /* the event's total count */
	double full;			  /* weight x count: the full-lane FLOPs */
	double flops, lo, hi;		  /* estimated FLOPs and their 95% interval */
	double share, share_lo, share_hi; /* active-lane share and interval */
	uint64_t samples, used, masked, skid, nomask, unreadable, changed, known_full;
};

/* The estimate from the samples and the event's total count.  Without a
 * usable sample the share is unknown: estimate = full, interval [0, full]. */
void pfc_mask_result(const struct pfc_mask_acc *a, double count, struct pfc_mask_result *r);

/* ---------------------------------------------------------------------
 * From events to metrics.
 */

/* The events of pmu that the asked metrics need, and which of them are
 * sampled: an event of a masked-full metric whose model gives its
 * classes.  A masked-full metric is corrected when every event of its
 * formula is modelled; its other events are then counted, not sampled. */
struct pfc_mask_plan {
	const struct pflops_pmu *pmu;
	unsigned metrics;   /* metrics computable from the events */
	unsigned corrected; /* of which corrected by sampling (masked-full) */
	int nevents;
	struct pfc_mask_plan_event {
		int event; /* index into pmu->events */
		int sampled;
		struct pfc_mask_event ev;
	} e[PFLOPS_MAX_COUNTERS];
};

/* PFLOPS_EUNAVAIL when no asked metric is masked-full on pmu (nothing to
 * correct: the message says so), PFLOPS_ECNFLCT when the events exceed
 * PFLOPS_MAX_COUNTERS. */
int pfc_mask_plan_make(struct pfc_mask_plan *mp, const struct pflops_pmu *pmu, unsigned metrics,
		       struct pflops_error *err);

/* Metric m from per-event counts (plan order) and, for sampled events,
 * their results (res[i] ignored for events not sampled; res may be NULL
 * for the plain formula).  *full: the formula's value (full lanes);
 * *est, *lo, *hi: with the sampled shares (intervals of independent
 * events combined in quadrature).  lo/hi may be NULL. */
void pfc_mask_metric(const struct pfc_mask_plan *mp, int m, const double *counts, const struct pfc_mask_result *res,
		     double *full, double *est, double *lo, double *hi);

/* ---------------------------------------------------------------------
 * The model path: the tracer's FP instructions (pflops_trace_opts.fp_exec)
 * sampled as the counters would be, every period-th count of each
 * sampled event, with the opmask registers as the instruction ran and
 * its bytes read from the stopped tracee.  Several streams share one
 * trace; a stream's first sample falls on count period - phase.  The
 * tracer reports only blocks with a masked instruction: the counts of
 * the others (every instruction there unmasked) follow from the event's
 * model on the traced mix and are sampled as known full.
 */
struct pfc_mask_stream {
	unsigned period, phase; /* phase < period */
};
struct pfc_mask_trace;

struct pfc_mask_trace *pfc_mask_trace_new(const struct pfc_mask_plan *mp, const struct pfc_mask_stream *st, int n,
					  struct pflops_error *err);
/* A pft_fp_fn; arg is the pfc_mask_trace. */
void pfc_mask_trace_hook(void *arg, const struct pft_fp_exec *x);
/* After the trace: counts[i] the model count of plan event i on mix, and
 * res[i] stream s's result for it. */
int pfc_mask_trace_result(struct pfc_mask_trace *t, const struct pflops_mix *mix, int s, double *counts,
			  struct pfc_mask_result *res, struct pflops_error *err);
void pfc_mask_trace_free(struct pfc_mask_trace *t);

#ifdef __cplusplus
}
#endif
#endif
