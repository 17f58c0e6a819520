/*
 * Event encoding: libpfm4 where it knows the PMU (any x86 PMU, active or
 * not, through LIBPFM_ENCODE_INACTIVE), the table's raw code otherwise.
 * The result is the full event-select code with user and kernel counting,
 * the form `perf stat -e rNNNNNN` and seed 001 use (0x530110 on SNB).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfmon/pfmlib.h>
#include "pflops_internal.h"
#include "pflops_builtin.h"

/* x86 event-select bits: USR | OS | INT | EN, as libpfm4 sets them for PLM0|PLM3 */
#define X86_EVTSEL_FLAGS 0x530000ULL

/* libpfm4 holds the PMUs of the architecture it is built for only: an
 * aarch64 build has no x86 PMU to encode the table's named x86 events. */
#if defined(__x86_64__)
#define HOST_ARCH PFLOPS_ARCH_X86
#define HOST_ARCH_NAME "x86-64"
#else
#define HOST_ARCH PFLOPS_ARCH_ARM
#define HOST_ARCH_NAME "aarch64"
#endif

static int pfm_ready;

/* libpfm4's answers for another architecture's PMUs (pflops_builtin.h):
 * recorded by pflops_gen x86-enc, replayed where this libpfm4 lacks them */
static FILE *record;
static const struct pfc_builtin_rec *replay;
static int nreplay;

void pfc_encode_record(FILE *f)
{
	record = f;
}

void pfc_encode_replay(const struct pfc_builtin_rec *r, int n)
{
	replay = r;
	nreplay = n;
}

static const struct pfc_builtin_rec *replayed(const struct pflops_pmu *pmu, const char *a, const char *b)
{
	for (int i = 0; i < nreplay; i++)
		if (!strcmp(replay[i].pmu, pmu->name) && !strcmp(replay[i].a, a) &&
		    (b ? replay[i].b && !strcmp(replay[i].b, b) : !replay[i].b))
			return &replay[i];
	return NULL;
}

int pflops_encode_init(struct pflops_error *err)
{
	if (pfm_ready)
		return 0;
	/* Lets libpfm4 encode for PMUs other than this CPU's (tables, --arch).
	 * It is read once at initialization; when PAPI initialized libpfm4
	 * first, only the active PMU encodes, which is all a component needs. */
	setenv("LIBPFM_ENCODE_INACTIVE", "1", 0);
	int rc = pfm_initialize();
	if (rc != PFM_SUCCESS)
		return pfc_err(err, PFLOPS_EENCODE, "libpfm4 failed to initialize: %s", pfm_strerror(rc));
	pfm_ready = 1;
	return 0;
}

static int raw_value(const char *spec, uint64_t *v)
{
	char *end;
	*v = strtoull(spec + 4, &end, 16);
	return *end ? -1 : 0;
}

