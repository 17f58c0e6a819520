/*
 * calib_entry.c: the library of the --region entry test (libcalibe.so):
 * calib_entry_fn(n) does n multiply-adds in SSE2 scalar double (2n DP
 * FLOPs) and returns the result.  ctests/test_region_entry.sh gives copies
 * of it symbols that point inside an instruction.
 */
double calib_entry_fn(long n);

double calib_entry_fn(long n)
{
	double x = 1, m = 1.0000001, a = 1e-9;

	/* a first instruction longer than 2 bytes (10): +2 is inside it */
	__asm__ volatile("movabs $0x123456789a, %%rax" : : : "rax");
	__asm__ volatile("1: mulsd %1, %0\n addsd %2, %0\n dec %3\n jnz 1b" : "+x"(x) : "x"(m), "x"(a), "r"(n) : "cc");
	return x;
}
