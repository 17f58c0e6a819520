/*
 * The perf-stat source: read `perf stat -x,` output and compute metrics
 * with the table's formulas.  Lines are matched to the plan's counters by
 * event-select code, so a file recorded with the codes
 * `papi_flops_avail --perf` prints, with other raw spellings, or with
 * perf's symbolic names all work.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflops_internal.h"

/* Event select, umask, edge, inv, cmask, AMD's extended event bits: what
 * identifies an event; the privilege and enable flags do not. */
#define X86_KEY 0xff84ffffULL | (0xfULL << 32)

struct rec {
	uint64_t key;
	double value;
	double pct;
	int line;
	int counted;
	char name[128];
};

static uint64_t key_of(const struct pflops_pmu *pmu, uint64_t config)
{
	return pmu->arch == PFLOPS_ARCH_X86 ? config & (X86_KEY) : config & 0xffff;
}

static int hexval(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 16);
	return errno || end == s ? -1 : (int)(end - s);
}

/* "event=0xc7,umask=0x1" or "config=0x5301c7" or "r5301c7" -> config.
 * An Arm PMU's event= is the whole 16-bit number (format config:0-15). */
static int parse_terms(const char *s, int arm, uint64_t *cfg)
{
	uint64_t ev = 0, um = 0, c;
	int have = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	if (buf[0] == 'r' && hexval(buf + 1, &c) > 0 && !buf[1 + hexval(buf + 1, &c)]) {
		*cfg = c;
		return 0;
	}
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		if (!eq)
			continue;	/* flags such as "u" or "k" */
		*eq = 0;
		uint64_t v = strtoull(eq + 1, NULL, 0);
		if (!strcmp(t, "config")) {
			*cfg = v;
			return 0;
		}
		if (!strcmp(t, "event")) {
			ev = v;
			have = 1;
		} else if (!strcmp(t, "umask")) {
			um = v;
		}
	}
	if (!have)
		return -1;
	/* AMD's event select bits 8-11 live at 32-35 */
	*cfg = arm ? ev : (ev & 0xff) | ((ev >> 8) & 0xf) << 32 | (um & 0xff) << 8;
	return 0;
}

/* Identify one recorded event on pmu.  -1: foreign PMU (skip), -2: unknown */
static int identify(const struct pflops_pmu *pmu, const char *name, uint64_t *key)
{
	char ev[256];
	snprintf(ev, sizeof(ev), "%s", name);
	char *slash = strchr(ev, '/');
	uint64_t cfg;
	if (slash) {
		*slash = 0;
		/* hybrid files hold one line per core PMU (cpu_core, cpu_atom,
		 * cpu_lowpower); ours is pmu->sysfs.  An Arm core's PMU is named
		 * armv8_pmuv3_N (ACPI) or after the core (device tree; the
		 * kernel's arm_pmuv3.c: armv8_neoverse_v2, armv9_neoverse_n2) */
		int arm = pmu->arch == PFLOPS_ARCH_ARM && (!strncmp(ev, "armv8_", 6) || !strncmp(ev, "armv9_", 6));
		if (strcmp(ev, pmu->sysfs) && strcmp(ev, "cpu") && !arm)
			return -1;
		char *inner = slash + 1, *end = strchr(inner, '/');
		if (end)
			*end = 0;
		if (parse_terms(inner, pmu->arch == PFLOPS_ARCH_ARM, &cfg))
			return -2;
		*key = key_of(pmu, cfg);
		return 0;
	}
	char *mod = strchr(ev, ':');	/* perf modifiers: ":u", ":uk" */
	if (mod && mod[1] && strspn(mod + 1, "ukhGHpPS") == strlen(mod + 1))
		*mod = 0;
	if (ev[0] == 'r' && parse_terms(ev, pmu->arch == PFLOPS_ARCH_ARM, &cfg) == 0) {
		*key = key_of(pmu, cfg);
		return 0;
	}
	/* perf's symbolic names are Intel's: EVENT.UMASK, any case */
	for (char *p = ev; *p; p++)
		*p = *p == '.' ? ':' : (char)toupper((unsigned char)*p);
	if (pflops_encode(pmu, ev, &cfg, NULL, 0, NULL))
		return -2;
	*key = key_of(pmu, cfg);
	return 0;
}

/* A number perf prints: finite, not negative, nothing after it. */
static int parse_number(const char *s, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return end == s || *end || errno == ERANGE || !isfinite(*v) || *v < 0 || signbit(*v) ? -1 : 0;
}

/* A counter value: a whole number of events that fits perf's u64. */
static int parse_count(const char *s, double *v)
{
	if (!*s || strspn(s, "0123456789") != strlen(s))
		return -1;
	errno = 0;
	unsigned long long u = strtoull(s, NULL, 10);
	*v = (double)u;
	return errno == ERANGE ? -1 : 0;
}

