/*
 * papi_flops.h: the PAPI-independent core of papi-flops.
 *
 * Error convention (the one rule every function here follows):
 *   Functions that can fail return int: PFLOPS_OK (0) on success or a
 *   negative PFLOPS_E* code.  Most take a `struct pflops_error *err` as
 *   last argument; when it is non-NULL and the call fails, err->msg holds
 *   one sentence naming the cause and, where there is one, the fix
 *   ("preset.pft:12: unknown event alias 'SD2'; declare it with 'event'").
 *   pflops_strerror(code) gives the generic text for a code.
 *   Functions returning pointers return NULL on failure and fill err.
 */
#ifndef PAPI_FLOPS_H
#define PAPI_FLOPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	PFLOPS_OK = 0,
	PFLOPS_EINVAL = -1, /* bad argument or malformed input */
	PFLOPS_ENOMEM = -2,
	PFLOPS_ESYS = -3,     /* a system call failed (errno in the message) */
	PFLOPS_ENOENT = -4,   /* no such PMU, metric, event or file */
	PFLOPS_ENOCPU = -5,   /* unknown CPU: no formula for it */
	PFLOPS_EUNAVAIL = -6, /* the metric cannot be counted on this PMU */
	PFLOPS_EPERM = -7,    /* perf_event_paranoid or capabilities forbid */
	PFLOPS_ENOPMU = -8,   /* no hardware PMU exposed (e.g. a VM) */
	PFLOPS_ECNFLCT = -9,  /* more counters than the core has */
	PFLOPS_EENCODE = -10, /* libpfm4 cannot encode an event */
	PFLOPS_ECHILD = -11,  /* traced/run program failed to start */
};

#define PFLOPS_ERRMSG_MAX 512
struct pflops_error {
	int code;
	char msg[PFLOPS_ERRMSG_MAX];
};

const char *pflops_strerror(int code);

/* Interrupts (pflops_trace_opts.interrupt, struct pflops_child): the
 * caller's SIGINT/SIGTERM handler stores the signal number in a flag,
 * | PFLOPS_INTERRUPT_FORWARD when another process sent it (the program
 * did not get it too), | PFLOPS_INTERRUPT_NOW at a second signal. */
#define PFLOPS_INTERRUPT_FORWARD 0x100
#define PFLOPS_INTERRUPT_NOW 0x200
#define PFLOPS_INTERRUPT_GRACE_MS 2000 /* then the program is killed */

/* ---------------------------------------------------------------------
 * Instruction classes: what the tracer counts and what the per-PMU
 * models read.  One cell per (precision, width, operation).
 */
/* Precisions and widths, each once: X(ID, NAME, BITS) gives PFLOPS_ID,
 * the component's qualifier ID (DP_OPS:W512, FP_OPS:SP), NAME (the word of
 * the table's model lines and the reports: pflops_prec_name()) and BITS,
 * of an element or a register (0: x87, no packed form; scalar). */
#define PFLOPS_PRECS(X) X(X87, "x87", 0) X(HP, "hp", 16) X(BF16, "bf16", 16) X(SP, "sp", 32) X(DP, "dp", 64)
#define PFLOPS_WIDTHS(X) X(SCALAR, "scalar", 0) X(W128, "128", 128) X(W256, "256", 256) X(W512, "512", 512)
#define PFLOPS_ENUM_(id, ...) PFLOPS_##id,
enum pflops_prec { PFLOPS_PRECS(PFLOPS_ENUM_) PFLOPS_NPREC };
enum pflops_width { PFLOPS_WIDTHS(PFLOPS_ENUM_) PFLOPS_NWIDTH };
enum pflops_op {
	PFLOPS_OP_ADD, /* add, sub, addsub, hadd, hsub */
	PFLOPS_OP_MUL,
	PFLOPS_OP_DIV,
	PFLOPS_OP_SQRT,
	PFLOPS_OP_RCP, /* rcp, rsqrt (and their 14/28-bit forms) */
	PFLOPS_OP_FMA, /* fmadd, fmsub, fnmadd, fnmsub, fmaddsub ... */
	PFLOPS_OP_DPP, /* dpps, dppd */
	PFLOPS_OP_MINMAX,
	PFLOPS_OP_CMPLX, /* FP16 complex multiply (-add): vf[c]mulc*, vf[c]maddc* */
	PFLOPS_NOP
};

