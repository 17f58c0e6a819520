/* Event names of the flops component (pflops_evname.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "pflops_internal.h"
#include "pflops_evname.h"

#define QUAL(id, ...) #id,
const char *const pfc_width_qual[PFLOPS_NWIDTH] = { PFLOPS_WIDTHS(QUAL) };
const char *const pfc_prec_qual[PFLOPS_NPREC] = { PFLOPS_PRECS(QUAL) };
#undef QUAL
#define QUAL_SP(id, ...) " " #id /* " SCALAR W128 ..." */

/* name[0..len) equals word, case-insensitively */
static int is(const char *name, size_t len, const char *word)
{
	return word && strlen(word) == len && !strncasecmp(name, word, len);
}

int pfc_evname_parse(const char *name, const char *detect_status, struct pfc_evname *out, struct pflops_error *err)
{
	struct pfc_evname e = { 0 };
	size_t len = strcspn(name, ":");
	char head[PFLOPS_NAME_MAX];
	if (len >= sizeof(head))
		return pfc_err(err, PFLOPS_ENOENT,
			       "no flops event '%.*s...': names are at most %zu characters before a ':'", 40, name,
			       sizeof(head) - 1);
	memcpy(head, name, len);
	head[len] = 0;
	int m = pflops_metric_from_name(head);
	if (m >= 0 && strncasecmp(head, "PAPI_", 5))
		e.entry = (unsigned)m;
	else if (is(name, len, "SCALED"))
		e.entry = PFC_EV_SCALED;
	else if (is(name, len, "UNCOVERED_NS"))
		e.entry = PFC_EV_UNCOVERED;
	else if (detect_status && *detect_status && is(name, len, detect_status))
		e.entry = PFC_EV_DETECT;
	else
		return pfc_err(err, PFLOPS_ENOENT, "no flops event '%s' (%s ...)", head, PFLOPS_METRIC_NAMES);
	for (const char *q = name + len; *q;) {
		q++; /* the ':' */
		size_t n = strcspn(q, ":");
		int found = 0;
		if (e.entry < PFLOPS_NMETRIC) {
			for (unsigned i = 0; i < PFLOPS_NWIDTH && !found; i++)
				if (is(q, n, pfc_width_qual[i]) && !e.wq)
					e.wq = i + 1, found = 1;
			for (unsigned i = 0; i < PFLOPS_NPREC && !found; i++)
				if (is(q, n, pfc_prec_qual[i]) && !e.pq)
					e.pq = i + 1, found = 1;
		}
		if (!found)
			return pfc_err(
				err, PFLOPS_ENOENT,
				"bad qualifier '%.*s' in flops event %s (one width %s and one precision %s, on metrics only)",
				(int)(n < 40 ? n : 40), q, head, &PFLOPS_WIDTHS(QUAL_SP)[1], &PFLOPS_PRECS(QUAL_SP)[1]);
		q += n;
	}
	*out = e;
	return 0;
}

int pfc_evname_format(const struct pfc_evname *e, const char *detect_status, char *buf, size_t len)
{
	const char *base = e->entry < PFLOPS_NMETRIC					  ? pflops_metric_name(e->entry)
			   : e->entry == PFC_EV_SCALED					  ? "SCALED"
			   : e->entry == PFC_EV_UNCOVERED				  ? "UNCOVERED_NS"
			   : e->entry == PFC_EV_DETECT && detect_status && *detect_status ? detect_status
											  : NULL;
	if (!base || e->wq > PFLOPS_NWIDTH || e->pq > PFLOPS_NPREC)
		return PFLOPS_EINVAL;
	int n = snprintf(buf, len, "%s%s%s%s%s", base, e->wq ? ":" : "", e->wq ? pfc_width_qual[e->wq - 1] : "",
			 e->pq ? ":" : "", e->pq ? pfc_prec_qual[e->pq - 1] : "");
	return n >= 0 && (size_t)n < len ? 0 : PFLOPS_EINVAL;
}
