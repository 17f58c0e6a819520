/*
 * calib_freq: much new code at once, for translation requests without a
 * stop (trace_freq.c): threads that each call 1024
 * distinct functions (each a branch and one addsd or subsd: one DP
 * scalar add a call) through a table of pointers (lookup misses) and
 * from a chain of direct calls (exits), started together, while a real
 * time timer (SIGALRM every 200 us) interrupts the process.
 *
 *   calib_freq run T R      T threads (1..16), R rounds: T*R*2048 adds;
 *                           prints "adds A signals S"
 *   calib_freq seccomp T R  the same under a seccomp filter that kills
 *                           the process at a shared FUTEX_WAIT or
 *                           FUTEX_WAKE (glibc's are private): a tracer
 *                           must stop asking through its futex
 *   calib_freq tsync T R    the same while another thread, once the
 *                           workers are a quarter into their first round,
 *                           sets that filter on every thread at once
 *                           (SECCOMP_FILTER_FLAG_TSYNC): a tracer must
 *                           stop asking before the call runs, and get
 *                           the threads already asking out of it
 *   calib_freq vfork T R    a vfork child sets that filter and execs
 *                           /bin/true while its parent waits in vfork
 *                           (a tracer must not wait for the parent to
 *                           stop), then the run
 *   calib_freq daemon T R F  the same in a child that outlives its
 *                           parent (a tracer detaches it while its
 *                           threads may be in requests): it writes "ok
 *                           A" to F when its own sum is right
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stddef.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#define F1(i)                                                  \
	static __attribute__((noinline)) double f##i(double x) \
	{                                                      \
		if (x > (double)(i))                           \
			x -= 1.0;                              \
		else                                           \
			x += 0.5;                              \
		__asm__ volatile("" : "+x"(x));                \
		return x;                                      \
	}
#define F4(i) F1(i##0) F1(i##1) F1(i##2) F1(i##3)
#define F16(i) F4(i##0) F4(i##1) F4(i##2) F4(i##3)
#define F64(i) F16(i##0) F16(i##1) F16(i##2) F16(i##3)
#define F256(i) F64(i##0) F64(i##1) F64(i##2) F64(i##3)
/* clang-format off */
F256(10) F256(11) F256(12) F256(13)
/* clang-format on */

#define P1(i) f##i,
#define P4(i) P1(i##0) P1(i##1) P1(i##2) P1(i##3)
#define P16(i) P4(i##0) P4(i##1) P4(i##2) P4(i##3)
#define P64(i) P16(i##0) P16(i##1) P16(i##2) P16(i##3)
#define P256(i) P64(i##0) P64(i##1) P64(i##2) P64(i##3)
	static double (*const tab[])(double) = { P256(10) P256(11) P256(12) P256(13) };

#define C1(i) x = f##i(x);
#define C4(i) C1(i##0) C1(i##1) C1(i##2) C1(i##3)
#define C16(i) C4(i##0) C4(i##1) C4(i##2) C4(i##3)
#define C64(i) C16(i##0) C16(i##1) C16(i##2) C16(i##3)
#define C256(i) C64(i##0) C64(i##1) C64(i##2) C64(i##3)
static __attribute__((noinline)) double chain(double x)
{
	C256(10) C256(11) C256(12) C256(13) return x;
}

#define NF (int)(sizeof tab / sizeof tab[0])

static volatile sig_atomic_t nsig;
static pthread_barrier_t go;
static int rounds;
static unsigned ncalls; /* the workers' calls so far (tsync) */
static int tsync_at;	/* ... at which the filter comes, or 0 */

static void on_prof(int s)
{
	(void)s;
	nsig++;
}

struct res {
	double x;
};

static void *work(void *arg)
{
	struct res *r = arg;
	double x = 0.0;

	pthread_barrier_wait(&go);
	for (int k = 0; k < rounds; k++) {
		for (int i = 0; i < NF; i++) {
			x = tab[i](x);
			if (tsync_at)
				__atomic_add_fetch(&ncalls, 1, __ATOMIC_RELAXED);
		}
		x = chain(x);
	}
	r->x = x;
	return NULL;
}

