/*
 * trace_prof.c: counts per basic block (pflops_trace_opts.block), for
 * per-function reports.  Off unless asked: then each block gets, when
 * it is decoded, a small array of counters (instructions, complete
 * runs, and per FP instruction its executions and active lanes) and
 * the mapping it lies in.  The engine adds to these wherever it adds a
 * block's counts to the run's mix: whole and partial runs on the
 * stopping path (masked lanes from the opmask of each run), stepped
 * instructions, and the code cache's execution counters when a thread's
 * slot is harvested.  When a process's address space goes (exit, exec,
 * end of the run) its blocks are handed to the callback, each with its
 * mix rebuilt from those counters: the same arithmetic as
 * pft_block_count, so the blocks add up to the run exactly.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "trace_prof.h"
#include "trace_block.h"
#include "trace_space.h"

struct pft_prof {
	pft_block_fn fn;
	void *arg;
	char **paths; /* interned mapping names: open addressing */
	size_t cap, n;
	struct pflops_mix mix; /* one block's, cleared after each report */
};

struct pft_prof *pft_prof_new(const struct pflops_trace_opts *o)
{
	struct pft_prof *p;

	if (!o->block)
		return NULL;
	p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->fn = o->block;
	p->arg = o->block_arg;
	p->cap = 64;
	p->paths = calloc(p->cap, sizeof *p->paths);
	if (!p->paths) {
		free(p);
		return NULL;
	}
	return p;
}

void pft_prof_free(struct pft_prof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->cap; i++)
		free(p->paths[i]);
	free(p->paths);
	free(p);
}

static size_t str_hash(const char *s, size_t cap)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return (size_t)h & (cap - 1);
}

/* the prof's own copy of s (blocks point to it until the run ends) */
static const char *intern(struct pft_prof *p, const char *s)
{
	size_t i;

	if (2 * (p->n + 1) > p->cap) {
		size_t nc = 2 * p->cap;
		char **nv = calloc(nc, sizeof *nv);
		if (!nv)
			return NULL;
		for (size_t j = 0; j < p->cap; j++)
			if (p->paths[j]) {
				for (i = str_hash(p->paths[j], nc); nv[i]; i = (i + 1) & (nc - 1))
					;
				nv[i] = p->paths[j];
			}
		free(p->paths);
		p->paths = nv;
		p->cap = nc;
	}
	for (i = str_hash(s, p->cap); p->paths[i]; i = (i + 1) & (p->cap - 1))
		if (!strcmp(p->paths[i], s))
			return p->paths[i];
	if (!(p->paths[i] = strdup(s)))
		return NULL;
	p->n++;
	return p->paths[i];
}

int pft_prof_block(struct pft_space *sp, pid_t tid, struct pft_block *b)
{
	const struct pft_map *m;

	b->acc = calloc(2 + 2 * (size_t)b->nfp, sizeof *b->acc);
	if (!b->acc)
		return PFLOPS_ENOMEM;
	sp->blk_heap = 1;
	/* the thread's own view: a leader that has exited has no maps */
	m = pft_maps_find(&sp->maps, tid, b->start);
	if (!m)
		return 0; /* reported without a mapping */
	b->map_lo = m->lo;
	b->map_off = b->start - m->lo;
	if (m->path) {
		if (!(b->path = intern(sp->prof, m->path)))
			return PFLOPS_ENOMEM;
		if (m->path[0] == '/')
			b->map_off += m->off;
	}
	return 0;
}

void pft_prof_count(struct pft_block *b, uint32_t n, const uint64_t *k)
{
	uint64_t *a = b->acc;

	if (!a)
		return;
	if (n > b->ninsts)
		n = b->ninsts;
	a[0] += n;
	a[1] += n == b->ninsts;
	for (uint32_t i = 0; i < b->nfp && b->fp[i].idx < n; i++) {
		a[2 + i]++;
		a[2 + b->nfp + i] += pft_fp_active(&b->fp[i], k);
	}
}

void pft_prof_one(struct pft_block *b, uint32_t idx, const uint64_t *k)
{
	uint64_t *a = b->acc;

	if (!a)
		return;
	a[0]++;
	a[1] += idx + 1 == b->ninsts;
	for (uint32_t i = 0; i < b->nfp; i++)
		if (b->fp[i].idx == idx) {
			a[2 + i]++;
			a[2 + b->nfp + i] += pft_fp_active(&b->fp[i], k);
		}
}

void pft_prof_times(struct pft_block *b, uint64_t times)
{
	uint64_t *a = b->acc;

	if (!a)
		return;
	a[0] += times * b->ninsts;
	a[1] += times;
	for (uint32_t i = 0; i < b->nfp; i++) {
		a[2 + i] += times;
		a[2 + b->nfp + i] += times * b->fp[i].lanes;
	}
}

/* b's mix into m, whose cells b touches are 0 (block_clear) */
static void block_mix(struct pflops_mix *m, const struct pft_block *b)
{
	const uint64_t *a = b->acc;

	m->total_insts = a[0];
	for (int x = 0; x < PFLOPS_NEXTRA; x++)
		m->extra[x] = a[1] * b->extra[x];
	for (uint32_t i = 0; i < b->nfp; i++) {
		const struct pft_fpent *e = &b->fp[i];
		uint64_t n = a[2 + i];
		m->insts[e->prec][e->width][e->op] += n;
		m->lanes_full[e->prec][e->width][e->op] += n * e->lanes;
		if (e->mask_reg)
			m->masked[e->prec][e->width][e->op] += n;
		m->lanes_active[e->prec][e->width][e->op] += a[2 + b->nfp + i];
	}
}

static void block_clear(struct pflops_mix *m, const struct pft_block *b)
{
	m->total_insts = 0;
	memset(m->extra, 0, sizeof m->extra);
	for (uint32_t i = 0; i < b->nfp; i++) {
		const struct pft_fpent *e = &b->fp[i];
		m->insts[e->prec][e->width][e->op] = 0;
		m->lanes_full[e->prec][e->width][e->op] = 0;
		m->masked[e->prec][e->width][e->op] = 0;
		m->lanes_active[e->prec][e->width][e->op] = 0;
	}
}

static void report(struct pft_space *sp, const struct pft_block *b)
{
	struct pft_prof *p = sp->prof;
	struct pft_trace_block tb;

	if (!b->acc || !b->acc[0])
		return;
	block_mix(&p->mix, b);
	tb = (struct pft_trace_block){ .addr = b->start,
				       .end = b->end,
				       .pid = (int32_t)sp->pid,
				       .path = b->path,
				       .map_start = b->map_lo,
				       .offset = b->map_off,
				       .execs = b->acc[1],
				       .mix = &p->mix };
	p->fn(p->arg, &tb);
	block_clear(&p->mix, b);
}

void pft_prof_report(struct pft_space *sp)
{
	if (!sp->prof)
		return;
	for (size_t i = 0; sp->blk_tab && i < sp->blk_cap; i++)
		for (const struct pft_block *b = sp->blk_tab[i]; b; b = b->next)
			report(sp, b);
	for (size_t i = 0; i < sp->ndead; i++)
		report(sp, sp->dead[i]);
}
