/*
 * tp_ret.c MODE [N]: returns that do not go back where their call was
 * made, and deep recursion (what a return predictor of any fixed size
 * would see wrap: docs/trace-engine.md, "The program's own time in the
 * cache"), each with FP work on the way (one `addsd`, 1 DP FLOP, per fl()).  The
 * program counts the FLOPs it runs; it prints them with results that
 * depend on the path taken, so a wrong return shows natively-vs-traced.
 *
 *   longjmp    recursion 20 to 69 deep, longjmp from the bottom to the top
 *   ucontext   two coroutines switching with swapcontext, nested calls in each
 *   overwrite  functions (asm) that overwrite their own return address,
 *              and their caller's
 *   deep       recursion 1000 deep, 300 deep to a fork
 *              whose child unwinds too
 *   signal     calls and returns under a 2 kHz timer whose handler
 *              runs nested calls and siglongjmps out of some; the count
 *              (it depends on the signals) goes to stderr, stdout says
 *              only that the work is right
 *   rewrite    code on a page that calls a helper which rewrites that
 *              code (W^X, mprotect) before it returns into it: the new
 *              code runs (the call's copy was dropped while its return
 *              was pending; the helper runs new code on another page
 *              before it returns, so that with few block ids the
 *              dropped copy is gone by then)
 *   threads    longjmp, overwrite and deep in 4 threads at once
 *   sites      one `ret` whose target changes at every call (three
 *              callers in turn) and one indirect call whose target
 *              does (four functions at random): a guess of a site's
 *              target (its first, its last: docs/trace-engine.md,
 *              "Per-site prediction") is wrong at nearly every run,
 *              and must be checked before it is taken
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

static __thread double acc;
static __thread long flops;

/* one FLOP, counted */
static inline void fl(void)
{
	double x = acc;
	__asm__ volatile("addsd %1, %0" : "+x"(x) : "x"(1.0));
	acc = x;
	flops++;
}

/* ---- longjmp out of deep recursion ---- */
static __thread jmp_buf jb;

__attribute__((noinline)) static void dive(int d)
{
	if (d < 0)
		return;
	fl();
	if (d > 0)
		dive(d - 1);
	else
		longjmp(jb, 1);
	fl(); /* never: the longjmp skips it */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void dive_from(int d)
{
	if (!setjmp(jb))
		dive(d);
}

static void run_longjmp(long n)
{
	for (long i = 0; i < n; i++)
		dive_from(20 + (int)(i % 50));
}

/* ---- a return address overwritten ---- */
/* tp_hop(x, y): calls tp_inner, which returns to tp_alt instead of
 * back into tp_hop: x + 3y.  tp_up(x, y): calls tp_pick, which returns
 * to tp_up's caller's return site of an earlier call (tp_site2), one
 * frame up: x + 2y. */
double tp_hop(double x, double y);
double tp_up(double x, double y);
__asm__(".text\n"
	".globl tp_hop\n"
	"tp_hop:\n"
	"	call tp_inner\n"
	"	addsd %xmm1, %xmm0\n" /* never: tp_inner goes to tp_alt */
	"	ret\n"
	"tp_inner:\n"
	"	leaq tp_alt(%rip), %rax\n"
	"	movq %rax, (%rsp)\n"
	"	ret\n"
	"tp_alt:\n"
	"	addsd %xmm1, %xmm0\n"
	"	addsd %xmm1, %xmm0\n"
	"	addsd %xmm1, %xmm0\n"
	"	ret\n"
	".globl tp_up\n"
	"tp_up:\n"
	"	subq $8, %rsp\n"
	"	call tp_mid\n" /* pushes tp_site1 */
	"tp_site1:\n"
	"	addsd %xmm1, %xmm0\n" /* never */
	"	addsd %xmm1, %xmm0\n"
	"	addsd %xmm1, %xmm0\n"
	"	addq $8, %rsp\n"
	"	ret\n"
	"tp_mid:\n"
	"	call tp_pick\n" /* pushes tp_site2 */
	"tp_site2:\n"
	"	addsd %xmm1, %xmm0\n"
	"	ret\n" /* to tp_site1 + 4: skips its first addsd */
	"tp_pick:\n"
	"	addsd %xmm1, %xmm0\n"
	"	leaq tp_site1+4(%rip), %rax\n"
	"	movq %rax, 8(%rsp)\n" /* tp_mid's own return, one frame up */
	"	ret\n");

static double run_overwrite(long n)
{
	double s = 0;

	for (long i = 0; i < n; i++) {
		s += tp_hop((double)i, 0.5); /* 3 FLOPs there, 1 here */
		s += tp_up((double)i, 0.25); /* 4 there, 1 here */
		flops += 9;
	}
	return s;
}

/* ---- deep recursion; a fork inside it ---- */
__attribute__((noinline)) static long deep(int d, int fork_at)
{
	long r;

	fl();
	if (d == 0)
		return 1;
	if (d == fork_at) {
		pid_t p = fork();
		if (p == 0) { /* the child unwinds too, then says what it ran */
			flops = 0;
			r = deep(d - 1, -1);
			fl();
			printf("child %ld flops %ld\n", r, flops);
			fflush(stdout);
			_exit(0);
		}
		waitpid(p, NULL, 0);
	}
	r = deep(d - 1, fork_at) + d % 7;
	fl();
	__asm__ volatile("" ::: "memory");
	return r;
}

static long run_deep(long n, int fork)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += deep(1000, -1);
	if (fork)
		s += deep(500, 300);
	return s;
}

