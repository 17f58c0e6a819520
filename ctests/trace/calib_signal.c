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
 *   calib_signal alarms K OUT  loops of 8 vaddpd xmm until K SIGALRMs
 *                             (1 ms timer) have run the handler (one
 *                             vdivpd xmm each): a fixed number of
 *                             signals however fast the loop runs.
 *                             Writes "LOOPS ALARMS" to OUT.
 *   calib_signal calls K OUT   the same, each loop's 8 vaddpd in a
 *                             function called through a pointer (calls
 *                             and returns: the tracer's lookup code).
 *   calib_signal threads T K OUT  T threads run those loops while the
 *                             process takes K SIGALRMs (any thread may
 *                             run the handler).  Writes "LOOPS ALARMS"
 *                             (loops of all threads) to OUT.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static long handler_n;
static volatile long alarms;

__attribute__((noinline)) static void addpd(long n)
{
	__asm__ volatile("1: vaddpd %%xmm1, %%xmm2, %%xmm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
}

static void on_usr1(int sig)
{
	long n = handler_n;

	(void)sig;
	__asm__ volatile("1: vmulpd %%xmm1, %%xmm2, %%xmm0\n dec %0\n jnz 1b" : "+r"(n) : : "xmm0", "cc");
}

static void on_alrm(int sig)
{
	(void)sig;
	__asm__ volatile("vdivpd %%xmm1, %%xmm2, %%xmm0" : : : "xmm0");
	__atomic_fetch_add(&alarms, 1, __ATOMIC_SEQ_CST);
}

#define ADD8                                                                                \
	__asm__ volatile(" vaddpd %%xmm1, %%xmm2, %%xmm0\n vaddpd %%xmm1, %%xmm2, %%xmm0\n" \
			 " vaddpd %%xmm1, %%xmm2, %%xmm0\n vaddpd %%xmm1, %%xmm2, %%xmm0\n" \
			 " vaddpd %%xmm1, %%xmm2, %%xmm0\n vaddpd %%xmm1, %%xmm2, %%xmm0\n" \
			 " vaddpd %%xmm1, %%xmm2, %%xmm0\n vaddpd %%xmm1, %%xmm2, %%xmm0\n" \
			 :                                                                  \
			 :                                                                  \
			 : "xmm0")

static volatile int stop;

__attribute__((noinline)) static void add8(void)
{
	ADD8;
}
static void (*volatile add8_ptr)(void) = add8;
static long thread_loops[64];

static void *spin(void *arg)
{
	long loops = 0;

	while (!stop) {
		ADD8;
		loops++;
	}
	thread_loops[(long)arg] = loops;
	return NULL;
}

static void start_timer(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alrm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static int report(const char *out, long loops)
{
	struct itimerval it;
	FILE *f;

	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
	f = fopen(out, "w");
	if (!f)
		return 3;
	fprintf(f, "%ld %ld\n", loops, (long)alarms);
	return fclose(f) ? 3 : 0;
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
				 " dec %0\n jnz 1b"
				 : "+r"(m)
				 :
				 : "xmm0", "cc");
		memset(&it, 0, sizeof it);
		setitimer(ITIMER_REAL, &it, NULL);
		f = fopen(argv[3], "w");
		if (!f)
			return 3;
		fprintf(f, "%ld\n", (long)alarms);
		return fclose(f) ? 3 : 0;
	}
	if (!strcmp(argv[1], "alarms") && argc > 3) {
		long loops = 0;
		start_timer();
		while (__atomic_load_n(&alarms, __ATOMIC_SEQ_CST) < n) {
			ADD8;
			loops++;
		}
		return report(argv[3], loops);
	}
	if (!strcmp(argv[1], "calls") && argc > 3) {
		long loops = 0;
		start_timer();
		while (__atomic_load_n(&alarms, __ATOMIC_SEQ_CST) < n) {
			add8_ptr();
			loops++;
		}
		return report(argv[3], loops);
	}
	if (!strcmp(argv[1], "threads") && argc > 4) {
		long nt = n, k = atol(argv[3]), loops = 0;
		pthread_t th[64];
		struct timespec ms = { 0, 1000000 };
		if (nt < 1 || nt > 64)
			return 2;
		start_timer();
		for (long i = 0; i < nt; i++)
			if (pthread_create(&th[i], NULL, spin, (void *)i))
				return 3;
		while (__atomic_load_n(&alarms, __ATOMIC_SEQ_CST) < k)
			nanosleep(&ms, NULL);
		stop = 1;
		for (long i = 0; i < nt; i++) {
			pthread_join(th[i], NULL);
			loops += thread_loops[i];
		}
		return report(argv[4], loops);
	}
	return 2;
}
