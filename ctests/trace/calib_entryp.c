/*
 * calib_entryp.c: calls calib_entry_fn (libcalibe.so, found beside the
 * program) and entry_local (static: its only symbol is in .symtab), and
 * prints the results: calib_entryp N.
 */
#include <stdio.h>
#include <stdlib.h>

double calib_entry_fn(long n);

__attribute__((noinline)) static long entry_local(long n)
{
	/* a first instruction longer than 2 bytes (10): +2 is inside it */
	__asm__ volatile("movabs $0x123456789a, %%rax" : : : "rax");
	__asm__ volatile("1: dec %0\n jnz 1b" : "+r"(n) : : "cc");
	return n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;

	printf("%.6f %ld\n", calib_entry_fn(n), entry_local(n));
	return 0;
}
