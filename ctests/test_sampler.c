/*
 * test_sampler.c: the sampling engine on real kernel records.  perf's
 * cpu-clock software event samples a calibration program (no hardware
 * counters needed); the records go through the ring, the parser, the
 * mapping table and the file reader into the masked-lane estimator,
 * which must find the program's FP loop instruction among the samples
 * (the others land on its dec/jnz: skid for an FP event).  No opmask
 * registers come with these records (the kernel here has no SIMD
 * sampling, or the software PMU cannot): an unmasked instruction needs
 * none.  Run from the repository root (B: the build directory).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "calib_gate.h"

#include "pflops_mask.h"
#include "pflops_perf.h"
#include "pflops_sampler.h"

static char dir[1024];

struct collect {
	struct pfc_sampler *s;
	struct pfc_mask_acc acc;
	uint64_t n, ip_mismatch, pids[4];
	int npids;
	uint64_t per_pid_read[4]; /* samples whose code was read back */
};

static void on_sample(void *arg, int event, const struct pfc_sample_rec *r)
{
	struct collect *c = arg;
	struct pfc_mask_sample s = { .ip = r->ip, .pid = r->pid, .have_k = r->user.kvalid == 0xff };
	(void)event;
	memcpy(s.k, r->user.k, sizeof(s.k));
	c->n++;
	/* user registers of a user-mode sample: their IP is the sample's */
	if (!(r->user.valid >> PFC_PERF_REG_X86_IP & 1) || r->user.regs[PFC_PERF_REG_X86_IP] != r->ip)
		c->ip_mismatch++;
	int p = 0;
	while (p < c->npids && c->pids[p] != r->pid)
		p++;
	if (p == c->npids && c->npids < 4)
		c->pids[c->npids++] = r->pid;
	if (pfc_mask_add(&c->acc, &s, pfc_sampler_read_code, c->s, NULL) != PFC_MS_UNREADABLE && p < 4)
		c->per_pid_read[p]++;
}

/* Sample argv with cpu-clock every 100 us, estimate for event ev. */
static int sample(char **argv, const struct pfc_mask_event *ev, struct collect *c, double *count, int *status)
{
	struct pflops_child ch;
	struct pflops_error err = { 0 };
	struct pfc_sampler_event se = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK, .period = 100000, .name = "cpu-clock"
	};
	memset(c, 0, sizeof(*c));
	c->acc.ev = ev;
	assert_int_equal(pfc_child_spawn(&ch, argv, &err), 0);
	int rc = pfc_sampler_open(&c->s, &se, 1, ch.pid, 0, &err);
	if (rc == PFLOPS_EPERM) {
		pfc_child_abort(&ch);
		print_message("skipped: %s\n", err.msg);
		return -1;
	}
	if (rc)
		print_error("%s\n", err.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(pfc_sampler_run(c->s, &ch, on_sample, c, status, NULL, &err), 0);
	assert_int_equal(pfc_sampler_counts(c->s, count, &err), 0);
	return 0;
}

static void test_loop(void **state)
{
	(void)state;
	char prog[1200];
	struct pfc_mask_event ev;
	/* a loop of 14 FP instructions (512-bit DP), dec and jnz */
	int z = pfc_cpu_has("avx512f", getenv(PFC_CPU_HIDE_ENV)) == 1;
	if (!z && !calib_cpu_has("test_sampler", "test_loop", "avx"))
		skip();
	snprintf(prog, sizeof(prog), "%s/calib_fp", dir);
	char *argv[] = { prog, z ? "bench16" : "vaddpd_y", z ? "20000000" : "100000000", NULL };
	assert_int_equal(
		pfc_mask_event_from_model(z ? "inst prec=dp width=512 fma=2" : "inst prec=dp width=256", &ev, NULL), 0);
	static struct collect c;
	double count;
	int st;
	if (sample(argv, &ev, &c, &count, &st))
		skip();
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	struct pfc_sampler_stats ss;
	pfc_sampler_stats(c.s, &ss);
	struct pfc_mask_result r;
	pfc_mask_result(&c.acc, 1e6, &r);
	print_message("%.0f ns of cpu-clock, %llu samples (%llu lost, %llu bad, %llu mappings): %llu on the FP "
		      "instruction, %llu skid, %llu unreadable\n",
		      count, (unsigned long long)ss.samples, (unsigned long long)ss.lost, (unsigned long long)ss.bad,
		      (unsigned long long)ss.mmaps, (unsigned long long)r.used, (unsigned long long)r.skid,
		      (unsigned long long)r.unreadable);
	assert_true(count > 1e6); /* ran for more than a millisecond */
	assert_int_equal(ss.bad, 0);
	assert_true(ss.mmaps >= 1);
	assert_true(ss.samples == c.n && c.n >= 10);
	/* about one sample per period of the count (cpu-clock counts ns) */
	assert_true(c.n + ss.lost <= count / 100000 * 1.5 + 10);
	assert_int_equal(c.ip_mismatch, 0);
	/* every sample read back from the static binary: on one of the
	 * loop's FP instructions, or on its dec/jnz (skid) */
	assert_int_equal(r.unreadable, 0);
	assert_true(r.used + r.skid == c.n);
	if (z)
		assert_true(r.used > 0);
	assert_int_equal(r.nomask, 0); /* unmasked: no opmask needed */
	assert_true(r.share == 1);
	pfc_sampler_close(c.s);
}

