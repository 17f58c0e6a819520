/*
 * tp_restart.c: a block of 4 addsd ending in a nanosleep `syscall`, run
 * 20 times while another thread sends SIGWINCH, which it does not catch,
 * every 200 us: DP_OPS 80.  Each SIGWINCH wakes the sleep and runs no
 * handler; the kernel restarts the call (restart_syscall) as the thread
 * resumes, backing its pc up over the `syscall`.  On the stopping path
 * the block is counted at the call's entry: not again at each restart.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static volatile int done;
static pid_t main_tid;

/* 4 DP FLOPs, then nanosleep(ts) in the same block */
__attribute__((noinline)) static long adds_then_sleep(const struct timespec *ts)
{
	long ret = SYS_nanosleep;
	__asm__ volatile("xorpd %%xmm0, %%xmm0\n"
			 "addsd %%xmm0, %%xmm0\n addsd %%xmm0, %%xmm0\n"
			 "addsd %%xmm0, %%xmm0\n addsd %%xmm0, %%xmm0\n"
			 "syscall"
			 : "+a"(ret)
			 : "D"(ts), "S"(0L)
			 : "rcx", "r11", "xmm0", "memory", "cc");
	return ret;
}

static void *kick(void *arg)
{
	long n = 0;

	(void)arg;
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		syscall(SYS_tgkill, getpid(), main_tid, SIGWINCH);
		n++;
		usleep(200);
	}
	return (void *)n;
}

int main(void)
{
	struct timespec ts = { 0, 5000000 }; /* 5 ms: 20 or so kicks each */
	pthread_t k;
	void *n = NULL;
	int bad = 0;

	signal(SIGWINCH, SIG_DFL); /* ignored, but a traced thread stops for it */
	main_tid = (pid_t)syscall(SYS_gettid);
	if (pthread_create(&k, NULL, kick, NULL))
		return 2;
	for (int i = 0; i < 20; i++)
		bad += adds_then_sleep(&ts) != 0;
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(k, &n);
	fprintf(stderr, "%ld kicks\n", (long)n); /* (differs run to run) */
	printf("slept 20 times, %d failed\n", bad);
	return (long)n >= 20 ? 0 : 3;
}
