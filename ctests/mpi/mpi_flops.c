/*
 * An MPI program with a known FLOP count per rank, different per rank so
 * that imbalance shows: rank r runs (r+1)*N iterations of one mulpd (2 DP
 * FLOPs, one packed instruction) and one addsd (1 DP FLOP), so
 * DP_OPS = 3 (r+1) N, VEC_DP = (r+1) N.  Written in assembly so that no
 * compiler changes the count; SSE2 is in every x86-64.
 *   mpi_flops N [CRASH_RANK]
 * CRASH_RANK: that rank does half its iterations, then dies by SIGSEGV
 * (the others end normally, or are ended by the launcher).
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void mpi_flops_kernel(long n)
{
	__asm__ volatile("pxor %%xmm0, %%xmm0\n\t"
			 "pxor %%xmm1, %%xmm1\n\t"
			 "test %0, %0\n\t"
			 "jz 2f\n"
			 "1:\n\t"
			 "mulpd %%xmm1, %%xmm0\n\t"
			 "addsd %%xmm1, %%xmm0\n\t"
			 "dec %0\n\t"
			 "jnz 1b\n"
			 "2:"
			 : "+r"(n)
			 :
			 : "xmm0", "xmm1", "cc");
}

int main(int argc, char **argv)
{
	int rank, size;
	if (argc < 2) {
		fprintf(stderr, "usage: mpi_flops N [CRASH_RANK]\n");
		return 2;
	}
	long n = atol(argv[1]);
	int crash = argc > 2 ? atoi(argv[2]) : -1;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long iters = (rank + 1) * n;
	if (rank == crash) {
		mpi_flops_kernel(iters / 2);
		raise(SIGSEGV);
	}
	mpi_flops_kernel(iters);
	if (crash < 0)
		MPI_Barrier(MPI_COMM_WORLD);
	printf("rank %d of %d: %ld iterations\n", rank, size, iters);
	MPI_Finalize();
	return 0;
}
