/*
 * calib_hook.c: a library loaded without the dynamic loader, announced
 * through a loader hook of more than one instruction.
 *
 * usage: calib_hook LIB ADDR N
 *   maps LIB's PT_LOAD segments itself (as ld.so would), calls its own
 *   _dl_debug_state (endbr64; nop; ret: as in CET builds of glibc, where
 *   Ubuntu 24.04's is endbr64; ret and Debian 12's a lone ret), then
 *   calls the function at LIB's address ADDR (hex, from nm) as
 *   double f(long) with N and prints the result.
 *
 * --region on that function finds it only through the hook: the main
 * thread runs natively before the region, and stops only at int3s.  The
 * tracer plants the hook's at the end of its block, here the `ret`
 * 5 bytes past its start (ctests/test_region_entry.sh).
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

void _dl_debug_state(void);
__asm__(".text\n"
	".globl _dl_debug_state\n"
	".type _dl_debug_state, @function\n"
	"_dl_debug_state:\n"
	"	endbr64\n"
	"	nop\n"
	"	ret\n"
	".size _dl_debug_state, .-_dl_debug_state\n");

static int prot_of(uint32_t f)
{
	return (f & PF_R ? PROT_READ : 0) | (f & PF_W ? PROT_WRITE : 0) | (f & PF_X ? PROT_EXEC : 0);
}

int main(int argc, char **argv)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[32];
	uint64_t lo = UINT64_MAX, hi = 0, pg = (uint64_t)sysconf(_SC_PAGESIZE);
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: calib_hook LIB ADDR N\n");
		return 2;
	}
	if ((fd = open(argv[1], O_RDONLY)) < 0 || pread(fd, &eh, sizeof eh, 0) != sizeof eh || eh.e_phnum > 32 ||
	    pread(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff) != (ssize_t)(eh.e_phnum * sizeof *ph)) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			lo = ph[i].p_vaddr < lo ? ph[i].p_vaddr : lo;
			hi = ph[i].p_vaddr + ph[i].p_memsz > hi ? ph[i].p_vaddr + ph[i].p_memsz : hi;
		}
	lo &= ~(pg - 1);
	/* the span first, then each segment over it, as ld.so does */
	uint8_t *base = mmap(NULL, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	base -= lo;
	for (int i = 0; i < eh.e_phnum; i++) {
		uint64_t skip;
		if (ph[i].p_type != PT_LOAD)
			continue;
		skip = ph[i].p_vaddr & (pg - 1);
		if (ph[i].p_filesz == 0) /* all .bss: the span's pages (unused here) */
			continue;
		if (mmap(base + ph[i].p_vaddr - skip, ph[i].p_filesz + skip, prot_of(ph[i].p_flags),
			 MAP_PRIVATE | MAP_FIXED, fd, (off_t)(ph[i].p_offset - skip)) == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	}
	_dl_debug_state();
	double (*f)(long) = (double (*)(long))(void *)(base + strtoull(argv[2], NULL, 16));
	printf("%.6f\n", f(atol(argv[3])));
	return 0;
}
