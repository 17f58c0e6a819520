/*
 * trace_space.h: a traced address space: its life (trace_space.c), memory and
 * breakpoints (trace_mem.c), mappings (trace_maps.c)
 */
#ifndef PFT_TRACE_SPACE_H
#define PFT_TRACE_SPACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "pflops_trace.h"

struct pft_region;
struct pft_arena;
struct pft_prof;
struct pft_wpage;
struct pft_block;
struct pft_fviews;

/* One memory mapping of a traced process (/proc/PID/maps). */
struct pft_map {
	uint64_t lo, hi, off;
	uint8_t r, w, x, s; /* s: shared (MAP_SHARED) */
	uint64_t dev, ino;  /* the file's (memfd, shm too); ino 0: none */
	char *path;	    /* NULL for anonymous mappings */
};

#define PFT_MAPS_DIRTY 8
struct pft_maps {
	struct pft_map *v;
	size_t n;
	int stale;	     /* reload before the next lookup */
	unsigned long loads; /* times read (trace_codemap.c, tests) */
	size_t last;	     /* the entry pft_maps_find found last */
	/* ranges the program's mapping calls changed since the load
	 * (pft_maps_dirty): a lookup whose entry touches one reloads */
	int ndirty;
	uint64_t dirty[PFT_MAPS_DIRTY][2];
};

/* pft_space.no_inject: seccomp on (1), or asked for by calls that all
 * failed so far */
#define PFT_NOINJ_FAILED 2

/* An address space: shared by threads (and a vfork child until exec). */
struct pft_space {
	int refs;
	pid_t pid; /* a process id in it (for /proc and reads) */
	/* breakpoints: open addressing, key 0 = empty */
	uint64_t *bp_addr;
	uint8_t *bp_orig; /* PFT_BRK_LEN bytes each (trace_mem.c) */
	size_t bp_cap, bp_n;
	/* block cache */
	struct pft_block **blk_tab;
	size_t blk_cap, blk_n;
	struct pft_block **dead; /* invalidated blocks, kept for counts */
	size_t ndead, dead_cap;
	uint64_t *pages; /* set of pages holding decoded code */
	size_t pg_cap, pg_n;
	struct pft_pgref **pg_refs; /* by the slot of pages[]: its blocks */
	int pg_unindexed;	    /* a block is missing there: walk all */
	struct pft_region *region;  /* NULL when no region is asked */
	struct pft_maps maps;
	uint64_t gadget;	 /* a `syscall` instruction (injection) */
	struct pft_arena *arena; /* code cache; NULL until needed */
	int arena_failed;	 /* setup failed: stopping path only */
	int as_refit;		 /* an RLIMIT_AS was set: fit the cache at the
				  * stop's end (trace_ptrace.c) */
	int no_inject;		 /* it turned on seccomp: no system call
					 * may be injected (trace_sys.c);
					 * PFT_NOINJ_FAILED: only calls that
					 * failed asked for it */
	struct pft_prof *prof;	 /* per-block counts asked (opts.block) */
	uint64_t ovf_maxpre;	 /* overflow: the most weight a copy runs
				 * before its check (<= PFT_OVF_GUARD) */
	int threaded;		 /* a second thread shares it (no vfork
				  * child): PFT_FREQ_ONE's requests off */
	int win_calls;		 /* --region: threads inside the function (the
				 * window is open while > 0: trace_window.c) */
	struct pft_wpage *wp;	 /* pages write-protected by us (trace_wprot.c) */
	size_t wp_cap, wp_used;
	/* blocks and their copies' records, freed with the space
	 * (trace_blocks.c); the current piece's free bytes; its parents'
	 * pools, which its blocks share (a forked child) */
	struct pft_pools *pool;
	unsigned char *pool_at, *pool_end;
	struct pft_pools **pool_held;
	size_t npool_held;
	struct pft_recent *recent; /* the block decoded last (trace_blocks.c) */
	int blk_heap;		   /* a block holds malloc'ed memory (its
				    * per-block counts, overflow weights, a
				    * record off the pool): freed one by one */
	struct pft_rdpage *rd;	   /* pages read during this event (trace_mem.c) */
	unsigned rd_next;
	int wp_shared;	/* code was decoded on shared memory */
	int maps_fd[8]; /* fds open on its /proc/.../maps, smaps */
	int n_maps_fd;
	struct pft_hspace *hints;  /* its file mappings met (trace_hints.c) */
	struct pft_fviews *fv;	   /* its code read from our mappings of its
				   * files; NULL: never (trace_codemap.c) */
	uint64_t fv_pages;	   /* pages read so */
	uint64_t fv_bus;	   /* reads that met a SIGBUS (file truncated) */
	unsigned long cut_gen;	   /* the last file cut it was looked at for
				   * (trace_sys.c) */
	struct pft_want *want_in;  /* blocks its forked children translated */
	struct pft_want *want_out; /* its parent's (a forked child) */
};

/* trace_space.c: an address space's life */
struct pft_space *pft_space_new(pid_t pid, const char *region);
struct pft_space *pft_space_fork(const struct pft_space *parent, pid_t child, const char *region);
void pft_space_put(struct pft_space *sp);
/* trace_forkwant.c: blocks a forked child translates, made in its parent
 * at its next fork (pft_want_take: at the fork event, before the copy) */
