/*
 * tp_rseq.c [N]: restartable sequences (rseq), as tcmalloc uses them:
 * each of 4 threads adds 1 to the counter of the CPU it runs on, N
 * (200000) times, in an rseq critical section (read the CPU number, load, add,
 * store; the kernel restarts the section when the thread is preempted,
 * migrated or signalled inside it).  The rseq area is glibc's when glibc
 * registered one (__rseq_size > 0), else the program registers its own
 * (run it with GLIBC_TUNABLES=glibc.pthread.rseq=0); when registration
 * fails (ENOSYS under a tracer that refuses it, as valgrind does) the
 * program falls back to atomic adds.  Prints the sum of the counters,
 * which is 4N whatever the path, unless sections that should have
 * restarted did not (updates lost); the path taken goes to stderr.
 * Main runs tp_work(50000): DP_OPS 200000.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/rseq.h>
#include "tp.h"

#define NTHR 4
#define NCPU 1024
#define SIG 0x53053053

extern const unsigned int __rseq_size __attribute__((weak));
extern const ptrdiff_t __rseq_offset __attribute__((weak));

static long counters[NCPU][8]; /* one cache line per CPU */
static __thread struct rseq own __attribute__((aligned(32)));
static long ninc = 200000;
static int path; /* 1 glibc's area, 2 our own, 3 atomics */

/* counters[cpu][0]++ in a critical section; 1 when it aborted */
static int rseq_inc(struct rseq *rs)
{
	__asm__ goto(".pushsection __rseq_cs, \"aw\"\n"
		     ".balign 32\n"
		     "3: .long 0, 0\n"
		     ".quad 1f, 2f - 1f, 4f\n"
		     ".popsection\n"
		     "leaq 3b(%%rip), %%rax\n"
		     "movq %%rax, 8(%[rs])\n"
		     "1: movl 4(%[rs]), %%eax\n"
		     "cmpl $1024, %%eax\n"
		     "jae %l[bad]\n"
		     "shlq $6, %%rax\n"
		     "movq (%[c], %%rax), %%rdx\n"
		     "addq $1, %%rdx\n"
		     "movq %%rdx, (%[c], %%rax)\n"
		     "2:\n"
		     ".pushsection __rseq_failure, \"ax\"\n"
		     ".byte 0x0f, 0xb9, 0x3d\n"
		     ".long 0x53053053\n"
		     "4: jmp %l[abort]\n"
		     ".popsection\n"
		     :
		     : [rs] "r"(rs), [c] "r"(counters)
		     : "rax", "rdx", "memory", "cc"
		     : abort, bad);
	return 0;
abort:
	return 1;
bad:
	fprintf(stderr, "tp_rseq: cpu_id out of range\n");
	exit(3);
}

static struct rseq *area(void)
{
	if (path == 1)
		return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
	if (path == 3)
		return NULL;
	if (syscall(SYS_rseq, &own, sizeof own, 0, SIG)) {
		if (errno != ENOSYS || path != 2) {
			fprintf(stderr, "tp_rseq: rseq registration: %s\n", strerror(errno));
			exit(4);
		}
		return NULL;
	}
	return &own;
}

static void *worker(void *arg)
{
	struct rseq *rs = area();

	(void)arg;
	for (long i = 0; i < ninc; i++) {
		if (!rs) {
			int c = sched_getcpu();
			__atomic_add_fetch(&counters[c < 0 || c >= NCPU ? 0 : c][0], 1, __ATOMIC_RELAXED);
			continue;
		}
		while (rseq_inc(rs))
			;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NTHR];
	long sum = 0;

	if (argc > 1)
		ninc = atol(argv[1]);

	if (&__rseq_size && __rseq_size > 0) {
		path = 1;
	} else {
		/* probe on this thread: every thread then takes the same path */
		path = 2;
		if (!area())
			path = 3;
		else
			syscall(SYS_rseq, &own, sizeof own, RSEQ_FLAG_UNREGISTER, SIG);
		if (path == 2) /* each worker registers its own */
			path = 0;
	}
	fprintf(stderr, "tp_rseq: %s\n",
		path == 1   ? "glibc's rseq area"
		: path == 0 ? "own rseq registration"
			    : "rseq refused: atomic adds");
	tp_work(50000);
	for (int i = 0; i < NTHR; i++)
		if (pthread_create(&th[i], NULL, worker, NULL))
			return 2;
	for (int i = 0; i < NTHR; i++)
		pthread_join(th[i], NULL);
	for (int c = 0; c < NCPU; c++)
		sum += counters[c][0];
	/* glibc's own use of it: the CPU number, from rseq or the vDSO */
	int cpu = sched_getcpu();
	printf("sum %ld of %ld, sched_getcpu %s\n", sum, NTHR * ninc,
	       cpu >= 0 && cpu < CPU_SETSIZE ? "valid" : "invalid");
	return sum == NTHR * ninc ? 0 : 1;
}
