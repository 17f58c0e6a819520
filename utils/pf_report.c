#define _GNU_SOURCE /* sigabbrev_np */
/*
 * papi_flops_run's report in text, JSON and CSV (see pf_report.h).
 * FLOP metrics and the VEC_* instruction counts are kept apart in every
 * format, each count carries its unit and accuracy class, and a rate is
 * given only where the wall time is that of a native run.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include "pf_json.h"
#include "pf_report.h"
#include "pf_version.h"
#include "pflops_mask.h"
#include "pflops_trace.h"

void pf_report_note(struct pf_report *r, const char *fmt, ...)
{
	if (r->nnotes >= PF_REPORT_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->nnotes++], PF_REPORT_NOTE_LEN, fmt, ap);
	va_end(ap);
}

#define is_flop pflops_metric_is_flop

const char *pf_metric_unit(enum pflops_metric m)
{
	return pflops_metric_info(m)->unit;
}

unsigned pf_flop_metrics(void)
{
	unsigned set = 0;
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		set |= is_flop(m) ? 1u << m : 0;
	return set;
}

static enum pflops_class klass(const struct pf_report *r, int m)
{
	enum pflops_class c = r->pmu ? r->pmu->metrics[m].klass : PFLOPS_EXACT;
	if (c == PFLOPS_EXACT && (r->full_lanes >> m & 1))
		c = PFLOPS_MASKED_FULL;
	if (c != PFLOPS_UNAVAILABLE && (r->scaled >> m & 1))
		c = PFLOPS_ESTIMATE;
	return c;
}

static const char *caveat(const struct pf_report *r, int m)
{
	return r->pmu ? r->pmu->metrics[m].caveat : NULL;
}

static int has(const struct pf_report *r, int m)
{
	return (r->asked & r->got) >> m & 1;
}

static int missing(const struct pf_report *r, int m)
{
	return (r->asked & ~r->got) >> m & 1;
}

/* GFLOP/s of metric m, when it is a FLOP count over a native run */
static int rate(const struct pf_report *r, int m, double *g)
{
	if (!has(r, m) || !is_flop(m) || !r->wall_real || r->wall <= 0)
		return 0;
	*g = r->v[m] / r->wall / 1e9;
	return 1;
}

/* why a metric asked for has no value */
static const char *why_missing(const struct pf_report *r, int m)
{
	const char *c = caveat(r, m);
	return c ? c : "not measured by this source";
}

static int exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* metric m's count in decimal: as read where the source has the whole
 * number (a double rounds past 2^53), else v rounded */
static const char *count_digits(const struct pf_report *r, int m, char *buf, size_t len)
{
	if (r->wholes >> m & 1)
		snprintf(buf, len, "%" PRIu64, r->whole[m]);
	else
		snprintf(buf, len, "%.0f", r->v[m]);
	return buf;
}

/* the run ended by a signal: the tool's (interrupted) or the program's own
 * (a crash): the counts cover the run up to then */
static int partial(const struct pf_report *r)
{
	return r->interrupted || (r->status >= 0 && WIFSIGNALED(r->status));
}

static const char *sig_abbrev(int sig)
{
	return sigabbrev_np(sig) ? sigabbrev_np(sig) : "?";
}

static int in_job(const struct pf_report *r)
{
	return r->mpi && r->mpi->rank >= 0;
}

/* "16:40:01.123" UTC of a time in seconds since 1970 */
static const char *clock_str(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;
	gmtime_r(&s, &tm);
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%06.3f", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec + (t - (double)s));
	return buf;
}

