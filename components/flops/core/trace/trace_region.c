/*
 * trace_region.c: where the --region function lives in a traced process.
 *
 * The function may be in the executable or in any shared library, loaded
 * at startup or later: /proc/PID/maps is read again and each newly
 * mapped file searched (.symtab, then .dynsym) at the exec, each time
 * the dynamic loader reports a change (HOOK_SYM), and when a block is
 * decoded outside every mapping seen so far.  The engine arms each new
 * entry with an int3 (pft_region_scan), so that threads running
 * natively outside the region stop when they call it.
 * Runtime address = st_value + load bias, where the bias is the mapping
 * start of the file's first PT_LOAD minus that segment's page-aligned
 * vaddr (0 for a non-PIE executable).  The ELF reading is trace_elf.c's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "pft_arch.h"
#include "trace_elf.h"
#include "trace_space.h"

struct range {
	uint64_t lo, hi;
};

/* glibc's dynamic loader calls this (empty) function after every change
 * of the loaded objects, at start-up and at dlopen/dlclose; debuggers
 * put a breakpoint there, and so do we (threads running natively would
 * otherwise call a function of a library loaded later unseen). */
#define HOOK_SYM "_dl_debug_state"

struct pft_region {
	char *sym;
	struct range *maps; /* executable mappings seen */
	size_t nmaps;
	char **files; /* files searched */
	size_t nfiles;
	uint64_t *entries; /* runtime addresses of sym */
	size_t nentries;
	uint64_t *hooks; /* runtime addresses of HOOK_SYM */
	size_t nhooks;
	uint64_t *hook_ints; /* where their int3s are: the block's last
			      * instruction, not its start where the hook
			      * begins with endbr64 (CET builds of glibc) */
	size_t nhook_ints;
	size_t armed_e, armed_h; /* returned by pft_region_scan */
	char *refused;		 /* why an entry was not armed (first one) */
};

struct pft_region *pft_region_new(const char *sym)
{
	struct pft_region *r = calloc(1, sizeof *r);

	if (r && !(r->sym = strdup(sym))) {
		free(r);
		r = NULL;
	}
	return r;
}

int pft_region_found(const struct pft_region *r)
{
	return r && r->nentries > 0;
}

const char *pft_region_refused(const struct pft_region *r)
{
	return r ? r->refused : NULL;
}

void pft_region_free(struct pft_region *r)
{
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	free(r->maps);
	free(r->entries);
	free(r->hooks);
	free(r->hook_ints);
	free(r->refused);
	free(r->sym);
	free(r);
}

static void *dup_mem(const void *p, size_t n)
{
	void *q = n ? malloc(n) : NULL;
	if (q)
		memcpy(q, p, n);
	return q;
}

/* A forked child has the same mappings, hence the same addresses. */
struct pft_region *pft_region_copy(const struct pft_region *r)
{
	struct pft_region *c = pft_region_new(r->sym);

	if (!c)
		return NULL;
	c->maps = dup_mem(r->maps, r->nmaps * sizeof *r->maps);
	c->entries = dup_mem(r->entries, r->nentries * sizeof *r->entries);
	c->hooks = dup_mem(r->hooks, r->nhooks * sizeof *r->hooks);
	c->hook_ints = dup_mem(r->hook_ints, r->nhook_ints * sizeof *r->hook_ints);
	c->files = calloc(r->nfiles + 1, sizeof *c->files);
	if ((r->nmaps && !c->maps) || (r->nentries && !c->entries) || (r->nhooks && !c->hooks) ||
	    (r->nhook_ints && !c->hook_ints) || !c->files) {
		pft_region_free(c);
		return NULL;
	}
	c->nmaps = r->nmaps;
	c->nentries = r->nentries;
	c->nhooks = r->nhooks;
	c->nhook_ints = r->nhook_ints;
	c->armed_e = r->armed_e;
	c->armed_h = r->armed_h;
	if (r->refused)
		c->refused = strdup(r->refused);
	for (size_t i = 0; i < r->nfiles; i++)
		if ((c->files[c->nfiles] = strdup(r->files[i])))
			c->nfiles++;
	return c;
}

static int seen_file(struct pft_region *r, const char *path)
{
	for (size_t i = 0; i < r->nfiles; i++)
		if (!strcmp(r->files[i], path))
			return 1;
	return 0;
}

static void add_file(struct pft_region *r, const char *path)
{
	char **n = realloc(r->files, (r->nfiles + 1) * sizeof *n);
	if (!n)
		return;
	r->files = n;
	if ((n[r->nfiles] = strdup(path)))
		r->nfiles++;
}

static int add_addr(uint64_t **v, size_t *n, uint64_t a)
{
	uint64_t *nv = realloc(*v, (*n + 1) * sizeof *nv);
	if (!nv)
		return -1;
	*v = nv;
	nv[(*n)++] = a;
	return 0;
}

static void refuse(struct pft_region *r, const char *why)
{
	if (!r->refused)
		r->refused = strdup(why);
}

/* The file's code as the process has it at `at`: the same bytes as the
 * file on disk (else the file changed since it was mapped, and its
 * symbols may not describe the code).  A breakpoint's byte in memory
 * matches any byte: it may be one of the tracer's (block ends, the
 * loader hook). */
static int same_code(pid_t pid, uint64_t at, const struct pft_elf_hit *h)
{
	const uint8_t *brk = pft_arch_brk_bytes();
	uint8_t m[sizeof h->code];
	struct iovec l = { m, h->ncode }, rv = { (void *)(uintptr_t)at, h->ncode };

	if (process_vm_readv(pid, &l, 1, &rv, 1, 0) != (ssize_t)h->ncode)
		return 0;
	for (size_t i = 0; i < h->ncode; i++)
		if (m[i] != h->code[i] && m[i] != brk[(at + i) % PFT_BRK_LEN])
			return 0;
	return 1;
}

