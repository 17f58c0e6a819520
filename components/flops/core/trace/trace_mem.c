/*
 * trace_mem.c: a traced address space's breakpoints (the PFT_BRK_LEN
 * bytes of pft_arch_brk_bytes we wrote and the bytes they replace) and
 * reads/writes of its memory.
 * The space's life (new, fork, put): trace_space.c.
 *
 * Breakpoints stay in place for the life of the address space: removing
 * one while another thread runs towards it would let that thread pass
 * uncounted.  Reads for decoding undo them, so the decoder sees the
 * program's own bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "pft_arch.h"
#include "trace_space.h"
#include "trace_wprot.h" /* pages the program writes unseen */

static size_t hash64(uint64_t a, size_t cap)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return (size_t)a & (cap - 1);
}

static long bp_find(const struct pft_space *sp, uint64_t addr)
{
	for (size_t i = hash64(addr, sp->bp_cap);; i = (i + 1) & (sp->bp_cap - 1)) {
		if (sp->bp_addr[i] == addr)
			return (long)i;
		if (!sp->bp_addr[i])
			return -1;
	}
}

#define BL PFT_BRK_LEN
_Static_assert(8 % PFT_BRK_LEN == 0, "a breakpoint fits in one aligned 8-byte word");

/* the original bytes of breakpoint i */
static uint8_t *bp_orig(const struct pft_space *sp, size_t i)
{
	return sp->bp_orig + i * BL;
}

static int bp_put(struct pft_space *sp, uint64_t addr, const uint8_t *orig)
{
	if (2 * (sp->bp_n + 1) > sp->bp_cap) { /* grow, load <= 1/2 */
		size_t oc = sp->bp_cap, nc = oc * 2;
		uint64_t *oa = sp->bp_addr, *na = calloc(nc, sizeof *na);
		uint8_t *oo = sp->bp_orig, *no = calloc(nc, BL);
		if (!na || !no) {
			free(na);
			free(no);
			return PFLOPS_ENOMEM;
		}
		sp->bp_addr = na;
		sp->bp_orig = no;
		sp->bp_cap = nc;
		sp->bp_n = 0;
		for (size_t i = 0; i < oc; i++)
			if (oa[i])
				bp_put(sp, oa[i], oo + i * BL);
		free(oa);
		free(oo);
	}
	size_t i = hash64(addr, sp->bp_cap);
	while (sp->bp_addr[i] && sp->bp_addr[i] != addr)
		i = (i + 1) & (sp->bp_cap - 1);
	if (!sp->bp_addr[i])
		sp->bp_n++;
	sp->bp_addr[i] = addr;
	memcpy(bp_orig(sp, i), orig, BL);
	return 0;
}

int pft_bp_has(const struct pft_space *sp, uint64_t addr)
{
	return bp_find(sp, addr) >= 0;
}

/* PTRACE_POKEDATA writes read-only text (FOLL_FORCE); an aligned word
 * never straddles a page, nor does a breakpoint (at an address aligned
 * to its length) straddle the word.  old: the bytes there; over: written
 * only where the bytes are those (our breakpoint is put back to the
 * program's bytes only where the program did not write over it: a page
 * it writes unseen, trace_wprot.c) */
static int patch_brk(pid_t tid, uint64_t addr, const uint8_t *val, uint8_t *old, const uint8_t *over)
{
	uint64_t a = addr & ~7ULL;
	size_t off = (size_t)(addr - a);
	union {
		long w;
		uint8_t b[8];
	} u;

	pft_mem_fresh(); /* pages read before: not what is there now */
	errno = 0;
	u.w = ptrace(PTRACE_PEEKDATA, tid, (void *)a, NULL);
	if (errno)
		return PFLOPS_ESYS;
	if (old)
		memcpy(old, u.b + off, BL);
	if (over && memcmp(u.b + off, over, BL))
		return 0;
	memcpy(u.b + off, val, BL);
	if (ptrace(PTRACE_POKEDATA, tid, (void *)a, (void *)u.w))
		return PFLOPS_ESYS;
	return 0;
}

