/*
 * flops_trace_ovf_test: PAPI_overflow on flops events under
 * PAPI_FLOPS_SOURCE=trace (run by tests/papi_trace.sh):
 *
 *   flops_trace_ovf_test loop      10,000,000 DP FLOPs, P = 100000: exactly
 *                                  100 handler calls, each address in the
 *                                  loop; a period below one instruction's
 *                                  FLOPs; SP_OPS and :W128 weights
 *   flops_trace_ovf_test threads   4 threads, each its own set (as
 *                                  HPCToolkit's papi-c.c: PAPI_thread_init,
 *                                  per-thread sets, PAPI_overflow with a
 *                                  handler, start, stop): each gets
 *                                  floor(its FLOPs / P) calls, its own
 *   flops_trace_ovf_test together  4 threads start DP_OPS sets at the same
 *                                  moment (a barrier) after one SP_OPS set,
 *                                  25 times: none refused, each count and
 *                                  its calls exact
 *   flops_trace_ovf_test storm     the overflowing event switched between
 *                                  DP_OPS and SP_OPS 100 times (each switch
 *                                  drops and re-translates every copy) while
 *                                  3 threads run library code in the cache:
 *                                  every set's value and calls exact, every
 *                                  worker round's checksum the same
 *   flops_trace_ovf_test refuse    a status event, two overflowing events in
 *                                  one set: an error, never PAPI_OK
 *   flops_trace_ovf_test preset    PAPI_DP_OPS (where PAPI's presets load:
 *                                  LIBPFM_FORCE_PMU=skx) as hpcrun -e
 *                                  PAPI_DP_OPS@P names it; exit 77 without
 *
 * The kernels are SSE2 asm loops (every x86-64 has them) between labels,
 * so the handler can tell an address in the loop.  Exit 0 passed, 1
 * failed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "papi.h"

#include "check.h"

/* n iterations of one mulpd (2 DP FLOPs) and one addps (4 SP FLOPs) */
__attribute__((noinline)) void kernel_ovf(long n)
{
	__asm__ volatile("pxor %%xmm0, %%xmm0\n"
			 "pxor %%xmm1, %%xmm1\n"
			 ".globl kovf_lo\n kovf_lo:\n"
			 "1: mulpd %%xmm0, %%xmm0\n"
			 "addps %%xmm1, %%xmm1\n"
			 "dec %0\n"
			 "jnz 1b\n"
			 ".globl kovf_hi\n kovf_hi:\n"
			 : "+r"(n)
			 :
			 : "xmm0", "xmm1", "cc");
}
extern const char kovf_lo[], kovf_hi[];

struct tally {
	long calls, in_loop, bad_vector;
	long long vector;
};
static __thread struct tally *mine;

static void handler(int es, void *addr, long long vector, void *ctx)
{
	struct tally *t = mine;
	(void)es;
	(void)ctx;
	if (!t)
		return;
	t->calls++;
	if (vector != t->vector)
		t->bad_vector++;
	if ((const char *)addr >= kovf_lo && (const char *)addr < kovf_hi)
		t->in_loop++;
}

/* one set with `name` overflowing every p; the loop n times: rc */
static int run(const char *name, long long p, long n, long long *value, struct tally *t)
{
	int set = PAPI_NULL, code, rc;
	memset(t, 0, sizeof(*t));
	mine = t;
	if ((rc = PAPI_create_eventset(&set)) || (rc = PAPI_event_name_to_code(name, &code)) ||
	    (rc = PAPI_add_event(set, code)))
		return rc;
	t->vector = 1; /* its position in the set: the first */
	if ((rc = PAPI_overflow(set, code, (int)p, 0, handler)) == PAPI_OK && (rc = PAPI_start(set)) == PAPI_OK) {
		kernel_ovf(n);
		rc = PAPI_stop(set, value);
	}
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
	mine = NULL;
	return rc;
}