/* A function found in a mapped file: where it is in the process, or a
 * refusal when its address is not an instruction start or the file on
 * disk is not the one mapped (replaced during the run: the maps say
 * "(deleted)", or the code differs). */
static void add_entry(struct pft_region *r, pid_t pid, const char *path, const struct pft_elf_hit *h, uint64_t bias,
		      int deleted)
{
	char why[512];
	uint64_t at = h->value + bias;

	/* (no inode comparison: on overlayfs the maps show the lower
	 * file's, stat the overlay's) */
	if (h->why[0]) {
		snprintf(why, sizeof why, "%s", h->why);
	} else if (deleted) {
		snprintf(why, sizeof why,
			 "%s on disk is not the file the program mapped (replaced after it was loaded): "
			 "its symbols may not describe the code that runs",
			 path);
	} else if (!same_code(pid, at, h)) {
		snprintf(why, sizeof why,
			 "the code at its address 0x%llx in the program differs from %s on disk "
			 "(the file was changed after it was loaded)",
			 (unsigned long long)h->value, path);
	} else {
		add_addr(&r->entries, &r->nentries, at);
		return;
	}
	refuse(r, why);
}

/* Re-read the maps: remember executable ranges, search new files. */
static void reload(struct pft_region *r, pid_t pid)
{
	static const char del[] = " (deleted)";
	char fn[64], line[4096 + 256];
	FILE *f;

	snprintf(fn, sizeof fn, "/proc/%d/maps", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		return;
	r->nmaps = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi, off;
		char perm[8];
		int path_at = 0, deleted = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perm, &off, &path_at) < 4 || !path_at)
			continue;
		char *path = line + path_at;
		path[strcspn(path, "\n")] = 0;
		size_t len = strlen(path);
		if (len > sizeof del - 1 && !strcmp(path + len - (sizeof del - 1), del)) {
			path[len - (sizeof del - 1)] = 0; /* replaced on disk */
			deleted = 1;
		}
		if (perm[2] == 'x') {
			struct range *n = realloc(r->maps, (r->nmaps + 1) * sizeof *n);
			if (n) {
				r->maps = n;
				n[r->nmaps++] = (struct range){ lo, hi };
			}
		}
		if (path[0] != '/' || seen_file(r, path))
			continue;
		struct pft_elf_hit hs, hh;
		int have_sym = pft_elf_lookup(path, r->sym, &hs) == 0;
		int have_hook = pft_elf_lookup(path, HOOK_SYM, &hh) == 0;
		/* the bias comes from the mapping of the first PT_LOAD, the
		 * file's first mapping: look again when it is listed */
		if ((have_sym && off != hs.load_off) || (have_hook && off != hh.load_off))
			continue;
		if (have_sym)
			add_entry(r, pid, path, &hs, lo - hs.load_vaddr, deleted);
		/* the hook is the loader's, trusted as is (an int3 at the end
		 * of its block, found by decoding from its start) */
		if (have_hook)
			add_addr(&r->hooks, &r->nhooks, hh.value + (lo - hh.load_vaddr));
		add_file(r, path);
	}
	fclose(f);
}

int pft_region_scan(struct pft_region *r, pid_t pid, uint64_t **found, size_t *nfound, size_t *nentries)
{
	size_t ne, nh;

	if (pid)
		reload(r, pid);
	ne = r->nentries - r->armed_e;
	nh = r->nhooks - r->armed_h;
	*found = NULL;
	*nfound = *nentries = 0;
	if (!ne && !nh)
		return 0;
	*found = malloc((ne + nh) * sizeof **found);
	if (!*found)
		return PFLOPS_ENOMEM;
	if (ne)
		memcpy(*found, r->entries + r->armed_e, ne * sizeof **found);
	if (nh)
		memcpy(*found + ne, r->hooks + r->armed_h, nh * sizeof **found);
	*nfound = ne + nh;
	*nentries = ne;
	r->armed_e = r->nentries;
	r->armed_h = r->nhooks;
	return 0;
}

/* The engine armed a hook's block with an int3 at `at`, its last
 * instruction: a thread running natively stops there, not at the hook's
 * start (they differ where the hook is `endbr64; ret`, as in Ubuntu
 * 24.04's loader; Debian 12's is a lone `ret`). */
void pft_region_hook_armed(struct pft_region *r, uint64_t at)
{
	if (!pft_region_is_hook(r, at))
		add_addr(&r->hook_ints, &r->nhook_ints, at);
}

/* pc is the loader hook: its start (a block entered there) or the int3
 * that ends its block */
int pft_region_is_hook(const struct pft_region *r, uint64_t pc)
{
	for (size_t i = 0; i < r->nhooks; i++)
		if (r->hooks[i] == pc)
			return 1;
	for (size_t i = 0; i < r->nhook_ints; i++)
		if (r->hook_ints[i] == pc)
			return 1;
	return 0;
}

/* Is pc the region function's entry?  (Executable mappings not seen
 * before are searched first, so that a library loaded later is found
 * by the first block decoded in it.) */
int pft_region_is_entry(struct pft_region *r, pid_t pid, uint64_t pc)
{
	size_t i;

	for (i = 0; i < r->nmaps; i++)
		if (pc >= r->maps[i].lo && pc < r->maps[i].hi)
			break;
	if (i == r->nmaps)
		reload(r, pid);
	for (i = 0; i < r->nentries; i++)
		if (r->entries[i] == pc)
			return 1;
	return 0;
}
