/*
 * trace_funcs.c: FLOPs per function (pflops_trace.h): the traced blocks
 * grouped by the ELF function symbol covering them, read from the files
 * on disk (trace_elf.c); code without a symbol grouped by its mapping.
 *
 * A file's symbols are loaded once, at its first block: function
 * symbols with a size, sorted by start, with for each position the
 * largest end so far, so that "the symbol with the largest start that
 * still covers addr" is a binary search and a short walk back (nested
 * symbols, aliases).  Of aliases (same start and end) the global one is
 * kept, then the weak one, then the first name in byte order.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pflops_internal.h"
#include "trace_elf.h"

struct sym {
	uint64_t lo, hi;
	const char *name;
	int rank;
};

struct symtab {
	struct sym *v;
	uint64_t *maxend; /* max hi over v[0..i] */
	size_t n;
};

struct object {
	char *path; /* a file, or a label ("[anon 0x...]") */
	int file;   /* path is a file we may read */
	int loaded;
	struct pft_elf_seg *segs; /* PT_LOAD; NULL: not an ELF file */
	size_t nsegs;
	struct symtab tab[2]; /* .symtab, .dynsym */
	char *names;
	struct object *next; /* hash chain */
};

struct func {
	struct pft_func f;
	const struct object *obj;
	const struct sym *sym; /* NULL: the object's code without one */
	uint64_t hot_flops;    /* no symbol: its block with most FLOPs */
	uint64_t hot_addr;
	int have_hot;
	uint64_t flops; /* of the mix, for the sort */
	char *label;
	struct func *next; /* hash chain */
};

struct pft_funcs {
	struct object **objs; /* hash by path */
	size_t ocap;
	struct func **fns; /* hash by (object, symbol) */
	size_t fcap, nf;
	const struct pft_func **list;
	int oom;
};

static size_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return (size_t)h;
}

static size_t ptr_hash(const void *a, const void *b)
{
	uint64_t h = (uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)b * 0xbf58476d1ce4e5b9ULL;
	return (size_t)(h ^ h >> 29);
}

struct pft_funcs *pft_funcs_new(struct pflops_error *err)
{
	struct pft_funcs *f = calloc(1, sizeof *f);

	if (f) {
		f->ocap = 256;
		f->fcap = 1024;
		f->objs = calloc(f->ocap, sizeof *f->objs);
		f->fns = calloc(f->fcap, sizeof *f->fns);
	}
	if (!f || !f->objs || !f->fns) {
		pft_funcs_free(f);
		pfc_err(err, PFLOPS_ENOMEM, "out of memory");
		return NULL;
	}
	return f;
}

static void symtab_free(struct symtab *t)
{
	free(t->v);
	free(t->maxend);
}

void pft_funcs_free(struct pft_funcs *f)
{
	if (!f)
		return;
	for (size_t i = 0; f->objs && i < f->ocap; i++)
		for (struct object *o = f->objs[i], *n; o; o = n) {
			n = o->next;
			free(o->path);
			free(o->segs);
			symtab_free(&o->tab[0]);
			symtab_free(&o->tab[1]);
			free(o->names);
			free(o);
		}
	for (size_t i = 0; f->fns && i < f->fcap; i++)
		for (struct func *fn = f->fns[i], *n; fn; fn = n) {
			n = fn->next;
			free(fn->label);
			free(fn);
		}
	free(f->objs);
	free(f->fns);
	free(f->list);
	free(f);
}

/* ---- symbols of one file ------------------------------------------- */

/* two passes over a symbol table: count (sizes), then copy within them */
struct load {
	struct symtab *t;
	char *names;
	size_t nlen, max_n, max_len;
	int count;
};

static int rank(const struct pft_elf_sym *s)
{
	return s->global ? 0 : s->weak ? 1 : 2;
}

static int load_sym(void *arg, const struct pft_elf_sym *s)
{
	struct load *l = arg;
	size_t len = strlen(s->name) + 1;

	if (!s->size || s->value + s->size < s->value)
		return 0; /* covers nothing */
	if (l->count) {
		l->t->n++;
		l->nlen += len;
		return 0;
	}
	if (l->t->n == l->max_n || len > l->max_len - l->nlen)
		return 1; /* the file changed under us: keep what fits */
	memcpy(l->names + l->nlen, s->name, len);
	l->t->v[l->t->n++] = (struct sym){ s->value, s->value + s->size, l->names + l->nlen, rank(s) };
	l->nlen += len;
	return 0;
}

static int sym_cmp(const void *pa, const void *pb)
{
	const struct sym *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	return strcmp(a->name, b->name);
}

/* sort, drop aliases (the first of equal ranges is the preferred one) */
static int symtab_finish(struct symtab *t)
{
	size_t k = 0;

	qsort(t->v, t->n, sizeof *t->v, sym_cmp);
	for (size_t i = 0; i < t->n; i++)
		if (!k || t->v[i].lo != t->v[k - 1].lo || t->v[i].hi != t->v[k - 1].hi)
			t->v[k++] = t->v[i];
	t->n = k;
	t->maxend = malloc((k ? k : 1) * sizeof *t->maxend);
	if (!t->maxend)
		return PFLOPS_ENOMEM;
	for (size_t i = 0; i < k; i++)
		t->maxend[i] = i && t->maxend[i - 1] > t->v[i].hi ? t->maxend[i - 1] : t->v[i].hi;
	return 0;
}

