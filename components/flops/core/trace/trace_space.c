/*
 * trace_space.c: the life of a traced address space (a process, or a
 * vfork child until exec): made at the first thread, copied at fork (its
 * breakpoints, region and code cache: the child's memory is a copy of the
 * parent's), let go when its last thread is.
 */
#include <stdlib.h>
#include <string.h>

#include "trace_space.h"
#include "trace_cache.h"
#include "trace_elf.h"
#include "trace_prof.h"
#include "trace_wprot.h"
#include "trace_hints.h"

struct pft_space *pft_space_new(pid_t pid, const char *region)
{
	struct pft_space *sp = calloc(1, sizeof *sp);

	if (!sp)
		return NULL;
	sp->refs = 1;
	sp->pid = pid;
	sp->blk_cap = 1024;
	sp->blk_tab = calloc(sp->blk_cap, sizeof *sp->blk_tab);
	if (region)
		sp->region = pft_region_new(region);
	if (pft_bp_init(sp) || !sp->blk_tab || (region && !sp->region)) {
		pft_space_put(sp);
		return NULL;
	}
	return sp;
}

/* A forked child's memory is a copy of the parent's, int3 bytes and
 * code cache included: it inherits the breakpoint table, the region's
 * addresses and the cached blocks (others are decoded again). */
struct pft_space *pft_space_fork(const struct pft_space *parent, pid_t child, const char *region)
{
	struct pft_space *sp = pft_space_new(child, NULL);

	if (!sp)
		return NULL;
	if (region && parent->region && !(sp->region = pft_region_copy(parent->region)))
		goto fail;
	if (pft_bp_copy(sp, parent))
		goto fail;
	sp->prof = parent->prof;
	sp->gadget = parent->gadget;
	sp->arena_failed = parent->arena_failed;
	sp->no_inject = parent->no_inject;			  /* seccomp is inherited */
	memcpy(sp->maps_fd, parent->maps_fd, sizeof sp->maps_fd); /* and the fds */
	sp->n_maps_fd = parent->n_maps_fd;
	if (pft_xlate_fork(sp, parent))
		goto fail;
	if (pft_wprot_copy(sp, parent)) /* the child has our protections too */
		goto fail;
	if (pft_fview_copy(sp, parent))
		goto fail;
	return sp;
fail:
	pft_space_put(sp);
	return NULL;
}

void pft_space_put(struct pft_space *sp)
{
	if (!sp || --sp->refs > 0)
		return;
	pft_prof_report(sp);
	pft_want_free(sp);
	pft_block_free_all(sp);
	pft_arena_free(sp->arena);
	pft_pool_free(sp); /* after the blocks: they live there */
	pft_maps_free(&sp->maps);
	pft_wprot_free(sp);
	pft_hints_free(sp);
	pft_fview_free(sp);
	free(sp->rd);
	if (sp->region)
		pft_region_free(sp->region);
	free(sp->blk_tab);
	pft_bp_free(sp);
	free(sp);
}

/* A forked child's code cache: copies of the parent's cached blocks and
 * of its arena's layout (pft_arena_fork then gives it memory).  In the
 * child's pool, sharing the copy's points with the parent's (which holds
 * them in its pool, or on the heap: then copied). */
static struct pft_xblock *xb_fork(struct pft_space *sp, const struct pft_xblock *x, struct pft_block *b)
{
	struct pft_xblock *c = pft_pool_alloc(sp, sizeof *c);

	if (!c)
		return NULL;
	*c = *x;
	c->pooled = 1;
	c->b = b;
	if (!x->pooled) {
		if (!(c->pt = pft_pool_alloc(sp, (size_t)(x->npt ? x->npt : 1) * sizeof *c->pt)))
			return NULL;
		memcpy(c->pt, x->pt, (size_t)x->npt * sizeof *c->pt);
	}
	c->in = NULL;
	c->in_cap = x->nin;
	if (x->nin) {
		if (!(c->in = pft_pool_alloc(sp, (size_t)x->nin * sizeof *c->in)))
			return NULL;
		memcpy(c->in, x->in, (size_t)x->nin * sizeof *c->in);
	}
	return c;
}

