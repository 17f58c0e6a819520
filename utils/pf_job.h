/* papi_flops_report: the per-rank reports of an MPI job (papi_flops_run
 * --json, one file per rank: -o r.%r.json) read back, checked against
 * each other and merged into the job's report.
 *   utils/pf_job_read.c   one report file -> struct pf_rankrep
 *   utils/pf_job.c        the reports -> struct pf_job (totals, spread, functions)
 *   utils/pf_job_write.c  struct pf_job as text, JSON or CSV */
#ifndef PF_JOB_H
#define PF_JOB_H
#include <stdio.h>
#include "papi_flops.h"
#include "pf_report.h"

#define PF_JOB_FILE_MAX (64u << 20) /* a report larger than this is no report */
#define PF_JOB_MISSING_LIST 1000    /* missing ranks named, at most */

struct pf_jfunc {
	char *name, *object; /* object NULL: anonymous memory */
	int has_symbol;	     /* 0: a group of code no symbol covers */
	double v[PFLOPS_NMETRIC];
};

/* One rank's report. */
struct pf_rankrep {
	char *file;
	int rank, size; /* size -1: unknown */
	char *host, *launcher, *source, *pmu, *source_detail, *program;
	int partial;
	char why[64]; /* partial: "killed by SIGSEGV", "interrupted by SIGTERM" */
	double wall;  /* 0: none */
	int wall_native;
	double started, ended; /* seconds since 1970; 0: none */
	unsigned metrics;      /* metrics with a value */
	unsigned unavailable;  /* asked for, without a value */
	double v[PFLOPS_NMETRIC];
	int klass[PFLOPS_NMETRIC]; /* enum pflops_class; -1: not given */
	char **caveats;		   /* the caveats and notes */
	size_t ncaveats;
	/* --by-function: the listed rows and the rest summed */
	unsigned fmetrics; /* 0: no by_function data */
	char *fvalues;	   /* "exact" or "model" */
	struct pf_jfunc *funcs;
	size_t nfuncs;
	double frest[PFLOPS_NMETRIC];
	size_t frest_count; /* functions summed in frest */
};

/* Read one report.  0, or a negative PFLOPS_E* with err naming path. */
int pf_rankrep_load(const char *path, struct pf_rankrep *r, struct pflops_error *err);
/* The same from text already in memory (the fuzz harness); name for errors. */
int pf_rankrep_parse(const char *text, size_t len, const char *name, struct pf_rankrep *r, struct pflops_error *err);
void pf_rankrep_free(struct pf_rankrep *r);

/* One metric over the ranks. */
struct pf_jstat {
	double total, mean, median, min, max;
	int min_rank, max_rank; /* the lowest rank holding it */
	double imbalance;	/* max / mean; 0 when the mean is 0 */
};

/* A caveat or note and how many ranks gave it. */
struct pf_jnote {
	const char *text;
	size_t ranks;
};

struct pf_job {
	const struct pf_rankrep *r; /* the reports, sorted by rank */
	size_t n;
	int size;	 /* the ranks the launcher started; -1: unknown */
	size_t nmissing; /* ranks below size without a report (size unknown:
				 * the gaps below the highest rank) */
	int *missing;	 /* the first nlisted of them */
	size_t nlisted;
	size_t npartial;
	size_t nhosts;
	unsigned metrics, unavailable;
	struct pf_jstat st[PFLOPS_NMETRIC];
	int klass[PFLOPS_NMETRIC]; /* -1: the ranks disagree */
	double wall;		   /* the job's wall time, s; 0: unknown */
	double started, ended;	   /* wall from these (0: from the longest rank's wall) */
	int wall_native;	   /* every rank's wall is a native run's: GFLOP/s */
	/* the functions summed by name and file over the ranks with data */
	unsigned fmetrics;
	int fkey;
	const char *fvalues;
	size_t franks;		/* ranks with by_function data */
	struct pf_jfunc *funcs; /* sorted by fkey, most first */
	size_t nfuncs;
	double frest[PFLOPS_NMETRIC]; /* the ranks' unlisted functions */
	size_t frest_count;
	struct pf_jnote *notes;
	size_t nnotes;
	size_t nempty; /* empty files left out (set by the caller) */
};

/* Merge n reports (reordered by rank).  0, or PFLOPS_EINVAL naming the
 * files that do not belong to one job of one source, PMU and metric set. */
int pf_job_merge(struct pf_rankrep *r, size_t n, struct pf_job *job, struct pflops_error *err);
void pf_job_free(struct pf_job *job);

void pf_job_write(FILE *o, const struct pf_job *job, enum pf_format f, char sep);
#endif
