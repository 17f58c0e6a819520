/*
 * trace_cache.h: the code cache: its memory (trace_arena.c), the translation of
 * blocks (trace_xlate.c), links (trace_link.c) and counts (trace_harvest.c)
 */
#ifndef PFT_TRACE_CACHE_H
#define PFT_TRACE_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "pft_arch.h"
#include "trace_block.h"
#include "trace_space.h"

struct pft_tracer;
struct pft_thr;

/* trace_arena.c: the code cache's memory in one traced process (the
 * slot layout: pft_arch.h). */
#define PFT_MAX_IDS 524288
/* under a ulimit -v: fewer ids, smaller slots, more of them in the
 * limit's share (pft_arena_setup) */
#define PFT_AS_IDS 262144
#define PFT_MAX_SLOTS 256
/* a slot's bytes with n counters: its stride in the slots' piece */
#define PFT_SLOT_BYTES(n) (((uint64_t)PFT_SLOT_CNT + 8 * (uint64_t)(n) + 4095) & ~(uint64_t)4095)

struct pft_chunk {
	size_t index;  /* in its arena's list */
	uint64_t addr; /* in the tracee */
	uint8_t *mem;  /* the same bytes in the tracer */
	size_t size;
	size_t used;		      /* hot copies grow up from the start ... */
	size_t cold;		      /* ... their cold parts down from the end (offsets) */
	size_t ready_hot, ready_cold; /* present in the tracer: bytes from
				       * the start, from the end */
	/* where its start's lookup routine and request routines landed
	 * (pft_ibl_emit: pft_arch.h) */
	struct pft_ibl ibl;
	struct pft_xblock **xb; /* blocks in address order */
	/* beside each: where its copy and its cold part start, as offsets
	 * in the chunk, so that pft_xlate_find's binary search reads one
	 * small array (a copy's record at each step was a cache miss each,
	 * 2.5% of a cold numpy run's tracer); pft_chunk_xb_add appends */
	uint32_t (*xk)[2];
	size_t nxb, xb_cap;
	struct pft_space *sp; /* its space: its copies' links are in its pool */
};

/* ch's bytes [0, hot) and [cold, size) present in the tracer before the
 * copies are written there (trace_arena.c) */
void pft_chunk_ready(struct pft_chunk *ch, size_t hot, size_t cold);

struct pft_arena {
	/* The lookup table's piece: table A, the system-call map, table B.
	 * One of the two tables is in use (every thread's PFT_SLOT_TABLE);
	 * the other is where it is built again without its tombstones
	 * (pft_table_renew, trace_link.c). */
	uint64_t tpiece; /* tracee address of the piece */
	uint8_t *tpiece_mem;
	uint64_t table; /* tracee address of the table in use */
	uint8_t *table_mem;
	uint32_t tab_live, tab_tombs;	  /* its entries, its tombstones */
	int tab_want;			  /* renew it at the next chance */
	int tab_stuck;			  /* full of entries looked up: renewed
				       * again only for tombstones */
	uint64_t slots;			  /* tracee address of the counter slots */
	uint64_t slot_bytes;		  /* each slot's: PFT_SLOT_BYTES(max_ids) */
	int slots_fd;			  /* tracer's descriptor of the slots memfd */
	uint8_t *slot_mem[PFT_MAX_SLOTS]; /* tracer mappings, lazily */
	uint8_t slot_used[PFT_MAX_SLOTS];
	struct pft_chunk **chunks; /* stable: blocks point to them */
	size_t nchunks;
	/* sized to the process's RLIMIT_AS (pft_arena_setup) */
	int nslots; /* threads with a slot at once */
	size_t max_chunks;
	uint64_t as_limit;	/* that limit (0: none) */
	int region;		/* lookup routine checks the region's stack */
	int freq;		/* exits ask through a futex (trace_freq.c) */
	int freq_off;		/* ... no more: a seccomp filter or a second thread came */
	uint32_t *bell;		/* that process's bell, in slot 0 (tracer) */
	struct pft_block **ids; /* block of each counter id (NULL: free) */
	uint32_t nids;		/* ids handed out so far (trace_ids.c) */
	uint32_t max_ids;	/* of PFT_MAX_IDS (PFLOPS_TRACE_IDS, a ulimit -v) */
	uint32_t *free_ids;	/* ids free again, max_ids room */
	uint32_t nfree;
	uint32_t *limbo; /* ids of dropped copies, not yet free */
	uint32_t nlimbo, limbo_cap;
	uint32_t *grace; /* those waiting for every thread to be seen */
	uint32_t ngrace, grace_cap;
	uint64_t gen;		 /* the grace set's (pft_thr.ids_seen) */
	uint64_t reclaim_stop;	 /* stops at the last look at it */
	int urged;		 /* its running threads were interrupted */
	int seen_new;		 /* a thread was seen at its stop since */
	struct pft_pend *pend;	 /* exits waiting for their target's copy,
				  * by target (trace_link.c) */
	size_t pend_cap, pend_n; /* slots, targets */
	struct pft_pnode *pnode; /* the waiting exits, listed from pend */
	uint32_t pnode_n, pnode_cap, pnode_free;
};

