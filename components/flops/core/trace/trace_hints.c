/*
 * trace_hints.c: the hint store.  A traced run pays a stop, a decode and
 * a translation per new block; most of a big program's blocks (python,
 * numpy, gcc) are in a few shared files that run the same code every
 * time.  So when an address space goes, the file offsets of the blocks
 * that ran (a non-zero count; a copy without a count, translated) are
 * written per file, keyed by the file's
 * build id and size (no build id: device, inode, size and mtime); the
 * first new block of such a file in a later run has all of them
 * translated, linked to each other and put in the lookup table in that
 * one stop.
 *
 * A hint decides only what is translated early.  The copy is made from
 * the process's bytes as they are (a block that is no longer there
 * decodes as garbage that never runs, or fails and is skipped), and the
 * code that runs is looked up by the address actually reached, so no
 * hint can change a count.  Files are written whole to a temporary name
 * and renamed (MPI ranks share the store), merged with what was there,
 * at most PFT_HINT_MAX entries a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "pflops_internal.h"
#include "trace_hints.h"
#include "trace_cache.h"
#include "trace_thread.h"

static const char MAGIC[8] = { 'P', 'F', 'T', 'H', 'I', 'N', 'T', '\n' };

/* an eighth of the ids kept for code the hints do not know, as ahead does */
#define HINT_IDS(a) ((a)->max_ids - (a)->max_ids / 8)
/* blocks translated ahead of a new block in a file with hints: what ran
 * last time is there already (measured: docs/trace-engine.md) */
#define HINT_AHEAD 8

/* One file mapping of the space met so far. */
struct hmap {
	uint64_t lo, hi, off, dev, ino;
	char key[PFT_HINT_KEY + 1]; /* "" : not identified (no hints kept) */
	size_t nhint;		    /* entries read from the store */
	uint64_t *ent;		    /* and those entries (NULL: none kept) */
	struct fid {		    /* and the store file they came from */
		uint64_t dev, ino, size;
		int64_t mtime;
	} fid;
};

struct pft_hspace {
	struct hmap *v;
	size_t n, cap;
};

/* ------------------------------------------------------------------ */
/* The format.                                                          */

