/*
 * trace_forkwant.c: blocks a forked child translated, given to its
 * parent for the next fork.
 *
 * A shell forks the same way again and again ($(...), pipelines): each
 * child inherits its parent's code cache (pft_space_fork) but runs code
 * the parent never does (fork's child side, the subshell, exit), so each
 * translated the same 1,300 blocks of bash anew (about 3 ms of a 14 ms
 * fork).  A child notes the blocks it translates on file-backed code in
 * its parent's inbox; at the parent's next fork they are translated in
 * the parent (from its own memory, where its mapping is the same file at
 * the same offset), so that child and the next ones inherit them.
 */
#include <stdlib.h>

#include "trace_internal.h"

#define WANT_MAX 65536 /* entries an inbox holds; more are dropped */

struct pft_want {
	int refs;
	int gone; /* its space was let go */
	size_t n, cap;
	struct want_ent {
		uint64_t addr, dev, ino, foff;
	} * v;
};

static void want_put(struct pft_want *w)
{
	if (w && --w->refs == 0) {
		free(w->v);
		free(w);
	}
}

void pft_want_fork(struct pft_space *child, struct pft_space *parent)
{
	if (!parent->want_in && (parent->want_in = calloc(1, sizeof *parent->want_in)))
		parent->want_in->refs = 1;
	if ((child->want_out = parent->want_in))
		child->want_out->refs++;
}

void pft_want_note(struct pft_space *sp, pid_t tid, uint64_t addr)
{
	struct pft_want *w = sp->want_out;
	const struct pft_map *m;

	if (!w || w->gone || w->n >= WANT_MAX)
		return;
	m = pft_maps_find(&sp->maps, tid, addr);
	if (!m || !m->x || m->w || !m->ino || m->s)
		return;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 1024;
		struct want_ent *v = realloc(w->v, cap * sizeof *v);
		if (!v)
			return;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n++] = (struct want_ent){ addr, m->dev, m->ino, m->off + (addr - m->lo) };
}

void pft_want_take(struct pft_tracer *T, struct pft_thr *t)
{
	struct pft_space *sp = t->sp;
	struct pft_want *w = sp->want_in;
	const uint32_t room = sp->arena ? sp->arena->max_ids - sp->arena->max_ids / 8 : 0;
	int was = T->noinject;

	if (!w || !w->n || !sp->arena || sp->region)
		return;
	/* the maps read once: a child's library the parent lacks would
	 * reload them at every entry (pft_maps_find) */
	if ((sp->maps.stale || sp->maps.ndirty) && pft_maps_load(&sp->maps, t->tid)) {
		w->n = 0;
		return;
	}
	/* (no system call injected: the thread is at its fork event; a
	 * block needing a new chunk waits for a child that runs it) */
	T->noinject = 1;
	for (size_t i = 0; i < w->n && pft_ids_used(sp->arena) < room; i++) {
		const struct want_ent *e = &w->v[i];
		const struct pft_map *m = pft_maps_at(&sp->maps, e->addr);
		struct pft_block *d;

		/* the same file's code at the same place, or nothing */
		if (!m || !m->x || m->w || m->s || m->dev != e->dev || m->ino != e->ino ||
		    m->off + (e->addr - m->lo) != e->foff)
			continue;
		d = pft_block_get(sp, t->tid, e->addr, 0, &T->st.blocks_decoded);
		if (!d || d->x || d->nocache)
			continue;
		if (pft_xlate(T, t, d)) {
			T->st.fork_given++;
			/* reached by a return or an indirect jump, maybe */
			if (!d->x->dead)
				pft_table_insert(sp->arena, e->addr, d->x->addr);
		} else {
			d->nocache = 0; /* tried again where it runs */
		}
	}
	T->noinject = was;
	w->n = 0;
}

void pft_want_free(struct pft_space *sp)
{
	if (sp->want_in)
		sp->want_in->gone = 1;
	want_put(sp->want_in);
	want_put(sp->want_out);
	sp->want_in = sp->want_out = NULL;
}
