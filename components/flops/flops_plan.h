/*
 * flops_plan.h: the flops component's planning, apart from PAPI: which
 * core kinds it counts on (PAPI_FLOPS_PMU, LIBPFM_FORCE_PMU, the probe),
 * and an event set's entries planned on them through the core's counting
 * pipeline (core/pflops_count.h), refused with one sentence where they do
 * not fit.  flops.c calls it at init and on every PAPI_add; the tests
 * (ctests/test_count_plan.c) call the same code with fixture inputs.
 *
 * Native event code: bits 0-3 the entry (a pflops_metric, or a status
 * event: core/pflops_evname.h), bits 4-7 a width qualifier (0 none,
 * 1 + pflops_width), bits 8-11 a precision qualifier (0 none,
 * 1 + pflops_prec).
 */
#ifndef FLOPS_PLAN_H
#define FLOPS_PLAN_H

#include <stddef.h>
#include "core/papi_flops.h"
#include "core/pflops_count.h"

#define FLO_CODE(e, w, p) ((unsigned)(e) | ((unsigned)(w) << 4) | ((unsigned)(p) << 8))
#define FLO_ENTRY(c) ((c)&0xf)
#define FLO_WQ(c) (((c) >> 4) & 0xf)
#define FLO_PQ(c) (((c) >> 8) & 0xf)

/* Add a PMU forced by name: the table's budget with SMT on (the machine
 * it stands for is unknown), the watchdog as nmi says; sve_bits < 0 the
 * run-time SVE vector length (the component), else that length (tests).
 * own_pmu: it opens on its own perf PMU; with a cycles time reference
 * when several kinds are named, or an x86 hybrid one alone (cpu_core). */
int flo_add_kind(struct pfc_count_kinds *ks, const struct pflops_pmu *p, int own_pmu, int several, int nmi,
		 int sve_bits);

/* The kinds the hw source counts on: PAPI_FLOPS_PMU (comma-separated
 * table names, one per core kind), else LIBPFM_FORCE_PMU, else the
 * probe's core kinds (pr: this machine's, or a topology file's).  0, or
 * PFLOPS_EINVAL / ENOENT / ENOCPU / ENOMEM with the sentence in err. */
int flo_choose_kinds(struct pfc_count_kinds *ks, const struct pflops_table *t, const struct pflops_probe *pr,
		     int sve_bits, struct pflops_error *err);

/* Plan an event set's n entries (code[i]; slot_of[i]: its planner slot,
 * -1 for a status event; nflops slots) on every kind of ks into c.  An
 * entry some kind does not count is refused (its value would miss that
 * kind's time: PFLOPS_EUNAVAIL), so is a kind's plan over its counters
 * unless multiplex (PFLOPS_ECNFLCT).  nmi: the NMI watchdog holds a
 * counter (said in the refusal).  0, or a PFLOPS_E* code with one
 * sentence in msg. */
int flo_plan_set(struct pfc_count *c, const struct pfc_count_kinds *ks, const unsigned *code, const int *slot_of, int n,
		 int nflops, int multiplex, int nmi, char *msg, size_t len);

#endif
