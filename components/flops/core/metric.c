/* The metric registry (PFLOPS_METRICS in papi_flops.h) as data, and the
 * names of precisions and widths. */
#include <strings.h>
#include "papi_flops.h"

#define PFC_UNIT_FLOP_ "FLOP", 1
#define PFC_UNIT_INSTS_ "instructions", 0
#define ROW(id, unit, prec, widths, sparse, papi, descr, meaning) \
	{ #id, PFC_UNIT_##unit##_, prec, widths, sparse, papi, descr, meaning },
static const struct pflops_metric_info metrics[PFLOPS_NMETRIC] = { PFLOPS_METRICS(ROW) };
#undef ROW

const struct pflops_metric_info *pflops_metric_info(enum pflops_metric m)
{
	return (unsigned)m < PFLOPS_NMETRIC ? &metrics[m] : NULL;
}

const char *pflops_metric_name(enum pflops_metric m)
{
	return (unsigned)m < PFLOPS_NMETRIC ? metrics[m].name : "?";
}

int pflops_metric_is_flop(enum pflops_metric m)
{
	return (unsigned)m < PFLOPS_NMETRIC && metrics[m].flop;
}

int pflops_metric_from_name(const char *name)
{
	/* accept PAPI spellings too: PAPI_DP_OPS */
	if (!strncasecmp(name, "PAPI_", 5))
		name += 5;
	for (int i = 0; i < PFLOPS_NMETRIC; i++)
		if (!strcasecmp(name, metrics[i].name))
			return i;
	return -1;
}

#define NAME(id, name, bits) name,
const char *pflops_prec_name(enum pflops_prec p)
{
	static const char *const n[PFLOPS_NPREC] = { PFLOPS_PRECS(NAME) };
	return (unsigned)p < PFLOPS_NPREC ? n[p] : "?";
}

const char *pflops_width_name(enum pflops_width w)
{
	static const char *const n[PFLOPS_NWIDTH] = { PFLOPS_WIDTHS(NAME) };
	return (unsigned)w < PFLOPS_NWIDTH ? n[w] : "?";
}
#undef NAME