static void loop(void)
{
	struct tally t;
	long long v = 0;
	int rc = run("flops:::DP_OPS", 100000, 5000000, &v, &t);
	CHECK(rc == PAPI_OK && v == 10000000 && t.calls == 100 && t.in_loop == 100 && !t.bad_vector,
	      "DP_OPS, 10000000 FLOPs, P = 100000: %s, read %lld, %ld handler calls (100), %ld in the loop",
	      PAPI_strerror(rc), v, t.calls, t.in_loop);
	/* P below one instruction's weight (mulpd: 2): a call per crossing
	 * instruction, whichever multiples it crosses */
	rc = run("flops:::SP_OPS", 3, 10000, &v, &t);
	CHECK(rc == PAPI_OK && v == 40000 && t.calls == 10000 && t.in_loop == t.calls,
	      "SP_OPS, 40000 FLOPs, P = 3: %s, read %lld, %ld calls (10000: one per addps), %ld in the loop",
	      PAPI_strerror(rc), v, t.calls, t.in_loop);
	/* (the crossings fall on either instruction: the signal that
	 * interrupts a block stepped to its crossing counts nothing twice) */
	rc = run("flops:::FP_OPS", 7777, 100000, &v, &t);
	CHECK(rc == PAPI_OK && v == 600000 && t.calls == 600000 / 7777 && t.in_loop == t.calls,
	      "FP_OPS, 600000 FLOPs, P = 7777: %s, read %lld, %ld calls (%d), %ld in the loop", PAPI_strerror(rc), v,
	      t.calls, 600000 / 7777, t.in_loop);
	rc = run("flops:::DP_OPS:W256", 1000, 100000, &v, &t);
	CHECK(rc == PAPI_OK && v == 0 && t.calls == 0, "DP_OPS:W256 (no 256-bit work): %s, read %lld, %ld calls",
	      PAPI_strerror(rc), v, t.calls);

	/* PAPI_reset restarts the overflow count with the value */
	{
		int set = PAPI_NULL, code = 0;
		long c1 = -1;
		memset(&t, 0, sizeof(t));
		mine = &t;
		t.vector = 1;
		PAPI_create_eventset(&set);
		PAPI_event_name_to_code("flops:::DP_OPS", &code);
		PAPI_add_event(set, code);
		rc = PAPI_overflow(set, code, 100000, 0, handler);
		if (rc == PAPI_OK && (rc = PAPI_start(set)) == PAPI_OK) {
			kernel_ovf(45000); /* 90000 */
			if ((rc = PAPI_reset(set)) == PAPI_OK) {
				kernel_ovf(10000); /* 20000 since the reset */
				c1 = t.calls;
				kernel_ovf(40000); /* 100000 */
				rc = PAPI_stop(set, &v);
			}
		}
		CHECK(rc == PAPI_OK && c1 == 0 && t.calls == 1 && v == 100000,
		      "PAPI_reset restarts the count: %s, %ld calls 20000 FLOPs after it (0), %ld at 100000 (1), read %lld",
		      PAPI_strerror(rc), c1, t.calls, v);
		PAPI_cleanup_eventset(set);
		PAPI_destroy_eventset(&set);
		mine = NULL;
	}

	/* PAPI_profil on top: every overflow in a bin of the loop */
	static unsigned short bins[64];
	int set = PAPI_NULL, code = 0;
	long sum = 0;
	memset(bins, 0, sizeof(bins));
	PAPI_create_eventset(&set);
	PAPI_event_name_to_code("flops:::DP_OPS", &code);
	PAPI_add_event(set, code);
	rc = PAPI_profil(bins, sizeof(bins), (vptr_t)kovf_lo, 65536, set, code, 100000, PAPI_PROFIL_POSIX);
	if (rc == PAPI_OK && (rc = PAPI_start(set)) == PAPI_OK) {
		kernel_ovf(5000000);
		rc = PAPI_stop(set, &v);
	}
	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++)
		sum += bins[i];
	CHECK(rc == PAPI_OK && sum == 100,
	      "PAPI_profil on DP_OPS, P = 100000: %s, %ld samples in the loop's bins (100)", PAPI_strerror(rc), sum);
	PAPI_profil(bins, sizeof(bins), (vptr_t)kovf_lo, 65536, set, code, 0, PAPI_PROFIL_POSIX);
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
}

