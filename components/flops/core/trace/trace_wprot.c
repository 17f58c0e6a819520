/*
 * trace_wprot.c: code on writable pages (JIT, self-modifying code).
 *
 * A block decoded on a page the program may write is only exact as long
 * as nobody writes there.  So, as dynamic translators do, the tracer
 * takes the write permission off such a page (an mprotect injected into
 * the program) when it first decodes code there, and remembers the
 * program's own protection.  A write to the page then faults; the fault
 * is the tracer's, never the program's: the page's blocks are dropped
 * (copies unlinked, int3s of the stopping path taken out), the program's
 * protection is put back, the thread goes on at the faulting instruction
 * (which now writes), and code run there afterwards is decoded afresh
 * and the page protected again.  W^X JITs (mprotect RW / RX) never fault:
 * their mprotect calls drop the blocks (trace_ptrace.c).
 *
 * A page whose writer runs on the page itself (code and data on one
 * page), or that faults more than WP_HOT times, stays writable and its
 * blocks on the stopping path (stats.wprot_hot; nocache[WRITABLE]), as
 * do stack pages.  Stepped, a hot loop there costs a stop per
 * instruction (javac: 2.4 million steps in some runs, 35 s against 5),
 * so after COOL_FIRST runs of its blocks such a page is guarded again
 * with half its faults left, and after twice as many the next time
 * (pft_wprot_cool, stats.wprot_cooled): a page written all the time pays
 * at most 32 faults per round of stepped runs.  A program mprotect,
 * munmap, mremap or mmap(MAP_FIXED) over such a page replaces the
 * tracer's protection with its own; the
 * tracer forgets the page then.  Before processes are detached the
 * program's protections are restored.
 *
 * Shared memory (a memfd, shm, a MAP_SHARED file) may hold code at one
 * address and be writable at another (W^X double mapping): when code is
 * decoded on such a page, every writable view of the same file page in
 * the process is guarded too, and a write caught there drops the blocks
 * of every executable view (alias_drop).  Such views never stay
 * writable for good.  A writable view mapped or made writable later
 * drops the code of the file's executable views (pft_wprot_shared), so
 * that it is guarded when that code is decoded again.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>

#include "trace_internal.h"

#define WP_HOT 64 /* write faults after which a page stays writable */
/* stepped runs of its blocks after which such a page is guarded again
 * (pft_wprot_cool), doubled each time, up to COOL_MAX */
#define COOL_FIRST 256
#define COOL_MAX (1u << 20)
#define PG 4096ULL

struct pft_wpage {
	uint64_t pg;		/* page address, 0: empty slot */
	uint32_t faults;	/* writes caught */
	uint32_t runs, cool_at; /* its blocks' stepped runs while hot */
	uint8_t prot;		/* the program's own protection */
	uint8_t on;		/* our protection is in place */
	uint8_t hot;		/* left writable (until cooled, below) */
	uint8_t coolable;	/* ... for its writes: guarded again after
				  * cool_at runs of its blocks */
	uint8_t dead;		/* removed (a tombstone) */
	uint8_t view;		/* a writable view of code elsewhere (no code) */
	uint64_t dev, ino, fo;	/* shared memory: its file and offset, ino 0: none */
};

static size_t wslot(uint64_t pg, size_t cap)
{
	pg = (pg >> 12) * 0x9e3779b97f4a7c15ULL;
	return (size_t)(pg >> 24) & (cap - 1);
}

static struct pft_wpage *wfind(const struct pft_space *sp, uint64_t pg)
{
	if (!sp->wp_cap)
		return NULL;
	for (size_t i = wslot(pg, sp->wp_cap); sp->wp[i].pg; i = (i + 1) & (sp->wp_cap - 1))
		if (sp->wp[i].pg == pg && !sp->wp[i].dead)
			return &sp->wp[i];
	return NULL;
}

static struct pft_wpage *wadd(struct pft_space *sp, uint64_t pg)
{
	struct pft_wpage *w = wfind(sp, pg);
	size_t i;