void pft_want_fork(struct pft_space *child, struct pft_space *parent);
void pft_want_note(struct pft_space *sp, pid_t tid, uint64_t addr);
void pft_want_free(struct pft_space *sp);
/* trace_mem.c: memory and breakpoints */
/* read len bytes of tracee memory with breakpoints undone; returns bytes read */
size_t pft_mem_read(struct pft_space *sp, pid_t tid, uint64_t addr, void *buf, size_t len);
/* fn(arg, p, n) on the program's bytes at addr, to its page's end (n),
 * where they are read from the tracer's view of their file (no int3 of
 * ours there), under the SIGBUS guard (pft_fview_with); 1: done; 0: not
 * (no view; or its file cut under fn: what fn did is void) */
typedef void (*pft_fview_fn)(void *arg, const uint8_t *p, size_t n);
int pft_mem_view(struct pft_space *sp, uint64_t addr, pft_fview_fn fn, void *arg);
int pft_mem_write64(pid_t tid, uint64_t addr, uint64_t val);
/* pages read before this are forgotten (trace_mem.c): a new event */
void pft_mem_fresh(void);
unsigned pft_mem_gen(void); /* the event pages read now belong to */
/* one word, as it is (breakpoints not undone) */
int pft_mem_read64(pid_t tid, uint64_t addr, uint64_t *val);
int pft_bp_has(const struct pft_space *sp, uint64_t addr);
int pft_bp_insert(struct pft_space *sp, pid_t tid, uint64_t addr);
int pft_bp_remove(struct pft_space *sp, pid_t tid, uint64_t addr);
/* breakpoints in [lo, hi) out: their bytes restored through tid, or,
 * with tid 0, only forgotten (the memory is gone: munmap) */
void pft_bp_clear(struct pft_space *sp, pid_t tid, uint64_t lo, uint64_t hi);
/* the breakpoint table of a new space, a forked child's copy, freed */
int pft_bp_init(struct pft_space *sp);
int pft_bp_copy(struct pft_space *sp, const struct pft_space *parent);
void pft_bp_free(struct pft_space *sp);

/* trace_maps.c */
int pft_maps_load(struct pft_maps *m, pid_t pid);
/* [lo, hi) may have changed (mmap, munmap, mprotect ... returned) */
void pft_maps_dirty(struct pft_maps *m, uint64_t lo, uint64_t hi);
void pft_maps_free(struct pft_maps *m);
/* the mapping holding addr in the maps as last read, or NULL */
const struct pft_map *pft_maps_at(const struct pft_maps *m, uint64_t addr);
/* the mapping holding addr (reloading once when stale or unknown) */
const struct pft_map *pft_maps_find(struct pft_maps *m, pid_t pid, uint64_t addr);
/* A free page-aligned range of size bytes, every byte of it within
 * `reach` of every byte of [lo, hi); 0 if none. */
uint64_t pft_maps_gap_near(const struct pft_maps *m, uint64_t lo, uint64_t hi, uint64_t size, uint64_t reach);

/* trace_codemap.c: the program's code read from the tracer's own
 * read-only mapping of its file where it is provably the file's.
 * start: at exec (what is writable then is marked); copy: a forked
 * child's marks; with: fn(arg, p, n), p the view's bytes at addr to its
 * page's end (n), as the program sees them (int3s of ours never there),
 * under a SIGBUS guard (the only way a view is read: a file truncated
 * under it), returns 1; 0: no view, or the file cut under fn (fn's work
 * void, the view not used again): read them through process_vm_readv
 * (gen: the event, pft_mem_fresh); read: the n bytes at addr (within one
 * 4 KiB page) into buf through with, returns n or 0;
 * poked: an int3 of ours planted at addr; mapped: [lo, hi) unmapped (prot < 0) or
 * mapped anew with prot; protect: given prot (mprotect); written:
 * written by the program (/proc/PID/mem, process_vm_writev);
 * changed_all: some mapping changed, where unknown; off: never again
 * for sp */
int pft_fview_start(struct pft_space *sp);
int pft_fview_copy(struct pft_space *sp, const struct pft_space *parent);
int pft_fview_with(struct pft_space *sp, uint64_t addr, unsigned gen, pft_fview_fn fn, void *arg);
size_t pft_fview_read(struct pft_space *sp, uint64_t addr, void *buf, size_t n, unsigned gen);
void pft_fview_poked(struct pft_space *sp, uint64_t addr);
void pft_fview_mapped(struct pft_space *sp, uint64_t lo, uint64_t hi, int prot);
void pft_fview_protect(struct pft_space *sp, uint64_t lo, uint64_t hi, int prot);
void pft_fview_written(struct pft_space *sp, uint64_t lo, uint64_t hi);
void pft_fview_changed_all(struct pft_space *sp);
void pft_fview_off(struct pft_space *sp);
void pft_fview_free(struct pft_space *sp);

/* trace_blocks.c: n bytes that live as long as sp, 8-aligned, not
 * zeroed (a piece is reused as it was left: every caller writes what it
 * takes); NULL: out of memory.  The current piece's bump inline (called
 * several times a block: as a call it was 4% of a cold tracer's
 * instructions), a new piece or a big request in pft_pool_piece. */
void *pft_pool_piece(struct pft_space *sp, size_t n);
static inline void *pft_pool_alloc(struct pft_space *sp, size_t n)
{
	unsigned char *p = sp->pool_at;

	n = (n + 7) & ~(size_t)7;
	if ((size_t)(sp->pool_end - p) <= n) /* (<=: never NULL for 0 bytes) */
		return pft_pool_piece(sp, n);
	sp->pool_at = p + n;
	return p;
}

/* trace_space.c: sp (a forked child's new space) gets copies of parent's
 * cached blocks and of its arena's layout; pft_arena_fork then gives it
 * memory */
int pft_xlate_fork(struct pft_space *sp, const struct pft_space *parent);

#endif