/* "1234567" -> "1,234,567" */
static const char *group_digits(const char *d, char *buf, size_t len)
{
	size_t o = 0;
	if (*d == '-')
		buf[o++] = *d++;
	size_t n = strlen(d);
	for (size_t i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = 0;
	return buf;
}

/* 1234567.4 -> "1,234,567" */
static const char *grouped(double v, char *buf, size_t len)
{
	char digits[64];
	snprintf(digits, sizeof(digits), "%.0f", v);
	return group_digits(digits, buf, len);
}

/* ---- text ---------------------------------------------------------- */

static void text_run(FILE *o, const struct pf_report *r)
{
	fprintf(o, "papi_flops_run: %s", r->program ? r->program : "(no program run)");
	if (r->status >= 0) {
		char st[96] = "";
		pft_status_str(r->status, st, sizeof(st));
		fprintf(o, " (%s)", st);
	}
	fprintf(o, "\n");
	if (r->interrupted)
		fprintf(o, "interrupted : by SIG%s: the counts cover the run up to then (partial)\n",
			sigabbrev_np(r->interrupted) ? sigabbrev_np(r->interrupted) : "?");
	fprintf(o, "source      : %s%s%s\n", r->source, r->source_detail[0] ? ", " : "", r->source_detail);
	if (r->wall > 0)
		fprintf(o, "wall time   : %.3f s%s\n", r->wall, r->wall_real ? "" : " (traced run)");
}

/* in an MPI job: which rank, and when it ran (papi_flops_report merges) */
static void text_job(FILE *o, const struct pf_report *r)
{
	char t0[40], t1[40];
	if (!in_job(r))
		return;
	fprintf(o, "rank        : %d of ", r->mpi->rank);
	if (r->mpi->size >= 0)
		fprintf(o, "%d", r->mpi->size);
	else
		fprintf(o, "an unknown number");
	fprintf(o, " (%s), host %s\n", r->mpi->launcher, r->mpi->host);
	if (r->started > 0)
		fprintf(o, "ran         : %s to %s UTC\n", clock_str(r->started, t0, sizeof(t0)),
			clock_str(r->ended, t1, sizeof(t1)));
}

static void text_metric(FILE *o, const struct pf_report *r, int m)
{
	char num[64];
	if (missing(r, m)) {
		fprintf(o, "  %-9s %17s %-12s  %s\n", pflops_metric_name(m), "n/a", "",
			klass(r, m) == PFLOPS_UNAVAILABLE ? "unavailable" : "not measured");
		return;
	}
	char digits[64];
	fprintf(o, "  %-9s %17s %-12s  ", pflops_metric_name(m),
		group_digits(count_digits(r, m, digits, sizeof(digits)), num, sizeof(num)), pf_metric_unit(m));
	double g;
	if (rate(r, m, &g))
		fprintf(o, "%-12s %10.3f GFLOP/s\n", pflops_class_name(klass(r, m)), g);
	else
		fprintf(o, "%s\n", pflops_class_name(klass(r, m)));
	if (!(r->mask.corrected >> m & 1) || (r->v[m] == 0 && r->mask.est[m] == 0))
		return; /* nothing counted, nothing to correct */
	/* the sampled correction under the full-lane bound */
	char lo[64], hi[64], ex[64];
	const struct pf_mask *k = &r->mask;
	fprintf(o, "    sampled %17s %-12s  %s  95%% %s..%s, %.1f%% of lanes active",
		grouped(k->est[m], num, sizeof(num)), pf_metric_unit(m), PFC_CLASS_MASKED_SAMPLED,
		grouped(k->lo[m], lo, sizeof(lo)), grouped(k->hi[m], hi, sizeof(hi)),
		r->v[m] > 0 ? 100 * k->est[m] / r->v[m] : 100.0);
	if (k->have_exact >> m & 1)
		fprintf(o, "; exact (trace) %s", grouped(k->exact[m], ex, sizeof(ex)));
	fprintf(o, "\n");
}

static void text_metrics(FILE *o, const struct pf_report *r)
{
	int flops = 0, insts = 0;
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (r->asked >> m & 1) {
			flops += is_flop(m);
			insts += !is_flop(m);
		}
	if (flops) {
		fprintf(o, "\nFloating-point operations\n");
		for (int m = 0; m < PFLOPS_NMETRIC; m++)
			if (is_flop(m) && r->asked >> m & 1)
				text_metric(o, r, m);
	}
	if (insts) {
		fprintf(o, "\nPacked vector instructions (not FLOPs)\n");
		for (int m = 0; m < PFLOPS_NMETRIC; m++)
			if (!is_flop(m) && r->asked >> m & 1)
				text_metric(o, r, m);
	}
}

static void text_widths(FILE *o, const struct pf_report *r)
{
	if (!r->have_widths)
		return;
	char w[64];
	fprintf(o, "\nFLOPs by vector width (exact, all precisions)\n");
	for (int i = 0; i < PFLOPS_NWIDTH; i++) /* "  scalar 0, 128-bit 0, ..." */
		fprintf(o, "%s%s%s %s", i ? ", " : "  ", pflops_width_name(i), i != PFLOPS_SCALAR ? "-bit" : "",
			grouped(r->widths[i], w, sizeof(w)));
	fprintf(o, " FLOP\n");
}

/* the function column: "name (file)" */
void pf_func_label(const char *name, const char *object, int has_symbol, char *buf, size_t len)
{
	const char *base = object ? strrchr(object, '/') : NULL;
	if (has_symbol && object)
		snprintf(buf, len, "%s (%s)", name, base ? base + 1 : object);
	else
		snprintf(buf, len, "%s", name);
}

static void func_label(const struct pf_func_row *f, char *buf, size_t len)
{
	pf_func_label(f->name, f->object, f->has_symbol, buf, len);
}

static double share(const struct pf_report *r, const double *v)
{
	const struct pf_byfunc *b = &r->byfunc;
	return r->v[b->key] > 0 ? v[b->key] / r->v[b->key] : 0;
}

/* the text table's columns: the sort key, then the other metrics (a
 * sparse one, BF16, only where the run did any) */
static int text_column(const struct pf_report *r, int m)
{
	const struct pf_byfunc *b = &r->byfunc;
	return m != b->key && b->metrics >> m & 1 && (!pflops_metric_info(m)->sparse || r->v[m] != 0);
}

static void text_func_row(FILE *o, const struct pf_report *r, const double *v, const char *label)
{
	const struct pf_byfunc *b = &r->byfunc;
	char num[64];
	fprintf(o, "  %15s %6.1f%%", grouped(v[b->key], num, sizeof(num)), 100 * share(r, v));
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (text_column(r, m))
			fprintf(o, " %15s", grouped(v[m], num, sizeof(num)));
	fprintf(o, "  %s\n", label);
}

static void text_byfunc(FILE *o, const struct pf_report *r)
{
	const struct pf_byfunc *b = &r->byfunc;
	char label[600];
	if (!b->metrics)
		return;
	fprintf(o, "\nFLOPs by function (%s", b->values);
	if (r->pmu && !strcmp(b->values, "model"))
		fprintf(o, ": what %s's formulas read for each function's mix", r->pmu->name);
	if (!b->nfuncs) {
		fprintf(o, ")\n  no function did any\n");
		return;
	}
	if (b->nrows < b->nfuncs)
		fprintf(o, "; top %zu of %zu)\n", b->nrows, b->nfuncs);
	else
		fprintf(o, "; %zu function%s)\n", b->nfuncs, b->nfuncs == 1 ? "" : "s");
	fprintf(o, "  %15s %7s", pflops_metric_name(b->key), "share");
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (text_column(r, m))
			fprintf(o, " %15s", pflops_metric_name(m));
	fprintf(o, "  function\n");
	for (size_t i = 0; i < b->nrows; i++) {
		func_label(&b->rows[i], label, sizeof(label));
		text_func_row(o, r, b->rows[i].v, label);
	}
	if (b->nrows < b->nfuncs) {
		snprintf(label, sizeof(label), "(%zu more functions)", b->nfuncs - b->nrows);
		text_func_row(o, r, b->rest, label);
	}
}

static void text_mask(FILE *o, const struct pf_report *r)
{
	const struct pf_mask *k = &r->mask;
	char n[8][32];
	if (!k->period)
		return;
	fprintf(o, "\nMasked-lane sampling (docs/masked-lanes.md)\n  %s\n", k->method);
	fprintf(o, "  samples %s: used %s (%s under a mask), skid %s, no opmask %s, unreadable %s, mask changed %s",
		grouped((double)k->samples, n[0], 32), grouped((double)k->used, n[1], 32),
		grouped((double)k->masked, n[2], 32), grouped((double)k->skid, n[3], 32),
		grouped((double)k->nomask, n[4], 32), grouped((double)k->unreadable, n[5], 32),
		grouped((double)k->changed, n[6], 32));
	if (k->known_full)
		fprintf(o, ", in unmasked code %s", grouped((double)k->known_full, n[7], 32));
	if (k->lost)
		fprintf(o, ", lost %s", grouped((double)k->lost, n[7], 32));
	fprintf(o, "\n");
}

/* Each caveat once, after the metrics it applies to (DP_OPS and SP_OPS
 * often share one); then why missing metrics are missing; then the notes. */
static void text_caveats(FILE *o, const struct pf_report *r)
{
	int header = 0;
	unsigned done = 0;
	for (int m = 0; m < PFLOPS_NMETRIC; m++) {
		if (!(r->asked >> m & 1) || (done >> m & 1) || !caveat(r, m))
			continue;
		if (!header++)
			fprintf(o, "\nCaveats\n");
		fprintf(o, "  %s", pflops_metric_name(m));
		for (int n = m + 1; n < PFLOPS_NMETRIC; n++)
			if ((r->asked >> n & 1) && caveat(r, n) && !strcmp(caveat(r, n), caveat(r, m)) &&
			    has(r, n) == has(r, m)) {
				fprintf(o, ", %s", pflops_metric_name(n));
				done |= 1u << n;
			}
		fprintf(o, ": %s\n", missing(r, m) ? why_missing(r, m) : caveat(r, m));
	}
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (missing(r, m) && !caveat(r, m)) {
			if (!header++)
				fprintf(o, "\nCaveats\n");
			fprintf(o, "  %s: %s\n", pflops_metric_name(m), why_missing(r, m));
		}
	if (r->nnotes)
		fprintf(o, "\nNotes\n");
	for (int i = 0; i < r->nnotes; i++)
		fprintf(o, "  %s\n", r->notes[i]);
}

/* ---- JSON ---------------------------------------------------------- */

/* "key": {"METRIC": value, ...} over the metrics sel() picks */
static void json_map(FILE *o, const struct pf_report *r, const char *key, int (*sel)(const struct pf_report *, int),
		     void (*val)(FILE *, const struct pf_report *, int))
{
	fprintf(o, ", ");
	pf_json_str(o, key);
	fprintf(o, ": {");
	int first = 1;
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (sel(r, m)) {
			fprintf(o, "%s\"%s\": ", first ? "" : ", ", pflops_metric_name(m));
			val(o, r, m);
			first = 0;
		}
	fprintf(o, "}");
}

static int sel_has_rate(const struct pf_report *r, int m)
{
	double g;
	return rate(r, m, &g);
}

static void val_count(FILE *o, const struct pf_report *r, int m)
{
	char digits[64];
	fputs(count_digits(r, m, digits, sizeof(digits)), o);
}
static void val_unit(FILE *o, const struct pf_report *r, int m)
{
	pf_json_str(o, pf_metric_unit(m));
}
static void val_class(FILE *o, const struct pf_report *r, int m)
{
	pf_json_str(o, pflops_class_name(klass(r, m)));
}
static void val_why(FILE *o, const struct pf_report *r, int m)
{
	pf_json_str(o, why_missing(r, m));
}
static void val_rate(FILE *o, const struct pf_report *r, int m)
{
	double g = 0;
	rate(r, m, &g);
	fprintf(o, "%.6f", g);
}

static void json_mask(FILE *o, const struct pf_report *r)
{
	const struct pf_mask *k = &r->mask;
	if (!k->period)
		return;
	fprintf(o, ", \"masked_sampled\": {");
	for (int m = 0, first = 1; m < PFLOPS_NMETRIC; m++) {
		if (!(k->corrected >> m & 1) || !has(r, m))
			continue;
		fprintf(o,
			"%s\"%s\": {\"value\": %.0f, \"low\": %.0f, \"high\": %.0f, \"full_lanes\": %.0f, "
			"\"active_share\": %.6f",
			first ? "" : ", ", pflops_metric_name(m), k->est[m], k->lo[m], k->hi[m], r->v[m],
			r->v[m] > 0 ? k->est[m] / r->v[m] : 1.0);
		if (k->have_exact >> m & 1)
			fprintf(o, ", \"exact\": %.0f", k->exact[m]);
		fprintf(o, "}");
		first = 0;
	}
	fprintf(o, "}, \"mask_sampling\": {\"period\": %u, ", k->period);
	pf_json_kv(o, "method", k->method, 1);
	fprintf(o,
		"\"samples\": %llu, \"used\": %llu, \"masked\": %llu, \"skid\": %llu, \"no_opmask\": %llu, "
		"\"unreadable\": %llu, \"mask_changed\": %llu, \"in_unmasked_code\": %llu, \"lost\": %llu}",
		(unsigned long long)k->samples, (unsigned long long)k->used, (unsigned long long)k->masked,
		(unsigned long long)k->skid, (unsigned long long)k->nomask, (unsigned long long)k->unreadable,
		(unsigned long long)k->changed, (unsigned long long)k->known_full, (unsigned long long)k->lost);
}

static void json_func_values(FILE *o, const struct pf_report *r, const double *v)
{
	fprintf(o, "\"share\": %.6f", share(r, v));
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (r->byfunc.metrics >> m & 1)
			fprintf(o, ", \"%s\": %.0f", pflops_metric_name(m), v[m]);
}

static void json_byfunc(FILE *o, const struct pf_report *r)
{
	const struct pf_byfunc *b = &r->byfunc;
	if (!b->metrics)
		return;
	fprintf(o, ", \"by_function\": {");
	pf_json_kv(o, "values", b->values, 1);
	pf_json_kv(o, "sorted_by", pflops_metric_name(b->key), 1);
	fprintf(o, "\"functions\": %zu, \"listed\": %zu, \"rows\": [", b->nfuncs, b->nrows);
	for (size_t i = 0; i < b->nrows; i++) {
		const struct pf_func_row *f = &b->rows[i];
		char addr[32];
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)f->addr);
		fprintf(o, "%s{", i ? ", " : "");
		pf_json_kv(o, "function", f->name, 1);
		fprintf(o, "\"object\": ");
		pf_json_str_or_null(o, f->object);
		fprintf(o, ", \"symbol\": %s, ", f->has_symbol ? "true" : "false");
		pf_json_kv(o, "address", addr, 1);
		json_func_values(o, r, f->v);
		fprintf(o, "}");
	}
	fprintf(o, "], \"rest\": {\"functions\": %zu, ", b->nfuncs - b->nrows);
	json_func_values(o, r, b->rest);
	fprintf(o, "}}");
}