int pft_xlate_fork(struct pft_space *sp, const struct pft_space *parent)
{
	const struct pft_arena *pa = parent->arena;
	struct pft_arena *a;
	struct pft_xblock **xof;

	if (!pa)
		return 0;
	if (pft_pool_share(sp, parent))
		return PFLOPS_ENOMEM;
	pft_block_reserve(sp, parent->blk_n);
	a = calloc(1, sizeof *a);
	if (!a)
		return PFLOPS_ENOMEM;
	sp->arena = a;
	sp->ovf_maxpre = parent->ovf_maxpre;
	a->slots_fd = -1;
	a->region = pa->region;
	a->freq = pa->freq;	    /* its copies' stubs are the parent's */
	a->freq_off = pa->freq_off; /* (and int3s where the parent's are) */
	a->tpiece = pa->tpiece;
	a->table = pa->table;
	a->slots = pa->slots;
	a->nslots = pa->nslots; /* its RLIMIT_AS is the parent's */
	a->max_chunks = pa->max_chunks;
	a->as_limit = pa->as_limit;
	a->max_ids = pa->max_ids;
	a->slot_bytes = pa->slot_bytes;
	a->ids = calloc(a->max_ids, sizeof *a->ids);
	a->free_ids = malloc(a->max_ids * sizeof *a->free_ids);
	a->nlimbo = a->limbo_cap = pa->nlimbo + pa->ngrace;
	a->limbo = a->nlimbo ? malloc(a->nlimbo * sizeof *a->limbo) : NULL;
	a->chunks = calloc(pa->nchunks ? pa->nchunks : 1, sizeof *a->chunks);
	if (!a->ids || !a->free_ids || (a->nlimbo && !a->limbo) || !a->chunks)
		return PFLOPS_ENOMEM;
	/* the same ids free; those of dropped copies wait again: the
	 * child's thread is yet to be seen outside them (trace_ids.c) */
	memcpy(a->free_ids, pa->free_ids, pa->nfree * sizeof *a->free_ids);
	a->nfree = pa->nfree;
	if (pa->nlimbo)
		memcpy(a->limbo, pa->limbo, pa->nlimbo * sizeof *a->limbo);
	if (pa->ngrace)
		memcpy(a->limbo + pa->nlimbo, pa->grace, pa->ngrace * sizeof *a->limbo);
	for (size_t i = 0; i < pa->nchunks; i++) {
		struct pft_chunk *c = malloc(sizeof *c);
		if (!c)
			return PFLOPS_ENOMEM;
		*c = *pa->chunks[i];
		c->sp = sp;
		c->mem = NULL;
		c->xb_cap = pa->chunks[i]->nxb + 1;
		c->nxb = 0;
		c->xb = malloc(c->xb_cap * sizeof *c->xb);
		c->xk = malloc(c->xb_cap * sizeof *c->xk);
		a->chunks[a->nchunks++] = c;
		if (!c->xb || !c->xk)
			return PFLOPS_ENOMEM;
	}
	/* blocks with a cache copy, by id; links are remapped by id.  The
	 * parent's records lie all over its pool (python after importing
	 * numpy: 118,000 blocks a fork), so each is asked for ahead, and the
	 * child's copies are found through xof (by id, 8 bytes each: mostly
	 * in cache) rather than through its blocks */
	xof = calloc(pa->nids ? pa->nids : 1, sizeof *xof);
	if (!xof)
		return PFLOPS_ENOMEM;
	a->nids = pa->nids;
	for (uint32_t id = 0; id < pa->nids; id++) {
		struct pft_block *b;
		if (id + 32 < pa->nids && pa->ids[id + 32])
			__builtin_prefetch(pa->ids[id + 32]);
		if (id + 16 < pa->nids && pa->ids[id + 16])
			__builtin_prefetch(pa->ids[id + 16]->x);
		if (!pa->ids[id])
			continue; /* free */
		b = pft_block_fork(sp, pa->ids[id]);
		if (!b)
			goto nomem;
		b->x = xb_fork(sp, pa->ids[id]->x, b);
		if (!b->x || pft_block_adopt(sp, b)) {
			free(b->acc); /* the rest is pool memory */
			goto nomem;
		}
		b->x->ch = a->chunks[pa->ids[id]->x->ch->index];
		a->ids[id] = b;
		xof[id] = b->x;
	}
	for (uint32_t id = 0; id < a->nids; id++) {
		struct pft_xblock *x;
		if (id + 16 < a->nids && xof[id + 16]) {
			const struct pft_xblock *y = xof[id + 16];
			for (int k = 0; k < y->nex; k++)
				if (y->ex[k].to)
					__builtin_prefetch(&y->ex[k].to->id);
			for (int i = 0; i < y->nin && i < 4; i++)
				__builtin_prefetch(&pft_in_from(y->in[i])->id);
		}
		if (id + 32 < a->nids && xof[id + 32])
			__builtin_prefetch(xof[id + 32]);
		if (!(x = xof[id]))
			continue;
		for (int k = 0; k < x->nex; k++)
			if (x->ex[k].to)
				x->ex[k].to = xof[x->ex[k].to->id];
		for (int i = 0; i < x->nin; i++)
			x->in[i] = pft_in_make(xof[pft_in_from(x->in[i])->id], pft_in_exit(x->in[i]));
	}
	/* chunk lists in address order, as in the parent */
	for (size_t i = 0; i < pa->nchunks; i++) {
		const struct pft_chunk *pc = pa->chunks[i];
		struct pft_chunk *c = a->chunks[i];
		/* (the same addresses: the same offsets) */
		memcpy(c->xk, pc->xk, pc->nxb * sizeof *c->xk);
		for (size_t j = 0; j < pc->nxb; j++) {
			if (j + 16 < pc->nxb)
				__builtin_prefetch(&pc->xb[j + 16]->id);
			c->xb[j] = xof[pc->xb[j]->id];
		}
		c->nxb = pc->nxb;
	}
	free(xof);
	return 0;
nomem:
	free(xof);
	return PFLOPS_ENOMEM;
}
