/* The presets table as compiled into the library (see pflops_gen.c). */
#ifndef PFLOPS_BUILTIN_H
#define PFLOPS_BUILTIN_H
struct pflops_builtin_file {
	const char *name;
	const char *text;
};
extern const struct pflops_builtin_file pflops_builtin_files[];
extern const int pflops_builtin_nfiles;
/* Every libpfm4-named event encoded at build time.  Why: libpfm4 encodes
 * only the PMUs it detects once initialized by someone else (PAPI does,
 * without LIBPFM_ENCODE_INACTIVE), and an older libpfm4 may not detect a
 * newer CPU whose events it knows (Granite Rapids counts with spr's). */
struct pflops_builtin_enc {
	const char *pmu, *alias;
	unsigned long long config;
};
extern const struct pflops_builtin_enc pflops_builtin_encs[];
extern const int pflops_builtin_nencs;
/* libpfm4's answers for the x86 PMUs, recorded on x86-64
 * (presets/x86-libpfm.enc) and replayed where libpfm4 has no x86 PMU (an
 * aarch64 build): b NULL, the encoding of a (config, out its name);
 * else a and b merged into out (pf_encode_merge). */
struct pflops_builtin_rec {
	const char *pmu, *a, *b, *out;
	unsigned long long config;
};
extern const struct pflops_builtin_rec pflops_builtin_recs[];
extern const int pflops_builtin_nrecs;
#endif
