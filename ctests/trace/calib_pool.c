/*
 * calib_pool.c: --region F where threads made before the call do F's
 * work (ctests/test_region_pool.sh).  Each kernel does 2 FLOPs per
 * element (x = x * 1.5 + 0.25, no FMA contraction: -ffp-contract=off);
 * FP work outside the kernels is 3 FLOPs per element.
 *
 *   calib_pool omp N    OpenMP: a parallel region outside, then
 *                       omp_kernel(N), outside again, omp_kernel(N):
 *                       region omp_kernel = 4N
 *   calib_pool ompspin N  the same with short pauses (5 ms): the team
 *                       spins when each call begins (OMP_WAIT_POLICY=active;
 *                       with none, a slow tracer could find a thread still
 *                       leaving the last region, not yet spinning)
 *   calib_pool pool N   two pthread workers waiting on a condition
 *                       variable do pool_kernel(N)'s halves (main
 *                       waits): region pool_kernel = 2N, twice: 4N
 *   calib_pool many N   N calls of tiny_kernel (2 FLOPs) while two threads
 *                       wait on a condition variable all along: each
 *                       call interrupts them in their futex wait (the
 *                       kernel restarts it): region tiny_kernel = 2N
 *   calib_pool busy N   a thread that is not the kernel's does FP work
 *                       all along while main runs busy_kernel(N) alone
 *                       (2N): the region also counts some of the other
 *                       thread's, and the report must say so
 *
 * Prints nothing (stdout is the program's); exits 0 (omp, ompspin: 3 when built
 * without OpenMP).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NW 2

static double *xs;

__attribute__((noinline)) static void axpb(double *x, long n)
{
	for (long i = 0; i < n; i++)
		x[i] = x[i] * 1.5 + 0.25;
	__asm__ volatile("" : : "r"(x) : "memory");
}

__attribute__((noinline)) static void outside(double *x, long n)
{
	for (long i = 0; i < n; i++)
		x[i] = (x[i] * 0.5 + 1.0) * 0.75;
	__asm__ volatile("" : : "r"(x) : "memory");
}

static void nap(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

/* ---- OpenMP ------------------------------------------------------- */
__attribute__((noinline)) void omp_kernel(long n)
{
#pragma omp parallel for schedule(static)
	for (long i = 0; i < n; i++)
		xs[i] = xs[i] * 1.5 + 0.25;
}

__attribute__((noinline)) static void omp_outside(long n)
{
#pragma omp parallel for schedule(static)
	for (long i = 0; i < n; i++)
		xs[i] = (xs[i] * 0.5 + 1.0) * 0.75;
}

static int run_omp(long n, int gap)
{
	omp_outside(n); /* the team exists before the first call */
	nap(gap);	/* and waits (futex) when it comes, or spins */
	omp_kernel(n);
	omp_outside(n);
	nap(gap);
	omp_kernel(n);
	return 0;
}

/* ---- a pthread pool ----------------------------------------------- */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static int gen, ndone, nwaiting, quit;
static long chunk;

static void *worker(void *p)
{
	int id = (int)(long)p, seen = 0;

	pthread_mutex_lock(&mu);
	for (;;) {
		nwaiting++;
		while (gen == seen)
			pthread_cond_wait(&go_cv, &mu);
		nwaiting--;
		seen = gen;
		if (quit)
			break;
		pthread_mutex_unlock(&mu);
		axpb(xs + id * chunk, chunk);
		pthread_mutex_lock(&mu);
		if (++ndone == NW)
			pthread_cond_signal(&done_cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* the workers wait for work before each call */
static void pool_ready(void)
{
	for (;;) {
		pthread_mutex_lock(&mu);
		int w = nwaiting;
		pthread_mutex_unlock(&mu);
		if (w == NW)
			break;
		nap(5);
	}
	nap(30); /* inside the futex wait by now */
}

__attribute__((noinline)) void pool_kernel(long n)
{
	pthread_mutex_lock(&mu);
	chunk = n / NW;
	ndone = 0;
	gen++;
	pthread_cond_broadcast(&go_cv);
	while (ndone < NW)
		pthread_cond_wait(&done_cv, &mu);
	pthread_mutex_unlock(&mu);
}

static int run_pool(long n)
{
	pthread_t th[NW];

	for (long i = 0; i < NW; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			return 1;
	outside(xs, n);
	pool_ready();
	pool_kernel(n);
	outside(xs, n);
	pool_ready();
	pool_kernel(n);
	pthread_mutex_lock(&mu);
	quit = 1;
	gen++;
	pthread_cond_broadcast(&go_cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < NW; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* ---- many short calls beside idle threads ------------------------- */
static volatile double acc;

static void *idle(void *p)
{
	(void)p;
	pthread_mutex_lock(&mu);
	while (!quit)
		pthread_cond_wait(&go_cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

__attribute__((noinline)) void tiny_kernel(long i)
{
	acc = acc * 0.5 + (double)i;
}

static int run_many(long n)
{
	pthread_t th[NW];

	for (int i = 0; i < NW; i++)
		if (pthread_create(&th[i], NULL, idle, NULL))
			return 1;
	nap(20);
	for (long i = 0; i < n; i++)
		tiny_kernel(i);
	pthread_mutex_lock(&mu);
	quit = 1;
	pthread_cond_broadcast(&go_cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < NW; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* ---- unrelated concurrent FP work --------------------------------- */
static atomic_int busy_on, busy_stop;
static atomic_long busy_turns;

static void *busy(void *p)
{
	double *y = p;

	atomic_store(&busy_on, 1);
	while (!atomic_load(&busy_stop)) {
		outside(y, 1000);
		atomic_fetch_add(&busy_turns, 1);
	}
	return NULL;
}

/* The other thread runs meanwhile: the call lasts until it has done
 * two whole turns of FP work inside it (a fixed nap was not enough on
 * a loaded machine under the stopping engine: one CI run saw none), or
 * 60 s. */
__attribute__((noinline)) void busy_kernel(long n)
{
	long t0 = atomic_load(&busy_turns);

	axpb(xs, n);
	for (int i = 0; i < 60000 && atomic_load(&busy_turns) < t0 + 2; i++)
		nap(1);
}

static int run_busy(long n)
{
	static double y[1000];
	pthread_t th;

	if (pthread_create(&th, NULL, busy, y))
		return 1;
	while (!atomic_load(&busy_on))
		nap(1);
	nap(20);
	busy_kernel(n);
	atomic_store(&busy_stop, 1);
	pthread_join(th, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	long n;

	if (argc < 3 || (n = atol(argv[2])) <= 0 || n % NW)
		return 2;
	if (!(xs = calloc((size_t)n, sizeof *xs)))
		return 1;
	if (!strcmp(argv[1], "omp") || !strcmp(argv[1], "ompspin")) {
#ifdef _OPENMP
		return run_omp(n, argv[1][3] ? 5 : 50);
#else
		return 3; /* built without OpenMP */
#endif
	}
	if (!strcmp(argv[1], "pool"))
		return run_pool(n);
	if (!strcmp(argv[1], "busy"))
		return run_busy(n);
	if (!strcmp(argv[1], "many"))
		return run_many(n);
	return 2;
}