int pft_bp_insert(struct pft_space *sp, pid_t tid, uint64_t addr)
{
	const uint8_t *brk = pft_arch_brk_bytes();
	uint8_t orig[BL];
	int rc;

	long i = bp_find(sp, addr);

	if (i >= 0) {
		/* on a page the program writes unseen (trace_wprot.c), it
		 * may have written over our breakpoint: then plant it again */
		if (!pft_wprot_unseen(sp, addr))
			return 0;
		if ((rc = patch_brk(tid, addr, brk, orig, NULL)))
			return rc;
		if (memcmp(orig, brk, BL))
			memcpy(bp_orig(sp, (size_t)i), orig, BL);
		return 0;
	}
	rc = patch_brk(tid, addr, brk, orig, NULL);
	if (rc)
		return rc;
	pft_fview_poked(sp, addr); /* the program's page is a copy now */
	rc = bp_put(sp, addr, orig);
	if (rc)
		patch_brk(tid, addr, orig, NULL, NULL);
	return rc;
}

/* delete entry i from the open-addressing table by re-inserting the
 * rest of its cluster */
static void bp_delete(struct pft_space *sp, long i)
{
	if (i < 0)
		return;
	sp->bp_addr[i] = 0;
	sp->bp_n--;
	for (size_t j = ((size_t)i + 1) & (sp->bp_cap - 1); sp->bp_addr[j]; j = (j + 1) & (sp->bp_cap - 1)) {
		uint64_t a = sp->bp_addr[j];
		uint8_t o[BL];
		memcpy(o, bp_orig(sp, j), BL);
		sp->bp_addr[j] = 0;
		sp->bp_n--;
		bp_put(sp, a, o);
	}
}

/* Only used to let one faulting instruction run for real, and to give
 * code back to a program that makes it writable. */
int pft_bp_remove(struct pft_space *sp, pid_t tid, uint64_t addr)
{
	long i = bp_find(sp, addr);
	int rc;

	if (i < 0)
		return 0;
	rc = patch_brk(tid, addr, bp_orig(sp, (size_t)i), NULL, pft_arch_brk_bytes());
	bp_delete(sp, i);
	return rc;
}

/*
 * Pages read while one event is handled.  Decoding a block, translating
 * it and translating its neighbours ahead read the same few pages many
 * times (a process_vm_readv each was a third of the tracer's time on
 * big programs); a page is read once per event instead.  The copies are
 * forgotten at every new event (pft_mem_fresh: each wait, each byte the
 * tracer writes), so what is read is never older than the event being
 * handled: the same bytes a direct read would give, since other threads
 * may write at any time either way.
 */
#define RD_PAGES 8
#define PG 4096

struct pft_rdpage {
	uint64_t pg;
	unsigned gen;
	uint8_t bytes[PG];
};

static unsigned rd_gen = 1;

void pft_mem_fresh(void)
{
	__atomic_add_fetch(&rd_gen, 1, __ATOMIC_RELAXED);
}

unsigned pft_mem_gen(void)
{
	return __atomic_load_n(&rd_gen, __ATOMIC_RELAXED);
}

/* the whole page at pg, read at most once per event; NULL: unreadable */
static const uint8_t *rd_page(struct pft_space *sp, pid_t tid, uint64_t pg)
{
	unsigned gen = __atomic_load_n(&rd_gen, __ATOMIC_RELAXED);
	struct pft_rdpage *e;
	struct iovec l, r;

	if (!sp->rd && !(sp->rd = calloc(RD_PAGES, sizeof *sp->rd)))
		return NULL;
	for (int i = 0; i < RD_PAGES; i++)
		if (sp->rd[i].gen == gen && sp->rd[i].pg == pg)
			return sp->rd[i].bytes;
	e = &sp->rd[sp->rd_next++ % RD_PAGES];
	e->gen = 0;
	l.iov_base = e->bytes;
	l.iov_len = PG;
	r.iov_base = (void *)pg;
	r.iov_len = PG;
	if (process_vm_readv(tid, &l, 1, &r, 1, 0) != PG)
		return NULL;
	e->pg = pg;
	e->gen = gen;
	return e->bytes;
}

/* the program's bytes where our breakpoints are in buf (len bytes read
 * at addr); a breakpoint the program wrote over is forgotten: its bytes
 * count */
static void undo_brk(struct pft_space *sp, uint64_t addr, uint8_t *buf, size_t len)
{
	const uint8_t *brk = pft_arch_brk_bytes();

	for (uint64_t at = addr - addr % BL; at < addr + len; at += BL) {
		long j = bp_find(sp, at);
		size_t lo, hi;
		if (j < 0)
			continue;
		/* the part of it in buf: [lo, hi) of its bytes */
		lo = at < addr ? (size_t)(addr - at) : 0;
		hi = at + BL > addr + len ? (size_t)(addr + len - at) : BL;
		if (memcmp(buf + (at + lo - addr), brk + lo, hi - lo))
			bp_delete(sp, j);
		else
			memcpy(buf + (at + lo - addr), bp_orig(sp, (size_t)j) + lo, hi - lo);
	}
}

