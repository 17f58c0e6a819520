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
 * A file truncated under a view (a read past its new end raises
 * SIGBUS) is caught by a SIGBUS handler around every read of a view,
 * copies and the decode in place alike (pft_fview_with, the one way in;
 * the handler installed while views are open, any other SIGBUS passed
 * on to the handler before it): that read is void and done as before,
 * and so are the view's later ones.  A file
 * written in place changes the view and the program's pages alike,
 * since both share the page cache, but for pages the program holds a
 * copy of: those it wrote are marked, and those where we planted an
 * int3 are a view's `poked` ones: only such a view checks its file
 * (fstat, once per event) and is read as before once the file changed.
 * The cache engine plants none in most runs: no system call then.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
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
	int poked;     /* an int3 of ours in the program's pages: the
			* file checked each event (gen) */
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

/*
 * The SIGBUS guard.  While some view is open (any space, any tracer
 * thread) our handler is installed; a SIGBUS inside the bytes a thread
 * is reading from a view (pft_fview_with) jumps back there, any other goes to the
 * handler there was before (the default action: reset and raised
 * again).  SA_NODEFER: the jump back leaves SIGBUS unblocked without
 * saving the signal mask at each copy (a system call).
 */
static __thread sigjmp_buf *volatile bus_jmp __attribute__((tls_model("initial-exec")));
static __thread const uint8_t *volatile bus_lo __attribute__((tls_model("initial-exec")));
static __thread const uint8_t *volatile bus_hi __attribute__((tls_model("initial-exec")));
static pthread_mutex_t bus_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction bus_old;
static int bus_views; /* views open in this process */

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *j = bus_jmp;
	const uint8_t *at = si->si_addr;

	if (j && at >= bus_lo && at < bus_hi) {
		bus_jmp = NULL;
		siglongjmp(*j, 1);
	}
	if ((bus_old.sa_flags & SA_SIGINFO) && bus_old.sa_sigaction)
		bus_old.sa_sigaction(sig, si, uc);
	else if (bus_old.sa_handler == SIG_IGN && si->si_code <= 0)
		return; /* sent, and ignored before us */
	else if (bus_old.sa_handler != SIG_DFL && bus_old.sa_handler != SIG_IGN)
		bus_old.sa_handler(sig);
	else {
		struct sigaction dfl;
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		sigaction(SIGBUS, &dfl, NULL);
		raise(SIGBUS); /* (a fault again on return, if it was one) */
	}
}

/* a view opened (+1) or dropped (-1); 0, or -1: no handler, no view
 * (nor where this thread blocks SIGBUS: a fault would kill) */
static int bus_views_add(int d)
{
	sigset_t cur;
	int rc = 0;

	if (d > 0 && (pthread_sigmask(SIG_BLOCK, NULL, &cur) || sigismember(&cur, SIGBUS)))
		return -1;
	pthread_mutex_lock(&bus_lock);
	if (d > 0 && bus_views == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_bus;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		rc = sigaction(SIGBUS, &sa, &bus_old) ? -1 : 0;
	} else if (d < 0 && bus_views == 1)
		sigaction(SIGBUS, &bus_old, NULL);
	if (!rc)
		bus_views += d;
	pthread_mutex_unlock(&bus_lock);
	return rc;
}

static int overlaps(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi)
{
	return alo < bhi && blo < ahi;
}

static void view_drop(struct fview *w)
{
	if (w->base) {
		munmap(w->base, w->len);
		bus_views_add(-1);
	}
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

static int view_open(struct pft_fviews *f, const struct pft_map *m, int sp_has_bps)
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
	if (bus_views_add(1)) {
		munmap(p, m->hi - m->lo);
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
	/* (evicted before: our int3s may be in the program's copies) */
	w->poked = sp_has_bps;
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
			s->view = view_open(f, m, sp->bp_n > 0);
	}
	return s;
}

/* the view's bytes of the page at pg, or NULL */
static const uint8_t *view_page(struct pft_space *sp, uint64_t pg, unsigned gen, struct fview **wp)
{
	const struct fseg *s;
	struct fview *w;
	uint64_t at;

	if (!sp->fv || !(s = seg_of(sp, pg)) || s->view < 0)
		return NULL;
	w = &sp->fv->v[s->view];
	if (w->bad || (s->partial && tainted(sp->fv, pg, pg + PG)))
		return NULL;
	if (w->poked && w->gen != gen) { /* written since it was opened? */
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
	if (w->off + at >= w->size) /* past its end when opened */
		return NULL;
	*wp = w;
	return w->base + at;
}

int pft_fview_with(struct pft_space *sp, uint64_t addr, unsigned gen, pft_fview_fn fn, void *arg)
{
	struct fview *w = NULL;
	const uint8_t *p = view_page(sp, addr & ~(PG - 1), gen, &w);
	/* the guard this one is inside of (fn may read views too) */
	sigjmp_buf j, *const ojmp = bus_jmp;
	const uint8_t *const olo = bus_lo, *const ohi = bus_hi;
	size_t n;

	if (!p)
		return 0;
	p += addr & (PG - 1);
	n = PG - (addr & (PG - 1));
	if (sigsetjmp(j, 0)) { /* truncated under us: SIGBUS */
		bus_lo = olo;
		bus_hi = ohi;
		bus_jmp = ojmp;
		w->bad = 1;
		sp->fv_bus++;
		return 0;
	}
	bus_jmp = NULL;
	bus_lo = p;
	bus_hi = p + n;
	bus_jmp = &j;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	fn(arg, p, n);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	bus_jmp = NULL;
	bus_lo = olo;
	bus_hi = ohi;
	bus_jmp = ojmp;
	w->use = ++sp->fv->tick;
	sp->fv_pages++;
	return 1;
}

struct copy {
	void *buf;
	size_t n;
};

static void copy_out(void *arg, const uint8_t *p, size_t n)
{
	const struct copy *c = arg;

	(void)n; /* c->n <= n: within the page */
	memcpy(c->buf, p, c->n);
}

size_t pft_fview_read(struct pft_space *sp, uint64_t addr, void *buf, size_t n, unsigned gen)
{
	struct copy c = { buf, n };

	return pft_fview_with(sp, addr, gen, copy_out, &c) ? n : 0;
}

void pft_fview_poked(struct pft_space *sp, uint64_t addr)
{
	const struct fseg *s;

	if (sp->fv && (s = seg_of(sp, addr & ~(PG - 1))) && s->view >= 0)
		sp->fv->v[s->view].poked = 1;
}
