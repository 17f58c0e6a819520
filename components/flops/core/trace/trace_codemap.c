/*
 * trace_codemap.c: the program's code read from the tracer's own
 * read-only mapping of the same file, instead of process_vm_readv.
 *
 * A cold run decodes some 100,000 blocks; each event's first read of a
 * page was a process_vm_readv, which also faulted the page into the
 * program's page tables (the program runs the copies, not the page).
 * A private file mapping that is not writable now and never was, nor was
 * written through /proc/PID/mem or process_vm_writev, holds the file's
 * bytes but for our int3s (which such a read does not see: nothing to
 * undo).  So the tracer maps that part of the file itself (PROT_READ,
 * MAP_PRIVATE, the path of /proc/PID/maps opened and its device and
 * inode checked) and reads there.  Everything else (anonymous memory,
 * JIT code, stacks, [vdso], a range once made writable, a file that
 * changed on disk, a failure) is read as before.
 *
 * "Never writable" is known from the start of the address space: the
 * mappings writable at exec, then the program's own mmap, mprotect,
 * mremap (all watched: trace_ptrace.c's after_syscall) and writes into
 * its memory (trace_sys.c) mark their ranges (`taint`); unmapping a range
 * or mapping it again without write clears the mark (new pages).  Not
 * for a space attached to (--pid: its past is unknown), for --region
 * (native code's system calls are not seen), nor once the program
 * opened a file named mem (its writes there by calls not watched:
 * splice, io_uring).
 *
 * A view's file is checked once per event (fstat): a file truncated
 * (the mapping past its end would raise SIGBUS in the tracer) or
 * written since it was opened (the program's pages that hold our
 * int3s were copied before) is read as before from then on.  A
 * truncation between that check and the read is not guarded.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "trace_space.h"

#define PG 4096ULL
#define FV_VIEWS 32 /* files mapped at once, per space */
#define FV_SEGS 64  /* mappings of the program known (views or not) */
#define FV_TAINT 256
#define FV_CHG 32

struct fview { /* a part of a file, mapped by us */
	uint8_t *base;
	size_t len;
	uint64_t off; /* the file offset of base */
	uint64_t dev, ino;
	int fd;
	int bad;       /* truncated or written: not used again */
	unsigned gen;  /* the event at which the file was last checked */
	uint64_t size; /* its size then */
	struct timespec mtime, ctime;
	unsigned long use; /* for eviction */
};

struct fseg { /* a mapping of the program: read through a view, or not */
	uint64_t lo, hi;
	int view;    /* index in v[], -1: read as before */
	int partial; /* some of its pages are marked: looked up page by page */
};

struct pft_fviews {
	struct fview v[FV_VIEWS];
	int nv;
	struct fseg seg[FV_SEGS];
	int nseg, seg_next, last; /* last: the segment found last */
	uint64_t (*taint)[2];	  /* sorted, disjoint [lo, hi): maybe not the file's */
	int ntaint;
	uint64_t chg[FV_CHG][2]; /* ranges changed since maps load chg_load */
	int nchg, chg_all;
	unsigned long chg_load, tick;
};

static int overlaps(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi)
{
	return alo < bhi && blo < ahi;
}

static void view_drop(struct fview *w)
{
	if (w->base)
		munmap(w->base, w->len);
	if (w->fd >= 0)
		close(w->fd);
	w->base = NULL;
	w->fd = -1;
}

void pft_fview_free(struct pft_space *sp)
{
	struct pft_fviews *f = sp->fv;

	if (!f)
		return;
	for (int i = 0; i < f->nv; i++)
		view_drop(&f->v[i]);
	free(f->taint);
	free(f);
	sp->fv = NULL;
}

void pft_fview_off(struct pft_space *sp)
{
	pft_fview_free(sp);
}

/* remove [lo, hi) from the taint list; 0 or -1 (out of room: kept) */
static int untaint(struct pft_fviews *f, uint64_t lo, uint64_t hi)
{
	int n = 0;
	uint64_t(*t)[2] = f->taint;

	for (int i = 0; i < f->ntaint; i++) {
		uint64_t a = t[i][0], b = t[i][1];
		if (!overlaps(a, b, lo, hi)) {
			t[n][0] = a, t[n][1] = b, n++;
			continue;
		}
		if (a < lo && b > hi) { /* split: one more */
			if (f->ntaint >= FV_TAINT)
				return -1;
			/* (the others lie apart from [lo, hi): n == i) */
			memmove(&t[n + 2], &t[i + 1], (size_t)(f->ntaint - i - 1) * sizeof *t);
			t[n][0] = a, t[n][1] = lo;
			t[n + 1][0] = hi, t[n + 1][1] = b;
			f->ntaint = n + 2 + (f->ntaint - i - 1);
			return 0;
		}
		if (a < lo)
			t[n][0] = a, t[n][1] = lo, n++;
		else if (b > hi)
			t[n][0] = hi, t[n][1] = b, n++;
	}
	f->ntaint = n;
	return 0;
}