/* "region_threads": [{"tid", "role", "flops"}...], "region_threads_more" */
static void json_region(FILE *o, const struct pf_report *r)
{
	static const char *const role[] = { "caller", "pool", "running" };
	const struct pf_region_threads *g = &r->region;

	if (!g->n)
		return;
	fprintf(o, ", \"region_threads\": [");
	for (uint32_t i = 0; i < g->n; i++) {
		const struct pft_region_thread *e = &g->t[i];
		fprintf(o, "%s{\"tid\": %d, ", i ? ", " : "", (int)e->tid);
		pf_json_kv(o, "role", e->role >= 0 && e->role <= PFT_RT_RUNNING ? role[e->role] : "?", 1);
		fprintf(o, "\"flops\": %llu}", (unsigned long long)e->flops);
	}
	fprintf(o, "], \"region_threads_more\": {\"threads\": %llu, \"flops\": %llu}",
		(unsigned long long)g->more_threads, (unsigned long long)g->more_flops);
}

/* "engine": the trace engine's figures (docs/man/papi_flops_run.1,
 * OUTPUT): those of both engines, then the code cache's */
static void json_engine(FILE *o, const struct pf_report *r)
{
	/* by enum PFT_NC_* (PFT_NC_NONE: no reason); a new reason needs
	 * its key here and in the man page */
	_Static_assert(PFT_NC_N == 11, "a key for each PFT_NC_* reason");
	static const char *const why[PFT_NC_N] = {
		[PFT_NC_MASK] = "masked_syscall", [PFT_NC_MODE] = "stepped",	   [PFT_NC_GS] = "gs",
		[PFT_NC_WRITABLE] = "writable",	  [PFT_NC_REACH] = "out_of_reach", [PFT_NC_FULL] = "cache_full",
		[PFT_NC_NOTIFY] = "loader_hook",  [PFT_NC_OVF] = "overflow",	   [PFT_NC_REGION] = "region_entry",
		[PFT_NC_NOINJ] = "no_injection",
	};
	const struct pft_stats *s = &r->engine.st;
	const struct {
		const char *key;
		uint64_t v;
	} both[] = {
		{ "threads", s->threads },
		{ "stops", s->stops },
		{ "block_stops", s->block_stops },
		{ "syscall_stops", s->syscalls },
		{ "single_steps", s->steps },
		{ "blocks_decoded", s->blocks_decoded },
		{ "blocks_invalidated", s->invalidated },
		{ "pins", s->pins },
	}, cache[] = {
		{ "blocks_translated", s->cache_blocks },
		{ "blocks_ahead", s->ahead_blocks },
		{ "blocks_fork_given", s->fork_given },
		{ "blocks_hinted", s->hint_blocks },
		{ "loops_unrolled", s->cache_unrolled },
		{ "blocks_uncounted", s->cache_nocount },
		{ "cache_exits", s->cache_exits },
		{ "lookup_misses", s->ibl_misses },
		{ "table_renewed", s->table_renewed },
		{ "table_full", s->table_full },
		{ "links", s->cache_links },
		{ "links_fall_through", s->cache_falls },
		{ "futex_served", s->freq_served },
		{ "syscalls_fast", s->syscalls_fast },
		{ "syscall_traps", s->syscall_traps },
		{ "code_cache_bytes", s->cache_bytes },
		{ "address_space_bytes", s->cache_as_bytes },
		{ "stopping_path_processes", s->cache_setup_failed },
		{ "stopping_path_threads", s->slotless_threads },
		{ "seccomp_processes", s->seccomp },
		{ "seccomp_failed_calls", s->seccomp_failed },
	};
	int is_cache = s->engine == PFT_ENGINE_CACHE;

	if (!r->engine.have)
		return;
	fprintf(o, ", \"engine\": {");
	pf_json_kv(o, "name", is_cache ? "cache" : "stop", 0);
	if (r->engine.tracer_cpu >= 0)
		fprintf(o, ", \"tracer_cpu_seconds\": %.6f", r->engine.tracer_cpu);
	for (size_t i = 0; i < sizeof both / sizeof both[0]; i++)
		fprintf(o, ", \"%s\": %llu", both[i].key, (unsigned long long)both[i].v);
	if (is_cache) {
		for (size_t i = 0; i < sizeof cache / sizeof cache[0]; i++)
			fprintf(o, ", \"%s\": %llu", cache[i].key, (unsigned long long)cache[i].v);
		fprintf(o, ", \"stopping_path_blocks\": {");
		for (int k = 0, first = 1; k < PFT_NC_N; k++)
			if (why[k]) {
				fprintf(o, "%s\"%s\": %llu", first ? "" : ", ", why[k],
					(unsigned long long)s->nocache[k]);
				first = 0;
			}
		fprintf(o, "}");
	}
	fprintf(o, "}");
}

