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

/* perf's duration_time is the run's wall time in ns; a larger one is no
 * run's (a run of 10 years), and a GFLOP/s from it would be nonsense */
#define MAX_DURATION_NS (10 * 365.25 * 86400 * 1e9)
/* events of one PMU in one file: perf stat -e takes a few hundred */
#define MAX_EVENTS 65536

struct rec {
	uint64_t key;
	uint64_t count; /* as written: perf's counts are whole numbers to 2^64-1 */
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
			continue; /* flags such as "u" or "k" */
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
	char *mod = strchr(ev, ':'); /* perf modifiers: ":u", ":uk" */
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

/* A counter value: a whole number of events that fits perf's u64, read
 * digit by digit (no double: 2^53+1 keeps its last digit). */
static int parse_count(const char *s, uint64_t *v)
{
	if (!*s || strspn(s, "0123456789") != strlen(s))
		return -1;
	errno = 0;
	unsigned long long u = strtoull(s, NULL, 10);
	*v = u;
	return errno == ERANGE ? -1 : 0;
}

/* "1,234,567,,r531f03,...": a count written with thousands separators
 * splits into fields of 1-3 digits, then of exactly 3.  perf stat -x
 * never writes them (it turns --big-num off and refuses -B), so the file
 * was not written by perf -x as it is. */
static int grouped_digits(char *const *field, int nf)
{
	size_t n0 = strlen(field[0]);
	if (nf < 2 || n0 < 1 || n0 > 3 || strspn(field[0], "0123456789") != n0)
		return 0;
	return strlen(field[1]) == 3 && strspn(field[1], "0123456789") == 3;
}

/* One event on two lines (twice in -e, or as ev:u and ev:k): the sum of
 * either line alone is wrong.  Sorted by key, then line: the pair whose
 * second line comes first, as a reader going down the file meets it. */
static int by_key(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	return x->key != y->key ? (x->key < y->key ? -1 : 1) : x->line - y->line;
}

static int twice(const char *path, const struct rec *recs, int n, struct pflops_error *err)
{
	if (n < 2)
		return 0;
	struct rec *s = malloc(n * sizeof(*s));
	if (!s)
		return pfc_err(err, PFLOPS_ENOMEM, "%s: out of memory", path);
	memcpy(s, recs, n * sizeof(*s));
	qsort(s, n, sizeof(*s), by_key);
	int first = -1;
	for (int i = 1; i < n; i++)
		if (s[i].key == s[i - 1].key && (first < 0 || s[i].line < s[first].line))
			first = i;
	int rc = 0;
	if (first >= 0)
		rc = pfc_err(
			err, PFLOPS_EINVAL,
			"%s:%d: %s is the event of line %d (%s) again; one event on two lines (twice in -e, or as :u and :k) cannot be summed right: record each event once, without modifiers",
			path, s[first].line, s[first].name, s[first - 1].line, s[first - 1].name);
	free(s);
	return rc;
}

static int parse_file(const char *path, const struct pflops_pmu *pmu, struct rec **recs, int *nrec, int *nother,
		      struct pflops_perfstat *out, struct pflops_error *err)
{
	FILE *f = pfc_input_open(path, "perf-stat files", PF_MAX_PERFSTAT_MIB, err);
	if (!f) {
		int code = err ? err->code : PFLOPS_EINVAL;
		if (err && code != PFLOPS_EINVAL) { /* the system's reason: say which file is meant */
			char why[PFLOPS_ERRMSG_MAX];
			snprintf(why, sizeof(why), "%s", err->msg);
			pfc_err(err, code, "%.400s; give the file perf stat -x, -o FILE wrote", why);
		}
		return code;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned long long bytes = 0;
	int ln = 0, rc = 0, rcap = 0;
	*recs = NULL;
	*nrec = *nother = 0;
	/* whole lines, however long: a comment's tail is never read as data */
	while (!rc && (len = getline(&line, &cap, f)) >= 0) {
		ln++;
		if ((rc = pfc_input_too_big(path, "perf-stat files", PF_MAX_PERFSTAT_MIB, bytes += len, err)))
			break;
		if (memchr(line, 0, len)) {
			rc = pfc_err(err, PFLOPS_EINVAL, "%s:%d: a NUL byte; not 'perf stat -x,' output", path, ln);
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
		if (grouped_digits(field, nf)) {
			rc = pfc_err(
				err, PFLOPS_EINVAL,
				"%s:%d: a count with thousands separators ('%s,%s...'); perf stat -x, never writes them (it turns --big-num off), so this is not perf's -x output as written: record with perf stat -x, -o FILE, or remove the separators",
				path, ln, field[0], field[1]);
			break;
		}
		/* perf does not quote: "cpu/event=0xc7,umask=0x3/" spans fields */
		while (nf > 3 && strchr(field[2], '/') && !strchr(strchr(field[2], '/') + 1, '/')) {
			field[3][-1] = ',';
			for (int k = 3; k < nf - 1; k++)
				field[k] = field[k + 1];
			nf--;
		}
		if (nf < 3 || !field[2][0]) {
			rc = pfc_err(
				err, PFLOPS_EINVAL,
				"%s:%d: not 'perf stat -x,' output (expected VALUE,UNIT,EVENT,...); record with: perf stat -x, -o FILE $(papi_flops_avail --perf) PROGRAM",
				path, ln);
			break;
		}
		struct rec r = { .line = ln, .pct = 100, .counted = 1 };
		snprintf(r.name, sizeof(r.name), "%s", field[2]);
		int id = identify(pmu, field[2], &r.key);
		/* a counter of ours counts whole events; other lines (task-clock
		 * in msec) may have a fraction, but no line has nan or a sign */
		double other = 0;
		if (field[0][0] == '<') {
			r.counted = 0; /* <not counted>, <not supported> */
		} else if (id == 0 ? parse_count(field[0], &r.count) : parse_number(field[0], &other)) {
			rc = pfc_err(
				err, PFLOPS_EINVAL,
				"%s:%d: bad count '%s' for %s; a count is a whole number from 0 to 2^64-1, as perf stat -x, prints it",
				path, ln, field[0], field[2]);
			break;
		}
		if (nf >= 5 && field[4][0] && (parse_number(field[4], &r.pct) || r.pct > 100)) {
			rc = pfc_err(
				err, PFLOPS_EINVAL,
				"%s:%d: bad running share '%s' for %s; the fifth field is a percentage from 0 to 100",
				path, ln, field[4], field[2]);
			break;
		}
		if (!strcmp(field[2], "duration_time") && r.counted) {
			if (strcmp(field[1], "ns") || other > MAX_DURATION_NS) {
				rc = pfc_err(
					err, PFLOPS_EINVAL,
					"%s:%d: duration_time '%s %s' is no run's wall time (perf writes it in ns, at most 10 years here); record it with perf stat -x, -e duration_time, or give --seconds",
					path, ln, field[0], field[1]);
				break;
			}
			if (out->seconds_line) {
				rc = pfc_err(
					err, PFLOPS_EINVAL,
					"%s:%d: a second duration_time (line %d has one): which is the run's wall time? keep one run's lines in the file",
					path, ln, out->seconds_line);
				break;
			}
			out->seconds = other / 1e9;
			out->seconds_line = ln;
		}
		if (id == -1)
			continue; /* another PMU's line (hybrid files) */
		if (id == -2) {
			(*nother)++; /* an event of no formula's (task-clock) */
			continue;
		}
		if (*nrec == MAX_EVENTS) {
			rc = pfc_err(
				err, PFLOPS_EINVAL,
				"%s:%d: more than %d events of %s; perf stat -x, writes one line per event: is this one run's output?",
				path, ln, MAX_EVENTS, pmu->name);
			break;
		}
		if (*nrec == rcap) {
			rcap = rcap ? 2 * rcap : 16;
			struct rec *nr = realloc(*recs, rcap * sizeof(*nr));
			if (!nr) {
				rc = pfc_err(err, PFLOPS_ENOMEM, "%s:%d: out of memory", path, ln);
				break;
			}
			*recs = nr;
		}
		(*recs)[(*nrec)++] = r;
	}
	if (!rc)
		rc = twice(path, *recs, *nrec, err);
	if (!rc && ferror(f))
		rc = pfc_err(err, PFLOPS_ESYS, "%s:%d: read error: %s", path, ln + 1, strerror(errno));
	free(line);
	fclose(f);
	if (!rc && !*nrec && !*nother)
		rc = pfc_err(err, PFLOPS_EINVAL,
			     "%s: no counter lines for %s (%s) in it; is it 'perf stat -x,' output?", path, pmu->name,
			     pmu->title);
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
	int n = 0, nother = 0, rc = parse_file(path, pmu, &recs, &n, &nother, out, err);
	if (rc)
		return rc;
	out->lines = n + nother;
	for (int m = 0; m < PFLOPS_NMETRIC && !rc; m++) {
		if (!(metrics & (1u << m)))
			continue;
		struct pflops_plan plan;
		if ((rc = pflops_plan_make(&plan, pmu, 1u << m, sve_bits, err)))
			break;
		double v = 0;
		/* the same sum in integers while every weight is whole (x86's
		 * are; Arm's VL/128 may not be): a double rounds past 2^53 */
		__int128 whole = 0;
		int exact = 1;
		for (int c = 0; c < plan.ncounters && !rc; c++) {
			const struct pflops_counter *ct = &plan.counter[c];
			const struct rec *r = find(recs, n, key_of(pmu, ct->config));
			unsigned __int128 count = 0;
			if (r) {
				if (!r->counted)
					rc = pfc_err(
						err, PFLOPS_EINVAL,
						"%s:%d: %s was not counted (%s needs it): the recording machine had no counter for it",
						path, r->line, r->name, pflops_metric_name(m));
				count = r->count;
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
						rc = pfc_err(
							err, PFLOPS_ENOENT,
							"%s: %s on %s needs %s (r%llx), which the file does not have%s; record with: perf stat -x, $(papi_flops_avail --arch %s --perf %s)",
							path, pflops_metric_name(m), pmu->name, ct->spec,
							(unsigned long long)ct->config, u ? " counted" : "", pmu->name,
							pflops_metric_name(m));
						break;
					}
					count += u->count;
					if (u->pct < out->min_pct)
						out->min_pct = u->pct;
				}
			}
			double w = ct->weight[m];
			v += w * (double)count;
			/* the table caps a weight at 1e6: the product fits 2^127 */
			if (fabs(w) <= 1e6 && w == (double)(long long)w)
				whole += (__int128)(long long)w * (__int128)count;
			else
				exact = 0;
		}
		if (!rc) {
			out->value[m] = exact ? (double)whole : v;
			if (exact && whole >= 0 && whole <= (__int128)UINT64_MAX) {
				out->whole[m] = (uint64_t)whole;
				out->metrics_whole |= 1u << m;
			}
			out->metrics |= 1u << m;
		}
	}
	free(recs);
	return rc;
}