uint64_t pft_hints_sum(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static size_t head_len(size_t klen)
{
	return (16 + klen + 7) & ~(size_t)7;
}

int pft_hints_parse(const uint8_t *p, size_t len, const char *key, uint64_t **ent, size_t *n, char *why, size_t whylen)
{
	uint32_t ver, klen;
	uint64_t cnt, sum, prev = 0;
	size_t h;

	*ent = NULL;
	*n = 0;
	if (len < 16 || memcmp(p, MAGIC, 8)) {
		snprintf(why, whylen, "not a hint file (no PFTHINT header)");
		return -1;
	}
	memcpy(&ver, p + 8, 4);
	memcpy(&klen, p + 12, 4);
	if (ver != PFT_HINT_VERSION) {
		snprintf(why, whylen, "version %u, this tracer writes %u", ver, PFT_HINT_VERSION);
		return -1;
	}
	if (klen == 0 || klen > PFT_HINT_KEY || head_len(klen) + 16 > len) {
		snprintf(why, whylen, "truncated or bad key length %u", klen);
		return -1;
	}
	h = head_len(klen);
	memcpy(&cnt, p + h, 8);
	if (cnt > PFT_HINT_MAX || h + 8 + cnt * 8 + 8 != len) {
		snprintf(why, whylen, "truncated: %zu bytes for %llu entries", len, (unsigned long long)cnt);
		return -1;
	}
	memcpy(&sum, p + len - 8, 8);
	if (sum != pft_hints_sum(p, len - 8)) {
		snprintf(why, whylen, "checksum mismatch");
		return -1;
	}
	if (strlen(key) != klen || memcmp(p + 16, key, klen)) {
		snprintf(why, whylen, "hints of another file (%.*s)", (int)(klen > 80 ? 80 : klen),
			 (const char *)p + 16);
		return -1;
	}
	*ent = malloc((cnt ? cnt : 1) * sizeof **ent);
	if (!*ent) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	for (uint64_t i = 0; i < cnt; i++) {
		uint64_t e;
		memcpy(&e, p + h + 8 + 8 * i, 8);
		if (i && PFT_HINT_OFF(e) <= PFT_HINT_OFF(prev)) {
			free(*ent);
			*ent = NULL;
			snprintf(why, whylen, "offsets out of order at entry %llu", (unsigned long long)i);
			return -1;
		}
		(*ent)[i] = prev = e;
	}
	*n = (size_t)cnt;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The store.                                                           */

static int mkdirs(char *path)
{
	for (char *s = path + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(path, 0700) && errno != EEXIST) {
				*s = '/';
				return -1;
			}
			*s = '/';
		}
	return mkdir(path, 0700) && errno != EEXIST ? -1 : 0;
}

int pft_hints_init(struct pft_tracer *T, struct pflops_error *err)
{
	const char *on = getenv("PFLOPS_TRACE_HINTS"), *d = getenv("PFLOPS_TRACE_HINTS_DIR"), *base;
	char *dir = T->hints_dir;
	size_t cap = sizeof T->hints_dir;

	dir[0] = 0;
	if (on && *on && strcmp(on, "1")) {
		if (!strcmp(on, "0"))
			return 0;
		return pfc_err(err, PFLOPS_EINVAL, "PFLOPS_TRACE_HINTS='%s' is neither 0 (off) nor 1 (on)", on);
	}
	if (d && *d)
		snprintf(dir, cap, "%s", d);
	else if ((base = getenv("XDG_CACHE_HOME")) && base[0] == '/')
		snprintf(dir, cap, "%s/papi-flops/hints", base);
	else if ((base = getenv("HOME")) && base[0] == '/')
		snprintf(dir, cap, "%s/.cache/papi-flops/hints", base);
	else {
		snprintf(T->st.hint_note, sizeof T->st.hint_note,
			 "trace hints off: no HOME or XDG_CACHE_HOME for the hint store; set "
			 "PFLOPS_TRACE_HINTS_DIR (or PFLOPS_TRACE_HINTS=0)");
		return 0;
	}
	if (mkdirs(dir) || access(dir, W_OK | X_OK)) {
		snprintf(T->st.hint_note, sizeof T->st.hint_note,
			 "trace hints off (same counts, slower start): cannot create or write %.150s (%s); set "
			 "PFLOPS_TRACE_HINTS_DIR to a writable directory, or PFLOPS_TRACE_HINTS=0",
			 dir, strerror(errno));
		dir[0] = 0;
	}
	return 0;
}

/* The first problem with the store, for the report (once). */
static void note_bad(struct pft_tracer *T, const char *file, const char *why)
{
	T->st.hint_bad++;
	if (!T->st.hint_note[0])
		snprintf(
			T->st.hint_note, sizeof T->st.hint_note,
			"trace hint file %.150s ignored (%.120s): removed, rewritten from this run (counts unaffected)",
			file, why);
}

static void fid_of(const struct stat *st, struct fid *f)
{
	f->dev = (uint64_t)st->st_dev;
	f->ino = (uint64_t)st->st_ino;
	f->size = (uint64_t)st->st_size;
	f->mtime = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static int read_all(const char *path, uint8_t **buf, size_t *len, struct fid *fid)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	size_t got = 0;

	*buf = NULL;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > (off_t)(PFT_HINT_MAX * 8 + 4096) ||
	    !(*buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return -1;
	}
	if (fid)
		fid_of(&st, fid);
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, *buf + got, (size_t)st.st_size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return 0;
}

/* The entries stored for key: 0 (*n may be 0: none yet), or -1 after a
 * bad file (removed, noted). */
static int load(struct pft_tracer *T, const char *key, uint64_t **ent, size_t *n, struct fid *fid)
{
	char path[sizeof T->hints_dir + PFT_HINT_KEY + 8], why[160];
	uint8_t *buf;
	size_t len = 0;

	*ent = NULL;
	*n = 0;
	snprintf(path, sizeof path, "%s/%s", T->hints_dir, key);
	if (read_all(path, &buf, &len, fid))
		return 0;
	if (pft_hints_parse(buf, len, key, ent, n, why, sizeof why)) {
		free(buf);
		unlink(path);
		note_bad(T, path, why);
		return -1;
	}
	free(buf);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* v sorted (as numbers: by offset, then flag), 11 bits a pass up to
 * the highest bit set: qsort's comparisons were 4% of a warm numpy run's
 * tracer time; 16 bits a pass cleared and summed 512 KiB of counts each
 * pass, half of a cold numpy run's sort (its 2,048 counts stay in the
 * first-level cache); a pass where every key has the same digit moves
 * nothing */
#define RADIX_BITS 11
static int sort_radix(uint64_t *v, size_t n)
{
	uint64_t *tmp, top = 0;
	size_t cnt[1u << RADIX_BITS];
	const uint64_t mask = (1u << RADIX_BITS) - 1;

	for (size_t i = 0; i < n; i++)
		top |= v[i];
	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof *tmp);
	if (!tmp) { /* (qsort needs no memory of ours) */
		qsort(v, n, sizeof *v, cmp_u64);
		return 0;
	}
	for (int sh = 0; sh < 64 && (top >> sh); sh += RADIX_BITS) {
		size_t sum = 0, d0 = (v[0] >> sh) & mask;
		memset(cnt, 0, sizeof cnt);
		for (size_t i = 0; i < n; i++)
			cnt[(v[i] >> sh) & mask]++;
		if (cnt[d0] == n)
			continue;
		for (size_t d = 0; d <= mask; d++) {
			size_t c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[cnt[(v[i] >> sh) & mask]++] = v[i];
		memcpy(v, tmp, n * sizeof *v);
	}
	free(tmp);
	return 0;
}

/* The same, in one pass where the run left them nearly in order: a
 * file's hinted blocks were translated from the top down (apply), so by
 * id their entries come in one descending run, the block that touched
 * the file before it and those new to this run around it.  That run is
 * turned round, the rest sorted (qsort where it is short: a radix pass
 * goes over its 2,048 counts twice, for a file's 14 entries too) and the
 * two merged: the radix passes were a third of a warm run's save. */
int pft_hints_sort(uint64_t *v, size_t n)
{
	size_t at = 0, len = 0, m;
	uint64_t *run;

	for (size_t i = 0, j; i < n; i = j) { /* the longest descending run */
		for (j = i + 1; j < n && v[j] < v[j - 1]; j++)
			;
		if (j - i > len) {
			at = i;
			len = j - i;
		}
	}
	m = n - len;
	if (m > n / 8 || !(run = malloc((len ? len : 1) * sizeof *run))) {
		if (n > 256)
			return sort_radix(v, n);
		qsort(v, n, sizeof *v, cmp_u64);
		return 0;
	}
	for (size_t i = 0; i < len; i++)
		run[i] = v[at + len - 1 - i];
	/* the rest at the end, sorted: v[len..n) */
	memmove(v + len, v, at * sizeof *v);
	qsort(v + len, m, sizeof *v, cmp_u64);
	/* merged from the front: the write index never passes the rest's */
	for (size_t i = 0, j = len, k = 0; i < len; k++)
		v[k] = j == n || run[i] <= v[j] ? run[i++] : v[j++];
	free(run);
	return 0;
}

/* v[0..n) sorted by offset: duplicates folded (the lookup-table flag
 * or'ed, the heat the highest); new count */
static size_t fold(uint64_t *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (k && PFT_HINT_OFF(v[k - 1]) == PFT_HINT_OFF(v[i])) {
			uint64_t a = v[k - 1], b = v[i];
			unsigned h = PFT_HINT_HEAT(a) > PFT_HINT_HEAT(b) ? PFT_HINT_HEAT(a) : PFT_HINT_HEAT(b);
			v[k - 1] = PFT_HINT_ENT(PFT_HINT_OFF(a), h, (a | b) & PFT_HINT_IND);
		} else
			v[k++] = v[i];
	return k;
}

/* the store's entries for h's key: those h read when the file is still
 * the one it read (a file is only ever replaced by a rename: another
 * inode), else read again (another process saved it meanwhile) */
static void load_again(struct pft_tracer *T, const struct hmap *h, const char *path, uint64_t **old, size_t *nold)
{
	struct stat st;
	struct fid f;

	if (h->ent && !stat(path, &st) && (fid_of(&st, &f), !memcmp(&f, &h->fid, sizeof f)) &&
	    (*old = malloc(h->nhint * sizeof **old))) {
		memcpy(*old, h->ent, h->nhint * sizeof **old);
		*nold = h->nhint;
		return;
	}
	load(T, h->key, old, nold, NULL);
}

/* ent (this run's, sorted) merged with the store's and written for hm's
 * file */
/* old[0..*nold) less the offsets of drop[0..ndrop) (both ascending) */
static void drop_old(uint64_t *old, size_t *nold, const uint64_t *drop, size_t ndrop)
{
	size_t j = 0, k = 0;

	for (size_t i = 0; i < *nold; i++) {
		while (j < ndrop && PFT_HINT_OFF(drop[j]) < PFT_HINT_OFF(old[i]))
			j++;
		if (j == ndrop || PFT_HINT_OFF(drop[j]) != PFT_HINT_OFF(old[i]))
			old[k++] = old[i];
	}
	*nold = k;
}

/* drop: entries whose blocks were counted this run to learn their runs
 * and did not run, taken out of the store's */
static void store(struct pft_tracer *T, const struct hmap *hm, uint64_t *ent, size_t n, const uint64_t *drop,
		  size_t ndrop)
{
	const char *key = hm->key;
	uint64_t *old, *all;
	size_t nold, nold0, klen = strlen(key), h = head_len(klen), len;
	char path[sizeof T->hints_dir + PFT_HINT_KEY + 8], tmp[sizeof path + 32];
	uint8_t *buf;
	uint32_t ver = PFT_HINT_VERSION, kl = (uint32_t)klen;
	uint64_t cnt, sum;
	int fd, ok;

	snprintf(path, sizeof path, "%s/%s", T->hints_dir, key);
	load_again(T, hm, path, &old, &nold);
	if (old && ndrop)
		drop_old(old, &nold, drop, ndrop);
	nold0 = nold;
	/* this run's, merged with the store's (both sorted); past the
	 * bound, this run's first */
	all = malloc((n + nold + 1) * sizeof *all);
	if (!all) {
		free(old);
		return;
	}
	if (n > PFT_HINT_MAX)
		n = PFT_HINT_MAX;
	if (n + nold > PFT_HINT_MAX) {
		/* the store's entries not among this run's, in order, up
		 * to the bound */
		size_t j = 0, k = 0;
		for (size_t i = 0; i < nold0 && k < PFT_HINT_MAX - n; i++) {
			while (j < n && PFT_HINT_OFF(ent[j]) < PFT_HINT_OFF(old[i]))
				j++;
			if (j == n || PFT_HINT_OFF(ent[j]) != PFT_HINT_OFF(old[i]))
				old[k++] = old[i];
		}
		nold = k;
	}
	cnt = 0;
	for (size_t i = 0, j = 0; i < n || j < nold;)
		all[cnt++] = j == nold || (i < n && ent[i] <= old[j]) ? ent[i++] : old[j++];
	cnt = fold(all, cnt);
	if (old && !ndrop && cnt == nold0 && !memcmp(all, old, cnt * sizeof *all)) {
		free(old); /* nothing new: the file stays as it is */
		free(all);
		return;
	}
	free(old);
	len = h + 8 + cnt * 8 + 8;
	buf = calloc(1, len);
	if (!buf) {
		free(all);
		return;
	}
	memcpy(buf, MAGIC, 8);
	memcpy(buf + 8, &ver, 4);
	memcpy(buf + 12, &kl, 4);
	memcpy(buf + 16, key, klen);
	memcpy(buf + h, &cnt, 8);
	memcpy(buf + h + 8, all, cnt * 8);
	sum = pft_hints_sum(buf, len - 8);
	memcpy(buf + len - 8, &sum, 8);
	free(all);
	snprintf(tmp, sizeof tmp, "%s/.%s.%ld.tmp", T->hints_dir, key, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ok = fd >= 0 && write(fd, buf, len) == (ssize_t)len;
	if (fd >= 0)
		ok = !close(fd) && ok;
	if (ok && !rename(tmp, path))
		T->st.hint_saved++;
	else {
		if (fd >= 0)
			unlink(tmp);
		if (!T->st.hint_note[0])
			snprintf(T->st.hint_note, sizeof T->st.hint_note,
				 "trace hints not saved: cannot write %.150s (%s); check PFLOPS_TRACE_HINTS_DIR", tmp,
				 strerror(errno));
	}
	free(buf);
}

/* ------------------------------------------------------------------ */
/* Which file: its key.                                                 */

/* the GNU build id of an ELF file as hex, or "" */
static void build_id(int fd, char *hex, size_t cap)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	hex[0] = 0;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof ph || eh.e_phnum > 256)
		return;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		uint8_t note[4096];
		size_t len, at = 0;
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
			return;
		if (ph.p_type != PT_NOTE)
			continue;
		len = ph.p_filesz < sizeof note ? (size_t)ph.p_filesz : sizeof note;
		if (pread(fd, note, len, (off_t)ph.p_offset) != (ssize_t)len)
			continue;
		while (at + 12 <= len) {
			uint32_t nsz, dsz, type;
			size_t name_at = at + 12, desc_at;
			memcpy(&nsz, note + at, 4);
			memcpy(&dsz, note + at + 4, 4);
			memcpy(&type, note + at + 8, 4);
			desc_at = name_at + ((nsz + 3u) & ~3u);
			if (nsz > len || dsz > len || desc_at + dsz > len)
				break;
			if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(note + name_at, "GNU", 4) && dsz &&
			    dsz <= 64 && 2 * dsz < cap) {
				for (uint32_t k = 0; k < dsz; k++)
					snprintf(hex + 2 * k, 3, "%02x", note[desc_at + k]);
				return;
			}
			at = desc_at + ((dsz + 3u) & ~3u);
		}
	}
}