int pflops_encode(const struct pflops_pmu *pmu, const char *spec, uint64_t *config, char *fstr, size_t fstrlen,
		  struct pflops_error *err)
{
	if (!strncmp(spec, "raw:", 4)) {
		uint64_t v;
		if (raw_value(spec, &v))
			return pfc_err(err, PFLOPS_EINVAL, "bad raw code '%s'", spec);
		*config = pmu->arch == PFLOPS_ARCH_X86 ? v | X86_EVTSEL_FLAGS : v;
		if (fstr)
			snprintf(fstr, fstrlen, "%s", spec);
		return 0;
	}
	if (!pmu->libpfm[0])
		return pfc_err(err, PFLOPS_EENCODE,
			       "pmu %s has no libpfm4 name, so '%s' cannot be encoded; write it as raw:0xCODE",
			       pmu->name, spec);
	int rc = pflops_encode_init(err);
	if (rc)
		return rc;
	char full[256];
	snprintf(full, sizeof(full), "%s::%s", pmu->libpfm, spec);
	pfm_pmu_encode_arg_t arg;
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	char *fs = NULL;
	arg.fstr = &fs;
	rc = pfm_get_os_event_encoding(full, PFM_PLM0 | PFM_PLM3, PFM_OS_NONE, &arg);
	if (rc != PFM_SUCCESS) {
		free(arg.codes);
		free(fs);
		/* the PMU inactive in this process's libpfm4: the build's encoding */
		for (int e = 0; e < pmu->nevents; e++)
			if (pmu->events[e].built_config && !strcmp(pmu->events[e].spec, spec)) {
				*config = pmu->events[e].built_config;
				if (fstr)
					snprintf(fstr, fstrlen, "%s", spec);
				return 0;
			}
		const struct pfc_builtin_rec *r = pmu->arch != HOST_ARCH ? replayed(pmu, spec, NULL) : NULL;
		if (r) {
			*config = r->config;
			if (fstr)
				snprintf(fstr, fstrlen, "%s", r->out);
			return 0;
		}
		if (pmu->arch != HOST_ARCH)
			return pfc_err(err, PFLOPS_EENCODE,
				       "pmu %s: '%s' is named for libpfm4, whose %s build has no %s PMU to encode it; "
				       "a papi-flops built on %s lists it",
				       pmu->name, spec, HOST_ARCH_NAME, pmu->arch == PFLOPS_ARCH_X86 ? "x86" : "Arm",
				       pmu->arch == PFLOPS_ARCH_X86
					       ? "x86-64 (or presets/x86-libpfm.enc regenerated there)"
					       : "aarch64");
		return pfc_err(err, PFLOPS_EENCODE, "libpfm4 cannot encode '%s': %s", full, pfm_strerror(rc));
	}
	*config = arg.count ? arg.codes[0] : 0;
	/* canonical name: drop "pmu::" and the ":mod=value" list libpfm4 appends */
	char canon[256];
	const char *n = fs ? fs : full;
	const char *colons = strstr(n, "::");
	snprintf(canon, sizeof(canon), "%s", colons ? colons + 2 : n);
	for (char *q = canon; (q = strchr(q, ':')); q++)
		if (strchr(q + 1, '=') && (!strchr(q + 1, ':') || strchr(q + 1, '=') < strchr(q + 1, ':'))) {
			*q = 0;
			break;
		}
	if (fstr)
		snprintf(fstr, fstrlen, "%s", canon);
	if (record && pmu->arch == PFLOPS_ARCH_X86)
		fprintf(record, "enc\t%s\t%s\t0x%llx\t%s\n", pmu->name, spec, (unsigned long long)*config, canon);
	free(arg.codes);
	free(fs);
	return 0;
}

int pflops_table_check_encodings(const struct pflops_table *t, struct pflops_error *err)
{
	int rc = pflops_encode_init(err);
	if (rc)
		return rc;
	for (int i = 0; i < t->npmus; i++) {
		const struct pflops_pmu *p = &t->pmus[i];
		if (p->libpfm[0]) {
			pfm_pmu_info_t info;
			int found = 0, k;
			pfm_for_all_pmus(k)
			{
				memset(&info, 0, sizeof(info));
				info.size = sizeof(info);
				if (pfm_get_pmu_info(k, &info) == PFM_SUCCESS && !strcmp(info.name, p->libpfm))
					found = 1;
			}
			if (!found && p->arch == HOST_ARCH)
				return pfc_err(
					err, PFLOPS_EENCODE,
					"%s:%d: pmu %s: this libpfm4 (%d.%d) has no PMU '%s'; write 'libpfm none' and raw:0xCODE events",
					p->file, p->line, p->name, PFM_MAJ_VERSION(pfm_get_version()),
					PFM_MIN_VERSION(pfm_get_version()), p->libpfm);
		}
		for (int e = 0; e < p->nevents; e++) {
			uint64_t cfg;
			struct pflops_error e2;
			if (pflops_encode(p, p->events[e].spec, &cfg, NULL, 0, &e2))
				return pfc_err(err, PFLOPS_EENCODE, "%s:%d: pmu %s event %s: %s", p->file,
					       p->events[e].line, p->name, p->events[e].alias, e2.msg);
		}
	}
	return 0;
}