static int object_load(struct object *o)
{
	struct pft_elf e;
	struct load l[2];
	size_t total = 0;
	int rc = 0;

	o->loaded = 1;
	if (!o->file || pft_elf_open(&e, o->path))
		return 0; /* no symbols: grouped by mapping */
	if (pft_elf_loads(&e, &o->segs, &o->nsegs)) {
		rc = PFLOPS_ENOMEM;
		goto out;
	}
	for (int d = 0; d < 2; d++) { /* count, then copy */
		l[d] = (struct load){ .t = &o->tab[d], .count = 1 };
		pft_elf_funcs(&e, d, load_sym, &l[d]);
		total += l[d].nlen;
	}
	o->names = malloc(total ? total : 1);
	for (int d = 0; d < 2 && o->names; d++) {
		struct symtab *t = &o->tab[d];
		t->v = malloc((t->n ? t->n : 1) * sizeof *t->v);
		if (!t->v) {
			rc = PFLOPS_ENOMEM;
			goto out;
		}
		l[d].names = o->names + (d ? l[0].nlen : 0);
		l[d].max_len = l[d].nlen;
		l[d].max_n = t->n;
		l[d].nlen = 0;
		l[d].count = 0;
		t->n = 0;
		pft_elf_funcs(&e, d, load_sym, &l[d]);
		if ((rc = symtab_finish(t)))
			goto out;
	}
	if (!o->names)
		rc = PFLOPS_ENOMEM;
out:
	pft_elf_close(&e);
	return rc;
}

