/* The presets table as compiled into the library (see pflops_gen.c). */
#ifndef PFC_BUILTIN_H
#define PFC_BUILTIN_H
struct pfc_builtin_file {
	const char *name;
	const char *text;
};
extern const struct pfc_builtin_file pfc_builtin_files[];
extern const int pfc_builtin_nfiles;
/* Every libpfm4-named event encoded at build time.  Why: libpfm4 encodes
 * only the PMUs it detects once initialized by someone else (PAPI does,
 * without LIBPFM_ENCODE_INACTIVE), and an older libpfm4 may not detect a
 * newer CPU whose events it knows (Granite Rapids counts with spr's). */
struct pfc_builtin_enc {
	const char *pmu, *alias;
	unsigned long long config;
};
extern const struct pfc_builtin_enc pfc_builtin_encs[];
extern const int pfc_builtin_nencs;
/* libpfm4's answers for the x86 PMUs, recorded on x86-64
 * (presets/x86-libpfm.enc) and replayed where libpfm4 has no x86 PMU (an
 * aarch64 build): b NULL, the encoding of a (config, out its name);
 * else a and b merged into out (pfc_encode_merge). */
struct pfc_builtin_rec {
	const char *pmu, *a, *b, *out;
	unsigned long long config;
};
extern const struct pfc_builtin_rec pfc_builtin_recs[];
extern const int pfc_builtin_nrecs;
#endif
