/*
 * trace_harvest.c: what the code cache counted.  Each thread's slot
 * holds one counter per block id; the mix is executions x each block's
 * decoded instructions.
 */
#include "trace_cache.h"
#include "trace_prof.h"

uint64_t pft_harvest(struct pft_arena *a, int slot, struct pflops_mix *m, int take)
{
	uint8_t *mem;
	uint64_t *cnt, runs = 0;

	if (!a || slot < 0 || !(mem = pft_slot_mem(a, slot)))
		return 0;
	cnt = (uint64_t *)(mem + PFT_SLOT_CNT);
	for (uint32_t id = 0; id < a->nids; id++) {
		uint64_t c = cnt[id];
		if (!c)
			continue;
		pft_block_count_times(m, a->ids[id], c);
		runs += c;
		if (take) {
			a->ids[id]->execs += c;
			pft_prof_times(a->ids[id], c);
			cnt[id] = 0;
		}
	}
	return runs;
}
