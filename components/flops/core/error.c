/* The error convention (papi_flops.h) and the name tables. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include "pflops_internal.h"

int pfc_err(struct pflops_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

char *pfc_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

const char *pflops_strerror(int code)
{
	switch (code) {
	case PFLOPS_OK:
		return "success";
	case PFLOPS_EINVAL:
		return "invalid argument or malformed input";
	case PFLOPS_ENOMEM:
		return "out of memory";
	case PFLOPS_ESYS:
		return "system call failed";
	case PFLOPS_ENOENT:
		return "no such PMU, metric, event or file";
	case PFLOPS_ENOCPU:
		return "unknown CPU: no FLOP formula for it";
	case PFLOPS_EUNAVAIL:
		return "metric not countable on this CPU";
	case PFLOPS_EPERM:
		return "not permitted to use hardware counters";
	case PFLOPS_ENOPMU:
		return "no hardware PMU exposed";
	case PFLOPS_ECNFLCT:
		return "more counters needed than the core has";
	case PFLOPS_EENCODE:
		return "event cannot be encoded";
	case PFLOPS_ECHILD:
		return "program could not be run";
	}
	return "unknown error";
}

static const char *const class_names[PFLOPS_NCLASS] = {
	"exact", "masked-full", "speculative", "estimate", "unavailable",
};

unsigned pflops_pmu_available(const struct pflops_pmu *pmu)
{
	unsigned set = 0;
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		set |= pmu->metrics[m].klass != PFLOPS_UNAVAILABLE ? 1u << m : 0;
	return set;
}

const char *pflops_class_name(enum pflops_class c)
{
	return (unsigned)c < PFLOPS_NCLASS ? class_names[c] : "?";
}

int pfc_class_from_name(const char *name)
{
	for (int i = 0; i < PFLOPS_NCLASS; i++)
		if (!strcmp(name, class_names[i]))
			return i;
	return -1;
}
