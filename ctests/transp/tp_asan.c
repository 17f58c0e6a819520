/*
 * tp_asan.c [leak]: an AddressSanitizer program (built with
 * -fsanitize=address; LeakSanitizer runs at exit, cloning a helper with
 * CLONE_UNTRACED that ptrace-attaches to the program's threads).  A
 * thread runs tp_work(1000), main tp_work(2000): DP_OPS 12000 plus
 * whatever the sanitizer's run-time does in floating point.  With
 * "leak" it leaks 4096 bytes, which LeakSanitizer reports natively.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tp.h"

static void *thr(void *arg)
{
	(void)arg;
	tp_work(1000);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	char *p = malloc(4096);
	static char *volatile keep;

	(void)keep;

	if (!p || pthread_create(&th, NULL, thr, NULL))
		return 2;
	tp_work(2000);
	pthread_join(th, NULL);
	memset(p, 1, 4096);
	printf("asan: sum %d\n", p[0] + p[4095]);
	if (argc > 1 && !strcmp(argv[1], "leak"))
		p = NULL; /* lost */
	else
		keep = p;
	return 0;
}
