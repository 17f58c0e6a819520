/*
 * test_model.c: PMU models on a hand-built instruction mix.  Every
 * expected number is derived by hand in the comment next to it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "pflops_trace.h"

static struct pflops_mix mix;

static void set(int p, int w, int o, uint64_t insts, uint64_t full, uint64_t active, uint64_t masked)
{
	mix.insts[p][w][o] = insts;
	mix.lanes_full[p][w][o] = full;
	mix.lanes_active[p][w][o] = active;
	mix.masked[p][w][o] = masked;
}

/*
 * The mix:
 *   dp scalar add   10 insts, 10 lanes
 *   dp scalar fma    5 insts,  5 lanes
 *   dp 512 fma       3 insts, masked: 24 lanes full, 12 active
 *   sp 256 mul       4 insts, 32 lanes
 *   sp 256 add       2 insts, 16 lanes
 *   sp 128 dpp       3 insts, 12 lanes (dpps: one per element, as SDE)
 *   hp scalar cmplx  7 insts, 14 lanes (2 FP16 per complex number)
 *   hp scalar add    1 inst,   1 lane
 *   bf16 512 fma     2 insts, 64 lanes
 *   x87 scalar mul   6 insts,  6 lanes
 *   extra: vinsertf128 9, 256_nonfp 11
 */
static int setup(void **state)
{
	(void)state;
	memset(&mix, 0, sizeof mix);
	set(PFLOPS_DP, PFLOPS_SCALAR, PFLOPS_OP_ADD, 10, 10, 10, 0);
	set(PFLOPS_DP, PFLOPS_SCALAR, PFLOPS_OP_FMA, 5, 5, 5, 0);
	set(PFLOPS_DP, PFLOPS_W512, PFLOPS_OP_FMA, 3, 24, 12, 3);
	set(PFLOPS_SP, PFLOPS_W256, PFLOPS_OP_MUL, 4, 32, 32, 0);
	set(PFLOPS_SP, PFLOPS_W256, PFLOPS_OP_ADD, 2, 16, 16, 0);
	set(PFLOPS_SP, PFLOPS_W128, PFLOPS_OP_DPP, 3, 12, 12, 0);
	set(PFLOPS_HP, PFLOPS_SCALAR, PFLOPS_OP_CMPLX, 7, 14, 14, 0);
	set(PFLOPS_HP, PFLOPS_SCALAR, PFLOPS_OP_ADD, 1, 1, 1, 0);
	set(PFLOPS_BF16, PFLOPS_W512, PFLOPS_OP_FMA, 2, 64, 64, 0);
	set(PFLOPS_X87, PFLOPS_SCALAR, PFLOPS_OP_MUL, 6, 6, 6, 0);
	mix.extra[PFLOPS_X_VINSERTF128] = 9;
	mix.extra[PFLOPS_X_256_NONFP] = 11;
	return 0;
}

static double eval(const char *spec)
{
	struct pflops_error err = { 0 };
	double c = -1;
	int rc = pfc_model_eval(spec, &mix, &c, &err);

	if (rc)
		print_error("%s: %s\n", spec, err.msg);
	assert_int_equal(rc, 0);
	return c;
}

static void test_inst_models(void **state)
{
	(void)state;
	/* FP_ARITH SCALAR_DOUBLE: 10 adds + 5 FMAs counted twice = 20 */
	assert_true(eval("inst prec=dp width=scalar fma=2") == 20);
	/* 512-bit double: 3 FMAs x 2 = 6 (masked or not: instructions) */
	assert_true(eval("inst prec=dp width=512 fma=2") == 6);
	/* SPR COMPLEX_SCALAR_HALF: the 7 complex instructions only */
	assert_true(eval("inst prec=hp width=scalar ops=cmplx") == 7);
	/* Haswell AVX_INSTS.CALC: sp/dp 256-bit 4 + 2, FMA once, + 9 vinsertf128 = 15 */
	assert_true(eval("inst prec=sp,dp width=256 fma=1 plus=vinsertf128") == 15);
	/* SNB FP_COMP_OPS_EXE:X87 = 6 */
	assert_true(eval("inst prec=x87") == 6);
	/* FP_ARITH 128B_PACKED_SINGLE: Intel's event list says "DPP and
	 * FM(N)ADD/SUB instructions count twice" (perfmon SKX/ICX/SPR
	 * *_core.json): 3 dpps x 2 = 6; an event that counts instructions
	 * once (E-core FP_INST_RETIRED) reads 3 */
	assert_true(eval("inst prec=sp width=128 fma=2 dpp=2") == 6);
	assert_true(eval("inst prec=sp width=128") == 3);
	/* everything, FMA and DPP once: 10+5+3+4+2+3+7+1+2+6 = 43 */
	assert_true(eval("inst") == 43);
	/* order of keys is free; sp: 4+2+3 = 9, plus 9 + 11 = 29 */
	assert_true(eval("inst plus=256_nonfp,vinsertf128 prec=sp") == 29);
	/* extra whitespace is fine */
	assert_true(eval("  inst\tprec=x87  ") == 6);
}

