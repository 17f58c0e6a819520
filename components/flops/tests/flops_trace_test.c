/*
 * flops_trace_test: the flops component's trace sources through PAPI's
 * public API, in the libpapi built with it, on known loops.  Run with
 * PAPI_FLOPS_SOURCE=trace (or model:PMU for the `model` case) by
 * tests/papi_trace.sh:
 *
 *   flops_trace_test exact      DP/SP/FP_OPS, a width qualifier, reads in
 *                               a row, PAPI_reset, PAPI_accum, PAPI_stop
 *   flops_trace_test threads    16 threads, each its own set and count
 *   flops_trace_test preset     PAPI_DP_OPS / PAPI_FP_OPS
 *   flops_trace_test fork       fork + exec of a child after PAPI_start
 *   flops_trace_test exit-thread  a thread calls exit(7) while counting
 *   flops_trace_test wait N     counts, prints "ready", runs N s (killed)
 *   flops_trace_test model LIST prints METRIC,VALUE of the kernels for
 *                               each metric of LIST (FP_OPS,DP_OPS ...)
 *   flops_trace_test region     the kernels, not counted: for
 *                               papi_flops_run --region to compare
 *   flops_trace_test shutdown   PAPI_shutdown, then FP work untraced
 *   flops_trace_test shutdown-threads  8 counting threads call
 *                               PAPI_shutdown at once (PAPI's test_fail
 *                               does): no crash, untraced
 *   flops_trace_test reinit     the same 3 times, PAPI_library_init
 *                               between, then an exact count in main
 *   flops_trace_test itimer     a SIGALRM handler without SA_RESTART
 *                               every 100 us (a sampling tool's timer)
 *                               while the first PAPI_start starts the
 *                               helper: it starts, DP_OPS exact
 *   flops_trace_test restart    the main thread waits in pthread_join
 *                               (futex) while signals it ignores wake it
 *                               (SIGWINCH, tgkill) every 20 us as long as
 *                               a counting thread works: the kernel
 *                               restarts the wait each time; its DP_OPS
 *                               exact, no crash
 *   flops_trace_test crash      SIGSEGV while counting
 *   flops_trace_test exec       execs sh (exit 4) while counting
 *   flops_trace_test late S     no PAPI: once traced, sleeps S s, runs the kernels, exits 3
 *   flops_trace_test spin S     no PAPI: FP work for S s, prints "spun"
 *   flops_trace_test work N     no PAPI: the kernels N times (make bench)
 *   flops_trace_test papiwork N the same inside a flops:::FP_OPS set
 *   flops_trace_test jit N      N kernels written and run once each on
 *                               32 RWX pages in turn (a JIT), DP_OPS read
 *                               exact along the way: with PFLOPS_TRACE_IDS
 *                               small, block ids are reused meanwhile
 *
 * The kernels are asm loops with a known FLOP count per iteration; the
 * AVX ones are skipped (SKIP line naming the feature) where CPUID lacks
 * it.  One line per check; exit 0 passed, 1 failed, 77 skipped.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include "papi.h"

#include "check.h"

/* n scalar DP adds: n FLOPs */
__attribute__((noinline)) void kernel_dp(long n)
{
	__asm__ volatile("pxor %%xmm0, %%xmm0\n"
			 "1: addsd %%xmm0, %%xmm0\n"
			 "dec %0\n"
			 "jnz 1b\n"
			 : "+r"(n)
			 :
			 : "xmm0", "cc");
}

/* n scalar SP multiplies: n FLOPs */
__attribute__((noinline)) void kernel_sp(long n)
{
	__asm__ volatile("pxor %%xmm1, %%xmm1\n"
			 "1: mulss %%xmm1, %%xmm1\n"
			 "dec %0\n"
			 "jnz 1b\n"
			 : "+r"(n)
			 :
			 : "xmm1", "cc");
}

/* n 256-bit DP FMAs: 8 n FLOPs (needs AVX2+FMA) */
__attribute__((noinline, target("avx2,fma"))) void kernel_fma256(long n)
{
	__asm__ volatile("vxorpd %%ymm2, %%ymm2, %%ymm2\n"
			 "1: vfmadd231pd %%ymm2, %%ymm2, %%ymm2\n"
			 "dec %0\n"
			 "jnz 1b\n"
			 "vzeroupper\n"
			 : "+r"(n)
			 :
			 : "xmm2", "cc");
}

