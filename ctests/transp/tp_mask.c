/*
 * tp_mask.c N [nosum|sig|threads|fork]: a function of masked AVX-512 double-precision
 * arithmetic (opmasks k1, k2 that change every turn) that reads its own
 * code while it runs: halfway through its N turns it calls back, and the
 * callback checksums the function's bytes (FNV-1a) and counts its 0xCC
 * bytes.  A tracer that planted an int3 in that code shows up there
 * (issue 19: "a function with masked AVX-512 checksums differently").
 * Prints the checksum, the int3 bytes, and the function's exact DP FLOPs
 * (active lanes: 3 per k1 bit, 2 per k2 bit; 1 per k2 bit of them in
 * tp_kern_leaf), the program's only floating-point work.  nosum: the checksum line says "not printed"
 * (the stopping engine plants an int3 at every block's end, masked or
 * not).  sig: a profiling timer interrupts the function every 200 us
 * of CPU time (the tracer puts a thread stopped inside a copy back where
 * it is and counts what ran); the handler does no floating point and
 * its count goes to stderr.  threads: 3 threads run the function at
 * once, each with its own opmasks, while the main thread checksums it;
 * fork: a child runs it, then the parent (the FLOPs printed are those
 * of all of them).  Without AVX-512F (or with PFLOPS_CPU_HIDE naming it): a SKIP
 * line and exit 0.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* tp_kern(n, masks, hook, half): n turns; masks: 2 bytes a turn (k1,
 * k2); hook called at the turn where n == half.  Blocks: the masks set
 * (no FP), then a block using k1 that ends with a direct call, a leaf
 * using k2 that ends with ret, and a block using k2 that ends with the
 * loop's jnz: the opmasks are never written where they are used. */
__asm__(".text\n"
	".globl tp_kern\n"
	".type tp_kern, @function\n"
	"tp_kern:\n"
	"	push %rbx\n"
	"	push %r12\n"
	"	push %r13\n"
	"	push %r14\n"
	"	sub $8, %rsp\n"
	"	mov %rdi, %rbx\n"
	"	mov %rsi, %r12\n"
	"	mov %rdx, %r13\n"
	"	mov %rcx, %r14\n"
	"	test %rbx, %rbx\n"
	"	jz 9f\n"
	"1:	cmp %rbx, %r14\n"
	"	jne 2f\n"
	"	call *%r13\n"
	"2:	vpxord %zmm1, %zmm1, %zmm1\n"
	"	vpxord %zmm2, %zmm2, %zmm2\n"
	"	movzbl (%r12), %eax\n"
	"	kmovw %eax, %k1\n"
	"	movzbl 1(%r12), %eax\n"
	"	kmovw %eax, %k2\n"
	"	add $2, %r12\n"
	"	jmp 3f\n"
	"3:	vaddpd %zmm1, %zmm2, %zmm0{%k1}\n"
	"	vfmadd231pd %zmm1, %zmm2, %zmm3{%k1}\n"
	"	call tp_kern_leaf\n"
	"	vsubpd %zmm1, %zmm2, %zmm0{%k2}\n"
	"	dec %rbx\n"
	"	jnz 1b\n"
	"9:	vzeroupper\n"
	"	add $8, %rsp\n"
	"	pop %r14\n"
	"	pop %r13\n"
	"	pop %r12\n"
	"	pop %rbx\n"
	"	ret\n"
	".size tp_kern, tp_kern_leaf - tp_kern\n"
	".type tp_kern_leaf, @function\n"
	"tp_kern_leaf:\n"
	"	vmulpd %zmm1, %zmm2, %zmm0{%k2}{z}\n"
	"	ret\n"
	".globl tp_kern_end\n"
	"tp_kern_end:\n"
	".size tp_kern_leaf, tp_kern_end - tp_kern_leaf\n");

void tp_kern(long n, const uint8_t *masks, void (*hook)(void), long half);
extern const uint8_t tp_kern_end[];

static uint32_t sum;
static int int3s;
static volatile sig_atomic_t ticks;

static void tick(int sig)
{
	(void)sig;
	ticks++;
}

static void hook(void)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)tp_kern;

	sum = 2166136261u;
	int3s = 0;
	for (; p < tp_kern_end; p++) {
		sum = (sum ^ *p) * 16777619u;
		int3s += *p == 0xcc;
	}
}

static void nohook(void)
{
}

static long n_turns;
static const uint8_t *turn_masks;

static void *worker(void *arg)
{
	(void)arg;
	tp_kern(n_turns, turn_masks, nohook, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *hide = getenv("PFLOPS_CPU_HIDE");
	long n = argc > 1 ? atol(argv[1]) : 20000;
	const char *mode = argc > 2 ? argv[2] : "";
	int nosum = !strcmp(mode, "nosum"), sig = !strcmp(mode, "sig");
	uint64_t flops = 0, leaf = 0;
	uint8_t *m;

	if (!__builtin_cpu_supports("avx512f") || (hide && strstr(hide, "avx512"))) {
		printf("SKIP: tp_mask: this CPU lacks AVX-512F\n");
		return 0;
	}
	if (n < 1 || !(m = malloc(2 * (size_t)n))) {
		fprintf(stderr, "usage: tp_mask N [nosum] (N >= 1)\n");
		return 2;
	}
	for (long i = 0; i < 2 * n; i++) {
		uint64_t h = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull;
		m[i] = (uint8_t)(h >> 56);
		flops += (uint64_t)__builtin_popcount(m[i]) * (i % 2 ? 2 : 3);
		leaf += i % 2 ? (uint64_t)__builtin_popcount(m[i]) : 0;
	}
	if (sig) {
		struct sigaction sa;
		struct itimerval it = { { 0, 200 }, { 0, 200 } };
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = tick;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGPROF, &sa, NULL);
		setitimer(ITIMER_PROF, &it, NULL);
	}
	if (!strcmp(mode, "threads")) {
		pthread_t th[3];
		n_turns = n;
		turn_masks = m;
		for (int i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, worker, NULL);
		hook();
		for (int i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		flops *= 3;
		leaf *= 3;
	} else if (!strcmp(mode, "fork")) {
		int st;
		pid_t c = fork();
		if (c == 0) {
			tp_kern(n, m, nohook, 0);
			_exit(0);
		}
		waitpid(c, &st, 0);
		tp_kern(n, m, hook, n / 2 + 1);
		flops *= 2;
		leaf *= 2;
	} else {
		tp_kern(n, m, hook, n / 2 + 1);
	}
	if (sig) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_PROF, &off, NULL);
		fprintf(stderr, "tp_mask: %d timer signals\n", (int)ticks);
	}
	if (nosum)
		printf("code checksum: not printed\n");
	else
		printf("code checksum: %08x, int3 bytes: %d\n", sum, int3s);
	printf("flops %llu, tp_kern_leaf %llu\n", (unsigned long long)flops, (unsigned long long)leaf);
	free(m);
	return 0;
}