int pft_arena_setup(struct pft_tracer *T, struct pft_thr *t);
/* the cache made smaller to fit its share of the RLIMIT_AS t's process
 * has now, if that was lowered (t stopped): 1 when it was, 0, or <0 */
int pft_arena_fit(struct pft_tracer *T, struct pft_thr *t);
/* the table not in use: *addr in the tracee, returns the tracer's view */
uint8_t *pft_arena_table_spare(const struct pft_arena *a, uint64_t *addr);
/* the address space the arena takes in its process (bytes) */
uint64_t pft_arena_as_bytes(const struct pft_arena *a);
/* the most bytes of copies the arena may hold (its chunks) */
uint64_t pft_arena_copy_bytes(const struct pft_arena *a);
/* what an arena with `ids` block ids takes without a limit, one chunk */
uint64_t pft_arena_as_need(uint32_t ids);
void pft_arena_free(struct pft_arena *a);
/* a chunk with `need` free bytes reachable (rel32) from [lo, hi) */
struct pft_chunk *pft_arena_chunk(struct pft_tracer *T, struct pft_thr *t, uint64_t lo, uint64_t hi, size_t need);
struct pft_chunk *pft_arena_chunk_of(const struct pft_arena *a, uint64_t addr);
int pft_slot_alloc(struct pft_arena *a);
/* take slot number `slot` (its header written); returns it or -1 */
uint8_t *pft_arena_sysmap(struct pft_arena *a); /* the system-call map (trace_sys.c) */
int pft_slot_init(struct pft_arena *a, int slot);
void pft_slot_free(struct pft_arena *a, int slot);
uint8_t *pft_slot_mem(struct pft_arena *a, int slot);
uint64_t pft_slot_addr(const struct pft_arena *a, int slot);
/* give forked child t its own copy of its parent's arena */
int pft_arena_fork(struct pft_tracer *T, struct pft_thr *t, const struct pft_arena *parent);
/* one tracee `syscall` instruction for pft_inject */
uint64_t pft_find_gadget(struct pft_space *sp, pid_t tid);

/* trace_xlate.c: translation of blocks into the cache. */
struct pft_xexit {
	uint64_t target;       /* original address it goes to */
	uint32_t site;	       /* offset of its rel32 in the block's code */
	uint32_t stub;	       /* offset of its 16-byte stub (cold part) */
	struct pft_xblock *to; /* linked to this block, or NULL */
};

