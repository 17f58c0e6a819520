/*
 * tp_fork.c: FP work in forked children, from the copies they inherit.
 * The parent runs the kernel once (its copy is made), then either forks
 * k children, one at a time, that each run it once more and exit
 * ("children"), or runs it k more times itself ("parent"): DP_OPS
 * (k + 1) * 4 * n either way.  A child whose count is lost, lands in its
 * parent's, or is taken under another block's id shows as a difference.
 * "fresh": the parent never runs it, k children do: the first translates
 * it and gives it to the parent (trace_forkwant.c), the others run the
 * copy the parent made for them: DP_OPS k * 4 * n.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

/* n turns of 4 addsd (SSE2: every x86-64 CPU) */
__attribute__((noinline)) static void kernel(long n)
{
	__asm__ volatile("xorpd %%xmm0, %%xmm0\n"
			 "1: addsd %%xmm0, %%xmm0\n addsd %%xmm0, %%xmm0\n"
			 "addsd %%xmm0, %%xmm0\n addsd %%xmm0, %%xmm0\n"
			 "dec %0\n jnz 1b"
			 : "+r"(n)
			 :
			 : "xmm0", "cc");
}

int main(int argc, char **argv)
{
	int k = argc > 2 ? atoi(argv[2]) : 0;
	long n = argc > 3 ? atol(argv[3]) : 1000;

	if (argc < 3 || (strcmp(argv[1], "children") && strcmp(argv[1], "parent") && strcmp(argv[1], "fresh")) ||
	    k < 0 || n < 1) {
		fprintf(stderr, "usage: tp_fork children|parent|fresh K [N]\n");
		return 2;
	}
	if (argv[1][0] != 'f')
		kernel(n);
	for (int i = 0; i < k; i++) {
		if (argv[1][0] == 'p') {
			kernel(n);
			continue;
		}
		pid_t c = fork();
		int st;
		if (c < 0) {
			perror("fork");
			return 1;
		}
		if (c == 0) {
			kernel(n);
			_exit(7);
		}
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 7) {
			fprintf(stderr, "child %d: status %#x\n", i, st);
			return 1;
		}
	}
	printf("%d runs of %ld\n", k + (argv[1][0] != 'f'), n);
	return 0;
}
