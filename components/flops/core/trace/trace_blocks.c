/*
 * trace_blocks.c: the basic-block cache.  A block is decoded once, from
 * its first address up to the first instruction that changes rip, and
 * remembers its FP instructions so that an execution of it is counted by
 * a table walk instead of a decode.  Blocks are dropped (and decoded
 * again when next run) when their pages are unmapped or made writable
 * (pft_block_invalidate, from the engine's system-call stops); code
 * rewritten in place on a page that stays writable is not noticed.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <pthread.h>

#include "trace_block.h"
#include "trace_space.h"
#include "trace_cache.h"
#include "trace_prof.h"
#include "trace_wprot.h"
#include "trace_elf.h"

#define MAX_INSTS 4096 /* longer straight-line code is stepped */
#define CHUNK 256

/* The block table's bucket of address a: neighbours in neighbouring
 * buckets (8 bytes a bucket within each MiB, the MiBs scattered), so
 * that the hint store's blocks, taken in address order, and the targets
 * of their exits, mostly near, find their buckets in cache: a hash that
 * scattered every block cost a cache miss per block (7% of a warm numpy
 * run's hinted translation). */
static size_t slot(uint64_t a, size_t cap)
{
	uint64_t r = (a >> 20) * 0x9e3779b97f4a7c15ULL;

	return (size_t)((a >> 3) + (r >> 40)) & (cap - 1);
}

static void block_free(struct pft_block *b)
{
	if (b->x && !b->x->pooled) { /* (its links are in the pool) */
		free(b->x->pt);
		free(b->x);
	}
	free(b->acc);
	free(b->ovf_w);
	if (!b->pooled) {
		free(b->offs);
		free(b->fp);
		free(b);
	}
}

/* ------------------------------------------------------------------ */
/* The pool: a big program's 100,000s of blocks and copies, freed one
 * by one when its space ended, took 15% of the tracer's CPU (numpy),
 * and their malloc headers a tenth of its memory.  They live as long
 * as their space (dropped blocks too: sp->dead), so they are carved
 * from large pieces freed together.  A forked child's blocks share
 * what never changes (instruction offsets, FP entries, a copy's
 * points) with its parent's: it holds the pools they are in. */
#define POOL_PIECE (256 * 1024)

struct pft_pool {
	struct pft_pool *next;
	size_t size;
	_Alignas(16) unsigned char mem[];
};

struct pft_pools { /* a space's pieces, held by its forked children too */
	int refs;
	struct pft_pool *head;
};

/* A piece mapped with its pages present: the tracer fills it at once,
 * and a fault per page (zeroed by calloc's memset, then by the kernel)
 * was a tenth of a warm numpy run's hinted translation, mostly the
 * trap (in this VM) rather than the zeroing.
 *
 * Pieces of a space let go are kept for the next (up to POOL_KEEP): a
 * forked child's records fill a pool as large as its parent's, and one
 * that exits gives it to the next fork's child (python after importing
 * numpy: 190 pieces a fork, each mapped, populated and unmapped again,
 * a fifth of the fork's time).  Every user of the pool writes what it
 * allocates, so a kept piece is not cleared. */
#define POOL_KEEP 512 /* pieces (128 MiB) */
static struct pft_pool *pool_kept;
static size_t pool_nkept;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t piece_len(size_t size)
{
	return (sizeof(struct pft_pool) + size + 4095) & ~(size_t)4095;
}

static struct pft_pool *piece_new(size_t size)
{
	size_t len = piece_len(size);
	struct pft_pool *q = NULL;

	if (len == piece_len(POOL_PIECE)) {
		pthread_mutex_lock(&pool_lock);
		if ((q = pool_kept)) {
			pool_kept = q->next;
			pool_nkept--;
		}
		pthread_mutex_unlock(&pool_lock);
	}
	if (!q) {
		q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (q == MAP_FAILED)
			return NULL;
	}
	q->next = NULL;
	q->size = len - sizeof *q;
	return q;
}

static void piece_free(struct pft_pool *q)
{
	if (sizeof *q + q->size == piece_len(POOL_PIECE)) {
		pthread_mutex_lock(&pool_lock);
		if (pool_nkept < POOL_KEEP) {
			q->next = pool_kept;
			pool_kept = q;
			pool_nkept++;
			q = NULL;
		}
		pthread_mutex_unlock(&pool_lock);
		if (!q)
			return;
	}
	munmap(q, sizeof *q + q->size);
}