/* in an MPI job: "rank", "size" (null: unknown), "host", "launcher",
 * "killed_by" (the program's signal), "started", "ended" */
static void json_job(FILE *o, const struct pf_report *r)
{
	if (!in_job(r))
		return;
	fprintf(o, ", \"rank\": %d, \"size\": ", r->mpi->rank);
	if (r->mpi->size >= 0)
		fprintf(o, "%d, ", r->mpi->size);
	else
		fprintf(o, "null, ");
	pf_json_kv(o, "host", r->mpi->host, 1);
	pf_json_kv(o, "launcher", r->mpi->launcher, 0);
	if (r->status >= 0 && WIFSIGNALED(r->status))
		fprintf(o, ", \"killed_by\": \"SIG%s\"", sig_abbrev(WTERMSIG(r->status)));
	if (r->started > 0)
		fprintf(o, ", \"started\": %.6f, \"ended\": %.6f", r->started, r->ended);
}

static void json_write(FILE *o, const struct pf_report *r)
{
	fprintf(o, "{");
	pf_json_kv(o, "tool", "papi_flops_run", 1);
	pf_json_kv(o, "version", PF_VERSION, 1);
	pf_json_kv(o, "source", r->source, 1);
	pf_json_kv(o, "source_detail", r->source_detail, 1);
	pf_json_kv(o, "pmu", r->pmu ? r->pmu->name : "", 0);
	if (r->status >= 0) {
		fprintf(o, ", ");
		pf_json_kv(o, "program", r->program, 1);
		fprintf(o, "\"exit_status\": %d", exit_code(r->status));
	}
	if (r->wall > 0)
		fprintf(o, ", \"wall_seconds\": %.6f, \"wall_is_native\": %s", r->wall,
			r->wall_real ? "true" : "false");
	fprintf(o, ", \"partial\": %s", partial(r) ? "true" : "false");
	if (r->interrupted)
		fprintf(o, ", \"interrupted\": \"SIG%s\"",
			sigabbrev_np(r->interrupted) ? sigabbrev_np(r->interrupted) : "?");
	json_job(o, r);
	json_map(o, r, "metrics", has, val_count);
	json_map(o, r, "units", has, val_unit);
	json_map(o, r, "accuracy", has, val_class);
	json_map(o, r, "gflop_per_second", sel_has_rate, val_rate);
	json_map(o, r, "unavailable", missing, val_why);
	if (r->have_widths)
		for (int i = 0; i < PFLOPS_NWIDTH; i++)
			fprintf(o, "%s\"%s\": %.0f%s", i ? ", " : ", \"widths\": {", pflops_width_name(i), r->widths[i],
				i == PFLOPS_NWIDTH - 1 ? "}" : "");
	json_mask(o, r);
	json_byfunc(o, r);
	if (r->sample) {
		fprintf(o, ", \"sample\": ");
		r->sample_json(o, r->sample);
	}
	json_region(o, r);
	json_engine(o, r);
	fprintf(o, ", \"caveats\": [");
	int first = 1;
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (has(r, m) && caveat(r, m)) {
			char buf[600];
			snprintf(buf, sizeof(buf), "%s: %s", pflops_metric_name(m), caveat(r, m));
			fprintf(o, "%s", first ? "" : ", ");
			pf_json_str(o, buf);
			first = 0;
		}
	for (int i = 0; i < r->nnotes; i++) {
		fprintf(o, "%s", first ? "" : ", ");
		pf_json_str(o, r->notes[i]);
		first = 0;
	}
	fprintf(o, "]}\n");
}