/* ---- coroutines ---- */
static ucontext_t uc_main, uc_co;
static long co_turns;

__attribute__((noinline)) static void nest(int d)
{
	fl();
	if (d > 0)
		nest(d - 1);
	fl();
	__asm__ volatile("" ::: "memory");
}

static void co(void)
{
	for (;;) {
		nest(3);
		co_turns++;
		swapcontext(&uc_co, &uc_main);
	}
}

static void run_ucontext(long n)
{
	static char stack[65536];

	getcontext(&uc_co);
	uc_co.uc_stack.ss_sp = stack;
	uc_co.uc_stack.ss_size = sizeof stack;
	uc_co.uc_link = NULL;
	makecontext(&uc_co, co, 0);
	for (long i = 0; i < n; i++) {
		nest(2);
		swapcontext(&uc_main, &uc_co);
	}
}

/* ---- signals landing in calls and returns ---- */
static volatile long sig_flops, sigs;
static sigjmp_buf hjb;

__attribute__((noinline)) static void hdive(int d)
{
	double x = 0;
	__asm__ volatile("addsd %1, %0" : "+x"(x) : "x"(1.0));
	sig_flops++;
	if (d == 0 && sigs % 4 == 0)
		siglongjmp(hjb, 1);
	if (d > 0)
		hdive(d - 1);
	__asm__ volatile("" ::: "memory");
}

static void on_alarm(int sig)
{
	(void)sig;
	sigs++;
	if (!sigsetjmp(hjb, 1))
		hdive(5);
}

__attribute__((noinline)) static long f1(long i)
{
	fl();
	return i * 3 + 1;
}
__attribute__((noinline)) static long g1(long i)
{
	return f1(i) + 1;
}
__attribute__((noinline)) static long g2(long i)
{
	return f1(i) + 2;
}

static long run_signal(long n)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	long s = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (long i = 0; i < n; i++)
		s += (i & 1) ? g1(i) : g2(i);
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	return s;
}

/* ---- code rewritten while a call from it is pending ---- */
/* The page's function: saves x and y, calls the helper (rdi), restores
 * them, then K addsd (1 to 4, rewritten by the helper) and ret. */
static unsigned char *page;
static int kcur;

static void put_kernel(int k)
{
	static const unsigned char head[] = {
		0x48, 0x83, 0xec, 0x18,		    /* sub $24,%rsp */
		0xf2, 0x0f, 0x11, 0x04, 0x24,	    /* movsd %xmm0,(%rsp) */
		0xf2, 0x0f, 0x11, 0x4c, 0x24, 0x08, /* movsd %xmm1,8(%rsp) */
		0xff, 0xd7,			    /* call *%rdi */
		0xf2, 0x0f, 0x10, 0x04, 0x24,	    /* movsd (%rsp),%xmm0 */
		0xf2, 0x0f, 0x10, 0x4c, 0x24, 0x08, /* movsd 8(%rsp),%xmm1 */
		0x48, 0x83, 0xc4, 0x18,		    /* add $24,%rsp */
	};
	size_t n = sizeof head;

	memcpy(page, head, n);
	for (int i = 0; i < k; i++) {
		memcpy(page + n, (unsigned char[]){ 0xf2, 0x0f, 0x58, 0xc1 }, 4); /* addsd %xmm1,%xmm0 */
		n += 4;
	}
	page[n] = 0xc3;
}

/* then new code on a second page, run at once: a new block before the
 * return (with few block ids, the dropped copies' are reused by then) */
static unsigned char *page2;
static long turns;

