/*
 * flops_overflow_test: PAPI_overflow on flops events, through PAPI's
 * public API as a sampling tool (HPCToolkit's papi-c.c) uses it.
 *
 *   flops_overflow_test refuse    no counters here: PAPI_overflow on a
 *                                 FLOP event and on a status event
 *                                 returns an error (the sentence on
 *                                 stderr is checked by the caller)
 *   flops_overflow_test standin   PAPI_FLOPS_TEST_SWEVENT=page-faults,
 *                                 LIBPFM_FORCE_PMU=skx: every native
 *                                 event of DP_OPS (weights 1 2 4 8) is
 *                                 the page-fault count F, so DP_OPS reads
 *                                 15 F, and overflow every P samples each
 *                                 counter every ceil(P / w) faults: the
 *                                 handler runs exactly
 *                                 sum floor(F / ceil(P / w)) times (about
 *                                 15 F / P), at the faulting instruction;
 *                                 the same through the PAPI_DP_OPS preset,
 *                                 in two threads with their own sets, with
 *                                 PAPI_profil, PAPI_OVERFLOW_FORCE_SW; a multiplexed
 *                                 set and a status event are refused
 *   flops_overflow_test shared    (icx) FP_OPS and DP_OPS overflowing in
 *                                 one set share counters: the second
 *                                 PAPI_overflow is refused
 *
 * Exit 0 passed, 1 failed, 77 no flops component.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "papi.h"

static int failures;
#define CHECK(cond, ...)                           \
	do {                                       \
		int ok_ = !!(cond);                \
		printf(ok_ ? "ok:   " : "FAIL: "); \
		failures += !ok_;                  \
		printf(__VA_ARGS__);               \
		printf("\n");                      \
	} while (0)

/* Touch n fresh pages: n page faults, each at the store below. */
__attribute__((noinline)) void touch_pages(long n)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	madvise(p, n * ps, MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		((volatile char *)p)[i * ps] = 1;
	munmap(p, n * ps);
}

struct tally {
	long calls, in_touch, bad_vector;
	long long vector;
};
static __thread struct tally *mine;

static void handler(int es, void *addr, long long vector, void *ctx)
{
	struct tally *t = mine;
	Dl_info di;
	if (!t)
		return;
	t->calls++;
	if (vector != t->vector)
		t->bad_vector++;
	if (dladdr(addr, &di) && di.dli_sname && !strcmp(di.dli_sname, "touch_pages"))
		t->in_touch++;
}

/* sum over DP_OPS's counters (weights 1 2 4 8) of floor(F / ceil(P / w)) */
static long expected_calls(long long faults, long long P)
{
	long n = 0;
	for (int w = 1; w <= 8; w *= 2)
		n += faults / ((P + w - 1) / w);
	return n;
}

/* One event set on `event`, overflowing every P, around `pages` faults:
 * the DP_OPS value and the handler's tally. */
static int run(const char *event, long long P, int flags, long pages, long long *value, struct tally *t)
{
	int es = PAPI_NULL, code, rc;
	memset(t, 0, sizeof(*t));
	if ((rc = PAPI_create_eventset(&es)) || (rc = PAPI_event_name_to_code(event, &code)) ||
	    (rc = PAPI_add_event(es, code)))
		return rc;
	t->vector = 1; /* position 0 */
	rc = PAPI_overflow(es, code, (int)P, flags, handler);
	if (rc == PAPI_OK) {
		mine = t;
		rc = PAPI_start(es);
		if (rc == PAPI_OK) {
			touch_pages(pages);
			rc = PAPI_stop(es, value);
		}
		mine = NULL;
		PAPI_overflow(es, code, 0, flags, handler);
	}
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	return rc;
}

