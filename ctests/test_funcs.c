/*
 * test_funcs.c: FLOPs per function (pflops_trace_opts.block and
 * pft_funcs_*) on the calibration programs (ctests/trace/), whose
 * functions do known numbers of FLOPs.
 *
 * Every run also checks that the functions' mixes, cell by cell, add up
 * to the run's mix: every count the engine makes is attributed to some
 * block, under both engines, with threads, forks, exec, signals that
 * cut blocks short and masked AVX-512 lanes.  Expected counts come from
 * the programs' loop counts, never from a previous run.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "pflops_trace.h"
#include "calib_gate.h"

#define N 1000

#include "calib_prog.h"
static int under_valgrind;

struct run {
	struct pflops_mix mix;
	struct pft_funcs *f;
	const struct pft_func *const *v;
	size_t n;
	int status;
};

static void run_free(struct run *r)
{
	pft_funcs_free(r->f);
	memset(r, 0, sizeof *r);
}

/* the functions' mixes add up to the run's, every cell */
static void check_sum(const struct run *r, const char *what)
{
	struct pflops_mix s;
	uint64_t *a = (uint64_t *)&s;

	memset(&s, 0, sizeof s);
	for (size_t i = 0; i < r->n; i++) {
		const uint64_t *b = (const uint64_t *)&r->v[i]->mix;
		for (size_t j = 0; j < sizeof s / sizeof *a; j++)
			a[j] += b[j];
	}
	if (memcmp(&s, &r->mix, sizeof s))
		fail_msg("%s: the functions add up to %llu FLOPs, %llu instructions; "
			 "the run counted %llu, %llu",
			 what, (unsigned long long)pflops_mix_flops(&s, -1), (unsigned long long)s.total_insts,
			 (unsigned long long)pflops_mix_flops(&r->mix, -1), (unsigned long long)r->mix.total_insts);
}

static int count_all; /* pflops_trace_opts.count_all of the next runs */

static void vrun(struct run *r, int engine, const char *region, char **argv)
{
	struct pflops_error err = { 0 };
	struct pflops_trace_opts o = { .engine = engine, .region = region, .count_all = count_all };
	int rc;

	memset(r, 0, sizeof *r);
	r->f = pft_funcs_new(&err);
	assert_non_null(r->f);
	o.block = pft_funcs_add;
	o.block_arg = r->f;
	rc = pft_run(argv, &o, &r->mix, &r->status, &err);
	if (rc)
		print_error("trace %s: %s\n", argv[0], err.msg);
	assert_int_equal(rc, 0);
	rc = pft_funcs_list(r->f, &r->v, &r->n, &err);
	assert_int_equal(rc, 0);
	check_sum(r, argv[0]);
}

static void run(struct run *r, int engine, const char *region, ...)
{
	char *argv[16];
	va_list ap;
	int n = 0;

	va_start(ap, region);
	while (n < 15 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	vrun(r, engine, region, argv);
}

/* function `name`, or the compiler's clone of it ("cond.constprop.0") */
static const struct pft_func *find(const struct run *r, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < r->n; i++)
		if (!strncmp(r->v[i]->name, name, len) && (!r->v[i]->name[len] || r->v[i]->name[len] == '.'))
			return r->v[i];
	return NULL;
}

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path ? path : "(none)";
}

/* function `name` of file `object` did `flops` FLOPs, all of precision
 * prec */
static void expect(const struct run *r, const char *name, const char *object, uint64_t flops, int prec)
{
	const struct pft_func *f = find(r, name);

	if (!f) {
		print_error("no function %s; the run has:\n", name);
		for (size_t i = 0; i < r->n && i < 20; i++)
			print_error("  %s (%s) %llu\n", r->v[i]->name, base(r->v[i]->object),
				    (unsigned long long)pflops_mix_flops(&r->v[i]->mix, -1));
		fail();
	}
	if (pflops_mix_flops(&f->mix, -1) != flops)
		print_error("%s: %llu FLOPs, expected %llu\n", name, (unsigned long long)pflops_mix_flops(&f->mix, -1),
			    (unsigned long long)flops);
	assert_int_equal(pflops_mix_flops(&f->mix, -1), flops);
	assert_int_equal(pflops_mix_flops(&f->mix, prec), flops);
	assert_true(f->has_symbol);
	assert_string_equal(base(f->object), object);
}

