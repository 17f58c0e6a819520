/*
 * calib_signal.c: signals.
 *
 *   calib_signal crash N      N vaddpd xmm, then a write to address 0:
 *                             killed by SIGSEGV after exactly N.
 *   calib_signal handler N    N vaddpd xmm in the main loop; raise(SIGUSR1)
 *                             once, before it; the handler runs N vmulpd xmm.
 *   calib_signal timer N OUT  N vaddpd xmm (unrolled by 8: long blocks)
 *                             while a 1 ms interval timer interrupts them
 *                             anywhere; each SIGALRM handler call runs one
 *                             vdivpd xmm.  Writes the number of handler
 *                             calls to file OUT.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static long handler_n;
static volatile long alarms;

static void addpd(long n)
{
	__asm__ volatile("1: vaddpd %%xmm1, %%xmm2, %%xmm0\n dec %0\n jnz 1b"
			 : "+r"(n) : : "xmm0", "cc");
}

static void on_usr1(int sig)
{
	long n = handler_n;

	(void)sig;
	__asm__ volatile("1: vmulpd %%xmm1, %%xmm2, %%xmm0\n dec %0\n jnz 1b"
			 : "+r"(n) : : "xmm0", "cc");
}

static void on_alrm(int sig)
{
	(void)sig;
	__asm__ volatile("vdivpd %%xmm1, %%xmm2, %%xmm0" : : : "xmm0");
	alarms++;
}

int main(int argc, char **argv)
{
	long n;

	if (argc < 3)
		return 2;
	n = atol(argv[2]);
	if (!strcmp(argv[1], "crash")) {
		addpd(n);
		*(volatile int *)(size_t)argc /* not 0 to the compiler */ = 0;
		return 0;
	}
	if (!strcmp(argv[1], "handler")) {
		handler_n = n;
		signal(SIGUSR1, on_usr1);
		raise(SIGUSR1);
		addpd(n);
		return 0;
	}
	if (!strcmp(argv[1], "timer") && argc > 3) {
		struct sigaction sa;
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
		long m = n / 8;
		FILE *f;

		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alrm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		__asm__ volatile("1:\n"
			" vaddpd %%xmm1, %%xmm2, %%xmm0\n vaddpd %%xmm1, %%xmm2, %%xmm0\n"
			" vaddpd %%xmm1, %%xmm2, %%xmm0\n vaddpd %%xmm1, %%xmm2, %%xmm0\n"
			" vaddpd %%xmm1, %%xmm2, %%xmm0\n vaddpd %%xmm1, %%xmm2, %%xmm0\n"
			" vaddpd %%xmm1, %%xmm2, %%xmm0\n vaddpd %%xmm1, %%xmm2, %%xmm0\n"
			" dec %0\n jnz 1b" : "+r"(m) : : "xmm0", "cc");
		memset(&it, 0, sizeof it);
		setitimer(ITIMER_REAL, &it, NULL);
		f = fopen(argv[3], "w");
		if (!f)
			return 3;
		fprintf(f, "%ld\n", (long)alarms);
		return fclose(f) ? 3 : 0;
	}
	return 2;
}
