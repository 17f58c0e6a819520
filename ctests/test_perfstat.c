/* The perf-stat source on hand-written `perf stat -x,` files. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>
#include "papi_flops.h"
#include "odd_files.h"

#define F "ctests/fixtures/perfstat/"
static struct pflops_table T;

static int setup(void **state)
{
	return pflops_table_builtin(&T, NULL);
}

static int teardown(void **state)
{
	pflops_table_free(&T);
	return 0;
}

#define M(x) (1u << PFLOPS_##x)

static void read_ok(const char *file, const char *pmu, unsigned metrics, struct pflops_perfstat *out)
{
	struct pflops_error err = { 0 };
	const struct pflops_pmu *p = pflops_table_find(&T, pmu);
	assert_non_null(p);
	if (pflops_perfstat_read(file, p, metrics, 0, out, &err))
		fail_msg("%s: %s", file, err.msg);
}

static void read_fails(const char *file, const char *pmu, unsigned metrics, const char *says)
{
	struct pflops_error err = { 0 };
	struct pflops_perfstat out;
	int rc = pflops_perfstat_read(file, pflops_table_find(&T, pmu), metrics, 0, &out, &err);
	if (rc == 0)
		fail_msg("%s accepted", file);
	if (!strstr(err.msg, says))
		fail_msg("%s: \"%s\" does not say \"%s\"", file, err.msg, says);
}

/* text written to a file of its own, then read_fails */
static void text_fails(const char *text, const char *pmu, const char *says)
{
	char path[] = "/tmp/pflops_psXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	read_fails(path, pmu, M(FP_OPS), says);
	unlink(path);
}

/* Seed 001: 39,195,349,051 packed-single uops x 4 = the "160 billion" SP ops.
 * Its r530110 (FP_COMP_OPS_EXE.X87, 32693) is read but in no formula:
 * Intel's SNB event list says it also counts integer MUL/DIV. */
static void test_seed001(void **state)
{
	struct pflops_perfstat r;
	read_ok(F "snb_full.csv", "snb", M(FP_OPS) | M(DP_OPS) | M(SP_OPS), &r);
	assert_true(r.value[PFLOPS_SP_OPS] == 156781396204.0); /* 4 * 39195349051 */
	assert_true(r.value[PFLOPS_DP_OPS] == 17.0);
	assert_true(r.value[PFLOPS_FP_OPS] == 156781396204.0 + 17); /* x87's 32693 left out */
	assert_int_equal(r.lines, 7);
	assert_true(r.min_pct < 80.0 && r.min_pct > 79.9); /* perf multiplexed: flagged */
	/* DP_OPS and SP_OPS also need SIMD_FP_256 (256-bit AVX), which the
	 * seed did not record: refused, naming the code to add */
	read_fails(F "snb_seed001.csv", "snb", M(SP_OPS), "needs SIMD_FP_256:PACKED_SINGLE (r530111)");
	read_fails(F "snb_seed001.csv", "snb", M(DP_OPS), "needs SIMD_FP_256:PACKED_DOUBLE (r530211)");
}

/* skx, 1..8 per umask: FP_OPS 277, DP_OPS 83, SP_OPS 194 (test_table.c) */
static void test_symbolic_umask_by_umask(void **state)
{
	struct pflops_perfstat r;
	read_ok(F "skx_symbolic.csv", "skx", M(FP_OPS) | M(DP_OPS) | M(SP_OPS) | M(VEC_DP), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 277);
	assert_true(r.value[PFLOPS_DP_OPS] == 83);
	assert_true(r.value[PFLOPS_SP_OPS] == 194);
	assert_true(r.value[PFLOPS_VEC_DP] == 3 + 5 + 7);
	assert_int_equal(r.lines, 9);
}

/* the merged codes papi_flops_avail --perf prints, in three spellings:
 * 3 + 2*3 + 4*9 + 8*13 + 16*8 = 277 */
static void test_merged_codes(void **state)
{
	struct pflops_perfstat r;
	read_ok(F "skx_merged.csv", "skx", M(FP_OPS), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 277);
	assert_true(r.min_pct == 60.0);
	/* DP_OPS needs SCALAR_DOUBLE alone: the merged 0x03 cannot give it */
	read_fails(F "skx_merged.csv", "skx", M(DP_OPS), "needs FP_ARITH_INST_RETIRED:SCALAR_DOUBLE");
}

/* P-core lines counted, the E-core line (another PMU) ignored: 3 + 6 + 36 + 48 */
static void test_hybrid(void **state)
{
	struct pflops_perfstat r;
	read_ok(F "adl_hybrid.csv", "adl_glc", M(FP_OPS), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 93);
	assert_int_equal(r.lines, 4);
}

