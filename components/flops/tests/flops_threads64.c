/*
 * flops_threads64: 64 threads under PAPI_thread_init, each with its own
 * flops event set (DP_OPS + VEC_DP + SCALED: 4 counters on skx): register, create, add,
 * start, read, stop, cleanup, destroy, unregister.  Where the component
 * can count, every step must succeed; on a machine without counters
 * PAPI_start must fail with PAPI_ENOSUPP/PAPI_EPERM in every thread and
 * nothing may leak (run under valgrind and ASan by papi_component.sh and
 * make check-asan).  Exit 0 passed, 1 failed, 77 no flops component.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "papi.h"

#define NT 64
static int counting;
static int errors[NT];

static unsigned long self_id(void)
{
	return (unsigned long)pthread_self();
}

static void *worker(void *arg)
{
	int i = (int)(long)arg, es = PAPI_NULL, rc;
	long long v[3];
	volatile double x = 1.0;
	if (PAPI_register_thread() != PAPI_OK || PAPI_create_eventset(&es) != PAPI_OK) {
		errors[i] = 1;
		return NULL;
	}
	if (PAPI_add_named_event(es, "flops:::DP_OPS") || PAPI_add_named_event(es, "flops:::VEC_DP") ||
	    PAPI_add_named_event(es, "flops:::SCALED"))
		errors[i] = 2;
	for (int round = 0; round < 3 && !errors[i]; round++) {
		rc = PAPI_start(es);
		if (counting) {
			for (int k = 0; k < 100000; k++)
				x = x * 1.0000001;
			if (rc || PAPI_read(es, v) || PAPI_stop(es, v))
				errors[i] = 3;
		} else if (rc != PAPI_ENOSUPP && rc != PAPI_EPERM) {
			errors[i] = 4;
		}
	}
	if (PAPI_cleanup_eventset(es) || PAPI_destroy_eventset(&es) || PAPI_unregister_thread())
		errors[i] = errors[i] ? errors[i] : 5;
	return NULL;
}

int main(void)
{
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT || PAPI_thread_init(self_id) != PAPI_OK) {
		printf("FAIL: PAPI_library_init / PAPI_thread_init\n");
		return 1;
	}
	int cid = PAPI_get_component_index("flops");
	if (cid < 0) {
		printf("skip: no flops component\n");
		return 77;
	}
	counting = PAPI_get_component_info(cid)->disabled == 0;
	pthread_t th[NT];
	for (long i = 0; i < NT; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			errors[i] = 9;
	for (int i = 0; i < NT; i++)
		if (errors[i] != 9)
			pthread_join(th[i], NULL);
	int bad = 0;
	for (int i = 0; i < NT; i++)
		if (errors[i]) {
			printf("FAIL: thread %d: step %d\n", i, errors[i]);
			bad++;
		}
	PAPI_shutdown();
	printf("%s: %d threads, %s, %d failed\n", bad ? "FAILED" : "PASSED", NT,
	       counting ? "counted" : "start refused (no counters)", bad);
	return bad ? 1 : 0;
}