void *pft_pool_piece(struct pft_space *sp, size_t n)
{
	struct pft_pool *p, *q;
	size_t size = n > POOL_PIECE / 4 ? n : POOL_PIECE;

	if (!sp->pool && !(sp->pool = calloc(1, sizeof *sp->pool)))
		return NULL;
	if (!sp->pool->refs)
		sp->pool->refs = 1;
	p = sp->pool->head;
	if (!(q = piece_new(size)))
		return NULL;
	if (p && size != POOL_PIECE) { /* a big one: behind the current */
		q->next = p->next;
		p->next = q;
		return q->mem;
	}
	/* the current piece's rest is left unused (at most a quarter of
	 * a piece, as before) */
	q->next = p;
	sp->pool->head = q;
	sp->pool_at = q->mem + n;
	sp->pool_end = q->mem + q->size;
	return q->mem;
}

static void pools_put(struct pft_pools *o)
{
	if (!o || --o->refs > 0)
		return;
	for (struct pft_pool *p = o->head, *n; p; p = n) {
		n = p->next;
		piece_free(p);
	}
	free(o);
}

void pft_pool_free(struct pft_space *sp)
{
	pools_put(sp->pool);
	for (size_t i = 0; i < sp->npool_held; i++)
		pools_put(sp->pool_held[i]);
	free(sp->pool_held);
	sp->pool = NULL;
	sp->pool_at = sp->pool_end = NULL;
	sp->pool_held = NULL;
	sp->npool_held = 0;
}

int pft_pool_share(struct pft_space *sp, const struct pft_space *parent)
{
	size_t n = parent->npool_held + 1;

	if (!(sp->pool_held = malloc(n * sizeof *sp->pool_held)))
		return PFLOPS_ENOMEM;
	for (size_t i = 0; i < parent->npool_held; i++)
		(sp->pool_held[sp->npool_held++] = parent->pool_held[i])->refs++;
	if (parent->pool)
		(sp->pool_held[sp->npool_held++] = parent->pool)->refs++;
	return 0;
}

void pft_block_free_all(struct pft_space *sp)
{
	/* a walk of every block (a cache miss each) only where one holds
	 * malloc'ed memory: pooled blocks and copies go with the pool */
	for (size_t i = 0; sp->blk_heap && sp->blk_tab && i < sp->blk_cap; i++)
		for (struct pft_block *b = sp->blk_tab[i], *n; b; b = n) {
			n = b->next;
			block_free(b);
		}
	for (size_t i = 0; sp->blk_heap && i < sp->ndead; i++)
		block_free(sp->dead[i]);
	free(sp->dead);
	free(sp->pages);
	free(sp->pg_refs);
	sp->pg_refs = NULL;
	free(sp->recent);
	sp->recent = NULL;
	sp->dead = NULL;
	sp->pages = NULL;
	sp->ndead = sp->dead_cap = sp->pg_cap = sp->pg_n = 0;
	sp->blk_n = 0;
}

/* ------------------------------------------------------------------ */
/* Pages holding decoded code: the system calls that change mappings
 * look here first and leave the blocks alone when nothing is there. */

static size_t pg_slot(uint64_t pg, size_t cap)
{
	pg *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(pg >> 20) & (cap - 1);
}

/* a block on a page (its list in sp->pg_refs; pool memory) */
struct pft_pgref {
	struct pft_block *b;
	struct pft_pgref *next;
};

/* page pg (+1) into the set, and block b on its list */
static void pg_add(struct pft_space *sp, uint64_t pg, struct pft_block *b)
{
	struct pft_pgref *r;
	size_t i;

	if (2 * (sp->pg_n + 1) > sp->pg_cap) {
		size_t nc = sp->pg_cap ? 2 * sp->pg_cap : 256;
		uint64_t *n = calloc(nc, sizeof *n), *o = sp->pages;
		struct pft_pgref **nr = calloc(nc, sizeof *nr), ** or = sp->pg_refs;
		if (!n || !nr) {
			free(n);
			free(nr);
			sp->pg_unindexed = 1;
			return;
		}
		for (size_t j = 0; j < sp->pg_cap; j++)
			if (o[j]) {
				for (i = pg_slot(o[j], nc); n[i]; i = (i + 1) & (nc - 1))
					;
				n[i] = o[j];
				nr[i] = or [j];
			}
		free(o);
		free(or);
		sp->pages = n;
		sp->pg_refs = nr;
		sp->pg_cap = nc;
	}
	for (i = pg_slot(pg, sp->pg_cap); sp->pages[i] && sp->pages[i] != pg; i = (i + 1) & (sp->pg_cap - 1))
		;
	if (!sp->pages[i]) {
		sp->pages[i] = pg;
		sp->pg_n++;
	}
	if (!(r = pft_pool_alloc(sp, sizeof *r))) {
		sp->pg_unindexed = 1;
		return;
	}
	r->b = b;
	r->next = sp->pg_refs[i];
	sp->pg_refs[i] = r;
}

