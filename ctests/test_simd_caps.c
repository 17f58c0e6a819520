/*
 * test_simd_caps.c: whether this kernel samples the opmask registers.
 * The verdict for every answer a kernel can give, and the probe on this
 * machine, cross-checked by opening the same event without the fields.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "pflops_simd.h"

static void judge(int sw, int hw, enum pfc_simd_verdict want, const char *msg, const char *fix)
{
	struct pfc_simd_caps c;
	pfc_simd_judge(sw, hw, "6.18.0", &c);
	if (c.verdict != want || !strstr(c.msg, msg) || (fix && !strstr(c.fix, fix)))
		print_error("sw %d hw %d: verdict %d, msg '%s', fix '%s'\n", sw, hw, c.verdict, c.msg, c.fix);
	assert_int_equal(c.verdict, want);
	assert_non_null(strstr(c.msg, msg));
	if (fix)
		assert_non_null(strstr(c.fix, fix));
	else
		assert_string_equal(c.fix, "");
}

static void test_judge(void **state)
{
	(void)state;
	/* a kernel without the series: the software event tells */
	judge(E2BIG, -1, PFC_SIMD_OLD_KERNEL, "not supported by this kernel: Linux 6.18.0 refuses", "SIMD/eGPRs/SSP");
	/* with it: the software PMU lacks the capability, cycles decides */
	judge(EOPNOTSUPP, 0, PFC_SIMD_SUPPORTED, "supported: Linux 6.18.0 samples the opmask", NULL);
	judge(0, 0, PFC_SIMD_SUPPORTED, "supported", NULL);
	judge(EOPNOTSUPP, EOPNOTSUPP, PFC_SIMD_NO_PMU_CAP, "not supported on this CPU", "Sapphire Rapids");
	judge(EOPNOTSUPP, ENOENT, PFC_SIMD_NO_PMU, "no hardware PMU", "guest PMU");
	judge(EOPNOTSUPP, ENODEV, PFC_SIMD_NO_PMU, "no hardware PMU", "guest PMU");
	judge(EOPNOTSUPP, EACCES, PFC_SIMD_DENIED, "perf_event_paranoid", "perf_event_paranoid=2");
	judge(EOPNOTSUPP, EINVAL, PFC_SIMD_INVALID, "another revision", "v5 layout");
	judge(EOPNOTSUPP, EBUSY, PFC_SIMD_UNKNOWN, strerror(EBUSY), NULL);
	judge(0, -1, PFC_SIMD_UNKNOWN, "not tried", NULL);
	/* the software event refused for other reasons */
	judge(EACCES, -1, PFC_SIMD_DENIED, "forbids even a software", "CAP_PERFMON");
	judge(EPERM, -1, PFC_SIMD_DENIED, "forbids even a software", "CAP_PERFMON");
	judge(EINVAL, -1, PFC_SIMD_INVALID, "rejects the SIMD fields", "v5 layout");
	judge(EMFILE, -1, PFC_SIMD_UNKNOWN, strerror(EMFILE), NULL);
}

static int open_attr(struct pfc_perf_attr_simd *a)
{
	long fd = syscall(SYS_perf_event_open, &a->u.attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* The probe here: its verdict is the judge's of what the kernel said.
 * When it says E2BIG, the same event opens at the same size with the
 * SIMD fields zero and at the header's own size: the fields, and only
 * they, are what the kernel refuses. */
static void test_probe_here(void **state)
{
	(void)state;
	struct pfc_simd_caps c, j;
	pfc_simd_probe(&c);
	print_message("opmask sampling: %s (software event: %s, cycles: %s)\n", c.msg,
		      c.sw_errno ? strerror(c.sw_errno) : "opened",
		      c.hw_errno < 0 ? "not tried"
		      : c.hw_errno   ? strerror(c.hw_errno)
				     : "opened");
	pfc_simd_judge(c.sw_errno, c.hw_errno, NULL, &j);
	assert_int_equal(c.verdict, j.verdict);
	struct pfc_perf_attr_simd a;
	pfc_simd_attr(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1000003, 0);
	int plain = open_attr(&a);
	if (plain == EACCES || plain == EPERM) {
		assert_int_equal(c.verdict, PFC_SIMD_DENIED);
		skip();
	}
	assert_int_equal(plain, 0);
	a.u.attr.size = PFC_ATTR_SIZE_VER9; /* larger, zero tail: any kernel since 3.x takes it */
	assert_int_equal(open_attr(&a), 0);
	pfc_simd_attr(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1000003, 1);
	assert_int_equal(open_attr(&a), c.sw_errno);
	if (c.sw_errno == E2BIG) {
		assert_int_equal(c.verdict, PFC_SIMD_OLD_KERNEL);
		assert_int_equal(c.hw_errno, -1);
	}
	if (access("/sys/bus/event_source/devices/cpu", F_OK) && access("/sys/bus/event_source/devices/cpu_core", F_OK))
		assert_int_not_equal(c.verdict, PFC_SIMD_SUPPORTED); /* no PMU, nothing to sample */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_probe_here),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
