/*
 * The counting pipeline's planner (core/pflops_count.h), which the flops
 * component and papi_flops_run --source hw both plan through: an Arm SVE
 * formula planned with the vector length the kind carries, not the
 * table's default; the component's way and the run tool's (a metric mask
 * on the probe's kinds) give the same plan; width qualifiers read the
 * table's model lines through model.c's parser.
 *
 * The component's way is its own code (components/flops/flops_plan.c, as
 * libpapi runs it): its kinds from PAPI_FLOPS_PMU, LIBPFM_FORCE_PMU or a
 * probe of an hwloc topology fixture (ctests/fixtures/topologies), an
 * injected SVE vector length, its event set's codes planned and refused
 * as PAPI_add_event plans and refuses them.
 *
 * Run on aarch64 with SVE (qemu-aarch64 -cpu max,sve-default-vector-length=N
 * under scripts/test-aarch64.sh), the vector length is this process's,
 * read at run time, and PF_EXPECT_SVE_BITS (when set) is what it must be.
 * Elsewhere that part says SKIP.  Nothing here opens a counter.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "papi_flops.h"
#include "pflops_count.h"
#include "../components/flops/flops_plan.h"

#include "builtin_table.h"

/* The weight of the plan's counter with raw code config for slot s. */
static double weight(const struct pflops_plan *p, uint64_t config, int s)
{
	for (int c = 0; c < p->ncounters; c++)
		if ((p->counter[c].config & 0xffff) == config)
			return p->counter[c].weight[s];
	fail_msg("no counter 0x%llx in the plan", (unsigned long long)config);
	return 0;
}

/* The two plans count the same events with the same weights. */
static void assert_same_plan(const struct pflops_plan *a, int sa, const struct pflops_plan *b, int sb)
{
	assert_int_equal(a->ncounters, b->ncounters);
	assert_int_equal(a->cost, b->cost);
	assert_true(a->vl128 == b->vl128);
	for (int c = 0; c < a->ncounters; c++) {
		assert_true(a->counter[c].config == b->counter[c].config);
		assert_true(a->counter[c].weight[sa] == b->counter[c].weight[sb]);
	}
}

/* The run tool's way: the metrics as slots on the probe's kinds (a
 * probe of one kind of core, its vector length sve_bits). */
static void plan_as_run_tool(struct pfc_count *c, struct pfc_count_kinds *ks, const struct pflops_pmu *p, int sve_bits,
			     unsigned metrics)
{
	struct pflops_probe pr = { .live = 1, .nkinds = 1, .paranoid = -99 };
	pr.kinds[0].pmu = p;
	pr.kinds[0].budget = pr.kinds[0].budget_cycles = p->counters_smt;
	pr.kinds[0].sve_bits = sve_bits;
	assert_int_equal(pfc_count_kinds_probe(ks, &pr), 1);
	struct pfc_count_want w[PFLOPS_NMETRIC];
	pfc_count_want_metrics(w, metrics);
	assert_int_equal(pfc_count_plan(c, ks, w, PFLOPS_NMETRIC, 1), 1);
}

/* The component's kinds (flo_choose_kinds) with only PAPI_FLOPS_PMU or
 * LIBPFM_FORCE_PMU as given (NULL: unset), on probe pr (NULL: none, as
 * where the variables decide); 0 or its PFLOPS_E* code with err. */
static int component_kinds(struct pfc_count_kinds *ks, const char *papi_flops_pmu, const char *force,
			   const struct pflops_probe *pr, int sve_bits, struct pflops_error *err)
{
	static const struct pflops_probe none = { .paranoid = -99 };
	papi_flops_pmu ? setenv("PAPI_FLOPS_PMU", papi_flops_pmu, 1) : unsetenv("PAPI_FLOPS_PMU");
	force ? setenv("LIBPFM_FORCE_PMU", force, 1) : unsetenv("LIBPFM_FORCE_PMU");
	int rc = flo_choose_kinds(ks, &T, pr ? pr : &none, sve_bits, err);
	unsetenv("PAPI_FLOPS_PMU");
	unsetenv("LIBPFM_FORCE_PMU");
	return rc;
}

/* The component's plan of an event set of n FLOP events (their codes, as
 * PAPI_add_event hands them over): 0 or its PFLOPS_E* code with msg. */