/* n 512-bit DP adds: 8 n FLOPs (needs AVX-512F) */
__attribute__((noinline, target("avx512f"))) void kernel_add512(long n)
{
	__asm__ volatile("vxorpd %%zmm3, %%zmm3, %%zmm3\n"
			 "1: vaddpd %%zmm3, %%zmm3, %%zmm3\n"
			 "dec %0\n"
			 "jnz 1b\n"
			 "vzeroupper\n"
			 : "+r"(n)
			 :
			 : "xmm3", "cc");
}

/* n 512-bit DP adds under opmask k1 = 0x0f: 4 n FLOPs done, 8 n by a
 * PMU that counts masked lanes in full (needs AVX-512F) */
__attribute__((noinline, target("avx512f"))) void kernel_add512_masked(long n)
{
	__asm__ volatile("vxorpd %%zmm4, %%zmm4, %%zmm4\n"
			 "mov $0x0f, %%eax\n"
			 "kmovw %%eax, %%k1\n"
			 "1: vaddpd %%zmm4, %%zmm4, %%zmm4%{%%k1%}\n"
			 "dec %0\n"
			 "jnz 1b\n"
			 "vzeroupper\n"
			 : "+r"(n)
			 :
			 : "xmm4", "eax", "k1", "cc");
}

static int have_fma, have_512;

static void cpu_features(void)
{
	__builtin_cpu_init();
	have_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	have_512 = __builtin_cpu_supports("avx512f");
}

static int add(int set, const char *name)
{
	int rc = PAPI_add_named_event(set, name);
	CHECK(rc == PAPI_OK, "PAPI_add_named_event(%s): %s", name, rc == PAPI_OK ? "added" : PAPI_strerror(rc));
	return rc;
}

static int new_set(void)
{
	int set = PAPI_NULL, rc = PAPI_create_eventset(&set);
	if (rc != PAPI_OK) {
		printf("FAIL: PAPI_create_eventset: %s\n", PAPI_strerror(rc));
		exit(1);
	}
	return set;
}

static void init(void)
{
	int rc = PAPI_library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT) {
		printf("FAIL: PAPI_library_init: %s\n", PAPI_strerror(rc));
		exit(1);
	}
}

static int case_exact(void)
{
	int set = new_set();
	long long v[4], acc[4] = { 0 };
	const long N = 1000003, M = 500009, F = 100019, Z = 70001;
	int nev = 3;
	add(set, "flops:::DP_OPS");
	add(set, "flops:::SP_OPS");
	add(set, "flops:::FP_OPS");
	if (have_512)
		nev += add(set, "flops:::FP_OPS:W512") == PAPI_OK;
	else
		printf("SKIP: FP_OPS:W512 kernel: this CPU lacks AVX-512F\n");
	int rc = PAPI_start(set);
	CHECK(rc == PAPI_OK, "PAPI_start: %s", PAPI_strerror(rc));
	if (rc)
		return 1;
	rc = PAPI_read(set, v);
	CHECK(rc == PAPI_OK && v[0] == 0 && v[1] == 0 && v[2] == 0,
	      "read right after start: DP %lld SP %lld FP %lld (0 0 0)", v[0], v[1], v[2]);
	kernel_dp(N);
	PAPI_read(set, v);
	CHECK(v[0] == N && v[1] == 0 && v[2] == N, "after %ld DP adds: DP %lld SP %lld FP %lld", N, v[0], v[1], v[2]);
	kernel_sp(M);
	PAPI_read(set, v);
	CHECK(v[0] == N && v[1] == M && v[2] == N + M, "then %ld SP muls: DP %lld SP %lld FP %lld", M, v[0], v[1],
	      v[2]);
	long long dp = N, fp = N + M, w512 = 0;
	if (have_fma) {
		kernel_fma256(F);
		dp += 8 * F;
		fp += 8 * F;
		PAPI_read(set, v);
		CHECK(v[0] == dp && v[2] == fp, "then %ld 256-bit DP FMAs: DP %lld (%lld) FP %lld (%lld)", F, v[0], dp,
		      v[2], fp);
	} else {
		printf("SKIP: 256-bit FMA kernel: this CPU lacks AVX2+FMA\n");
	}
	if (have_512) {
		kernel_add512(Z);
		dp += 8 * Z;
		fp += 8 * Z;
		w512 += 8 * Z;
		PAPI_read(set, v);
		CHECK(v[0] == dp && v[2] == fp && v[3] == w512,
		      "then %ld 512-bit DP adds: DP %lld (%lld) FP %lld FP_OPS:W512 %lld (%lld)", Z, v[0], dp, v[2],
		      v[3], w512);
	}
	/* reads in a row: the component's own work is not counted */
	long long again[4];
	PAPI_read(set, v);
	PAPI_read(set, again);
	CHECK(!memcmp(v, again, nev * sizeof(v[0])) && v[0] == dp, "two reads in a row without work: DP %lld then %lld",
	      v[0], again[0]);
	rc = PAPI_reset(set);
	kernel_dp(N);
	PAPI_read(set, v);
	CHECK(rc == PAPI_OK && v[0] == N && v[2] == N, "PAPI_reset, %ld DP adds: DP %lld FP %lld", N, v[0], v[2]);
	rc = PAPI_accum(set, acc);
	kernel_sp(M);
	rc |= PAPI_accum(set, acc);
	CHECK(rc == PAPI_OK && acc[0] == N && acc[1] == M && acc[2] == N + M,
	      "PAPI_accum twice: DP %lld SP %lld FP %lld (%ld %ld %ld)", acc[0], acc[1], acc[2], N, M, N + M);
	kernel_dp(N);
	rc = PAPI_stop(set, v);
	CHECK(rc == PAPI_OK && v[0] == N && v[1] == 0, "PAPI_stop after %ld DP adds: DP %lld SP %lld", N, v[0], v[1]);
	kernel_dp(N);
	rc = PAPI_read(set, again);
	CHECK(rc != PAPI_OK || !memcmp(v, again, nev * sizeof(v[0])), "stopped: work after PAPI_stop not counted");
	rc = PAPI_start(set);
	kernel_sp(M);
	rc |= PAPI_stop(set, v);
	CHECK(rc == PAPI_OK && v[0] == 0 && v[1] == M, "started again: SP %lld (%ld) DP %lld (0)", v[1], M, v[0]);
	return 0;
}

