/*
 * pflops_model.h: an event's model line of the presets table, parsed
 * (core/model.c owns the format; see the comment atop model.c).  For
 * callers that need what an event counts, not a count: the component's
 * width and precision qualifiers.
 */
#ifndef PFC_MODEL_H
#define PFC_MODEL_H
#include "papi_flops.h"

enum pfc_model_unit { PFC_MODEL_INST, PFC_MODEL_FLOPS, PFC_MODEL_FLOPS_ACTIVE, PFC_MODEL_NONE };

struct pfc_model {
	enum pfc_model_unit unit;
	/* bit masks over enum pflops_prec / pflops_width / pflops_op and the
	 * extra counts; a key not given is every value */
	unsigned precs, widths, ops, plus;
	double fma, dpp; /* -1: not given */
};

/* Parse spec; PFLOPS_EINVAL naming the bad token.  A `none` model parses
 * (its keys too); only evaluating it is PFLOPS_EUNAVAIL. */
int pfc_model_parse(const char *spec, struct pfc_model *out, struct pflops_error *err);
/* The one value of a mask of n values (a key given once), else -1. */
int pfc_model_single(unsigned mask, int n);
#endif
