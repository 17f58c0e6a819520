/*
 * The built-in presets table for a cmocka test program: T, loaded by the
 * group setup, and pmu(NAME), failing the test when the table lacks it.
 * Include after <cmocka.h>.
 */
#ifndef PF_TEST_BUILTIN_TABLE_H
#define PF_TEST_BUILTIN_TABLE_H
#include <stdio.h>
#include "papi_flops.h"

static struct pflops_table T;

static int setup(void **state)
{
	struct pflops_error err = { 0 };
	if (pflops_table_builtin(&T, &err)) {
		fprintf(stderr, "builtin table: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	pflops_table_free(&T);
	return 0;
}

static const struct pflops_pmu *pmu(const char *name)
{
	const struct pflops_pmu *p = pflops_table_find(&T, name);
	if (!p)
		fail_msg("pmu %s missing from the table", name);
	return p;
}
#endif