struct thr {
	int idx;
	long long dp, fp;
	int rc;
};

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	int set = PAPI_NULL;
	long long v[2];
	t->rc = PAPI_register_thread();
	t->rc |= PAPI_create_eventset(&set);
	t->rc |= PAPI_add_named_event(set, "flops:::DP_OPS");
	t->rc |= PAPI_add_named_event(set, "flops:::FP_OPS");
	t->rc |= PAPI_start(set);
	kernel_dp(10000L * (t->idx + 1));
	kernel_sp(1000L * (t->idx + 1));
	t->rc |= PAPI_stop(set, v);
	t->dp = v[0];
	t->fp = v[1];
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
	PAPI_unregister_thread();
	return NULL;
}

static int case_threads(void)
{
	enum { NT = 16 };
	pthread_t th[NT];
	struct thr t[NT];
	int rc = PAPI_thread_init((unsigned long (*)(void))pthread_self);
	CHECK(rc == PAPI_OK, "PAPI_thread_init");
	/* the main thread counts too, around the threads' work */
	int set = new_set();
	long long v[1];
	add(set, "flops:::DP_OPS");
	PAPI_start(set);
	for (int i = 0; i < NT; i++) {
		t[i] = (struct thr){ .idx = i };
		pthread_create(&th[i], NULL, thread_main, &t[i]);
	}
	int bad = 0;
	for (int i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		long long dp = 10000LL * (i + 1), fp = dp + 1000LL * (i + 1);
		if (t[i].rc || t[i].dp != dp || t[i].fp != fp) {
			printf("FAIL: thread %d: DP %lld (%lld) FP %lld (%lld) rc %d\n", i, t[i].dp, dp, t[i].fp, fp,
			       t[i].rc);
			bad++;
		}
	}
	kernel_dp(777);
	PAPI_stop(set, v);
	CHECK(!bad, "16 threads, each its own set: DP_OPS 10000*(i+1) and FP_OPS 11000*(i+1) exact in every one");
	CHECK(v[0] == 777, "the main thread's set counts its own work only: DP %lld (777)", v[0]);
	return 0;
}