/* Extra instruction counts some PMU models need (not FLOPs). */
enum pflops_extra { PFLOPS_X_VINSERTF128, PFLOPS_X_256_NONFP, PFLOPS_NEXTRA };

struct pflops_mix {
	/* retired instructions per class */
	uint64_t insts[PFLOPS_NPREC][PFLOPS_NWIDTH][PFLOPS_NOP];
	/* of which executed under an AVX-512 opmask other than k0 */
	uint64_t masked[PFLOPS_NPREC][PFLOPS_NWIDTH][PFLOPS_NOP];
	/* elements operated on: all lanes of the width */
	uint64_t lanes_full[PFLOPS_NPREC][PFLOPS_NWIDTH][PFLOPS_NOP];
	/* elements operated on: active lanes only (mask applied) */
	uint64_t lanes_active[PFLOPS_NPREC][PFLOPS_NWIDTH][PFLOPS_NOP];
	uint64_t extra[PFLOPS_NEXTRA];
	uint64_t total_insts; /* all retired instructions traced */
};

/* FLOPs per element for an operation: FMA 2, complex FP16 see DESIGN. */
unsigned pflops_op_flops(enum pflops_op op);
/* Exact FLOPs of a mix (active lanes x FLOPs per element), optionally
 * restricted to one precision (prec < 0: all). */
uint64_t pflops_mix_flops(const struct pflops_mix *m, int prec);

const char *pflops_prec_name(enum pflops_prec p);
const char *pflops_width_name(enum pflops_width w);
const char *pflops_op_name(enum pflops_op o);

/* ---------------------------------------------------------------------
 * The presets table (the presets/ .pft files; format: presets/README.md).
 */

/* The metric registry: every metric once, in report order.  The enum,
 * the names (the tools' rows, JSON and CSV keys, flops:::NAME), the
 * component's events and description, the trace's values and the PAPI
 * preset rows all come from it; adding one: docs/adding-a-metric.md.
 *   X(NAME, UNIT, PREC, WIDTHS, SPARSE, PAPI, DESCRIPTION, PAPI_MEANING)
 * UNIT    FLOP (elements x FLOPs per element) or INSTS (instructions, an
 *         FMA counted twice as the PMUs do): pflops_metric_is_flop()
 * PREC    the precision counted (PFLOPS_DP ...), -1 for all of them
 * WIDTHS  the widths counted: bit mask of enum pflops_width
 * SPARSE  1: rare in code (a by-function column only where a run did any)
 * PAPI    the PAPI preset it stands for (NULL: none), with the meaning
 *         our preset's note gives it */
#define PFLOPS_WIDTHS_ALL ((1u << PFLOPS_NWIDTH) - 1)
#define PFLOPS_WIDTHS_PACKED (PFLOPS_WIDTHS_ALL & ~(1u << PFLOPS_SCALAR))
/* One row a line, kept by hand: */
/* clang-format off */
#define PFLOPS_METRICS(X) \
	X(FP_OPS, FLOP, -1, PFLOPS_WIDTHS_ALL, 0, "PAPI_FP_OPS", \
	  "Floating-point operations, all precisions", \
	  "FLOPs of every precision; a packed instruction counts its lanes") \
	X(DP_OPS, FLOP, PFLOPS_DP, PFLOPS_WIDTHS_ALL, 0, "PAPI_DP_OPS", \
	  "Double-precision floating-point operations", \
	  "double-precision FLOPs; a packed instruction counts its lanes") \
	X(SP_OPS, FLOP, PFLOPS_SP, PFLOPS_WIDTHS_ALL, 0, "PAPI_SP_OPS", \
	  "Single-precision floating-point operations", \
	  "single-precision FLOPs; a packed instruction counts its lanes") \
	X(HP_OPS, FLOP, PFLOPS_HP, PFLOPS_WIDTHS_ALL, 0, "PAPI_HP_OPS", \
	  "Half-precision (FP16) floating-point operations", \
	  "half-precision FLOPs; a packed instruction counts its lanes") \
	X(BF16_OPS, FLOP, PFLOPS_BF16, PFLOPS_WIDTHS_ALL, 1, NULL, \
	  "BFloat16 floating-point operations", NULL) \
	X(VEC_DP, INSTS, PFLOPS_DP, PFLOPS_WIDTHS_PACKED, 0, "PAPI_VEC_DP", \
	  "Packed double-precision instructions", \
	  "packed (SIMD) double-precision instructions only; one per instruction; scalar instructions are not counted") \
	X(VEC_SP, INSTS, PFLOPS_SP, PFLOPS_WIDTHS_PACKED, 0, "PAPI_VEC_SP", \
	  "Packed single-precision instructions", \
	  "packed (SIMD) single-precision instructions only; one per instruction; scalar instructions are not counted")
