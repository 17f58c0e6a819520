/*
 * trace_link.c: what joins the code cache's copies.
 *
 *   links    a copy's exit jumps straight to the copy of its target once
 *            that is translated (the patch: pft_arch_link, atomic for
 *            threads running the copy); undone when the target's code
 *            changes (pft_xlate_detach).
 *   lookup   indirect branches (ret, jmp/call through a register or
 *            memory) look their target up in a hash table the tracer
 *            fills at each miss (the routine: x86_64/trace_ibl.c).
 * What the copies count: trace_harvest.c; a forked child's copies:
 * trace_space.c.
 */
#include <stdlib.h>
#include <string.h>

#include "trace_cache.h"

void pft_table_insert(struct pft_arena *a, uint64_t orig, uint64_t entry)
{
	uint64_t *t = (uint64_t *)a->table_mem;
	size_t h = pft_table_hash(orig) & (PFT_TABLE_N - 1);

	/* the last slot always stays empty: the routine's probe ends */
	for (size_t i = h; i < PFT_TABLE_N + PFT_TABLE_OVER - 1; i++) {
		uint64_t o = __atomic_load_n(&t[2 * i], __ATOMIC_ACQUIRE);
		if (o == orig) {
			__atomic_store_n(&t[2 * i + 1], entry, __ATOMIC_RELEASE);
			return;
		}
		if (o == 0) {
			/* the copy's address first: a reader that sees the
			 * key sees its value */
			__atomic_store_n(&t[2 * i + 1], entry, __ATOMIC_RELEASE);
			__atomic_store_n(&t[2 * i], orig, __ATOMIC_RELEASE);
			return;
		}
	}
	/* full run: not inserted, the lookup traps, which is only slower */
}

static void table_remove(struct pft_arena *a, uint64_t entry)
{
	uint64_t *t = (uint64_t *)a->table_mem;

	for (size_t i = 0; i < PFT_TABLE_N + PFT_TABLE_OVER; i++)
		if (t[2 * i] && t[2 * i] != PFT_TOMB && t[2 * i + 1] == entry)
			__atomic_store_n(&t[2 * i], PFT_TOMB, __ATOMIC_RELEASE);
}

static uint8_t *tracer_addr(const struct pft_xblock *x, uint32_t off)
{
	return x->ch->mem + (x->addr - x->ch->addr) + off;
}

void pft_xlate_link(struct pft_xblock *from, int k, struct pft_xblock *to)
{
	struct pft_xexit *xe = &from->ex[k];
	uint64_t site = from->addr + xe->site;

	if (xe->to || from->dead || to->dead)
		return;
	if (to->nin == to->in_cap) {
		int nc = to->in_cap ? 2 * to->in_cap : 4;
		void *n = realloc(to->in, (size_t)nc * sizeof *to->in);
		if (!n)
			return;
		to->in = n;
		to->in_cap = nc;
	}
	to->in[to->nin].from = from;
	to->in[to->nin].exit = k;
	to->nin++;
	pft_arch_link(tracer_addr(from, xe->site), site, tracer_addr(from, xe->stub), from->addr + xe->stub, to->addr);
	xe->to = to;
}

static void unlink_exit(struct pft_xblock *from, int k)
{
	struct pft_xexit *xe = &from->ex[k];

	pft_arch_unlink(tracer_addr(from, xe->site), from->addr + xe->site, from->addr + xe->stub);
	xe->to = NULL;
}

void pft_xlate_detach(struct pft_space *sp, struct pft_xblock *x)
{
	if (x->dead)
		return;
	x->dead = 1;
	for (int i = 0; i < x->nin; i++)
		if (x->in[i].from->ex[x->in[i].exit].to == x)
			unlink_exit(x->in[i].from, x->in[i].exit);
	x->nin = 0;
	for (int k = 0; k < x->nex; k++)
		if (x->ex[k].to)
			unlink_exit(x, k);
	table_remove(sp->arena, x->addr);
}
