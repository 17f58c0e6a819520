/*
 * tp_jit.c MODE [N [PAGES]]: JIT churn, many distinct pieces of code
 * (the code cache has 524,288 block ids a process): N small FP kernels, each
 * written once and run once, 16 to a page at a time, as a JIT replaces
 * its compiled code; the pages in turn, 512 of them by default (a page
 * the tracer sees written more than 64 times stays writable, on its
 * stopping path; the pages hold 16 x PAGES kernels not yet dropped).  Kernel i is K = 1 + i % 4 `vaddpd ymm` and
 * `mov $i, %eax; ret`: 4 K double-precision FLOPs.  Prints the FLOPs it
 * ran (the tracer must count exactly that) and exits 0 when every
 * kernel returned its own number (the new code ran each time).
 *
 *   rwx   one read-write-execute page, rewritten in place each round
 *   wx    one page, mprotect read-write to write, read-execute to run
 *   fork  rwx, the second half of the kernels in a forked child (it
 *         inherits the code cache and its ids, dropped ones included)
 *   threads  rwx while one thread spins (integer work, never a system
 *            call: it must be interrupted for the dropped code's ids to
 *            be reused) and another waits in read()
 *   keep  all N kernels kept, 32 bytes apart, written then made
 *         read-execute once, each called through a pointer: N live
 *         blocks and N lookup-table entries at once (PAGES unused)
 *   chain  the same N kernels, each `inc %eax` and a jump to the next
 *          instead of `mov $i, %eax; ret`, one call runs them all: N
 *          live blocks, one lookup-table entry (PAGES unused)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096
#define PER_PAGE 16 /* kernels a page holds at once (256 bytes each) */

typedef int (*fn_t)(void);

/* kernel i at p: its length */
static size_t emit(unsigned char *p, long i)
{
	size_t n = 0;
	int32_t v = (int32_t)i;

	for (long k = 0; k <= i % 4; k++) {
		const unsigned char add[] = { 0xc5, 0xed, 0x58, 0xc1 }; /* vaddpd %ymm1,%ymm2,%ymm0 */
		memcpy(p + n, add, 4);
		n += 4;
	}
	p[n++] = 0xb8; /* mov $i, %eax */
	memcpy(p + n, &v, 4);
	n += 4;
	p[n++] = 0xc3; /* ret */
	return n;
}

static atomic_int stop;
static int pfd[2];

static void *spin(void *arg)
{
	unsigned long x = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		x = x * 3 + 1;
	*(unsigned long *)arg = x;
	return NULL;
}

static void *wait_pipe(void *arg)
{
	char c;

	(void)arg;
	return read(pfd[0], &c, 1) == 1 ? NULL : (void *)1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "rwx";
	long n = argc > 2 ? atol(argv[2]) : 300000, bad = 0;
	unsigned long long flops = 0;
	int wx = !strcmp(mode, "wx"), thr = !strcmp(mode, "threads"), frk = !strcmp(mode, "fork");
	int keep = !strcmp(mode, "keep"), chain = !strcmp(mode, "chain");
	long half = n / 2 / PER_PAGE * PER_PAGE, pages = argc > 3 ? atol(argv[3]) : 512;
	pid_t child = -1;
	unsigned char *mem;
	unsigned long spun;
	pthread_t a, b;

	if (!__builtin_cpu_supports("avx")) { /* the kernels are vaddpd ymm */
		printf("SKIP: tp_jit: this CPU lacks AVX\n");
		return 0;
	}
	if ((!wx && !thr && !frk && !keep && !chain && strcmp(mode, "rwx")) || n < 0 || pages < 1) {
		fprintf(stderr, "usage: tp_jit rwx|wx|fork|threads|keep|chain [N [PAGES]]\n");
		return 2;
	}
	if (keep || chain) {
		/* chain: first `xor %eax,%eax; jmp` to kernel 0 */
		size_t at = chain ? 32 : 0, len = (at + (size_t)n * 32 + 1 + PG - 1) / PG * PG;
		unsigned char *k;
		mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return perror("mmap"), 2;
		k = mem + at;
		for (long i = 0; i < n; i++) {
			size_t m = emit(k + 32 * i, i);
			if (chain) { /* mov $i, %eax; ret -> inc %eax; jmp next */
				unsigned char *p = k + 32 * i + m - 6;
				int32_t rel = (int32_t)(32 - (m - 6 + 7));
				p[0] = 0xff;
				p[1] = 0xc0;
				p[2] = 0xe9;
				memcpy(p + 3, &rel, 4);
			}
		}
		if (chain) {
			const unsigned char pro[] = { 0x31, 0xc0, 0xe9, 25, 0, 0, 0 }; /* xor; jmp +25 */
			memcpy(mem, pro, sizeof pro);
			k[32 * n] = 0xc3; /* ret after the last */
		}
		if (mprotect(mem, len, PROT_READ | PROT_EXEC))
			return perror("mprotect"), 2;
		for (long i = 0; i < n; i++) {
			flops += 4 * (unsigned long long)(1 + i % 4);
			if (!chain && ((fn_t)(void *)(k + 32 * i))() != (int)i)
				bad++;
		}
		if (chain && ((fn_t)(void *)mem)() != (int)n) /* %eax: the kernels run */
			bad++;
		printf("%s %ld kernels: %llu FLOPs, %ld stale\n", mode, n, flops, bad);
		printf("flops %llu\n", flops);
		return bad != 0;
	}
	if (thr && (pipe(pfd) || pthread_create(&a, NULL, spin, &spun) || pthread_create(&b, NULL, wait_pipe, NULL))) {
		perror("threads");
		return 2;
	}
	mem = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE | (wx ? 0 : PROT_EXEC), MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (long i = 0; i < n; i += PER_PAGE) {
		long m = n - i < PER_PAGE ? n - i : PER_PAGE;
		if (frk && i == half && (child = fork()) > 0) {
			int st;
			if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) > 1)
				return fprintf(stderr, "child failed\n"), 2;
			bad += WEXITSTATUS(st);
			for (long j = i; j < n; j++) /* what it ran */
				flops += 4 * (unsigned long long)(1 + j % 4);
			break;
		}
		unsigned char *pg = mem + PG * (i / PER_PAGE % pages);
		if (wx && mprotect(pg, PG, PROT_READ | PROT_WRITE))
			return perror("mprotect"), 2;
		for (long j = 0; j < m; j++)
			emit(pg + 256 * j, i + j);
		if (wx && mprotect(pg, PG, PROT_READ | PROT_EXEC))
			return perror("mprotect"), 2;
		for (long j = 0; j < m; j++) {
			if (((fn_t)(void *)(pg + 256 * j))() != (int)(i + j))
				bad++;
			flops += 4 * (unsigned long long)(1 + (i + j) % 4);
		}
	}
	if (child == 0)
		return bad != 0;
	if (thr) {
		void *r;
		atomic_store(&stop, 1);
		if (write(pfd[1], "x", 1) != 1 || pthread_join(a, NULL) || pthread_join(b, &r) || r)
			return perror("join"), 2;
		fprintf(stderr, "spun to %lx\n", spun);
	}
	printf("%s %ld kernels: %llu FLOPs, %ld stale\n", mode, n, flops, bad);
	printf("flops %llu\n", flops);
	return bad != 0;
}
