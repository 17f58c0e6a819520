/*
 * calib_prog.h: where the calibration programs the trace tests run were
 * built ($B/ctests/trace, B from the environment as make check sets it).
 * calib_prog_init() once from main, then prog("calib_fp") for a path
 * (8 at a time may be in use: the buffers rotate).
 */
#ifndef CALIB_PROG_H
#define CALIB_PROG_H

#include <stdio.h>
#include <stdlib.h>

static char dir[1024];

static void calib_prog_init(void)
{
	const char *b = getenv("B");

	snprintf(dir, sizeof dir, "%s/ctests/trace", b && *b ? b : "build");
}

static const char *prog(const char *name)
{
	static char buf[8][1200];
	static int i;
	char *b = buf[i++ & 7];

	snprintf(b, sizeof buf[0], "%s/%s", dir, name);
	return b;
}

#endif
