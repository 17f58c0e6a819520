/*
 * calib_jit.c: code written at run time, as a JIT writes it.
 *
 *   calib_jit N   writes "N x vaddpd ymm" into a fresh page and calls it;
 *                 makes the page writable, rewrites the instruction into
 *                 vmulpd, makes it executable again and calls it; then
 *                 unmaps the page, maps a new one at the same address
 *                 with vsubpd in it and calls that.  Expected: N each of
 *                 vaddpd, vmulpd and vsubpd ymm (the tracer must drop
 *                 what it decoded when the code changes).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* 1: vXXXpd %ymm1,%ymm2,%ymm0; dec %rdi; jnz 1b; ret */
static const unsigned char loop[] = { 0xc5, 0xed, 0x58, 0xc1, 0x48, 0xff, 0xcf, 0x75, 0xf7, 0xc3 };
enum { OP = 2, ADD = 0x58, MUL = 0x59, SUB = 0x5c };

typedef void (*fn)(long);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	unsigned char *p;

	if (n < 1)
		return 2;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 3;
	memcpy(p, loop, sizeof loop);
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 3;
	((fn)p)(n);

	if (mprotect(p, 4096, PROT_READ | PROT_WRITE))
		return 3;
	p[OP] = MUL;
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 3;
	((fn)p)(n);

	if (munmap(p, 4096) ||
	    mmap(p, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p)
		return 3;
	memcpy(p, loop, sizeof loop);
	p[OP] = SUB;
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 3;
	((fn)p)(n);
	return 0;
}
