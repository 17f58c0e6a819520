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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_internal.h"

static int in_range(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

int pflops_elf_open(struct pflops_elf *e, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);	/* never wait on a FIFO */
	struct stat st;
	const Elf64_Ehdr *eh;
	void *p;

	memset(e, 0, sizeof *e);
	if (fd < 0)
		return PFLOPS_ENOENT;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size < sizeof *eh) {
		close(fd);
		return PFLOPS_ENOENT;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return PFLOPS_ENOENT;
	e->p = p;
	e->size = (size_t)st.st_size;
	eh = p;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh->e_phnum && (eh->e_phentsize != sizeof(Elf64_Phdr) ||
			     !in_range(e->size, eh->e_phoff,
				       (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))) ||
	    (eh->e_shnum && (eh->e_shentsize != sizeof(Elf64_Shdr) ||
			     !in_range(e->size, eh->e_shoff,
				       (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))))) {
		pflops_elf_close(e);
		return PFLOPS_ENOENT;
	}
	return 0;
}

void pflops_elf_close(struct pflops_elf *e)
{
	if (e->p)
		munmap((void *)e->p, e->size);
	memset(e, 0, sizeof *e);
}

static const Elf64_Ehdr *ehdr(const struct pflops_elf *e)
{
	return (const Elf64_Ehdr *)e->p;
}

static const Elf64_Phdr *phdr(const struct pflops_elf *e, unsigned i)
{
	return (const Elf64_Phdr *)(e->p + ehdr(e)->e_phoff) + i;
}

int pflops_elf_first_load(const struct pflops_elf *e, uint64_t *vaddr,
			  uint64_t *off)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	for (unsigned i = 0; i < ehdr(e)->e_phnum; i++)
		if (phdr(e, i)->p_type == PT_LOAD) {
			*vaddr = phdr(e, i)->p_vaddr & ~(pg - 1);
			*off = phdr(e, i)->p_offset & ~(pg - 1);
			return 0;
		}
	return PFLOPS_ENOENT;
}

int pflops_elf_loads(const struct pflops_elf *e, struct pflops_elf_seg **v,
		     size_t *n)
{
	*n = 0;
	*v = calloc(ehdr(e)->e_phnum ? ehdr(e)->e_phnum : 1, sizeof **v);
	if (!*v)
		return PFLOPS_ENOMEM;
	for (unsigned i = 0; i < ehdr(e)->e_phnum; i++) {
		const Elf64_Phdr *ph = phdr(e, i);
		if (ph->p_type == PT_LOAD)
			(*v)[(*n)++] = (struct pflops_elf_seg){
				ph->p_offset, ph->p_filesz, ph->p_vaddr };
	}
	return 0;
}

int pflops_elf_funcs(const struct pflops_elf *e, int dynamic,
		     pflops_elf_sym_fn fn, void *arg)
{
	const Elf64_Ehdr *eh = ehdr(e);
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(e->p + eh->e_shoff);
	unsigned want = dynamic ? SHT_DYNSYM : SHT_SYMTAB;
	int rc;

	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != want || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_entsize != sizeof(Elf64_Sym) ||
		    !in_range(e->size, sh[i].sh_offset, sh[i].sh_size))
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (!in_range(e->size, str->sh_offset, str->sh_size))
			continue;
		const Elf64_Sym *s = (const Elf64_Sym *)(e->p + sh[i].sh_offset);
		const char *names = (const char *)e->p + str->sh_offset;
		size_t n = sh[i].sh_size / sizeof *s;
		for (size_t j = 0; j < n; j++) {
			unsigned t = ELF64_ST_TYPE(s[j].st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
			    s[j].st_shndx == SHN_UNDEF || !s[j].st_value ||
			    s[j].st_name >= str->sh_size ||
			    !memchr(names + s[j].st_name, 0,
				    str->sh_size - s[j].st_name))
				continue;
			struct pflops_elf_sym x = {
				.name = names + s[j].st_name,
				.value = s[j].st_value, .size = s[j].st_size,
				.global = ELF64_ST_BIND(s[j].st_info) == STB_GLOBAL,
				.weak = ELF64_ST_BIND(s[j].st_info) == STB_WEAK };
			if ((rc = fn(arg, &x)))
				return rc;
		}
	}
	return 0;
}

struct find { const char *sym; uint64_t value; };

static int find_one(void *arg, const struct pflops_elf_sym *s)
{
	struct find *f = arg;

	if (strcmp(s->name, f->sym))
		return 0;
	f->value = s->value;
	return 1;
}

int pflops_elf_lookup(const char *path, const char *sym, uint64_t *value,
		      uint64_t *load_vaddr, uint64_t *load_off)
{
	struct pflops_elf e;
	struct find f = { sym, 0 };
	int rc;

	if (pflops_elf_open(&e, path))
		return PFLOPS_ENOENT;
	rc = pflops_elf_first_load(&e, load_vaddr, load_off);
	/* .symtab first (it has static functions), then .dynsym */
	if (!rc && !pflops_elf_funcs(&e, 0, find_one, &f) &&
	    !pflops_elf_funcs(&e, 1, find_one, &f))
		rc = PFLOPS_ENOENT;
	if (!rc)
		*value = f.value;
	pflops_elf_close(&e);
	return rc;
}
