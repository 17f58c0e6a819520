/* Internal helpers shared by the core's files; not installed. */
#ifndef PFC_INTERNAL_H
#define PFC_INTERNAL_H
#include <stdarg.h>
#include <stdio.h>
#include "papi_flops.h"

/* Fill err (if non-NULL) and return code: the one way errors are made. */
int pfc_err(struct pflops_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Parse a linear formula over pmu's event aliases ("SD + 2*D128 + 4*(S128 + D256)",
 * "FSCALE*VL/128 + FFIXED").  On error returns PFLOPS_EINVAL with the reason
 * in msg (no file:line; the caller adds it). */
int pfc_formula_parse(const char *text, const struct pflops_pmu *pmu, struct pflops_term **terms, int *nterms,
		      char *msg, size_t msglen);

char *pfc_strdup(const char *s);
/* Merge two libpfm4 specs of one event ("EV:U1", "EV:U2") into one that
 * counts both, as libpfm4 allows: "EV:U1:U2" or a umask naming the union.
 * 0 and out filled, or -1. */
int pfc_encode_merge(const struct pflops_pmu *pmu, const char *a, const char *b, char *out, size_t len);
int pfc_class_from_name(const char *name); /* -1 if unknown */
/* Record libpfm4's x86 answers to f (NULL: stop), for presets/x86-libpfm.enc;
 * replay recorded ones for the PMUs this libpfm4 lacks (encode.c). */
struct pfc_builtin_rec;
void pfc_encode_record(FILE *f);
void pfc_encode_replay(const struct pfc_builtin_rec *r, int n);

/* Load this machine's topology (path NULL), or a recorded one: an hwloc
 * XML file or a CPUID dump directory, read in a child process and checked
 * (topo_load.c).  0 and *topo loaded, or an error naming path. */
struct hwloc_topology;
int pfc_topology_load(struct hwloc_topology **topo, const char *path, struct pflops_error *err);
/* Input files the user names (input.c): a regular file only (a FIFO, a
 * device or a directory is refused, and opening never waits on a FIFO),
 * at most max_mib MiB.  `what` names the kind in the error, plural
 * ("formula tables").  The caps, documented in docs/reliability.md: */
/* Sections of the preset table built into papi-flops' libpapi (pflops_gen
 * papi-csv --component) that the flops component loads itself under
 * PAPI_FLOPS_SOURCE=trace and model:PMU (then "papi-flops-model:PMU"). */
#define PF_PAPI_CPU_TRACE "papi-flops-trace"
#define PF_PAPI_CPU_MODEL "papi-flops-model:"

#define PF_MAX_TABLE_MIB 16	/* all of presets/ is 40 KB */
#define PF_MAX_PERFSTAT_MIB 256 /* a line is about 60 bytes: 4 million lines */
#define PF_MAX_TOPOLOGY_MIB 64	/* hwloc XML of a 384-PU Zen 4 machine: 320 KB */
#define PF_MAX_CPUID_MIB 1	/* one file of a CPUID dump: 1.3 KB on Skylake-SP */
FILE *pfc_input_open(const char *path, const char *what, unsigned max_mib, struct pflops_error *err);
/* The same checks on a path another library opens (hwloc). */
int pfc_input_check(const char *path, const char *what, unsigned max_mib, struct pflops_error *err);
/* For readers: an error when `bytes` read so far pass the cap (the file grew). */
int pfc_input_too_big(const char *path, const char *what, unsigned max_mib, unsigned long long bytes,
		      struct pflops_error *err);
/* hwloc info NAME (CPUVendor, CPUModelNumber ...) of obj or its nearest
 * ancestor that has it; NULL if none (topo_load.c). */
struct hwloc_obj;
const char *pfc_obj_info(struct hwloc_obj *obj, const char *name);
#endif
