/*
 * tp_seccomp.c: a program in strict seccomp mode (only read, write,
 * _exit and sigreturn allowed; any other system call kills it), which
 * then runs code the code cache has no memory near (a page mapped far
 * from the program and its libraries): a tracer that injects a system
 * call to map cache memory there kills it.  DP_OPS 44000: tp_work(10000)
 * before, 1000 vaddpd ymm on the far page after.
 *
 *   tp_seccomp wait FIFO   reads a byte from FIFO once in strict mode,
 *                          before the far code (papi_flops_run --pid
 *                          attaches meanwhile): DP_OPS 4000 from then on.
 *   tp_seccomp fail        a seccomp filter call that fails instead
 *                          (a NULL filter: EFAULT, as root too, with
 *                          no_new_privs set first): seccomp stays off,
 *                          the tracer injects nothing all the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "tp.h"

/* 1: vaddpd %ymm1, %ymm2, %ymm0; dec %rdi; jnz 1b; ret */
static const unsigned char code[] = { 0xc5, 0xed, 0x58, 0xc1, 0x48, 0xff, 0xcf, 0x75, 0xf7, 0xc3 };

int main(int argc, char **argv)
{
	char msg[64];
	void *p = mmap((void *)0x300000000000UL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	void (*far)(long);
	int len, fd = -1;
	char c;

	if (p == MAP_FAILED)
		return 2;
	memcpy(p, code, sizeof code);
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 2;
	far = (void (*)(long))p;
	tp_work(10000);
	len = snprintf(msg, sizeof msg, "seccomp: far code ran\n");
	if (argc > 1 && !strcmp(argv[1], "fail")) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, NULL) != -1 || errno != EFAULT)
			return 3;
	} else {
		if (argc > 2 && (fd = open(argv[2], O_RDONLY)) < 0)
			return 2;
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
			return 3;
	}
	if (fd >= 0 && read(fd, &c, 1) != 1)
		syscall(SYS_exit, 5);
	far(1000);
	if (write(1, msg, (size_t)len) != len)
		syscall(SYS_exit, 4);
	syscall(SYS_exit, 0);
	return 0;
}
