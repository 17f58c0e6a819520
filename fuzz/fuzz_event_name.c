/*
 * Fuzz the flops component's event-name parsing: fl_name_to_code in
 * components/flops/flops.c, compiled here from that file against the
 * headers of the PAPI source the build uses.  The component is
 * initialised for real, on the PMU PAPI_FLOPS_PMU names (default spr:
 * every width and precision qualifier).  Input: the name after "flops:::".
 * Invariants: an accepted name gives a valid code whose canonical name
 * parses back to the same code; with FUZZ_NAME_WHOLE=1, an accepted name is
 * that canonical name token for token (no token dropped, none empty):
 * a name is checked whole (issue 13, item 7).
 */
#include "../components/flops/flops.c"
#include "fuzz.h"

/* Whole-name check: on with FUZZ_NAME_WHOLE=1 in the environment; the
 * default turns to 1 when component names are checked whole (item 7). */
#define FUZZ_NAME_WHOLE_DEFAULT 0
static int name_whole = FUZZ_NAME_WHOLE_DEFAULT;

/* Two PAPI internals flops.c links against (libpapi does not export
 * them).  Neither is on the path of init and name parsing: reaching one
 * is a failure. */
void PAPIERROR(char *format, ...)
{
	FUZZ_CHECK(0, "PAPIERROR called: %s", format);
}

void _papi_hwi_set_papi_event_string(const char *event_string)
{
	FUZZ_CHECK(0, "_papi_hwi_set_papi_event_string called: %s", event_string);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (getenv("FUZZ_NAME_WHOLE"))
		name_whole = atoi(getenv("FUZZ_NAME_WHOLE"));
	setenv("PAPI_FLOPS_PMU", getenv("PAPI_FLOPS_PMU") ? getenv("PAPI_FLOPS_PMU") : "spr", 1);
	int rc = fl_init_component(0);
	FUZZ_CHECK(rc == PAPI_OK && fl.nkinds > 0, "component init: %d %s", rc,
		   _flops_vector.cmp_info.disabled_reason);
	return 0;
}

/* Every ':'-separated token of name, empty ones included, is one of the
 * canonical name's, and there are as many. */
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
	unsigned code = 0;
	if (fl_name_to_code(name, &code) == PAPI_OK) {
		char canon[PAPI_MAX_STR_LEN];
		unsigned again = ~0u;
		FUZZ_CHECK(code_valid(code), "'%s' -> invalid code %#x", name, code);
		FUZZ_CHECK(fl_code_to_name(code, canon, sizeof(canon)) == PAPI_OK, "name of %#x", code);
		FUZZ_CHECK(fl_name_to_code(canon, &again) == PAPI_OK && again == code, "'%s' -> %#x -> '%s' -> %#x",
			   name, code, canon, again);
		FUZZ_CHECK(!name_whole || same_tokens(name, canon), "'%s' accepted as '%s'", name, canon);
	}
	free(name);
	return 0;
}