/* m's file, if the path still names it: key "<build id>-<size>", or
 * "f-<dev>-<ino>-<size>-<mtime ns>" without one */
static void identify(const char *path, struct hmap *h)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char id[132];

	h->key[0] = 0;
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_ino == h->ino &&
	    (((uint64_t)major(st.st_dev) << 32) | minor(st.st_dev)) == h->dev) {
		build_id(fd, id, sizeof id);
		if (id[0])
			snprintf(h->key, sizeof h->key, "%s-%llu", id, (unsigned long long)st.st_size);
		else
			snprintf(h->key, sizeof h->key, "f-%llx-%llu-%llu-%lld%09ld", (unsigned long long)h->dev,
				 (unsigned long long)h->ino, (unsigned long long)st.st_size,
				 (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	}
	close(fd);
}

/* ------------------------------------------------------------------ */
/* First touch.                                                         */

/* the record of m's file at m's bias (a piece of a mapping split by an
 * mprotect, as Open MPI's patcher does to libc, stays the same file
 * and offsets: its record grows to cover it) */
static struct hmap *hmap_of(struct pft_hspace *hs, const struct pft_map *m)
{
	for (size_t i = 0; i < hs->n; i++) {
		struct hmap *h = &hs->v[i];
		if (h->ino == m->ino && h->dev == m->dev && h->lo - h->off == m->lo - m->off && h->lo <= m->hi &&
		    m->lo <= h->hi) {
			if (m->lo < h->lo) {
				h->off = m->off;
				h->lo = m->lo;
			}
			if (m->hi > h->hi)
				h->hi = m->hi;
			return h;
		}
	}
	return NULL;
}

static struct hmap *hmap_add(struct pft_hspace *hs, const struct pft_map *m)
{
	struct hmap *h;

	/* the range mapped anew, another file or offset (dlclose, dlopen):
	 * the old one goes (hmap_of found no record of this file there) */
	for (size_t i = 0; i < hs->n; i++)
		if (hs->v[i].lo < m->hi && m->lo < hs->v[i].hi) {
			free(hs->v[i].ent);
			hs->v[i] = hs->v[--hs->n];
			i--;
		}
	if (hs->n == hs->cap) {
		size_t nc = hs->cap ? 2 * hs->cap : 32;
		struct hmap *v = realloc(hs->v, nc * sizeof *v);
		if (!v)
			return NULL;
		hs->v = v;
		hs->cap = nc;
	}
	h = &hs->v[hs->n++];
	memset(h, 0, sizeof *h);
	h->lo = m->lo;
	h->hi = m->hi;
	h->off = m->off;
	h->dev = m->dev;
	h->ino = m->ino;
	return h;
}

/* how far ahead apply asks for the memory an entry's translation reads */
#define PREFETCH 8

/* a block for the lookup table: what the insert needs, kept so that
 * the inserts, in heat order, do not read each block's records again
 * (a cache miss each) */
struct hind {
	uint64_t start, addr;
	const struct pft_xblock *x;
};

/* translate the hinted blocks of h's mapping now */
static void apply(struct pft_tracer *T, struct pft_thr *t, const struct hmap *h, const uint64_t *ent, size_t n)
{
	struct pft_space *sp = t->sp;
	struct hind *ind = malloc(n * sizeof *ind);
	uint8_t *heat = malloc(n);
	size_t nind = 0, at[129] = { 0 };

	pft_block_reserve(sp, sp->blk_n + n); /* the table grown once */

	/* in address order: a block's fall-through is made right after it,
	 * so the jump between them becomes a nop (pft_arch_link: hot numpy
	 * solve 30,000 of 86,000 links, 130 from the top down, which linked
	 * more exits at once instead of waiting, trace_link.c) */
	for (size_t i = 0; i < n; i++) {
		uint64_t off = PFT_HINT_OFF(ent[i]), addr;
		struct pft_block *d;
		int was;

		if (off < h->off || off - h->off >= h->hi - h->lo)
			continue;
		if (!sp->arena || pft_ids_used(sp->arena) >= HINT_IDS(sp->arena))
			break;
		if (i + PREFETCH < n) {
			uint64_t o = PFT_HINT_OFF(ent[i + PREFETCH]);
			pft_link_prefetch(sp->arena, h->lo + (o - h->off), 0);
		}
		addr = h->lo + (off - h->off);
		d = pft_block_get(sp, t->tid, addr, 0, &T->st.blocks_decoded);
		if (!d)
			continue;
		if (!d->x) {
			uint64_t got;
			was = d->nocache;
			/* runs unknown (a copy without a count made it):
			 * counted this time, to learn them */
			T->hint_learn = !PFT_HINT_HEAT(ent[i]);
			got = pft_xlate(T, t, d);
			T->hint_learn = 0;
			if (!got) {
				if (!was && d->nocache)
					T->st.nocache[d->nocache]++;
				continue;
			}
			T->st.hint_blocks++;
		}
		if ((ent[i] & PFT_HINT_IND) && ind && heat) {
			ind[nind] = (struct hind){ addr, d->x->addr, d->x };
			heat[nind++] = (uint8_t)PFT_HINT_HEAT(ent[i]);
		} else if ((ent[i] & PFT_HINT_IND) && !d->x->dead)
			pft_table_insert(sp->arena, addr, d->x->addr);
	}
	/* into the lookup table hottest first: a key probes past the ones
	 * put before it in its run, so the cold ones go last (in file
	 * order, python3's warm table probed 2.4 times as much as cold) */
	for (size_t i = 0; i < nind; i++)
		at[128 - heat[i]]++;
	for (size_t hb = 0, sum = 0; hb < 129; hb++) {
		size_t c = at[hb];
		at[hb] = sum;
		sum += c;
	}
	if (nind) {
		struct hind *o = malloc(nind * sizeof *o), *v;
		for (size_t i = 0; o && i < nind; i++)
			o[at[128 - heat[i]]++] = ind[i];
		v = o ? o : ind;
		for (size_t i = 0; i < nind; i++) {
			if (i + PREFETCH < nind) {
				pft_link_prefetch(sp->arena, v[i + PREFETCH].start, 1);
				__builtin_prefetch(&v[i + PREFETCH].x->dead);
			}
			if (!v[i].x->dead)
				pft_table_insert(sp->arena, v[i].start, v[i].addr);
		}
		free(o);
	}
	free(ind);
	free(heat);
}

int pft_hints_touch(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, int ahead)
{
	struct pft_space *sp = t->sp;
	const struct pft_map *m;
	struct pft_map mc;
	struct hmap *h;
	uint64_t *ent = NULL;
	size_t n;
	char *path;

	if (!T->hints_dir[0] || sp->region || !sp->arena)
		return ahead;
	m = pft_maps_find(&sp->maps, t->tid, b->start);
	if (!m || !m->path || !m->ino || !m->x || m->w || m->path[0] != '/')
		return ahead;
	if (!sp->hints && !(sp->hints = calloc(1, sizeof *sp->hints)))
		return ahead;
	if ((h = hmap_of(sp->hints, m)))
		return h->nhint ? (ahead < HINT_AHEAD ? ahead : HINT_AHEAD) : ahead;
	/* the maps may be reloaded while the hints are translated */
	mc = *m;
	if (!(path = strdup(m->path)) || !(h = hmap_add(sp->hints, &mc))) {
		free(path);
		return ahead;
	}
	identify(path, h);
	free(path);
	if (!h->key[0] || load(T, h->key, &ent, &n, &h->fid) || !n) {
		free(ent);
		return ahead;
	}
	h->nhint = n;
	T->st.hint_files++;
	/* (h stays valid: nothing is added to sp->hints meanwhile) */
	apply(T, t, h, ent, n);
	h->ent = ent; /* what the save compares with */
	return ahead < HINT_AHEAD ? ahead : HINT_AHEAD;
}

/* ------------------------------------------------------------------ */
/* Saving.                                                              */

struct hgroup {
	uint64_t *v; /* this run's entries */
	size_t n, cap;
	uint64_t *d; /* and the entries to drop (learnt: not run) */
	size_t nd, dcap;
};

static void push(uint64_t **v, size_t *n, size_t *cap, uint64_t e)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 256;
		uint64_t *w = realloc(*v, nc * sizeof *w);
		if (!w)
			return;
		*v = w;
		*cap = nc;
	}
	(*v)[(*n)++] = e;
}

