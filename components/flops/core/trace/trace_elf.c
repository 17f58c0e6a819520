/*
 * trace_elf.c: reading the ELF files a traced process maps, for
 * --region (where a function is) and --by-function (which function an
 * address is in).  The file is mapped read-only and every offset and
 * size taken from it is checked against its length before use: the
 * files are whatever the program loads, not trusted input.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pft_arch.h"
#include "trace_elf.h"

/* off + len within size, without overflow */
static int in_range(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

/* Headers and symbols are copied out (memcpy): the file gives no
 * alignment, and no pointer is formed before its offset is checked. */
static Elf64_Ehdr ehdr(const struct pft_elf *e)
{
	Elf64_Ehdr h;

	memcpy(&h, e->p, sizeof h);
	return h;
}

/* The i-th table entry of `esz` bytes at `off` (checked at open, or by
 * the caller) into *out. */
static void entry(const struct pft_elf *e, uint64_t off, uint64_t i, size_t esz, void *out)
{
	memcpy(out, e->p + off + i * esz, esz);
}

int pft_elf_open(struct pft_elf *e, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* never wait on a FIFO */
	struct stat st;
	void *p;

	memset(e, 0, sizeof *e);
	if (fd < 0)
		return PFLOPS_ENOENT;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(Elf64_Ehdr) ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return PFLOPS_ENOENT;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return PFLOPS_ENOENT;
	e->p = p;
	e->size = (size_t)st.st_size;
	if (pft_elf_check(e)) {
		pft_elf_close(e);
		return PFLOPS_ENOENT;
	}
	return 0;
}

int pft_elf_check(const struct pft_elf *e)
{
	Elf64_Ehdr eh;

	if (e->size < sizeof eh)
		return PFLOPS_ENOENT;
	eh = ehdr(e);
	/* e_phnum, e_shnum < 2^16: the products cannot overflow */
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_phnum && (eh.e_phentsize != sizeof(Elf64_Phdr) ||
			    !in_range(e->size, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr)))) ||
	    (eh.e_shnum && (eh.e_shentsize != sizeof(Elf64_Shdr) ||
			    !in_range(e->size, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)))))
		return PFLOPS_ENOENT;
	return 0;
}

void pft_elf_close(struct pft_elf *e)
{
	if (e->p)
		munmap((void *)e->p, e->size);
	memset(e, 0, sizeof *e);
}

static Elf64_Phdr phdr(const struct pft_elf *e, unsigned i)
{
	Elf64_Phdr ph;

	entry(e, ehdr(e).e_phoff, i, sizeof ph, &ph);
	return ph;
}

static Elf64_Shdr shdr(const struct pft_elf *e, unsigned i)
{
	Elf64_Shdr sh;

	entry(e, ehdr(e).e_shoff, i, sizeof sh, &sh);
	return sh;
}

int pft_elf_first_load(const struct pft_elf *e, uint64_t *vaddr, uint64_t *off)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned n = ehdr(e).e_phnum;

	for (unsigned i = 0; i < n; i++) {
		Elf64_Phdr ph = phdr(e, i);
		if (ph.p_type == PT_LOAD) {
			*vaddr = ph.p_vaddr & ~(pg - 1);
			*off = ph.p_offset & ~(pg - 1);
			return 0;
		}
	}
	return PFLOPS_ENOENT;
}

int pft_elf_loads(const struct pft_elf *e, struct pft_elf_seg **v, size_t *n)
{
	unsigned np = ehdr(e).e_phnum;

	*n = 0;
	*v = calloc(np ? np : 1, sizeof **v);
	if (!*v)
		return PFLOPS_ENOMEM;
	for (unsigned i = 0; i < np; i++) {
		Elf64_Phdr ph = phdr(e, i);
		if (ph.p_type == PT_LOAD)
			(*v)[(*n)++] = (struct pft_elf_seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr, ph.p_flags };
	}
	return 0;
}