	if (w)
		return w;
	if (4 * (sp->wp_used + 1) > 3 * sp->wp_cap) {
		size_t nc = sp->wp_cap ? 2 * sp->wp_cap : 64, n = 0;
		struct pft_wpage *nv = calloc(nc, sizeof *nv);
		if (!nv)
			return NULL;
		for (size_t j = 0; j < sp->wp_cap; j++) {
			if (!sp->wp[j].pg || sp->wp[j].dead)
				continue;
			for (i = wslot(sp->wp[j].pg, nc); nv[i].pg; i = (i + 1) & (nc - 1))
				;
			nv[i] = sp->wp[j];
			n++;
		}
		free(sp->wp);
		sp->wp = nv;
		sp->wp_cap = nc;
		sp->wp_used = n;
	}
	for (i = wslot(pg, sp->wp_cap); sp->wp[i].pg; i = (i + 1) & (sp->wp_cap - 1))
		;
	memset(&sp->wp[i], 0, sizeof sp->wp[i]);
	sp->wp[i].pg = pg;
	sp->wp_used++;
	return &sp->wp[i];
}

void pft_wprot_free(struct pft_space *sp)
{
	free(sp->wp);
	sp->wp = NULL;
	sp->wp_cap = sp->wp_used = 0;
}

int pft_wprot_copy(struct pft_space *sp, const struct pft_space *parent)
{
	if (!parent->wp_cap)
		return 0;
	if (!(sp->wp = malloc(parent->wp_cap * sizeof *sp->wp)))
		return PFLOPS_ENOMEM;
	memcpy(sp->wp, parent->wp, parent->wp_cap * sizeof *sp->wp);
	sp->wp_cap = parent->wp_cap;
	sp->wp_used = parent->wp_used;
	sp->wp_shared = parent->wp_shared;
	return 0;
}

static int set_prot(struct pft_tracer *T, struct pft_thr *t, uint64_t pg, int prot)
{
	int64_t ret;
	int rc = pft_inject(T, t, SYS_mprotect, pg, PG, (uint64_t)prot, 0, 0, 0, &ret);

	return rc ? rc : ret ? PFLOPS_ESYS : 0;
}

static int map_prot(const struct pft_map *m)
{
	return (m->r ? PROT_READ : 0) | (m->w ? PROT_WRITE : 0) | (m->x ? PROT_EXEC : 0);
}

static const struct pft_maps *maps_now(struct pft_space *sp)
{
	if (sp->maps.stale || sp->maps.ndirty || !sp->maps.n)
		pft_maps_load(&sp->maps, sp->pid);
	return &sp->maps;
}

/* The blocks on every executable view of file bytes [flo, fhi) dropped:
 * they were, or may have been, written through another view.  Returns
 * how many. */
static size_t alias_drop(struct pft_space *sp, uint64_t dev, uint64_t ino, uint64_t flo, uint64_t fhi)
{
	const struct pft_maps *ms = maps_now(sp);
	size_t n = 0;

	for (size_t i = 0; i < ms->n; i++) {
		const struct pft_map *m = &ms->v[i];
		uint64_t lo, hi;
		if (!m->x || m->ino != ino || m->dev != dev || flo >= m->off + (m->hi - m->lo) || fhi <= m->off)
			continue;
		lo = m->lo + (flo > m->off ? flo - m->off : 0);
		hi = m->lo + (fhi - m->off < m->hi - m->lo ? fhi - m->off : m->hi - m->lo);
		n += pft_block_invalidate(sp, lo, hi);
		pft_bp_clear(sp, 0, lo, hi);
	}
	return n;
}

/* w's protection taken off: its blocks (and those of the other views of
 * its memory) dropped, the program's protection back */
