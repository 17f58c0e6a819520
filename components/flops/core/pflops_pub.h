/*
 * pflops_pub.h: a traced process reads its own exact counts.
 *
 * The flops component's trace source (PAPI_FLOPS_SOURCE=trace) has a
 * helper process trace every thread of the process that called PAPI
 * (papi_flops_run --pid, pft_attach).  The helper keeps, in a
 * shared memory both map (a memfd the process creates), what each
 * thread needs to add up its own counts without a system call:
 *
 *   per thread   what the tracer counted for it stop by stop (its `base`
 *                mix: blocks off the code cache, signals, partial runs)
 *                and where its counters of the code cache lie in the
 *                process (its %gs slot: one 64-bit count per block id);
 *   per block id the FP instructions of that cached block, so that
 *                count x instructions gives the block's part of the mix.
 *
 * A thread's base changes while that thread is in a ptrace stop, and
 * when the tracer reuses the ids of dropped blocks (JIT code rewritten):
 * then their counts move from the thread's counters into its base.  A
 * seqlock covers base and counters together.  Block ids are published
 * before any thread runs the block (nblk is stored last, with release
 * order); a reused id's record is rewritten while every counter of it
 * is 0.
 * Everything here is integer code: the reader's own instructions add
 * no FLOPs to what it reads.
 */
#ifndef PFC_PUB_H
#define PFC_PUB_H

#include <stdint.h>
#include <sys/types.h>
#include "papi_flops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PFC_PUB_MAGIC 0x31627570736c6670ULL /* "pflspub1" */
#define PFC_PUB_THREADS 1024
#define PFC_PUB_BLOCKS 524288 /* = the code cache's PFT_MAX_IDS */
#define PFC_PUB_FPS (4u << 20)
#define PFC_PUB_SLOT_CNT 4096 /* = PFT_SLOT_CNT: counters in a slot */

enum { PFC_PUB_STARTING, PFC_PUB_ATTACHED, PFC_PUB_FAILED, PFC_PUB_DETACHED };

struct pfc_pub_thr {
	int32_t tid;		/* 0: a free record */
	uint32_t seq;		/* odd while the tracer writes base */
	uint64_t slot;		/* the thread's counter slot in the traced
				 * process (0: none yet) */
	struct pflops_mix base; /* counted by the tracer itself */
};

struct pfc_pub_blk {	  /* one cached block: runs count in full */
	uint32_t fp, nfp; /* its FP instructions: fp[fp .. fp+nfp) */
	uint32_t ninsts;
	uint32_t extra[PFLOPS_NEXTRA];
};

struct pfc_pub_fp {
	uint8_t prec, width, op, lanes;
};

/* PAPI_overflow under the trace source: one record per thread that
 * asked, claimed by that thread (tid, compare-and-swap), found by
 * pfc_pub_ovf_find.  The thread writes weight, period and gen, then
 * makes a system call: at its stop the helper restarts the thread's
 * count (pflops_trace_opts.overflow_rearm).  At each crossing the helper
 * writes the FP instruction's address at head, then sends the thread
 * pub->ovf_signal; the thread's handler takes addresses from tail. */
#define PFC_PUB_OVF_RING 16
struct pfc_pub_ovf {
	int32_t tid;	 /* 0: free */
	uint32_t gen;	 /* changed with period: the count restarts */
	uint64_t period; /* weighted FLOPs per overflow; 0: off */
	uint32_t seen;	 /* helper: the gen it applied */
	uint32_t pad;
	uint64_t head; /* helper: crossings written (release) */
	uint64_t tail; /* thread: crossings taken */
	uint64_t addr[PFC_PUB_OVF_RING];
};

/* The weight of an overflow: metric m (enum pflops_metric) of the
 * instruction, of width w and precision p only (0: all; else enum + 1),
 * as the component's event codes qualify them.  0: none. */
#define PFC_PUB_OVF_SEL(m, w, p) (1u | ((uint32_t)(m) << 4) | ((uint32_t)(w) << 12) | ((uint32_t)(p) << 20))

struct pfc_pub {
	/* these four first, at fixed places in every version: a helper
	 * of another papi-flops version says so here */
	uint64_t magic; /* set by the helper once it counts */
	uint32_t size;	/* sizeof(struct pfc_pub) of the library */
	uint32_t state; /* PFLOPS_PUB_* */
	char msg[512];	/* why it failed or detached */
	int32_t pid;	/* the traced process */
	uint32_t nblk;	/* block ids published (release/acquire) */
	uint32_t nfp;
	uint32_t lost; /* threads or blocks that did not fit: reads
				 * are refused, never short */
	/* PAPI_overflow: one weight for the whole process at a time (the
	 * code cache compiles it in: a change re-translates) */
	uint32_t ovf_sel;   /* PFC_PUB_OVF_SEL, 0: none yet */
	int32_t ovf_signal; /* the component's overflow signal */
	struct pfc_pub_ovf ovf[PFC_PUB_THREADS];
	struct pfc_pub_thr thr[PFC_PUB_THREADS];
	struct pfc_pub_blk blk[PFC_PUB_BLOCKS];
	struct pfc_pub_fp fp[PFC_PUB_FPS];
};

/* The counts of thread tid so far into *m (overwritten).  *hint: where
 * its record was last found (any value to start).  0, or PFLOPS_ENOENT
 * (the tracer has not seen the thread count anything: *m is zero),
 * PFLOPS_ESYS when the tracer lost track (msg says why). */
int pfc_pub_read(const struct pfc_pub *p, pid_t tid, int *hint, struct pflops_mix *m);

/* The overflow record of tid (*hint: where last found, any value to
 * start); claimed when `claim` and there is none yet.  NULL: none (or
 * no free record). */
struct pfc_pub_ovf *pfc_pub_ovf_find(struct pfc_pub *p, pid_t tid, int claim, int *hint);

/* *d = a - b (each count; the mixes only grow) */
void pfc_mix_sub(struct pflops_mix *d, const struct pflops_mix *a, const struct pflops_mix *b);
/* *d += a */
void pfc_mix_add(struct pflops_mix *d, const struct pflops_mix *a);
/* keep only width w (>= 0) and precision p (>= 0) of m; -1: all */
void pfc_mix_keep(struct pflops_mix *m, int w, int p);

#ifdef __cplusplus
}
#endif
#endif
