/*
 * calib_threads.c: NT threads, thread t runs (t+1)*N iterations of
 * vaddpd ymm; the main thread runs N iterations of two vmulpd ymm (AVX
 * only: the tests run on CPUs without AVX-512).
 *
 *   calib_threads NT N      expected: dp/256/add = N*NT*(NT+1)/2,
 *                                     dp/256/mul = 2N
 */
#include <pthread.h>
#include <stdlib.h>

static long n_iter;

static void *worker(void *arg)
{
	long n = n_iter * ((long)(size_t)arg + 1);

	__asm__ volatile("1: vaddpd %%ymm1, %%ymm2, %%ymm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
	return NULL;
}

int main(int argc, char **argv)
{
	int nt = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t th[64];
	long n;

	n_iter = argc > 2 ? atol(argv[2]) : 1000;
	if (nt > 64 || nt < 1 || n_iter < 1)
		return 2;
	for (int i = 0; i < nt; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(size_t)i))
			return 3;
	n = n_iter;
	__asm__ volatile("1: vmulpd %%ymm1, %%ymm2, %%ymm0\n vmulpd %%ymm1, %%ymm2, %%ymm0\n"
			 " dec %0\n jnz 1b"
			 : "+r"(n)
			 :
			 : "xmm0", "cc");
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	return 0;
}
