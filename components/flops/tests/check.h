/* One line per check for the component's PAPI test programs: "ok:   ..."
 * or "FAIL: ..." (counted in `failures`). */
#ifndef FLOPS_TESTS_CHECK_H
#define FLOPS_TESTS_CHECK_H
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                  \
	do {                              \
		if (cond) {               \
			printf("ok:   "); \
		} else {                  \
			printf("FAIL: "); \
			failures++;       \
		}                         \
		printf(__VA_ARGS__);      \
		printf("\n");             \
	} while (0)

#endif