/* FLOP-doing functions of the run */
static size_t doing(const struct run *r)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++)
		k += pflops_mix_flops(&r->v[i]->mix, -1) > 0;
	return k;
}

static const int engines[] = { PFT_ENGINE_STOP, PFT_ENGINE_CACHE };

/* ------------------------------------------------------------------ */

/* calib_region N: outside() N vdivpd xmm, main_kernel() 2N vsubpd ymm in
 * the executable; calib_kernel() N vaddpd ymm and calib_helper() N
 * vmulpd xmm in libcalibk.so, each called twice. */
static void test_library(void **state)
{
	struct run r;

	(void)state;
	for (int e = 0; e < 2; e++) {
		run(&r, engines[e], NULL, prog("calib_region"), "1000", NULL);
		expect(&r, "outside", "calib_region", 2 * N, PFLOPS_DP);
		expect(&r, "main_kernel", "calib_region", 8 * N, PFLOPS_DP);
		expect(&r, "calib_kernel", "libcalibk.so", 2 * 4 * N, PFLOPS_DP);
		expect(&r, "calib_helper", "libcalibk.so", 2 * 2 * N, PFLOPS_DP);
		assert_int_equal(doing(&r), 4);
		/* sorted by FLOPs, most first (ties by name) */
		assert_string_equal(r.v[0]->name, "calib_kernel");
		assert_string_equal(r.v[1]->name, "main_kernel");
		assert_string_equal(r.v[2]->name, "calib_helper");
		assert_string_equal(r.v[3]->name, "outside");
		/* objdump's address: small in a shared library (PIC) */
		assert_true(find(&r, "calib_kernel")->addr < 0x100000);
		assert_true(find(&r, "calib_kernel")->size > 0);
		run_free(&r);
	}
	/* --region: only what ran inside calls to calib_kernel */
	run(&r, PFT_ENGINE_AUTO, "calib_kernel", prog("calib_region"), "1000", NULL);
	expect(&r, "calib_kernel", "libcalibk.so", 2 * 4 * N, PFLOPS_DP);
	expect(&r, "calib_helper", "libcalibk.so", 2 * 2 * N, PFLOPS_DP);
	assert_int_equal(doing(&r), 2);
	run_free(&r);
}

/* threads: worker t runs (t+1)N vaddpd ymm; main 2N vmulpd ymm */
static void test_threads(void **state)
{
	struct run r;

	(void)state;
	for (int e = 0; e < 2; e++) {
		run(&r, engines[e], NULL, prog("calib_threads"), "3", "1000", NULL);
		expect(&r, "worker", "calib_threads", 6 * N * 4, PFLOPS_DP);
		expect(&r, "main", "calib_threads", 2 * 4 * N, PFLOPS_DP);
		assert_int_equal(doing(&r), 2);
		run_free(&r);
	}
}

/* fork: the child's addps (N vaddps xmm), the parent's mulps (2N vmulps
 * xmm); vfork + exec: calib_fp's vaddpd_y in the child's new image, the
 * parent's mulps; exec in place: only the new image's vsqrtpd_y, and with
 * FLOPs before the exec, those in the old image's addps. */
static void test_processes(void **state)
{
	struct run r;

	(void)state;
	for (int e = 0; e < 2; e++) {
		run(&r, engines[e], NULL, prog("calib_fork"), "fork", "1000", NULL);
		assert_int_equal(WEXITSTATUS(r.status), 7);
		expect(&r, "addps", "calib_fork", 4 * N, PFLOPS_SP);
		expect(&r, "mulps", "calib_fork", 2 * 4 * N, PFLOPS_SP);
		assert_int_equal(doing(&r), 2);
		run_free(&r);

		run(&r, engines[e], NULL, prog("calib_fork"), "vfork", "1000", NULL);
		expect(&r, "vaddpd_y", "calib_fp", 4 * N, PFLOPS_DP);
		expect(&r, "mulps", "calib_fork", 4 * N, PFLOPS_SP);
		assert_int_equal(doing(&r), 2);
		run_free(&r);

		run(&r, engines[e], NULL, prog("calib_fork"), "exec", "1000", NULL);
		assert_int_equal(WEXITSTATUS(r.status), 9);
		expect(&r, "vsqrtpd_y", "calib_fp", 4 * N, PFLOPS_DP);
		assert_int_equal(doing(&r), 1);
		run_free(&r);
		/* what ran before the exec is the old image's */
		run(&r, engines[e], NULL, prog("calib_fork"), "execfp", "1000", NULL);
		expect(&r, "addps", "calib_fork", 4 * N, PFLOPS_SP);
		expect(&r, "vsqrtpd_y", "calib_fp", 4 * N, PFLOPS_DP);
		assert_int_equal(doing(&r), 2);
		run_free(&r);
	}
}

