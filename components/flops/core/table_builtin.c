/* The table compiled into the library: the presets/ .pft files, validated at build
 * time by pflops_gen, parsed here on first use.  A user table can replace
 * it through PAPI_FLOPS_TABLE (a file or a colon-separated list). */
#include <stdlib.h>
#include <string.h>
#include "pflops_internal.h"
#include "pflops_builtin.h"

int pflops_table_builtin(struct pflops_table *t, struct pflops_error *err)
{
	const char *env = getenv("PAPI_FLOPS_TABLE");
	memset(t, 0, sizeof(*t)); /* a fresh table: a client's may be uninitialised */
	if (env && *env) {
		/* every name counts: an empty one (':', 'a.pft::b.pft') is a typo,
		 * not "no table", which would read every CPU as unknown */
		for (const char *f = env;; f++) {
			size_t n = strcspn(f, ":");
			if (!n)
				return pfc_err(
					err, PFLOPS_EINVAL,
					"PAPI_FLOPS_TABLE='%.200s' has an empty file name, so no PMU block would be read; give table files separated by ':', or unset it for the built-in table",
					env);
			f += n;
			if (!*f)
				break;
		}
		char *list = strdup(env), *save = NULL;
		if (!list)
			return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
		int rc = 0;
		for (char *f = strtok_r(list, ":", &save); f && !rc; f = strtok_r(NULL, ":", &save))
			rc = pflops_table_load_file(t, f, err);
		free(list);
		return rc;
	}
	for (int i = 0; i < pfc_builtin_nfiles; i++) {
		int rc = pflops_table_parse(t, pfc_builtin_files[i].text, pfc_builtin_files[i].name, err);
		if (rc)
			return rc;
	}
	pfc_encode_replay(pfc_builtin_recs, pfc_builtin_nrecs);
	for (int i = 0; i < pfc_builtin_nencs; i++) {
		const struct pfc_builtin_enc *b = &pfc_builtin_encs[i];
		struct pflops_pmu *p = (struct pflops_pmu *)pflops_table_find(t, b->pmu);
		for (int e = 0; p && e < p->nevents; e++)
			if (!strcmp(p->events[e].alias, b->alias))
				p->events[e].built_config = b->config;
	}
	return 0;
}
