/*
 * trace_block.h: a decoded basic block and its counts (trace_blocks.c)
 */
#ifndef PFT_TRACE_BLOCK_H
#define PFT_TRACE_BLOCK_H

#include <stdint.h>
#include "pflops_trace.h"
#include "pft_arch.h"

struct pft_xblock;
struct pft_space;

/* How a thread runs through a block on the stopping path. */
enum {
	PFT_BLK_BP,	 /* int3 at the terminator, which we emulate */
	PFT_BLK_SYSCALL, /* ends in a syscall: PTRACE_SYSCALL stops */
	PFT_BLK_STEP,	 /* single-step every instruction */
};

struct pft_fpent {    /* one FP instruction of a block */
	uint32_t idx; /* instruction index in the block */
	uint8_t prec, width, op, lanes, mask_reg, lanes_per_bit;
};

struct pft_xblock;

struct pft_block {
	uint64_t start;
	/* hash chain: next to start, so that a walk of the block table's
	 * chain (each look-up of an exit's target, a miss mostly, cold)
	 * touches one cache line a block, not two (it was last) */
	struct pft_block *next;
	uint64_t last; /* address of the last instruction */
	uint64_t end;  /* first byte after the block */
	uint32_t ninsts;
	uint32_t nfp;
	uint8_t mode;	      /* PFLOPS_BLK_* */
	uint8_t has_mask;     /* some FP instruction uses k1..k7 */
	uint8_t region_entry; /* start is the region function's entry */
	uint8_t dead;	      /* its code was unmapped or rewritten */
	uint8_t wp_done;      /* its pages were guarded (trace_wprot.c) */
	uint8_t pooled;	      /* it, offs and fp are in its space's pool */
	uint8_t has_flagsop;  /* pushf or popf: stepped, they store or
			       * lose our EFLAGS.TF (trace_enter.c) */
	uint8_t mask_step;    /* masked, stepped on the cache engine's
			       * stopping path, not ended by an int3
			       * (trace_enter.c); its copy is still made */
	struct pft_insn term; /* the last instruction when it is a branch */
	uint32_t *offs;	      /* ninsts instruction offsets from start */
	struct pft_fpent *fp;
	uint32_t extra[PFLOPS_NEXTRA];
	/* Executions counted so far (all threads), for per-block reports. */
	uint64_t execs;
	struct pft_xblock *x; /* its code-cache copy, or NULL */
	/* Per-block counts (opts.block, trace_prof.c; NULL when not
	 * asked): [0] instructions, [1] complete runs, then per FP entry
	 * i its executions [2+i] and active lanes [2+nfp+i]. */
	uint64_t *acc;
	const char *path;    /* the file mapped at start (interned), or NULL */
	uint64_t map_lo;     /* that mapping's start, 0: none found */
	uint64_t map_off;    /* start's offset in the file (in the mapping
				 * when it is no file) */
	int nocache;	     /* why it stays on the stopping path (PFLOPS_NC_*) */
	uint64_t tramp;	     /* displaced copy of its first instruction */
	uint64_t tramp_back; /* and the jump back after it */
	/* overflow (trace_ovf.c): weight of each FP entry at full lanes,
	 * and their sum; NULL until first needed */
	uint64_t *ovf_w;
	uint64_t ovf_sum;
};

struct pft_region;
struct pft_arena;
struct pft_prof;

/* Active lanes of one execution of FP entry e under opmasks k (NULL:
 * unknown, all lanes); zeroing and merging alike: only active lanes
 * compute. */
static inline uint64_t pft_fp_active(const struct pft_fpent *e, const uint64_t *k)
{
	unsigned bits;
	uint64_t sel;

	if (!e->mask_reg || !k)
		return e->lanes;
	bits = e->lanes / e->lanes_per_bit;
	sel = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
	return (uint64_t)__builtin_popcountll(k[e->mask_reg] & sel) * e->lanes_per_bit;
}

/* trace_blocks.c */
struct pft_block *pft_block_get(struct pft_space *sp, pid_t tid, uint64_t pc, int force_step, uint64_t *decoded);
/* sp's pool (pft_pool_alloc: trace_space.h) let go */
void pft_pool_free(struct pft_space *sp);
/* b's bytes into code from its decode, when that was the space's last
 * one, in this event, read in place from a file's view (1); else 0 */
int pft_block_bytes(const struct pft_space *sp, const struct pft_block *b, uint8_t *code);
/* The relocation facts of b's instructions (b->ninsts of them) kept from
 * its decode, where b is the block sp decoded last and code (b's bytes
 * as they are now) is what that decode read; else NULL. */
const struct pft_reloc *pft_block_relocs(const struct pft_space *sp, const struct pft_block *b, const uint8_t *code);
/* the block decoded at pc, or NULL (nothing decoded) */
struct pft_block *pft_block_find(const struct pft_space *sp, uint64_t pc);
/* index of the instruction at pc in blk, or -1 */
int pft_block_index(const struct pft_block *blk, uint64_t pc);
/* count instructions [0, n) of blk into m; k: opmask values (or NULL) */
void pft_block_count(struct pflops_mix *m, const struct pft_block *blk, uint32_t n, const uint64_t *k);
void pft_block_count_one(struct pflops_mix *m, const struct pft_block *blk, uint32_t idx, const uint64_t *k);
/* add `times` complete unmasked executions of blk to m */
void pft_block_count_times(struct pflops_mix *m, const struct pft_block *blk, uint64_t times);
void pft_block_free_all(struct pft_space *sp);
/* A forked child's pools hold its parent's (pft_pool_share, before its
 * blocks are copied); a copy of b in sp's pool (without its cache copy:
 * the child's), its instruction offsets and FP entries the parent's;
 * putting one in sp's cache */
int pft_pool_share(struct pft_space *sp, const struct pft_space *parent);
struct pft_block *pft_block_fork(struct pft_space *sp, const struct pft_block *b);
/* room in sp's block table for n blocks (no rehash while they come) */
void pft_block_reserve(struct pft_space *sp, size_t n);
int pft_block_adopt(struct pft_space *sp, struct pft_block *b);
/* Drop every block with a byte in [lo, hi) from the cache (their code
 * changed); cached copies are detached.  Returns how many. */
size_t pft_block_invalidate(struct pft_space *sp, uint64_t lo, uint64_t hi);
/* some block may lie in [lo, hi) (a page of it holds decoded code) */
int pft_block_in(const struct pft_space *sp, uint64_t lo, uint64_t hi);

/* trace_blocks.c: emulate the terminator of blk on regs (pft_arch_emulate);
 * 0 or negative */
int pft_emulate(struct pft_space *sp, pid_t tid, const struct pft_block *blk, struct user_regs_struct *regs);
/* a block with pushf or popf (has_flagsop) stepped at pc: the program's
 * own step flag *tf kept in the flags it stored, or taken from those it
 * loaded (pft_arch_step_flags) */
void pft_step_flags(struct pft_space *sp, pid_t tid, uint64_t pc, const struct user_regs_struct *r, uint64_t *tf);

#endif