static void test_flops_models(void **state)
{
	(void)state;
	/* Zen RETIRED_SSE_AVX_FLOPS:ANY, all lanes: dp 10 + 5*2 + 24*2 = 68,
	 * sp 32 + 16 + 12 = 60, hp 14 + 1 = 15, bf16 64*2 = 128: 271 (no x87) */
	assert_true(eval("flops prec=hp,bf16,sp,dp width=scalar,128,256,512") == 271);
	/* dp, all lanes: 68; active lanes: 10 + 10 + 12*2 = 44 */
	assert_true(eval("flops prec=dp") == 68);
	assert_true(eval("flops_active prec=dp") == 44);
	/* Zen DP_MULT_ADD_FLOPS: FMA lanes x 2: 5*2 + 24*2 = 58 */
	assert_true(eval("flops prec=dp ops=fma") == 58);
	/* fma=1 overrides 2 FLOPs per FMA lane: 5 + 24 = 29 */
	assert_true(eval("flops prec=dp ops=fma fma=1") == 29);
	/* sp mul and dpp: 32 + 12 lanes x 1; dpp=2 doubles the DPP lanes: 56 */
	assert_true(eval("flops prec=sp ops=mul,dpp") == 44);
	assert_true(eval("flops prec=sp ops=mul,dpp dpp=2") == 56);
}

static void test_mix_flops(void **state)
{
	(void)state;
	/* active lanes x FLOPs: dp 44, sp 60, hp 15, bf16 128, x87 6 = 253 */
	assert_int_equal(pflops_mix_flops(&mix, -1), 253);
	assert_int_equal(pflops_mix_flops(&mix, PFLOPS_DP), 44);
	assert_int_equal(pflops_mix_flops(&mix, PFLOPS_HP), 15);
	assert_int_equal(pflops_op_flops(PFLOPS_OP_FMA), 2);
	assert_int_equal(pflops_op_flops(PFLOPS_OP_CMPLX), 1);
	assert_int_equal(pflops_op_flops(PFLOPS_OP_DIV), 1);
	assert_string_equal(pflops_prec_name(PFLOPS_BF16), "bf16");
	assert_string_equal(pflops_width_name(PFLOPS_W512), "512");
	assert_string_equal(pflops_op_name(PFLOPS_OP_MINMAX), "minmax");
}

static void bad(const char *spec, int code, const char *token)
{
	struct pflops_error err = { 0 };
	double c = 0;

	assert_int_equal(pfc_model_eval(spec, &mix, &c, &err), code);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, token))
		print_error("message '%s' lacks '%s'\n", err.msg, token);
	assert_non_null(strstr(err.msg, token));
}

static void test_errors(void **state)
{
	(void)state;
	bad("insts prec=dp", PFLOPS_EINVAL, "'insts'");
	bad("inst prec=qp", PFLOPS_EINVAL, "'qp'");
	bad("inst prec=dp,fp32 width=scalar", PFLOPS_EINVAL, "'fp32'");
	bad("inst width=1024", PFLOPS_EINVAL, "'1024'");
	bad("inst ops=add,", PFLOPS_EINVAL, "unknown value");
	bad("inst fma=x", PFLOPS_EINVAL, "'fma=x'");
	bad("inst fma=", PFLOPS_EINVAL, "'fma='");
	bad("inst dpp=-1", PFLOPS_EINVAL, "'dpp=-1'");
	bad("inst colour=red", PFLOPS_EINVAL, "'colour=red'");
	bad("inst prec", PFLOPS_EINVAL, "'prec'");
	bad("inst plus=vinsertf64", PFLOPS_EINVAL, "'vinsertf64'");
	bad("", PFLOPS_EINVAL, "empty model");
	bad("none", PFLOPS_EUNAVAIL, "cannot be modelled");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_inst_models, setup),
		cmocka_unit_test_setup(test_flops_models, setup),
		cmocka_unit_test_setup(test_mix_flops, setup),
		cmocka_unit_test_setup(test_errors, setup),
	};
	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