/* clang-format on */

enum pflops_metric { PFLOPS_METRICS(PFLOPS_ENUM_) PFLOPS_NMETRIC };
/* "FP_OPS DP_OPS ... VEC_SP" and "FP_OPS,DP_OPS,...,VEC_SP" (expressions,
 * for usage texts and error messages) */
#define PFLOPS_MNAME_SP_(id, ...) " " #id
#define PFLOPS_MNAME_CM_(id, ...) "," #id
#define PFLOPS_METRIC_NAMES (&PFLOPS_METRICS(PFLOPS_MNAME_SP_)[1])
#define PFLOPS_METRIC_NAMES_COMMA (&PFLOPS_METRICS(PFLOPS_MNAME_CM_)[1])
enum pflops_class {
	PFLOPS_EXACT,
	PFLOPS_MASKED_FULL,
	PFLOPS_SPECULATIVE,
	PFLOPS_ESTIMATE,
	PFLOPS_UNAVAILABLE,
	PFLOPS_NCLASS
};
enum pflops_arch { PFLOPS_ARCH_X86, PFLOPS_ARCH_ARM };

#define PFLOPS_NAME_MAX 64

struct pflops_event {
	char alias[PFLOPS_NAME_MAX]; /* name used in formulas (SD, D128 ...) */
	char *spec;		     /* "EVENT:UMASK" for libpfm4, or "raw:0xNNNN" */
	char *model;		     /* what it counts, for the trace models; may be NULL */
	int pair;		     /* costs two counters (AMD merged counter pair) */
	int combine;		     /* umask bits may be OR-ed with a sibling's (for a
				 * libpfm4-named event: where libpfm4 refuses) */
	int line;
	char *note;	       /* an event in no formula, kept for recordings
				 * (`note` directive): what it counts; else NULL */
	uint64_t built_config; /* libpfm4's encoding at build time (built-in
				 * table), used where this process's libpfm4
				 * does not have the PMU active; 0: none */
};

/* weight = w0 + wvl * VL, VL the SVE vector length in bits (so the
 * table's "SCALE*VL/128" has wvl = 1/128) */
struct pflops_term {
	int event; /* index into pmu->events */
	double w0, wvl;
};

struct pflops_metric_def {
	enum pflops_class klass;
	char *formula; /* readable infix as written in the table */
	char *caveat;  /* one sentence; the reason when unavailable */
	int nterms;
	struct pflops_term *terms;
	int line;
};

/* A `detect` line: when METRIC alone needs more counters than the core
 * has, it may be planned without PART's events, with one detector counter
 * (EVENT) that counts the instructions PART would weight: zero proves the
 * smaller plan exact; non-zero is reported as status STATUS. */
struct pflops_detect {
	int line;	  /* 0: the block has no detect line */
	int metric, part; /* enum pflops_metric */
	int event;	  /* index into pmu->events */
	uint64_t drop;	  /* bit i: event i is weighted by PART */
	char status[32];  /* status event reporting EVENT's count */
};

struct pflops_match {
	char vendor[16];	     /* intel, amd, hygon, arm */
	unsigned family;	     /* Arm: implementer */
	unsigned model_lo, model_hi; /* Arm: part number */
	unsigned step_lo, step_hi;
	char coretype[32]; /* hwloc CoreType (IntelCore, IntelAtom ...) or "" */
	int line;
};

struct pflops_pmu {
	char name[PFLOPS_NAME_MAX]; /* libpfm4's PMU name where it has one */
	char title[128];
	char libpfm[PFLOPS_NAME_MAX]; /* libpfm4 name to encode with, "" = raw only */
	char sysfs[PFLOPS_NAME_MAX];  /* perf PMU under /sys/bus/event_source ("cpu") */
	char aliases[4][PFLOPS_NAME_MAX];
	enum pflops_arch arch;
	int counters_smt, counters_nosmt; /* general counters per logical thread */
	int sve_bits;			  /* SVE vector length of the part, 0 = none */
	int cycles_general;		  /* no fixed cycles counter (AMD): the NMI
				 * watchdog's cycles event takes a general one */
	struct pflops_detect detect;
	int nevents;
	struct pflops_event *events;
	struct pflops_metric_def metrics[PFLOPS_NMETRIC];
	int nmatches;
	struct pflops_match *matches;
	const char *file;
	int line;
};