/* ---- CSV: metric,value,unit,source,accuracy,caveat ------------------ */

/* one field, quoted (RFC 4180) when it holds the separator, a quote or a line break */
static void csv_field(FILE *o, const char *s, char sep, int last)
{
	s = s ? s : "";
	if (strchr(s, sep) || strpbrk(s, "\"\r\n")) {
		fputc('"', o);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', o);
			fputc(*s == '\n' || *s == '\r' ? ' ' : *s, o);
		}
		fputc('"', o);
	} else {
		fputs(s, o);
	}
	fputc(last ? '\n' : sep, o);
}

/* --by-function adds two columns to every row: function, object */
static int csv_wide;

static void csv_frow(FILE *o, char sep, const char *metric, const char *value, const char *unit, const char *source,
		     const char *accuracy, const char *cav, const char *function, const char *object)
{
	csv_field(o, metric, sep, 0);
	csv_field(o, value, sep, 0);
	csv_field(o, unit, sep, 0);
	csv_field(o, source, sep, 0);
	csv_field(o, accuracy, sep, 0);
	csv_field(o, cav, sep, !csv_wide);
	if (csv_wide) {
		csv_field(o, function, sep, 0);
		csv_field(o, object, sep, 1);
	}
}

static void csv_row(FILE *o, char sep, const char *metric, const char *value, const char *unit, const char *source,
		    const char *accuracy, const char *cav)
{
	csv_frow(o, sep, metric, value, unit, source, accuracy, cav, NULL, NULL);
}

