/*
 * pflops_count.h: the one hardware counting pipeline of papi-flops, for
 * the flops PAPI component and papi_flops_run --source hw alike:
 *
 *   kinds   the machine's core kinds (the probe's, or PMUs named by the
 *           caller), each with its perf PMU, counter budget and the SVE
 *           vector length its formulas use: this process's, read at run
 *           time (prctl PR_SVE_GET_VL on aarch64), else the table's;
 *   plan    a metric set (metrics, or one width / precision of a metric)
 *           planned on every kind with that length (pfc_count_plan);
 *   layout  the plans as perf events (pflops_perf.h pfc_perf_layout);
 *   open, read, scale for multiplexing, sum over kinds, and evaluate the
 *           formulas, with what makes a value approximate in status.
 *
 * A program counted whole: pfc_count_program (count_child.c).  What the
 * caller says to its users stays with the caller.  Errors as papi_flops.h.
 */
#ifndef PFC_COUNT_H
#define PFC_COUNT_H
#include "papi_flops.h"
#include "pflops_perf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* This process's SVE vector length in bits (prctl PR_SVE_GET_VL on
 * aarch64), 0 without SVE or off aarch64. */
int pfc_sve_vl_bits(void);
/* The vector length a program this process execs starts with: vl (as
 * prctl PR_SVE_GET_VL returns it) where it carries PR_SVE_VL_INHERIT,
 * else the system default (default_file, in bytes:
 * /proc/sys/abi/sve_default_vector_length), else vl's; 0 when vl <= 0.
 * pfc_sve_vl_exec: the same for this process on aarch64, else 0. */
int pfc_sve_exec_vl_bits(int vl, const char *default_file);
int pfc_sve_vl_exec(void);

/* One core kind to count on. */
struct pfc_count_kind {
	const struct pflops_pmu *pmu; /* NULL: no formula, only its time is measured */
	uint32_t type;		      /* perf type: PERF_TYPE_RAW, or its own PMU's (hybrid) */
	int own_pmu;		      /* hybrid: opens on its kind's perf PMU (pfc_count_kinds_types) */
	int ref;		      /* opens a cycles time reference too (hybrid kinds) */
	int smt;		      /* the budget assumes SMT on */
	int budget;		      /* general counters left to one set */
	int sve_bits;		      /* VL its formulas are planned with */
	int arch;		      /* enum pflops_arch: how its cycles reference is coded */
	char perf_pmu[64];	      /* its perf PMU: pmu's sysfs, or the probe's name */
	char cpus[256];		      /* the probe's CPU list, or "" */
	char why[256];		      /* no pmu: the probe's sentence, or "" */
};

struct pfc_count_kinds {
	int n;
	struct pfc_count_kind kind[PFLOPS_MAX_KINDS];
};

/* Add a kind.  budget < 0: pmu's figure with SMT on and the NMI watchdog
 * as nmi says; own_pmu: it opens on its own perf PMU; ref: with a cycles
 * time reference; sve_bits < 0: this process's vector length where pmu
 * has SVE and the process a length, else the table's.  PFLOPS_EINVAL
 * when there are PFLOPS_MAX_KINDS already. */
int pfc_count_kind_add(struct pfc_count_kinds *ks, const struct pflops_pmu *pmu, int budget, int smt, int own_pmu,
		       int ref, int nmi, int sve_bits, struct pflops_error *err);
/* The probe's kinds (its budgets and vector length); more than one kind
 * is a hybrid machine.  The number of kinds with a formula. */
int pfc_count_kinds_probe(struct pfc_count_kinds *ks, const struct pflops_probe *pr);
/* Kinds that count a program this process execs: those with SVE take
 * the length it will start with (pfc_sve_vl_exec), where there is one. */
void pfc_count_kinds_exec_vl(struct pfc_count_kinds *ks);
/* The perf type of every kind that opens on its own PMU, from sysfs.  A
 * kind without a formula whose PMU is not found loses its reference. */
int pfc_count_kinds_types(struct pfc_count_kinds *ks, struct pflops_error *err);
/* 1, with one sentence in msg, when kind k of a hybrid machine is not
 * timed (no perf PMU to time it on): the uncovered share misses it. */
int pfc_count_untimed(const struct pfc_count_kinds *ks, int k, char *msg, size_t len);

/* One slot of a metric set: a metric (enum pflops_metric, < 0: slot
 * unused), optionally only one width / precision (enum, -1 all). */