static int component_plan(struct pfc_count *c, const struct pfc_count_kinds *ks, const unsigned *code, int n,
			  int multiplex, char *msg, size_t len)
{
	int slot_of[PFLOPS_NMETRIC];
	for (int i = 0; i < n; i++)
		slot_of[i] = i;
	return flo_plan_set(c, ks, code, slot_of, n, n, multiplex, 0, msg, len);
}

/* The component's way: PAPI_FLOPS_PMU naming one PMU, an event set of
 * that metric (sve_bits -1: this process's vector length). */
static void plan_as_component(struct pfc_count *c, struct pfc_count_kinds *ks, const struct pflops_pmu *p, int sve_bits,
			      int metric)
{
	struct pflops_error err = { 0 };
	char msg[1024];
	assert_int_equal(component_kinds(ks, p->name, NULL, NULL, sve_bits, &err), 0);
	assert_int_equal(ks->n, 1);
	assert_ptr_equal(ks->kind[0].pmu, p);
	unsigned code = FLO_CODE(metric, 0, 0);
	if (component_plan(c, ks, &code, 1, 0, msg, sizeof(msg)))
		fail_msg("the component refuses %s on %s: %s", pflops_metric_name(metric), p->name, msg);
}

/* arm_v1's table default is 256 bits; a kind at 512 plans SCALE x 4. */
static void test_injected_vl(void **state)
{
	const struct pflops_pmu *v1 = pmu("arm_v1");
	assert_int_equal(v1->sve_bits, 256);
	static struct pfc_count_kinds ka, kb;
	static struct pfc_count a, b;
	plan_as_run_tool(&a, &ka, v1, 512, 1u << PFLOPS_FP_OPS);
	plan_as_component(&b, &kb, v1, 512, PFLOPS_FP_OPS);
	assert_true(weight(&a.plan[0], 0x80c0, PFLOPS_FP_OPS) == 4.0);
	assert_true(weight(&a.plan[0], 0x80c1, PFLOPS_FP_OPS) == 1.0);
	assert_same_plan(&a.plan[0], PFLOPS_FP_OPS, &b.plan[0], 0);
	/* the table's default where the kind carries none */
	plan_as_run_tool(&a, &ka, v1, 0, 1u << PFLOPS_FP_OPS);
	assert_true(weight(&a.plan[0], 0x80c0, PFLOPS_FP_OPS) == 2.0);
	/* 128 bits (an A64FX may run at less than its 512) */
	plan_as_run_tool(&a, &ka, pmu("arm_a64fx"), 128, 1u << PFLOPS_DP_OPS);
	plan_as_component(&b, &kb, pmu("arm_a64fx"), 128, PFLOPS_DP_OPS);
	assert_same_plan(&a.plan[0], PFLOPS_DP_OPS, &b.plan[0], 0);
	assert_true(a.plan[0].vl128 == 1.0);
	pfc_count_close(&a);
	pfc_count_close(&b);
}

/* This process's vector length, as both front ends read it: the probe's
 * kind (papi_flops_run) and a PMU named by PAPI_FLOPS_PMU (component). */
static void test_runtime_vl(void **state)
{
	int vl = pfc_sve_vl_bits();
	const char *expect = getenv("PF_EXPECT_SVE_BITS");
	if (!vl) {
		if (expect && *expect)
			fail_msg("PF_EXPECT_SVE_BITS=%s but this process has no SVE vector length", expect);
		printf("SKIP: test_count_plan run-time vector length: this CPU lacks SVE\n");
		skip();
	}
	if (expect && *expect)
		assert_int_equal(vl, atoi(expect));
	struct pflops_probe pr;
	struct pflops_error err = { 0 };
	assert_int_equal(pflops_probe_run(&pr, &T, NULL, &err), 0);
	assert_true(pr.nkinds >= 1);
	assert_int_equal(pr.kinds[0].sve_bits, vl); /* the probe read it too */
	static struct pfc_count_kinds ka, kb;
	static struct pfc_count a, b;
	const struct pflops_pmu *v1 = pmu("arm_v1");
	plan_as_run_tool(&a, &ka, v1, pr.kinds[0].sve_bits, 1u << PFLOPS_FP_OPS);
	plan_as_component(&b, &kb, v1, -1, PFLOPS_FP_OPS);
	assert_int_equal(kb.kind[0].sve_bits, vl);
	assert_true(weight(&a.plan[0], 0x80c0, PFLOPS_FP_OPS) == vl / 128.0);
	assert_same_plan(&a.plan[0], PFLOPS_FP_OPS, &b.plan[0], 0);
	printf("run-time SVE vector length %d bits: both plan FP_OPS = %g*SCALE + FIXED\n", vl,
	       weight(&a.plan[0], 0x80c0, PFLOPS_FP_OPS));
	pfc_count_close(&a);
	pfc_count_close(&b);
}

