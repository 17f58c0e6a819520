/*
 * pub.c: a traced thread adds up its own counts from the tracer's shared
 * memory (pflops_pub.h).  Integer code only: what it runs is counted
 * too, and must add no FLOP.
 */
#include <string.h>
#include "pflops_pub.h"

/* The mix as flat arrays of counters (it is nothing but uint64_t). */
#define MIX_WORDS (sizeof(struct pflops_mix) / sizeof(uint64_t))

void pfc_mix_sub(struct pflops_mix *d, const struct pflops_mix *a, const struct pflops_mix *b)
{
	uint64_t *o = (uint64_t *)d;
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
	for (size_t i = 0; i < MIX_WORDS; i++)
		o[i] = x[i] - y[i];
}

void pfc_mix_add(struct pflops_mix *d, const struct pflops_mix *a)
{
	uint64_t *o = (uint64_t *)d;
	const uint64_t *x = (const uint64_t *)a;
	for (size_t i = 0; i < MIX_WORDS; i++)
		o[i] += x[i];
}

void pfc_mix_keep(struct pflops_mix *m, int w, int p)
{
	for (int pr = 0; pr < PFLOPS_NPREC; pr++)
		for (int wd = 0; wd < PFLOPS_NWIDTH; wd++) {
			if ((w < 0 || wd == w) && (p < 0 || pr == p))
				continue;
			memset(m->insts[pr][wd], 0, sizeof(m->insts[pr][wd]));
			memset(m->masked[pr][wd], 0, sizeof(m->masked[pr][wd]));
			memset(m->lanes_full[pr][wd], 0, sizeof(m->lanes_full[pr][wd]));
			memset(m->lanes_active[pr][wd], 0, sizeof(m->lanes_active[pr][wd]));
		}
}

static int find(const struct pfc_pub *p, pid_t tid, int *hint)
{
	if (*hint >= 0 && *hint < PFC_PUB_THREADS && __atomic_load_n(&p->thr[*hint].tid, __ATOMIC_ACQUIRE) == tid)
		return *hint;
	for (int i = 0; i < PFC_PUB_THREADS; i++)
		if (__atomic_load_n(&p->thr[i].tid, __ATOMIC_ACQUIRE) == tid)
			return *hint = i;
	return -1;
}

/* m += what the slot's counters at slot say, by the published blocks */
static void add_slot(const struct pfc_pub *p, uint64_t slot, struct pflops_mix *m)
{
	const volatile uint64_t *cnt = (const volatile uint64_t *)(uintptr_t)(slot + PFC_PUB_SLOT_CNT);
	uint32_t n = __atomic_load_n(&p->nblk, __ATOMIC_ACQUIRE);

	for (uint32_t id = 0; id < n; id++) {
		uint64_t c = cnt[id];
		if (!c)
			continue;
		const struct pfc_pub_blk *b = &p->blk[id];
		m->total_insts += c * b->ninsts;
		for (uint32_t k = 0; k < b->nfp; k++) {
			const struct pfc_pub_fp *e = &p->fp[b->fp + k];
			m->insts[e->prec][e->width][e->op] += c;
			m->lanes_full[e->prec][e->width][e->op] += c * e->lanes;
			m->lanes_active[e->prec][e->width][e->op] += c * e->lanes;
		}
		for (int x = 0; x < PFLOPS_NEXTRA; x++)
			m->extra[x] += c * b->extra[x];
	}
}

int pfc_pub_read(const struct pfc_pub *p, pid_t tid, int *hint, struct pflops_mix *m)
{
	const struct pfc_pub_thr *t;
	uint64_t slot;
	uint32_t s0;
	int i;

	memset(m, 0, sizeof(*m));
	if (p->magic != PFC_PUB_MAGIC || __atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != PFC_PUB_ATTACHED ||
	    __atomic_load_n(&p->lost, __ATOMIC_RELAXED))
		return PFLOPS_ESYS;
	if ((i = find(p, tid, hint)) < 0)
		return PFLOPS_ENOENT;
	t = &p->thr[i];
	/* the counters under the seqlock too: the tracer moves counts of
	 * block ids it reuses from them into base while the thread runs */
	do {
		while ((s0 = __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE)) & 1)
			;
		memcpy(m, &t->base, sizeof(*m));
		slot = t->slot;
		if (slot)
			add_slot(p, slot, m);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&t->seq, __ATOMIC_RELAXED) != s0);
	return 0;
}

struct pfc_pub_ovf *pfc_pub_ovf_find(struct pfc_pub *p, pid_t tid, int claim, int *hint)
{
	unsigned h = (unsigned)tid % PFC_PUB_THREADS;

	if (tid <= 0)
		return NULL;
	if (*hint >= 0 && *hint < PFC_PUB_THREADS && __atomic_load_n(&p->ovf[*hint].tid, __ATOMIC_ACQUIRE) == tid)
		return &p->ovf[*hint];
	/* open addressing from tid's bucket; records are never freed */
	for (unsigned n = 0; n < PFC_PUB_THREADS; n++) {
		unsigned i = (h + n) % PFC_PUB_THREADS;
		int32_t cur = __atomic_load_n(&p->ovf[i].tid, __ATOMIC_ACQUIRE);
		if (cur == 0) {
			int32_t zero = 0;
			if (!claim)
				return NULL;
			if (!__atomic_compare_exchange_n(&p->ovf[i].tid, &zero, (int32_t)tid, 0, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE)) {
				if (zero != tid)
					continue;
			}
			*hint = (int)i;
			return &p->ovf[i];
		}
		if (cur == tid) {
			*hint = (int)i;
			return &p->ovf[i];
		}
	}
	return NULL;
}