/* the same computation without the functions: each call adds 0.5 while
 * x is at most its constant, else subtracts 1 */
static double expect_x(void)
{
	static const int cst[] = {
#define K1(i) i,
#define K4(i) K1(i##0) K1(i##1) K1(i##2) K1(i##3)
#define K16(i) K4(i##0) K4(i##1) K4(i##2) K4(i##3)
#define K64(i) K16(i##0) K16(i##1) K16(i##2) K16(i##3)
#define K256(i) K64(i##0) K64(i##1) K64(i##2) K64(i##3)
		K256(10) K256(11) K256(12) K256(13)
	};
	double x = 0.0;

	for (int k = 0; k < rounds; k++)
		for (int pass = 0; pass < 2; pass++)
			for (int i = 0; i < NF; i++)
				x = x > (double)cst[i] ? x - 1.0 : x + 0.5;
	return x;
}

/* kill at futex(addr, FUTEX_WAIT or FUTEX_WAKE, ...); allow the rest */
static int strict_futex(int tsync)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FUTEX_WAIT, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FUTEX_WAKE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { sizeof f / sizeof f[0], f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	if (tsync) /* (it sets no_new_privs on the others too) */
		return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &p);
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p);
}

/* the filter on every thread, while the workers ask for new code */
static void *tsync(void *arg)
{
	int *rc = arg;

	pthread_barrier_wait(&go);
	while (__atomic_load_n(&ncalls, __ATOMIC_RELAXED) < (unsigned)tsync_at)
		sched_yield();
	*rc = strict_futex(1);
	return NULL;
}

static int run(int nt, int quiet)
{
	pthread_t th[17];
	struct res r[16];
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct sigaction sa;
	double want = expect_x();
	int bad = 0, frc = -1;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	pthread_barrier_init(&go, NULL, (unsigned)nt + !!tsync_at);
	for (int t = 1; t < nt; t++)
		pthread_create(&th[t], NULL, work, &r[t]);
	if (tsync_at)
		pthread_create(&th[nt], NULL, tsync, &frc);
	work(&r[0]);
	for (int t = 1; t < nt + !!tsync_at; t++)
		pthread_join(th[t], NULL);
	if (tsync_at && frc) {
		printf("seccomp TSYNC failed: %d\n", frc);
		return 1;
	}
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int t = 0; t < nt; t++)
		bad |= r[t].x != want;
	if (!quiet)
		printf("adds %lld signals %d%s\n", (long long)nt * rounds * 2 * NF, (int)nsig, bad ? " WRONG" : "");
	return bad;
}

int main(int argc, char **argv)
{
	int nt = argc > 2 ? atoi(argv[2]) : 0;

	rounds = argc > 3 ? atoi(argv[3]) : 0;
	if (nt < 1 || nt > 16 || rounds < 1)
		return 2;
	if (!strcmp(argv[1], "run"))
		return run(nt, 0);
	if (!strcmp(argv[1], "seccomp"))
		return strict_futex(0) ? 4 : run(nt, 0);
	if (!strcmp(argv[1], "vfork")) {
		int st;
		pid_t p = vfork();
		if (p == 0) {
			if (!strict_futex(0))
				execl("/bin/true", "true", (char *)NULL);
			_exit(5);
		}
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
			return 6;
		return run(nt, 0);
	}
	if (!strcmp(argv[1], "tsync")) {
		tsync_at = nt * NF / 4;
		return run(nt, 0);
	}
	if (!strcmp(argv[1], "daemon") && argc > 4) {
		pid_t p = fork();
		if (p < 0)
			return 3;
		if (p > 0) {
			usleep(20000); /* the child in its cold start */
			return 0;
		}
		setsid();
		int bad = run(nt, 1);
		FILE *f = fopen(argv[4], "w");
		if (f) {
			fprintf(f, bad ? "wrong\n" : "ok %lld\n", (long long)nt * rounds * 2 * NF);
			fclose(f);
		}
		return bad;
	}
	return 2;
}