struct pft_xblock {
	struct pft_block *b;
	struct pft_chunk *ch;
	uint64_t addr; /* entry in the tracee */
	uint32_t size; /* of the hot part, from addr */
	uint32_t cold; /* the cold part (stubs ...) at addr + cold */
	uint32_t csize;
	uint32_t id;	    /* counter id */
	uint32_t inc_at;    /* instruction before which the count is
				 * incremented */
	uint32_t ovf_w;	    /* overflow weight subtracted there (0: none) */
	uint32_t ovf_pre;   /* weight run before the check */
	uint32_t ovf_stub;  /* offset of its int3 (near a crossing) */
	uint32_t sys_trap;  /* offset of the int3 before its system call
				 * (one the tracer must see), 0: none */
	uint32_t sys_trap2; /* and of the int3 after it, 0: none (int 0x80:
				 * syscall stops instead) */
	uint32_t lookup;    /* the copy looks up the table from this
				 * offset on (rt_sigreturn's target, an
				 * indirect branch's: trace_gen.c), 0: never */
	uint32_t mtrap;	    /* masked: offset of the int3 that ends its
				 * indirect branch (lookup-miss state), 0: none */
	struct pft_xexit ex[2];
	int nex;
	int npt;
	struct pft_xpoint *pt;
	/* links, in its space's pool (trace_link.c): each the linked copy
	 * with its exit's number in bit 0 (pft_in_*); 8 bytes, where a
	 * pointer and an int were 16 (a cold numpy run's pool: 7 MB) */
	uintptr_t *in;
	int nin, in_cap;
	uint8_t dead;
	uint8_t gone;	/* dead and its id reused: out of ch->xb */
	uint8_t pooled; /* it and pt are in a pool (trace_blocks.c) */
	/* (the bytes last: no holes, 160 bytes a copy) */
	uint8_t ovf_cf;	    /* CF saved in the slot around the check */
	uint8_t masked;	    /* masked AVX-512 FP: no counter, no link out;
			 * every run ends at a trap of the cache,
			 * where the tracer counts it (opmasks read) */
	uint8_t fstub;	    /* its exit stubs ask through a futex first */
	uint8_t nocnt;	    /* no count: nothing of it is in the mix but
			 * instructions (no FP, count_all off); its runs
			 * are unknown */
	uint8_t learn : 1;  /* of a hint whose runs were unknown: counted
			     * anyway, so the hint store learns them */
	uint8_t looked : 1; /* entered in the lookup table at a miss (not
			     * ahead): kept when a full table is built
			     * anew (trace_link.c) */
};

/* an incoming link of a copy: the copy whose exit it is, and which */
static inline uintptr_t pft_in_make(const struct pft_xblock *from, int exit)
{
	return (uintptr_t)from | (uintptr_t)exit;
}

static inline struct pft_xblock *pft_in_from(uintptr_t e)
{
	return (struct pft_xblock *)(e & ~(uintptr_t)1);
}

static inline int pft_in_exit(uintptr_t e)
{
	return (int)(e & 1);
}

/* x at the end of ch's copies (room for it in ch->xb and ch->xk) */
static inline void pft_chunk_xb_add(struct pft_chunk *ch, struct pft_xblock *x)
{
	ch->xk[ch->nxb][0] = (uint32_t)(x->addr - ch->addr);
	ch->xk[ch->nxb][1] = (uint32_t)(x->addr + x->cold - ch->addr);
	ch->xb[ch->nxb++] = x;
}

/* A new copy x joins the others (trace_link.c): exits that wait for
 * its start are linked to it, its own exits to copies already made;
 * the rest wait.  Each such link saves the stop at that exit's first
 * run.  Counts them in st (pft_xlate_link). */
void pft_link_new(struct pft_space *sp, struct pft_xblock *x, struct pft_stats *st);
/* the memory pft_link_new (and, with table, pft_table_insert) will read
 * for a copy of the block at start, asked for ahead: translations in a
 * row (the hint store's) each missed the cache there */
void pft_link_prefetch(const struct pft_arena *a, uint64_t start, int table);
void pft_pend_free(struct pft_arena *a);