/* A forked child (no exec) runs code of its parent's mappings. */
static void test_fork(void **state)
{
	(void)state;
	char prog[1200];
	struct pfc_mask_event ev;
	snprintf(prog, sizeof(prog), "%s/calib_fork", dir);
	char *argv[] = { prog, "fork", "10000000", NULL };
	/* the child runs vaddps xmm, the parent vmulps xmm: both 128-bit SP */
	assert_int_equal(pfc_mask_event_from_model("inst prec=sp width=128", &ev, NULL), 0);
	static struct collect c;
	double count;
	int st;
	if (sample(argv, &ev, &c, &count, &st))
		skip();
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	struct pfc_mask_result r;
	pfc_mask_result(&c.acc, 1e6, &r);
	struct pfc_sampler_stats ss;
	pfc_sampler_stats(c.s, &ss);
	/* drained while it ran: about one sample per period; on a loaded
	 * machine a drain may come late and the kernel drop a few (counted) */
	print_message("count %.0f ns, %llu samples, %llu lost\n", count, (unsigned long long)c.n,
		      (unsigned long long)ss.lost);
	assert_true(ss.lost * 20 <= c.n + ss.lost);
	assert_true(c.n + ss.lost >= count / 100000 * 0.5 && c.n + ss.lost <= count / 100000 * 1.5 + 10);
	print_message("%llu samples in %d processes, read back %llu / %llu, unreadable %llu; on the FP "
		      "instruction %llu, skid %llu\n",
		      (unsigned long long)c.n, c.npids, (unsigned long long)c.per_pid_read[0],
		      (unsigned long long)c.per_pid_read[1], (unsigned long long)r.unreadable,
		      (unsigned long long)r.used, (unsigned long long)r.skid);
	assert_int_equal(c.npids, 2);
	/* the child, which never execs, runs from its parent's mappings */
	assert_true(c.per_pid_read[0] > 0 && c.per_pid_read[1] > 0);
	/* libc's start-up and exit paths are mapped files too */
	assert_true(r.unreadable <= c.n / 20);
	pfc_sampler_close(c.s);
}

/* Asking for k0-k7 on a kernel without the series is refused as such. */
static void test_opmask_refused(void **state)
{
	(void)state;
	struct pfc_simd_caps caps;
	pfc_simd_probe(&caps);
	if (caps.verdict == PFC_SIMD_SUPPORTED || caps.verdict == PFC_SIMD_DENIED)
		skip();
	struct pflops_child ch;
	struct pflops_error err = { 0 };
	char *argv[] = { "true", NULL };
	struct pfc_sampler_event se = { .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_CPU_CLOCK,
					.period = 100000,
					.opmask = 1,
					.name = "cpu-clock" };
	struct pfc_sampler *s = NULL;
	assert_int_equal(pfc_child_spawn(&ch, argv, &err), 0);
	int rc = pfc_sampler_open(&s, &se, 1, ch.pid, 0, &err);
	pfc_child_abort(&ch);
	assert_null(s);
	assert_int_equal(rc, PFLOPS_EUNAVAIL);
	assert_non_null(strstr(err.msg, "sampling k0-k7"));
	if (caps.verdict == PFC_SIMD_OLD_KERNEL)
		assert_non_null(strstr(err.msg, "predates the SIMD register fields"));
	/* and bad arguments */
	assert_int_equal(pfc_sampler_open(&s, &se, 0, 1, 0, &err), PFLOPS_EINVAL);
	assert_int_equal(pfc_sampler_open(&s, &se, 1, 1, 3, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "power of two"));
}

int main(void)
{
	const char *b = getenv("B");
	snprintf(dir, sizeof(dir), "%s/ctests/trace", b && *b ? b : "build");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_opmask_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
