/*
 * Fuzz the flops component's event-name parser (core/evname.c, what
 * flops.c calls for flops:::NAME), with the detect status name of the
 * table (spr's).  Input: the name after "flops:::".
 * Invariants: a refused name says why; an accepted one is valid, its
 * canonical name parses back to it, and it is that canonical name token
 * for token, case aside (no token dropped, none empty, none extra,
 * whatever the length): one event, one name (issue 13, item 7).
 */
#include "fuzz.h"
#include <strings.h>
#include "papi_flops.h"
#include "pflops_evname.h"

static struct pflops_table T;
static const char *detect = "";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct pflops_error err = { 0 };
	if (pflops_table_builtin(&T, &err))
		FUZZ_CHECK(0, "builtin table: %s", err.msg);
	const struct pflops_pmu *p = pflops_table_find(&T, "spr");
	FUZZ_CHECK(p && p->detect.line, "spr has a detect rule");
	detect = p->detect.status;
	return 0;
}

/* Every ':'-separated token of name, empty ones included, is one of
 * canon's, and there are as many. */
static int same_tokens(const char *name, const char *canon)
{
	int n = 1, nc = 1;
	for (const char *p = name; *p; p++)
		n += *p == ':';
	for (const char *p = canon; *p; p++)
		nc += *p == ':';
	if (n != nc)
		return 0;
	for (const char *t = name;; t++) {
		size_t len = strcspn(t, ":");
		int found = 0;
		for (const char *c = canon; !found;) {
			size_t cl = strcspn(c, ":");
			found = cl == len && len && !strncasecmp(t, c, len);
			if (!c[cl])
				break;
			c += cl + 1;
		}
		if (!found)
			return 0;
		t += len;
		if (!*t)
			return 1;
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *name = fuzz_text(data, size);
	if (!name)
		return 0;
	for (int d = 0; d < 2; d++) { /* with and without a detect rule */
		const char *status = d ? detect : NULL;
		struct pfc_evname e, again;
		struct pflops_error err = { 0 };
		int rc = pfc_evname_parse(name, status, &e, &err);
		if (rc) {
			FUZZ_CHECK(rc == PFLOPS_ENOENT && err.msg[0], "rc %d: '%s'", rc, err.msg);
			continue;
		}
		FUZZ_CHECK(e.entry < PFC_EV_NENTRY && e.wq <= PFLOPS_NWIDTH && e.pq <= PFLOPS_NPREC &&
				   (e.entry < PFLOPS_NMETRIC || (!e.wq && !e.pq)) && (e.entry != PFC_EV_DETECT || d),
			   "'%s' -> entry %u wq %u pq %u", name, e.entry, e.wq, e.pq);
		char canon[128];
		FUZZ_CHECK(pfc_evname_format(&e, status, canon, sizeof(canon)) == 0, "name of '%s'", name);
		FUZZ_CHECK(pfc_evname_parse(canon, status, &again, NULL) == 0 && again.entry == e.entry &&
				   again.wq == e.wq && again.pq == e.pq,
			   "'%s' -> '%s' parses differently", name, canon);
		FUZZ_CHECK(same_tokens(name, canon), "'%s' accepted as '%s'", name, canon);
	}
	free(name);
	return 0;
}