/* per function: its share, then one row per metric */
static void csv_func(FILE *o, const struct pf_report *r, char sep, const char *src, const double *v, const char *fn,
		     const char *obj, const char *cav)
{
	const struct pf_byfunc *b = &r->byfunc;
	char num[64], mn[40];
	snprintf(mn, sizeof(mn), "%s.share", pflops_metric_name(b->key));
	snprintf(num, sizeof(num), "%.6f", share(r, v));
	csv_frow(o, sep, mn, num, "fraction", src, pflops_class_name(klass(r, b->key)), cav, fn, obj);
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (b->metrics >> m & 1) {
			snprintf(num, sizeof(num), "%.0f", v[m]);
			csv_frow(o, sep, pflops_metric_name(m), num, pf_metric_unit(m), src,
				 pflops_class_name(klass(r, m)), cav, fn, obj);
		}
}

static void csv_byfunc(FILE *o, const struct pf_report *r, char sep, const char *src)
{
	const struct pf_byfunc *b = &r->byfunc;
	char cav[96];
	for (size_t i = 0; i < b->nrows; i++)
		csv_func(o, r, sep, src, b->rows[i].v, b->rows[i].name, b->rows[i].object, NULL);
	if (b->nrows < b->nfuncs) {
		snprintf(cav, sizeof(cav), "%zu functions not listed, summed", b->nfuncs - b->nrows);
		csv_func(o, r, sep, src, b->rest, "(rest)", NULL, cav);
	}
}

