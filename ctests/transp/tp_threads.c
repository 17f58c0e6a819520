/*
 * tp_threads.c N: N threads alive at once (they meet at a barrier), each
 * running tp_work(1000): DP_OPS 4000 N.  More threads at once than the
 * code cache has counter slots run on the stopping path: same counts,
 * said in the report.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "tp.h"

static pthread_barrier_t bar;

static void *thr(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&bar);
	tp_work(1000);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40;
	pthread_t *th = calloc((size_t)(n > 0 ? n : 1), sizeof *th);

	if (n < 1 || !th || pthread_barrier_init(&bar, NULL, (unsigned)n))
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, thr, NULL))
			return 2;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("%d threads\n", n);
	return 0;
}