static int pg_has(const struct pft_space *sp, uint64_t pg)
{
	if (!sp->pg_cap)
		return 0;
	for (size_t i = pg_slot(pg, sp->pg_cap); sp->pages[i]; i = (i + 1) & (sp->pg_cap - 1))
		if (sp->pages[i] == pg)
			return 1;
	return 0;
}

static int range_has_code(const struct pft_space *sp, uint64_t lo, uint64_t hi)
{
	uint64_t p0 = lo >> 12, p1 = (hi + 4095) >> 12;

	if (p1 - p0 <= sp->pg_n) {
		for (uint64_t p = p0; p < p1; p++)
			if (pg_has(sp, p + 1))
				return 1;
		return 0;
	}
	for (size_t i = 0; i < sp->pg_cap; i++)
		if (sp->pages[i] && sp->pages[i] - 1 >= p0 && sp->pages[i] - 1 < p1)
			return 1;
	return 0;
}

/* b (in the block table) is dropped: its copy detached, kept for its
 * counts in sp->dead */
static void drop(struct pft_space *sp, struct pft_block *b)
{
	sp->blk_n--;
	b->dead = 1;
	if (b->x && sp->arena)
		pft_xlate_detach(sp, b->x);
	if (sp->ndead == sp->dead_cap) {
		size_t nc = sp->dead_cap ? 2 * sp->dead_cap : 16;
		struct pft_block **nd = realloc(sp->dead, nc * sizeof *nd);
		if (!nd) /* leak it rather than free counted code */
			return;
		sp->dead = nd;
		sp->dead_cap = nc;
	}
	sp->dead[sp->ndead++] = b;
}

/* A JIT's write fault drops one page's blocks: walking the whole block
 * table for them was a quarter of javac's traced time; the pages' lists
 * hold them (a list sheds its dropped blocks as it is walked). */
static size_t invalidate_pages(struct pft_space *sp, uint64_t lo, uint64_t hi)
{
	size_t n = 0;

	for (uint64_t p = lo >> 12; p < (hi + 4095) >> 12; p++) {
		size_t i;
		for (i = pg_slot(p + 1, sp->pg_cap); sp->pages[i] && sp->pages[i] != p + 1;
		     i = (i + 1) & (sp->pg_cap - 1))
			;
		if (!sp->pages[i])
			continue;
		for (struct pft_pgref **rp = &sp->pg_refs[i]; *rp;) {
			struct pft_block *b = (*rp)->b, **pp;
			if (!b->dead && (b->start >= hi || b->end <= lo)) {
				rp = &(*rp)->next;
				continue;
			}
			*rp = (*rp)->next;
			if (b->dead)
				continue;
			for (pp = &sp->blk_tab[slot(b->start, sp->blk_cap)]; *pp != b; pp = &(*pp)->next)
				;
			*pp = b->next;
			drop(sp, b);
			n++;
		}
	}
	return n;
}

int pft_block_in(const struct pft_space *sp, uint64_t lo, uint64_t hi)
{
	return hi > lo && sp->blk_n && range_has_code(sp, lo, hi);
}

size_t pft_block_invalidate(struct pft_space *sp, uint64_t lo, uint64_t hi)
{
	size_t n = 0;

	if (hi <= lo || !range_has_code(sp, lo, hi))
		return 0;
	if (!sp->pg_unindexed && ((hi + 4095) >> 12) - (lo >> 12) <= sp->pg_n)
		return invalidate_pages(sp, lo, hi);
	for (size_t i = 0; i < sp->blk_cap; i++)
		for (struct pft_block **p = &sp->blk_tab[i]; *p;) {
			struct pft_block *b = *p;
			if (b->start >= hi || b->end <= lo) {
				p = &b->next;
				continue;
			}
			*p = b->next;
			drop(sp, b);
			n++;
		}
	return n;
}

