/*
 * trace_elf.h: the region function (trace_region.c), the ELF files it is looked up
 * in (trace_elf.c) and their unwind tables (trace_cfi.c)
 */
#ifndef PFT_TRACE_ELF_H
#define PFT_TRACE_ELF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "pflops_trace.h"

struct pft_region;

/* trace_region.c */
/* the region's symbol was found in some object of the process */
int pft_region_found(const struct pft_region *r);
struct pft_region *pft_region_new(const char *sym);
void pft_region_free(struct pft_region *r);
struct pft_region *pft_region_copy(const struct pft_region *r);
int pft_region_is_entry(struct pft_region *r, pid_t pid, uint64_t pc);
/* Re-read the maps and find the region symbol (and the dynamic loader's
 * notification hook) in files mapped since the last call.  New
 * addresses go to *found (entries first, then hooks; *nentries of them
 * are entries), to be armed with breakpoints. */
int pft_region_scan(struct pft_region *r, pid_t pid, uint64_t **found, size_t *nfound, size_t *nentries);
int pft_region_is_hook(const struct pft_region *r, uint64_t pc);
void pft_region_hook_armed(struct pft_region *r, uint64_t at);
/* why an entry of the function was not armed (the first reason), or NULL */
const char *pft_region_refused(const struct pft_region *r);

/* trace_elf.c: ELF files mapped by the traced process. */
struct pft_elf {
	const uint8_t *p; /* the whole file, mapped read-only */
	size_t size;
};
struct pft_elf_sym {
	const char *name;
	uint64_t value, size;
	int global, weak; /* binding: STB_GLOBAL, STB_WEAK (else local) */
	unsigned shndx;	  /* its section */
};
/* fn returns nonzero to stop the walk (that value is returned) */
typedef int (*pft_elf_sym_fn)(void *arg, const struct pft_elf_sym *s);
/* 0, or PFLOPS_ENOENT: missing, unreadable, not a 64-bit ELF file */
int pft_elf_open(struct pft_elf *e, const char *path);
/* e->p, e->size hold a file (any bytes): 0 when its headers are in
 * bounds (what pft_elf_open checks; the fuzz harness's entry point) */
int pft_elf_check(const struct pft_elf *e);
void pft_elf_close(struct pft_elf *e);
/* defined functions (STT_FUNC, STT_GNU_IFUNC, value != 0) of the
 * .symtab sections (dynamic = 0) or the .dynsym ones (dynamic = 1) */
int pft_elf_funcs(const struct pft_elf *e, int dynamic, pft_elf_sym_fn fn, void *arg);
/* the page-aligned vaddr and file offset of the first PT_LOAD */
int pft_elf_first_load(const struct pft_elf *e, uint64_t *vaddr, uint64_t *off);
/* the PT_LOAD segments, *v malloc'ed: a file offset `off` in one of
 * them is link-time address (the symbols' address space)
 * off - seg.off + seg.vaddr */
struct pft_elf_seg {
	uint64_t off, filesz, vaddr;
	uint32_t flags;
};
int pft_elf_loads(const struct pft_elf *e, struct pft_elf_seg **v, size_t *n);
/* A defined function `sym` in a file (.symtab first, then .dynsym): its
 * st_value, the page-aligned vaddr/offset of the first PT_LOAD (for the
 * load bias), and its first bytes in the file.  why[0] != 0: its address
 * is not an instruction start, or cannot be shown to be one (not in an
 * executable segment, inside an instruction of an enclosing function,
 * not decodable): a sentence naming the file and the reason; no int3 may
 * go there. */
struct pft_elf_hit {
	uint64_t value, load_vaddr, load_off;
	uint8_t code[16]; /* the file's bytes at value */
	size_t ncode;
	char why[320];
};
/* a section by name: its file offset, size and link-time address */
int pft_elf_section(const struct pft_elf *e, const char *name, uint64_t *off, uint64_t *size, uint64_t *addr);
/* trace_cfi.c: the start of the .eh_frame entry (a function's unwind
 * information) that covers link-time address v and starts below it;
 * -1 when none does */
int pft_cfi_enclosing(const struct pft_elf *e, uint64_t v, uint64_t *start);
int pft_elf_lookup_e(const struct pft_elf *e, const char *path, const char *sym, struct pft_elf_hit *h);
int pft_elf_lookup(const char *path, const char *sym, struct pft_elf_hit *h);

#endif