static int case_preset(void)
{
	int set = new_set(), code;
	long long v[2];
	int rc = PAPI_event_name_to_code("PAPI_DP_OPS", &code);
	PAPI_event_info_t info;
	if (rc == PAPI_OK && PAPI_get_event_info(code, &info) == PAPI_OK)
		printf("note: PAPI_DP_OPS is %s of %u native event(s): %s\n", info.derived[0] ? info.derived : "one",
		       info.count, info.count ? info.name[0] : "none");
	/* under the trace sources the component loads the presets itself,
	 * whatever PMU libpfm4 detects or not */
	CHECK(rc == PAPI_OK, "PAPI_DP_OPS exists: %s", PAPI_strerror(rc));
	rc = PAPI_add_event(set, code);
	CHECK(rc == PAPI_OK, "PAPI_add_event(PAPI_DP_OPS): %s", PAPI_strerror(rc));
	rc = PAPI_add_named_event(set, "PAPI_FP_OPS");
	CHECK(rc == PAPI_OK, "PAPI_add_named_event(PAPI_FP_OPS): %s", PAPI_strerror(rc));
	rc = PAPI_start(set);
	CHECK(rc == PAPI_OK, "PAPI_start with presets: %s", PAPI_strerror(rc));
	kernel_dp(123457);
	kernel_sp(1000);
	rc = PAPI_stop(set, v);
	CHECK(rc == PAPI_OK && v[0] == 123457 && v[1] == 124457, "PAPI_DP_OPS %lld (123457), PAPI_FP_OPS %lld (124457)",
	      v[0], v[1]);
	return 0;
}

static int case_fork(void)
{
	int set = new_set();
	long long v[1];
	add(set, "flops:::DP_OPS");
	PAPI_start(set);
	kernel_dp(1000);
	pid_t c = fork();
	if (c == 0) {
		kernel_dp(5000); /* the child's: not the parent's */
		execl("/bin/sh", "sh", "-c", "exit 5", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	waitpid(c, &st, 0);
	kernel_dp(2000);
	int rc = PAPI_stop(set, v);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5, "forked child exec'd sh and exited 5 (status 0x%x)", st);
	CHECK(rc == PAPI_OK && v[0] == 3000, "parent's DP_OPS over fork+exec+wait: %lld (3000)", v[0]);
	return 0;
}

static void *exit_thread(void *arg)
{
	(void)arg;
	kernel_dp(1000);
	exit(7);
}

static int case_exit_thread(void)
{
	int set = new_set();
	pthread_t th;
	add(set, "flops:::DP_OPS");
	PAPI_start(set);
	kernel_dp(1000);
	fflush(stdout);
	pthread_create(&th, NULL, exit_thread, NULL);
	pthread_join(th, NULL);
	return 1; /* not reached: exit(7) from the thread */
}

static int case_wait(int secs)
{
	int set = new_set();
	long long v[1];
	add(set, "flops:::DP_OPS");
	PAPI_start(set);
	kernel_dp(1000);
	PAPI_read(set, v);
	printf("ready %lld\n", v[0]);
	fflush(stdout);
	for (int i = 0; i < secs * 10; i++) {
		kernel_dp(100000);
		usleep(100000);
	}
	return 0;
}

void region_body(void);

static int case_model(const char *list)
{
	int set = new_set(), n = 0, rc = PAPI_OK;
	long long v[8];
	char buf[256], *names[8];
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < 8; t = strtok_r(NULL, ",", &save)) {
		char ev[96];
		snprintf(ev, sizeof(ev), "flops:::%s", t);
		names[n++] = t;
		rc |= PAPI_add_named_event(set, ev);
	}
	rc |= PAPI_start(set);
	region_body();
	rc |= PAPI_stop(set, v);
	if (rc != PAPI_OK) {
		printf("FAIL: model: adding, starting or stopping %s failed\n", list);
		return 1;
	}
	for (int i = 0; i < n; i++)
		printf("%s,%lld\n", names[i], v[i]);
	return 0;
}

/* the kernels of the `model` case, as one function for --region */
__attribute__((noinline)) void region_body(void)
{
	kernel_dp(100003);
	kernel_sp(20011);
	if (have_fma)
		kernel_fma256(3001);
	if (have_512) {
		kernel_add512(1009);
		kernel_add512_masked(2003);
	}
}

static int case_shutdown(void)
{
	int set = new_set();
	long long v[1];
	add(set, "flops:::DP_OPS");
	PAPI_start(set);
	kernel_dp(4242);
	PAPI_stop(set, v);
	CHECK(v[0] == 4242, "before PAPI_shutdown: DP %lld (4242)", v[0]);
	PAPI_shutdown();
	/* untraced now: a traced process shows a tracer in /proc */
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int tracer = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "TracerPid:", 10))
			tracer = atoi(line + 10);
	if (f)
		fclose(f);
	CHECK(tracer == 0, "after PAPI_shutdown the process is no longer traced (TracerPid %d)", tracer);
	kernel_dp(1000000);
	return 0;
}