/* A machine's topology (a fixture) probed, the kinds chosen as the
 * component chooses them with no variable set: each metric one
 * event of a set, multiplexed as the run tool is, gets the run tool's
 * plan on every kind, or is refused where a kind of the machine lacks
 * it (its value would miss the time there), never planned short. */
static void test_component_fixtures(void **state)
{
	static const char *const machines[] = {
		"AMD-17h-Zen-2xEpyc-7451",
		"AMD-19h-Zen4-2xEpyc-9654",
		"Intel-Broadwell-2xXeon-E5-2650Lv4",
		"Intel-Core-2xXeon-E5345",
		"Intel-Haswell-2xXeon-E5-2680v3",
		"Intel-Nehalem-2xXeon-X5550",
		"Intel-RaptorLake-Corei7-1370P",
		"Intel-SandyBridge-2xXeon-E5-2650",
		"Intel-SapphireRapids-2xXeonMax9460",
		"Intel-Skylake-2xXeon6140",
	};
	static struct pflops_probe pr;
	static struct pfc_count_kinds kc, kr;
	static struct pfc_count c, r;
	int compared = 0, refused = 0;
	for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
		char path[256], msg[1024];
		struct pflops_error err = { 0 };
		snprintf(path, sizeof(path), "ctests/fixtures/topologies/%s.xml", machines[i]);
		if (pflops_probe_run(&pr, &T, path, &err))
			fail_msg("%s: %s", path, err.msg);
		assert_int_equal(component_kinds(&kc, NULL, NULL, &pr, -1, &err), 0);
		assert_int_equal(kc.n, pr.nkinds);
		assert_true(pfc_count_kinds_probe(&kr, &pr) >= 1);
		assert_int_equal(kr.n, kc.n);
		for (int m = 0; m < PFLOPS_NMETRIC; m++) {
			int lacking = 0, having = 0;
			for (int k = 0; k < pr.nkinds; k++)
				if (pr.kinds[k].pmu && pr.kinds[k].pmu->metrics[m].klass != PFLOPS_UNAVAILABLE)
					having++;
				else
					lacking++;
			if (!having)
				continue; /* not listed by the component: never reaches its planning */
			unsigned code = FLO_CODE(m, 0, 0);
			int rc = component_plan(&c, &kc, &code, 1, 1, msg, sizeof(msg));
			struct pfc_count_want w[PFLOPS_NMETRIC];
			pfc_count_want_metrics(w, 1u << m);
			r.multiplex = 1;
			pfc_count_plan(&r, &kr, w, PFLOPS_NMETRIC, 1);
			if (lacking) {
				if (rc != PFLOPS_EUNAVAIL || !strstr(msg, "would miss the time there"))
					fail_msg(
						"%s: %s is not counted on every kind, yet the component plans it (%d: %s)",
						machines[i], pflops_metric_name(m), rc, msg);
				refused++;
				continue;
			}
			if (rc)
				fail_msg("%s: the component refuses %s: %s", machines[i], pflops_metric_name(m), msg);
			for (int k = 0; k < pr.nkinds; k++) {
				assert_true(c.planned[k] && r.planned[k]);
				assert_true(kc.kind[k].pmu == kr.kind[k].pmu);
				assert_int_equal(kc.kind[k].budget, kr.kind[k].budget);
				assert_same_plan(&r.plan[k], m, &c.plan[k], 0);
				compared++;
			}
		}
	}
	printf("%d plans the same both ways, %d metrics refused on a hybrid machine lacking them on a kind\n", compared,
	       refused);
	assert_true(compared >= 30 && refused >= 5); /* not vacuous: ten machines */
	pfc_count_close(&c);
	pfc_count_close(&r);
}

