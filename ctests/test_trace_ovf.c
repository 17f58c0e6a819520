/*
 * test_trace_ovf.c: the tracer's overflow (pflops_trace_opts.overflow)
 * on the calibration programs: one call per multiple of the period of
 * the thread's DP FLOPs, exactly floor(FLOPs / P) crossings, each at a
 * DP FP instruction of the kernel's function, the thread stopped there
 * (rip = that address); the same calls under both engines.
 *
 * Expected FLOPs come from the loop counts (and the run's exact mix),
 * never from a previous run.  Run from the repository root, B set as
 * `make check` does.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/user.h>
#include <cmocka.h>

#include "pflops_trace.h"
#include "trace/trace_internal.h"
#include "calib_gate.h"

#include "calib_prog.h"

#define MAXCALLS 4096
struct rec {
	const char *path; /* the program (non-PIE: symbols = addresses) */
	struct pft_elf elf;
	int have_elf;
	uint64_t period;
	uint64_t calls, crossings, bad_rip, bad_insn, no_regs;
	uint64_t last_count;
	int nth;
	int32_t tid[64];
	uint64_t th_cross[64];
	uint64_t addr[MAXCALLS];
	uint64_t cnt[MAXCALLS];
	char func[64]; /* the function all calls must be in ("": any) */
	uint64_t outside;
};

/* the weight: DP FLOPs (active lanes x FLOPs per element) */
static uint64_t w_dp(void *arg, const struct pft_insn *in, unsigned lanes)
{
	(void)arg;
	return in->prec == PFLOPS_DP ? (uint64_t)lanes * pflops_op_flops((enum pflops_op)in->op) : 0;
}

struct symfind {
	uint64_t a;
	char name[64];
};
static int sym_cb(void *arg, const struct pft_elf_sym *s)
{
	struct symfind *f = arg;

	if (f->a >= s->value && f->a < s->value + s->size) {
		snprintf(f->name, sizeof f->name, "%s", s->name);
		return 1;
	}
	return 0;
}

static void on_ovf(void *arg, const struct pft_overflow *o)
{
	struct rec *r = arg;
	uint8_t code[16];
	struct pft_insn in;
	char fn[64];
	int fd, i;

	if (!o->regs)
		r->no_regs++;
	else if (o->regs->rip != o->addr)
		r->bad_rip++;
	/* the instruction there is a DP FP one, read while stopped */
	snprintf(fn, sizeof fn, "/proc/%d/mem", (int)o->tid);
	fd = open(fn, O_RDONLY);
	if (fd < 0 || pread(fd, code, sizeof code, (off_t)o->addr) != (ssize_t)sizeof code ||
	    pfc_decode(code, sizeof code, o->addr, &in) || !in.fp || in.prec != PFLOPS_DP)
		r->bad_insn++;
	if (fd >= 0)
		close(fd);
	if (r->func[0] && r->have_elf) {
		struct symfind f = { o->addr, "" };
		pft_elf_funcs(&r->elf, 0, sym_cb, &f);
		size_t l = strlen(r->func);
		/* gcc's clones: daxpy.constprop.0 */
		if (strncmp(f.name, r->func, l) || (f.name[l] && f.name[l] != '.'))
			r->outside++;
	}
	if (r->calls < MAXCALLS) {
		r->addr[r->calls] = o->addr;
		r->cnt[r->calls] = o->count;
	}
	r->calls++;
	r->crossings += o->crossings;
	for (i = 0; i < r->nth && r->tid[i] != o->tid; i++)
		;
	if (i == r->nth && i < 64) {
		r->tid[i] = o->tid;
		r->nth++;
	}
	if (i < 64)
		r->th_cross[i] += o->crossings;
}

/* trace argv with overflow every `period` DP FLOPs; the run's mix in *m */
static void run(struct rec *r, int engine, uint64_t period, const char *func, struct pflops_mix *m,
		struct pft_stats *st, ...)
{
	char *argv[8];
	va_list ap;
	int n = 0, status = -1, rc;
	struct pflops_error err = { 0 };
	struct pflops_trace_opts o = { 0 };