struct pfc_count_want {
	int metric;
	int width, prec;
};

/* Does term t of pmu's metric pass width/prec (-1: any)?  By the model
 * line of its event (pflops_model.h): an event of several widths passes
 * no width qualifier. */
int pfc_count_term_passes(const struct pflops_pmu *pmu, const struct pflops_term *t, int width, int prec);
/* A qualifier splits metric m on pmu: every term's event has one value for
 * it, some term passes and some does not. */
int pfc_count_qualifier_ok(const struct pflops_pmu *pmu, int m, int width, int prec);

/* A counting set: plans of every kind and their perf events. */
struct pfc_count {
	const struct pfc_count_kinds *ks;
	int multiplex; /* a plan over its budget opens one event per group */
	struct pflops_plan plan[PFLOPS_MAX_KINDS];
	int planned[PFLOPS_MAX_KINDS];
	unsigned skipped[PFLOPS_MAX_KINDS]; /* not strict: slots (bit s) left out there */
	int rc[PFLOPS_MAX_KINDS];	    /* why a kind with a PMU was not planned ... */
	char why[PFLOPS_MAX_KINDS][256];    /* ... in one sentence */
	/* pfc_count_layout */
	struct pfc_perf_kind pk[PFLOPS_MAX_KINDS];
	struct pfc_perf_event ev[PFLOPS_MAX_KINDS * (PFLOPS_MAX_COUNTERS + 1)];
	int nev, nslots;
	int counter_slot[PFLOPS_MAX_KINDS][PFLOPS_MAX_COUNTERS];
	double *slots; /* nslots summed, scaled counts */
	/* pfc_count_open */
	struct pfc_perf_set *set;
	struct pfc_perf_value *vals;
	struct pfc_perf_status st; /* of the last read */
};

/* strict: a kind that cannot count every wanted slot is not planned (the
 * reason in c->rc[k], c->why[k]); else such slots are left out there
 * (c->skipped[k]): their sums miss that kind's share of the time, which
 * the caller must say (pfc_count_share) or refuse.  Slot s of the plans is want[s].  Returns the
 * number of kinds planned.  A plan over a kind's budget is kept: compare
 * c->plan[k].cost with the budget (pfc_count_over). */
int pfc_count_plan(struct pfc_count *c, const struct pfc_count_kinds *ks, const struct pfc_count_want *want, int n,
		   int strict);
/* The metrics of mask as slots: slot m is metric m. */
void pfc_count_want_metrics(struct pfc_count_want want[PFLOPS_NMETRIC], unsigned metrics);
/* 1, with one sentence in msg, when a planned kind with SVE was planned
 * with another vector length than now (the calling thread's, in bits;
 * PR_SVE_GET_VL is per thread): its weights would be wrong. */
int pfc_count_vl_differs(const struct pfc_count *c, int now, char *msg, size_t len);
/* Kind k's share of the time of the last read (0 when none). */
double pfc_count_share(const struct pfc_count *c, int k);
/* 1 when kind k's plan needs more counters than its budget. */
int pfc_count_over(const struct pfc_count *c, int k);
/* The plans as perf events (c->ev, c->nev) and zeroed slots. */
int pfc_count_layout(struct pfc_count *c, struct pflops_error *err);
/* Open c->ev (pfc_count_layout first; the caller may set sampling periods
 * or stand-ins on c->ev in between). */
int pfc_count_open(struct pfc_count *c, const struct pfc_perf_attr *a, struct pflops_error *err);
/* Read, scale and sum into c->slots; c->st says what is estimated. */
int pfc_count_read(struct pfc_count *c, struct pflops_error *err);
/* Slot s's value (its formula over the kinds), and what the plans'
 * detector counters read. */
double pfc_count_value(const struct pfc_count *c, int s);
double pfc_count_detected(const struct pfc_count *c);
/* A program counted with the set (count_child.c, not in libpapi; lay it
 * out first): argv spawned held, c->ev opened on it with a (inherit and
 * enable_on_exec added), released, waited for, read. */
int pfc_count_program(struct pfc_count *c, char *const argv[], const struct pfc_perf_attr *a,
		      const volatile sig_atomic_t *interrupt, int *status, double *wall_seconds,
		      struct pflops_error *err);
/* Close the events and free the slots (the plans stay). */
void pfc_count_close(struct pfc_count *c);

#ifdef __cplusplus
}
#endif
#endif
