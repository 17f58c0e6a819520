/*
 * calib_regionx.c: --region where calls do not simply return.
 *
 *   calib_regionx recurse N D   outside(N); rkern(N, D); outside(N);
 *                               rkern(N, D): each of the D+1 nested levels
 *                               runs N vaddpd ymm.  Region rkern: 2
 *                               outermost calls, 2(D+1)N vaddpd.
 *   calib_regionx longjmp N     3 times: jkern(N) runs N vmulpd ymm and
 *                               longjmps out to main, which runs
 *                               outside(N).  Region jkern: 3 calls, 3N.
 *   calib_regionx threads T N   T threads each run outside(N), tkern(N)
 *                               [N vsubpd ymm], outside(N); main runs
 *                               outside(N).  Region tkern: T calls, TN.
 *   calib_regionx long N        outside(N) around one short call of
 *                               tkern(100): the native part dominates.
 *   calib_regionx storm T K N   K rounds: T threads meet at a barrier and
 *                               call tkern(N) at once, then meet again: a
 *                               window opens while the others reach
 *                               tkern's int3.  Region tkern: TK calls, TKN.
 *
 * outside(n) is n vdivpd xmm, never inside a region.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf jb;
static long n_iter, n_calls = 1;
static pthread_barrier_t bar;

__attribute__((noinline)) static void outside(long n)
{
	__asm__ volatile("1: vdivpd %%xmm1, %%xmm2, %%xmm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
}

__attribute__((noinline)) void rkern(long n, int depth);
__attribute__((noinline)) void rkern(long n, int depth)
{
	long m = n;

	__asm__ volatile("1: vaddpd %%ymm1, %%ymm2, %%ymm0\n dec %0\n jnz 1b" : "+r"(m) : : "xmm0", "cc");
	if (depth > 0)
		rkern(n, depth - 1);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

__attribute__((noinline)) void jkern(long n);
__attribute__((noinline)) void jkern(long n)
{
	__asm__ volatile("1: vmulpd %%ymm1, %%ymm2, %%ymm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
	longjmp(jb, 1);
}

__attribute__((noinline)) void tkern(long n);
__attribute__((noinline)) void tkern(long n)
{
	__asm__ volatile("1: vsubpd %%ymm1, %%ymm2, %%ymm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
}

static void *worker(void *arg)
{
	(void)arg;
	if (arg) { /* storm */
		for (long k = 0; k < n_calls; k++) {
			pthread_barrier_wait(&bar);
			tkern(n_iter);
			pthread_barrier_wait(&bar);
		}
		return NULL;
	}
	outside(n_iter);
	tkern(n_iter);
	outside(n_iter);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000;

	if (argc < 3 || n < 1)
		return 2;
	if (!strcmp(argv[1], "recurse") && argc > 3) {
		int d = atoi(argv[3]);
		outside(n);
		rkern(n, d);
		outside(n);
		rkern(n, d);
		return 0;
	}
	if (!strcmp(argv[1], "longjmp")) {
		for (int i = 0; i < 3; i++) {
			if (!setjmp(jb))
				jkern(n);
			outside(n);
		}
		return 0;
	}
	if ((!strcmp(argv[1], "threads") && argc > 3) || (!strcmp(argv[1], "storm") && argc > 4)) {
		int nt = atoi(argv[2]);
		pthread_t th[64];
		int storm = argv[1][0] == 's';
		if (storm)
			n_calls = atol(argv[3]);
		n_iter = atol(argv[argc - 1]);
		if (nt < 1 || nt > 64 || n_iter < 1 || n_calls < 1)
			return 2;
		if (storm && pthread_barrier_init(&bar, NULL, (unsigned)nt))
			return 3;
		for (int i = 0; i < nt; i++)
			if (pthread_create(&th[i], NULL, worker, storm ? &bar : NULL))
				return 3;
		if (!storm)
			outside(n_iter);
		for (int i = 0; i < nt; i++)
			pthread_join(th[i], NULL);
		return 0;
	}
	if (!strcmp(argv[1], "long")) {
		outside(n);
		tkern(100);
		outside(n);
		return 0;
	}
	return 2;
}
