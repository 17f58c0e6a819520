/*
 * calib_entryp.c: calls calib_entry_fn (libcalibe.so, found beside the
 * program) and prints its result: calib_entryp N.
 */
#include <stdio.h>
#include <stdlib.h>

double calib_entry_fn(long n);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;

	printf("%.6f\n", calib_entry_fn(n));
	return 0;
}