/* Signals cut blocks short anywhere (1 ms timer): add8() does 16 FLOPs
 * a loop (8 vaddpd xmm), each on_alrm() call 2 (one vdivpd xmm).  The
 * program writes LOOPS ALARMS. */
static void test_signals(void **state)
{
	char out[] = "/tmp/pflops_funcsXXXXXX";
	long loops = -1, alarms = -1;
	int fd = mkstemp(out);
	struct run r;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (int e = 0; e < 2; e++) {
		run(&r, engines[e], NULL, prog("calib_signal"), "calls", under_valgrind ? "20" : "50", out, NULL);
		f = fopen(out, "r");
		assert_non_null(f);
		assert_int_equal(fscanf(f, "%ld %ld", &loops, &alarms), 2);
		fclose(f);
		expect(&r, "add8", "calib_signal", 16 * (uint64_t)loops, PFLOPS_DP);
		expect(&r, "on_alrm", "calib_signal", 2 * (uint64_t)alarms, PFLOPS_DP);
		assert_int_equal(doing(&r), 2);
		run_free(&r);
		/* a handler's FLOPs are its own; the program crashes at the end */
		run(&r, engines[e], NULL, prog("calib_signal"), "handler", "1000", NULL);
		expect(&r, "on_usr1", "calib_signal", 2 * N, PFLOPS_DP);
		expect(&r, "addpd", "calib_signal", 2 * N, PFLOPS_DP);
		run_free(&r);
		run(&r, engines[e], NULL, prog("calib_signal"), "crash", "1000", NULL);
		assert_true(WIFSIGNALED(r.status));
		expect(&r, "addpd", "calib_signal", 2 * N, PFLOPS_DP);
		run_free(&r);
	}
	unlink(out);
}

/* Masked AVX-512: the active lanes of each run, per function (k1 = 0x0f:
 * 4 of 8 lanes); and the compiler's masked remainder of cond() at -O3
 * -march=native (x > N/3 for 668 of x = 0..1002: 2 FLOPs each). */
static void test_masked(void **state)
{
	struct run r;

	(void)state;
	if (!calib_runs("test_masked", "vaddpd_z_k1"))
		skip();
	run(&r, PFT_ENGINE_AUTO, NULL, prog("calib_fp"), "vaddpd_z_k1", "1000", NULL);
	if (!under_valgrind) /* valgrind hides the opmask registers */
		expect(&r, "vaddpd_z_k1", "calib_fp", 4 * N, PFLOPS_DP);
	assert_int_equal(doing(&r), 1);
	run_free(&r);
	run(&r, PFT_ENGINE_AUTO, NULL, prog("calib_daxpy_O3"), "cond", "1003", NULL);
	if (!under_valgrind)
		expect(&r, "cond", "calib_daxpy_O3", 2 * 668, PFLOPS_DP);
	run_free(&r);
	run(&r, PFT_ENGINE_AUTO, NULL, prog("calib_daxpy_O2"), "matmul", "13", NULL);
	expect(&r, "matmul", "calib_daxpy_O2", 2 * 13 * 13 * 13, PFLOPS_DP);
	assert_int_equal(doing(&r), 1);
	run_free(&r);
}

/* Code without symbols: a stripped copy of calib_fp is one group named
 * after the file and its hottest block, which lies in the function the
 * unstripped file names; JIT code in anonymous memory is one group per
 * mapping (calib_jit: N vaddpd, N vmulpd, N vsubpd ymm in one page,
 * mapped twice at the same address). */