static const struct sym *symtab_find(const struct symtab *t, uint64_t a)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) { /* first entry with start > a */
		size_t mid = (lo + hi) / 2;
		if (t->v[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && t->maxend[i] > a;)
		if (t->v[i].hi > a)
			return &t->v[i];
	return NULL;
}

/* the link-time address of file offset off; 0 when not in a segment */
static int object_vaddr(const struct object *o, uint64_t off, uint64_t *va)
{
	for (size_t i = 0; i < o->nsegs; i++)
		if (off >= o->segs[i].off && off - o->segs[i].off < o->segs[i].filesz) {
			*va = off - o->segs[i].off + o->segs[i].vaddr;
			return 1;
		}
	return 0;
}

/* ---- grouping ------------------------------------------------------ */

static struct object *object_get(struct pft_funcs *f, const char *path, int file)
{
	size_t h = str_hash(path) & (f->ocap - 1);
	struct object *o;

	for (o = f->objs[h]; o; o = o->next)
		if (!strcmp(o->path, path))
			return o;
	o = calloc(1, sizeof *o);
	if (!o || !(o->path = strdup(path))) {
		free(o);
		return NULL;
	}
	o->file = file;
	o->next = f->objs[h];
	f->objs[h] = o;
	return o;
}

static int grow_fns(struct pft_funcs *f)
{
	size_t nc = 2 * f->fcap;
	struct func **nt = calloc(nc, sizeof *nt);

	if (!nt)
		return PFLOPS_ENOMEM;
	for (size_t i = 0; i < f->fcap; i++)
		for (struct func *fn = f->fns[i], *n; fn; fn = n) {
			size_t h = ptr_hash(fn->obj, fn->sym) & (nc - 1);
			n = fn->next;
			fn->next = nt[h];
			nt[h] = fn;
		}
	free(f->fns);
	f->fns = nt;
	f->fcap = nc;
	return 0;
}

static struct func *func_get(struct pft_funcs *f, const struct object *o, const struct sym *s)
{
	size_t h = ptr_hash(o, s) & (f->fcap - 1);
	struct func *fn;

	for (fn = f->fns[h]; fn; fn = fn->next)
		if (fn->obj == o && fn->sym == s)
			return fn;
	if (2 * (f->nf + 1) > f->fcap) {
		if (grow_fns(f))
			return NULL;
		h = ptr_hash(o, s) & (f->fcap - 1);
	}
	fn = calloc(1, sizeof *fn);
	if (!fn)
		return NULL;
	fn->obj = o;
	fn->sym = s;
	fn->next = f->fns[h];
	f->fns[h] = fn;
	f->nf++;
	return fn;
}

static void mix_add(struct pflops_mix *d, const struct pflops_mix *s)
{
	uint64_t *a = (uint64_t *)d;
	const uint64_t *b = (const uint64_t *)s;

	_Static_assert(sizeof *d % sizeof(uint64_t) == 0, "mix: uint64_t only");
	for (size_t i = 0; i < sizeof *d / sizeof(uint64_t); i++)
		a[i] += b[i];
}

/* The object and symbol of (path, map_start, offset) as a block names
 * them; *o NULL: out of memory. */
static const struct sym *resolve(struct pft_funcs *f, const char *path, uint64_t map_start, uint64_t offset,
				 struct object **o, uint64_t *va, int *have_va)
{
	const struct sym *s = NULL;
	char label[96];

	*have_va = 0;
	if (path && path[0] == '/') {
		*o = object_get(f, path, 1);
	} else { /* anonymous memory, [vdso] ... : the mapping */
		const char *nm = path ? path : map_start ? "[anon]" : "[unmapped]";
		size_t len = strlen(nm);
		if (nm[0] == '[' && len > 2 && nm[len - 1] == ']') {
			nm++;
			len -= 2;
		}
		if (map_start)
			snprintf(label, sizeof label, "[%.*s 0x%llx]", (int)(len > 60 ? 60 : len), nm,
				 (unsigned long long)map_start);
		else
			snprintf(label, sizeof label, "[%.*s]", (int)(len > 60 ? 60 : len), nm);
		*o = object_get(f, label, 0);
	}
	if (!*o || (!(*o)->loaded && object_load(*o))) {
		*o = NULL;
		return NULL;
	}
	if ((*o)->file && (*have_va = object_vaddr(*o, offset, va)) && !(s = symtab_find(&(*o)->tab[0], *va)))
		s = symtab_find(&(*o)->tab[1], *va);
	return s;
}

void pft_funcs_add(void *funcs, const struct pft_trace_block *b)
{
	struct pft_funcs *f = funcs;
	const struct sym *s;
	struct object *o;
	struct func *fn;
	uint64_t va = 0;
	int have_va;

	if (f->oom)
		return;
	s = resolve(f, b->path, b->map_start, b->offset, &o, &va, &have_va);
	if (!o || !(fn = func_get(f, o, s))) {
		f->oom = 1;
		return;
	}
	mix_add(&fn->f.mix, b->mix);
	fn->f.blocks++;
	if (!s) { /* name the group by its hottest block */
		uint64_t fl = pflops_mix_flops(b->mix, -1);
		uint64_t at = !o->file ? b->map_start : have_va ? va : b->offset;
		if (!fn->have_hot || fl > fn->hot_flops || (fl == fn->hot_flops && at < fn->hot_addr)) {
			fn->hot_flops = fl;
			fn->hot_addr = at;
			fn->have_hot = 1;
		}
	}
}

int pft_funcs_name(struct pft_funcs *f, const char *path, uint64_t map_start, uint64_t offset, char *buf, size_t len,
		   const char **object)
{
	struct object *o;
	uint64_t va = 0;
	int have_va;
	const struct sym *s = resolve(f, path, map_start, offset, &o, &va, &have_va);

	if (!o)
		return PFLOPS_ENOMEM;
	*object = o->file ? o->path : NULL;
	if (s) {
		snprintf(buf, len, "%s", s->name);
		return 1;
	}
	if (o->file)
		snprintf(buf, len, "%s (no symbol)", strrchr(o->path, '/') + 1);
	else
		snprintf(buf, len, "%s", o->path);
	return 0;
}

static int func_cmp(const void *pa, const void *pb)
{
	const struct pft_func *a = *(const struct pft_func *const *)pa;
	const struct pft_func *b = *(const struct pft_func *const *)pb;
	/* f is struct func's first member */
	uint64_t fa = ((const struct func *)a)->flops, fb = ((const struct func *)b)->flops;
	int c;

	if (fa != fb)
		return fa > fb ? -1 : 1;
	if ((c = strcmp(a->name, b->name)))
		return c;
	return strcmp(a->object ? a->object : "", b->object ? b->object : "");
}

int pft_funcs_list(struct pft_funcs *f, const struct pft_func *const **v, size_t *n, struct pflops_error *err)
{
	size_t k = 0;

	*v = NULL;
	*n = 0;
	if (f->oom)
		return pfc_err(err, PFLOPS_ENOMEM,
			       "out of memory while grouping "
			       "the traced code by function");
	free(f->list);
	f->list = malloc((f->nf ? f->nf : 1) * sizeof *f->list);
	if (!f->list)
		return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
	for (size_t i = 0; i < f->fcap; i++)
		for (struct func *fn = f->fns[i]; fn; fn = fn->next) {
			struct pft_func *p = &fn->f;
			fn->flops = pflops_mix_flops(&p->mix, -1);
			p->object = fn->obj->file ? fn->obj->path : NULL;
			p->has_symbol = fn->sym != NULL;
			if (fn->sym) {
				p->name = fn->sym->name;
				p->addr = fn->sym->lo;
				p->size = fn->sym->hi - fn->sym->lo;
			} else if (fn->obj->file) {
				const char *base = strrchr(fn->obj->path, '/');
				free(fn->label);
				if (asprintf(&fn->label, "%s+0x%llx (no symbol)", base + 1,
					     (unsigned long long)fn->hot_addr) < 0) {
					fn->label = NULL;
					return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
				}
				p->name = fn->label;
				p->addr = fn->hot_addr;
			} else {
				p->name = fn->obj->path;
				p->addr = fn->hot_addr;
			}
			f->list[k++] = p;
		}
	qsort(f->list, k, sizeof *f->list, func_cmp);
	*v = f->list;
	*n = k;
	return 0;
}
