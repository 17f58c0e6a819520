/* The presets table as compiled into the library (see pflops_gen.c). */
#ifndef PFLOPS_BUILTIN_H
#define PFLOPS_BUILTIN_H
struct pflops_builtin_file {
	const char *name;
	const char *text;
};
extern const struct pflops_builtin_file pflops_builtin_files[];
extern const int pflops_builtin_nfiles;
#endif