int pft_elf_funcs(const struct pft_elf *e, int dynamic, pft_elf_sym_fn fn, void *arg)
{
	unsigned nsh = ehdr(e).e_shnum;
	unsigned want = dynamic ? SHT_DYNSYM : SHT_SYMTAB;
	int rc;

	for (unsigned i = 0; i < nsh; i++) {
		Elf64_Shdr sh = shdr(e, i), str;
		if (sh.sh_type != want || sh.sh_link >= nsh || sh.sh_entsize != sizeof(Elf64_Sym) ||
		    !in_range(e->size, sh.sh_offset, sh.sh_size))
			continue;
		str = shdr(e, sh.sh_link);
		if (!in_range(e->size, str.sh_offset, str.sh_size))
			continue;
		const char *names = (const char *)e->p + str.sh_offset;
		uint64_t n = sh.sh_size / sizeof(Elf64_Sym);
		for (uint64_t j = 0; j < n; j++) {
			Elf64_Sym s;
			entry(e, sh.sh_offset, j, sizeof s, &s);
			unsigned t = ELF64_ST_TYPE(s.st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || !s.st_value ||
			    s.st_name >= str.sh_size || !memchr(names + s.st_name, 0, str.sh_size - s.st_name))
				continue;
			struct pft_elf_sym x = { .name = names + s.st_name,
						 .value = s.st_value,
						 .size = s.st_size,
						 .global = ELF64_ST_BIND(s.st_info) == STB_GLOBAL,
						 .weak = ELF64_ST_BIND(s.st_info) == STB_WEAK,
						 .shndx = s.st_shndx };
			if ((rc = fn(arg, &x)))
				return rc;
		}
	}
	return 0;
}

struct find {
	const char *sym;
	uint64_t value;
	unsigned shndx;
};

static int find_one(void *arg, const struct pft_elf_sym *s)
{
	struct find *f = arg;

	if (strcmp(s->name, f->sym))
		return 0;
	f->value = s->value;
	f->shndx = s->shndx;
	return 1;
}

/* The function symbol (either table) that starts closest below an
 * address and covers it: an instruction start to decode from. */
struct enclosing {
	uint64_t at, start, size;
	const char *name;
};

static int find_enclosing(void *arg, const struct pft_elf_sym *s)
{
	struct enclosing *c = arg;

	if (s->value < c->at && s->size > c->at - s->value && (!c->name || s->value > c->start)) {
		c->start = s->value;
		c->size = s->size;
		c->name = s->name;
	}
	return 0;
}

/* The file offset of link-time address v in an executable PT_LOAD
 * (its bytes in the file up to *avail); -1 when v is in none. */
static int64_t exec_offset(const struct pft_elf *e, uint64_t v, uint64_t *avail)
{
	unsigned n = ehdr(e).e_phnum;

	for (unsigned i = 0; i < n; i++) {
		Elf64_Phdr ph = phdr(e, i);
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || v < ph.p_vaddr || v - ph.p_vaddr >= ph.p_filesz ||
		    !in_range(e->size, ph.p_offset, ph.p_filesz))
			continue;
		*avail = ph.p_filesz - (v - ph.p_vaddr);
		return (int64_t)(ph.p_offset + (v - ph.p_vaddr));
	}
	return -1;
}

int pft_elf_section(const struct pft_elf *e, const char *name, uint64_t *off, uint64_t *size, uint64_t *addr)
{
	Elf64_Ehdr eh = ehdr(e);
	Elf64_Shdr str;
	size_t len = strlen(name) + 1;

	if (eh.e_shstrndx >= eh.e_shnum)
		return PFLOPS_ENOENT;
	str = shdr(e, eh.e_shstrndx);
	if (!in_range(e->size, str.sh_offset, str.sh_size))
		return PFLOPS_ENOENT;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh = shdr(e, i);
		if (sh.sh_name >= str.sh_size || str.sh_size - sh.sh_name < len ||
		    memcmp(e->p + str.sh_offset + sh.sh_name, name, len) || sh.sh_type == SHT_NOBITS ||
		    !in_range(e->size, sh.sh_offset, sh.sh_size))
			continue;
		*off = sh.sh_offset;
		*size = sh.sh_size;
		*addr = sh.sh_addr;
		return 0;
	}
	return PFLOPS_ENOENT;
}

/* Decode from `from` (an instruction start) towards v: the address of
 * the first instruction that does not start before v (v itself when v
 * is an instruction start), and *at the start of the one before it; 0
 * when the code does not decode up to v. */