/* LIBPFM_FORCE_PMU, and the sets the component refuses: over the
 * counters without the multiplex switch (with what fits alone), a metric
 * one of two named kinds lacks; PAPI_FLOPS_PMU's mistakes by name. */
static void test_component_refusals(void **state)
{
	static struct pfc_count_kinds ks;
	static struct pfc_count c;
	struct pflops_error err = { 0 };
	char msg[1024];
	unsigned fp = FLO_CODE(PFLOPS_FP_OPS, 0, 0), dp = FLO_CODE(PFLOPS_DP_OPS, 0, 0);
	assert_int_equal(component_kinds(&ks, NULL, "skx", NULL, -1, &err), 0);
	assert_int_equal(ks.n, 1);
	assert_ptr_equal(ks.kind[0].pmu, pmu("skx"));
	assert_int_equal(component_plan(&c, &ks, &fp, 1, 0, msg, sizeof(msg)), PFLOPS_ECNFLCT);
	assert_non_null(strstr(msg, "FP_OPS needs 5 hardware counters on "));
	assert_non_null(strstr(msg, "which has 4 general counters per thread (SMT on)"));
	assert_non_null(strstr(msg, "DP_OPS or SP_OPS fit alone"));
	assert_int_equal(component_plan(&c, &ks, &fp, 1, 1, msg, sizeof(msg)), 0); /* multiplexed */
	assert_int_equal(c.plan[0].cost, 5);
	assert_int_equal(component_plan(&c, &ks, &dp, 1, 0, msg, sizeof(msg)), 0);
	/* a width qualifier is a slot of its own */
	unsigned two[2] = { dp, FLO_CODE(PFLOPS_DP_OPS, PFLOPS_W512 + 1, 0) };
	assert_int_equal(component_plan(&c, &ks, two, 2, 0, msg, sizeof(msg)), 0);
	int in512 = 0, all = 0;
	for (int k = 0; k < c.plan[0].ncounters; k++) {
		all += c.plan[0].counter[k].weight[0] != 0;
		in512 += c.plan[0].counter[k].weight[1] != 0;
	}
	assert_true(in512 >= 1 && in512 < all);
	/* two kinds named, one without HP_OPS */
	assert_int_equal(component_kinds(&ks, "spr,adl_glc", NULL, NULL, -1, &err), 0);
	assert_int_equal(ks.n, 2);
	assert_true(ks.kind[0].own_pmu && ks.kind[0].ref && ks.kind[1].own_pmu && ks.kind[1].ref);
	unsigned hp = FLO_CODE(PFLOPS_HP_OPS, 0, 0);
	assert_int_equal(component_plan(&c, &ks, &hp, 1, 0, msg, sizeof(msg)), PFLOPS_EUNAVAIL);
	assert_non_null(strstr(msg, "HP_OPS is not counted on Intel Golden Cove"));
	assert_int_equal(component_plan(&c, &ks, &dp, 1, 0, msg, sizeof(msg)), 0);
	assert_true(c.planned[0] && c.planned[1]);
	/* PAPI_FLOPS_PMU's mistakes, and a LIBPFM_FORCE_PMU without a formula */
	assert_int_equal(component_kinds(&ks, "skx,skx", NULL, NULL, -1, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "names skx twice"));
	assert_int_equal(component_kinds(&ks, "zen4,", NULL, NULL, -1, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "has an empty PMU name"));
	assert_int_equal(component_kinds(&ks, "nosuch", NULL, NULL, -1, &err), PFLOPS_ENOENT);
	assert_non_null(strstr(err.msg, "'nosuch', which is not in the formula table"));
	assert_int_equal(component_kinds(&ks, NULL, "nosuch", NULL, -1, &err), PFLOPS_ENOCPU);
	assert_non_null(strstr(err.msg, "LIBPFM_FORCE_PMU=nosuch has no FLOP formula"));
	/* PAPI_FLOPS_PMU wins over LIBPFM_FORCE_PMU */
	assert_int_equal(component_kinds(&ks, "icl", "skx", NULL, -1, &err), 0);
	assert_ptr_equal(ks.kind[0].pmu, pmu("icl"));
	pfc_count_close(&c);
}