static int preset(void)
{
	struct tally t;
	long long v = 0;
	if (PAPI_query_event(PAPI_DP_OPS) != PAPI_OK) {
		printf("SKIP: flops_trace_ovf_test preset: PAPI_DP_OPS does not exist here (no preset table loaded)\n");
		return 77;
	}
	int rc = run("PAPI_DP_OPS", 100000, 5000000, &v, &t);
	CHECK(rc == PAPI_OK && v == 10000000 && t.calls == 100 && t.in_loop == 100,
	      "PAPI_DP_OPS, 10000000 FLOPs, P = 100000: %s, read %lld, %ld handler calls (100), %ld in the loop",
	      PAPI_strerror(rc), v, t.calls, t.in_loop);
	return 0;
}

struct thr {
	int idx;
	long calls, in_loop;
	long long value;
	int rc;
};

static void *worker(void *arg)
{
	struct thr *w = arg;
	struct tally t;
	PAPI_register_thread();
	w->rc = run("flops:::DP_OPS", 99991, 1000000L * (w->idx + 1), &w->value, &t);
	w->calls = t.calls;
	w->in_loop = t.in_loop;
	PAPI_unregister_thread();
	return NULL;
}

static void threads(void)
{
	pthread_t th[4];
	struct thr w[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (struct thr){ .idx = i };
		pthread_create(&th[i], NULL, worker, &w[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		long long f = 2000000LL * (i + 1);
		CHECK(w[i].rc == PAPI_OK && w[i].value == f && w[i].calls == f / 99991 && w[i].in_loop == w[i].calls,
		      "thread %d: %s, DP_OPS %lld, %ld calls (%lld), %ld in the loop", i, PAPI_strerror(w[i].rc),
		      w[i].value, w[i].calls, f / 99991, w[i].in_loop);
	}
}

/* together: the arming of 4 threads' sets at once (PAPI's
 * overflow_pthreads starts its threads' sets so).  Each round thread 0
 * first overflows SP_OPS alone, so that the 4 DP_OPS sets change the
 * process's weight as they start (the race was in that change).  Every
 * thread goes through every barrier, failed or not. */
static pthread_barrier_t together_bar;

static void *together_worker(void *arg)
{
	struct thr *w = arg;
	struct tally t;
	long long v;
	PAPI_register_thread();
	for (int r = 1; r <= 25; r++) {
		pthread_barrier_wait(&together_bar);
		if (w->idx == 0 && !w->rc && !w->in_loop) {
			w->rc = run("flops:::SP_OPS", 10007, 5000, &v, &t);
			if (!w->rc && v != 20000) {
				w->value = v;
				w->in_loop = r;
			}
		}
		pthread_barrier_wait(&together_bar);
		if (w->rc || w->in_loop)
			continue; /* failed: only the barriers */
		v = -1;
		w->rc = run("flops:::DP_OPS", 10007, 50000, &v, &t);
		if (!w->rc && (v != 100000 || t.calls != 100000 / 10007 || t.in_loop != t.calls)) {
			w->value = v;
			w->calls = t.calls;
			w->in_loop = r; /* (the round that went wrong) */
		}
	}
	PAPI_unregister_thread();
	return NULL;
}

static void together(void)
{
	pthread_t th[4];
	struct thr w[4];
	pthread_barrier_init(&together_bar, NULL, 4);
	for (int i = 0; i < 4; i++) {
		w[i] = (struct thr){ .idx = i };
		pthread_create(&th[i], NULL, together_worker, &w[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		CHECK(w[i].rc == PAPI_OK && w[i].in_loop == 0,
		      "thread %d, 25 starts at once with 3 others, each after a change of weight: %s, first wrong round "
		      "%ld (0: none; %lld FLOPs, %ld calls)",
		      i, PAPI_strerror(w[i].rc), w[i].in_loop, w[i].value, w[i].calls);
	pthread_barrier_destroy(&together_bar);
}

/* storm: workers sort and print the same numbers round after round
 * (qsort, snprintf: many small blocks linked in the cache, jumps to the
 * next copy made nops) while main's weight switches unlink them all */
static volatile int storm_stop;

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct stormer {
	unsigned first, bad;
	long rounds;
};

static void *storm_worker(void *arg)
{
	struct stormer *w = arg;
	while (!storm_stop) {
		double v[256];
		char buf[48];
		unsigned s = 12345, sum = 0;
		for (int i = 0; i < 256; i++) {
			s = s * 1103515245u + 12345u;
			v[i] = (double)(s >> 8) * 1e-3;
		}
		qsort(v, 256, sizeof v[0], cmp_dbl);
		for (int i = 0; i < 256; i += 8) {
			int n = snprintf(buf, sizeof buf, "%.6g:%d", v[i], i);
			for (int j = 0; j < n; j++)
				sum = sum * 31u + (unsigned char)buf[j];
		}
		if (!w->rounds++)
			w->first = sum;
		else if (sum != w->first)
			w->bad++;
	}
	return NULL;
}

static void storm(void)
{
	pthread_t th[3];
	struct stormer w[3];
	long bad = 0, first_bad = -1;
	for (int i = 0; i < 3; i++) {
		w[i] = (struct stormer){ 0 };
		pthread_create(&th[i], NULL, storm_worker, &w[i]);
	}
	for (int it = 0; it < 100; it++) {
		struct tally t;
		long long v = -1;
		/* 5000 runs: DP_OPS 10000 (10 calls), SP_OPS 20000 (20) */
		int sp = it & 1, rc = run(sp ? "flops:::SP_OPS" : "flops:::DP_OPS", 1000, 5000, &v, &t);
		if (rc != PAPI_OK || v != (sp ? 20000 : 10000) || t.calls != (sp ? 20 : 10) || t.in_loop != t.calls) {
			if (!bad++)
				first_bad = it;
			printf("note: storm switch %d (%s): %s, read %lld, %ld calls, %ld in the loop\n", it,
			       sp ? "SP_OPS" : "DP_OPS", PAPI_strerror(rc), v, t.calls, t.in_loop);
		}
	}
	storm_stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	CHECK(bad == 0, "100 switches of the overflowing event with 3 threads in the cache: %ld wrong (first: %ld)",
	      bad, first_bad);
	for (int i = 0; i < 3; i++)
		CHECK(w[i].rounds > 0 && w[i].bad == 0, "storm worker %d: %ld rounds, %u checksums unlike the first", i,
		      w[i].rounds, w[i].bad);
}

static void refuse(void)
{
	int set = PAPI_NULL, a, b, rc;
	PAPI_create_eventset(&set);
	PAPI_event_name_to_code("flops:::DP_OPS", &a);
	PAPI_event_name_to_code("flops:::SP_OPS", &b);
	PAPI_add_event(set, a);
	PAPI_add_event(set, b);
	rc = PAPI_overflow(set, a, 1000, 0, handler);
	CHECK(rc == PAPI_OK, "DP_OPS overflows: %s", PAPI_strerror(rc));
	rc = PAPI_overflow(set, b, 1000, 0, handler);
	CHECK(rc != PAPI_OK, "a second overflowing event in the set refused: %s", PAPI_strerror(rc));
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
	set = PAPI_NULL;
	PAPI_create_eventset(&set);
	if (PAPI_event_name_to_code("flops:::SCALED", &a) == PAPI_OK && PAPI_add_event(set, a) == PAPI_OK) {
		rc = PAPI_overflow(set, a, 1000, 0, handler);
		CHECK(rc != PAPI_OK, "a status event refused: %s", PAPI_strerror(rc));
	}
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "loop";
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT || PAPI_thread_init(pthread_self) != PAPI_OK) {
		printf("FAIL: PAPI_library_init\n");
		return 1;
	}
	if (!strcmp(mode, "loop"))
		loop();
	else if (!strcmp(mode, "threads"))
		threads();
	else if (!strcmp(mode, "together"))
		together();
	else if (!strcmp(mode, "storm"))
		storm();
	else if (!strcmp(mode, "refuse"))
		refuse();
	else if (!strcmp(mode, "preset")) {
		if (preset() == 77)
			return 77;
	} else
		return 2;
	PAPI_shutdown();
	printf("%d failures\n", failures);
	return failures ? 1 : 0;
}