	va_start(ap, st);
	while (n < 7 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	memset(r, 0, sizeof *r);
	r->path = argv[0];
	r->period = period;
	snprintf(r->func, sizeof r->func, "%s", func ? func : "");
	r->have_elf = func && pft_elf_open(&r->elf, argv[0]) == 0;
	o.engine = engine;
	o.stats = st;
	o.overflow_weight = w_dp;
	o.overflow_period = period;
	o.overflow = on_ovf;
	o.overflow_arg = r;
	memset(m, 0, sizeof *m);
	memset(st, 0, sizeof *st);
	rc = pft_run(argv, &o, m, &status, &err);
	if (rc)
		print_error("trace %s: %s\n", argv[0], err.msg);
	assert_int_equal(rc, 0);
	/* calib_daxpy exits with a byte of its result */
	assert_true(WIFEXITED(status));
	if (strstr(argv[0], "calib_daxpy") == NULL)
		assert_int_equal(WEXITSTATUS(status), 0);
	if (r->have_elf)
		pft_elf_close(&r->elf);
}

static void check_rec(const struct rec *r, uint64_t flops, const char *what)
{
	if (r->crossings != flops / r->period || r->bad_rip || r->bad_insn || r->no_regs || r->outside)
		print_error("%s: P=%llu FLOPs=%llu: %llu crossings in %llu calls "
			    "(want %llu), rip!=addr %llu, not a DP FP insn %llu, "
			    "no regs %llu, outside %s %llu\n",
			    what, (unsigned long long)r->period, (unsigned long long)flops,
			    (unsigned long long)r->crossings, (unsigned long long)r->calls,
			    (unsigned long long)(flops / r->period), (unsigned long long)r->bad_rip,
			    (unsigned long long)r->bad_insn, (unsigned long long)r->no_regs, r->func,
			    (unsigned long long)r->outside);
	assert_int_equal(r->crossings, flops / r->period);
	assert_int_equal(r->bad_rip, 0);
	assert_int_equal(r->bad_insn, 0);
	assert_int_equal(r->no_regs, 0);
	assert_int_equal(r->outside, 0);
}

/* The acceptance case: 10,000,000 DP FLOPs (625,000 zmm FMAs), period
 * 100,000: exactly 100 calls, each in the kernel's function. */
static void t_hundred(void **state)
{
	static struct rec r;
	struct pflops_mix m;
	struct pft_stats st;

	(void)state;
	if (!calib_runs("test_trace_ovf: 10^7 DP FLOPs", "vfmadd231pd_z"))
		skip();
	run(&r, PFT_ENGINE_CACHE, 100000, "vfmadd231pd_z", &m, &st, prog("calib_fp"), "vfmadd231pd_z", "625000", NULL);
	assert_int_equal(pflops_mix_flops(&m, PFLOPS_DP), 10000000);
	check_rec(&r, 10000000, "vfmadd231pd_z");
	assert_int_equal(r.calls, 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(r.cnt[i], 100000ULL * (uint64_t)(i + 1));
	assert_int_equal(st.ovf_late, 0);
	assert_true(st.ovf_exits >= 100);
	printf("# 10^7 DP FLOPs / 100000: %llu calls, %llu cache exits, %llu blocks stepped\n",
	       (unsigned long long)r.calls, (unsigned long long)st.ovf_exits, (unsigned long long)st.ovf_steps);
}

/* floor(FLOPs / P) on several kernels and periods (periods below one
 * instruction's weight included), the same calls under both engines */
static void t_kernels(void **state)
{
	static const char *kern[] = { "addsd",	       "mulsd",		"vaddpd_y",    "vfmadd231sd",
				      "vfmadd213pd_x", "vfmadd231pd_z", "vaddpd_z_k1", "vmulpd_y_k3",
				      "daxpy_masked",  "fma_kmix",	"vaddps_z" };
	static const uint64_t per[] = { 1, 7, 100, 4093 };
	static struct rec rc, rs;
	struct pflops_mix m, ms;
	struct pft_stats st;

	(void)state;
	for (size_t k = 0; k < sizeof kern / sizeof *kern; k++) {
		if (!calib_runs("test_trace_ovf", kern[k]))
			continue;
		for (size_t p = 0; p < sizeof per / sizeof *per; p++) {
			char what[128];
			uint64_t f;
			snprintf(what, sizeof what, "%s cache", kern[k]);
			run(&rc, PFT_ENGINE_CACHE, per[p], NULL, &m, &st, prog("calib_fp"), kern[k], "1000", NULL);
			f = pflops_mix_flops(&m, PFLOPS_DP);
			check_rec(&rc, f, what);
			assert_int_equal(st.ovf_late, 0);
			if (per[p] != 7)
				continue;
			snprintf(what, sizeof what, "%s stop", kern[k]);
			run(&rs, PFT_ENGINE_STOP, per[p], NULL, &ms, &st, prog("calib_fp"), kern[k], "1000", NULL);
			assert_int_equal(pflops_mix_flops(&ms, PFLOPS_DP), f);
			check_rec(&rs, f, what);
			assert_int_equal(rs.calls, rc.calls);
			for (uint64_t i = 0; i < rc.calls && i < MAXCALLS; i++) {
				assert_int_equal(rs.addr[i], rc.addr[i]);
				assert_int_equal(rs.cnt[i], rc.cnt[i]);
			}
		}
	}
}

/* compiled C loops (scalar, vector, masked remainders at -O3) */
static void t_daxpy(void **state)
{
	static const uint64_t per[] = { 7, 64, 1000, 99991 };
	static const char *bin[] = { "calib_daxpy_O2", "calib_daxpy_O3" };
	static struct rec r;
	struct pflops_mix m;
	struct pft_stats st;

	(void)state;
	for (int b = 0; b < 2; b++)
		for (size_t p = 0; p < sizeof per / sizeof *per; p++) {
			run(&r, PFT_ENGINE_CACHE, per[p], "daxpy", &m, &st, prog(bin[b]), "daxpy", "1003", "20", NULL);
			assert_int_equal(pflops_mix_flops(&m, PFLOPS_DP), 2 * 1003 * 20);
			check_rec(&r, 2 * 1003 * 20, bin[b]);
			assert_int_equal(st.ovf_late, 0);
			run(&r, PFT_ENGINE_CACHE, per[p], "matmul", &m, &st, prog(bin[b]), "matmul", "24", "2", NULL);
			assert_int_equal(pflops_mix_flops(&m, PFLOPS_DP), 2 * 24 * 24 * 24 * 2);
			check_rec(&r, 2 * 24 * 24 * 24 * 2, bin[b]);
			assert_int_equal(st.ovf_late, 0);
		}
}

/* per thread: each thread's own crossings */
static void t_threads(void **state)
{
	static struct rec r;
	struct pflops_mix m;
	struct pft_stats st;
	const uint64_t n = 5000, P = 999;
	uint64_t want[5], got[5];

	(void)state;
	if (!calib_cpu_has("test_trace_ovf", "threads", "avx"))
		skip();
	run(&r, PFT_ENGINE_CACHE, P, NULL, &m, &st, prog("calib_threads"), "4", "5000", NULL);
	/* worker t: (t+1) n vaddpd ymm (4 FLOPs); main: 2n vmulpd ymm */
	for (int t = 0; t < 4; t++)
		want[t] = 4 * n * (uint64_t)(t + 1) / P;
	want[4] = 8 * n / P;
	assert_int_equal(r.nth, 5);
	for (int i = 0; i < 5; i++)
		got[i] = r.th_cross[i];
	/* compare as sorted lists: which tid ran which worker is unknown */
	for (int i = 0; i < 5; i++)
		for (int j = i + 1; j < 5; j++) {
			if (want[j] < want[i]) {
				uint64_t x = want[i];
				want[i] = want[j];
				want[j] = x;
			}
			if (got[j] < got[i]) {
				uint64_t x = got[i];
				got[i] = got[j];
				got[j] = x;
			}
		}
	for (int i = 0; i < 5; i++)
		assert_int_equal(got[i], want[i]);
	assert_int_equal(r.bad_rip + r.bad_insn + r.no_regs, 0);
	assert_int_equal(st.ovf_late, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_hundred),
		cmocka_unit_test(t_kernels),
		cmocka_unit_test(t_daxpy),
		cmocka_unit_test(t_threads),
	};

	calib_prog_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