static void exact(const char *what, long long P, long long value, const struct tally *t)
{
	long long F = value / 15;
	long want = expected_calls(F, P);
	CHECK(value > 0 && value % 15 == 0, "%s: DP_OPS reads 15 x %lld page faults", what, F);
	CHECK(t->calls == want, "%s: %ld handler calls, sum floor(F / ceil(P / w)) = %ld; FLOPs / P = %.1f", what,
	      t->calls, want, (double)value / P);
	CHECK(t->calls > 0 && (double)t->calls * P <= value + 1e-9 && (double)(t->calls + 4) * P >= value,
	      "%s: each call credits P = %lld: %ld x P within 4 P below the count %lld", what, P, t->calls, value);
	CHECK(t->in_touch >= t->calls * 9 / 10, "%s: %ld of %ld overflow addresses in touch_pages (the faulting store)",
	      what, t->in_touch, t->calls);
	CHECK(!t->bad_vector, "%s: overflow vector names the event (%ld wrong)", what, t->bad_vector);
}

struct thr {
	long long value;
	struct tally t;
	int rc;
};

static void *worker(void *arg)
{
	struct thr *r = arg;
	r->rc = PAPI_register_thread();
	if (!r->rc)
		r->rc = run("flops:::DP_OPS", 6000, 0, 20000, &r->value, &r->t);
	PAPI_unregister_thread();
	return NULL;
}

static unsigned long self_id(void)
{
	return (unsigned long)pthread_self();
}

static void standin(void)
{
	long long v = 0;
	struct tally t;
	int rc = run("flops:::DP_OPS", 8000, 0, 30000, &v, &t);
	CHECK(rc == PAPI_OK, "flops:::DP_OPS overflow every 8000 around 30000 page faults: %s", PAPI_strerror(rc));
	if (rc == PAPI_OK)
		exact("flops:::DP_OPS", 8000, v, &t);
	rc = run("PAPI_DP_OPS", 10007, 0, 30000, &v, &t);
	CHECK(rc == PAPI_OK, "PAPI_DP_OPS (the preset on flops:::DP_OPS) overflow every 10007: %s", PAPI_strerror(rc));
	if (rc == PAPI_OK)
		exact("PAPI_DP_OPS", 10007, v, &t);

	/* two threads, each its own set and signals */
	pthread_t th[2];
	struct thr r[2];
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, &r[i]);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		char what[32];
		snprintf(what, sizeof(what), "thread %d", i);
		CHECK(r[i].rc == PAPI_OK, "%s: register, add, overflow, start, stop: %s", what, PAPI_strerror(r[i].rc));
		if (r[i].rc == PAPI_OK)
			exact(what, 6000, r[i].value, &r[i].t);
	}

	/* PAPI_profil on top: a histogram of the overflow addresses over
	 * touch_pages' code, 1:1 (16-bit buckets of 2 bytes) */
	static unsigned short prof[2048];
	int es = PAPI_NULL, dp = 0;
	PAPI_create_eventset(&es);
	PAPI_event_name_to_code("flops:::DP_OPS", &dp);
	PAPI_add_event(es, dp);
	rc = PAPI_profil(prof, sizeof(prof), (vptr_t)touch_pages, 65536, es, dp, 8000, PAPI_PROFIL_POSIX);
	CHECK(rc == PAPI_OK, "PAPI_profil on flops:::DP_OPS every 8000: %s", PAPI_strerror(rc));
	if (rc == PAPI_OK && PAPI_start(es) == PAPI_OK) {
		touch_pages(30000);
		PAPI_stop(es, &v);
		PAPI_profil(prof, sizeof(prof), (vptr_t)touch_pages, 65536, es, dp, 0, PAPI_PROFIL_POSIX);
		long hits = 0, want = expected_calls(v / 15, 8000);
		for (size_t i = 0; i < sizeof(prof) / sizeof(prof[0]); i++)
			hits += prof[i];
		CHECK(hits >= want * 9 / 10 && hits <= want,
		      "PAPI_profil: %ld of %ld overflows in touch_pages' buckets", hits, want);
	}
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);

	/* software overflow: PAPI's timer reads the count, one call per tick at most */
	rc = run("flops:::DP_OPS", 200000, PAPI_OVERFLOW_FORCE_SW, 200000, &v, &t);
	CHECK(rc == PAPI_OK, "PAPI_OVERFLOW_FORCE_SW: %s", PAPI_strerror(rc));
	CHECK(rc == PAPI_OK && t.calls >= 1 && (double)t.calls * 200000 <= v,
	      "PAPI_OVERFLOW_FORCE_SW: %ld calls for %lld (at most count / P = %lld)", t.calls, v, v / 200000);

	/* a multiplexed set (FP_OPS: 5 counters on 4), a status event */
	int fp = 0, sc = 0;
	es = PAPI_NULL;
	PAPI_create_eventset(&es);
	PAPI_assign_eventset_component(es, PAPI_get_component_index("flops"));
	PAPI_set_multiplex(es);
	PAPI_event_name_to_code("flops:::FP_OPS", &fp);
	PAPI_event_name_to_code("flops:::SCALED", &sc);
	rc = PAPI_add_event(es, fp);
	CHECK(rc == PAPI_OK, "multiplexed set: FP_OPS added: %s", PAPI_strerror(rc));
	PAPI_add_event(es, sc);
	rc = PAPI_overflow(es, fp, 100000, 0, handler);
	CHECK(rc != PAPI_OK, "multiplexed FP_OPS: PAPI_overflow refused: %s", PAPI_strerror(rc));
	rc = PAPI_overflow(es, sc, 1, 0, handler);
	CHECK(rc != PAPI_OK, "status event SCALED: PAPI_overflow refused: %s", PAPI_strerror(rc));
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
}