/* Arrow Lake-H: P-core, E-core and low-power E-core lines in one file,
 * each block reads only its own PMU (cpu_core, cpu_atom, cpu_lowpower) */
static void test_three_pmus(void **state)
{
	struct pflops_perfstat r;
	read_ok(F "arl_h_three_pmus.csv", "lnc", M(FP_OPS), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 3 + 2 * 3 + 4 * 9 + 8 * 6);
	assert_int_equal(r.lines, 4);
	read_ok(F "arl_h_three_pmus.csv", "skt", M(FP_OPS), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 500);
	assert_int_equal(r.lines, 1);
	read_ok(F "arl_h_three_pmus.csv", "cmt_lp", M(FP_OPS), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 70);
	assert_true(r.min_pct == 50.0);
	assert_int_equal(r.lines, 1);
}

/* Arm PMU names as the kernel's arm_pmuv3.c registers them from a device
 * tree (armv8_neoverse_v1, armv8_neoverse_v2, armv9_neoverse_n2),
 * armv8_pmuv3_0 (ACPI), bare raw codes.  V2/N2 have 128-bit SVE:
 * FP_OPS = 100 * 128/128 + 7; V1 256-bit: 100 * 2 + 7 */
static void test_arm_names(void **state)
{
	struct pflops_perfstat r;
	read_ok(F "arm_v2_devicetree.csv", "arm_v2", M(FP_OPS), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 107);
	read_ok(F "arm_n2_acpi_raw.csv", "arm_n2", M(FP_OPS), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 107);
	read_ok(F "arm_n2_devicetree.csv", "arm_n2", M(FP_OPS), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 107);
	read_ok(F "arm_v1_devicetree.csv", "arm_v1", M(FP_OPS), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 207);
	/* an x86 block does not take an Arm PMU's lines */
	read_fails(F "arm_v2_devicetree.csv", "skx", M(FP_OPS), "no counter lines for skx");
}

/* icx VEC_DP / VEC_SP recorded as the one OR-ed code each */
static void test_or_ed_codes(void **state)
{
	struct pflops_perfstat r;
	read_ok(F "icx_vec.csv", "icx", M(VEC_DP) | M(VEC_SP), &r);
	assert_true(r.value[PFLOPS_VEC_DP] == 15);
	assert_true(r.value[PFLOPS_VEC_SP] == 18);
}

static void test_amd(void **state)
{
	struct pflops_perfstat r;
	read_ok(F "zen4.csv", "zen4", M(FP_OPS) | M(BF16_OPS), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 123456789);
	assert_true(r.value[PFLOPS_BF16_OPS] == 1000);
}

static void test_bad_files(void **state)
{
	read_fails(F "not_counted.csv", "skx", M(FP_OPS), "not_counted.csv:1: r5303c7 was not counted");
	read_fails(F "malformed.csv", "skx", M(FP_OPS), "malformed.csv:2: not 'perf stat -x,' output");
	read_fails(F "foreign.csv", "skx", M(DP_OPS), "needs FP_ARITH_INST_RETIRED:SCALAR_DOUBLE");
	read_fails(F "nonexistent.csv", "skx", M(DP_OPS), "nonexistent.csv: cannot open");
	read_fails(F "zen4.csv", "zen4", M(DP_OPS), "DP_OPS is not available");
}

/* Lines of any length: a 3200-character comment is one line, and the
 * tail of a comment past 1023 bytes is never read as a count (it says
 * 99999 for the counter whose real count is 13). */
static void test_long_lines(void **state)
{
	struct pflops_perfstat r;
	read_ok(F "long_comment.csv", "skx", M(FP_OPS), &r);
	assert_true(r.value[PFLOPS_FP_OPS] == 277);
	assert_int_equal(r.lines, 5);
	read_fails(F "long_comment_bad.csv", "skx", M(FP_OPS), "long_comment_bad.csv:8: not 'perf stat -x,' output");
}

/* A count is a whole number from 0 to 2^64-1; a running share 0..100.
 * Each is refused with file:line, never printed as FP_OPS: nan. */
