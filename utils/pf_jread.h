/* A strict JSON reader (RFC 8259) for the reports papi_flops_run writes,
 * which papi_flops_report reads back: outside input, so every byte is
 * checked, nesting is bounded, duplicate keys and numbers that do not fit
 * a double are refused.  utils/pf_jread.c. */
#ifndef PF_JREAD_H
#define PF_JREAD_H
#include <stddef.h>
#include "papi_flops.h"

enum pf_jtype { PF_JNULL, PF_JBOOL, PF_JNUM, PF_JSTR, PF_JARR, PF_JOBJ };

struct pf_jval {
	enum pf_jtype type;
	int b;		       /* PF_JBOOL */
	double num;	       /* PF_JNUM: finite */
	char *str;	       /* PF_JSTR: UTF-8, no NUL inside */
	size_t n;	       /* PF_JARR, PF_JOBJ: elements */
	struct pf_jval *items; /* the elements, or the members' values */
	char **keys;	       /* PF_JOBJ: the members' names */
};

#define PF_JSON_DEPTH 32 /* the reports nest 4 deep */
#define PF_JSON_MEMBERS \
	256 /* per object (a report's have 30 at most); keeps
				 * the repeat check cheap */

/* Parse text[0..len) as one JSON value (surrounding white space allowed).
 * 0, or PFLOPS_EINVAL ("line L, column C: ..." in err) / PFLOPS_ENOMEM. */
int pf_json_parse(const char *text, size_t len, struct pf_jval *v, struct pflops_error *err);
void pf_json_free(struct pf_jval *v);

/* The member key of object o; NULL when o is no object or has none. */
const struct pf_jval *pf_json_get(const struct pf_jval *o, const char *key);
#endif
