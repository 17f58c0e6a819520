/*
 * Fuzz papi_flops_report's reading of a rank's report (utils/pf_job_read.c
 * over the JSON reader utils/pf_jread.c), then the merge and the three
 * output formats on what it accepts.  Input: a papi_flops_run --json report.
 * Invariants: a refused file is named in the message; an accepted report
 * has a rank below its size, counts that are finite and not negative, a
 * start not after its end; a job of that one report has the report's
 * values as total, min and max, and an imbalance of 1 (or 0 for 0); the
 * same report given twice is refused naming both.
 */
#include "fuzz.h"
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>
#include "pf_job.h"

static int fd = -1;
static char path[64];
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fd = memfd_create("report", 0); /* the reader takes a path */
	FUZZ_CHECK(fd >= 0, "memfd_create");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	devnull = fopen("/dev/null", "w");
	FUZZ_CHECK(devnull, "/dev/null");
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct pf_rankrep r[2];
	struct pflops_error err = { 0 };
	FUZZ_CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size, "write input");
	int rc = pf_rankrep_load(path, &r[0], &err);
	if (rc) {
		FUZZ_CHECK(strstr(err.msg, path) || rc == PFLOPS_ENOMEM, "rc %d: '%s'", rc, err.msg);
		return 0;
	}
	FUZZ_CHECK(r[0].rank >= 0 && (r[0].size < 0 || r[0].rank < r[0].size), "rank %d of %d", r[0].rank, r[0].size);
	FUZZ_CHECK(r[0].host && r[0].launcher && r[0].source && r[0].pmu, "strings");
	FUZZ_CHECK(r[0].started <= r[0].ended, "started %f ended %f", r[0].started, r[0].ended);
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		FUZZ_CHECK(!(r[0].metrics >> m & 1) || (isfinite(r[0].v[m]) && r[0].v[m] >= 0), "%s: %g",
			   pflops_metric_name(m), r[0].v[m]);
	for (size_t i = 0; i < r[0].nfuncs; i++)
		FUZZ_CHECK(r[0].funcs[i].name, "function %zu has a name", i);

	struct pf_job job;
	rc = pf_job_merge(r, 1, &job, &err);
	FUZZ_CHECK(rc == 0 || rc == PFLOPS_ENOMEM, "one report merges: %s", err.msg);
	if (!rc) {
		for (int m = 0; m < PFLOPS_NMETRIC; m++) {
			if (!(job.metrics >> m & 1))
				continue;
			const struct pf_jstat *s = &job.st[m];
			FUZZ_CHECK(s->total == r[0].v[m] && s->min == s->max && s->max == s->total &&
					   s->median == s->total,
				   "%s: one rank's stats", pflops_metric_name(m));
			FUZZ_CHECK(s->imbalance == (s->total > 0 ? 1.0 : 0.0), "%s: imbalance %g",
				   pflops_metric_name(m), s->imbalance);
		}
		pf_job_write(devnull, &job, PF_FORMAT_TEXT, ',');
		pf_job_write(devnull, &job, PF_FORMAT_JSON, ',');
		pf_job_write(devnull, &job, PF_FORMAT_CSV, ';');
		pf_job_free(&job);
	}
	/* the same report twice: one job cannot hold a rank twice */
	rc = pf_rankrep_load(path, &r[1], &err);
	FUZZ_CHECK(rc == 0 || rc == PFLOPS_ENOMEM, "a report read once reads twice: %s", err.msg);
	if (!rc) {
		rc = pf_job_merge(r, 2, &job, &err);
		FUZZ_CHECK(rc == PFLOPS_EINVAL && strstr(err.msg, "both hold rank"), "rc %d: '%s'", rc, err.msg);
		pf_rankrep_free(&r[1]);
	}
	pf_rankrep_free(&r[0]);
	return 0;
}
