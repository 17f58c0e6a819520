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
#include "trace_block.h"
#include "trace_thread.h"

#define TABLE_SLOTS (PFT_TABLE_N + PFT_TABLE_OVER)

/* orig's entry into table t (probe from its bucket; the last slot always
 * stays empty: the routine's probe ends there); 1: a new key, 0: its
 * value replaced, -1: no room */
static int put(uint64_t *t, uint64_t orig, uint64_t entry)
{
	size_t h = pft_table_bucket(orig);

	for (size_t i = h; i < TABLE_SLOTS - 1; i++) {
		uint64_t o = __atomic_load_n(&t[2 * i], __ATOMIC_ACQUIRE);
		if (o == orig) {
			__atomic_store_n(&t[2 * i + 1], entry, __ATOMIC_RELEASE);
			return 0;
		}
		if (o == 0) {
			/* the copy's address first: a reader that sees the
			 * key sees its value */
			__atomic_store_n(&t[2 * i + 1], entry, __ATOMIC_RELEASE);
			__atomic_store_n(&t[2 * i], orig, __ATOMIC_RELEASE);
			return 1;
		}
	}
	return -1;
}

/* Tombstones this many, or an insert that found no room: the table is
 * built anew (pft_table_renew); with this many entries, of those looked
 * up only */
#define TOMBS_RENEW (PFT_TABLE_N / 32)
#define LIVE_EVICT (PFT_TABLE_N - PFT_TABLE_N / 8)

static void want_renew(struct pft_arena *a, int full)
{
	if (a->tab_tombs >= TOMBS_RENEW || (full && !a->tab_stuck))
		a->tab_want = 1;
}

int pft_table_insert(struct pft_arena *a, uint64_t orig, uint64_t entry)
{
	int rc = put((uint64_t *)a->table_mem, orig, entry);

	if (rc > 0)
		a->tab_live++;
	if (rc < 0) /* not inserted: the lookup traps, which is only slower */
		want_renew(a, 1);

	return rc < 0 ? -1 : 0;
}

int pft_table_insert_looked(struct pft_arena *a, uint64_t orig, struct pft_xblock *x, uint64_t entry)
{
	x->looked = 1;
	return pft_table_insert(a, orig, entry);
}

/* Was orig's entry made at a lookup miss? */
static int looked(const struct pft_space *sp, uint64_t orig)
{
	const struct pft_block *b = pft_block_find(sp, orig);

	return b && b->x && b->x->looked;
}

/* A tombstone is never made a bucket again in place: a thread may be
 * between reading its old key and its value, and would take the new
 * value for the old key.  So the table fills with them where a JIT drops
 * code all the time (javac: 24,000 tombstones beside 42,000 entries,
 * then every insert failed and each first run of a target stopped,
 * 500,000 times, probing the whole table each time).  Here the live
 * entries are copied into the piece's other table and every thread's
 * slot is pointed at it; the old one stays as it was for a thread still
 * in a probe, and is written again only at the next renewal, when no
 * thread holds its address or a bucket's from a probe begun before the
 * switch (pft_ids_spare_free): a lookup reads the table's address from
 * the slot at its start.
 *
 * A table full of live entries (javac with C2: 66,000, most of them the
 * return sites of calls translated ahead, which may never return) keeps
 * those that a lookup missed since their copy was made; the others come
 * back at their next miss.  If those alone fill it, it is renewed again
 * only for tombstones. */
int pft_table_renew(struct pft_tracer *T, struct pft_space *sp)
{
	struct pft_arena *a = sp->arena;
	const uint64_t *old;
	uint64_t *t, addr;
	uint32_t n = 0;
	int evict;

	if (!a || !a->tab_want || !pft_ids_spare_free(T, sp))
		return 0;
	old = (const uint64_t *)a->table_mem;
	t = (uint64_t *)pft_arena_table_spare(a, &addr);
	memset(t, 0, TABLE_SLOTS * 16);
	evict = a->tab_live >= LIVE_EVICT;
	for (size_t i = 0; i < TABLE_SLOTS; i++)
		if (old[2 * i] && old[2 * i] != PFT_TOMB && (!evict || looked(sp, old[2 * i])) &&
		    put(t, old[2 * i], old[2 * i + 1]) > 0)
			n++;
	a->tab_stuck = n >= LIVE_EVICT;
	a->table = addr;
	a->table_mem = (uint8_t *)t;
	a->tab_live = n;
	a->tab_tombs = 0;
	a->tab_want = 0;
	for (int i = 0; i < a->nslots; i++) {
		uint8_t *m = a->slot_used[i] ? pft_slot_mem(a, i) : NULL;
		if (m)
			__atomic_store_n((uint64_t *)(m + PFT_SLOT_TABLE), addr, __ATOMIC_RELEASE);
	}
	T->st.table_renewed++;
	return 1;
}

