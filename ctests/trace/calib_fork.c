/*
 * calib_fork.c: processes.
 *
 *   calib_fork fork N     the child runs N vaddps xmm and exits 0; the
 *                         parent runs 2N vmulps xmm, waits, exits 7.
 *   calib_fork vfork N    vfork + exec of "calib_fp vaddpd_y N" (next to
 *                         this program); the parent runs N vmulps xmm.
 *   calib_fork exec N     execs "calib_fp vsqrtpd_y N 9" directly.
 *   calib_fork execfp N   runs N vaddps xmm, then the same exec.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

__attribute__((noinline)) static void addps(long n)
{
	__asm__ volatile("1: vaddps %%xmm1, %%xmm2, %%xmm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
}

__attribute__((noinline)) static void mulps(long n)
{
	__asm__ volatile("1: vmulps %%xmm1, %%xmm2, %%xmm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
}

static void sibling(char *out, size_t len, const char *self, const char *name)
{
	const char *slash = strrchr(self, '/');
	size_t dir = slash ? (size_t)(slash - self + 1) : 0;

	snprintf(out, len, "%.*s%s", (int)dir, self, name);
}

int main(int argc, char **argv)
{
	char prog[4096], nbuf[32];
	long n;
	int st;
	pid_t p;

	if (argc < 3)
		return 2;
	n = atol(argv[2]);
	sibling(prog, sizeof prog, argv[0], "calib_fp");
	snprintf(nbuf, sizeof nbuf, "%ld", n);
	if (!strcmp(argv[1], "fork")) {
		p = fork();
		if (p == 0) {
			addps(n);
			_exit(0);
		}
		mulps(2 * n);
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 3;
		return 7;
	}
	if (!strcmp(argv[1], "vfork")) {
		p = vfork();
		if (p == 0) {
			execl(prog, prog, "vaddpd_y", nbuf, (char *)NULL);
			_exit(127);
		}
		mulps(n);
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 3;
		return 0;
	}
	if (!strcmp(argv[1], "exec") || !strcmp(argv[1], "execfp")) {
		if (argv[1][4])
			addps(n);
		execl(prog, prog, "vsqrtpd_y", nbuf, "9", (char *)NULL);
		return 127;
	}
	return 2;
}
