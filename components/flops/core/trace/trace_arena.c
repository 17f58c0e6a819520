/*
 * trace_arena.c: the code cache's memory inside one traced process.
 *
 * Each piece is a memfd that the traced process creates and maps (with
 * injected system calls) and the tracer maps too, through
 * /proc/PID/fd: the tracer writes code and reads counters in its own
 * mapping, without a system call per access, and the counts survive the
 * process (an exec, a crash, SIGKILL).  The process keeps no descriptor.
 *
 *   table   the indirect-branch lookup table (read-only in the tracee),
 *           the map of system calls that trap (trace_sys.c), then room
 *           for the table built anew (trace_link.c)
 *   slots   one slot per thread, at the thread's %gs base: scratch words
 *           for the cache's code and one 64-bit counter per block id
 *   chunks  translated code, each within +-2 GiB of the code it copies
 *           (read+exec in the tracee), starting with a `syscall` for
 *           injection and the lookup routine; the copies grow up from
 *           there, their cold parts (exit stubs) down from the end
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "trace_cache.h"
#include "trace_thread.h"
#include "trace_engine.h"
#include "trace_count.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1U
#endif

#define CHUNK_SIZE (4u << 20)
/* a copy's points hold offsets in 24 bits (struct pft_xpoint) */
_Static_assert(CHUNK_SIZE <= (1u << 24), "a chunk wider than pft_xpoint's offsets");
#define MAX_CHUNKS 64
#define REACH ((uint64_t)1 << 31)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#define TABLE_BYTES (((PFT_TABLE_N + PFT_TABLE_OVER) * 16 + 4095) & ~4095)
#define TABLE_PIECE (2 * TABLE_BYTES + PFT_SYSMAP_BYTES)
#define TABLE_B (TABLE_BYTES + PFT_SYSMAP_BYTES) /* offset of the second */
/* Under an RLIMIT_AS (ulimit -v) the cache takes at most this share of
 * it: fewer slots (threads at once) and chunks (code); the rest of the
 * limit is the program's.  Below one slot and one chunk, the process is
 * traced by the stopping engine. */
#define AS_SHARE 8

uint64_t pft_find_gadget(struct pft_space *sp, pid_t tid)
{
	static const size_t max = 1 << 20;
	uint8_t *buf = malloc(max);
	uint64_t found = 0;

	if (!buf || pft_maps_load(&sp->maps, tid))
		goto out;
	/* the vDSO first (always there, never written), then the code */
	for (int pass = 0; pass < 2 && !found; pass++)
		for (size_t i = 0; i < sp->maps.n && !found; i++) {
			const struct pft_map *m = &sp->maps.v[i];
			int vdso = m->path && !strcmp(m->path, "[vdso]");
			if (!m->x || !m->r || m->w || vdso != !pass)
				continue;
			size_t n = m->hi - m->lo < max ? m->hi - m->lo : max;
			n = pft_mem_read(sp, tid, m->lo, buf, n);
			for (size_t j = 0; j + 1 < n; j++)
				if (pft_arch_is_syscall(buf + j, n - j)) {
					found = m->lo + j;
					break;
				}
		}
out:
	free(buf);
	return found;
}

/* A zero-terminated name for memfd_create in the tracee: written below
 * its stack's red zone, or any zero byte near the gadget. */
static uint64_t name_in_tracee(struct pft_thr *t)
{
	static const char name[] = "pflops-cache";
	struct user_regs_struct r;
	struct iovec l, rv;
	uint8_t z[64];

	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) == 0) {
		uint64_t at = (PFT_SP(&r) - 4096) & ~15ULL;
		l.iov_base = (void *)name;
		l.iov_len = sizeof name;
		rv.iov_base = (void *)at;
		rv.iov_len = sizeof name;
		pft_mem_fresh();
		if (process_vm_writev(t->tid, &l, 1, &rv, 1, 0) == (ssize_t)sizeof name)
			return at;
	}
	size_t n = pft_mem_read(t->sp, t->tid, t->sp->gadget, z, sizeof z);
	for (size_t i = 0; i < n; i++)
		if (!z[i])
			return t->sp->gadget + i;
	return 0;
}

