/*
 * trace_ovf.c: overflow of each thread's FLOP-weighted count
 * (pflops_trace_opts.overflow, docs/trace-engine.md#overflow).
 *
 * The tracer keeps, per thread, its weighted count and what remains to
 * the next multiple of its period (ovf_rem).  Where the thread runs:
 *   stopping path  the tracer counts it; a block whose run reaches the
 *                  crossing is single-stepped, and the callback is made
 *                  at the FP instruction that crosses, before it runs;
 *   code cache     each copy with weight W does `sub $W, %gs:OVF; jbe
 *                  stub` at its counter increment.  OVF holds ovf_rem
 *                  minus a guard, the most weight any copy of the process
 *                  runs before its check (sp->ovf_maxpre, at most
 *                  PFT_OVF_GUARD), so the jump is taken at least the
 *                  guard before the crossing: the crossing is never in
 *                  what already ran.  (A thread already in the cache when
 *                  a new copy raises the guard could meet it in that
 *                  copy's first part: then seen late, stats.ovf_late.)  At the stub the thread
 *                  goes back to the original instruction (the word
 *                  restored) and on to the stopping path until it has
 *                  crossed and is more than the guard away again.
 * Blocks without FP weight are unchanged.  A thread's count restarts
 * when opts.overflow_rearm says so, at a system call.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace_internal.h"

#define OFF (1ULL << 62) /* what remains when there is no period */

int pft_ovf_on(const struct pft_tracer *T)
{
	return T->o->overflow_weight && T->o->overflow;
}

static void restart(struct pft_thr *t, uint64_t period)
{
	t->ovf_period = period;
	t->ovf_count = 0;
	t->ovf_rem = (int64_t)(period ? period : OFF);
}

void pft_ovf_thread(struct pft_tracer *T, struct pft_thr *t)
{
	restart(t, pft_ovf_on(T) ? T->o->overflow_period : 0);
	t->ovf_s = 0;
}

static uint64_t weight(const struct pft_tracer *T, const struct pft_fpent *e, unsigned active)
{
	struct pft_insn in;

	memset(&in, 0, sizeof in);
	in.fp = 1;
	in.prec = e->prec;
	in.width = e->width;
	in.op = e->op;
	in.lanes = e->lanes;
	in.mask_reg = e->mask_reg;
	in.lanes_per_bit = e->lanes_per_bit;
	in.extra = -1;
	return T->o->overflow_weight(T->o->overflow_arg, &in, active);
}

uint64_t pft_ovf_block(struct pft_tracer *T, struct pft_space *sp, struct pft_block *b)
{
	if (b->ovf_w || !b->nfp)
		return b->ovf_sum;
	b->ovf_w = malloc(b->nfp * sizeof *b->ovf_w);
	if (!b->ovf_w) /* not cacheable (NC_OVF), counted on stops */
		return b->ovf_sum = UINT64_MAX;
	sp->blk_heap = 1;
	b->ovf_sum = 0;
	for (uint32_t i = 0; i < b->nfp; i++) {
		b->ovf_w[i] = weight(T, &b->fp[i], b->fp[i].lanes);
		b->ovf_sum += b->ovf_w[i];
	}
	return b->ovf_sum;
}

/* the weight of one run of FP entry i of b under opmasks k */
static uint64_t run_weight(struct pft_tracer *T, struct pft_block *b, uint32_t i, const uint64_t *k)
{
	const struct pft_fpent *e = &b->fp[i];

	if (e->mask_reg && k)
		return weight(T, e, (unsigned)pft_fp_active(e, k));
	if (!b->ovf_w)
		return weight(T, e, e->lanes);
	return b->ovf_w[i];
}

static void call(struct pft_tracer *T, struct pft_thr *t, uint64_t addr, uint64_t w, const struct user_regs_struct *r)
{
	uint64_t c = 1 + (uint64_t)((int64_t)w - t->ovf_rem) / t->ovf_period;
	struct pft_overflow o = { .pid = t->sp ? t->sp->pid : t->tid,
				  .tid = t->tid,
				  .addr = addr,
				  .count = t->ovf_count + w,
				  .crossings = c,
				  .period = t->ovf_period,
				  .regs = r };

	t->ovf_rem += (int64_t)(c * t->ovf_period);
	t->ovf_hold = 0;
	T->st.overflows++;
	T->o->overflow(T->o->overflow_arg, &o);
}

void pft_ovf_count(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *cb, uint32_t lo, uint32_t hi,
		   const uint64_t *k)
{
	struct pft_block *b = (struct pft_block *)cb;

	if (!pft_ovf_on(T))
		return;
	for (uint32_t i = 0; i < b->nfp; i++) {
		uint64_t w;
		if (b->fp[i].idx < lo || b->fp[i].idx >= hi)
			continue;
		w = run_weight(T, b, i, k);
		if (t->ovf_period && (int64_t)w >= t->ovf_rem) {
			/* crossed where no stop was planned: say so */
			T->st.ovf_late++;
			call(T, t, b->start + b->offs[b->fp[i].idx], w, NULL);
		}
		t->ovf_count += w;
		t->ovf_rem -= (int64_t)w;
	}
}