/* The entry for orig, if it still goes to `entry`: every entry is keyed
 * by the start of the block it goes to, so the probe from orig's bucket
 * finds it (a walk of the whole table per dropped block took 80% of
 * hpcc's tracer time: Open MPI unloads its components). */
static void table_remove(struct pft_arena *a, uint64_t orig, uint64_t entry)
{
	uint64_t *t = (uint64_t *)a->table_mem;

	for (size_t i = pft_table_bucket(orig); i < TABLE_SLOTS; i++) {
		uint64_t o = t[2 * i];
		if (o == 0)
			return;
		if (o == orig && t[2 * i + 1] == entry) {
			__atomic_store_n(&t[2 * i], PFT_TOMB, __ATOMIC_RELEASE);
			a->tab_live--;
			a->tab_tombs++;
			want_renew(a, 0);
		}
	}
}

static uint8_t *tracer_addr(const struct pft_xblock *x, uint32_t off)
{
	return x->ch->mem + (x->addr - x->ch->addr) + off;
}

/* an exit's number in bit 0 of the copy's address (pft_in_make) */
_Static_assert(sizeof(((struct pft_xblock *)0)->ex) / sizeof(struct pft_xexit) <= 2, "one bit for an exit");
_Static_assert(_Alignof(struct pft_xblock) >= 2, "bit 0 of a copy's address free");

void pft_xlate_link(struct pft_stats *st, struct pft_xblock *from, int k, struct pft_xblock *to)
{
	struct pft_xexit *xe = &from->ex[k];
	uint64_t site = from->addr + xe->site;

	if (xe->to || from->dead || to->dead || from->masked) /* (its exits trap) */
		return;
	if (to->nin == to->in_cap) {
		/* in the space's pool, freed with it: one malloc'ed per
		 * copy was a malloc, a realloc and, when the space ended, a
		 * free per copy; a grown array leaves the old one in the
		 * pool (most copies have one link in: 1, then 2, 4 ...) */
		int nc = to->in_cap ? 2 * to->in_cap : 1;
		void *n = pft_pool_alloc(to->ch->sp, (size_t)nc * sizeof *to->in);
		if (!n)
			return;
		if (to->nin)
			memcpy(n, to->in, (size_t)to->nin * sizeof *to->in);
		to->in = n;
		to->in_cap = nc;
	}
	to->in[to->nin++] = pft_in_make(from, k);
	st->cache_falls += (uint64_t)pft_arch_link(tracer_addr(from, xe->site), site, tracer_addr(from, xe->stub),
						   from->addr + xe->stub, to->addr);
	st->cache_links++;
	xe->to = to;
}

static void unlink_exit(struct pft_xblock *from, int k)
{
	struct pft_xexit *xe = &from->ex[k];
	struct pft_xblock *to = xe->to;

	/* out of its target's list too: the links of a live copy name
	 * live copies only (a dead one's id may belong to another block:
	 * trace_ids.c, a forked child's copy maps links by id) */
	for (int i = 0; i < to->nin; i++)
		if (to->in[i] == pft_in_make(from, k)) {
			to->in[i] = to->in[--to->nin];
			break;
		}
	pft_arch_unlink(tracer_addr(from, xe->site), from->addr + xe->site, from->addr + xe->stub);
	xe->to = NULL;
}

void pft_xlate_detach(struct pft_space *sp, struct pft_xblock *x)
{
	if (x->dead)
		return;
	x->dead = 1;
	while (x->nin > 0) /* each takes itself out of x->in */
		unlink_exit(pft_in_from(x->in[x->nin - 1]), pft_in_exit(x->in[x->nin - 1]));
	for (int k = 0; k < x->nex; k++)
		if (x->ex[k].to)
			unlink_exit(x, k);
	table_remove(sp->arena, x->b->start, x->addr);
	pft_id_retire(sp->arena, x->id);
}

/* ------------------------------------------------------------------ */
/* Exits waiting for their target's copy.                              */

/* By target: an open-addressed table (keys in it, so a new copy with
 * nothing waiting costs one probe) whose entries head a list of the
 * waiting exits in one array (a free list takes the linked ones back).
 * Chained nodes malloc'ed one by one cost a cache miss per node walked:
 * 13% of a warm numpy run's tracer time went to linking. */
struct pft_pend {
	uint64_t target; /* 0: empty */
	uint32_t head;	 /* its first waiting exit in pnode (0: none) */
};

struct pft_pnode {
	struct pft_xblock *from;
	int32_t exit;
	uint32_t next; /* 0: the end (pnode[0] is never used) */
};

/* Neighbours in neighbouring slots (8 bytes of code a slot within each
 * MiB, the MiBs scattered, as the block table's): a new copy's exits
 * and the copies translated ahead after it are near each other, so
 * their probes share cache lines; a hash that scattered every target
 * cost a cache miss per probe (half of pft_link_new's own samples on a
 * cold numpy run, the table 2 MB and more). */
