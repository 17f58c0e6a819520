/*
 * tp_clone.c MODE: clone flag combinations a tracer must follow.  The
 * child runs tp_work(1000) and sets a flag, the parent runs
 * tp_work(2000), waits for it (__WALL) and prints what it saw; exit 0
 * when the child ended with status 5.  DP_OPS 12000 (both counted).
 *
 *   vm        clone(CLONE_VM | SIGCHLD): a process sharing the memory
 *   vmfs      clone(CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD)
 *   vm0       clone(CLONE_VM), no exit signal
 *   untraced  clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED),
 *             as LeakSanitizer clones its helper
 *   sig       clone(SIGUSR2): own memory, an exit signal not SIGCHLD
 *   clone3    clone3({CLONE_UNTRACED, SIGCHLD}): own memory
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sched.h>
#include "tp.h"

static volatile int flag;

static int child(void *arg)
{
	(void)arg;
	tp_work(1000);
	flag = 1;
	return 5;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "vm";
	size_t ssz = 256 * 1024;
	char *stack = malloc(ssz);
	int flags, st = 0;
	pid_t pid;

	if (!stack)
		return 2;
	if (!strcmp(mode, "vm"))
		flags = CLONE_VM | SIGCHLD;
	else if (!strcmp(mode, "vmfs"))
		flags = CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD;
	else if (!strcmp(mode, "vm0"))
		flags = CLONE_VM;
	else if (!strcmp(mode, "untraced"))
		flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED;
	else if (!strcmp(mode, "sig"))
		flags = SIGUSR2;
	else if (!strcmp(mode, "clone3"))
		flags = -1;
	else
		return 2;
	signal(SIGUSR2, SIG_IGN);
	if (flags == -1) {
		struct clone_args ca;
		memset(&ca, 0, sizeof ca);
		ca.flags = CLONE_UNTRACED;
		ca.exit_signal = SIGCHLD;
		pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
		if (pid == 0)
			_exit(child(NULL));
		if (ca.flags != CLONE_UNTRACED) /* its struct is its own */
			return 4;
	} else {
		pid = clone(child, stack + ssz, flags, NULL);
	}
	if (pid < 0) {
		perror("clone");
		return 2;
	}
	tp_work(2000);
	if (waitpid(pid, &st, __WALL) != pid)
		return 3;
	printf("%s: child exit %d, flag %d (%s memory)\n", mode, WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), flag,
	       flag ? "shared" : "own");
	return WIFEXITED(st) && WEXITSTATUS(st) == 5 ? 0 : 1;
}
