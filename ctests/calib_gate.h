/*
 * calib_gate.h: may this test run a calibration kernel here?  The CPU
 * feature each calib_fp kernel needs is in ctests/trace/calib_list.h
 * (calib_fp --needs KERNEL answers);
 * PFLOPS_CPU_HIDE hides features to test what a smaller CPU does.
 * A kernel this CPU cannot run is a skip with its reason, never a failure.
 */
#ifndef CALIB_GATE_H
#define CALIB_GATE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "pflops_cpufeat.h"

/* 1 if FEATURE runs here; else print the SKIP line for TEST and return 0 */
static inline int calib_cpu_has(const char *test, const char *what, const char *feature)
{
	const char *hide = getenv(PFC_CPU_HIDE_ENV);

	if (pfc_cpu_has(feature, hide) == 1)
		return 1;
	printf("SKIP: %s%s%s: this CPU lacks %s%s\n", test, what ? ": " : "", what ? what : "", feature,
	       pfc_cpu_has(feature, NULL) == 1 ? " (hidden by " PFC_CPU_HIDE_ENV ")" : "");
	fflush(stdout);
	return 0;
}

/*
 * The same for a calib_fp kernel, asked of calib_fp itself (--needs): it
 * runs natively even where this test runs under valgrind, whose CPUID
 * hides AVX-512.  An unknown kernel runs, and fails.
 */
static inline int calib_runs(const char *test, const char *kernel)
{
	const char *b = getenv("B");
	char cmd[1400], why[256] = "";
	FILE *p;
	int rc;

	snprintf(cmd, sizeof cmd, "'%s/ctests/trace/calib_fp' --needs '%s' 2>&1", b && *b ? b : "build", kernel);
	p = popen(cmd, "r");
	if (!p)
		return 1;
	if (!fgets(why, sizeof why, p))
		why[0] = 0;
	rc = pclose(p);
	if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 77)
		return 1;
	/* "calib_fp: KERNEL: this CPU lacks FEATURE" */
	printf("SKIP: %s: %s", test, strncmp(why, "calib_fp: ", 10) ? why : why + 10);
	fflush(stdout);
	return 0;
}

#endif