static int unguard(struct pft_tracer *T, struct pft_thr *t, struct pft_wpage *w)
{
	struct pft_space *sp = t->sp;
	int rc;

	T->st.invalidated += pft_block_invalidate(sp, w->pg, w->pg + PG);
	pft_bp_clear(sp, t->tid, w->pg, w->pg + PG);
	if (w->ino)
		T->st.invalidated += alias_drop(sp, w->dev, w->ino, w->fo, w->fo + PG);
	if ((rc = set_prot(T, t, w->pg, w->prot)))
		return rc;
	w->on = 0;
	return 0;
}

/* Code on page pg of shared memory (map m): guard the writable views of
 * the same file page elsewhere in the process.  0: all guarded. */
static int guard_views(struct pft_tracer *T, struct pft_thr *t, const struct pft_map *m, uint64_t pg, int *fresh)
{
	struct pft_space *sp = t->sp;
	uint64_t dev = m->dev, ino = m->ino, fo = m->off + (pg - m->lo);
	const struct pft_maps *ms = maps_now(sp);
	int bad = 0;

	for (size_t i = 0; i < ms->n; i++) {
		const struct pft_map *v = &ms->v[i];
		struct pft_wpage *w;
		uint64_t pa;
		if (!v->w || v->ino != ino || v->dev != dev || fo < v->off || fo >= v->off + (v->hi - v->lo))
			continue;
		pa = v->lo + (fo - v->off);
		if (pa == pg)
			continue; /* the code's own page: guarded as such */
		if ((w = wfind(sp, pa)) && w->on)
			continue;
		if (!w && !(w = wadd(sp, pa)))
			return PFLOPS_ENOMEM;
		w->prot = (uint8_t)map_prot(v);
		w->view = 1;
		w->dev = dev;
		w->ino = ino;
		w->fo = fo;
		if (set_prot(T, t, pa, w->prot & ~PROT_WRITE)) {
			bad = 1;
			continue;
		}
		w->on = 1;
		T->st.wprot_views++;
		*fresh = 1;
	}
	return bad;
}

/* The page of a stack (never protected: the kernel writes signal frames
 * there, and a fault there would be one per push). */
static int stack_page(const struct pft_map *m, const struct user_regs_struct *r)
{
	return (m->path && !strncmp(m->path, "[stack", 6)) || (r && PFT_SP(r) >= m->lo && PFT_SP(r) < m->hi);
}

int pft_wprot_code(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, const struct user_regs_struct *r)
{
	struct pft_space *sp = t->sp;
	int ok = 1, fresh = 0;

	for (uint64_t pg = b->start & ~(PG - 1); pg < b->end; pg += PG) {
		struct pft_wpage *w = wfind(sp, pg);
		const struct pft_map *m = pft_maps_find(&sp->maps, t->tid, pg);
		int prot, g;

		if (m && m->s && m->ino && m->x) { /* shared memory: its other views */
			sp->wp_shared = 1;
			if ((g = guard_views(T, t, m, pg, &fresh)) < 0)
				return g;
			/* guarding injects system calls, which may reload the
			 * maps (a gadget's search): m pointed into the old list */
			m = pft_maps_find(&sp->maps, t->tid, pg);
			if (g && m && (w || (w = wadd(sp, pg)))) {
				/* a view stays writable: so does this code */
				if (!w->hot)
					T->st.wprot_hot++;
				w->prot = (uint8_t)map_prot(m);
				w->hot = 1;
			}
		}
		if (w && (w->on || w->hot)) {
			ok &= w->on;
			continue;
		}
		if (!w) {
			if (!m || !m->w)
				continue; /* not writable: nothing to guard */
			if (!m->x) {
				ok = 0; /* stale map: left as it was */
				continue;
			}
			if (!(w = wadd(sp, pg)))
				return PFLOPS_ENOMEM;
			w->prot = (uint8_t)map_prot(m);
			if (m->s && m->ino) {
				w->dev = m->dev;
				w->ino = m->ino;
				w->fo = m->off + (pg - m->lo);
			}
			if (stack_page(m, r)) {
				w->hot = 1;
				T->st.wprot_hot++;
				ok = 0;
				continue;
			}
		}
		prot = w->prot & ~PROT_WRITE;
		if (set_prot(T, t, pg, prot)) {
			/* cannot: the page stays writable, its blocks stopped */
			w->hot = 1;
			T->st.wprot_hot++;
			ok = 0;
			continue;
		}
		w->on = 1;
		T->st.wprot_pages++;
		fresh = 1;
	}
	if (fresh) {
		/* Code read while a page was writable may have been written
		 * since (another thread, between our read and the guard; or
		 * decoded ahead long before): the blocks of its pages, and
		 * of the other views of its memory, are decoded again. */
		for (uint64_t pg = b->start & ~(PG - 1); pg < b->end; pg += PG) {
			const struct pft_map *m = pft_maps_find(&sp->maps, t->tid, pg);
			T->st.invalidated += pft_block_invalidate(sp, pg, pg + PG);
			pft_bp_clear(sp, t->tid, pg, pg + PG);
			if (m && m->s && m->ino)
				T->st.invalidated += alias_drop(sp, m->dev, m->ino, m->off + (pg - m->lo),
								m->off + (pg - m->lo) + PG);
		}
		return 2 | ok;
	}
	return ok;
}