static void test_no_symbol(void **state)
{
	const struct pft_func *f;
	uint64_t lo, hi;
	char name[64];
	struct run r;

	(void)state;
	/* (_start has no FP: its copy counts only with count_all) */
	count_all = 1;
	run(&r, PFT_ENGINE_AUTO, NULL, prog("calib_fp"), "vaddpd_y", "1000", NULL);
	count_all = 0;
	f = find(&r, "vaddpd_y");
	assert_non_null(f);
	lo = f->addr;
	hi = f->addr + f->size;
	/* _start is an assembler label of size 0: covered by no symbol */
	f = NULL;
	for (size_t i = 0; i < r.n; i++)
		if (!r.v[i]->has_symbol)
			f = r.v[i];
	assert_non_null(f);
	assert_string_equal(base(f->object), "calib_fp");
	assert_int_equal(strncmp(f->name, "calib_fp+0x", 11), 0);
	assert_non_null(strstr(f->name, " (no symbol)"));
	run_free(&r);

	run(&r, PFT_ENGINE_AUTO, NULL, prog("calib_fp_stripped"), "vaddpd_y", "1000", NULL);
	assert_int_equal(r.n, 1);
	f = r.v[0];
	assert_false(f->has_symbol);
	assert_string_equal(base(f->object), "calib_fp_stripped");
	assert_int_equal(pflops_mix_flops(&f->mix, -1), 4 * N);
	assert_true(f->addr >= lo && f->addr < hi);
	snprintf(name, sizeof name, "calib_fp_stripped+0x%llx (no symbol)", (unsigned long long)f->addr);
	assert_string_equal(f->name, name);
	run_free(&r);

	for (int e = 0; e < 2; e++) {
		run(&r, engines[e], NULL, prog("calib_jit"), "1000", NULL);
		assert_int_equal(doing(&r), 1);
		f = r.v[0];
		assert_false(f->has_symbol);
		assert_null(f->object);
		assert_int_equal(pflops_mix_flops(&f->mix, -1), 3 * 4 * N);
		snprintf(name, sizeof name, "[anon 0x%llx]", (unsigned long long)f->addr);
		assert_string_equal(f->name, name);
		assert_true(f->addr >= 0x10000);
		run_free(&r);
	}
}

/* The engines agree function by function (same names, same mixes). */
static void test_engines_agree(void **state)
{
	static const char *const progs[][4] = {
		{ "calib_daxpy_O3", "daxpy", "1003", NULL }, { "calib_fp", "calls", "300", NULL },
		{ "calib_fp", "indirect", "300", NULL },     { "calib_fp", "fma_kmix", "300", NULL },
		{ "calib_regionx", "recurse", "1000", "3" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
		struct run a, b;
		char *argv[5] = { (char *)prog(progs[i][0]), (char *)progs[i][1], (char *)progs[i][2],
				  (char *)progs[i][3], NULL };
		if (!strcmp(progs[i][0], "calib_fp") && !calib_runs("test_engines_agree", progs[i][1]))
			continue;
		vrun(&a, PFT_ENGINE_STOP, NULL, argv);
		vrun(&b, PFT_ENGINE_CACHE, NULL, argv);
		assert_true(doing(&a) > 0);
		assert_int_equal(doing(&a), doing(&b));
		for (size_t k = 0; k < doing(&a); k++) {
			const struct pft_func *x = a.v[k], *y = NULL;
			for (size_t j = 0; j < b.n; j++)
				if (!strcmp(b.v[j]->name, x->name))
					y = b.v[j];
			if (!y || pflops_mix_flops(&x->mix, -1) != pflops_mix_flops(&y->mix, -1))
				fail_msg("%s %s: %s differs between the engines", progs[i][0], progs[i][1], x->name);
			assert_memory_equal(x->mix.lanes_active, y->mix.lanes_active, sizeof x->mix.lanes_active);
		}
		run_free(&a);
		run_free(&b);
	}
}

int main(void)
{
	/* the traced test programs besides calib_fp use AVX (ymm) */
	if (!calib_cpu_has("test_funcs", NULL, "avx"))
		return 77;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_library),	      cmocka_unit_test(test_threads), cmocka_unit_test(test_processes),
		cmocka_unit_test(test_signals),	      cmocka_unit_test(test_masked),  cmocka_unit_test(test_no_symbol),
		cmocka_unit_test(test_engines_agree),
	};

	calib_prog_init();
	under_valgrind = getenv("PF_UNDER_VALGRIND") != NULL;
	if (access(prog("calib_fp_stripped"), X_OK)) {
		fprintf(stderr,
			"test_funcs: %s missing; run `make check` "
			"(it builds the calibration programs)\n",
			prog("calib_fp_stripped"));
		return 1;
	}
	return cmocka_run_group_tests_name("funcs", tests, NULL, NULL);
}
