/*
 * Counter budgets as the kernel schedules them (SMT, the NMI watchdog,
 * a set's own cycles event) and plans fitted to a budget: Sapphire
 * Rapids' FP_OPS in 6 counters with its FP16 detector, and what is left
 * alone.  Counts are hand-computed; nothing here needs a PMU.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "papi_flops.h"

#include "builtin_table.h"

/* Intel and Arm keep cycles on a fixed counter; AMD has none. */
static void test_budget(void **state)
{
	static const struct {
		const char *pmu;
		int smt, nmi, cycles, want;
	} b[] = {
		{ "skx", 1, 0, 0, 4 }, /* SMT on: 4 per thread */
		{ "skx", 0, 0, 0, 8 }, /* SMT off: 8 */
		{ "skx", 1, 1, 0, 4 }, /* the watchdog sits on fixed counter 1 */
		{ "skx", 1, 0, 1, 4 }, /* our cycles on fixed counter 1 */
		{ "skx", 1, 1, 1, 3 }, /* both want fixed counter 1: ours goes general */
		{ "bdw", 1, 1, 0, 4 }, /* Broadwell with the default watchdog keeps its 4 */
		{ "icx", 1, 1, 0, 8 },
		{ "amd64_fam19h_zen4", 1, 0, 0, 6 },
		{ "amd64_fam19h_zen4", 1, 1, 0, 5 }, /* AMD: the watchdog takes a general one */
		{ "amd64_fam19h_zen4", 1, 1, 1, 4 },
		{ "amd64_fam19h_zen4", 1, 0, 1, 5 },
		{ "zen5", 1, 1, 0, 5 },
		{ "hygon", 1, 1, 0, 5 },
		{ "adl_glc", 1, 0, 1, 8 }, /* hybrid P-core: cycles reference on its fixed counter */
		{ "adl_glc", 1, 1, 1, 7 },
		{ "adl_grt", 0, 1, 1, 5 }, /* hybrid E-core */
		{ "arm_v2", 0, 1, 0, 6 },  /* Arm: dedicated cycle counter */
	};
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		int got = pflops_budget(pmu(b[i].pmu), b[i].smt, b[i].nmi, b[i].cycles);
		if (got != b[i].want)
			fail_msg("%s smt=%d watchdog=%d cycles=%d: budget %d, expected %d", b[i].pmu, b[i].smt,
				 b[i].nmi, b[i].cycles, got, b[i].want);
	}
	/* the point of it: FP_OPS fits a Broadwell with the watchdog on */
	struct pflops_plan plan;
	assert_int_equal(pflops_plan_fit(&plan, pmu("bdw"), 1u << PFLOPS_FP_OPS, 0, pflops_budget(pmu("bdw"), 1, 1, 0),
					 NULL, NULL),
			 0);
	assert_int_equal(plan.cost, 4);
	assert_int_equal(plan.reduced, 0);
}

/* counts per table event alias; a merged counter reads the sum */
static void counts_of(const struct pflops_plan *plan, const char *const *alias, const double *n, int nn, double *counts)
{
	const struct pflops_pmu *p = plan->pmu;
	for (int k = 0; k < plan->ncounters; k++) {
		counts[k] = 0;
		for (int e = 0; e < plan->counter[k].nevents; e++)
			for (int i = 0; i < nn; i++)
				if (!strcmp(p->events[plan->counter[k].events[e]].alias, alias[i]))
					counts[k] += n[i];
	}
}

