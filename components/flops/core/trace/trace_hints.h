/*
 * trace_hints.h: which blocks of a file ran, remembered across runs
 * (trace_hints.c).  A hint is only where to translate ahead: the copy is
 * always made from the bytes in the process, so a stale, foreign or
 * garbage hint costs time, never a count.
 */
#ifndef PFT_TRACE_HINTS_H
#define PFT_TRACE_HINTS_H

#include <stddef.h>
#include <stdint.h>
#include "pflops_trace.h"

struct pft_tracer;
struct pft_thr;
struct pft_space;
struct pft_block;

/* PFLOPS_TRACE_HINTS (0: off) and PFLOPS_TRACE_HINTS_DIR (default
 * ${XDG_CACHE_HOME:-$HOME/.cache}/papi-flops/hints, made if missing):
 * T->hints_dir set, or "" with the reason in T->st.hint_note.  Only a
 * bad PFLOPS_TRACE_HINTS value is an error. */
int pft_hints_init(struct pft_tracer *T, struct pflops_error *err);
/* b is a new block of t's space about to run from the cache: when it is
 * the first in its file mapping, the blocks the store says ran in that
 * file are translated and linked now.  Returns how many blocks to
 * translate ahead of b (`ahead`, or fewer where hints cover b's file). */
int pft_hints_touch(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, int ahead);
/* sp's last thread lets it go: the blocks that ran, by file, merged into
 * the store */
void pft_hints_save(struct pft_tracer *T, struct pft_space *sp);
void pft_hints_free(struct pft_space *sp);

/* The hint file format (docs/trace-engine.md#the-hint-store), all
 * little-endian:
 *   "PFTHINT\n"  version u32 (1)  key length K u32 (1..PFT_HINT_KEY)
 *   key (K bytes, no NUL), zero-padded to 8  count N u64
 *   N entries u64: file offset << 8 | heat << 1 | 1 when an indirect
 *     branch reached it (lookup-table entry); heat: the bit length of
 *     the block's run count (1..64), 0 when its copy had no count (runs
 *     unknown: the next run counts it, and drops it if it does not run);
 *     offsets strictly ascending
 *   FNV-1a 64 of all the bytes before it.
 * pft_hints_parse: 0 with *ent (malloc'ed) and *n, or -1 with why[] a
 * phrase; key: the file the hints must be of. */
#define PFT_HINT_VERSION 2
#define PFT_HINT_OFF(e) ((e) >> 8)
#define PFT_HINT_HEAT(e) ((unsigned)((e) >> 1) & 0x7f)
#define PFT_HINT_IND 1u
#define PFT_HINT_ENT(off, heat, ind) ((uint64_t)(off) << 8 | (uint64_t)(heat) << 1 | (ind))
#define PFT_HINT_KEY 160
#define PFT_HINT_MAX 262144 /* entries kept per file */
int pft_hints_parse(const uint8_t *p, size_t len, const char *key, uint64_t **ent, size_t *n, char *why, size_t whylen);
/* v[0..n) in ascending order (0, or -1: out of memory, v unchanged or
 * sorted); in one pass where one descending run holds 7/8 of them */
int pft_hints_sort(uint64_t *v, size_t n);
/* the checksum: FNV-1a 64 of p[0..n) */
uint64_t pft_hints_sum(const uint8_t *p, size_t n);

#endif