/* add [lo, hi); out of room: everything is tainted (views off) */
static int taint(struct pft_space *sp, uint64_t lo, uint64_t hi)
{
	struct pft_fviews *f = sp->fv;
	uint64_t(*t)[2];
	int i = 0, j;

	if (lo >= hi)
		return 0;
	if (!f->taint && !(f->taint = malloc(FV_TAINT * sizeof *f->taint))) {
		pft_fview_off(sp);
		return -1;
	}
	t = f->taint;
	while (i < f->ntaint && t[i][1] < lo)
		i++;
	/* i: the first that ends at or after lo; merge those it touches */
	for (j = i; j < f->ntaint && t[j][0] <= hi; j++) {
		if (t[j][0] < lo)
			lo = t[j][0];
		if (t[j][1] > hi)
			hi = t[j][1];
	}
	if (j == i) { /* an insertion */
		if (f->ntaint >= FV_TAINT) {
			pft_fview_off(sp);
			return -1;
		}
		memmove(&t[i + 1], &t[i], (size_t)(f->ntaint - i) * sizeof *t);
		f->ntaint++;
	} else if (j > i + 1) {
		memmove(&t[i + 1], &t[j], (size_t)(f->ntaint - j) * sizeof *t);
		f->ntaint -= j - i - 1;
	}
	t[i][0] = lo;
	t[i][1] = hi;
	return 0;
}