struct pflops_table {
	int npmus;
	struct pflops_pmu *pmus;
};

/* A metric's row of the registry (PFLOPS_METRICS). */
struct pflops_metric_info {
	const char *name;	  /* "DP_OPS" */
	const char *unit;	  /* "FLOP" or "instructions" */
	int flop;		  /* 1: FLOPs; 0: instructions (VEC_DP, VEC_SP) */
	int prec;		  /* enum pflops_prec counted, -1 all */
	unsigned widths;	  /* bit mask of enum pflops_width counted */
	int sparse;		  /* rare in code: a by-function column only where a run did any */
	const char *papi;	  /* "PAPI_DP_OPS" or NULL */
	const char *descr;	  /* what it counts, one phrase */
	const char *papi_meaning; /* the note of our PAPI preset row */
};
/* NULL for a value outside enum pflops_metric */
const struct pflops_metric_info *pflops_metric_info(enum pflops_metric m);
const char *pflops_metric_name(enum pflops_metric m); /* "DP_OPS" */
/* 1 for a FLOP metric, 0 for VEC_DP / VEC_SP (packed instruction counts). */
int pflops_metric_is_flop(enum pflops_metric m);
/* The metrics pmu can count: bit mask of enum pflops_metric. */
unsigned pflops_pmu_available(const struct pflops_pmu *pmu);
int pflops_metric_from_name(const char *name);	    /* -1 if unknown */
const char *pflops_class_name(enum pflops_class c); /* "masked-full" */

/* Parse table text; `file` names it in errors.  Appends to *t (start from
 * a zeroed table).  Validation of event encodings is separate
 * (pflops_table_check_encodings). */
int pflops_table_parse(struct pflops_table *t, const char *text, const char *file, struct pflops_error *err);
int pflops_table_load_file(struct pflops_table *t, const char *path, struct pflops_error *err);
/* The table compiled into the library (generated from presets/), or the
 * files PAPI_FLOPS_TABLE names: *t is overwritten, not appended to (free
 * it with pflops_table_free). */
int pflops_table_builtin(struct pflops_table *t, struct pflops_error *err);
void pflops_table_free(struct pflops_table *t);

/* By PMU name or alias (case-insensitive); NULL if none. */
const struct pflops_pmu *pflops_table_find(const struct pflops_table *t, const char *name);
/* By CPU identity; coretype may be NULL or "" for non-hybrid parts. */
const struct pflops_pmu *pflops_table_match(const struct pflops_table *t, const char *vendor, unsigned family,
					    unsigned model, unsigned stepping, const char *coretype);
/* Vendor string from CPUID/hwloc ("GenuineIntel", "AuthenticAMD",
 * "HygonGenuine", Arm implementer) to the table's vendor word. */
const char *pflops_vendor_word(const char *cpu_vendor);

/* ---------------------------------------------------------------------
 * Planning: metrics -> the fewest hardware counters.
 */
#define PFLOPS_MAX_COUNTERS 32
struct pflops_counter {
	char spec[160]; /* what is opened: "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE:SCALAR_SINGLE" or raw */
	int events[8];	/* table events merged into this counter */
	int nevents;
	int cost;		       /* hardware counters it takes (2 for AMD pairs) */
	uint64_t config;	       /* event-select code, user+kernel (full form, as perf's rNNNN) */
	int pfm_encoded;	       /* config came from libpfm4 */
	int detects;		       /* a detector (weight 0 everywhere): its count is
				 * the instructions of the reduced plan's left-out part */
	double weight[PFLOPS_NMETRIC]; /* per requested metric */
};

struct pflops_plan {
	const struct pflops_pmu *pmu;
	unsigned metrics; /* bit mask of enum pflops_metric */
	double vl128;	  /* VL/128 used for the weights */
	int ncounters;	  /* entries in counter[] */
	int cost;	  /* hardware counters needed */
	unsigned reduced; /* metrics planned without the pmu's detect PART
				 * (pflops_plan_fit): exact only while the
				 * detector counter reads 0 */
	struct pflops_counter counter[PFLOPS_MAX_COUNTERS];
};

/* Plan the requested metrics (bit mask) on pmu.  sve_bits 0 = the
 * table's figure.  Fails with PFLOPS_EUNAVAIL naming the metric when one
 * is unavailable. */