/* Every thread of a threaded program calls PAPI_shutdown at once, as
 * PAPI's own test_fail does when a check fails in each (ctests/kufrin):
 * a double free or a freed thread list walked (SIGABRT, SIGSEGV) before
 * PAPI_shutdown was serialized (patches/papi-shutdown-once.patch). */
static int traced(void);
enum { SD_NT = 8 };
static pthread_barrier_t sd_barrier;

static void *shutdown_thread(void *arg)
{
	int *rc = arg, set = PAPI_NULL;
	*rc = PAPI_register_thread();
	*rc |= PAPI_create_eventset(&set);
	*rc |= PAPI_add_named_event(set, "flops:::DP_OPS");
	*rc |= PAPI_start(set);
	kernel_dp(1000);
	pthread_barrier_wait(&sd_barrier);
	PAPI_shutdown(); /* while counting, all at once */
	return NULL;
}

static int case_shutdown_threads(void)
{
	pthread_t th[SD_NT];
	int rc[SD_NT], bad = 0;
	pthread_barrier_init(&sd_barrier, NULL, SD_NT);
	CHECK(PAPI_thread_init((unsigned long (*)(void))pthread_self) == PAPI_OK, "PAPI_thread_init");
	for (int i = 0; i < SD_NT; i++)
		pthread_create(&th[i], NULL, shutdown_thread, &rc[i]);
	for (int i = 0; i < SD_NT; i++) {
		pthread_join(th[i], NULL);
		bad += rc[i] != PAPI_OK;
	}
	pthread_barrier_destroy(&sd_barrier);
	CHECK(!bad, "8 counting threads: every set started (%d did not)", bad);
	CHECK(PAPI_is_initialized() == PAPI_NOT_INITED,
	      "8 threads calling PAPI_shutdown at once: no crash, PAPI shut down");
	CHECK(!traced(), "then the process is no longer traced");
	return 0;
}

/* Then initialized again, three times: another thread's PAPI_shutdown
 * left this thread's ThreadInfo_t pointer to freed memory, and the next
 * PAPI_library_init wrote through it (a corrupted heap, "munmap_chunk():
 * invalid pointer", before patches/papi-shutdown-once.patch); the main
 * thread then counts exactly. */
static int case_reinit(void)
{
	for (int round = 0; round < 3; round++) {
		if (round)
			init();
		if (case_shutdown_threads())
			return 1;
	}
	init();
	int set = new_set();
	long long v[1];
	add(set, "flops:::DP_OPS");
	PAPI_start(set);
	kernel_dp(4242);
	PAPI_stop(set, v);
	CHECK(v[0] == 4242, "PAPI initialized a 4th time after threads shut it down: DP %lld (4242)", v[0]);
	PAPI_shutdown();
	return 0;
}

/* exec while counting: the new image runs untraced (it prints its
 * TracerPid line) and its status is the program's */
static int case_exec(void)
{
	int set = new_set();
	add(set, "flops:::DP_OPS");
	PAPI_start(set);
	kernel_dp(1000);
	execl("/bin/sh", "sh", "-c", "sleep 0.5; grep TracerPid /proc/$$/status; exit 4", (char *)NULL);
	return 1;
}

/* not NULL: UBSan would report a null store instead of the fault */
static volatile int *volatile nowhere = (volatile int *)16;

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* Tools that sample by timer (TAU, HPCToolkit, Score-P) keep one
 * running; its signal must not make PAPI_start fail (an interrupted
 * wait for the helper: EINTR) */
static int case_itimer(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART: system calls end with EINTR */
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	setitimer(ITIMER_REAL, &it, NULL);
	const long N = 1000003;
	long long v = -1;
	int set = new_set();
	add(set, "flops:::DP_OPS");
	int rc = PAPI_start(set);
	/* off once started: a program's signals while it is traced are
	 * other tests' (test_trace, the transparency suite) */
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	if (rc == PAPI_OK) {
		kernel_dp(N);
		rc = PAPI_stop(set, &v);
	}
	CHECK(rc == PAPI_OK && v == N && alarms > 0,
	      "SIGALRM every 100 us while PAPI_start starts the helper: %s, DP_OPS %lld (%ld), %d alarms",
	      PAPI_strerror(rc), v, N, (int)alarms);
	return 0;
}