static void helper(void)
{
	int32_t v = (int32_t)++turns;

	kcur = kcur % 4 + 1;
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE))
		exit(3);
	put_kernel(kcur);
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) || mprotect(page2, 4096, PROT_READ | PROT_WRITE))
		exit(3);
	page2[0] = 0xb8; /* mov $turns, %eax; ret */
	memcpy(page2 + 1, &v, 4);
	page2[5] = 0xc3;
	if (mprotect(page2, 4096, PROT_READ | PROT_EXEC) || ((int (*)(void))(void *)page2)() != v)
		exit(4);
}

static double run_rewrite(long n)
{
	double (*f)(void (*)(void), double, double);
	double s = 0;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	page2 = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || page2 == MAP_FAILED)
		exit(3);
	kcur = 1;
	put_kernel(kcur);
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
		exit(3);
	f = (double (*)(void (*)(void), double, double))(void *)page;
	for (long i = 0; i < n; i++) {
		s += f(helper, (double)i, 1.0); /* the kernel the helper wrote */
		flops += kcur + 1;
	}
	return s;
}

/* ---- sites whose target changes at every run ---- */
/* (integer results: the only FP instructions are fl()'s) */
__attribute__((noinline)) static long leaf(long x)
{
	fl();
	return x / 2 + 3;
}

__attribute__((noinline)) static long t0(long x)
{
	fl();
	return x + 1;
}

__attribute__((noinline)) static long t1(long x)
{
	fl();
	fl();
	return x - 5;
}

__attribute__((noinline)) static long t2(long x)
{
	fl();
	fl();
	fl();
	return x / 4;
}

__attribute__((noinline)) static long t3(long x)
{
	for (int i = 0; i < 4; i++)
		fl();
	return -x;
}

static long (*const tab[4])(long) = { t0, t1, t2, t3 };

static long run_sites(long n)
{
	long (*volatile f)(long);
	long s = 0;
	unsigned long r = 1;

	for (long i = 0; i < n; i++) {
		if (i % 3 == 0) { /* leaf's `ret` to each caller in turn */
			s += leaf(s);
		} else if (i % 3 == 1) {
			s -= 2 * leaf(s);
			fl();
		} else {
			s += leaf(i);
			fl();
			fl();
		}
		r = r * 6364136223846793005UL + 1442695040888963407UL;
		f = tab[r >> 62]; /* one of the four at random (an LCG's top bits) */
		s += f(i);
		f = tab[((r >> 62) + 1 + (i & 1)) & 3]; /* never the same as the first */
		s = f(s) % 1000003;
	}
	return s;
}

/* ---- threads ---- */
static long thr_flops[4], thr_sum[4];

static void *thr(void *arg)
{
	long i = (long)arg, n = 200 + i;
	double s;

	run_longjmp(n);
	s = run_overwrite(n);
	s += (double)run_deep(2, 0);
	thr_sum[i] = (long)(s + acc);
	thr_flops[i] = flops + 2; /* the two additions above */
	return NULL;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "longjmp";
	long n = argc > 2 ? atol(argv[2]) : 1000;

	if (!strcmp(m, "longjmp")) {
		run_longjmp(n);
		printf("longjmp: acc %.0f flops %ld\n", acc, flops);
	} else if (!strcmp(m, "overwrite")) {
		double s = run_overwrite(n);
		printf("overwrite: %.2f flops %ld\n", s, flops);
	} else if (!strcmp(m, "deep")) {
		long s = run_deep(n, 1);
		printf("deep: %ld acc %.0f flops %ld\n", s, acc, flops);
	} else if (!strcmp(m, "ucontext")) {
		run_ucontext(n);
		printf("ucontext: %ld turns acc %.0f flops %ld\n", co_turns, acc, flops);
	} else if (!strcmp(m, "signal")) {
		long s = run_signal(n);
		printf("signal: %ld acc %.0f\n", s, acc);
		fprintf(stderr, "tp_ret signal: %ld signals, flops %ld\n", (long)sigs, flops + sig_flops);
	} else if (!strcmp(m, "rewrite")) {
		double s = run_rewrite(n);
		printf("rewrite: %.1f flops %ld\n", s, flops);
	} else if (!strcmp(m, "sites")) {
		long s = run_sites(n);
		printf("sites: %ld acc %.0f flops %ld\n", s, acc, flops);
	} else if (!strcmp(m, "threads")) {
		pthread_t th[4];
		for (long i = 0; i < 4; i++)
			if (pthread_create(&th[i], NULL, thr, (void *)i))
				return 2;
		for (int i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			printf("thread %d: %ld flops %ld\n", i, thr_sum[i], thr_flops[i]);
		}
	} else {
		fprintf(stderr, "tp_ret: unknown mode %s\n", m);
		return 2;
	}
	return 0;
}
