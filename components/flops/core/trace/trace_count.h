/*
 * trace_count.h: what the traced process reads (trace_pub.c), overflow of a
 * thread's count (trace_ovf.c)
 */
#ifndef PFT_TRACE_COUNT_H
#define PFT_TRACE_COUNT_H

#include <stdint.h>
#include <sys/types.h>
#include "pft_arch.h"
#include "trace_thread.h"

/* trace_pub.c: counts the traced process reads itself (pflops_pub.h);
 * each does nothing unless T->pub is set.  idx < 0: instructions [0, n)
 * of b ran, else instruction idx alone. */
struct pfc_pub;
void pft_pub_count(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *b, uint32_t n, int idx,
		   const uint64_t *k);
void pft_pub_slot(struct pft_tracer *T, struct pft_thr *t);
void pft_pub_block(struct pft_tracer *T, const struct pft_space *sp, uint32_t id, const struct pft_block *b);
void pft_pub_forget(struct pft_tracer *T, pid_t tid);
struct pfc_pub_thr;
struct pfc_pub_thr *pft_pub_hold(struct pft_tracer *T, struct pft_thr *t);
void pft_pub_release(struct pfc_pub_thr *r, const struct pflops_mix *add);

/* trace_ovf.c: overflow of a thread's weighted count (opts.overflow).
 * Cached blocks subtract their weight from the slot's OVF word at their
 * counter increment and trap when it reaches 0, the guard (the most
 * weight a copy runs before its check, sp->ovf_maxpre) before the
 * crossing at the latest; the thread then runs on the stopping path,
 * single-stepping the block in which the crossing falls.  A block with
 * more than PFT_OVF_GUARD before its check stays on the stopping
 * path (PFT_NC_OVF). */
#define PFT_OVF_GUARD 1024 /* at most this weight before the check */
int pft_ovf_on(const struct pft_tracer *T);
void pft_ovf_thread(struct pft_tracer *T, struct pft_thr *t);
/* weights of b's FP entries (computed once: malloc'ed, so sp, b's
 * space, frees its blocks one by one); its full-run sum */
uint64_t pft_ovf_block(struct pft_tracer *T, struct pft_space *sp, struct pft_block *b);
/* instructions [lo, hi) of b ran (opmasks k or NULL) */
void pft_ovf_count(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *b, uint32_t lo, uint32_t hi,
		   const uint64_t *k);
/* t is about to run instruction idx of b (regs r): the callback if it
 * crosses */
void pft_ovf_at(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *b, uint32_t idx,
		const struct user_regs_struct *r);
/* t starts running b on the stopping path: 1 when the crossing falls in
 * this run (step it) */
int pft_ovf_near(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b);
/* t trapped at a copy's check: near a crossing */
void pft_ovf_trapped(struct pft_tracer *T, struct pft_thr *t);
/* t may enter the cache: its crossing is more than the guard away, or
 * it has run PFT_OVF_IDLE blocks without weight on the stopping path
 * (it left its FP code: the next weighted copy traps at its check, and
 * a crossing before that check is seen late) */
#define PFT_OVF_IDLE 256       /* when no copy can cross before its check */
#define PFT_OVF_IDLE_LONG 8192 /* otherwise */
int pft_ovf_cache_ok(const struct pft_tracer *T, const struct pft_thr *t);
/* the slot's OVF word: read back what t ran in the cache (leaving), or
 * set for a run there (entering) */
void pft_ovf_sync(struct pft_tracer *T, struct pft_thr *t, int entering);
/* a system call finished: the caller may restart t's count; 1: t
 * must leave the cache (its crossing is near) */
int pft_ovf_rearm(struct pft_tracer *T, struct pft_thr *t);

#endif