int pft_wprot_quiet(struct pft_space *sp, pid_t tid, const struct pft_block *b)
{
	for (uint64_t pg = b->start & ~(PG - 1); pg < b->end; pg += PG) {
		const struct pft_wpage *w = wfind(sp, pg);
		const struct pft_map *m = pft_maps_find(&sp->maps, tid, pg);

		if (!m || (m->s && m->ino)) /* (shared: its other views) */
			return 0;
		if (w ? !w->on || w->hot : m->w)
			return 0;
	}
	return 1;
}

/* trace_xlate.c's test for the pages of b: PFT_NC_WRITABLE while a
 * page of it is writable and not guarded (kept in b->nocache when the
 * page stays writable for good), else PFT_NC_NONE. */
int pft_wprot_check(struct pft_space *sp, pid_t tid, struct pft_block *b)
{
	for (uint64_t pg = b->start & ~(PG - 1); pg < b->end; pg += PG) {
		const struct pft_wpage *w = wfind(sp, pg);
		const struct pft_map *m;

		if (w && w->hot)
			return b->nocache = PFT_NC_WRITABLE;
		if (w && !w->on)
			return PFT_NC_WRITABLE; /* until it is guarded */
		if (w)
			continue;
		m = pft_maps_find(&sp->maps, tid, pg);
		if (!m || !m->x)
			return b->nocache = PFT_NC_WRITABLE;
		if (m->w)
			return PFT_NC_WRITABLE;
	}
	return PFT_NC_NONE;
}

/* The program gave [lo, hi) protection prot, or unmapped it (prot < 0). */
void pft_wprot_forget(struct pft_space *sp, uint64_t lo, uint64_t hi, int prot)
{
	int unmapped = prot < 0;

	if (!sp->wp_used)
		return;
	for (size_t i = 0; i < sp->wp_cap; i++) {
		struct pft_wpage *w = &sp->wp[i];
		if (!w->pg || w->dead || w->pg + PG <= lo || w->pg >= hi)
			continue;
		if (w->hot && !unmapped) {
			w->on = 0; /* stays hot; its protection is the program's */
			w->prot = (uint8_t)(prot & (PROT_READ | PROT_WRITE | PROT_EXEC));
			continue;
		}
		w->dead = 1; /* the slot keeps probing chains intact */
		if (w->ino)  /* its memory may be written unseen now */
			alias_drop(sp, w->dev, w->ino, w->fo, w->fo + PG);
	}
}

/* mremap moved [lo, lo+len) to dst: the pages we protected went along
 * with our protection; give them the program's. */
