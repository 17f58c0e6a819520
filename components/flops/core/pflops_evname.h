/*
 * pflops_evname.h: names of the flops component's events, parsed and
 * written without PAPI (so the parser can be fuzzed on its own).
 *
 *   METRIC[:QUALIFIER[:QUALIFIER]]   FP_OPS, DP_OPS:W512, FP_OPS:W256:SP
 *   SCALED, UNCOVERED_NS             status events (no counter)
 *   the table's detect STATUS name   e.g. UNWEIGHTED_FP16
 *
 * Qualifiers: one width (SCALAR W128 W256 W512) and one precision
 * (X87 HP BF16 SP DP), case-insensitive.  The whole name is read: an
 * empty qualifier ("DP_OPS::W512"), a repeated kind of qualifier or
 * trailing junk is an error, whatever the length.
 */
#ifndef PFC_EVNAME_H
#define PFC_EVNAME_H

#include <stddef.h>
#include "papi_flops.h"

enum {
	PFC_EV_SCALED = PFLOPS_NMETRIC, /* 1 when a read was scaled */
	PFC_EV_UNCOVERED,		/* ns on kinds that cannot count */
	PFC_EV_DETECT,			/* the detect rule's status event */
	PFC_EV_NENTRY
};

struct pfc_evname {
	unsigned entry; /* enum pflops_metric or PFLOPS_EV_* */
	unsigned wq;	/* 0 none, else 1 + enum pflops_width */
	unsigned pq;	/* 0 none, else 1 + enum pflops_prec */
};

/* Qualifier spellings, by enum pflops_width / enum pflops_prec. */
extern const char *const pfc_width_qual[PFLOPS_NWIDTH];
extern const char *const pfc_prec_qual[PFLOPS_NPREC];

/* Parse name; detect_status is the status event's name here (NULL or ""
 * when no core kind has a detect rule).  PFLOPS_ENOENT with the reason. */
int pfc_evname_parse(const char *name, const char *detect_status, struct pfc_evname *out, struct pflops_error *err);
/* The canonical name; PFLOPS_EINVAL when it does not fit len. */
int pfc_evname_format(const struct pfc_evname *e, const char *detect_status, char *buf, size_t len);

#endif