static int parse_file(const char *path, const struct pflops_pmu *pmu, struct rec **recs, int *nrec,
		      struct pflops_error *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return pf_err(err, PFLOPS_ESYS, "%s: cannot open: %s; give the file perf stat -x, -o FILE wrote", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int ln = 0, rc = 0;
	*recs = NULL;
	*nrec = 0;
	/* whole lines, however long: a comment's tail is never read as data */
	while (!rc && (len = getline(&line, &cap, f)) >= 0) {
		ln++;
		if (memchr(line, 0, len)) {
			rc = pf_err(err, PFLOPS_EINVAL, "%s:%d: a NUL byte; not 'perf stat -x,' output", path, ln);
			break;
		}
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		char *field[8] = { 0 };
		int nf = 0;
		for (char *p = line; nf < 8;) {
			field[nf++] = p;
			char *c = strchr(p, ',');
			if (!c)
				break;
			*c = 0;
			p = c + 1;
		}
		/* perf does not quote: "cpu/event=0xc7,umask=0x3/" spans fields */
		while (nf > 3 && strchr(field[2], '/') && !strchr(strchr(field[2], '/') + 1, '/')) {
			field[3][-1] = ',';
			for (int k = 3; k < nf - 1; k++)
				field[k] = field[k + 1];
			nf--;
		}
		if (nf < 3 || !field[2][0]) {
			rc = pf_err(err, PFLOPS_EINVAL,
				    "%s:%d: not 'perf stat -x,' output (expected VALUE,UNIT,EVENT,...); record with: perf stat -x, -o FILE $(papi_flops_avail --perf) PROGRAM",
				    path, ln);
			break;
		}
		struct rec r = { .line = ln, .pct = 100, .counted = 1 };
		snprintf(r.name, sizeof(r.name), "%s", field[2]);
		int id = identify(pmu, field[2], &r.key);
		/* a counter of ours counts whole events; other lines (task-clock
		 * in msec) may have a fraction, but no line has nan or a sign */
		if (field[0][0] == '<') {
			r.counted = 0;	/* <not counted>, <not supported> */
		} else if (id == 0 ? parse_count(field[0], &r.value) : parse_number(field[0], &r.value)) {
			rc = pf_err(err, PFLOPS_EINVAL,
				    "%s:%d: bad count '%s' for %s; a count is a whole number from 0 to 2^64-1, as perf stat -x, prints it",
				    path, ln, field[0], field[2]);
			break;
		}
		if (nf >= 5 && field[4][0] && (parse_number(field[4], &r.pct) || r.pct > 100)) {
			rc = pf_err(err, PFLOPS_EINVAL,
				    "%s:%d: bad running share '%s' for %s; the fifth field is a percentage from 0 to 100",
				    path, ln, field[4], field[2]);
			break;
		}
		if (id == -1)
			continue;	/* another PMU's line (hybrid files) */
		if (id == -2)
			r.key = ~0ULL;	/* kept so a needed-but-unknown event can be named */
		struct rec *nr = realloc(*recs, (*nrec + 1) * sizeof(*nr));
		if (!nr) {
			rc = pf_err(err, PFLOPS_ENOMEM, "out of memory");
			break;
		}
		*recs = nr;
		nr[(*nrec)++] = r;
	}
	if (!rc && ferror(f))
		rc = pf_err(err, PFLOPS_ESYS, "%s:%d: read error: %s", path, ln + 1, strerror(errno));
	free(line);
	fclose(f);
	if (!rc && !*nrec)
		rc = pf_err(err, PFLOPS_EINVAL, "%s: no counter lines for %s (%s) in it; is it 'perf stat -x,' output?",
			    path, pmu->name, pmu->title);
	if (rc) {
		free(*recs);
		*recs = NULL;
	}
	return rc;
}

static const struct rec *find(const struct rec *r, int n, uint64_t key)
{
	for (int i = 0; i < n; i++)
		if (r[i].key == key)
			return &r[i];
	return NULL;
}

int pflops_perfstat_read(const char *path, const struct pflops_pmu *pmu, unsigned metrics, int sve_bits,
			 struct pflops_perfstat *out, struct pflops_error *err)
{
	memset(out, 0, sizeof(*out));
	out->min_pct = 100;
	struct rec *recs = NULL;
	int n = 0, rc = parse_file(path, pmu, &recs, &n, err);
	if (rc)
		return rc;
	out->lines = n;
	for (int m = 0; m < PFLOPS_NMETRIC && !rc; m++) {
		if (!(metrics & (1u << m)))
			continue;
		struct pflops_plan plan;
		if ((rc = pflops_plan_make(&plan, pmu, 1u << m, sve_bits, err)))
			break;
		double v = 0;
		for (int c = 0; c < plan.ncounters && !rc; c++) {
			const struct pflops_counter *ct = &plan.counter[c];
			const struct rec *r = find(recs, n, key_of(pmu, ct->config));
			double count = 0;
			if (r) {
				if (!r->counted)
					rc = pf_err(err, PFLOPS_EINVAL, "%s:%d: %s was not counted (%s needs it): the recording machine had no counter for it",
						    path, r->line, r->name, pflops_metric_name(m));
				count = r->value;
				if (r->pct < out->min_pct)
					out->min_pct = r->pct;
			} else {
				/* recorded umask by umask instead of merged */
				for (int e = 0; e < ct->nevents && !rc; e++) {
					uint64_t cfg;
					const struct pflops_event *ev = &pmu->events[ct->events[e]];
					if ((rc = pflops_encode(pmu, ev->spec, &cfg, NULL, 0, err)))
						break;
					const struct rec *u = find(recs, n, key_of(pmu, cfg));
					if (!u || !u->counted) {
						rc = pf_err(err, PFLOPS_ENOENT,
							    "%s: %s on %s needs %s (r%llx), which the file does not have%s; record with: perf stat -x, $(papi_flops_avail --arch %s --perf %s)",
							    path, pflops_metric_name(m), pmu->name, ct->spec,
							    (unsigned long long)ct->config, u ? " counted" : "", pmu->name,
							    pflops_metric_name(m));
						break;
					}
					count += u->value;
					if (u->pct < out->min_pct)
						out->min_pct = u->pct;
				}
			}
			v += ct->weight[m] * count;
		}
		if (!rc) {
			out->value[m] = v;
			out->metrics |= 1u << m;
		}
	}
	free(recs);
	return rc;
}