static void test_spr_fp_ops_in_8(void **state)
{
	const struct pflops_pmu *spr = pmu("spr");
	struct pflops_plan plan;
	struct pflops_error err = { 0 };
	/* alone: 5 FP_ARITH counters + the FP16 detector */
	if (pflops_plan_fit(&plan, spr, 1u << PFLOPS_FP_OPS, 0, 8, NULL, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(plan.cost, 6);
	assert_int_equal(plan.reduced, 1u << PFLOPS_FP_OPS);
	int det = -1, ndet = 0;
	for (int k = 0; k < plan.ncounters; k++)
		if (plan.counter[k].detects)
			det = k, ndet++;
	assert_int_equal(ndet, 1);
	/* 0xCF, every umask bit (SCALAR 0x03 | VECTOR 0x1C, Intel SPR event list), user+kernel */
	assert_int_equal(plan.counter[det].config, 0x531fcfULL);
	assert_true(plan.counter[det].weight[PFLOPS_FP_OPS] == 0);
	/* SD 1, SS 2, D128 3, S128 4, D256 5, S256 6, D512 7, S512 8 -> 277
	 * FLOPs; the FP16 events count 150 instructions, read by the detector
	 * and not weighted. */
	static const char *const alias[] = { "SD",   "SS", "D128", "S128", "D256", "S256", "D512",
					     "S512", "H1", "HC",   "H128", "H256", "H512", "H_ANY" };
	static const double n[] = { 1, 2, 3, 4, 5, 6, 7, 8, 10, 20, 30, 40, 50, 150 };
	double counts[PFLOPS_MAX_COUNTERS];
	counts_of(&plan, alias, n, 14, counts);
	assert_true(pflops_plan_eval(&plan, PFLOPS_FP_OPS, counts) == 277);
	assert_true(counts[det] == 150);

	/* with HP_OPS: the full plan, FP16 weighted (10 counters, over 8) */
	assert_int_equal(pflops_plan_fit(&plan, spr, 1u << PFLOPS_FP_OPS | 1u << PFLOPS_HP_OPS, 0, 8, NULL, &err), 0);
	assert_int_equal(plan.cost, 10);
	assert_int_equal(plan.reduced, 0);
	counts_of(&plan, alias, n, 14, counts);
	assert_true(pflops_plan_eval(&plan, PFLOPS_FP_OPS, counts) == 277 + 2530);
	/* enough counters (SMT off on a 10-counter core): no need to reduce */
	assert_int_equal(pflops_plan_fit(&plan, spr, 1u << PFLOPS_FP_OPS, 0, 10, NULL, &err), 0);
	assert_int_equal(plan.cost, 10);
	assert_int_equal(plan.reduced, 0);
	/* reduced but still over: FP_OPS+DP_OPS would take 9, so the full plan comes back */
	assert_int_equal(pflops_plan_fit(&plan, spr, 1u << PFLOPS_FP_OPS | 1u << PFLOPS_DP_OPS, 0, 8, NULL, &err), 0);
	assert_int_equal(plan.reduced, 0);
	assert_true(plan.cost > 8);
	/* a CPU without a detect rule: skx FP_OPS stays 5 of 4 */
	assert_int_equal(pflops_plan_fit(&plan, pmu("skx"), 1u << PFLOPS_FP_OPS, 0, 4, NULL, &err), 0);
	assert_int_equal(plan.cost, 5);
	assert_int_equal(plan.reduced, 0);
	assert_int_equal(pmu("gnr")->detect.line, spr->detect.line); /* inherited with `like` */
}

/* Slots stand for other metrics (the component plans qualified variants
 * in slots): only a slot that really is the rule's METRIC may be reduced. */
static void test_slot_metric(void **state)
{
	struct pflops_pmu synth = *pmu("spr");
	/* slot 1 holds FP_OPS, slot 0 holds HP_OPS's definition */
	synth.metrics[1] = synth.metrics[PFLOPS_FP_OPS];
	synth.metrics[0] = synth.metrics[PFLOPS_HP_OPS];
	const int as_fp[PFLOPS_NMETRIC] = { PFLOPS_HP_OPS, PFLOPS_FP_OPS, 2, 3, 4, 5, 6 };
	struct pflops_plan plan;
	assert_int_equal(pflops_plan_fit(&plan, &synth, 1u << 1, 0, 8, as_fp, NULL), 0);
	assert_int_equal(plan.reduced, 1u << 1);
	assert_int_equal(plan.cost, 6);
	/* the HP_OPS slot alone: its terms are all FP16, never reduced */
	assert_int_equal(pflops_plan_fit(&plan, &synth, 1u << 0, 0, 4, as_fp, NULL), 0);
	assert_int_equal(plan.reduced, 0);
	assert_int_equal(plan.cost, 5);
	/* a slot that is DP_OPS with FP_OPS's terms: not the rule's metric */
	const int as_dp[PFLOPS_NMETRIC] = { PFLOPS_HP_OPS, PFLOPS_DP_OPS, 2, 3, 4, 5, 6 };
	assert_int_equal(pflops_plan_fit(&plan, &synth, 1u << 1, 0, 8, as_dp, NULL), 0);
	assert_int_equal(plan.reduced, 0);
}

/* A bad `detect` or `cycles` line stops the table with file:line. */
static void test_detect_errors(void **state)
{
	static const char head[] = "pmu t\n"
				   "  match intel 6 0x01\n"
				   "  counters 4\n"
				   "  event A  FP_ARITH_INST_RETIRED:SCALAR_DOUBLE\n"
				   "  event B  FP_ARITH_INST_RETIRED:SCALAR_SINGLE\n"
				   "  event C  FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE\n"
				   "  metric FP_OPS exact = A + B + 2*C\n"
				   "  metric DP_OPS exact = A + 2*C\n"
				   "  metric SP_OPS exact = B\n"
				   "  metric HP_OPS unavailable\n"
				   "  metric BF16_OPS unavailable\n"
				   "  metric VEC_DP unavailable\n"
				   "  metric VEC_SP unavailable\n"
				   "  caveat HP_OPS,BF16_OPS,VEC_DP,VEC_SP none here\n";
	static const struct {
		const char *line, *says;
	} b[] = {
		{ "  detect FP_OPS SP_OPS NOPE UNWEIGHTED_X\n", "detect: unknown event alias 'NOPE'" },
		{ "  detect FP_OPS FP_OPS C UNWEIGHTED_X\n", "must name two different metrics" },
		{ "  detect FP_OPS HP_OPS C UNWEIGHTED_X\n", "both metrics must be available" },
		{ "  detect FP_OPS SP_OPS C unweighted\n", "use capitals, digits and '_'" },
		{ "  detect FP_OPS SP_OPS C DP_OPS\n", "bad status name 'DP_OPS'" },
		{ "  detect FP_OPS SP_OPS\n", "usage: detect METRIC PART EVENT STATUS" },
		{ "  cycles sometimes\n", "usage: cycles fixed|general" },
	};
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		char text[2048];
		snprintf(text, sizeof(text), "%s%s", head, b[i].line);
		struct pflops_table t = { 0 };
		struct pflops_error err = { 0 };
		int rc = pflops_table_parse(&t, text, "t.pft", &err);
		pflops_table_free(&t);
		if (!rc)
			fail_msg("accepted: %s", b[i].line);
		if (strncmp(err.msg, "t.pft:15: ", 10) || !strstr(err.msg, b[i].says))
			fail_msg("%s: got \"%s\", expected \"t.pft:15: ...%s\"", b[i].line, err.msg, b[i].says);
	}
	/* PART must be a piece of METRIC: C weighs 2 in FP_OPS, 3 in DP_OPS */
	char text[2048];
	snprintf(text, sizeof(text), "%s", head);
	char *dp = strstr(text, "A + 2*C\n");
	dp[4] = '3';
	strcat(text, "  detect FP_OPS DP_OPS C UNWEIGHTED_DP\n");
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	assert_int_not_equal(pflops_table_parse(&t, text, "t.pft", &err), 0);
	pflops_table_free(&t);
	if (!strstr(err.msg, "t.pft:15: pmu t: detect: event A weighs differently") &&
	    !strstr(err.msg, "t.pft:15: pmu t: detect: event C weighs differently"))
		fail_msg("got \"%s\"", err.msg);
	/* and the good form parses */
	snprintf(text, sizeof(text), "%s  detect FP_OPS SP_OPS C UNWEIGHTED_SP\n  cycles general\n", head);
	assert_int_equal(pflops_table_parse(&t, text, "t.pft", &err), 0);
	assert_int_equal(t.pmus[0].detect.line, 15);
	assert_string_equal(t.pmus[0].detect.status, "UNWEIGHTED_SP");
	assert_int_equal(t.pmus[0].cycles_general, 1);
	pflops_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_spr_fp_ops_in_8),
		cmocka_unit_test(test_slot_metric),
		cmocka_unit_test(test_detect_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