void pft_ovf_at(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *cb, uint32_t idx,
		const struct user_regs_struct *r)
{
	struct pft_block *b = (struct pft_block *)cb;
	uint64_t k[8], w;
	const uint64_t *km = NULL;
	uint32_t i;

	if (!pft_ovf_on(T) || !t->ovf_period || !pft_counting(T, t))
		return;
	for (i = 0; i < b->nfp && b->fp[i].idx != idx; i++)
		;
	if (i == b->nfp)
		return;
	if (b->fp[i].mask_reg && pft_read_kregs(t->tid, k) == 0)
		km = k;
	w = run_weight(T, b, i, km);
	if ((int64_t)w >= t->ovf_rem)
		call(T, t, b->start + b->offs[idx], w, r);
}

void pft_ovf_trapped(struct pft_tracer *T, struct pft_thr *t)
{
	T->st.ovf_exits++;
	t->ovf_hold = 1;
	t->ovf_idle = 0;
}

int pft_ovf_near(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b)
{
	uint64_t k[8], w = 0;
	const uint64_t *km = NULL;

	if (!pft_ovf_on(T) || !t->ovf_period || !pft_counting(T, t))
		return 0;
	if (!b->nfp || !pft_ovf_block(T, t->sp, b)) {
		if (t->ovf_idle < PFT_OVF_IDLE_LONG)
			t->ovf_idle++;
		return 0;
	}
	t->ovf_idle = 0;
	if (b->has_mask) {
		if (pft_read_kregs(t->tid, k) == 0)
			km = k;
		for (uint32_t i = 0; i < b->nfp; i++)
			w += run_weight(T, b, i, km);
	} else {
		w = pft_ovf_block(T, t->sp, b);
	}
	return (int64_t)w >= t->ovf_rem;
}

int pft_ovf_cache_ok(const struct pft_tracer *T, const struct pft_thr *t)
{
	if (!pft_ovf_on(T) || !t->ovf_period || ((uint64_t)t->ovf_rem > t->sp->ovf_maxpre && !t->ovf_hold))
		return 1;
	/* near, but it left its FP code: the cache until the next copy
	 * with weight traps at its check (a crossing before that check is
	 * then seen late) */
	return t->ovf_idle >= PFT_OVF_IDLE_LONG ||
	       (t->ovf_idle >= PFT_OVF_IDLE && t->ovf_rem > 0 && (uint64_t)t->ovf_rem > t->sp->ovf_maxpre);
}

void pft_ovf_sync(struct pft_tracer *T, struct pft_thr *t, int entering)
{
	uint8_t *m;
	uint64_t s;

	if (!pft_ovf_on(T) || t->slot < 0 || !t->sp || !t->sp->arena || !(m = pft_slot_mem(t->sp->arena, t->slot)))
		return;
	if (t->mode == PFT_M_CACHE) {
		memcpy(&s, m + PFT_SLOT_OVF, 8);
		t->ovf_count += t->ovf_s - s;
		t->ovf_rem -= (int64_t)(t->ovf_s - s);
		t->ovf_s = s;
	}
	if (entering) {
		/* the guard (the most weight a copy runs before its check)
		 * keeps the crossing out of what ran before a check; 1:
		 * leave at the next weighted copy */
		uint64_t g = t->sp->ovf_maxpre;
		s = t->ovf_rem > 0 && (uint64_t)t->ovf_rem > g ? (uint64_t)t->ovf_rem - g : 1;
		memcpy(m + PFT_SLOT_OVF, &s, 8);
		t->ovf_s = s;
	}
}

int pft_ovf_rearm(struct pft_tracer *T, struct pft_thr *t)
{
	uint64_t p = 0;
	int rc;

	if (!pft_ovf_on(T) || !T->o->overflow_rearm)
		return 0;
	rc = T->o->overflow_rearm(T->o->overflow_arg, t->tid, &p);
	if (rc != 1 && rc != 2)
		return 0;
	pft_ovf_sync(T, t, 0);
	if (rc == 2 && t->sp) {
		/* new weights: every block decoded (and weighed) again; the
		 * old ones are kept for their counts */
		T->st.invalidated += pft_block_invalidate(t->sp, 0, 1ULL << 56);
		t->sp->ovf_maxpre = 0;
	}
	restart(t, p);
	t->ovf_hold = 0;
	if (t->mode != PFT_M_CACHE)
		return 0;
	/* the slot's word from the new period either way: a thread that
	 * must leave but cannot yet (its call restarts in the copy) traps
	 * at its next weighted copy */
	pft_ovf_sync(T, t, 1);
	return !pft_ovf_cache_ok(T, t);
}
