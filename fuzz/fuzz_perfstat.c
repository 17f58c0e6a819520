/*
 * Fuzz the perf-stat reader (components/flops/core/perfstat.c) on two
 * PMUs: skx (cpu/, raw and symbolic names) and adl_glc (hybrid
 * cpu_core/).  Input: a `perf stat -x,` file.
 * Invariants: a refused file is named in the message; an accepted metric
 * is a finite number, not negative when its weights are not, its running
 * share within 0..100, its whole count (where there is one) the value;
 * a duration within 0..10 years, from a line.
 */
#include "fuzz.h"
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>
#include "papi_flops.h"

static struct pflops_table T;
static const struct pflops_pmu *P[2];
static int fd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct pflops_error err = { 0 };
	if (pflops_table_builtin(&T, &err))
		FUZZ_CHECK(0, "builtin table: %s", err.msg);
	P[0] = pflops_table_find(&T, "skx");
	P[1] = pflops_table_find(&T, "adl_glc");
	FUZZ_CHECK(P[0] && P[1], "skx and adl_glc are in the table");
	fd = memfd_create("perfstat", 0); /* the reader takes a path */
	FUZZ_CHECK(fd >= 0, "memfd_create");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	FUZZ_CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size, "write input");
	for (int k = 0; k < 2; k++)
		for (int m = 0; m < PFLOPS_NMETRIC; m++) {
			if (P[k]->metrics[m].klass == PFLOPS_UNAVAILABLE)
				continue;
			struct pflops_perfstat out;
			struct pflops_error err = { 0 };
			int rc = pflops_perfstat_read(path, P[k], 1u << m, 0, &out, &err);
			if (rc) {
				FUZZ_CHECK(strstr(err.msg, path) || rc == PFLOPS_ENOMEM, "rc %d: '%s'", rc, err.msg);
				continue;
			}
			FUZZ_CHECK(out.metrics == 1u << m && isfinite(out.value[m]), "%s: %g", pflops_metric_name(m),
				   out.value[m]);
			/* counts are never negative, so neither is a sum with positive weights */
			int positive = 1;
			for (int i = 0; i < P[k]->metrics[m].nterms; i++)
				positive &= P[k]->metrics[m].terms[i].w0 >= 0 && P[k]->metrics[m].terms[i].wvl >= 0;
			FUZZ_CHECK(!positive || out.value[m] >= 0, "%s: %g", pflops_metric_name(m), out.value[m]);
			FUZZ_CHECK(out.min_pct >= 0 && out.min_pct <= 100, "running share %g", out.min_pct);
			FUZZ_CHECK(out.lines >= 1, "lines %d", out.lines);
			/* a whole count is the value, not rounded away from it */
			FUZZ_CHECK(!(out.metrics_whole >> m & 1) || (double)out.whole[m] == out.value[m],
				   "%s: %llu vs %g", pflops_metric_name(m), (unsigned long long)out.whole[m],
				   out.value[m]);
			FUZZ_CHECK(out.seconds >= 0 && out.seconds <= 10 * 365.25 * 86400 &&
					   (out.seconds == 0 || out.seconds_line > 0),
				   "duration %g s, line %d", out.seconds, out.seconds_line);
		}
	return 0;
}