struct piece {
	uint64_t addr;
	uint8_t *mem; /* tracer mapping (NULL when not mapped) */
	int fd;	      /* tracer descriptor (-1 when closed) */
};

/* Create a memfd of `size` bytes in t's process, map it there at `hint`
 * (exactly, when fixed: 1 = must not replace, 2 = replaces) with prot,
 * and in the tracer when map_here, filled from init (if not NULL: its
 * first init_hot and last init_cold bytes, the rest zeros) before the
 * process sees it. */
static int piece_new(struct pft_tracer *T, struct pft_thr *t, size_t size, int prot, uint64_t hint, int fixed,
		     int map_here, int keep_fd, const uint8_t *init, size_t init_hot, size_t init_cold, struct piece *p)
{
	int64_t fd = -1, addr = -1, ign;
	char path[64];
	uint64_t name = name_in_tracee(t);
	int rc, flags = MAP_SHARED;

	p->addr = 0;
	p->mem = NULL;
	p->fd = -1;
	if (!name)
		return PFLOPS_EUNAVAIL;
	rc = pft_inject(T, t, SYS_memfd_create, name, MFD_CLOEXEC, 0, 0, 0, 0, &fd);
	if (rc)
		return rc;
	if (fd < 0)
		return PFLOPS_ESYS;
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)t->tid, (int)fd);
	p->fd = open(path, O_RDWR | O_CLOEXEC);
	rc = PFLOPS_ESYS;
	if (p->fd < 0 || ftruncate(p->fd, (off_t)size))
		goto out;
	if (map_here) {
		p->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
		if (p->mem == MAP_FAILED) {
			p->mem = NULL;
			goto out;
		}
		/* (the pages to be written made present first: a fault
		 * each was most of a fork's copy, trapped in this VM) */
		if (init && init_hot + init_cold >= size) { /* the gadget may be in what this replaces */
			madvise(p->mem, size, MADV_POPULATE_WRITE);
			memcpy(p->mem, init, size);
		} else if (init) {
			madvise(p->mem, init_hot, MADV_POPULATE_WRITE);
			madvise(p->mem + size - init_cold, init_cold, MADV_POPULATE_WRITE);
			memcpy(p->mem, init, init_hot);
			memcpy(p->mem + size - init_cold, init + size - init_cold, init_cold);
		}
	}
	if (fixed == 1)
		flags |= MAP_FIXED_NOREPLACE;
	else if (fixed == 2)
		flags |= MAP_FIXED;
	rc = pft_inject(T, t, SYS_mmap, hint, size, (uint64_t)prot, (uint64_t)flags, (uint64_t)fd, 0, &addr);
	if (rc)
		goto out;
	if (addr < 0 && addr > -4096) {
		rc = PFLOPS_ESYS;
		goto out;
	}
	if (fixed && (uint64_t)addr != hint) {
		pft_inject(T, t, SYS_munmap, (uint64_t)addr, size, 0, 0, 0, 0, &ign);
		rc = PFLOPS_ESYS;
		goto out;
	}
	p->addr = (uint64_t)addr;
	rc = 0;
out:
	pft_inject(T, t, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0, &ign);
	if (rc || !keep_fd) {
		if (p->fd >= 0)
			close(p->fd);
		p->fd = -1;
	}
	if (rc && p->mem) {
		munmap(p->mem, size);
		p->mem = NULL;
	}
	t->sp->maps.stale = 1;
	return rc;
}

static int cpu_ok(void)
{
	unsigned a, b, c, d;

	/* the lookup routine hashes with crc32 (SSE4.2) */
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	return (c >> 20) & 1;
}

uint64_t pft_arena_as_bytes(const struct pft_arena *a)
{
	return TABLE_PIECE + (uint64_t)a->nslots * a->slot_bytes + (uint64_t)a->nchunks * CHUNK_SIZE;
}