/* A PMU without SVE keeps no vector length, whatever the process has. */
static void test_no_sve_part(void **state)
{
	static struct pfc_count_kinds ks;
	assert_int_equal(pfc_count_kind_add(&ks, pmu("arm_n1"), -1, 1, 0, 0, 0, -1, NULL), 0);
	assert_int_equal(ks.kind[0].sve_bits, 0);
	assert_int_equal(pfc_count_kind_add(&ks, pmu("skx"), -1, 1, 0, 0, 0, -1, NULL), 0);
	assert_int_equal(ks.kind[1].sve_bits, 0);
}

/* Width and precision qualifiers from the model lines (model.c's parser):
 * FP_OPS:W512 on Skylake-SP plans a real part of FP_OPS; DP_OPS:DP is the
 * whole metric (no split); an Arm event (model none) splits by nothing. */
static void test_qualifiers(void **state)
{
	const struct pflops_pmu *skx = pmu("skx");
	assert_true(pfc_count_qualifier_ok(skx, PFLOPS_FP_OPS, PFLOPS_W512, -1));
	assert_false(pfc_count_qualifier_ok(pmu("arm_v1"), PFLOPS_FP_OPS, PFLOPS_W128, -1));
	assert_false(pfc_count_qualifier_ok(skx, PFLOPS_DP_OPS, -1, PFLOPS_DP)); /* the whole metric */
	static struct pfc_count_kinds ks;
	static struct pfc_count c;
	assert_int_equal(pfc_count_kind_add(&ks, skx, -1, 1, 0, 0, 0, -1, NULL), 0);
	struct pfc_count_want w[2] = { { PFLOPS_FP_OPS, PFLOPS_W512, -1 }, { PFLOPS_FP_OPS, -1, -1 } };
	assert_int_equal(pfc_count_plan(&c, &ks, w, 2, 0), 1);
	int in512 = 0, all = 0;
	for (int k = 0; k < c.plan[0].ncounters; k++) {
		in512 += c.plan[0].counter[k].weight[0] != 0;
		all += c.plan[0].counter[k].weight[1] != 0;
	}
	assert_true(in512 >= 1 && in512 < all); /* a real part of FP_OPS */
	/* strict: a slot the kind cannot count leaves the kind unplanned, with why */
	struct pfc_count_want bad[1] = { { PFLOPS_HP_OPS, -1, -1 } };
	assert_int_equal(pfc_count_plan(&c, &ks, bad, 1, 1), 0);
	assert_int_equal(c.rc[0], PFLOPS_EUNAVAIL);
	assert_non_null(strstr(c.why[0], "HP_OPS"));
	/* not strict: left out, the kind unplanned without an error */
	assert_int_equal(pfc_count_plan(&c, &ks, bad, 1, 0), 0);
	assert_int_equal(c.rc[0], 0);
	pfc_count_close(&c);
}

/* Hybrid Arm kinds time themselves with the architectural CPU_CYCLES
 * (0x11) on their own PMU, as x86 kinds with 0x3c. */
static void test_arm_hybrid_reference(void **state)
{
	static struct pfc_count_kinds ks;
	static struct pfc_count c;
	assert_int_equal(pfc_count_kind_add(&ks, pmu("arm_v1"), 6, 1, 1, 1, 0, 256, NULL), 0);
	ks.kind[0].type = 9; /* as pfc_count_kinds_types reads it from sysfs */
	struct pfc_count_want w[PFLOPS_NMETRIC];
	pfc_count_want_metrics(w, 1u << PFLOPS_FP_OPS);
	assert_int_equal(pfc_count_plan(&c, &ks, w, PFLOPS_NMETRIC, 1), 1);
	assert_int_equal(pfc_count_layout(&c, NULL), 0);
	assert_int_equal(c.nev, 3);
	assert_int_equal(c.ev[0].slot, -1);
	assert_int_equal(c.ev[0].type, 9);
	assert_true(c.ev[0].config == 0x11);
	assert_int_equal(c.ev[1].type, 9);
	pfc_count_close(&c);
}

/* A hybrid kind the table has no formula for is still timed: a cycles
 * reference on its own PMU (from a sysfs fixture), so its share of the
 * run is reported; a kind with no PMU found says its time is not measured. */
