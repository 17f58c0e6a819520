/*
 * calib_sys.c: system calls and signals, many of them (the tracer's fast
 * system calls, trace_sys.c).
 *
 *   calib_sys calls N     N loops of: one addpd xmm (2 DP FLOPs), getpid
 *                         and mprotect(0, 4096, PROT_READ) (fails: page 0
 *                         is not mapped) by `syscall` (mprotect is one
 *                         the tracer watches), checking that %rcx holds the next
 *                         instruction's address and %r11 the flags after
 *                         each, and a write of one byte to /dev/null.
 *                         Prints "calls N"; exits 1 at a wrong register.
 *   calib_sys signals N   N loops of one addpd xmm and raise(SIGUSR1),
 *                         whose handler runs one mulpd xmm.  Prints
 *                         "signals N".
 *   calib_sys swap N      N round trips between two ucontexts
 *                         (swapcontext: a system call each way, no FP).
 *   calib_sys getpid N    N getpid system calls, nothing else.
 *   calib_sys restart N   a read of an empty pipe, blocked while a 1 ms
 *                         timer's SIGALRM handler (SA_RESTART; one mulpd
 *                         xmm each) runs N times, the last of which
 *                         writes a byte into the pipe: the kernel
 *                         restarts the read after each other one.
 *                         Prints "restart N 1" (alarms, bytes read).
 *   calib_sys eintr N     the same without SA_RESTART: each alarm ends
 *                         the read with EINTR and the program reads
 *                         again.  Prints "eintr N 1 E" (E: EINTRs, >= 1).
 *   calib_sys affinity N  its CPU affinity (sched_getaffinity) holds N
 *                         CPUs: alone, in a forked child while the
 *                         parent waits, alone again, and after reading
 *                         /proc/self/status (whose Cpus_allowed_list
 *                         must count N too).  Exits 1 where one does
 *                         not (the tracer holds a program of one thread
 *                         on its own CPU: trace_pin.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sched.h>

static volatile long handled;

static void addpd(void)
{
	__asm__ volatile("addpd %%xmm1, %%xmm0" : : : "xmm0");
}

static void on_usr1(int sig)
{
	(void)sig;
	__asm__ volatile("mulpd %%xmm1, %%xmm0" : : : "xmm0");
	handled++;
}

/* system call nr(a0, a1, a2); 0 when %rcx and %r11
 * came back as the CPU sets them (rcx: the next instruction, r11: the
 * flags before the call) */
static int checked_syscall(long nr, long a0, long a1, long a2)
{
	unsigned long fl, next, rcx, r11;

	/* pushfq below the red zone (lea keeps the flags) */
	__asm__ volatile("lea -128(%%rsp), %%rsp\n\t"
			 "pushfq\n\t"
			 "popq %[fl]\n\t"
			 "lea 128(%%rsp), %%rsp\n\t"
			 "leaq 1f(%%rip), %[next]\n\t"
			 "syscall\n"
			 "1:\n\t"
			 "movq %%rcx, %[rcx]\n\t"
			 "movq %%r11, %[r11]"
			 : "+a"(nr), [fl] "=&r"(fl), [next] "=&r"(next), [rcx] "=&r"(rcx), [r11] "=&r"(r11)
			 : "D"(a0), "S"(a1), "d"(a2)
			 : "rcx", "r11", "memory");
	if (rcx != next || r11 != fl) {
		fprintf(stderr, "calib_sys: after syscall %ld: rcx %#lx (want %#lx), r11 %#lx (want %#lx)\n", nr, rcx,
			next, r11, fl);
		return 1;
	}
	return 0;
}

static int pipefd[2];
static long alarms_max;
static volatile long alarms;

static void on_alrm(int sig)
{
	(void)sig;
	if (alarms >= alarms_max)
		return; /* one already pending as the timer stopped */
	__asm__ volatile("mulpd %%xmm1, %%xmm0" : : : "xmm0");
	if (++alarms == alarms_max) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(3);
	}
}