static uint64_t walk(const struct pft_elf *e, uint64_t from, uint64_t v, uint64_t *at)
{
	struct pft_insn in;
	uint64_t avail, a = from;
	int64_t off = exec_offset(e, from, &avail);

	*at = from;
	if (off < 0)
		return 0;
	while (a < v) {
		uint64_t k = a - from;
		if (k >= avail ||
		    pfc_decode(e->p + off + k, avail - k < PFT_INSN_MAX ? avail - k : PFT_INSN_MAX, a, &in))
			return 0;
		*at = a;
		a += in.len;
	}
	return a;
}

/* Is the function symbol at `v` (section shndx) an instruction start?
 * An int3 planted inside an instruction changes what the program runs,
 * so what cannot be shown is refused: v must be in an executable
 * section and segment, be reached by decoding from the start of any
 * function symbol, and of the .eh_frame entry, that covers it, and
 * decode. */
static void check_entry(const struct pft_elf *e, const char *path, uint64_t v, unsigned shndx, struct pft_elf_hit *h)
{
	Elf64_Ehdr eh = ehdr(e);
	struct pft_insn in;
	uint64_t avail, from[2], last;
	const char *what[2];
	int64_t off;
	int n = 0;

	if (shndx >= eh.e_shnum ||
	    ((shdr(e, shndx).sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))) {
		snprintf(h->why, sizeof h->why, "its address 0x%llx in %s is not in an executable section",
			 (unsigned long long)v, path);
		return;
	}
	if ((off = exec_offset(e, v, &avail)) < 0) {
		snprintf(h->why, sizeof h->why, "its address 0x%llx in %s is not in an executable segment of the file",
			 (unsigned long long)v, path);
		return;
	}
	h->ncode = avail < sizeof h->code ? (size_t)avail : sizeof h->code;
	memcpy(h->code, e->p + off, h->ncode);

	/* the instruction starts known besides the symbol itself */
	struct enclosing c = { v, 0, 0, NULL };
	pft_elf_funcs(e, 0, find_enclosing, &c);
	pft_elf_funcs(e, 1, find_enclosing, &c);
	if (c.name) {
		from[n] = c.start;
		what[n++] = c.name;
	}
	if (!pft_cfi_enclosing(e, v, &from[n]) && (!n || from[n] != from[0]))
		what[n++] = "its .eh_frame entry";
	for (int i = 0; i < n; i++) {
		uint64_t a = walk(e, from[i], v, &last);
		if (a == v)
			continue;
		if (a > v)
			snprintf(h->why, sizeof h->why,
				 "its address 0x%llx in %s is %llu byte%s into an instruction "
				 "(at 0x%llx) of %s%s (which starts at 0x%llx): the symbol table is wrong",
				 (unsigned long long)v, path, (unsigned long long)(v - last), v - last == 1 ? "" : "s",
				 (unsigned long long)last, i == 0 && c.name ? "" : "the code of ", what[i],
				 (unsigned long long)from[i]);
		else
			snprintf(h->why, sizeof h->why,
				 "its address 0x%llx in %s is inside %s (at 0x%llx), whose "
				 "instructions do not decode up to it",
				 (unsigned long long)v, path, what[i], (unsigned long long)from[i]);
		return;
	}
	if (pfc_decode(h->code, h->ncode, v, &in))
		snprintf(h->why, sizeof h->why, "the bytes at its address 0x%llx in %s do not decode as an instruction",
			 (unsigned long long)v, path);
}

int pft_elf_lookup_e(const struct pft_elf *e, const char *path, const char *sym, struct pft_elf_hit *h)
{
	struct find f = { sym, 0, 0 };

	memset(h, 0, sizeof *h);
	if (pft_elf_first_load(e, &h->load_vaddr, &h->load_off))
		return PFLOPS_ENOENT;
	/* .symtab first (it has static functions), then .dynsym */
	if (!pft_elf_funcs(e, 0, find_one, &f) && !pft_elf_funcs(e, 1, find_one, &f))
		return PFLOPS_ENOENT;
	h->value = f.value;
	check_entry(e, path, f.value, f.shndx, h);
	return 0;
}

int pft_elf_lookup(const char *path, const char *sym, struct pft_elf_hit *h)
{
	struct pft_elf e;
	int rc;

	if (pft_elf_open(&e, path))
		return PFLOPS_ENOENT;
	rc = pft_elf_lookup_e(&e, path, sym, h);
	pft_elf_close(&e);
	return rc;
}