static void test_unknown_kind_timed(void **state)
{
	char dir[] = "/tmp/pf_sysfs_XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	const char *pmus[][2] = { { "cpu_core", "8" }, { "cpu_atom", "10" } };
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, pmus[i][0]);
		assert_int_equal(mkdir(path, 0700), 0);
		snprintf(path, sizeof(path), "%s/%s/type", dir, pmus[i][0]);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, "%s\n", pmus[i][1]);
		fclose(f);
	}
	setenv("PAPI_FLOPS_SYSFS", dir, 1);
	static struct pflops_probe pr = { .live = 1, .nkinds = 2, .paranoid = -99 };
	const struct pflops_pmu *glc = pmu("adl_glc");
	pr.kinds[0].pmu = glc;
	pr.kinds[0].budget = pr.kinds[0].budget_cycles = glc->counters_smt;
	snprintf(pr.kinds[0].perf_pmu, sizeof(pr.kinds[0].perf_pmu), "cpu_core");
	pr.kinds[1].pmu = NULL;
	snprintf(pr.kinds[1].vendor, sizeof(pr.kinds[1].vendor), "intel");
	snprintf(pr.kinds[1].cpus, sizeof(pr.kinds[1].cpus), "16-23");
	snprintf(pr.kinds[1].why, sizeof(pr.kinds[1].why), "unknown CPU");
	snprintf(pr.kinds[1].perf_pmu, sizeof(pr.kinds[1].perf_pmu), "cpu_atom");
	static struct pfc_count_kinds ks;
	static struct pfc_count c;
	assert_int_equal(pfc_count_kinds_probe(&ks, &pr), 1);
	assert_int_equal(pfc_count_kinds_types(&ks, NULL), 0);
	struct pfc_count_want w[PFLOPS_NMETRIC];
	pfc_count_want_metrics(w, 1u << PFLOPS_FP_OPS);
	assert_int_equal(pfc_count_plan(&c, &ks, w, PFLOPS_NMETRIC, 1), 1);
	assert_int_equal(pfc_count_layout(&c, NULL), 0);
	int ref1 = 0;
	for (int i = 0; i < c.nev; i++)
		if (c.ev[i].kind == 1) {
			assert_int_equal(c.ev[i].slot, -1); /* only its time */
			assert_int_equal(c.ev[i].type, 10);
			assert_true(c.ev[i].config == 0x3c);
			ref1++;
		}
	assert_int_equal(ref1, 1);
	char msg[256];
	assert_int_equal(pfc_count_untimed(&ks, 1, msg, sizeof(msg)), 0);
	/* no such PMU in sysfs: untimed, and said so */
	snprintf(pr.kinds[1].perf_pmu, sizeof(pr.kinds[1].perf_pmu), "cpu_lowpower");
	pfc_count_kinds_probe(&ks, &pr);
	assert_int_equal(pfc_count_kinds_types(&ks, NULL), 0);
	assert_int_equal(ks.kind[1].ref, 0);
	assert_int_equal(pfc_count_untimed(&ks, 1, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "time on CPUs 16-23 is not measured"));
	unsetenv("PAPI_FLOPS_SYSFS");
	pfc_count_close(&c);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/type", dir, pmus[i][0]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s", dir, pmus[i][0]);
		rmdir(path);
	}
	rmdir(dir);
}

/* Not strict, a slot one kind lacks is recorded as skipped there (its
 * callers say so or refuse), and the kind's share of the time is its
 * reference's. */
static void test_skipped_slots(void **state)
{
	static struct pfc_count_kinds ks;
	static struct pfc_count c;
	assert_int_equal(pfc_count_kind_add(&ks, pmu("spr"), -1, 1, 1, 1, 0, 0, NULL), 0);
	assert_int_equal(pfc_count_kind_add(&ks, pmu("adl_glc"), -1, 1, 1, 1, 0, 0, NULL), 0);
	struct pfc_count_want w[2] = { { PFLOPS_DP_OPS, -1, -1 }, { PFLOPS_HP_OPS, -1, -1 } };
	assert_int_equal(pfc_count_plan(&c, &ks, w, 2, 0), 2);
	assert_int_equal(c.skipped[0], 0);
	assert_int_equal(c.skipped[1], 1u << 1);	       /* adl_glc has no HP_OPS */
	assert_int_equal(pfc_count_plan(&c, &ks, w, 2, 1), 1); /* strict: not planned there */
	assert_int_equal(c.skipped[1], 0);
	c.st.kind_ns[0] = 300;
	c.st.kind_ns[1] = 100;
	assert_true(pfc_count_share(&c, 1) == 0.25);
	pfc_count_close(&c);
}