int pflops_plan_make(struct pflops_plan *p, const struct pflops_pmu *pmu, unsigned metrics, int sve_bits,
		     struct pflops_error *err);
/* pflops_plan_make, then fitted to `budget` counters where the table
 * allows: when the plan needs more and the pmu's `detect` rule applies
 * (the requested metrics that weight PART's events are all the rule's
 * METRIC, and none is left empty), those metrics are planned without
 * PART's events plus the detector counter, and p->reduced says which.
 * slot_metric maps metric slot s of pmu to the metric it really is (NULL:
 * slot s is metric s), for callers that plan variants of metrics in
 * slots.  A plan that still does not fit is returned as made: the caller
 * compares p->cost with its budget. */
int pflops_plan_fit(struct pflops_plan *p, const struct pflops_pmu *pmu, unsigned metrics, int sve_bits, int budget,
		    const int *slot_metric, struct pflops_error *err);
/* Metric value from the plan's counter values (same order as counter[]). */
double pflops_plan_eval(const struct pflops_plan *p, enum pflops_metric m, const double *counts);

/* ---------------------------------------------------------------------
 * Encoding with libpfm4 (any x86 PMU it knows, active or not).
 */
int pflops_encode_init(struct pflops_error *err);
/* Encode spec (libpfm4 "EVENT:UMASK..." on pmu, or "raw:0x..") into the
 * full event-select code, user+kernel.  fstr (may be NULL) receives
 * libpfm4's canonical name. */
int pflops_encode(const struct pflops_pmu *pmu, const char *spec, uint64_t *config, char *fstr, size_t fstrlen,
		  struct pflops_error *err);
/* Check every event of every PMU encodes; the first failure as
 * "file:line: ..." in err. */
int pflops_table_check_encodings(const struct pflops_table *t, struct pflops_error *err);

/* ---------------------------------------------------------------------
 * Probe: the machine (live, or replayed from an hwloc XML file or CPUID
 * dump directory) as core kinds, each with its PMU, counter budget and
 * whether counting is possible at all.
 */
#define PFLOPS_MAX_KINDS 8

struct pflops_kind {
	char coretype[32]; /* hwloc CoreType, "" on non-hybrid parts */
	char cpus[256];	   /* logical processors, "0-7,16-23" */
	int ncpus;
	char vendor[16];		  /* table word: intel amd hygon arm */
	unsigned family, model, stepping; /* Arm: implementer, part, variant */
	char model_name[128];
	const struct pflops_pmu *pmu; /* NULL: unknown CPU */
	char why[256];		      /* when pmu is NULL: the one-sentence reason */
	int smt;		      /* SMT siblings present */
	int budget;		      /* general counters per logical thread left to an
				 * event set (pflops_budget with no cycles) */
	int budget_cycles;	      /* the same for a set that also counts cycles
				 * (a hybrid time reference) */
	int sve_bits;		      /* Arm SVE vector length, 0 if none */
	char perf_pmu[64];	      /* its core PMU's perf name (cpu, cpu_atom,
				       * armv8_pmuv3_0 ...), "" when none is found */
};

struct pflops_access {
	int code;      /* PFLOPS_OK, PFLOPS_ENOPMU, PFLOPS_EPERM ... */
	char msg[256]; /* one sentence: what blocks counting */
	char fix[256]; /* what to do about it */
};

struct pflops_probe {
	int live;	  /* 1: this machine; 0: a topology file */
	char source[256]; /* "this machine" or the file */
	int nkinds;
	struct pflops_kind kinds[PFLOPS_MAX_KINDS];
	int nmi_watchdog; /* 1: the kernel's NMI watchdog is on (live only) */
	int paranoid;	  /* perf_event_paranoid, -99 unknown */
	struct pflops_access access;
};

/* General counters per logical thread left to one event set, as the
 * kernel schedules: the table's figure for SMT on or off, minus the one
 * the NMI watchdog holds where its cycles event cannot sit on a fixed
 * counter (`cycles general`: AMD), and minus one for a set that itself
 * counts cycles (needs_cycles) when no fixed cycles counter is free for it
 * (AMD; Intel and Arm when the watchdog holds the fixed one). */
int pflops_budget(const struct pflops_pmu *pmu, int smt, int nmi_watchdog, int needs_cycles);

/* topology: NULL for this machine, else an hwloc XML file or a directory
 * holding a CPUID dump (hwloc-gather-cpuid). */
