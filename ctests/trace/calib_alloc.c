/*
 * calib_alloc.c: how much the program can allocate: 1 MiB blocks until
 * malloc fails (no FLOPs); prints the MiB it got.  Under a ulimit -v
 * it shows what a tracer leaves of the limit to the program.
 */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	long n = 0;

	while (n < 1L << 20 && malloc(1 << 20))
		n++;
	printf("%ld\n", n);
	return 0;
}