void pft_wprot_moved(struct pft_tracer *T, struct pft_thr *t, uint64_t lo, uint64_t len, uint64_t dst)
{
	struct pft_space *sp = t->sp;

	if (!sp->wp_used || dst == lo)
		return;
	for (size_t i = 0; i < sp->wp_cap; i++) {
		struct pft_wpage *w = &sp->wp[i];
		if (!w->pg || w->dead || !w->on || w->pg < lo || w->pg >= lo + len)
			continue;
		set_prot(T, t, dst + (w->pg - lo), w->prot);
	}
}

int pft_wprot_fault(struct pft_tracer *T, struct pft_thr *t, const siginfo_t *si)
{
	struct pft_space *sp = t->sp;
	uint64_t pg = (uint64_t)si->si_addr & ~(PG - 1);
	struct pft_wpage *w = sp ? wfind(sp, pg) : NULL;
	struct user_regs_struct r;
	int rc, dirty = 0;
	uint64_t orig;

	/* the program may write the page: the fault is ours, now or when
	 * it was raised (threads writing at once fault at once: the first
	 * one's stop gives the access back, the others just go on) */
	if (!w || !(w->prot & PROT_WRITE) || si->si_code != SEGV_ACCERR)
		return 0; /* the program's own fault */
	if (pft_getregs(t->tid, &r))
		return 1; /* gone */
	if (w->on) {
		w->faults++;
		T->st.wprot_faults++;
		if ((rc = unguard(T, t, w)))
			return pfc_err(T->err, PFLOPS_ESYS,
				       "cannot give the program its "
				       "write access to 0x%llx back (%d); rerun with "
				       "PFLOPS_TRACE_ENGINE=stop",
				       (unsigned long long)pg, rc);
	}
	/* where the thread is in the program: the write has not happened */
	orig = PFT_PC(&r);
	switch (t->mode) {
	case PFT_M_CACHE:
		if (sp->arena && pft_arena_chunk_of(sp->arena, PFT_PC(&r))) {
			if (pft_cache_fault_to_orig(T, t, &r))
				return pfc_err(T->err, PFLOPS_ESYS,
					       "internal: a write "
					       "fault at 0x%llx in the code cache",
					       (unsigned long long)PFT_PC(&r));
			orig = PFT_PC(&r);
			dirty = 1;
		}
		break;
	case PFT_M_STOP:
		dirty = pft_stop_to_orig(T, t, &r);
		orig = PFT_PC(&r);
		break;
	default: /* native (--region, outside it): it just goes on */
		rc = pft_restart(T, t, PTRACE_CONT, 0);
		return rc < 0 ? rc : 1;
	}
	if (!w->hot && !w->ino && (w->faults > WP_HOT || (orig & ~(PG - 1)) == pg)) {
		/* written from code on the page itself, or too often (a
		 * view of shared memory is guarded again: its code may be
		 * anywhere else) */
		w->hot = 1;
		w->coolable = 1;
		w->runs = 0;
		if (!w->cool_at)
			w->cool_at = COOL_FIRST;
		T->st.wprot_hot++;
	}
	t->blk = NULL;
	t->in_syscall = 0;
	rc = pft_go(T, t, &r, dirty);
	return rc < 0 ? rc : 1;
}

int pft_wprot_cool(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *b)
{
	struct pft_space *sp = t->sp;

	for (uint64_t pg = b->start & ~(PG - 1); pg < b->end; pg += PG) {
		struct pft_wpage *w = wfind(sp, pg);

		if (!w || !w->hot || !w->coolable || ++w->runs < w->cool_at)
			continue;
		/* guarded again when its code is decoded next */
		w->hot = w->coolable = 0;
		w->runs = 0;
		w->faults = WP_HOT / 2;
		w->cool_at = w->cool_at < COOL_MAX ? 2 * w->cool_at : COOL_MAX;
		T->st.invalidated += pft_block_invalidate(sp, pg, pg + PG);
		pft_bp_clear(sp, t->tid, pg, pg + PG);
		T->st.wprot_cooled++;
		return 1;
	}
	return 0;
}