static int tainted(const struct pft_fviews *f, uint64_t lo, uint64_t hi)
{
	int a = 0, b = f->ntaint;

	while (a < b) { /* the first that ends after lo */
		int mid = (a + b) / 2;
		if (f->taint[mid][1] <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < f->ntaint && f->taint[a][0] < hi;
}

/* the mappings of [lo, hi) changed: what we knew of them goes */
static void changed(struct pft_space *sp, uint64_t lo, uint64_t hi)
{
	struct pft_fviews *f = sp->fv;

	for (int i = 0; i < f->nseg; i++)
		if (overlaps(f->seg[i].lo, f->seg[i].hi, lo, hi))
			f->seg[i].hi = f->seg[i].lo; /* empty: found by none */
	if (f->chg_load != sp->maps.loads) {	     /* the maps read since show the rest */
		f->chg_load = sp->maps.loads;
		f->nchg = 0;
		f->chg_all = 0;
	}
	if (f->nchg == FV_CHG)
		f->chg_all = 1;
	else {
		f->chg[f->nchg][0] = lo;
		f->chg[f->nchg++][1] = hi;
	}
}

int pft_fview_start(struct pft_space *sp)
{
	pft_fview_free(sp);
	if (!(sp->fv = calloc(1, sizeof *sp->fv)))
		return PFLOPS_ENOMEM;
	if (pft_maps_load(&sp->maps, sp->pid)) {
		pft_fview_off(sp);
		return 0;
	}
	sp->fv->chg_load = sp->maps.loads;
	/* what is writable at exec (the kernel's data segments) */
	for (size_t i = 0; i < sp->maps.n && sp->fv; i++)
		if (sp->maps.v[i].w)
			taint(sp, sp->maps.v[i].lo, sp->maps.v[i].hi);
	return 0;
}

int pft_fview_copy(struct pft_space *sp, const struct pft_space *parent)
{
	const struct pft_fviews *p = parent->fv;

	if (!p)
		return 0;
	if (!(sp->fv = calloc(1, sizeof *sp->fv)))
		return PFLOPS_ENOMEM;
	/* its memory is a copy: the same marks; views opened again */
	if (p->ntaint) {
		if (!(sp->fv->taint = malloc(FV_TAINT * sizeof *sp->fv->taint)))
			return PFLOPS_ENOMEM;
		memcpy(sp->fv->taint, p->taint, (size_t)p->ntaint * sizeof *p->taint);
		sp->fv->ntaint = p->ntaint;
	}
	sp->fv->chg_load = sp->maps.loads; /* none loaded: found after a load */
	sp->fv->chg_all = 1;
	return 0;
}

void pft_fview_mapped(struct pft_space *sp, uint64_t lo, uint64_t hi, int prot)
{
	if (!sp->fv || lo >= hi)
		return;
	changed(sp, lo, hi);
	if (prot < 0 || !(prot & PROT_WRITE)) {
		/* unmapped, or new pages mapped without write (a mapping
		 * made read-only by mprotect keeps its pages: not here) */
		if (untaint(sp->fv, lo, hi))
			pft_fview_off(sp);
	} else
		taint(sp, lo, hi);
}

void pft_fview_written(struct pft_space *sp, uint64_t lo, uint64_t hi)
{
	if (!sp->fv || lo >= hi)
		return;
	changed(sp, lo, hi);
	taint(sp, lo & ~(PG - 1), (hi + PG - 1) & ~(PG - 1));
}

void pft_fview_protect(struct pft_space *sp, uint64_t lo, uint64_t hi, int prot)
{
	if (!sp->fv || lo >= hi)
		return;
	changed(sp, lo, hi);
	if (prot & PROT_WRITE)
		taint(sp, lo, hi);
}

void pft_fview_changed_all(struct pft_space *sp)
{
	if (!sp->fv)
		return;
	changed(sp, 0, ~0ULL);
	sp->fv->chg_all = 1;
}

/* a view of m's file part, or -1 */
static int same_file(const struct stat *st, const struct pft_map *m)
{
	return S_ISREG(st->st_mode) && (uint64_t)st->st_ino == m->ino &&
	       ((uint64_t)major(st->st_dev) << 32 | minor(st->st_dev)) == m->dev;
}

static int view_open(struct pft_fviews *f, const struct pft_map *m)
{
	struct fview *w;
	struct stat st;
	int fd, k;
	void *p;

	/* the path may name another file now (a device, a FIFO: not
	 * opened) */
	if (!m->path || m->path[0] != '/' || stat(m->path, &st) || !same_file(&st, m))
		return -1;
	fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !same_file(&st, m)) {
		close(fd);
		return -1;
	}
	p = mmap(NULL, m->hi - m->lo, PROT_READ, MAP_PRIVATE, fd, (off_t)m->off);
	if (p == MAP_FAILED) {
		close(fd);
		return -1;
	}
	if (f->nv < FV_VIEWS)
		k = f->nv++;
	else { /* the least used lately goes, and what pointed at it */
		k = 0;
		for (int i = 1; i < f->nv; i++)
			if (f->v[i].use < f->v[k].use)
				k = i;
		view_drop(&f->v[k]);
		for (int i = 0; i < f->nseg; i++)
			if (f->seg[i].view == k)
				f->seg[i].hi = f->seg[i].lo;
	}
	w = &f->v[k];
	memset(w, 0, sizeof *w);
	w->base = p;
	w->len = m->hi - m->lo;
	w->off = m->off;
	w->dev = m->dev;
	w->ino = m->ino;
	w->fd = fd;
	w->size = (uint64_t)st.st_size;
	w->mtime = st.st_mtim;
	w->ctime = st.st_ctim;
	w->gen = 0;
	return k;
}

/* the segment holding pg, made from the maps if need be; NULL: none */
static const struct fseg *seg_of(struct pft_space *sp, uint64_t pg)
{
	struct pft_fviews *f = sp->fv;
	const struct pft_map *m;
	struct fseg *s;
	int ok;

	if (f->last < f->nseg && pg >= f->seg[f->last].lo && pg < f->seg[f->last].hi)
		return &f->seg[f->last];
	for (int i = 0; i < f->nseg; i++)
		if (pg >= f->seg[i].lo && pg < f->seg[i].hi)
			return &f->seg[f->last = i];
	/* the maps as last read, where nothing changed since (no read of
	 * the maps for this: the engine reads them often enough) */
	if (!sp->maps.n || !(m = pft_maps_at(&sp->maps, pg)))
		return NULL;
	if (f->chg_load == sp->maps.loads) {
		if (f->chg_all)
			return NULL;
		for (int i = 0; i < f->nchg; i++)
			if (overlaps(f->chg[i][0], f->chg[i][1], m->lo, m->hi))
				return NULL;
	}
	ok = m->r && m->x && !m->w && !m->s && m->ino;
	s = NULL;
	for (int i = 0; i < f->nseg && !s; i++)
		if (f->seg[i].hi == f->seg[i].lo) /* emptied */
			s = &f->seg[i];
	if (!s)
		s = f->nseg < FV_SEGS ? &f->seg[f->nseg++] : &f->seg[f->seg_next++ % FV_SEGS];
	f->last = (int)(s - f->seg);
	s->lo = m->lo;
	s->hi = m->hi;
	s->view = -1;
	s->partial = ok && tainted(f, m->lo, m->hi);
	if (ok) {
		/* the same part of the same file mapped again: its view */
		for (int i = 0; i < f->nv && s->view < 0; i++)
			if (f->v[i].base && f->v[i].len == m->hi - m->lo && f->v[i].off == m->off &&
			    f->v[i].ino == m->ino && f->v[i].dev == m->dev)
				s->view = i;
		if (s->view < 0)
			s->view = view_open(f, m);
	}
	return s;
}

const uint8_t *pft_fview_page(struct pft_space *sp, uint64_t pg, unsigned gen)
{
	const struct fseg *s;
	struct fview *w;
	uint64_t at;

	if (!sp->fv || !(s = seg_of(sp, pg)) || s->view < 0)
		return NULL;
	w = &sp->fv->v[s->view];
	if (w->bad || (s->partial && tainted(sp->fv, pg, pg + PG)))
		return NULL;
	if (w->gen != gen) { /* the file as it is now */
		struct stat st;
		if (fstat(w->fd, &st) || st.st_mtim.tv_sec != w->mtime.tv_sec ||
		    st.st_mtim.tv_nsec != w->mtime.tv_nsec || st.st_ctim.tv_sec != w->ctime.tv_sec ||
		    st.st_ctim.tv_nsec != w->ctime.tv_nsec || (uint64_t)st.st_size < w->size) {
			w->bad = 1;
			return NULL;
		}
		w->gen = gen;
	}
	at = pg - s->lo;
	if (w->off + at >= w->size) /* past its end: SIGBUS */
		return NULL;
	w->use = ++sp->fv->tick;
	sp->fv_pages++;
	return w->base + at;
}