static volatile int restart_started, restart_done;
static int restart_start_rc; /* the worker's PAPI_start */

static void *restart_worker(void *arg)
{
	long long *v = arg;
	PAPI_register_thread();
	int set = new_set();
	add(set, "flops:::DP_OPS");
	if ((restart_start_rc = PAPI_start(set)) == PAPI_OK) {
		/* traced from here (the first PAPI_start attached the tracer) */
		__atomic_store_n(&restart_started, 1, __ATOMIC_RELEASE);
		for (int i = 0; i < 200; i++) {
			kernel_dp(50000);
			usleep(100); /* (signals land while it works) */
		}
		PAPI_stop(set, v);
	}
	__atomic_store_n(&restart_started, 1, __ATOMIC_RELEASE);
	PAPI_unregister_thread();
	return NULL;
}

static void *restart_kicker(void *arg)
{
	pid_t main_tid = *(pid_t *)arg;
	long n = 0;
	while (!__atomic_load_n(&restart_started, __ATOMIC_ACQUIRE))
		usleep(100);
	while (!__atomic_load_n(&restart_done, __ATOMIC_ACQUIRE)) {
		syscall(SYS_tgkill, getpid(), main_tid, SIGWINCH);
		n++;
		usleep(20);
	}
	return (void *)n;
}

/* A signal that runs no handler (ignored by default, but passed to the
 * tracer) wakes a futex wait; the kernel restarts the call as the thread
 * resumes, backing rip up over the `syscall`: the tracer must not move
 * it then (it did, into a copy: the two bytes before it ran; SIGSEGV,
 * SIGILL or SIGTRAP under a SIGPROF timer, 6 runs in 100).  The main
 * thread was blocked in the call when the tracer attached. */
static int case_restart(void)
{
	int rc = PAPI_thread_init((unsigned long (*)(void))pthread_self);
	CHECK(rc == PAPI_OK, "PAPI_thread_init");
	signal(SIGWINCH, SIG_DFL);
	pid_t me = (pid_t)syscall(SYS_gettid);
	long long v = -1;
	void *kicks = NULL;
	pthread_t w, k;
	pthread_create(&w, NULL, restart_worker, &v);
	pthread_create(&k, NULL, restart_kicker, &me);
	pthread_join(w, NULL); /* woken and restarted at each SIGWINCH */
	__atomic_store_n(&restart_done, 1, __ATOMIC_RELEASE);
	pthread_join(k, &kicks);
	CHECK(restart_start_rc == PAPI_OK, "the worker's PAPI_start: %s", PAPI_strerror(restart_start_rc));
	CHECK(v == 200LL * 50000 && (long)kicks >= 100,
	      "pthread_join woken by %ld ignored signals while traced (100 or more): the worker's DP_OPS %lld (%lld)",
	      (long)kicks, v, 200LL * 50000);
	return 0;
}

static int case_crash(void)
{
	int set = new_set();
	add(set, "flops:::DP_OPS");
	PAPI_start(set);
	kernel_dp(1000);
	fflush(stdout);
	*nowhere = 1; /* SIGSEGV while counting */
	return 1;
}

/* TracerPid of /proc/self/status is not 0 */
static int traced(void)
{
	char line[256];
	int pid = 0;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid != 0;
}

/* kernel i at p: K = 1 + i % 4 addsd (K FLOPs), returns i */
static void jit_emit(unsigned char *p, long i)
{
	int32_t v = (int32_t)i;

	for (long k = 0; k <= i % 4; k++, p += 4)
		memcpy(p, "\xf2\x0f\x58\xc0", 4); /* addsd %xmm0,%xmm0 */
	*p++ = 0xb8;				  /* mov $i, %eax */
	memcpy(p, &v, 4);
	p[4] = 0xc3; /* ret */
}