int pft_wprot_prog_writable(const struct pft_space *sp, const struct pft_block *b)
{
	for (uint64_t pg = b->start & ~(PG - 1); pg < b->end; pg += PG) {
		const struct pft_wpage *w = wfind(sp, pg);
		if (w && (w->prot & PROT_WRITE))
			return 1;
	}
	return 0;
}

int pft_wprot_unseen(const struct pft_space *sp, uint64_t addr)
{
	const struct pft_wpage *w = wfind(sp, addr & ~(PG - 1));

	return w && !w->on && (w->prot & PROT_WRITE);
}

size_t pft_wprot_lift(struct pft_tracer *T, struct pft_thr *t, uint64_t lo, uint64_t hi)
{
	struct pft_space *sp = t->sp;
	size_t n = 0;

	for (size_t i = 0; i < sp->wp_cap; i++) {
		struct pft_wpage *w = &sp->wp[i];
		if (w->pg && !w->dead && w->on && w->pg < hi && w->pg + PG > lo && unguard(T, t, w) == 0)
			n++;
	}
	return n;
}

int pft_wprot_guarded(const struct pft_space *sp, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < sp->wp_cap; i++) {
		const struct pft_wpage *w = &sp->wp[i];
		if (w->pg && !w->dead && w->on && w->pg < hi && w->pg + PG > lo)
			return 1;
	}
	return 0;
}

void pft_wprot_shared(struct pft_tracer *T, struct pft_space *sp, uint64_t lo, uint64_t hi)
{
	const struct pft_maps *ms;

	if (!sp->wp_shared)
		return;
	sp->maps.stale = 1;
	ms = maps_now(sp);
	for (size_t i = 0; i < ms->n; i++) {
		const struct pft_map *m = &ms->v[i];
		if (!m->s || !m->ino || m->hi <= lo || m->lo >= hi)
			continue;
		uint64_t a = m->lo > lo ? m->lo : lo, b = m->hi < hi ? m->hi : hi;
		T->st.invalidated += alias_drop(sp, m->dev, m->ino, m->off + (a - m->lo), m->off + (b - m->lo));
		ms = &sp->maps; /* alias_drop may have reloaded it */
	}
}

/* Before processes are let go: the program's own protections back. */
void pft_wprot_restore(struct pft_tracer *T, struct pft_thr *t)
{
	struct pft_space *sp = t->sp;
	struct user_regs_struct r;
	int injected = 0;

	if (!sp || !sp->wp_used || pft_getregs(t->tid, &r))
		return;
	for (size_t i = 0; i < sp->wp_cap; i++) {
		struct pft_wpage *w = &sp->wp[i];
		int64_t ret = -1;
		if (!w->pg || w->dead || !w->on)
			continue;
		if (!t->detach_entry)
			set_prot(T, t, w->pg, w->prot);
		else if (pft_inject_entry(T, t, SYS_mprotect, w->pg, PG, w->prot, &ret) == 0)
			t->detach_entry = 0; /* now at that syscall's exit stop */
		injected = 1;
		w->on = 0;
	}
	/* A system call interrupted to stop the thread (a sleep) would be
	 * restarted by the kernel on its way out; the injection took that
	 * way already: restart it here, as the kernel would have. */
	if (injected && (int64_t)PFT_SYSNR(&r) >= 0 && t->detach_sig == 0 &&
	    ((int64_t)PFT_SYSRET(&r) == -512 || (int64_t)PFT_SYSRET(&r) == -513 || (int64_t)PFT_SYSRET(&r) == -514 ||
	     (int64_t)PFT_SYSRET(&r) == -516)) {
		PFT_SYSRET(&r) = (int64_t)PFT_SYSRET(&r) == -516 ? SYS_restart_syscall : PFT_SYSNR(&r);
		PFT_PC(&r) -= PFT_SYSCALL_LEN;
		ptrace(PTRACE_SETREGS, t->tid, NULL, &r);
	}
}