/* Every entry of v[0..n) (sorted, folded) is in what h's file held when
 * the run read it, with its flag and at least its heat: the store's
 * merge would write the same file again, so it is not even read (a
 * warm run of numpy read, checked and merged 77,000 entries to find
 * that). */
static int known(const struct hmap *h, const uint64_t *v, size_t n)
{
	size_t j = 0;

	if (!h->ent)
		return 0;
	for (size_t i = 0; i < n; i++) {
		while (j < h->nhint && PFT_HINT_OFF(h->ent[j]) < PFT_HINT_OFF(v[i]))
			j++;
		if (j == h->nhint || PFT_HINT_OFF(h->ent[j]) != PFT_HINT_OFF(v[i]) ||
		    (v[i] & ~h->ent[j] & PFT_HINT_IND) || PFT_HINT_HEAT(v[i]) > PFT_HINT_HEAT(h->ent[j]))
			return 0;
	}
	return 1;
}

static int by_lo(const void *a, const void *b)
{
	const struct hmap *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void pft_hints_save(struct pft_tracer *T, struct pft_space *sp)
{
	struct pft_hspace *hs = sp->hints;
	struct pft_arena *a = sp->arena;
	struct hgroup *g;
	uint8_t *ind;

	if (!T->hints_dir[0] || !hs || !hs->n || !a || !a->table_mem)
		return;
	qsort(hs->v, hs->n, sizeof *hs->v, by_lo);
	g = calloc(hs->n, sizeof *g);
	ind = calloc(a->nids ? a->nids : 1, 1);
	if (!g || !ind) {
		free(g);
		free(ind);
		return;
	}
	/* the blocks the lookup table holds (reached by an indirect branch,
	 * or a return site or PLT target translated ahead), by id: one walk
	 * of the table instead of a probe per block */
	for (size_t i = 0; i < PFT_TABLE_N + PFT_TABLE_OVER; i++) {
		const uint64_t *te = (const uint64_t *)a->table_mem + 2 * i;
		struct pft_block *b;
		if (te[0] && te[0] != PFT_TOMB && (b = pft_block_find(sp, te[0])) && b->x && b->x->addr == te[1])
			ind[b->x->id] = 1;
	}
	/* blocks that ran from the cache (those of the ids: their counts
	 * are harvested into execs when their threads end) */
	for (uint32_t id = 0; id < a->nids; id++) {
		struct pft_block *b = a->ids[id];
		size_t lo = 0, hi = hs->n;
		struct hgroup *gr;
		const struct hmap *h;
		uint64_t e;

		/* ahead: the block (a cache miss each), then its copy */
		if (id + 2 * PREFETCH < a->nids && a->ids[id + 2 * PREFETCH]) {
			__builtin_prefetch(a->ids[id + 2 * PREFETCH]);
			__builtin_prefetch(&a->ids[id + 2 * PREFETCH]->x);
		}
		if (id + PREFETCH < a->nids && a->ids[id + PREFETCH] && a->ids[id + PREFETCH]->x)
			__builtin_prefetch(&a->ids[id + PREFETCH]->x->dead);
		/* a copy without a count (no FP: trace_xlate.c) may have
		 * run or not: kept at heat 0, runs unknown (a hint costs
		 * time only); one counted to learn that did not run: its
		 * entry dropped */
		if (!b || b->dead || !b->x || b->x->dead || (!b->execs && !b->x->nocnt && !b->x->learn))
			continue;
		while (lo < hi) { /* the last mapping starting at or below */
			size_t mid = (lo + hi) / 2;
			if (hs->v[mid].lo <= b->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo)
			continue;
		h = &hs->v[lo - 1];
		gr = &g[lo - 1];
		if (!h->key[0] || b->start >= h->hi)
			continue;
		e = PFT_HINT_ENT(b->start - h->lo + h->off, b->execs ? 64 - __builtin_clzll(b->execs) : 0, ind[id]);
		if (b->execs || b->x->nocnt)
			push(&gr->v, &gr->n, &gr->cap, e);
		else
			push(&gr->d, &gr->nd, &gr->dcap, PFT_HINT_ENT(PFT_HINT_OFF(e), 0, 0));
	}
	for (size_t i = 0; i < hs->n; i++) {
		size_t n = g[i].n;
		int ok = (!n || !pft_hints_sort(g[i].v, n)) && (!g[i].nd || !pft_hints_sort(g[i].d, g[i].nd));
		if (ok && (n || g[i].nd)) {
			n = n ? fold(g[i].v, n) : 0;
			if (g[i].nd || !known(&hs->v[i], g[i].v, n))
				store(T, &hs->v[i], g[i].v, n, g[i].d, g[i].nd);
		}
		free(g[i].v);
		free(g[i].d);
	}
	free(g);
	free(ind);
}

void pft_hints_free(struct pft_space *sp)
{
	if (sp->hints) {
		for (size_t i = 0; i < sp->hints->n; i++)
			free(sp->hints->v[i].ent);
		free(sp->hints->v);
		free(sp->hints);
		sp->hints = NULL;
	}
}