size_t pft_mem_read(struct pft_space *sp, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	unsigned gen = __atomic_load_n(&rd_gen, __ATOMIC_RELAXED);
	size_t done = 0, raw = 0; /* [raw, done): read from the program */

	/* page by page, so that an unmapped page only shortens the read */
	while (done < len) {
		uint64_t a = addr + done;
		size_t n = PG - (a & (PG - 1));
		const uint8_t *pg;
		struct iovec l, r;
		ssize_t got;

		if (n > len - done)
			n = len - done;
		if (pft_fview_read(sp, a, (char *)buf + done, n, gen)) {
			/* the file's bytes: no int3 of ours to undo */
			if (sp->bp_n && done > raw)
				undo_brk(sp, addr + raw, (uint8_t *)buf + raw, done - raw);
			done += n;
			raw = done;
			continue;
		}
		if ((pg = rd_page(sp, tid, a & ~(uint64_t)(PG - 1)))) {
			memcpy((char *)buf + done, pg + (a & (PG - 1)), n);
			done += n;
			continue;
		}
		l.iov_base = (char *)buf + done;
		l.iov_len = n;
		r.iov_base = (void *)a;
		r.iov_len = n;
		got = process_vm_readv(tid, &l, 1, &r, 1, 0);
		if (got <= 0)
			break;
		done += (size_t)got;
		if ((size_t)got < n)
			break;
	}
	if (sp->bp_n && done > raw)
		undo_brk(sp, addr + raw, (uint8_t *)buf + raw, done - raw);
	return done;
}

int pft_mem_view(struct pft_space *sp, uint64_t addr, pft_fview_fn fn, void *arg)
{
	return pft_fview_with(sp, addr, __atomic_load_n(&rd_gen, __ATOMIC_RELAXED), fn, arg);
}

int pft_mem_write64(pid_t tid, uint64_t addr, uint64_t val)
{
	pft_mem_fresh();
	return ptrace(PTRACE_POKEDATA, tid, (void *)addr, (void *)val) ? PFLOPS_ESYS : 0;
}

int pft_mem_read64(pid_t tid, uint64_t addr, uint64_t *val)
{
	long w;

	errno = 0;
	w = ptrace(PTRACE_PEEKDATA, tid, (void *)addr, NULL);
	if (errno)
		return PFLOPS_ESYS;
	*val = (uint64_t)w;
	return 0;
}

void pft_bp_clear(struct pft_space *sp, pid_t tid, uint64_t lo, uint64_t hi)
{
	size_t n = 0, k = 0;
	uint64_t *v;

	/* a walk of the table, not of the range: a JIT may mprotect megabytes */
	for (size_t i = 0; i < sp->bp_cap; i++)
		n += sp->bp_addr[i] >= lo && sp->bp_addr[i] < hi;
	if (!n || !(v = malloc(n * sizeof *v)))
		return;
	for (size_t i = 0; i < sp->bp_cap; i++)
		if (sp->bp_addr[i] >= lo && sp->bp_addr[i] < hi)
			v[k++] = sp->bp_addr[i];
	for (size_t i = 0; i < k; i++) {
		if (tid > 0)
			pft_bp_remove(sp, tid, v[i]); /* the program's byte back */
		else
			bp_delete(sp, bp_find(sp, v[i])); /* the bytes are gone */
	}
	free(v);
}

int pft_bp_init(struct pft_space *sp)
{
	sp->bp_cap = 1024;
	sp->bp_addr = calloc(sp->bp_cap, sizeof *sp->bp_addr);
	sp->bp_orig = calloc(sp->bp_cap, BL);
	return sp->bp_addr && sp->bp_orig ? 0 : PFLOPS_ENOMEM;
}

int pft_bp_copy(struct pft_space *sp, const struct pft_space *parent)
{
	for (size_t i = 0; i < parent->bp_cap; i++)
		if (parent->bp_addr[i] && bp_put(sp, parent->bp_addr[i], bp_orig(parent, i)))
			return PFLOPS_ENOMEM;
	return 0;
}

void pft_bp_free(struct pft_space *sp)
{
	free(sp->bp_addr);
	free(sp->bp_orig);
}