static size_t pend_slot(uint64_t a, size_t cap)
{
	uint64_t r = (a >> 20) * 0x9e3779b97f4a7c15ULL;

	return (size_t)((a >> 3) + (r >> 40)) & (cap - 1);
}

static int pend_grow(struct pft_arena *a)
{
	size_t nc = a->pend_cap ? 2 * a->pend_cap : 4096;
	struct pft_pend *nt = calloc(nc, sizeof *nt);

	if (!nt)
		return -1;
	for (size_t i = 0; i < a->pend_cap; i++)
		if (a->pend[i].target) {
			size_t s = pend_slot(a->pend[i].target, nc);
			while (nt[s].target)
				s = (s + 1) & (nc - 1);
			nt[s] = a->pend[i];
		}
	free(a->pend);
	a->pend = nt;
	a->pend_cap = nc;
	return 0;
}

static uint32_t pnode_new(struct pft_arena *a)
{
	uint32_t i = a->pnode_free;

	if (i) {
		a->pnode_free = a->pnode[i].next;
		return i;
	}
	if (a->pnode_n == a->pnode_cap) {
		uint32_t nc = a->pnode_cap ? 2 * a->pnode_cap : 4096;
		struct pft_pnode *n = nc > a->pnode_cap ? realloc(a->pnode, (size_t)nc * sizeof *n) : NULL;
		if (!n)
			return 0;
		a->pnode = n;
		a->pnode_cap = nc;
		if (!a->pnode_n)
			a->pnode_n = 1; /* 0 ends a list */
	}
	return a->pnode_n++;
}

static void pend_add(struct pft_arena *a, uint64_t target, struct pft_xblock *from, int k)
{
	uint32_t nd;
	size_t s;

	if (!target || (2 * (a->pend_n + 1) > a->pend_cap && pend_grow(a)))
		return; /* it stops at its first run instead */
	if (!(nd = pnode_new(a)))
		return;
	for (s = pend_slot(target, a->pend_cap); a->pend[s].target && a->pend[s].target != target;
	     s = (s + 1) & (a->pend_cap - 1))
		;
	if (!a->pend[s].target) {
		a->pend[s].target = target;
		a->pend[s].head = 0;
		a->pend_n++;
	}
	a->pnode[nd] = (struct pft_pnode){ from, k, a->pend[s].head };
	a->pend[s].head = nd;
}

/* the list of exits waiting for target, taken out of the table (0: none) */
static uint32_t pend_take(struct pft_arena *a, uint64_t target)
{
	size_t m = a->pend_cap - 1, s, j;
	uint32_t head;

	if (!a->pend_cap)
		return 0;
	for (s = pend_slot(target, a->pend_cap); a->pend[s].target != target; s = (s + 1) & m)
		if (!a->pend[s].target)
			return 0;
	head = a->pend[s].head;
	a->pend_n--;
	/* the hole closed by moving back the entries of the run after it
	 * that may sit there (no tombstones to probe past) */
	for (j = (s + 1) & m; a->pend[j].target; j = (j + 1) & m) {
		size_t h = pend_slot(a->pend[j].target, a->pend_cap);
		if (((j - h) & m) >= ((j - s) & m)) {
			a->pend[s] = a->pend[j];
			s = j;
		}
	}
	a->pend[s].target = 0;
	return head;
}

void pft_link_prefetch(const struct pft_arena *a, uint64_t start, int table)
{
	if (a->pend_cap)
		__builtin_prefetch(&a->pend[pend_slot(start, a->pend_cap)]);
	if (table)
		__builtin_prefetch((const uint64_t *)a->table_mem + 2 * pft_table_bucket(start), 1);
}

void pft_link_new(struct pft_space *sp, struct pft_xblock *x, struct pft_stats *st)
{
	struct pft_arena *a = sp->arena;

	for (uint32_t i = pend_take(a, x->b->start), n; i; i = n) {
		struct pft_pnode *p = &a->pnode[i];
		n = p->next;
		if (!p->from->dead && !p->from->ex[p->exit].to) {
			pft_xlate_link(st, p->from, p->exit, x);
		}
		p->next = a->pnode_free;
		a->pnode_free = i;
	}
	for (int k = 0; k < x->nex && !x->masked; k++) { /* (its exits trap) */
		struct pft_block *d = pft_block_find(sp, x->ex[k].target);
		if (d && d->x && !d->x->dead) {
			pft_xlate_link(st, x, k, d->x);
		} else {
			pend_add(a, x->ex[k].target, x, k);
		}
	}
}

void pft_pend_free(struct pft_arena *a)
{
	free(a->pend);
	free(a->pnode);
	a->pend = NULL;
	a->pnode = NULL;
	a->pend_cap = a->pend_n = 0;
	a->pnode_n = a->pnode_cap = a->pnode_free = 0;
}
