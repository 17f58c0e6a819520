/*
 * trace_pub.c: the tracer's side of pflops_pub.h.  Only the address
 * space the process had when the tracer attached is published (its
 * threads read their records); forked children and a new image after
 * exec are traced as usual but not published.
 */
#include <string.h>

#include "trace_internal.h"
#include "pflops_pub.h"

static int published(const struct pft_tracer *T, const struct pft_thr *t)
{
	return T->pub && t->sp && t->sp == T->pub_sp;
}

/* The thread's record, taken when it has none; NULL when all are taken
 * (the loss is recorded: reads are refused rather than short). */
static struct pfc_pub_thr *record(struct pft_tracer *T, pid_t tid)
{
	struct pfc_pub *p = T->pub;
	int free_at = -1;

	for (int i = 0; i < PFC_PUB_THREADS; i++) {
		if (p->thr[i].tid == tid)
			return &p->thr[i];
		if (!p->thr[i].tid && free_at < 0)
			free_at = i;
	}
	if (free_at < 0) {
		__atomic_store_n(&p->lost, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	struct pfc_pub_thr *r = &p->thr[free_at];
	memset(&r->base, 0, sizeof(r->base));
	r->slot = 0;
	__atomic_store_n(&r->tid, tid, __ATOMIC_RELEASE);
	return r;
}

static struct pfc_pub_thr *begin(struct pft_tracer *T, struct pft_thr *t)
{
	struct pfc_pub_thr *r;

	if (!published(T, t) || !(r = record(T, t->tid)))
		return NULL;
	__atomic_store_n(&r->seq, r->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return r;
}

static void end(struct pfc_pub_thr *r)
{
	__atomic_store_n(&r->seq, r->seq + 1, __ATOMIC_RELEASE);
}

void pft_pub_count(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *b, uint32_t n, int idx,
		   const uint64_t *k)
{
	struct pfc_pub_thr *r = begin(T, t);

	if (!r)
		return;
	if (idx < 0) {
		pft_block_count(&r->base, b, n, k);
	} else {
		pft_block_count_one(&r->base, b, (uint32_t)idx, k);
		if ((uint32_t)idx + 1 == b->ninsts)
			for (int x = 0; x < PFLOPS_NEXTRA; x++)
				r->base.extra[x] += b->extra[x];
	}
	end(r);
}

void pft_pub_slot(struct pft_tracer *T, struct pft_thr *t)
{
	struct pfc_pub_thr *r = begin(T, t);

	if (!r)
		return;
	r->slot = t->slot >= 0 ? pft_slot_addr(t->sp->arena, t->slot) : 0;
	end(r);
}

/* A new id is the next one; a reused one (trace_ids.c) has every
 * thread's counter at 0, so no reader uses its record until the block
 * runs: its FP entries go where the old block's were when they fit. */
void pft_pub_block(struct pft_tracer *T, const struct pft_space *sp, uint32_t id, const struct pft_block *b)
{
	struct pfc_pub *p = T->pub;
	struct pfc_pub_blk *o;
	uint32_t at;

	if (!p || sp != T->pub_sp)
		return;
	o = &p->blk[id];
	at = id < p->nblk && b->nfp <= o->nfp ? o->fp : p->nfp;
	if (id >= PFC_PUB_BLOCKS || id > p->nblk || at + b->nfp > PFC_PUB_FPS) {
		__atomic_store_n(&p->lost, 1, __ATOMIC_RELEASE);
		return;
	}
	o->fp = at;
	o->nfp = b->nfp;
	o->ninsts = b->ninsts;
	for (int x = 0; x < PFLOPS_NEXTRA; x++)
		o->extra[x] = b->extra[x];
	for (uint32_t i = 0; i < b->nfp; i++)
		p->fp[at + i] = (struct pfc_pub_fp){ b->fp[i].prec, b->fp[i].width, b->fp[i].op, b->fp[i].lanes };
	if (at == p->nfp)
		p->nfp += b->nfp;
	if (id == p->nblk)
		__atomic_store_n(&p->nblk, id + 1, __ATOMIC_RELEASE);
	else
		__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* t's counts of ids about to be reused move into its base (its
 * counters zeroed meanwhile): under its seqlock, which readers of the
 * record hold over the counters too (pub.c) */
struct pfc_pub_thr *pft_pub_hold(struct pft_tracer *T, struct pft_thr *t)
{
	return begin(T, t);
}

void pft_pub_release(struct pfc_pub_thr *r, const struct pflops_mix *add)
{
	if (!r)
		return;
	pfc_mix_add(&r->base, add);
	end(r);
}

void pft_pub_forget(struct pft_tracer *T, pid_t tid)
{
	struct pfc_pub *p = T->pub;

	if (!p)
		return;
	for (int i = 0; i < PFC_PUB_THREADS; i++)
		if (p->thr[i].tid == tid)
			__atomic_store_n(&p->thr[i].tid, 0, __ATOMIC_RELEASE);
}

_Static_assert(PFC_PUB_SLOT_CNT == PFT_SLOT_CNT, "counters of a slot");
_Static_assert(PFC_PUB_BLOCKS == PFT_MAX_IDS, "one record per block id");