static void test_bad_values(void **state)
{
	static const char *const bad[][2] = {
		{ F "bad_nan.csv", "bad_nan.csv:3: bad count 'nan' for r5303c7; a count is a whole number" },
		{ F "bad_inf.csv", "bad_inf.csv:3: bad count 'inf'" },
		{ F "bad_huge.csv", "bad_huge.csv:3: bad count '1e400'" },
		{ F "bad_negative.csv", "bad_negative.csv:3: bad count '-3'" },
		{ F "bad_fraction.csv", "bad_fraction.csv:3: bad count '3.5'" },
		{ F "bad_share.csv",
		  "bad_share.csv:3: bad running share '-80.00' for r5303c7; the fifth field is a percentage" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		read_fails(bad[i][0], "skx", M(FP_OPS), bad[i][1]);
	/* the largest count perf prints is fine, one more is not */
	text_fails("18446744073709551615,,r5303c7,1000,100.00,,\n18446744073709551616,,r5318c7,1000,100.00,,\n", "skx",
		   ":2: bad count '18446744073709551616'");
	/* another PMU's line is not used, and still not nan */
	text_fails("3,,cpu_core/config=0x5303c7/,1000,100.00,,\nnan,,cpu_atom/config=0x5303c7/,1000,100.00,,\n",
		   "adl_glc", ":2: bad count 'nan' for cpu_atom/config=0x5303c7/");
}

/* Issue 20: counts as written (perf prints whole numbers): 2^64-1 and
 * 2^53+1 whole, and summed without rounding where the weights are whole. */
static void test_exact_counts(void **state)
{
	struct pflops_perfstat r;
	read_ok(F "exact_u64.csv", "zen4", M(FP_OPS) | M(BF16_OPS), &r);
	assert_int_equal(r.metrics_whole, M(FP_OPS) | M(BF16_OPS));
	assert_true(r.whole[PFLOPS_FP_OPS] == UINT64_MAX);
	assert_true(r.whole[PFLOPS_BF16_OPS] == (1ULL << 53) + 1);
	read_ok(F "exact_sum.csv", "skx", M(DP_OPS), &r);
	assert_true(r.metrics_whole == M(DP_OPS) && r.whole[PFLOPS_DP_OPS] == (1ULL << 53) + 3);
	assert_true(r.value[PFLOPS_DP_OPS] == (double)((1ULL << 53) + 4)); /* the nearest double */
}

/* One event on two lines (its :u and :k), thousands separators (perf -x
 * never writes them), a duration no run has: refused with the lines. */
static void test_ambiguous_files(void **state)
{
	read_fails(F "bad_twice.csv", "skx", M(FP_OPS),
		   "bad_twice.csv:4: r5303c7:k is the event of line 2 (r5303c7:u) again");
	read_fails(
		F "bad_grouped.csv", "zen4", M(FP_OPS),
		"bad_grouped.csv:2: a count with thousands separators ('1,234...'); perf stat -x, never writes them");
	read_fails(F "bad_duration.csv", "skx", M(FP_OPS),
		   "bad_duration.csv:3: duration_time '1e308 ns' is no run's wall time");
	struct pflops_perfstat r;
	read_ok(F "snb_duration.csv", "snb", M(SP_OPS), &r);
	assert_true(r.seconds == 2.5 && r.seconds_line == 9);
	text_fails("277,,r5303c7,1000,100.00,,\n-5,ns,duration_time,1,100.00,,\n", "skx",
		   ":2: bad count '-5' for duration_time");
	text_fails("277,,r5303c7,1000,100.00,,\n5,ns,duration_time,1,100.00,,\n6,ns,duration_time,1,100.00,,\n", "skx",
		   ":3: a second duration_time (line 2 has one)");
	text_fails("277,,r5303c7,1000,100.00,,\n315576001000000000,ns,duration_time,1,100.00,,\n",
		   "skx", /* 10 years and 1 s */
		   ":2: duration_time '315576001000000000 ns' is no run's wall time");
	text_fails("277,,r5303c7,1000,100.00,,\n5,msec,duration_time,1,100.00,,\n", "skx",
		   ":2: duration_time '5 msec' is no run's wall time (perf writes it in ns");
}

/* What is opened is a regular file of at most 256 MiB; a FIFO nobody
 * writes returns at once. */
static void skx_fails(const char *path, const char *says)
{
	read_fails(path, "skx", M(FP_OPS), says);
}

static void test_file_kinds(void **state)
{
	odd_files_refused(skx_fails, "perf-stat files", 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed001),
		cmocka_unit_test(test_symbolic_umask_by_umask),
		cmocka_unit_test(test_merged_codes),
		cmocka_unit_test(test_hybrid),
		cmocka_unit_test(test_amd),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_three_pmus),
		cmocka_unit_test(test_arm_names),
		cmocka_unit_test(test_or_ed_codes),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_exact_counts),
		cmocka_unit_test(test_ambiguous_files),
		cmocka_unit_test(test_file_kinds),
	};
	return cmocka_run_group_tests_name("perfstat", tests, setup, teardown);
}