static int grow_to(struct pft_space *sp, size_t nc)
{
	struct pft_block **nt = calloc(nc, sizeof *nt);

	if (!nt)
		return PFLOPS_ENOMEM;
	for (size_t i = 0; i < sp->blk_cap; i++) {
		/* a block's start is a cache miss: those of the buckets
		 * ahead asked for now (a hint file's reserve rehashes every
		 * block: 3% of a warm numpy run's tracer) */
		if (i + 8 < sp->blk_cap && sp->blk_tab[i + 8])
			__builtin_prefetch(sp->blk_tab[i + 8]);
		for (struct pft_block *b = sp->blk_tab[i], *n; b; b = n) {
			size_t s = slot(b->start, nc);
			n = b->next;
			b->next = nt[s];
			nt[s] = b;
		}
	}
	free(sp->blk_tab);
	sp->blk_tab = nt;
	sp->blk_cap = nc;
	return 0;
}

static int grow(struct pft_space *sp)
{
	return grow_to(sp, sp->blk_cap * 2);
}

/* b (decoded into the space's scratch arrays) into sp's pool, its
 * arrays to their size (most blocks have a few instructions and no
 * FP); malloc'ed where the pool has no room.  A block malloc'ed, filled
 * and copied into the pool was a malloc and a free for it and each of
 * its arrays, per block. */
static struct pft_block *place(struct pft_space *sp, const struct pft_block *b)
{
	struct pft_block *p = pft_pool_alloc(sp, sizeof *p);
	uint32_t *o = p ? pft_pool_alloc(sp, b->ninsts * sizeof *o) : NULL;
	/* no FP entries (most blocks): no array (fp NULL) */
	struct pft_fpent *f = o && b->nfp ? pft_pool_alloc(sp, b->nfp * sizeof *f) : NULL;
	int pooled = o && (f || !b->nfp);

	if (!pooled) {
		sp->blk_heap = 1;
		p = malloc(sizeof *p);
		o = malloc(b->ninsts * sizeof *o);
		f = b->nfp ? malloc(b->nfp * sizeof *f) : NULL;
		if (!p || !o || (b->nfp && !f)) {
			free(p);
			free(o);
			free(f);
			return NULL;
		}
	}
	*p = *b;
	memcpy(o, b->offs, b->ninsts * sizeof *o);
	if (b->nfp)
		memcpy(f, b->fp, b->nfp * sizeof *f);
	p->offs = o;
	p->fp = f;
	p->pooled = (uint8_t)pooled;
	return p;
}

/* The instructions of the block decoded last in a space, as its decode
 * left them (bytes and relocation facts), for its translation, which
 * mostly follows at once: a second decode of each instruction was 14%
 * of the tracer's CPU on numpy and gcc. */
struct pft_recent {
	uint64_t start;
	uint32_t len, n; /* bytes, instructions (0: none kept) */
	unsigned gen;	 /* the event it was decoded in (pft_mem_gen) */
	uint8_t viewed;	 /* all its bytes read in place from our mapping
			  * of the file (no copy from the process) */
	uint8_t bytes[MAX_INSTS * PFT_INSN_MAX];
	struct pft_reloc r[MAX_INSTS];
	/* the decode's scratch: the block's arrays before place() */
	uint32_t offs[MAX_INSTS];
	struct pft_fpent fp[MAX_INSTS];
};

int pft_block_bytes(const struct pft_space *sp, const struct pft_block *b, uint8_t *code)
{
	const struct pft_recent *rc = sp->recent;
	uint32_t len = (uint32_t)(b->end - b->start);

	/* the same event: the same view, the same bytes (a second read
	 * from the view was 5% of a cold numpy run's tracer) */
	if (!rc || !rc->n || !rc->viewed || rc->gen != pft_mem_gen() || rc->start != b->start || rc->n != b->ninsts ||
	    rc->len != len)
		return 0;
	memcpy(code, rc->bytes, len);
	return 1;
}

