/*
 * trace_internal.h: what the tracer's files share (not installed).
 */
#ifndef PFLOPS_TRACE_INTERNAL_H
#define PFLOPS_TRACE_INTERNAL_H

#include <sys/types.h>
#include <sys/user.h>
#include "pflops_trace.h"

/* How a thread runs through a block. */
enum {
	PFLOPS_BLK_BP,		/* int3 at the terminator, which we emulate */
	PFLOPS_BLK_SYSCALL,	/* ends in a syscall: PTRACE_SYSCALL stops */
	PFLOPS_BLK_STEP,	/* single-step every instruction */
};

struct pflops_fpent {		/* one FP instruction of a block */
	uint32_t idx;		/* instruction index in the block */
	uint8_t prec, width, op, lanes, mask_reg, lanes_per_bit;
};

struct pflops_block {
	uint64_t start;
	uint64_t last;		/* address of the last instruction */
	uint32_t ninsts;
	uint32_t nfp;
	uint8_t mode;		/* PFLOPS_BLK_* */
	uint8_t has_mask;	/* some FP instruction uses k1..k7 */
	uint8_t region_entry;	/* start is the region function's entry */
	struct pflops_insn term;/* the last instruction when it is a branch */
	uint32_t *offs;		/* ninsts instruction offsets from start */
	struct pflops_fpent *fp;
	uint32_t extra[PFLOPS_NEXTRA];
	struct pflops_block *next;	/* hash chain */
};

struct pflops_region;

/* An address space: shared by threads (and a vfork child until exec). */
struct pflops_space {
	int refs;
	pid_t pid;		/* a process id in it (for /proc and reads) */
	/* breakpoints: open addressing, key 0 = empty */
	uint64_t *bp_addr;
	uint8_t *bp_orig;
	size_t bp_cap, bp_n;
	/* block cache */
	struct pflops_block **blk_tab;
	size_t blk_cap, blk_n;
	struct pflops_region *region;	/* NULL when no region is asked */
};

/* trace_mem.c */
struct pflops_space *pflops_space_new(pid_t pid, const char *region);
struct pflops_space *pflops_space_fork(const struct pflops_space *parent,
				       pid_t child, const char *region);
void pflops_space_put(struct pflops_space *sp);
/* read len bytes of tracee memory with breakpoints undone; returns bytes read */
size_t pflops_mem_read(struct pflops_space *sp, pid_t tid, uint64_t addr,
		       void *buf, size_t len);
int pflops_mem_write64(pid_t tid, uint64_t addr, uint64_t val);
int pflops_bp_has(const struct pflops_space *sp, uint64_t addr);
int pflops_bp_insert(struct pflops_space *sp, pid_t tid, uint64_t addr);
int pflops_bp_remove(struct pflops_space *sp, pid_t tid, uint64_t addr);

/* trace_blocks.c */
struct pflops_block *pflops_block_get(struct pflops_space *sp, pid_t tid,
				      uint64_t pc, int force_step,
				      uint64_t *decoded);
/* index of the instruction at pc in blk, or -1 */
int pflops_block_index(const struct pflops_block *blk, uint64_t pc);
/* count instructions [0, n) of blk into m; k: opmask values (or NULL) */
void pflops_block_count(struct pflops_mix *m, const struct pflops_block *blk,
			uint32_t n, const uint64_t *k);
void pflops_block_count_one(struct pflops_mix *m,
			    const struct pflops_block *blk, uint32_t idx,
			    const uint64_t *k);
void pflops_block_free_all(struct pflops_space *sp);

/* trace_emul.c: emulate the terminator of blk on regs; 0 or negative */
int pflops_emulate(struct pflops_space *sp, pid_t tid,
		   const struct pflops_block *blk,
		   struct user_regs_struct *regs);

/* trace_xstate.c: opmask registers k0..k7 of a stopped thread */
int pflops_read_kregs(pid_t tid, uint64_t k[8]);

/* trace_region.c */
struct pflops_region *pflops_region_new(const char *sym);
void pflops_region_free(struct pflops_region *r);
int pflops_region_is_entry(struct pflops_region *r, pid_t pid, uint64_t pc);
/* ELF lookup: st_value of a defined function `sym` in file `path`, and the
 * page-aligned vaddr/offset of its first PT_LOAD (for the load bias). */
int pflops_elf_lookup(const char *path, const char *sym, uint64_t *value,
		      uint64_t *load_vaddr, uint64_t *load_off);

#endif
