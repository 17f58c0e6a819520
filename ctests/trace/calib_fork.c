/*
 * calib_fork.c: processes.
 *
 *   calib_fork fork N     the child runs N vaddps xmm and exits 0; the
 *                         parent runs 2N vmulps xmm, waits, exits 7.
 *   calib_fork vfork N    vfork + exec of "calib_fp vaddpd_y N" (next to
 *                         this program); the parent runs N vmulps xmm.
 *   calib_fork exec N     execs "calib_fp vsqrtpd_y N 9" directly.
 *   calib_fork execfp N   runs N vaddps xmm, then the same exec.
 *   calib_fork vforkheld N FILE
 *                         leaves a daemon behind in vfork, its child
 *                         asleep (0.5 s) before it execs "calib_fp
 *                         vaddpd_y N": the program ends while the child
 *                         runs and its parent waits for it; the daemon
 *                         then writes "done" to FILE.  A tracer that
 *                         lets go of what is left must let the child go
 *                         first: the parent cannot stop before the child
 *                         has exec'd.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
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

static int vforkheld(const char *prog, const char *nbuf, const char *file)
{
	struct timespec half = { 0, 500000000 };
	int fd[2], st;
	char c;
	pid_t d, p;
	FILE *f;

	if (pipe(fd))
		return 3;
	d = fork();
	if (d < 0)
		return 3;
	if (d == 0) {
		close(fd[0]);
		p = vfork();
		if (p == 0) { /* (a vfork child: system calls only) */
			if (write(fd[1], "r", 1) != 1)
				_exit(126);
			nanosleep(&half, NULL);
			execl(prog, prog, "vaddpd_y", nbuf, (char *)NULL);
			_exit(127);
		}
		close(fd[1]);
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
		    !(f = fopen(file, "w")))
			_exit(3);
		fputs("done\n", f);
		_exit(fclose(f) ? 3 : 0);
	}
	close(fd[1]);
	/* the child is asleep, its parent in vfork: end now */
	return read(fd[0], &c, 1) == 1 ? 0 : 3;
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
	if (!strcmp(argv[1], "vforkheld") && argc > 3)
		return vforkheld(prog, nbuf, argv[3]);
	if (!strcmp(argv[1], "exec") || !strcmp(argv[1], "execfp")) {
		if (argv[1][4])
			addps(n);
		execl(prog, prog, "vsqrtpd_y", nbuf, "9", (char *)NULL);
		return 127;
	}
	return 2;
}
