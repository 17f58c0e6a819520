/*
 * Fuzz the formula parser (components/flops/core/formula.c) on the event
 * aliases of two real table blocks: spr (x86, 11 events) and arm_v2 (the
 * SVE factor VL).  Input: the formula text.
 * Invariants: an accepted formula has 1..nevents terms on distinct,
 * valid events with finite weights of at most 1e6 FLOPs per count (VL up
 * to 2048); a refused one says why.
 */
#include <math.h>
#include "papi_flops.h"
#include "pflops_internal.h"
#include "fuzz.h"

static struct pflops_table T;
static const struct pflops_pmu *P[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct pflops_error err = { 0 };
	if (pflops_table_builtin(&T, &err))
		FUZZ_CHECK(0, "builtin table: %s", err.msg);
	P[0] = pflops_table_find(&T, "spr");
	P[1] = pflops_table_find(&T, "arm_v2");
	FUZZ_CHECK(P[0] && P[1], "spr and arm_v2 are in the table");
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	for (int k = 0; k < 2; k++) {
		const struct pflops_pmu *p = P[k];
		struct pflops_term *terms = NULL;
		int n = -1;
		char msg[256] = "";
		int rc = pfc_formula_parse(text, p, &terms, &n, msg, sizeof(msg));
		if (rc) {
			FUZZ_CHECK(rc == PFLOPS_EINVAL && msg[0], "rc %d, msg '%s'", rc, msg);
			FUZZ_CHECK(!terms, "no terms on failure");
			continue;
		}
		FUZZ_CHECK(n >= 1 && n <= p->nevents, "%d terms of %d events", n, p->nevents);
		for (int i = 0; i < n; i++) {
			const struct pflops_term *t = &terms[i];
			FUZZ_CHECK(t->event >= 0 && t->event < p->nevents, "event %d", t->event);
			FUZZ_CHECK(i == 0 || t->event > terms[i - 1].event, "events distinct, in order");
			FUZZ_CHECK(isfinite(t->w0) && isfinite(t->wvl) && fabs(t->w0) + fabs(t->wvl) * 2048 <= 1e6,
				   "weight %g + %g*VL", t->w0, t->wvl);
			FUZZ_CHECK(t->w0 != 0 || t->wvl != 0, "a term has a weight");
		}
		free(terms);
	}
	free(text);
	return 0;
}
