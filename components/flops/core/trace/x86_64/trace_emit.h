/*
 * trace_emit.h: writing machine code for the code cache (trace_gen.c,
 * trace_ibl.c): a buffer at a known tracee address, the few encodings
 * the cache adds to the program's own, and the map of what each byte
 * range of a block's copy stands for (struct pft_xpoint).
 */
#ifndef PFT_TRACE_EMIT_H
#define PFT_TRACE_EMIT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../pft_arch.h"

struct emit {
	uint8_t *buf;
	size_t n, cap;
	uint64_t base; /* tracee address of buf[0] */
	struct pft_xpoint *pt;
	int npt, pt_cap;
	int bad;
	int no_pad; /* leave patch sites where they fall (trace_gen.c
		     * moves the whole copy instead) */
	/* where its rel32s to code outside buf are (trace_gen.c, move_by:
	 * the copy moved on has them that much shorter); n_ext -1: more
	 * than ext_cap, not movable */
	uint32_t *ext;
	int n_ext, ext_cap;
};

static inline void put(struct emit *e, const void *p, size_t n)
{
	if (e->n + n > e->cap) {
		e->bad = 1;
		return;
	}
	memcpy(e->buf + e->n, p, n);
	e->n += n;
}

static inline void put8(struct emit *e, uint8_t v)
{
	put(e, &v, 1);
}
static inline void put32(struct emit *e, uint32_t v)
{
	put(e, &v, 4);
}
static inline void put64(struct emit *e, uint64_t v)
{
	put(e, &v, 8);
}
static inline uint64_t here(const struct emit *e)
{
	return e->base + e->n;
}

/* the rel32 at buf[at] is to code outside buf */
static inline void ext_rel(struct emit *e, size_t at)
{
	if (!e->ext || e->n_ext < 0)
		return;
	if (e->n_ext == e->ext_cap)
		e->n_ext = -1;
	else
		e->ext[e->n_ext++] = (uint32_t)at;
}

static inline void point(struct emit *e, int kind, uint32_t arg)
{
	if (e->npt == e->pt_cap) {
		int nc = e->pt_cap ? 2 * e->pt_cap : 16;
		struct pft_xpoint *n = realloc(e->pt, (size_t)nc * sizeof *n);
		if (!n) {
			e->bad = 1;
			return;
		}
		e->pt = n;
		e->pt_cap = nc;
	}
	e->pt[e->npt++] = (struct pft_xpoint){ (uint32_t)e->n, (uint8_t)kind, arg };
}

static inline int fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* A rel32 that links patch (one 4-byte store while threads run it) must
 * lie within one aligned 8-byte word: the store is then single-copy
 * atomic on AMD (APM vol. 2, "Access Atomicity": misaligned, within a
 * naturally aligned quadword) and on Intel (SDM vol. 3A, "Guaranteed
 * Atomic Operations": within a cache line), so a thread fetching the
 * jump sees the old or the new one. */
static inline int rel_ok(uint64_t at)
{
	return (at & 7) <= 4;
}

/* one-byte nops so that the rel32 `at` bytes on is patchable */
static inline void align_rel(struct emit *e, unsigned at)
{
	while (!e->no_pad && !rel_ok(here(e) + at))
		put8(e, 0x90);
}

/* gs-relative 64-bit mov: store reg -> %gs:disp, or load */
static inline void gs_mov(struct emit *e, int store, int reg, uint32_t disp)
{
	uint8_t b[] = { 0x65, (uint8_t)(0x48 | (reg >= 8 ? 4 : 0)), store ? 0x89 : 0x8b,
			(uint8_t)(((reg & 7) << 3) | 4), 0x25 };
	put(e, b, sizeof b);
	put32(e, disp);
}

/* the same through a base register: store reg -> %gs:disp(%base), or load */
static inline void gs_mov_b(struct emit *e, int store, int reg, int base, uint32_t disp)
{
	put8(e, 0x65);
	put8(e, (uint8_t)(0x48 | (reg >= 8 ? 4 : 0) | (base >= 8 ? 1 : 0)));
	put8(e, store ? 0x89 : 0x8b);
	put8(e, (uint8_t)(0x80 | ((reg & 7) << 3) | (base & 7)));
	if ((base & 7) == 4)
		put8(e, 0x24); /* %rsp/%r12: a SIB byte */
	put32(e, disp);
}

/* mov $0, %r32 (no flag changes) */
static inline void zero_reg(struct emit *e, int reg)
{
	if (reg >= 8)
		put8(e, 0x41);
	put8(e, (uint8_t)(0xb8 | (reg & 7)));
	put32(e, 0);
}

enum { RAX = 0, RCX = 1, RDX = 2, R11 = 11 };

/* trace_ibl.c: the lookup table's probe and its hit's way on, shared by
 * the lookup routine and a copy's indirect branch (rt_sigreturn's
 * look-up: the probe) */
void pft_emit_probe(struct emit *e, int key, size_t *j_miss, size_t *j_hit);
void pft_emit_hit(struct emit *e);
void pft_emit_miss_state(struct emit *e);
#endif