/* Why blk cannot go to the cache, or PFT_NC_NONE. */
int pft_xlate_check(struct pft_space *sp, pid_t tid, struct pft_block *b);
/* The cache entry of b (translated now if needed); 0: not cacheable. */
uint64_t pft_xlate(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b);
/* Translate and link what b's copy goes to next (direct targets, the
 * return site of a call, the target in a PLT entry's GOT slot), the
 * likeliest to run first, up to budget blocks (at most PFT_AHEAD_MAX):
 * each one that runs saves a stop at its first run.  Measured cold on
 * numpy, python3 and gcc: 48 cuts numpy's stops by 15% from 32
 * breadth-first with fewer blocks decoded; more wastes block ids that
 * big programs need (gcc's cc1). */
#define PFT_AHEAD 48
#define PFT_AHEAD_MAX 128
void pft_xlate_ahead(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, int budget);
/* t's space at its fork event: its children's blocks (trace_forkwant.c) */
void pft_want_take(struct pft_tracer *T, struct pft_thr *t);
/* the buffers translation keeps from copy to copy (T->xbuf), freed */
void pft_xlate_free(struct pft_tracer *T);
/* A displaced copy of the instruction at addr followed by a jump back to
 * the next one (STOP mode past a region-entry int3); 0 if impossible. */
uint64_t pft_xlate_tramp(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, uint64_t *back);
/* the block and point of a tracee address in the cache */
struct pft_xblock *pft_xlate_find(const struct pft_arena *a, uint64_t addr, const struct pft_xpoint **pt);
/* links and falls counted in st */
void pft_xlate_link(struct pft_stats *st, struct pft_xblock *from, int exit, struct pft_xblock *to);
void pft_xlate_detach(struct pft_space *sp, struct pft_xblock *x);
/* orig's copy at entry in the lookup table; -1: no room (the lookup
 * stops, and the table is to be renewed) */
int pft_table_insert(struct pft_arena *a, uint64_t orig, uint64_t entry);
/* the same for the target of a lookup that missed (x: its copy) */
int pft_table_insert_looked(struct pft_arena *a, uint64_t orig, struct pft_xblock *x, uint64_t entry);
/* the table built anew without its tombstones, when they are many and
 * no thread is inside a lookup (trace_link.c); 1: done */
int pft_table_renew(struct pft_tracer *T, struct pft_space *sp);
/* trace_harvest.c: add the counts of one thread's slot to m (zero them
 * when `take`); of ids[0..n) only, taken */
uint64_t pft_harvest(struct pft_arena *a, int slot, struct pflops_mix *m, int take);
uint64_t pft_harvest_ids(struct pft_arena *a, int slot, struct pflops_mix *m, const uint32_t *ids, uint32_t n);

/* trace_ids.c: block ids (a counter each in every thread's slot).
 * pft_id_alloc: a free id (reclaiming those of dropped copies when
 * needed), -1 when none; pft_id_free: give back one no copy counted
 * with; pft_id_retire: the id of a copy just detached, free once no
 * thread can run it and its counts are harvested (pft_id_reclaim, which
 * says how many it freed; urgent: the ids are nearly used up, threads
 * running code are interrupted to be seen); pft_ids_used: ids taken,
 * limbo included. */
int64_t pft_id_alloc(struct pft_tracer *T, struct pft_space *sp);
void pft_id_free(struct pft_arena *a, uint32_t id);
void pft_id_retire(struct pft_arena *a, uint32_t id);
int pft_id_reclaim(struct pft_tracer *T, struct pft_space *sp, int urgent);
/* a thread at a ptrace stop: seen outside the dropped copies? */
void pft_ids_observe(struct pft_thr *t);
uint32_t pft_ids_used(const struct pft_arena *a);
/* no thread of sp's address space holds an address in its spare lookup
 * table (a probe begun before the last renewal)?  Those running are
 * interrupted to be seen. */
int pft_ids_spare_free(struct pft_tracer *T, struct pft_space *sp);

#endif
