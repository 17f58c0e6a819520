/*
 * trace_harvest.c: what the code cache counted.  Each thread's slot
 * holds one counter per block id; the mix is executions x each block's
 * decoded instructions.
 */
#include "trace_cache.h"
#include "trace_prof.h"

static uint64_t one(struct pft_arena *a, uint64_t *cnt, uint32_t id, struct pflops_mix *m, int take)
{
	uint64_t c = cnt[id];

	if (!c || !a->ids[id]) /* a free id counts nothing */
		return 0;
	pft_block_count_times(m, a->ids[id], c);
	if (take) {
		a->ids[id]->execs += c;
		pft_prof_times(a->ids[id], c);
		cnt[id] = 0;
	}
	return c;
}

uint64_t pft_harvest(struct pft_arena *a, int slot, struct pflops_mix *m, int take)
{
	uint8_t *mem;
	uint64_t runs = 0;

	if (!a || slot < 0 || !(mem = pft_slot_mem(a, slot)))
		return 0;
	for (uint32_t id = 0; id < a->nids; id++)
		runs += one(a, (uint64_t *)(mem + PFT_SLOT_CNT), id, m, take);
	return runs;
}

uint64_t pft_harvest_ids(struct pft_arena *a, int slot, struct pflops_mix *m, const uint32_t *ids, uint32_t n)
{
	uint8_t *mem;
	uint64_t runs = 0;

	if (!a || slot < 0 || !(mem = pft_slot_mem(a, slot)))
		return 0;
	for (uint32_t i = 0; i < n; i++)
		runs += one(a, (uint64_t *)(mem + PFT_SLOT_CNT), ids[i], m, 1);
	return runs;
}