const struct pft_reloc *pft_block_relocs(const struct pft_space *sp, const struct pft_block *b, const uint8_t *code)
{
	const struct pft_recent *rc = sp->recent;

	/* the facts are a function of the bytes and the address alone */
	if (!rc || !rc->n || rc->start != b->start || rc->n != b->ninsts || rc->len != b->end - b->start ||
	    memcmp(rc->bytes, code, rc->len))
		return NULL;
	return rc->r;
}

/* one decode's state, for decode_at */
struct dec {
	struct pft_space *sp;
	pid_t tid;
	uint64_t pc;
	struct pft_block *b;
	uint8_t kw, ku; /* mask registers written, used */
	uint8_t copied; /* bytes copied from the process or a file (not only the view) */
};

/* the decode proper, from view (the program's bytes at pc, vlen of
 * them, read in place: under the SIGBUS guard, pft_mem_view) or NULL,
 * then from copies (pft_mem_read) */
static void decode_at(void *arg, const uint8_t *view, size_t vlen)
{
	struct dec *d = arg;
	struct pft_block *b = d->b;
	struct pft_recent *rc = d->sp->recent;
	uint64_t pc = d->pc;
	uint8_t buf[CHUNK];
	const uint8_t *src = view ? view : buf; /* holds [pc+base, pc+base+have) */
	size_t have = view ? vlen : 0, pos = 0;
	uint64_t base = 0, off = 0;

	for (;;) {
		struct pft_insn in;

		if (have - pos < 16) { /* refill so one insn always fits */
			memmove(buf, src + pos, have - pos);
			src = buf;
			base += pos;
			have -= pos;
			pos = 0;
			have += pft_mem_read(d->sp, d->tid, pc + base + have, buf + have, CHUNK - have);
			d->copied = 1;
		}
		if (have == pos || pft_arch_decode(src + pos, have - pos, pc + off, &in, &rc->r[b->ninsts]))
			break;
		memcpy(rc->bytes + off, src + pos, in.len);
		b->offs[b->ninsts++] = (uint32_t)off;
		if (in.fp) {
			b->fp[b->nfp++] = (struct pft_fpent){ .idx = b->ninsts - 1,
							      .prec = in.prec,
							      .width = in.width,
							      .op = in.op,
							      .lanes = in.lanes,
							      .mask_reg = in.mask_reg,
							      .lanes_per_bit = in.lanes_per_bit };
			if (in.mask_reg) {
				b->has_mask = 1;
				d->ku |= (uint8_t)(1u << in.mask_reg);
			}
		}
		if (pft_arch_flagsop(src + pos, in.len))
			b->has_flagsop = 1;
		if (in.extra >= 0)
			b->extra[in.extra]++;
		d->kw |= in.kwrites;
		b->last = pc + off;
		pos += in.len;
		off += in.len;
		if (in.term != PFT_T_NONE) {
			b->term = in;
			break;
		}
		if (b->ninsts == MAX_INSTS)
			break;
	}
	b->end = pc + off;
}

/* Decode the block at pc into b (zeroed; its arrays: the space's
 * scratch, sp->recent).  Never fails except for memory: unreadable or
 * undecodable bytes give a one-instruction block that is single-stepped
 * (the program will fault there, as it would untraced). */
static int decode(struct pft_space *sp, pid_t tid, uint64_t pc, int force_step, struct pft_block *b)
{
	struct dec d = { .sp = sp, .tid = tid, .pc = pc, .b = b };
	struct pft_recent *rc;
	unsigned gen;

	if (!sp->recent && !(sp->recent = malloc(sizeof *sp->recent)))
		return PFLOPS_ENOMEM;
	rc = sp->recent;
	rc->n = 0;
	b->start = pc;
	b->offs = rc->offs;
	b->fp = rc->fp;
	/* code the tracer maps from its file: decoded there, up to its
	 * page's end (a copy of 256 bytes a block, most of them never
	 * decoded, was 4% of a cold numpy run's tracer), under the guard
	 * against a file cut short under the view (a SIGBUS): then the
	 * decode is done again from copies, from a clean block */
	/* the event before the view is checked: one that begins meanwhile
	 * (another tracer thread) only makes pft_block_bytes read again */
	gen = pft_mem_gen();
	if (!pft_mem_view(sp, pc, decode_at, &d)) {
		*b = (struct pft_block){ .start = pc, .offs = rc->offs, .fp = rc->fp };
		d.kw = d.ku = 0;
		d.copied = 1;
		decode_at(&d, NULL, 0);
	}

	rc->gen = gen;
	rc->viewed = !d.copied;
	rc->start = pc;
	rc->len = (uint32_t)(b->end - pc);
	rc->n = b->ninsts;
	if (b->ninsts == 0) { /* nothing decodable at pc */
		b->ninsts = 1;
		b->offs[0] = 0;
		b->last = pc;
		b->end = pc + 1;
		b->mode = PFT_BLK_STEP;
		return 0;
	}
	if (pft_branch_emulable(b->term.term))
		b->mode = PFT_BLK_BP;
	else if (b->term.term == PFT_T_SYSCALL)
		b->mode = PFT_BLK_SYSCALL;
	else /* OTHER, cap reached, bad bytes ahead */
		b->mode = PFT_BLK_STEP;
	/* A mask register written inside the block has another value at the
	 * masked instruction than at the block's end, where we read it. */
	if ((d.kw & d.ku) || (force_step && b->mode == PFT_BLK_BP))
		b->mode = PFT_BLK_STEP;
	return 0;
}