uint64_t pft_arena_copy_bytes(const struct pft_arena *a)
{
	return (uint64_t)a->max_chunks * CHUNK_SIZE;
}

uint64_t pft_arena_as_need(uint32_t ids)
{
	return TABLE_PIECE + (uint64_t)PFT_MAX_SLOTS * PFT_SLOT_BYTES(ids) + CHUNK_SIZE;
}

/* Slots, chunks and block ids for a process whose RLIMIT_AS is lim (0:
 * none); -1 when its share of the limit holds less than one of each.
 * Without a limit a slot holds PFT_MAX_IDS counters (4 MiB, 1 GiB of
 * address space for the 256, untouched pages taking no memory): numba's
 * first compile (LLVM) translates 400,000 blocks.  Not more: with 8 MiB
 * slots the 2 GiB taken next to the libraries left javac's C2 no room
 * for new chunks within a rel32 of its code (19,000 blocks on the
 * stopping path).  Under a limit, PFT_AS_IDS (2 MiB a slot): twice the
 * threads in its share. */
static int size_to_limit(uint64_t lim, int *nslots, size_t *max_chunks, uint32_t *ids)
{
	uint64_t budget = lim / AS_SHARE, s, c, sb;

	*nslots = PFT_MAX_SLOTS;
	*max_chunks = MAX_CHUNKS;
	if (!lim)
		return 0;
	*ids = *ids < PFT_AS_IDS ? *ids : PFT_AS_IDS;
	sb = PFT_SLOT_BYTES(*ids);
	if (budget < TABLE_PIECE + sb + CHUNK_SIZE)
		return -1;
	budget -= TABLE_PIECE;
	/* half for slots, the rest for code */
	s = budget / 2 / sb;
	s = s < 1 ? 1 : s > PFT_MAX_SLOTS ? PFT_MAX_SLOTS : s;
	c = (budget - s * sb) / CHUNK_SIZE;
	if (!c)
		return -1;
	*nslots = (int)s;
	*max_chunks = c > MAX_CHUNKS ? MAX_CHUNKS : (size_t)c;
	return 0;
}

static void count_as(struct pft_tracer *T, const struct pft_arena *a)
{
	uint64_t n = pft_arena_as_bytes(a);

	if (n > T->st.cache_as_bytes)
		T->st.cache_as_bytes = n;
	if (a->as_limit && n > T->st.cache_as_limited)
		T->st.cache_as_limited = n;
}

/* The process's RLIMIT_AS (read now) lowered below what its cache was
 * sized for (setrlimit, prlimit: a shell's `ulimit -v`): the cache was
 * sized before, without a limit (1 GiB of slots), and over the limit the
 * process could map nothing more, nor could its forks be given their own
 * cache.  The slots past the last one a thread holds are unmapped, down
 * to what its share of the limit holds, and fewer chunks are allowed
 * from now on (those made stay).  1: slots unmapped; 0: nothing to do;
 * or the injected munmap's error (nothing recorded: tried again at the
 * next call). */