/* restart/eintr: the blocked read, interrupted by n alarms */
static int interrupted_read(const char *mode, long n, int flags)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	long eintr = 0;
	char c;
	ssize_t r;

	if (pipe(pipefd))
		return 2;
	alarms_max = n;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alrm;
	sa.sa_flags = flags;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while ((r = read(pipefd[0], &c, 1)) < 0 && errno == EINTR)
		eintr++;
	if (flags & SA_RESTART) {
		printf("%s %ld %zd\n", mode, (long)alarms, r);
		return alarms == n && r == 1 && !eintr ? 0 : 1;
	}
	printf("%s %ld %zd %ld\n", mode, (long)alarms, r, eintr);
	return alarms == n && r == 1 && eintr >= 1 ? 0 : 1;
}

static ucontext_t uc_main, uc_co;
static long swaps;

static void co(void)
{
	for (;;) {
		swaps++;
		swapcontext(&uc_co, &uc_main);
	}
}

static int cpus(void)
{
	cpu_set_t m;

	return sched_getaffinity(0, sizeof m, &m) ? -1 : CPU_COUNT(&m);
}

/* the CPUs of /proc/self/status's Cpus_allowed_list ("0-3,6") */
static int status_cpus(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[4096], *p;
	int n = -1;

	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "Cpus_allowed_list:", 18)) {
			n = 0;
			for (p = line + 18; *p && *p != '\n';) {
				long a = strtol(p, &p, 10), b = a;
				if (*p == '-')
					b = strtol(p + 1, &p, 10);
				n += (int)(b - a + 1);
				while (*p == ',' || *p == ' ' || *p == '\t')
					p++;
			}
		}
	if (f)
		fclose(f);
	return n;
}

static int affinity(long n)
{
	int st, c0 = cpus(), c1, c2, c3;
	pid_t p = fork();

	if (p == 0)
		_exit(cpus() == n ? 0 : 1);
	if (p < 0 || waitpid(p, &st, 0) != p)
		return 2;
	c1 = cpus();
	c2 = status_cpus();
	c3 = cpus();
	printf("affinity %d %d %d %d %d\n", c0, WIFEXITED(st) ? WEXITSTATUS(st) : -1, c1, c2, c3);
	return c0 == n && WIFEXITED(st) && !WEXITSTATUS(st) && c1 == n && c2 == n && c3 == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	long n;

	if (argc < 3)
		return 2;
	n = atol(argv[2]);
	if (!strcmp(argv[1], "calls")) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd < 0)
			return 2;
		for (long i = 0; i < n; i++) {
			addpd();
			if (checked_syscall(SYS_getpid, 0, 0, 0) || checked_syscall(SYS_mprotect, 0, 4096, PROT_READ))
				return 1;
			if (write(fd, "x", 1) != 1)
				return 2;
		}
		printf("calls %ld\n", n);
		return 0;
	}
	if (!strcmp(argv[1], "signals")) {
		signal(SIGUSR1, on_usr1);
		for (long i = 0; i < n; i++) {
			addpd();
			raise(SIGUSR1);
		}
		printf("signals %ld\n", (long)handled);
		return handled == n ? 0 : 1;
	}
	if (!strcmp(argv[1], "restart"))
		return interrupted_read("restart", n, SA_RESTART);
	if (!strcmp(argv[1], "eintr"))
		return interrupted_read("eintr", n, 0);
	if (!strcmp(argv[1], "affinity"))
		return affinity(n);
	if (!strcmp(argv[1], "getpid")) {
		for (long i = 0; i < n; i++)
			syscall(SYS_getpid);
		return 0;
	}
	if (!strcmp(argv[1], "swap")) {
		static char stack[65536];
		getcontext(&uc_co);
		uc_co.uc_stack.ss_sp = stack;
		uc_co.uc_stack.ss_size = sizeof stack;
		uc_co.uc_link = NULL;
		makecontext(&uc_co, co, 0);
		for (long i = 0; i < n; i++)
			swapcontext(&uc_main, &uc_co);
		printf("swap %ld\n", swaps);
		return swaps == n ? 0 : 1;
	}
	return 2;
}
