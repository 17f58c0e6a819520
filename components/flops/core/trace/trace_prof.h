/*
 * trace_prof.h: per-block counts (trace_prof.c)
 */
#ifndef PFT_TRACE_PROF_H
#define PFT_TRACE_PROF_H

#include <stdint.h>
#include <sys/types.h>
#include "pflops_trace.h"

struct pft_space;
struct pft_block;

/* trace_prof.c: per-block counts for opts.block.  Every count the engine
 * adds to the run's mix through a block is added to that block's acc
 * too (pft_count_block, the stepped path, the cache's harvest), so
 * the blocks' mixes add up to the run's exactly. */
struct pft_prof *pft_prof_new(const struct pflops_trace_opts *o);
void pft_prof_free(struct pft_prof *p);
/* a block just decoded in sp: its counters, and the mapping it lies in
 * (read now: mappings change and are gone when the process ends) */
int pft_prof_block(struct pft_space *sp, pid_t tid, struct pft_block *b);
/* instructions [0, n) of b ran (opmasks k, or NULL) */
void pft_prof_count(struct pft_block *b, uint32_t n, const uint64_t *k);
/* instruction idx of b ran (stepped) */
void pft_prof_one(struct pft_block *b, uint32_t idx, const uint64_t *k);
/* `times` complete unmasked runs of b (the code cache's counters) */
void pft_prof_times(struct pft_block *b, uint64_t times);
/* sp's counts are final (its process ended or exec'ed): report every
 * block of it that counted something to opts.block */
void pft_prof_report(struct pft_space *sp);

#endif