/* in an MPI job: rank, size, host, launcher, start and end */
static void csv_job(FILE *o, const struct pf_report *r, char sep, const char *src)
{
	char num[64];
	if (!in_job(r))
		return;
	snprintf(num, sizeof(num), "%d", r->mpi->rank);
	csv_row(o, sep, "rank", num, "", src, "", NULL);
	if (r->mpi->size >= 0)
		snprintf(num, sizeof(num), "%d", r->mpi->size);
	csv_row(o, sep, "size", r->mpi->size >= 0 ? num : "", "", src, "", r->mpi->size >= 0 ? NULL : "unknown");
	csv_row(o, sep, "host", r->mpi->host, "", src, "", NULL);
	csv_row(o, sep, "launcher", r->mpi->launcher, "", src, "", NULL);
	if (r->status >= 0 && WIFSIGNALED(r->status)) {
		char sig[16];
		snprintf(sig, sizeof(sig), "SIG%s", sig_abbrev(WTERMSIG(r->status)));
		csv_row(o, sep, "killed_by", sig, "", src, "partial",
			"the program was killed: the counts cover its run up to then");
	}
	if (r->started > 0) {
		snprintf(num, sizeof(num), "%.6f", r->started);
		csv_row(o, sep, "started", num, "s since 1970 UTC", src, "", NULL);
		snprintf(num, sizeof(num), "%.6f", r->ended);
		csv_row(o, sep, "ended", num, "s since 1970 UTC", src, "", NULL);
	}
}