/* A PMU with no FLOP formula (Neoverse N1, Gracemont) says so with the
 * table's caveat, whether nothing was asked (no --metrics) or FP_OPS. */
static void test_no_formula_why(void **state)
{
	static struct pfc_count_kinds ks;
	static struct pfc_count c;
	memset(&ks, 0, sizeof(ks));
	assert_int_equal(pfc_count_kind_add(&ks, pmu("arm_n1"), -1, 1, 0, 0, 0, 0, NULL), 0);
	struct pfc_count_want w[PFLOPS_NMETRIC];
	pfc_count_want_metrics(w, 0);
	assert_int_equal(pfc_count_plan(&c, &ks, w, PFLOPS_NMETRIC, 0), 0);
	assert_null(strstr(c.why[0], "metrics asked"));
	assert_non_null(strstr(c.why[0], "no FLOP formula on Arm Neoverse N1: Neoverse N1 has no FP_SCALE"));
	assert_non_null(strstr(c.why[0], "papi_flops_avail lists what each core counts"));
	memset(&ks, 0, sizeof(ks));
	assert_int_equal(pfc_count_kind_add(&ks, pmu("adl_glc"), -1, 1, 1, 1, 0, 0, NULL), 0);
	assert_int_equal(pfc_count_kind_add(&ks, pmu("adl_grt"), -1, 1, 1, 1, 0, 0, NULL), 0);
	pfc_count_want_metrics(w, 1u << PFLOPS_FP_OPS);
	assert_int_equal(pfc_count_plan(&c, &ks, w, PFLOPS_NMETRIC, 0), 1);
	assert_non_null(strstr(c.why[1], "no FLOP formula on Intel Gracemont"));
	assert_non_null(strstr(c.why[1], "no floating-point event"));
	pfc_count_close(&c);
}

/* The vector length is per thread, and exec resets it to the system
 * default unless PR_SVE_VL_INHERIT is set (values injected: a default
 * file as /proc/sys/abi/sve_default_vector_length, in bytes). */
static void test_exec_vl(void **state)
{
	char path[] = "/tmp/pf_sve_default_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "64\n", 3), 3);
	close(fd);
	const int inherit = 1 << 17;					 /* PR_SVE_VL_INHERIT */
	assert_int_equal(pfc_sve_exec_vl_bits(32, path), 512);		 /* 256 bits now, 512 after exec */
	assert_int_equal(pfc_sve_exec_vl_bits(32 | inherit, path), 256); /* inherited */
	assert_int_equal(pfc_sve_exec_vl_bits(-1, path), 0);		 /* no SVE */
	unlink(path);
	assert_int_equal(pfc_sve_exec_vl_bits(32, path), 256); /* no default known: ours */
	/* a set planned at 256 bits, started in a thread at 512: refused, said */
	static struct pfc_count_kinds ks;
	static struct pfc_count c;
	memset(&ks, 0, sizeof(ks));
	assert_int_equal(pfc_count_kind_add(&ks, pmu("arm_v1"), -1, 1, 0, 0, 0, 256, NULL), 0);
	struct pfc_count_want w[1] = { { PFLOPS_FP_OPS, -1, -1 } };
	assert_int_equal(pfc_count_plan(&c, &ks, w, 1, 0), 1);
	char msg[512];
	assert_int_equal(pfc_count_vl_differs(&c, 256, msg, sizeof(msg)), 0);
	assert_int_equal(pfc_count_vl_differs(&c, 0, msg, sizeof(msg)), 0);
	assert_int_equal(pfc_count_vl_differs(&c, 512, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "this thread's SVE vector length is 512 bits"));
	assert_non_null(strstr(msg, "planned at 256 bits"));
	pfc_count_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_injected_vl),
		cmocka_unit_test(test_runtime_vl),
		cmocka_unit_test(test_component_fixtures),
		cmocka_unit_test(test_component_refusals),
		cmocka_unit_test(test_no_sve_part),
		cmocka_unit_test(test_qualifiers),
		cmocka_unit_test(test_arm_hybrid_reference),
		cmocka_unit_test(test_unknown_kind_timed),
		cmocka_unit_test(test_skipped_slots),
		cmocka_unit_test(test_no_formula_why),
		cmocka_unit_test(test_exec_vl),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