static void refuse(void)
{
	int es = PAPI_NULL, dp = 0, sc = 0, rc;
	PAPI_create_eventset(&es);
	PAPI_event_name_to_code("flops:::DP_OPS", &dp);
	PAPI_event_name_to_code("flops:::SCALED", &sc);
	CHECK(PAPI_add_event(es, dp) == PAPI_OK && PAPI_add_event(es, sc) == PAPI_OK, "DP_OPS and SCALED added");
	rc = PAPI_overflow(es, dp, 1000000, 0, handler);
	CHECK(rc != PAPI_OK, "no counters: PAPI_overflow(flops:::DP_OPS) refused: %s", PAPI_strerror(rc));
	rc = PAPI_overflow(es, sc, 1, 0, handler);
	CHECK(rc != PAPI_OK, "status event: PAPI_overflow(flops:::SCALED) refused: %s", PAPI_strerror(rc));
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	/* the preset, as HPCToolkit names it */
	PAPI_create_eventset(&es);
	rc = PAPI_add_event(es, PAPI_DP_OPS);
	CHECK(rc == PAPI_OK, "PAPI_DP_OPS added: %s", PAPI_strerror(rc));
	rc = PAPI_overflow(es, PAPI_DP_OPS, 1000000, 0, handler);
	CHECK(rc != PAPI_OK, "no counters: PAPI_overflow(PAPI_DP_OPS) refused: %s", PAPI_strerror(rc));
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
}

static void shared(void)
{
	int es = PAPI_NULL, fp = 0, dp = 0, rc;
	PAPI_create_eventset(&es);
	PAPI_event_name_to_code("flops:::FP_OPS", &fp);
	PAPI_event_name_to_code("flops:::DP_OPS", &dp);
	CHECK(PAPI_add_event(es, fp) == PAPI_OK && PAPI_add_event(es, dp) == PAPI_OK, "FP_OPS and DP_OPS in one set");
	rc = PAPI_overflow(es, fp, 100000, 0, handler);
	CHECK(rc == PAPI_OK, "FP_OPS overflows: %s", PAPI_strerror(rc));
	rc = PAPI_overflow(es, dp, 100000, 0, handler);
	CHECK(rc == PAPI_ECNFLCT, "DP_OPS too, on the counters FP_OPS samples: refused (%s)", PAPI_strerror(rc));
	PAPI_overflow(es, fp, 0, 0, handler);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "refuse";
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT || PAPI_thread_init(self_id) != PAPI_OK) {
		printf("FAIL: PAPI_library_init / PAPI_thread_init\n");
		return 1;
	}
	if (PAPI_get_component_index("flops") < 0) {
		printf("skip: this libpapi has no flops component\n");
		return 77;
	}
	if (!strcmp(mode, "standin"))
		standin();
	else if (!strcmp(mode, "shared"))
		shared();
	else
		refuse();
	PAPI_shutdown();
	printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
	return failures ? 1 : 0;
}