/* Code of umask `name` of event index idx; -1 if absent. */
static int umask_code(int idx, const char *name, uint64_t *code)
{
	pfm_event_info_t info;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (pfm_get_event_info(idx, PFM_OS_NONE, &info) != PFM_SUCCESS)
		return -1;
	for (int i = 0; i < info.nattrs; i++) {
		pfm_event_attr_info_t a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		if (pfm_get_event_attr_info(idx, i, PFM_OS_NONE, &a) == PFM_SUCCESS && a.type == PFM_ATTR_UMASK &&
		    !strcmp(a.name, name)) {
			*code = a.code;
			return 0;
		}
	}
	return -1;
}

/* Name of the umask of event idx whose code is `code`; NULL if none. */
static const char *umask_named(int idx, uint64_t code)
{
	pfm_event_info_t info;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (pfm_get_event_info(idx, PFM_OS_NONE, &info) != PFM_SUCCESS)
		return NULL;
	for (int i = 0; i < info.nattrs; i++) {
		pfm_event_attr_info_t a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		if (pfm_get_event_attr_info(idx, i, PFM_OS_NONE, &a) == PFM_SUCCESS && a.type == PFM_ATTR_UMASK &&
		    a.code == code)
			return a.name;
	}
	return NULL;
}

static int encode_merge(const struct pflops_pmu *pmu, const char *a, const char *b, char *out, size_t len);

int pfc_encode_merge(const struct pflops_pmu *pmu, const char *a, const char *b, char *out, size_t len)
{
	if (pmu->arch != HOST_ARCH) { /* what libpfm4 answered where it has this PMU */
		const struct pfc_builtin_rec *r = replayed(pmu, a, b);
		return r && (size_t)snprintf(out, len, "%s", r->out) < len ? 0 : -1;
	}
	int rc = encode_merge(pmu, a, b, out, len);
	if (!rc && record && pmu->arch == PFLOPS_ARCH_X86)
		fprintf(record, "merge\t%s\t%s\t%s\t%s\n", pmu->name, a, b, out);
	return rc;
}

static int encode_merge(const struct pflops_pmu *pmu, const char *a, const char *b, char *out, size_t len)
{
	const char *ca = strchr(a, ':'), *cb = strchr(b, ':');
	if (!pmu->libpfm[0] || !ca || !cb || ca - a != cb - b || strncmp(a, b, ca - a))
		return -1;
	uint64_t cfg;
	/* 1. libpfm4 accepts the umasks together */
	if ((size_t)snprintf(out, len, "%s%s", a, cb) < len && !pflops_encode(pmu, out, &cfg, NULL, 0, NULL))
		return 0;
	/* 2. libpfm4 names their union (icx's 4_FLOPS = 128B_PACKED_SINGLE | 256B_PACKED_DOUBLE) */
	char ev[256];
	snprintf(ev, sizeof(ev), "%s::%.*s", pmu->libpfm, (int)(ca - a), a);
	int idx = pfm_find_event(ev);
	if (idx < 0)
		return -1;
	uint64_t code = 0;
	char list[256];
	snprintf(list, sizeof(list), "%s%s", ca, cb);
	for (char *save = NULL, *u = strtok_r(list, ":", &save); u; u = strtok_r(NULL, ":", &save)) {
		uint64_t c;
		if (umask_code(idx, u, &c))
			return -1;
		code |= c;
	}
	const char *name = umask_named(idx, code);
	if (!name || (size_t)snprintf(out, len, "%.*s:%s", (int)(ca - a), a, name) >= len)
		return -1;
	return pflops_encode(pmu, out, &cfg, NULL, 0, NULL) ? -1 : 0;
}