int pflops_probe_run(struct pflops_probe *pr, const struct pflops_table *t, const char *topology,
		     struct pflops_error *err);
/* Write this machine's topology as hwloc XML (for bug reports). */
int pflops_probe_save_xml(const char *path, struct pflops_error *err);

/* Fit of one metric set on one kind: 0 fits, 1 needs multiplexing,
 * negative: unavailable (PFLOPS_EUNAVAIL) or unknown CPU (PFLOPS_ENOCPU);
 * msg says which in one sentence. */
int pflops_probe_fit(const struct pflops_kind *k, unsigned metrics, struct pflops_plan *plan, char *msg, size_t msglen);

/* ---------------------------------------------------------------------
 * The perf-stat source: metrics from `perf stat -x,` output recorded
 * anywhere.  Events may be raw (r5301c7), PMU-qualified
 * (cpu/event=0xc7,umask=0x1/, cpu_core/config=0x5301c7/; lines of another
 * core PMU than the block's, cpu_atom or cpu_lowpower, are skipped; Arm
 * armv8_* and armv9_* names are taken) or symbolic
 * (fp_arith_inst_retired.scalar_double).  Each metric needs every counter
 * of its plan, either as recorded or as its separate umasks.  Refused,
 * naming file and line: a file that is not a regular one or passes
 * 256 MiB, counts that are not whole numbers to 2^64-1 (or carry
 * thousands separators, which perf -x never writes), one event on two
 * lines, a duration_time that is not ns or passes 10 years.
 */
struct pflops_perfstat {
	double value[PFLOPS_NMETRIC];
	unsigned metrics; /* which value[] are set */
	/* value[m] as the exact whole number, where metrics_whole has bit m:
	 * counts are read as written (u64) and, where every weight is a whole
	 * number, summed without rounding; a double rounds past 2^53 */
	uint64_t whole[PFLOPS_NMETRIC];
	unsigned metrics_whole;
	double min_pct;	  /* lowest counter running percentage (100: no multiplexing) */
	int lines;	  /* counter lines read */
	double seconds;	  /* the duration_time line (the run's wall time); 0: none */
	int seconds_line; /* its line; 0: none */
};
int pflops_perfstat_read(const char *path, const struct pflops_pmu *pmu, unsigned metrics, int sve_bits,
			 struct pflops_perfstat *out, struct pflops_error *err);

/* ---------------------------------------------------------------------
 * Metrics from a traced instruction mix (trace and model: sources).
 */
/* Exact metrics, the SDE method: FLOPs of active lanes (FMA 2 per lane),
 * FP_OPS over every precision including x87; VEC_DP / VEC_SP count
 * packed instructions, an FMA twice (what FP_ARITH counts). */
void pflops_mix_metrics(const struct pflops_mix *m, double v[PFLOPS_NMETRIC]);
/* What pmu's formulas would read for the mix, from its events' `model`
 * lines.  *got: the metrics computed (available and modelled). */
int pflops_model_metrics(const struct pflops_pmu *pmu, const struct pflops_mix *m, unsigned metrics, int sve_bits,
			 double v[PFLOPS_NMETRIC], unsigned *got, struct pflops_error *err);
/* FLOPs by vector width (exact, all precisions). */
void pflops_mix_widths(const struct pflops_mix *m, double w[PFLOPS_NWIDTH]);

/* ---------------------------------------------------------------------
 * Counting a whole program: its threads and children (perf_event with
 * inherit, enabled at exec).  Generic over perf (type, config) so that it
 * is tested on software events where no PMU exists.
 */
struct pflops_child_event {
	uint32_t type; /* PERF_TYPE_RAW, a PMU's sysfs type, PERF_TYPE_SOFTWARE */
	uint64_t config;
	int exclude_kernel; /* the first event's setting applies to all */
	/* results */
	uint64_t raw, enabled, running; /* ns for the last two */
	double scaled;			/* raw * enabled / running (0 if it never ran) */
};
/* Run argv, counting ev[0..n) over it (each its own perf group, through
 * the counting engine of pflops_perf.h).  *status: its wait status.
 * PFLOPS_EPERM / PFLOPS_ENOPMU / PFLOPS_ESYS with the event named when an
 * event cannot be opened; PFLOPS_ECHILD when the program cannot start. */
int pflops_count_child(char *const argv[], struct pflops_child_event *ev, int n, int *status, double *wall_seconds,
		       struct pflops_error *err);

#ifdef __cplusplus
}
#endif
#endif
