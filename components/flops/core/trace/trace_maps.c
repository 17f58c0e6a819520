/*
 * trace_maps.c: a traced process's memory map (/proc/PID/maps): which
 * pages are mapped and writable, and where a free range near some code
 * is (code-cache chunks must lie within a rel32 of the code they copy,
 * so that RIP-relative operands keep their meaning).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_space.h"

void pft_maps_free(struct pft_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

int pft_maps_load(struct pft_maps *m, pid_t pid)
{
	char fn[64], line[4096 + 256];
	size_t cap = 0;
	FILE *f;

	pft_maps_free(m);
	m->stale = 0;
	m->ndirty = 0;
	m->loads++;
	snprintf(fn, sizeof fn, "/proc/%d/maps", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		return PFLOPS_ESYS;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi, off, ino = 0;
		unsigned dmaj = 0, dmin = 0;
		char perm[8];
		int at = 0;
		struct pft_map *e;

		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &lo, &hi, perm, &off, &dmaj, &dmin, &ino, &at) < 4)
			continue;
		if (m->n == cap) {
			struct pft_map *nv;
			cap = cap ? 2 * cap : 64;
			nv = realloc(m->v, cap * sizeof *nv);
			if (!nv) {
				fclose(f);
				return PFLOPS_ENOMEM;
			}
			m->v = nv;
		}
		e = &m->v[m->n++];
		e->lo = lo;
		e->hi = hi;
		e->off = off;
		e->r = perm[0] == 'r';
		e->w = perm[1] == 'w';
		e->x = perm[2] == 'x';
		e->s = perm[3] == 's';
		e->dev = (uint64_t)dmaj << 32 | dmin;
		e->ino = ino;
		e->path = NULL;
		if (at) {
			char *p = line + at;
			p[strcspn(p, "\n")] = 0;
			if (*p)
				e->path = strdup(p);
		}
	}
	fclose(f);
	return 0;
}

static const struct pft_map *lookup(const struct pft_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) { /* the kernel lists mappings in order */
		size_t mid = (lo + hi) / 2;
		if (m->v[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->v[lo].lo <= addr ? &m->v[lo] : NULL;
}

const struct pft_map *pft_maps_at(const struct pft_maps *m, uint64_t addr)
{
	return lookup(m, addr);
}

/* Most mapping calls (a library loaded: its reservation, segments,
 * RELRO's mprotect) leave most entries as they were: only those they
 * touched make a lookup reload (the text costs the kernel 100 to 200 us
 * on a python3 with numpy loaded).  Touching includes adjacency: the
 * kernel merges a new mapping into a neighbour like it. */
void pft_maps_dirty(struct pft_maps *m, uint64_t lo, uint64_t hi)
{
	if (m->stale)
		return;
	for (int i = 0; i < m->ndirty; i++) {
		uint64_t *d = m->dirty[i];
		if (lo <= d[1] && hi >= d[0]) { /* overlaps or adjoins: one range */
			d[0] = lo < d[0] ? lo : d[0];
			d[1] = hi > d[1] ? hi : d[1];
			return;
		}
	}
	if (m->ndirty == PFT_MAPS_DIRTY)
		m->stale = 1;
	else {
		m->dirty[m->ndirty][0] = lo;
		m->dirty[m->ndirty][1] = hi;
		m->ndirty++;
	}
}

static int touched(const struct pft_maps *m, const struct pft_map *e)
{
	for (int i = 0; i < m->ndirty; i++)
		if (m->dirty[i][0] <= e->hi && m->dirty[i][1] >= e->lo)
			return 1;
	return 0;
}

const struct pft_map *pft_maps_find(struct pft_maps *m, pid_t pid, uint64_t addr)
{
	const struct pft_map *e = NULL;

	/* the last one first: a block's pages, the next block's, are
	 * mostly in the same mapping (mappings do not overlap, so the one
	 * that holds addr is the answer) */
	if (!m->stale)
		e = m->last < m->n && m->v[m->last].lo <= addr && addr < m->v[m->last].hi ? &m->v[m->last]
											  : lookup(m, addr);
	if (e && touched(m, e))
		e = NULL;
	if (!e && pft_maps_load(m, pid) == 0)
		e = lookup(m, addr);
	if (e)
		m->last = (size_t)(e - m->v);
	return e;
}

/* [wlo, whi]: where the range may start.  Prefer the highest place below
 * the code (heap and brk grow upwards from executables), else the
 * highest place in reach above it. */
uint64_t pft_maps_gap_near(const struct pft_maps *m, uint64_t lo, uint64_t hi, uint64_t size, uint64_t reach)
{
	const uint64_t pg = 4096, floor = 0x1000000, top = 0x7ffffffff000ULL;
	const uint64_t guard = 1 << 20; /* keep clear of neighbours */
	uint64_t wlo = hi > reach ? hi - reach : 0;
	uint64_t whi = lo + reach > size ? lo + reach - size : 0;
	uint64_t best_below = 0, best_above = 0;

	if (wlo < floor)
		wlo = floor;
	if (whi > top - size)
		whi = top - size;
	wlo = (wlo + pg - 1) & ~(pg - 1);
	whi &= ~(pg - 1);
	if (wlo > whi)
		return 0;
	for (size_t i = 0; i <= m->n; i++) {
		/* the gap before mapping i */
		uint64_t glo = i ? m->v[i - 1].hi + guard : floor;
		uint64_t ghi = i < m->n ? m->v[i].lo : top;
		uint64_t a, b;

		if (ghi > top) /* [vsyscall] lies above user space */
			ghi = top;
		if (ghi < guard + size || glo > ghi - guard - size)
			continue;
		a = glo > wlo ? glo : wlo; /* lowest start */
		b = ghi - guard - size;	   /* highest start */
		if (b > whi)
			b = whi;
		b &= ~(pg - 1);
		if (a > b)
			continue;
		if (b + size <= lo) {
			if (b > best_below)
				best_below = b;
		} else if (a >= hi) {
			if (b > best_above)
				best_above = b;
		}
	}
	return best_below ? best_below : best_above;
}