static void csv_write(FILE *o, const struct pf_report *r, char sep)
{
	char src[96], num[64];
	if (r->pmu && !strcmp(r->source, "model"))
		snprintf(src, sizeof(src), "model:%s", r->pmu->name);
	else
		snprintf(src, sizeof(src), "%s", r->source);
	csv_wide = r->byfunc.metrics != 0;
	csv_frow(o, sep, "metric", "value", "unit", "source", "accuracy", "caveat", "function", "object");
	if (r->interrupted) {
		char sig[16];
		snprintf(sig, sizeof(sig), "SIG%s", sigabbrev_np(r->interrupted) ? sigabbrev_np(r->interrupted) : "?");
		csv_row(o, sep, "interrupted", sig, "", src, "partial", "every count covers the run up to the signal");
	}
	csv_job(o, r, sep, src);
	/* FLOP metrics first, then the instruction counts */
	for (int pass = 0; pass < 2; pass++)
		for (int m = 0; m < PFLOPS_NMETRIC; m++) {
			if (!(r->asked >> m & 1) || is_flop(m) != !pass)
				continue;
			const char *name = pflops_metric_name(m), *cls = pflops_class_name(klass(r, m));
			if (missing(r, m)) {
				csv_row(o, sep, name, "", pf_metric_unit(m), src,
					klass(r, m) == PFLOPS_UNAVAILABLE ? cls : "not measured", why_missing(r, m));
				continue;
			}
			count_digits(r, m, num, sizeof(num));
			csv_row(o, sep, name, num, pf_metric_unit(m), src, cls, caveat(r, m));
			if (r->mask.corrected >> m & 1) { /* the sampled estimate, its interval */
				const struct pf_mask *k = &r->mask;
				char cav[200], mn[40];
				snprintf(cav, sizeof(cav),
					 "active lanes from opmask registers sampled every %u counts "
					 "(95%% interval in %s.low and %s.high)",
					 k->period, name, name);
				snprintf(num, sizeof(num), "%.0f", k->est[m]);
				csv_row(o, sep, name, num, pf_metric_unit(m), src, PFC_CLASS_MASKED_SAMPLED, cav);
				snprintf(mn, sizeof(mn), "%s.low", name);
				snprintf(num, sizeof(num), "%.0f", k->lo[m]);
				csv_row(o, sep, mn, num, pf_metric_unit(m), src, PFC_CLASS_MASKED_SAMPLED,
					"95% interval");
				snprintf(mn, sizeof(mn), "%s.high", name);
				snprintf(num, sizeof(num), "%.0f", k->hi[m]);
				csv_row(o, sep, mn, num, pf_metric_unit(m), src, PFC_CLASS_MASKED_SAMPLED,
					"95% interval");
				if (k->have_exact >> m & 1) {
					snprintf(mn, sizeof(mn), "%s.exact", name);
					snprintf(num, sizeof(num), "%.0f", k->exact[m]);
					csv_row(o, sep, mn, num, pf_metric_unit(m), src, "exact", "the trace's count");
				}
			}
			double g;
			if (rate(r, m, &g)) {
				snprintf(num, sizeof(num), "%.6f", g);
				csv_row(o, sep, name, num, "GFLOP/s", src, cls, caveat(r, m));
			}
		}
	if (r->wall > 0) {
		snprintf(num, sizeof(num), "%.6f", r->wall);
		csv_row(o, sep, "wall_time", num, "s", src, "",
			r->wall_real ? NULL : "the traced run's time, the tracer's own work included");
	}
	for (int i = 0; r->have_widths && i < PFLOPS_NWIDTH; i++) {
		char wname[32]; /* FLOP_scalar, FLOP_128bit ... */
		snprintf(wname, sizeof(wname), "FLOP_%s%s", pflops_width_name(i), i != PFLOPS_SCALAR ? "bit" : "");
		snprintf(num, sizeof(num), "%.0f", r->widths[i]);
		csv_row(o, sep, wname, num, "FLOP", src, "exact", "all precisions, by vector width");
	}
	csv_byfunc(o, r, sep, src);
	for (int i = 0; i < r->nnotes; i++)
		csv_row(o, sep, "note", "", "", src, "", r->notes[i]);
}

const char *pf_grouped(double v, char *buf, size_t len)
{
	return grouped(v, buf, len);
}

void pf_csv_field(FILE *o, const char *s, char sep, int last)
{
	csv_field(o, s, sep, last);
}

void pf_report_write(FILE *o, const struct pf_report *r, enum pf_format f, char sep)
{
	switch (f) {
	case PF_FORMAT_JSON:
		json_write(o, r);
		break;
	case PF_FORMAT_CSV:
		csv_write(o, r, sep);
		break;
	default:
		text_run(o, r);
		text_job(o, r);
		text_metrics(o, r);
		text_widths(o, r);
		text_mask(o, r);
		text_byfunc(o, r);
		if (r->sample)
			r->sample_text(o, r->sample);
		text_caveats(o, r);
		break;
	}
	fflush(o);
}