struct pft_block *pft_block_find(const struct pft_space *sp, uint64_t pc)
{
	for (struct pft_block *b = sp->blk_tab[slot(pc, sp->blk_cap)]; b; b = b->next)
		if (b->start == pc)
			return b;
	return NULL;
}

struct pft_block *pft_block_get(struct pft_space *sp, pid_t tid, uint64_t pc, int force_step, uint64_t *decoded)
{
	size_t s = slot(pc, sp->blk_cap);
	struct pft_block *b;

	for (b = sp->blk_tab[s]; b; b = b->next)
		if (b->start == pc)
			return b;
	{
		struct pft_block d = { 0 };
		if (decode(sp, tid, pc, force_step, &d) || !(b = place(sp, &d)))
			return NULL;
	}
	if (sp->region)
		b->region_entry = (uint8_t)pft_region_is_entry(sp->region, sp->pid, pc);
	if (sp->prof && pft_prof_block(sp, tid, b)) {
		block_free(b);
		return NULL;
	}
	if (decoded)
		(*decoded)++;
	for (uint64_t p = b->start >> 12; p <= (b->end - 1) >> 12; p++)
		pg_add(sp, p + 1, b); /* +1: 0 marks an empty slot */
	if (2 * (sp->blk_n + 1) > sp->blk_cap && grow(sp) == 0)
		s = slot(pc, sp->blk_cap);
	b->next = sp->blk_tab[s];
	sp->blk_tab[s] = b;
	sp->blk_n++;
	return b;
}