int pft_arena_fit(struct pft_tracer *T, struct pft_thr *t)
{
	struct pft_arena *a = t->sp->arena;
	struct rlimit rl;
	uint64_t lim, budget, keep_b;
	int64_t ret;
	int keep = 1, fit = 0, rc;
	size_t chunks;

	if (!a || prlimit(t->tid, RLIMIT_AS, NULL, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	lim = rl.rlim_cur;
	if (!lim || (a->as_limit && lim >= a->as_limit))
		return 0;
	budget = lim / AS_SHARE;
	for (int i = 0; i < a->nslots; i++)
		if (a->slot_used[i])
			keep = i + 1;
	/* as pft_arena_setup sizes it: half the share for slots, the rest
	 * for code, at the slot size the ids already fixed */
	keep_b = budget > TABLE_PIECE ? (budget - TABLE_PIECE) / 2 / a->slot_bytes : 0;
	if ((uint64_t)keep < keep_b)
		keep = keep_b < (uint64_t)a->nslots ? (int)keep_b : a->nslots;
	chunks = budget > TABLE_PIECE + (uint64_t)keep * a->slot_bytes
			 ? (size_t)((budget - TABLE_PIECE - (uint64_t)keep * a->slot_bytes) / CHUNK_SIZE)
			 : 0;
	if (chunks < a->nchunks)
		chunks = a->nchunks;
	if (keep < a->nslots) {
		rc = pft_inject(T, t, SYS_munmap, pft_slot_addr(a, keep), (uint64_t)(a->nslots - keep) * a->slot_bytes,
				0, 0, 0, 0, &ret);
		if (rc)
			return rc;
		if (ret < 0)
			return PFLOPS_ESYS;
		for (int i = keep; i < a->nslots; i++)
			if (a->slot_mem[i]) {
				munmap(a->slot_mem[i], a->slot_bytes);
				a->slot_mem[i] = NULL;
			}
		a->nslots = keep;
		T->st.cache_as_fit++;
		fit = 1;
	}
	if (chunks < a->max_chunks)
		a->max_chunks = chunks ? chunks : 1;
	a->as_limit = lim;
	if (!T->st.as_limit || lim < T->st.as_limit)
		T->st.as_limit = lim;
	count_as(T, a);
	return fit;
}

int pft_arena_setup(struct pft_tracer *T, struct pft_thr *t)
{
	struct rlimit rl;
	uint64_t lim = 0;
	int nslots;
	size_t max_chunks;
	uint32_t ids = T->max_ids ? T->max_ids : PFT_MAX_IDS;
	struct pft_space *sp = t->sp;
	struct pft_arena *a;
	struct piece tab, sl;
	int rc;

	if (sp->arena)
		return 0;
	if (sp->arena_failed)
		return PFLOPS_EUNAVAIL;
	if (!cpu_ok()) {
		sp->arena_failed = 1;
		return PFLOPS_EUNAVAIL;
	}
	/* the limit the process has now (inherited, or its own setrlimit
	 * before an exec) */
	if (!prlimit(sp->pid, RLIMIT_AS, NULL, &rl) && rl.rlim_cur != RLIM_INFINITY) {
		lim = rl.rlim_cur;
		if (!T->st.as_limit || lim < T->st.as_limit)
			T->st.as_limit = lim;
	}
	if (size_to_limit(lim, &nslots, &max_chunks, &ids)) {
		sp->arena_failed = 1;
		T->st.cache_setup_failed++;
		T->st.as_too_small++;
		return PFLOPS_EUNAVAIL;
	}
	a = calloc(1, sizeof *a);
	if (!a)
		return PFLOPS_ENOMEM;
	a->slots_fd = -1;
	a->nslots = nslots;
	a->max_chunks = max_chunks;
	a->as_limit = lim;
	a->region = T->o->region != NULL;
	a->max_ids = ids;
	a->slot_bytes = PFT_SLOT_BYTES(ids);
	rc = piece_new(T, t, TABLE_PIECE, PROT_READ, 0, 0, 1, 0, NULL, 0, 0, &tab);
	if (rc)
		goto fail;
	a->tpiece = a->table = tab.addr;
	a->tpiece_mem = a->table_mem = tab.mem;
	/* the inserts, hashed, soon touch every page of the table: present
	 * at once, not a trap each (a third of the tracer's page faults
	 * tracing /bin/true) */
	madvise(tab.mem, TABLE_BYTES, MADV_POPULATE_WRITE);
	pft_sys_map_fill(T, sp, tab.mem + TABLE_BYTES);
	rc = piece_new(T, t, (size_t)a->nslots * a->slot_bytes, PROT_READ | PROT_WRITE, 0, 0, 0, 1, NULL, 0, 0, &sl);
	if (rc)
		goto fail;
	a->slots = sl.addr;
	a->slots_fd = sl.fd;
	a->freq = pft_freq_space_ok(T, sp) && pft_freq_bell(a) == 0;
	a->ids = calloc(a->max_ids, sizeof *a->ids);
	a->free_ids = malloc(a->max_ids * sizeof *a->free_ids);
	if (!a->ids || !a->free_ids) {
		rc = PFLOPS_ENOMEM;
		goto fail;
	}
	sp->arena = a;
	count_as(T, a);
	return 0;
fail:
	pft_arena_free(a);
	sp->arena_failed = 1;
	T->st.cache_setup_failed++;
	return rc;
}

/* A page of a chunk faulted in by the tracer's first write, one trap per
 * 4 KiB of copies, was 4% of a warm numpy run's tracer: the pages are
 * made present READY_STEP ahead of the copies instead (where the kernel
 * has no MADV_POPULATE_WRITE, the writes fault them as before). */
#define READY_STEP ((size_t)64 << 10)

void pft_chunk_ready(struct pft_chunk *ch, size_t hot, size_t cold)
{
	size_t up = ch->size - cold, to;

	if (hot > ch->ready_hot) {
		to = ((hot + 4095) & ~(size_t)4095) + READY_STEP;
		to = to < ch->size ? to : ch->size;
		madvise(ch->mem + ch->ready_hot, to - ch->ready_hot, MADV_POPULATE_WRITE);
		ch->ready_hot = to;
	}
	if (up > ch->ready_cold) {
		to = ((up + 4095) & ~(size_t)4095) + READY_STEP;
		to = to < ch->size ? to : ch->size;
		madvise(ch->mem + ch->size - to, to - ch->ready_cold, MADV_POPULATE_WRITE);
		ch->ready_cold = to;
	}
}

void pft_arena_free(struct pft_arena *a)
{
	if (!a)
		return;
	if (a->tpiece_mem)
		munmap(a->tpiece_mem, TABLE_PIECE);
	for (int i = 0; i < PFT_MAX_SLOTS; i++)
		if (a->slot_mem[i])
			munmap(a->slot_mem[i], a->slot_bytes);
	if (a->slots_fd >= 0)
		close(a->slots_fd);
	for (size_t i = 0; i < a->nchunks; i++) {
		if (a->chunks[i]->mem)
			munmap(a->chunks[i]->mem, a->chunks[i]->size);
		free(a->chunks[i]->xb);
		free(a->chunks[i]->xk);
		free(a->chunks[i]);
	}
	free(a->chunks);
	free(a->ids);
	free(a->free_ids);
	free(a->limbo);
	free(a->grace);
	pft_pend_free(a);
	free(a);
}

struct pft_chunk *pft_arena_chunk_of(const struct pft_arena *a, uint64_t addr)
{
	for (size_t i = 0; a && i < a->nchunks; i++)
		if (addr >= a->chunks[i]->addr && addr < a->chunks[i]->addr + a->chunks[i]->size)
			return a->chunks[i];
	return NULL;
}

static int reaches(const struct pft_chunk *c, uint64_t lo, uint64_t hi)
{
	uint64_t clo = c->addr, chi = c->addr + c->size;
	uint64_t far = hi > clo ? hi - clo : 0, far2 = chi > lo ? chi - lo : 0;

	return far < REACH - 4096 && far2 < REACH - 4096;
}

struct pft_chunk *pft_arena_chunk(struct pft_tracer *T, struct pft_thr *t, uint64_t lo, uint64_t hi, size_t need)
{
	struct pft_arena *a = t->sp->arena;
	struct pft_chunk *c, **nc;
	struct piece p;
	uint64_t at;

	for (size_t i = 0; i < a->nchunks; i++) {
		c = a->chunks[i];
		if (c->cold - c->used >= need && reaches(c, lo, hi))
			return c;
	}
	if (a->nchunks >= a->max_chunks || need > CHUNK_SIZE / 2)
		return NULL;
	if (T->noinject) { /* serving a request: the thread runs */
		T->inject_wanted = 1;
		return NULL;
	}
	if (pft_maps_load(&t->sp->maps, t->tid))
		return NULL;
	at = pft_maps_gap_near(&t->sp->maps, lo, hi, CHUNK_SIZE, REACH - (1u << 24));
	if (!at)
		return NULL;
	if (piece_new(T, t, CHUNK_SIZE, PROT_READ | PROT_EXEC, at, 1, 1, 0, NULL, 0, 0, &p))
		return NULL;
	nc = realloc(a->chunks, (a->nchunks + 1) * sizeof *nc);
	c = calloc(1, sizeof *c);
	if (nc)
		a->chunks = nc;
	if (!nc || !c) {
		free(c);
		munmap(p.mem, CHUNK_SIZE);
		return NULL; /* the tracee keeps an unused mapping */
	}
	c->index = a->nchunks;
	c->sp = t->sp;
	a->chunks[a->nchunks++] = c;
	c->addr = p.addr;
	c->mem = p.mem;
	c->size = c->cold = CHUNK_SIZE;
	/* no request routine once requests are off (pft_freq_off): its
	 * copies' lookup misses would ask through a futex */
	c->used = pft_ibl_emit(c->mem, c->addr, a->region, a->freq && !a->freq_off, &c->ibl);
	count_as(T, a);
	/* its `syscall` is ours: injection no longer depends on the
	 * program's code staying mapped */
	t->sp->gadget = c->addr;
	T->st.cache_chunks++;
	return c->cold - c->used >= need && reaches(c, lo, hi) ? c : NULL;
}

uint8_t *pft_arena_sysmap(struct pft_arena *a)
{
	return a->tpiece_mem ? a->tpiece_mem + TABLE_BYTES : NULL;
}

uint8_t *pft_arena_table_spare(const struct pft_arena *a, uint64_t *addr)
{
	size_t off = a->table == a->tpiece ? TABLE_B : 0;

	*addr = a->tpiece + off;
	return a->tpiece_mem + off;
}

int pft_slot_init(struct pft_arena *a, int slot)
{
	uint8_t *m = pft_slot_mem(a, slot);
	uint64_t map = a->tpiece + TABLE_BYTES;

	if (!m)
		return -1;
	a->slot_used[slot] = 1;
	memset(m, 0, PFT_SLOT_HDR);
	memcpy(m + PFT_SLOT_TABLE, &a->table, 8);
	memcpy(m + PFT_SLOT_SYSMAP, &map, 8);
	if (a->freq) {
		uint64_t self = pft_slot_addr(a, slot) + PFT_SLOT_Q_STATE, bell = a->slots + PFT_SLOT_BELL;
		memset(m + PFT_SLOT_Q_ID, 0, PFT_SLOT_Q_END - PFT_SLOT_Q_ID);
		memcpy(m + PFT_SLOT_Q_SELF, &self, 8);
		memcpy(m + PFT_SLOT_Q_BELL, &bell, 8);
	}
	return slot;
}

int pft_slot_alloc(struct pft_arena *a)
{
	for (int i = 0; i < a->nslots; i++)
		if (!a->slot_used[i])
			return pft_slot_init(a, i);
	return -1;
}

void pft_slot_free(struct pft_arena *a, int slot)
{
	if (a && slot >= 0 && slot < a->nslots)
		a->slot_used[slot] = 0;
}

uint8_t *pft_slot_mem(struct pft_arena *a, int slot)
{
	if (!a->slot_mem[slot]) {
		void *m = mmap(NULL, a->slot_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, a->slots_fd,
			       (off_t)((uint64_t)slot * a->slot_bytes));
		if (m == MAP_FAILED)
			return NULL;
		a->slot_mem[slot] = m;
	}
	return a->slot_mem[slot];
}

uint64_t pft_slot_addr(const struct pft_arena *a, int slot)
{
	return a->slots + (uint64_t)slot * a->slot_bytes;
}

/* Replace one shared mapping of the child with a private copy (of src's
 * first hot and last cold bytes, zeros between). */
static int refork(struct pft_tracer *T, struct pft_thr *t, uint64_t addr, size_t size, int prot, const uint8_t *src,
		  size_t hot, size_t cold, int keep_fd, struct piece *p)
{
	return piece_new(T, t, size, prot, addr, 2, src != NULL, keep_fd, src, hot, cold, p);
}

/* dst = src, len bytes, whole pages; dst is a fresh memfd's mapping (zeros
 * where nothing is written: a page not written is never faulted in) */
static void copy_nonzero(uint8_t *dst, const uint8_t *src, size_t len)
{
	for (size_t at = 0; at < len; at += 4096) {
		const uint64_t *w = (const uint64_t *)(const void *)(src + at);
		size_t n = len - at < 4096 ? len - at : 4096, k = 0;
		while (k < n / 8 && !w[k])
			k++;
		if (k < n / 8 || n % 8)
			memcpy(dst + at, src + at, n);
	}
}

static size_t page_up(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

int pft_arena_fork(struct pft_tracer *T, struct pft_thr *t, const struct pft_arena *pa)
{
	struct pft_arena *a = t->sp->arena;
	size_t cur = (size_t)(pa->table - pa->tpiece);
	struct piece p;
	int rc;

	/* table and code: copies; slots: fresh (the parent's counts stay
	 * the parent's).  Of the table's piece, the table in use and the
	 * system-call map: the child's one thread is in its fork, reading
	 * no table, and the spare is written whole before it is used. */
	rc = piece_new(T, t, TABLE_PIECE, PROT_READ, pa->tpiece, 2, 1, 0, NULL, 0, 0, &p);
	if (rc)
		return rc;
	/* (4 MiB, its keys hashed over it: a small process's mostly zeros) */
	if (pa->tab_live > TABLE_BYTES / 4096) /* then most pages hold one */
		madvise(p.mem + cur, TABLE_BYTES, MADV_POPULATE_WRITE);
	copy_nonzero(p.mem + cur, pa->table_mem, TABLE_BYTES);
	memcpy(p.mem + TABLE_BYTES, pa->tpiece_mem + TABLE_BYTES, PFT_SYSMAP_BYTES);
	a->tpiece = p.addr;
	a->tpiece_mem = p.mem;
	a->table = p.addr + cur;
	a->table_mem = p.mem + cur;
	a->tab_live = pa->tab_live;
	a->tab_tombs = pa->tab_tombs;
	/* (the child's own count: fewer than the parent's when fitted to
	 * a limit, pft_arena_fit) */
	rc = refork(T, t, pa->slots, (size_t)a->nslots * pa->slot_bytes, PROT_READ | PROT_WRITE, NULL, 0, 0, 1, &p);
	if (rc)
		return rc;
	a->slots = p.addr;
	a->slots_fd = p.fd;
	if (a->freq && pft_freq_bell(a))
		return PFLOPS_ESYS;
	for (size_t i = 0; i < a->nchunks; i++) {
		struct pft_chunk *c = a->chunks[i];
		const struct pft_chunk *pc = pa->chunks[i];
		/* what the parent wrote: its routine and copies from the start,
		 * cold parts from the end (pft_chunk_ready made those pages
		 * present before any write); a whole 4 MiB chunk copied was
		 * 20 ms a fork of bash (most of it the faults of both sides) */
		size_t hot = page_up(pc->used > pc->ready_hot ? pc->used : pc->ready_hot);
		size_t cold = page_up(pc->size - pc->cold > pc->ready_cold ? pc->size - pc->cold : pc->ready_cold);
		rc = refork(T, t, c->addr, c->size, PROT_READ | PROT_EXEC, pc->mem, hot, cold, 0, &p);
		if (rc)
			return rc;
		c->mem = p.mem;
	}
	return 0;
}
