/* papi_flops_run's report: one result, three formats (text for people,
 * JSON and CSV for scripts), written wherever the caller says: stderr by
 * default, so that stdout stays the program's.
 *
 * Every format writes the same sections in the same order, one function
 * per section and format: the run (program, source, wall time), the
 * metrics (FLOP metrics, then the VEC_* instruction counts), breakdowns
 * of the FLOPs (by vector width, by function: --by-function), and
 * the caveats and notes.  A new breakdown is one more section function
 * per format. */
#ifndef PF_REPORT_H
#define PF_REPORT_H
#include <stdio.h>
#include "papi_flops.h"
#include "pf_mpi.h"
#include "pflops_trace.h"

#define PF_REPORT_NOTES 16
#define PF_REPORT_NOTE_LEN 320

/* Masked AVX-512 lanes corrected from sampled opmask registers
 * (--mask-sampling; docs/masked-lanes.md): per metric the estimate and
 * its 95% interval beside the full-lane value in v[], and what became of
 * the samples. */
struct pf_mask {
	unsigned period;    /* 0: no sampling */
	char method[200];   /* how the samples were taken */
	unsigned corrected; /* metrics with an estimate (bit mask) */
	double est[PFLOPS_NMETRIC], lo[PFLOPS_NMETRIC], hi[PFLOPS_NMETRIC];
	unsigned have_exact; /* model source: the trace's exact count too */
	double exact[PFLOPS_NMETRIC];
	uint64_t samples, used, masked, skid, nomask, unreadable, changed, known_full, lost;
};

/* FLOPs per function (--by-function; utils/pf_run_funcs.c). */
struct pf_func_row {
	char *name;   /* the function, or a group of code no symbol covers */
	char *object; /* its file; NULL: anonymous memory */
	int has_symbol;
	uint64_t addr;		  /* the symbol's address in the file (objdump's) */
	double v[PFLOPS_NMETRIC]; /* the FLOP metrics in pf_byfunc.metrics */
};

struct pf_byfunc {
	unsigned metrics;   /* FLOP metrics given per function (bit mask); 0: no table */
	int key;	    /* the metric rows are sorted by, and shares are of */
	const char *values; /* "exact", or "model" (the PMU's formulas over each function's mix) */
	size_t nfuncs;	    /* functions with a nonzero value */
	size_t nrows;	    /* of which listed (the most first) */
	struct pf_func_row *rows;
	double rest[PFLOPS_NMETRIC]; /* the nfuncs - nrows not listed, summed */
};

/* --region: FLOPs per thread in the function's windows (trace, model;
 * struct pft_region_thread). */
struct pf_region_threads {
	uint32_t n; /* 0: no region, or nothing counted */
	struct pft_region_thread t[PFT_REGION_THREADS];
	uint64_t more_threads, more_flops; /* threads not listed */
};

/* The trace engine's own figures (trace and model sources): why a run
 * was slow or fell back to the stopping path; JSON's "engine". */
struct pf_engine {
	int have;	   /* 0: no trace ran, no "engine" */
	double tracer_cpu; /* the tracer's CPU seconds (this process, user and
			    * system, over the run); < 0: unknown */
	struct pft_stats st;
};

struct pf_report {
	const char *program; /* argv[0]; NULL when no program ran (perf-stat) */
	int status;	     /* its wait status; -1: no program run */
	const char *source;  /* hw, trace, model, perf-stat */
	char source_detail[400];
	const struct pflops_pmu *pmu; /* whose formulas, classes and caveats apply; NULL: trace (exact) */
	double wall;		      /* seconds; 0: unknown */
	int wall_real;		      /* wall is a native run's: rates are meaningful (hw, perf-stat) */
	unsigned asked;		      /* metrics asked for (bit mask of enum pflops_metric) */
	unsigned got;		      /* of which measured */
	double v[PFLOPS_NMETRIC];
	uint64_t whole[PFLOPS_NMETRIC]; /* v[m] exactly, where wholes has bit m
					 * (perf-stat counts read as written) */
	unsigned wholes;
	double widths[PFLOPS_NWIDTH]; /* exact FLOPs by vector width (trace, model) */
	int have_widths;
	char notes[PF_REPORT_NOTES][PF_REPORT_NOTE_LEN]; /* about the whole run */
	int nnotes;
	struct pf_mask mask;
	struct pf_byfunc byfunc;
	struct pf_region_threads region;
	struct pf_engine engine;
	int interrupted;	  /* the signal that ended the run early (0: none):
				 * every count is partial */
	unsigned scaled;	  /* metrics extrapolated from multiplexed counters:
				 * shown as class estimate */
	unsigned full_lanes;	  /* metrics whose masked lanes counted in full
				 * (opmask unreadable): an exact class becomes
				 * masked-full */
	const struct pf_mpi *mpi; /* the MPI rank (docs/mpi.md); NULL or rank < 0:
					 * none, and no job section */
	/* --sample's profile (utils/pf_sample.h), written after the
	 * functions: text, and the value of JSON's "sample"; NULL: none
	 * (pointers, so that papi_flops_report links without it) */
	const void *sample;
	void (*sample_text)(FILE *o, const void *sample);
	void (*sample_json)(FILE *o, const void *sample);
	double started, ended; /* the run's start and end, seconds since 1970
				 * (UTC); 0: no program run.  papi_flops_report
				 * takes the job's wall time from them */
};

enum pf_format { PF_FORMAT_TEXT, PF_FORMAT_JSON, PF_FORMAT_CSV };

/* Add a note (printf-style); silently dropped past PF_REPORT_NOTES. */
void pf_report_note(struct pf_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The unit of a metric's count: "FLOP", or "instructions" for VEC_*. */
const char *pf_metric_unit(enum pflops_metric m);
/* bit mask of the FLOP metrics (not VEC_DP, VEC_SP) */
unsigned pf_flop_metrics(void);

/* Shared with papi_flops_report: a count rounded to an integer with
 * thousands separators ("1,234,567"); one CSV field, quoted (RFC 4180)
 * when it holds sep, a quote or a line break, then sep or a line end. */
const char *pf_grouped(double v, char *buf, size_t len);
/* a --by-function row's label: "name (file's base name)", or the name
 * alone for code no symbol covers (its name says the file) */
void pf_func_label(const char *name, const char *object, int has_symbol, char *buf, size_t len);
void pf_csv_field(FILE *o, const char *s, char sep, int last);

/* Write r to o.  sep: the CSV field separator (perf stat -x). */
void pf_report_write(FILE *o, const struct pf_report *r, enum pf_format f, char sep);
#endif