int pft_block_index(const struct pft_block *blk, uint64_t pc)
{
	uint64_t off;
	uint32_t lo = 0, hi = blk->ninsts;

	if (pc < blk->start)
		return -1;
	off = pc - blk->start;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (blk->offs[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < blk->ninsts && blk->offs[lo] == off ? (int)lo : -1;
}

static void count_fp(struct pflops_mix *m, const struct pft_fpent *e, const uint64_t *k)
{
	m->insts[e->prec][e->width][e->op]++;
	m->lanes_full[e->prec][e->width][e->op] += e->lanes;
	if (e->mask_reg)
		m->masked[e->prec][e->width][e->op]++;
	m->lanes_active[e->prec][e->width][e->op] += pft_fp_active(e, k);
}

void pft_block_count(struct pflops_mix *m, const struct pft_block *blk, uint32_t n, const uint64_t *k)
{
	if (n > blk->ninsts)
		n = blk->ninsts;
	m->total_insts += n;
	for (uint32_t i = 0; i < blk->nfp && blk->fp[i].idx < n; i++)
		count_fp(m, &blk->fp[i], k);
	if (n == blk->ninsts)
		for (int x = 0; x < PFLOPS_NEXTRA; x++)
			m->extra[x] += blk->extra[x];
	/* a partial block's extras are dropped: they are rare and the
	 * partial case only arises when a signal interrupts a block */
}

void pft_block_count_one(struct pflops_mix *m, const struct pft_block *blk, uint32_t idx, const uint64_t *k)
{
	m->total_insts++;
	for (uint32_t i = 0; i < blk->nfp; i++)
		if (blk->fp[i].idx == idx)
			count_fp(m, &blk->fp[i], k);
	/* extras are per block; a stepped block adds them when it ends */
}

void pft_block_count_times(struct pflops_mix *m, const struct pft_block *blk, uint64_t times)
{
	m->total_insts += times * blk->ninsts;
	for (uint32_t i = 0; i < blk->nfp; i++) {
		const struct pft_fpent *e = &blk->fp[i];
		m->insts[e->prec][e->width][e->op] += times;
		m->lanes_full[e->prec][e->width][e->op] += times * e->lanes;
		m->lanes_active[e->prec][e->width][e->op] += times * e->lanes;
	}
	for (int x = 0; x < PFLOPS_NEXTRA; x++)
		m->extra[x] += times * blk->extra[x];
}

struct pft_block *pft_block_fork(struct pft_space *sp, const struct pft_block *b)
{
	struct pft_block *c = pft_pool_alloc(sp, sizeof *c);

	if (!c)
		return NULL;
	*c = *b;
	c->pooled = 1;
	c->x = NULL;
	c->next = NULL;
	c->execs = 0;	 /* a forked child counts its own runs */
	c->ovf_w = NULL; /* recomputed when needed */
	c->acc = b->acc ? calloc(2 + 2 * (size_t)b->nfp, sizeof *c->acc) : NULL;
	if (b->acc && !c->acc)
		return NULL;
	if (c->acc)
		sp->blk_heap = 1;
	if (!b->pooled) { /* the parent frees these: copies */
		c->offs = pft_pool_alloc(sp, b->ninsts * sizeof *c->offs);
		c->fp = b->nfp ? pft_pool_alloc(sp, b->nfp * sizeof *c->fp) : NULL;
		if (!c->offs || (b->nfp && !c->fp)) {
			free(c->acc);
			return NULL;
		}
		memcpy(c->offs, b->offs, b->ninsts * sizeof *c->offs);
		if (b->nfp)
			memcpy(c->fp, b->fp, b->nfp * sizeof *c->fp);
	}
	return c;
}

void pft_block_reserve(struct pft_space *sp, size_t n)
{
	size_t nc = sp->blk_cap;

	while (2 * n > nc)
		nc *= 2;
	/* at once (each doubling was a new table's faults), and to twice
	 * that: the reserves of the files touched next (numpy: 30) then
	 * find room instead of rehashing every block again */
	if (nc > sp->blk_cap)
		grow_to(sp, 2 * nc);
}

int pft_block_adopt(struct pft_space *sp, struct pft_block *b)
{
	size_t s;

	if (b->dead) {
		if (sp->ndead == sp->dead_cap) {
			size_t nc = sp->dead_cap ? 2 * sp->dead_cap : 16;
			struct pft_block **nd = realloc(sp->dead, nc * sizeof *nd);
			if (!nd)
				return PFLOPS_ENOMEM;
			sp->dead = nd;
			sp->dead_cap = nc;
		}
		sp->dead[sp->ndead++] = b;
		return 0;
	}
	if (2 * (sp->blk_n + 1) > sp->blk_cap)
		grow(sp);
	s = slot(b->start, sp->blk_cap);
	b->next = sp->blk_tab[s];
	sp->blk_tab[s] = b;
	sp->blk_n++;
	for (uint64_t p = b->start >> 12; p <= (b->end - 1) >> 12; p++)
		pg_add(sp, p + 1, b);
	return 0;
}

/* the thread's memory for the branch emulator: a word as it is */
static int emul_read(void *ctx, uint64_t addr, uint64_t *val)
{
	return pft_mem_read64(*(const pid_t *)ctx, addr, val);
}

static int emul_write(void *ctx, uint64_t addr, uint64_t val)
{
	return pft_mem_write64(*(const pid_t *)ctx, addr, val);
}

int pft_emulate(struct pft_space *sp, pid_t tid, const struct pft_block *blk, struct user_regs_struct *regs)
{
	struct pft_arch_mem m = { &tid, emul_read, emul_write };

	(void)sp;
	return pft_arch_emulate(&blk->term, blk->last, &m, regs);
}

void pft_step_flags(struct pft_space *sp, pid_t tid, uint64_t pc, const struct user_regs_struct *r, uint64_t *tf)
{
	struct pft_arch_mem m = { &tid, emul_read, emul_write };
	uint8_t op[2];

	if (pft_mem_read(sp, tid, pc, op, 2) == 2)
		pft_arch_step_flags(op, 2, r, &m, tf);
}