static int case_jit(long n)
{
	enum { PAGES = 32, PER = 16 };
	unsigned char *mem = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
	int set = new_set(), stale = 0, rc;
	long long v = 0, want = 0, bad_at = -1, bad_v = 0;

	if (mem == MAP_FAILED)
		return 1;
	add(set, "flops:::DP_OPS");
	rc = PAPI_start(set);
	CHECK(rc == PAPI_OK, "jit: PAPI_start: %s", PAPI_strerror(rc));
	if (rc)
		return 1;
	for (long i = 0; i < n; i += PER) {
		unsigned char *pg = mem + 4096 * (i / PER % PAGES);
		for (long j = 0; j < PER && i + j < n; j++)
			jit_emit(pg + 256 * j, i + j);
		for (long j = 0; j < PER && i + j < n; j++) {
			stale += ((int (*)(void))(void *)(pg + 256 * j))() != (int)(i + j);
			want += 1 + (i + j) % 4;
		}
		if (i / PER % 64 == 0 && bad_at < 0 && (PAPI_read(set, &v) || v != want))
			bad_at = i, bad_v = v;
	}
	rc = PAPI_stop(set, &v);
	CHECK(!stale, "jit: %ld kernels each ran as written (%d stale)", n, stale);
	CHECK(bad_at < 0, "jit: DP_OPS read exact along the way (first wrong: %lld after kernel %lld)", bad_v, bad_at);
	CHECK(rc == PAPI_OK && v == want, "jit: DP_OPS %lld at the end (%lld)", v, want);
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "exact";
	setvbuf(stdout, NULL, _IOLBF, 0);
	cpu_features();
	if (!strcmp(c, "region")) {
		region_body();
		return 0;
	}
	if (!strcmp(c, "late")) { /* for papi_flops_run --pid: attached while it sleeps */
		/* until a tracer holds it (at most 60 s: a loaded machine is
		 * slow to start one), then S s more for it to take over */
		for (int i = 0; i < 600 && !traced(); i++)
			usleep(100000);
		sleep(argc > 2 ? atoi(argv[2]) : 1);
		region_body();
		return 3;
	}
	if (!strcmp(c, "work") || !strcmp(c, "papiwork")) {
		/* make bench: the unmasked kernels N times, alone or in a set */
		int n = argc > 2 ? atoi(argv[2]) : 100, set = PAPI_NULL;
		long long v = 0;
		if (c[0] == 'p') {
			init();
			if (PAPI_create_eventset(&set) || PAPI_add_named_event(set, "flops:::FP_OPS") ||
			    PAPI_start(set))
				return 1;
		}
		for (int i = 0; i < n; i++) { /* unmasked: the code cache's speed */
			kernel_dp(100003);
			kernel_sp(20011);
			if (have_fma)
				kernel_fma256(3001);
			if (have_512)
				kernel_add512(1009);
		}
		if (c[0] == 'p' && PAPI_stop(set, &v))
			return 1;
		if (c[0] == 'p')
			printf("FP_OPS %lld\n", v);
		return 0;
	}
	if (!strcmp(c, "spin")) { /* FP work for N s, then "spun" */
		int n = argc > 2 ? atoi(argv[2]) : 3;
		for (int i = 0; i < n * 20; i++) {
			kernel_dp(200000);
			usleep(50000);
		}
		printf("spun\n");
		return 0;
	}
	init();
	int rc;
	if (!strcmp(c, "exact"))
		rc = case_exact();
	else if (!strcmp(c, "threads"))
		rc = case_threads();
	else if (!strcmp(c, "preset"))
		rc = case_preset();
	else if (!strcmp(c, "fork"))
		rc = case_fork();
	else if (!strcmp(c, "exit-thread"))
		rc = case_exit_thread();
	else if (!strcmp(c, "wait"))
		rc = case_wait(argc > 2 ? atoi(argv[2]) : 5);
	else if (!strcmp(c, "model"))
		return case_model(argc > 2 ? argv[2] : "FP_OPS,DP_OPS");
	else if (!strcmp(c, "shutdown"))
		rc = case_shutdown();
	else if (!strcmp(c, "shutdown-threads"))
		rc = case_shutdown_threads();
	else if (!strcmp(c, "reinit"))
		rc = case_reinit();
	else if (!strcmp(c, "itimer"))
		rc = case_itimer();
	else if (!strcmp(c, "restart"))
		rc = case_restart();
	else if (!strcmp(c, "crash"))
		rc = case_crash();
	else if (!strcmp(c, "exec"))
		rc = case_exec();
	else if (!strcmp(c, "jit"))
		rc = case_jit(argc > 2 ? atol(argv[2]) : 20000);
	else {
		fprintf(stderr, "flops_trace_test: unknown case %s\n", c);
		return 2;
	}
	return rc || failures ? 1 : 0;
}
