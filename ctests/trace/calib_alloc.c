/*
 * calib_alloc.c: how much the program can allocate: 1 MiB blocks until
 * malloc fails (no FLOPs); prints the MiB it got.  Under a ulimit -v
 * it shows what a tracer leaves of the limit to the program.
 *
 *   calib_alloc                  allocate, print the MiB
 *   calib_alloc limit MIB [fork] first lower its own RLIMIT_AS to MIB
 *                                (as a shell's `ulimit -v` does); with
 *                                fork, a child allocates and prints
 *                                first, then the parent
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* (a function of its own: --region grab in test_trace_aslimit.sh) */
__attribute__((noinline)) long grab(void);
__attribute__((noinline)) long grab(void)
{
	long n = 0;

	while (n < 1L << 20 && malloc(1 << 20))
		n++;
	return n;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "limit")) {
		struct rlimit rl;
		rl.rlim_cur = rl.rlim_max = (rlim_t)atol(argv[2]) << 20;
		if (setrlimit(RLIMIT_AS, &rl)) {
			perror("calib_alloc: setrlimit");
			return 2;
		}
		if (argc >= 4 && !strcmp(argv[3], "fork")) {
			int st;
			pid_t c = fork();
			if (c < 0) {
				perror("calib_alloc: fork");
				return 2;
			}
			if (!c) {
				printf("%ld\n", grab());
				return 0;
			}
			if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
				return 3;
		}
	}
	printf("%ld\n", grab());
	return 0;
}
