/*
 * flops: a PAPI component giving FLOP counts (flops:::FP_OPS, DP_OPS ...)
 * from the papi-flops formula table.  A thin front end: the table, probe,
 * planner (core/) decide which native events and weights; the counting
 * engine (core/count_perf.c) opens and reads them through perf_event.
 *
 * Native event code: flops_plan.h (an entry: a pflops_metric, or a status
 * event: SCALED, UNCOVERED_NS, the table's detect status; a width and a
 * precision qualifier).  Names: core/pflops_evname.h.  Which kinds, and an
 * event set's plan on them: flops_plan.c.
 *
 * What users must hear is printed on stderr once per process, without
 * PAPI_VERBOSE (TAU, HPCToolkit and papi_command_line users see nothing
 * else): why a metric is unavailable, why an event set does not fit the
 * counters and what does, and FLOPs a reduced plan detected but did not
 * weight.
 *
 * Where the counts come from (PAPI_FLOPS_SOURCE, read at init):
 *   hw         the perf_event counters through the table's formulas;
 *   trace      exact counts by a helper process tracing this one
 *              (core/pub_helper.c): each thread reads its own counts
 *              from shared memory without a system call (core/pub.c);
 *   model:PMU  that trace read through PMU's formulas (core/model.c):
 *              what a PAPI user on that CPU reads, with its classes.
 * The trace sources count the thread's instructions between the
 * snapshots of PAPI_start and PAPI_read; the component's own FP work
 * (formulas in double) is measured between two snapshots of each read
 * and taken out, so a loop of N FLOPs reads N.
 *
 * Without counter access (no PMU exposed, perf_event_paranoid) the hw
 * source stays in PAPI_EDELAY_INIT: PAPI 7.0 enumerates, names and
 * describes the events of such a component (it refuses all that for a
 * disabled one), papi_component_avail prints the probe's sentence as the
 * disabled reason, and PAPI_start fails with PAPI_ENOSUPP / PAPI_EPERM.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/perf_event.h>

#include "papi.h"
#include "papi_internal.h"
#include "papi_vector.h"
#include "papi_preset.h"
#include "extras.h"
#include "threads.h"
#include "linux-context.h"

#include "core/papi_flops.h"
#include "core/pflops_evname.h"
#include "core/pflops_internal.h"
#include "core/pflops_count.h"
#include "core/pflops_perf.h"
#include "flops_overflow.h"
#include "flops_plan.h"
#include "core/pflops_pub.h"
#include "core/pflops_pub_helper.h"
#include "core/pflops_trace.h"
#include <sys/syscall.h>
#include <unistd.h>

papi_vector_t _flops_vector;

#define FL_SCALED PFC_EV_SCALED
#define FL_UNCOVERED PFC_EV_UNCOVERED
#define FL_DETECT PFC_EV_DETECT
#define FL_NENTRY PFC_EV_NENTRY
#define FL_MAX_FLOPS_EVENTS PFLOPS_NMETRIC /* one planner metric slot each */
#define FL_MAX_EVENTS (FL_MAX_FLOPS_EVENTS + 3)
#define FL_OVF_SIGNAL (SIGRTMIN + 3) /* perf_event's is SIGRTMIN + 2: both may overflow in one process */

enum { FL_SRC_HW, FL_SRC_TRACE, FL_SRC_MODEL };

static struct {
	int source;	     /* FL_SRC_*: PAPI_FLOPS_SOURCE */
	struct pfc_pub *pub; /* trace sources: the helper's counts */
	pthread_mutex_t pub_lock;
	struct pflops_table table;
	struct pfc_count_kinds ks; /* the core kinds we count on (core/pflops_count.h) */
	int nmi_watchdog;
	int access;		/* PFLOPS_OK or the probe's verdict */
	int papi_access;	/* the PAPI error PAPI_start returns without access */
	int multiplex_env;	/* PAPI_FLOPS_MULTIPLEX=1: multiplex what does not fit */
	char detect_status[32]; /* status event of a kind's detect rule, "" none */
} fl;

struct fl_context {
	int unused;
};

struct fl_control {
	int nevents;
	unsigned code[FL_MAX_EVENTS];
	int nflops;		    /* FLOP entries: planner metric slots 0..nflops-1 */
	int slot_of[FL_MAX_EVENTS]; /* event -> planner slot, -1 for status events */
	struct pfc_count cnt;	    /* the hw source's plans and perf events (core/pflops_count.h) */
	int domain;
	int multiplex;
	unsigned long tid; /* attached thread, 0 = self */
	long long values[FL_MAX_EVENTS];
	struct flo_state ovf; /* PAPI_overflow (flops_overflow.c) */
	/* trace sources */
	pid_t ttid; /* the thread counted */
	int hint;   /* its record (pfc_pub_read) */
	int running;
	struct pflops_mix start;   /* its counts at PAPI_start / reset */
	struct pflops_mix own;	   /* the component's own work since */
	struct pflops_mix a, b, d; /* scratch */
	/* PAPI_overflow under trace: the weight, the thread's record */
	uint32_t ovf_sel; /* PFC_PUB_OVF_SEL of the event */
	int ovf_hint;
	int ovf_armed; /* its period is in the helper's hands */
};

/* One sentence on stderr, once per process for each distinct text. */
static void say_once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say_once(const char *fmt, ...)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t said[64];
	static int nsaid;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (const char *c = msg; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	pthread_mutex_lock(&lock);
	int seen = 0;
	for (int i = 0; i < nsaid && !seen; i++)
		seen = said[i] == h;
	if (!seen && nsaid < 64)
		said[nsaid++] = h;
	pthread_mutex_unlock(&lock);
	if (!seen)
		fprintf(stderr, "PAPI flops component: %s\n", msg);
}

/* The one place the disabled reason is written. */
static void fl_set_reason(int disabled, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fl_set_reason(int disabled, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(_flops_vector.cmp_info.disabled_reason, sizeof(_flops_vector.cmp_info.disabled_reason), fmt, ap);
	va_end(ap);
	_flops_vector.cmp_info.disabled = disabled;
}

static int papi_code(int pflops_rc)
{
	switch (pflops_rc) {
	case PFLOPS_OK:
		return PAPI_OK;
	case PFLOPS_ENOMEM:
		return PAPI_ENOMEM;
	case PFLOPS_ESYS:
		return PAPI_ESYS;
	case PFLOPS_ENOENT:
		return PAPI_ENOEVNT;
	case PFLOPS_EUNAVAIL:
		return PAPI_ENOEVNT;
	case PFLOPS_EPERM:
		return PAPI_EPERM;
	case PFLOPS_ENOPMU:
		return PAPI_ENOSUPP;
	case PFLOPS_ECNFLCT:
		return PAPI_ECNFLCT;
	case PFLOPS_ENOCPU:
		return PAPI_ENOSUPP;
	default:
		return PAPI_EINVAL;
	}
}

/* ---- qualifiers (bits 4-11 of a code: 0 none, else 1 + the enum) ---- */

static int qualifier_ok(const struct pflops_pmu *p, int m, unsigned wq, unsigned pq)
{
	return pfc_count_qualifier_ok(p, m, (int)wq - 1, (int)pq - 1);
}

/* Which entries exist: a metric when some kind has it (qualifiers: when
 * they split it there); status events always, the detect status when a
 * kind has a detect rule.  known: also metrics no kind can count (named,
 * described with the reason, refused when added). */
static int code_ok(unsigned code, int known)
{
	unsigned e = FLO_ENTRY(code), wq = FLO_WQ(code), pq = FLO_PQ(code);
	if (code & ~0xfffu || e >= FL_NENTRY || wq > PFLOPS_NWIDTH || pq > PFLOPS_NPREC)
		return 0;
	if (fl.source == FL_SRC_TRACE) {
		/* the trace tells every width and precision apart: a width
		 * the metric counts, a precision of one of all precisions */
		if (e >= PFLOPS_NMETRIC)
			return !wq && !pq && e != FL_DETECT;
		const struct pflops_metric_info *mi = pflops_metric_info(e);
		if (pq && (mi->prec >= 0 || wq))
			return 0;
		return !wq || mi->widths >> (wq - 1) & 1;
	}
	if (e >= PFLOPS_NMETRIC)
		return !wq && !pq && (e != FL_DETECT || fl.detect_status[0]);
	for (int k = 0; k < fl.ks.n; k++) {
		const struct pflops_pmu *p = fl.ks.kind[k].pmu;
		if (!p)
			continue;
		if (!wq && !pq && (known || p->metrics[e].klass != PFLOPS_UNAVAILABLE))
			return 1;
		if (p->metrics[e].klass != PFLOPS_UNAVAILABLE && qualifier_ok(p, e, wq, pq))
			return 1;
	}
	return 0;
}

static int code_valid(unsigned code)
{
	return code_ok(code, 0);
}

/* Why no kind counts metric e (the table's caveat of each). */
static void unavailable_reason(unsigned e, char *out, size_t len)
{
	size_t l = snprintf(out, len, "%s cannot be counted here", pflops_metric_name(e));
	for (int k = 0; k < fl.ks.n && l < len; k++) {
		const struct pflops_pmu *p = fl.ks.kind[k].pmu;
		if (p)
			l += snprintf(out + l, len - l, "%s on %s: %s", k ? ";" : ":", p->title[0] ? p->title : p->name,
				      p->metrics[e].caveat ? p->metrics[e].caveat : "no formula");
	}
}

/* ---- component setup ---- */

/* What every source tells PAPI once its kinds are chosen. */
static void set_info(PAPI_component_info_t *ci)
{
	fl.detect_status[0] = 0;
	for (int k = 0; k < fl.ks.n && !fl.detect_status[0]; k++)
		if (fl.ks.kind[k].pmu && fl.ks.kind[k].pmu->detect.line)
			snprintf(fl.detect_status, sizeof(fl.detect_status), "%s", fl.ks.kind[k].pmu->detect.status);
	int nev = 0;
	for (unsigned e = 0; e < FL_NENTRY; e++)
		nev += code_valid(e);
	ci->num_native_events = nev;
	ci->num_cntrs = FL_MAX_EVENTS;
	ci->num_mpx_cntrs = FL_MAX_EVENTS;
	ci->kernel_multiplex = 1;
	ci->attach = 1;
	ci->attach_must_ptrace = 0;
	ci->available_domains = PAPI_DOM_USER | PAPI_DOM_KERNEL;
	ci->default_domain = PAPI_DOM_USER;
	ci->available_granularities = PAPI_GRN_THR;
	ci->default_granularity = PAPI_GRN_THR;
	snprintf(ci->support_version, sizeof(ci->support_version), "%s",
		 fl.source == FL_SRC_TRACE ? "trace"
		 : fl.ks.kind[0].pmu	   ? fl.ks.kind[0].pmu->name
					   : "?");
}

/* PAPI_FLOPS_SOURCE: 0, or a PAPI error with the disabled reason set. */
static int choose_source(void)
{
	const char *src = getenv("PAPI_FLOPS_SOURCE");
	fl.source = FL_SRC_HW;
	if (!src || !*src || !strcmp(src, "hw"))
		return PAPI_OK;
	if ((!strcmp(src, "trace") || !strncmp(src, "model:", 6)) && pft_unavailable()) {
		fl_set_reason(PAPI_ENOSUPP, "PAPI_FLOPS_SOURCE=%.60s: %s; unset it to count with the hardware counters",
			      src, pft_unavailable());
		return PAPI_ENOSUPP;
	}
	if (!strcmp(src, "trace")) {
		fl.source = FL_SRC_TRACE;
		return PAPI_OK;
	}
	if (!strncmp(src, "model:", 6)) {
		const struct pflops_pmu *p = pflops_table_find(&fl.table, src + 6);
		if (!p) {
			fl_set_reason(
				PAPI_ENOSUPP,
				"PAPI_FLOPS_SOURCE=%.60s: no PMU '%.40s' in the formula table; 'papi_flops_avail --arch all' lists them",
				src, src + 6);
			return PAPI_ENOSUPP;
		}
		fl.source = FL_SRC_MODEL;
		flo_add_kind(&fl.ks, p, 0, 0, 0, -1);
		return PAPI_OK;
	}
	fl_set_reason(
		PAPI_ENOSUPP,
		"PAPI_FLOPS_SOURCE=%.60s is no source: use hw (the counters, the default), trace (exact, by a tracing helper, no counters needed) or model:PMU (the trace read through PMU's formulas)",
		src);
	return PAPI_ENOSUPP;
}

/* Trace sources: PAPI_FP_OPS, PAPI_DP_OPS ... on this component's events,
 * whatever PMU perf_event detects (none where libpfm4 does not know the
 * CPU): its own section of the preset table, every metric under trace,
 * the PMU's under model:PMU.  perf_event, initialized later, keeps them
 * (patches/papi-component-own-presets.patch).  A PAPI_CSV_EVENT_FILE
 * without the section leaves the presets to perf_event, as before. */
static void load_presets(int cidx)
{
	char cpu[64];
	snprintf(cpu, sizeof(cpu), "%s%.40s", fl.source == FL_SRC_TRACE ? PF_PAPI_CPU_TRACE : PF_PAPI_CPU_MODEL,
		 fl.source == FL_SRC_TRACE ? "" : fl.ks.kind[0].pmu->name);
	_papi_load_preset_table(cpu, 0, cidx);
}

static int fl_init_component(int cidx)
{
	struct pflops_error err = { 0 };
	PAPI_component_info_t *ci = &_flops_vector.cmp_info;
	ci->CmpIdx = cidx;
	memset(&fl.ks, 0, sizeof(fl.ks));
	if (pflops_table_builtin(&fl.table, &err)) {
		fl_set_reason(PAPI_ENOSUPP, "formula table: %s", err.msg);
		return PAPI_ENOSUPP;
	}
	int src_rc = choose_source();
	if (src_rc)
		return src_rc;
	const char *mpx = getenv("PAPI_FLOPS_MULTIPLEX");
	fl.multiplex_env = mpx && !strcmp(mpx, "1");
	if (mpx && *mpx && strcmp(mpx, "0") && strcmp(mpx, "1"))
		say_once(
			"PAPI_FLOPS_MULTIPLEX=%.40s is neither 0 nor 1: taken as 0 (sets that do not fit the counters are refused); set it to 1 to multiplex them",
			mpx);
	if (fl.source != FL_SRC_HW) {
		/* counted by the helper's trace: no counter, no probe */
		pthread_mutex_init(&fl.pub_lock, NULL);
		fl.access = PFLOPS_OK;
		set_info(ci);
		if (fl.source == FL_SRC_TRACE)
			snprintf(
				ci->description, sizeof(ci->description), "%s",
				"FLOP counts (FP_OPS, DP_OPS ...), exact: a helper traces this process (PAPI_FLOPS_SOURCE=trace)");
		else
			snprintf(
				ci->description, sizeof(ci->description),
				"FLOP counts (FP_OPS, DP_OPS ...): the trace read through %.20s's formulas (PAPI_FLOPS_SOURCE=model:%.20s)",
				fl.ks.kind[0].pmu->name, fl.ks.kind[0].pmu->name);
		ci->disabled = PAPI_OK;
		ci->disabled_reason[0] = 0;
		/* PAPI_overflow: the helper stops the thread at the FP
		 * instruction that crosses each multiple, and sends the
		 * signal with its address (trace_ovf_arm, trace_dispatch);
		 * model:PMU refuses it (fl_set_overflow) */
		ci->hardware_intr = 1;
		ci->hardware_intr_sig = FL_OVF_SIGNAL;
		load_presets(cidx);
		return PAPI_OK;
	}
	struct pflops_probe pr;
	if (pflops_probe_run(&pr, &fl.table, NULL, &err)) {
		fl_set_reason(PAPI_ENOSUPP, "probe: %s", err.msg);
		return PAPI_ENOSUPP;
	}
	fl.nmi_watchdog = pr.nmi_watchdog;
	int rc = flo_choose_kinds(&fl.ks, &fl.table, &pr, -1, &err);
	if (rc) {
		rc = rc == PFLOPS_ENOMEM ? PAPI_ENOMEM : PAPI_ENOSUPP;
		if (pft_unavailable())
			fl_set_reason(rc, "%s", err.msg);
		else
			fl_set_reason(rc,
				      "%s (PAPI_FLOPS_SOURCE=trace counts FLOPs exactly without counters or formulas)",
				      err.msg);
		return rc;
	}
	set_info(ci);

	/* hybrid kinds open on their own PMU: its type from sysfs */
	fl.access = pr.access.code;
	ci->hardware_intr = 1; /* PAPI_overflow: perf sampling, flops_overflow.c */
	ci->hardware_intr_sig = FL_OVF_SIGNAL;
	if (flo_standin(NULL)) {
		fl.access = PFLOPS_OK;
		say_once(
			"PAPI_FLOPS_TEST_SWEVENT=%s: every native event opens as that perf software event (a test stand-in: the values are not FLOPs)",
			getenv("PAPI_FLOPS_TEST_SWEVENT"));
	}
	if (fl.access == PFLOPS_OK && (rc = pfc_count_kinds_types(&fl.ks, &err))) {
		fl.access = rc;
		snprintf(pr.access.msg, sizeof(pr.access.msg), "%.250s", err.msg);
		snprintf(pr.access.fix, sizeof(pr.access.fix),
			 "check PAPI_FLOPS_PMU against the hybrid PMUs of this machine");
	}
	if (fl.access != PFLOPS_OK) {
		/* events stay listed (delayed init), counting is refused */
		fl.papi_access = fl.access == PFLOPS_EPERM ? PAPI_EPERM : PAPI_ENOSUPP;
		fl_set_reason(
			PAPI_EDELAY_INIT, "events listed, counting impossible: %s; fix: %s%s", pr.access.msg,
			pr.access.fix,
			fl.access != PFLOPS_ENOPMU ? ""
			: pft_unavailable()
				? " (no count without counters here: the trace source is x86-64 only for now)"
				: " (without counters, set PAPI_FLOPS_SOURCE=trace: this component then counts FLOPs exactly through a tracing helper)");
		return PAPI_OK;
	}
	ci->disabled = PAPI_OK;
	ci->disabled_reason[0] = 0;
	return PAPI_OK;
}

static int fl_shutdown_component(void)
{
	if (fl.pub)
		pfc_pub_helper_stop(); /* every thread let go, untraced */
	pflops_table_free(&fl.table);
	memset(&fl, 0, sizeof(fl));
	return PAPI_OK;
}

static int fl_init_thread(hwd_context_t *ctx)
{
	return PAPI_OK;
}

static int fl_shutdown_thread(hwd_context_t *ctx)
{
	return PAPI_OK;
}

static int fl_init_control_state(hwd_control_state_t *c)
{
	struct fl_control *ctl = (struct fl_control *)c;
	memset(ctl, 0, sizeof(*ctl));
	ctl->domain = _flops_vector.cmp_info.default_domain;
	ctl->multiplex = fl.multiplex_env;
	return PAPI_OK;
}

static void close_set(struct fl_control *ctl)
{
	flo_disarm(&ctl->ovf);
	pfc_count_close(&ctl->cnt);
}

static int fl_cleanup_eventset(hwd_control_state_t *c)
{
	close_set((struct fl_control *)c);
	flo_release(&((struct fl_control *)c)->ovf, FL_OVF_SIGNAL);
	return PAPI_OK;
}

/* ---- planning ---- */

static int fl_code_to_name(unsigned int code, char *name, int len);

/* Plan the event set's FLOP entries on every kind (flops_plan.c): an
 * entry some kind does not count, or a set over the counters without the
 * multiplex switch, is refused with one sentence on stderr. */
static int replan(struct fl_control *ctl)
{
	char msg[PAPI_HUGE_STR_LEN];
	close_set(ctl);
	int rc = flo_plan_set(&ctl->cnt, &fl.ks, ctl->code, ctl->slot_of, ctl->nevents, ctl->nflops, ctl->multiplex,
			      fl.nmi_watchdog, msg, sizeof(msg));
	if (rc)
		say_once("%s", msg);
	/* a metric one kind of this machine lacks: not supported here */
	return rc == PFLOPS_EUNAVAIL ? PAPI_ENOSUPP : papi_code(rc);
}

/* ---- the trace sources ---- */

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* model:PMU: every event the plans open has a model line (a `none` one
 * cannot be modelled: as on a machine where it cannot be counted). */
static int model_check(struct fl_control *ctl)
{
	static const struct pflops_mix zero;
	for (int k = 0; k < fl.ks.n; k++)
		for (int c = 0; ctl->cnt.planned[k] && c < ctl->cnt.plan[k].ncounters; c++)
			for (int e = 0; e < ctl->cnt.plan[k].counter[c].nevents; e++) {
				const struct pflops_pmu *p = fl.ks.kind[k].pmu;
				const struct pflops_event *ev = &p->events[ctl->cnt.plan[k].counter[c].events[e]];
				struct pflops_error err = { 0 };
				double n;
				if (!ev->model || pfc_model_eval(ev->model, &zero, &n, &err)) {
					say_once(
						"PAPI_FLOPS_SOURCE=model:%s: event %s has no model of what it counts (%s): the set cannot be modelled",
						p->name, ev->alias, ev->model ? err.msg : "no model line in the table");
					return PAPI_ENOEVNT;
				}
			}
	return PAPI_OK;
}

/* The counted thread's counts now. */
static int trace_snap(struct fl_control *ctl, struct pflops_mix *m)
{
	int rc = pfc_pub_read(fl.pub, ctl->ttid, &ctl->hint, m);
	if (rc == PFLOPS_ESYS) {
		say_once("PAPI_FLOPS_SOURCE=trace: the tracing helper stopped counting this process: %s",
			 fl.pub->lost ? "more threads or code blocks than its shared memory holds" : fl.pub->msg);
		return PAPI_ESYS;
	}
	return PAPI_OK;
}

/* model:PMU: each planned counter as PMU would count the mix d, into
 * ctl->cnt.slots (the layout the hw source reads its counters into). */
static int model_slots(struct fl_control *ctl, const struct pflops_mix *d)
{
	for (int i = 0; i < ctl->cnt.nslots; i++)
		ctl->cnt.slots[i] = 0;
	for (int k = 0; k < fl.ks.n; k++)
		for (int c = 0; ctl->cnt.planned[k] && c < ctl->cnt.plan[k].ncounters; c++)
			for (int e = 0; e < ctl->cnt.plan[k].counter[c].nevents; e++) {
				const struct pflops_event *ev =
					&fl.ks.kind[k].pmu->events[ctl->cnt.plan[k].counter[c].events[e]];
				struct pflops_error err = { 0 };
				double n = 0;
				if (pfc_model_eval(ev->model, d, &n, &err)) {
					say_once("%s", err.msg);
					return PAPI_EINVAL;
				}
				ctl->cnt.slots[ctl->cnt.counter_slot[k][c]] += n;
			}
	return PAPI_OK;
}

/* Every entry of the set from the mix ctl->d (this read's counts). */
static int trace_values(struct fl_control *ctl)
{
	int rc;
	if (fl.source == FL_SRC_MODEL && ctl->cnt.nev && (rc = model_slots(ctl, &ctl->d)))
		return rc;
	for (int i = 0; i < ctl->nevents; i++) {
		unsigned e = FLO_ENTRY(ctl->code[i]), wq = FLO_WQ(ctl->code[i]), pq = FLO_PQ(ctl->code[i]);
		double v = 0;
		if (fl.source == FL_SRC_MODEL && ctl->cnt.nev) {
			if (ctl->slot_of[i] >= 0)
				v = pfc_count_value(&ctl->cnt, ctl->slot_of[i]);
			else if (e == FL_DETECT)
				v = pfc_count_detected(&ctl->cnt);
		} else if (fl.source == FL_SRC_TRACE && e < PFLOPS_NMETRIC) {
			double m[PFLOPS_NMETRIC];
			ctl->a = ctl->d;
			pfc_mix_keep(&ctl->a, (int)wq - 1, (int)pq - 1);
			pflops_mix_metrics(&ctl->a, m);
			v = m[e];
		}
		ctl->values[i] = (long long)(v + 0.5);
	}
	return PAPI_OK;
}

/* This read: counts since start less the component's own work so far;
 * the work of this evaluation is measured and kept for the next. */
static int trace_read(struct fl_control *ctl)
{
	int rc = trace_snap(ctl, &ctl->b);
	if (rc)
		return rc;
	pfc_mix_sub(&ctl->d, &ctl->b, &ctl->start);
	pfc_mix_sub(&ctl->d, &ctl->d, &ctl->own);
	rc = trace_values(ctl);
	/* ctl->b: before; ctl->a: after (trace_values is done with it) */
	if (trace_snap(ctl, &ctl->a) == PAPI_OK) {
		pfc_mix_sub(&ctl->d, &ctl->a, &ctl->b);
		pfc_mix_add(&ctl->own, &ctl->d);
	}
	return rc;
}

/* The model's counters are laid out as the hw source's (no perf open). */
static int model_layout(struct fl_control *ctl)
{
	struct pflops_error err = { 0 };
	int rc = pfc_count_layout(&ctl->cnt, &err);
	if (rc)
		say_once("%s", err.msg);
	return rc == PFLOPS_ENOMEM ? PAPI_ENOMEM : rc ? PAPI_ECOUNT : PAPI_OK;
}

/* PAPI_overflow under trace (core/pflops_pub.h): the period goes to the
 * helper through this thread's record, at the system call that ends
 * here (the helper restarts the thread's count at its stop).  The
 * process's one weight and the number of sets overflowing on it are one
 * word, changed by compare-and-swap: as two words, threads starting
 * their sets at once (PAPI's overflow_pthreads) saw each other's count
 * before the weight, and one was refused as if it overflowed another
 * event.  (No lock: PAPI_stop may come from a signal handler.) */
static uint64_t fl_ovf_word; /* weight << 32 | sets overflowing on it */

/* one more (+1) or one fewer (-1) set overflowing on sel; 0, or -1
 * when another weight has sets */
static int ovf_users_add(uint32_t sel, int d)
{
	uint64_t old = __atomic_load_n(&fl_ovf_word, __ATOMIC_ACQUIRE), nw;
	do {
		uint32_t n = (uint32_t)old;
		if (d > 0 && n > 0 && (uint32_t)(old >> 32) != sel)
			return -1;
		nw = (uint64_t)sel << 32 | (uint32_t)(n + (uint32_t)d);
	} while (!__atomic_compare_exchange_n(&fl_ovf_word, &old, nw, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	return 0;
}

static int trace_ovf_arm(struct fl_control *ctl, int on)
{
	int pos = -1;
	for (int i = 0; i < ctl->nevents && i < FLO_MAX_EVENTS; i++)
		if (ctl->ovf.threshold[i] > 0)
			pos = i;
	if (on && pos < 0)
		return PAPI_OK;
	if (on && ctl->ttid != gettid_()) {
		say_once(
			"PAPI_overflow under PAPI_FLOPS_SOURCE=trace overflows the thread that starts the set; this set "
			"counts thread %d: start it in that thread",
			(int)ctl->ttid);
		return PAPI_EINVAL;
	}
	struct pfc_pub_ovf *r = pfc_pub_ovf_find(fl.pub, ctl->ttid, on, &ctl->ovf_hint);
	if (!r) {
		if (!on)
			return PAPI_OK;
		say_once("PAPI_overflow under PAPI_FLOPS_SOURCE=trace: more than %d threads overflow in this process",
			 PFC_PUB_THREADS);
		return PAPI_ENOMEM;
	}
	if (on) {
		if (ovf_users_add(ctl->ovf_sel, ctl->ovf_armed ? 0 : 1)) {
			say_once(
				"PAPI_overflow under PAPI_FLOPS_SOURCE=trace: another running event set of this process "
				"overflows on another flops event; the trace overflows one kind of FLOP at a time: stop it first");
			return PAPI_ECNFLCT;
		}
		__atomic_store_n(&fl.pub->ovf_sel, ctl->ovf_sel, __ATOMIC_RELEASE);
		fl.pub->ovf_signal = FL_OVF_SIGNAL;
		r->tail = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		r->period = (uint64_t)ctl->ovf.threshold[pos];
		ctl->ovf_armed = 1; /* (armed already: PAPI_reset, the count restarts) */
	} else {
		if (!ctl->ovf_armed)
			return PAPI_OK;
		r->period = 0;
		ovf_users_add(ctl->ovf_sel, -1);
		ctl->ovf_armed = 0;
	}
	__atomic_add_fetch(&r->gen, 1, __ATOMIC_RELEASE);
	syscall(PFLOPS_TRACE_REARM_SYSCALL); /* the helper takes the period at this stop */
	return PAPI_OK;
}

/* The overflow signal under trace: the crossing's address from the
 * thread's record.  0: not ours (PAPI_OVERFLOW_FORCE_SW: PAPI's timer). */
static int trace_dispatch(hwd_siginfo_t *si, void *uc)
{
	int cidx = _flops_vector.cmp_info.CmpIdx;
	ThreadInfo_t *thread = _papi_hwi_lookup_thread(0);
	if (!thread || !thread->running_eventset[cidx])
		return 1; /* left over after PAPI_stop */
	EventSetInfo_t *ESI = thread->running_eventset[cidx];
	if (!ESI->overflow.flags)
		return 1;
	if (ESI->overflow.flags & PAPI_OVERFLOW_FORCE_SW)
		return 0;
	struct fl_control *ctl = (struct fl_control *)ESI->ctl_state;
	struct pfc_pub_ovf *r = fl.pub ? pfc_pub_ovf_find(fl.pub, ctl->ttid, 0, &ctl->ovf_hint) : NULL;
	int pos = -1;
	for (int i = 0; i < ctl->nevents && i < FLO_MAX_EVENTS; i++)
		if (ctl->ovf.threshold[i] > 0)
			pos = i;
	if (!r || pos < 0)
		return 1;
	uint64_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), t = r->tail;
	if (t >= h)
		return 1; /* no crossing for it (an overwritten ring) */
	if (h - t > PFC_PUB_OVF_RING)
		t = h - PFC_PUB_OVF_RING;
	uint64_t addr = r->addr[t % PFC_PUB_OVF_RING];
	r->tail = t + 1;
	_papi_hwi_context_t ctx;
	ctx.si = si;
	ctx.ucontext = (hwd_ucontext_t *)uc;
	_papi_hwi_dispatch_overflow_signal(&ctx, (vptr_t)(uintptr_t)addr, NULL, 1LL << pos, 0, &thread, cidx);
	return 1;
}

static int trace_start(struct fl_control *ctl)
{
	char why[PAPI_HUGE_STR_LEN];
	pthread_mutex_lock(&fl.pub_lock);
	int rc = pfc_pub_helper_start(&fl.pub, why, sizeof(why));
	pthread_mutex_unlock(&fl.pub_lock);
	if (rc) {
		say_once("PAPI_FLOPS_SOURCE=trace: %s", why);
		return PAPI_ESYS;
	}
	if (ctl->tid) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/task/%lu", ctl->tid);
		if (access(path, F_OK)) {
			say_once(
				"PAPI_FLOPS_SOURCE=%s counts the threads of this process only; thread %lu is not one: count other processes with papi_flops_run --source trace --pid PID",
				fl.source == FL_SRC_TRACE ? "trace" : "model", ctl->tid);
			return PAPI_EINVAL;
		}
	}
	if (fl.source == FL_SRC_MODEL && !ctl->cnt.slots && (rc = model_layout(ctl)))
		return rc;
	ctl->ttid = ctl->tid ? (pid_t)ctl->tid : gettid_();
	ctl->hint = -1;
	memset(ctl->values, 0, sizeof(ctl->values));
	memset(&ctl->own, 0, sizeof(ctl->own));
	ctl->running = 1;
	if (flo_active(&ctl->ovf) && (rc = trace_ovf_arm(ctl, 1)))
		return rc;
	return trace_snap(ctl, &ctl->start); /* the last thing PAPI_start does here */
}

static int fl_update_control_state(hwd_control_state_t *c, NativeInfo_t *native, int count, hwd_context_t *ctx)
{
	struct fl_control *ctl = (struct fl_control *)c;
	if (count > FL_MAX_EVENTS) {
		say_once("an event set takes at most %d flops events (7 metrics and 3 status events); remove some",
			 FL_MAX_EVENTS);
		return PAPI_ECOUNT;
	}
	ctl->nevents = 0;
	ctl->nflops = 0;
	for (int i = 0; i < count; i++) {
		unsigned code = (unsigned)native[i].ni_event;
		if (!code_ok(code, 1))
			return PAPI_ENOEVNT;
		if (!code_valid(code)) {
			char why[PAPI_HUGE_STR_LEN];
			unavailable_reason(FLO_ENTRY(code), why, sizeof(why));
			say_once("%s", why);
			return PAPI_ENOEVNT;
		}
		native[i].ni_position = i;
		ctl->code[i] = code;
		if (FLO_ENTRY(code) < PFLOPS_NMETRIC) {
			if (ctl->nflops == FL_MAX_FLOPS_EVENTS) {
				say_once(
					"an event set takes at most %d flops FLOP events (qualified ones included); use another event set for more",
					FL_MAX_FLOPS_EVENTS);
				return PAPI_ECOUNT;
			}
			ctl->slot_of[i] = ctl->nflops++;
		} else {
			ctl->slot_of[i] = -1;
		}
	}
	ctl->nevents = count;
	if (fl.source == FL_SRC_TRACE)
		return PAPI_OK; /* nothing to plan: the mix has it all */
	int rc = replan(ctl);
	if (!rc && fl.source == FL_SRC_MODEL)
		rc = model_check(ctl);
	return rc;
}

/* ---- counting ---- */

static int sample_layout(struct fl_control *ctl);

static int open_set(struct fl_control *ctl)
{
	int rc = sample_layout(ctl), n = ctl->cnt.nev;
	if (rc)
		return rc;
	if (!n) {
		close_set(ctl);
		return PAPI_OK; /* only status events: nothing to open */
	}
	struct pfc_perf_attr a = { 0 };
	a.tid = (pid_t)ctl->tid;
	a.exclude_user = !(ctl->domain & PAPI_DOM_USER);
	a.exclude_kernel = !(ctl->domain & PAPI_DOM_KERNEL);
	a.exclude_hv = 1;
	a.check_schedule = !ctl->multiplex;
	struct pflops_error err = { 0 };
	rc = pfc_count_open(&ctl->cnt, &a, &err);
	if (rc) {
		say_once("%s", err.msg);
		close_set(ctl);
		return papi_code(rc);
	}
	char msg[PAPI_HUGE_STR_LEN];
	if (flo_active(&ctl->ovf) && (rc = flo_arm(&ctl->ovf, ctl->cnt.set, n, FL_OVF_SIGNAL, msg, sizeof(msg)))) {
		say_once("%s", msg);
		close_set(ctl);
		return rc;
	}
	return PAPI_OK;
}

static int fl_start(hwd_context_t *ctx, hwd_control_state_t *c)
{
	struct fl_control *ctl = (struct fl_control *)c;
	if (fl.source != FL_SRC_HW)
		return trace_start(ctl);
	if (fl.access != PFLOPS_OK) {
		say_once("%s", _flops_vector.cmp_info.disabled_reason);
		return fl.papi_access;
	}
	char vlmsg[PAPI_HUGE_STR_LEN];
	/* the vector length is per thread: a set attached elsewhere cannot be checked here */
	if ((!ctl->tid || (pid_t)ctl->tid == gettid_()) &&
	    pfc_count_vl_differs(&ctl->cnt, pfc_sve_vl_bits(), vlmsg, sizeof(vlmsg))) {
		say_once("%s", vlmsg);
		return PAPI_EINVAL;
	}
	if (!ctl->cnt.set) {
		int rc = open_set(ctl);
		if (rc)
			return rc;
	}
	memset(ctl->values, 0, sizeof(ctl->values));
	struct pflops_error err = { 0 };
	if (ctl->cnt.set && pfc_perf_start(ctl->cnt.set, &err)) {
		say_once("%s", err.msg);
		return PAPI_ESYS;
	}
	return PAPI_OK;
}

/* Read the set and evaluate every entry into ctl->values; *detected: the
 * detector counts (instructions a reduced plan did not weight). */
static int collect(struct fl_control *ctl, double *detected)
{
	struct pfc_perf_status st = { 0 };
	*detected = 0;
	if (ctl->cnt.set) {
		struct pflops_error err = { 0 };
		if (pfc_count_read(&ctl->cnt, &err)) {
			say_once("%s", err.msg);
			return PAPI_ESYS;
		}
		st = ctl->cnt.st;
		if (st.unscheduled)
			return PAPI_ECNFLCT; /* never a zero passed off as a count */
		*detected = pfc_count_detected(&ctl->cnt);
	}
	for (int i = 0; i < ctl->nevents; i++) {
		int s = ctl->slot_of[i];
		double v = 0;
		if (s >= 0) {
			if (ctl->cnt.set)
				v = pfc_count_value(&ctl->cnt, s);
		} else if (FLO_ENTRY(ctl->code[i]) == FL_SCALED) {
			v = st.estimated;
		} else if (FLO_ENTRY(ctl->code[i]) == FL_DETECT) {
			v = *detected;
		} else {
			v = (double)st.uncovered_ns;
		}
		ctl->values[i] = (long long)(v + 0.5);
	}
	return PAPI_OK;
}

static int fl_stop(hwd_context_t *ctx, hwd_control_state_t *c)
{
	struct fl_control *ctl = (struct fl_control *)c;
	struct pflops_error err = { 0 };
	if (fl.source != FL_SRC_HW) {
		int rc = ctl->running ? trace_read(ctl) : PAPI_OK;
		ctl->running = 0; /* reads give these values from now on */
		if (fl.pub)
			trace_ovf_arm(ctl, 0);
		return rc;
	}
	if (!ctl->cnt.set)
		return PAPI_OK;
	if (pfc_perf_stop(ctl->cnt.set, &err)) {
		say_once("%s", err.msg);
		return PAPI_ESYS;
	}
	/* a reduced plan that saw the instructions it left out says so, once
	 * per process (the count differs at every stop) */
	static int said_detected;
	double detected;
	if (!__atomic_load_n(&said_detected, __ATOMIC_RELAXED) && collect(ctl, &detected) == PAPI_OK && detected > 0 &&
	    !__atomic_exchange_n(&said_detected, 1, __ATOMIC_RELAXED))
		for (int k = 0; k < fl.ks.n; k++) {
			const struct pflops_pmu *p = fl.ks.kind[k].pmu;
			if (!ctl->cnt.planned[k] || !ctl->cnt.plan[k].reduced)
				continue;
			const char *part = pflops_metric_name(p->detect.part);
			say_once(
				"%.0f instructions that %s weighs had run at this PAPI_stop and are not in %s on %s (flops:::%s counts them; said once): "
				"%s was planned without %s to fit the counters; add flops:::%s to the event set to count them "
				"(with PAPI_FLOPS_MULTIPLEX=1 where that no longer fits)",
				detected, part, pflops_metric_name(p->detect.metric), p->title[0] ? p->title : p->name,
				p->detect.status, pflops_metric_name(p->detect.metric), part, part);
			break;
		}
	return PAPI_OK;
}

static int fl_reset(hwd_context_t *ctx, hwd_control_state_t *c)
{
	struct fl_control *ctl = (struct fl_control *)c;
	struct pflops_error err = { 0 };
	if (fl.source != FL_SRC_HW) {
		memset(ctl->values, 0, sizeof(ctl->values));
		memset(&ctl->own, 0, sizeof(ctl->own));
		int rc = ctl->running && ctl->ovf_armed ? trace_ovf_arm(ctl, 1) : PAPI_OK;
		if (rc)
			return rc;
		return ctl->running ? trace_snap(ctl, &ctl->start) : PAPI_OK;
	}
	if (ctl->cnt.set && pfc_perf_reset(ctl->cnt.set, &err))
		return PAPI_ESYS;
	return PAPI_OK;
}

static int fl_read(hwd_context_t *ctx, hwd_control_state_t *c, long long **events, int flags)
{
	struct fl_control *ctl = (struct fl_control *)c;
	double detected;
	int rc = fl.source == FL_SRC_HW ? collect(ctl, &detected) : ctl->running ? trace_read(ctl) : PAPI_OK;
	if (rc)
		return rc;
	*events = ctl->values;
	return PAPI_OK;
}

/* ---- overflow (flops_overflow.c) ---- */

/* The layout of the set's perf events, with sampling periods where an
 * event overflows, and the test stand-in applied. */
static int sample_layout(struct fl_control *ctl)
{
	struct pflops_error err = { 0 };
	if (!ctl->cnt.ks)
		return PAPI_OK; /* nothing planned: nothing to open */
	ctl->cnt.multiplex = ctl->multiplex;
	int rc = pfc_count_layout(&ctl->cnt, &err);
	if (rc) {
		say_once("%s", err.msg);
		return rc == PFLOPS_ENOMEM ? PAPI_ENOMEM : PAPI_ECOUNT;
	}
	int n = ctl->cnt.nev, nk = fl.ks.n;
	const struct pfc_perf_kind *pk = ctl->cnt.pk;
	flo_standin_apply(ctl->cnt.ev, n);
	if (!flo_active(&ctl->ovf))
		return PAPI_OK;
	char names[FL_MAX_EVENTS][PAPI_MIN_STR_LEN], msg[PAPI_HUGE_STR_LEN];
	const char *np[FL_MAX_EVENTS];
	for (int i = 0; i < ctl->nevents; i++) {
		char n[PAPI_MIN_STR_LEN - 8];
		snprintf(names[i], sizeof(names[i]), "flops:::%s",
			 fl_code_to_name(ctl->code[i], n, sizeof(n)) ? "?" : n);
		np[i] = names[i];
	}
	for (int k = 0; k < nk; k++)
		if (pk[k].split) {
			say_once(
				"PAPI_overflow on flops events cannot be done in a multiplexed event set (it needs more counters than the core has; a multiplexed counter samples only part of the time): overflow a set that fits the counters");
			return PAPI_ECNFLCT;
		}
	rc = flo_layout(&ctl->ovf, ctl->slot_of, ctl->nevents, pk, nk, ctl->cnt.counter_slot, ctl->cnt.ev, n, np, msg,
			sizeof(msg));
	if (rc)
		say_once("%s", msg);
	return rc;
}

/* PAPI_overflow: refused with one sentence where it cannot be done (a
 * status event, a multiplexed set, no counters), else the set reopens
 * at PAPI_start with the event's counters sampling. */
static int fl_set_overflow(EventSetInfo_t *ESI, int EventIndex, int threshold)
{
	struct fl_control *ctl = (struct fl_control *)ESI->ctl_state;
	int pos = ESI->EventInfoArray[EventIndex].pos[0];
	char name[PAPI_MIN_STR_LEN] = "?";
	if (pos < 0 || pos >= ctl->nevents)
		return PAPI_EINVAL;
	fl_code_to_name(ctl->code[pos], name, sizeof(name));
	if (threshold > 0 && fl.source == FL_SRC_MODEL) {
		say_once(
			"PAPI_overflow on flops:::%s refused: PAPI_FLOPS_SOURCE=model has no overflow (PAPI_FLOPS_SOURCE=trace "
			"overflows every P exact FLOPs; hw on counters); read the counts with PAPI_read, or PAPI_overflow with "
			"PAPI_OVERFLOW_FORCE_SW (PAPI's timer)",
			name);
		return PAPI_ENOSUPP;
	}
	if (fl.source == FL_SRC_TRACE) {
		/* every P FLOPs of the event, exactly, at the instruction
		 * (trace_ovf_arm at PAPI_start) */
		unsigned e = FLO_ENTRY(ctl->code[pos]);
		if (threshold > 0 && e >= PFLOPS_NMETRIC) {
			say_once(
				"PAPI_overflow on flops:::%s refused: a status event counts no FLOPs and cannot overflow; "
				"overflow a FLOP event (flops:::DP_OPS ...)",
				name);
			return PAPI_EINVAL;
		}
		for (int i = 0; threshold > 0 && i < ctl->nevents && i < FLO_MAX_EVENTS; i++)
			if (i != pos && ctl->ovf.threshold[i] > 0) {
				say_once(
					"PAPI_overflow on flops:::%s refused: under PAPI_FLOPS_SOURCE=trace one flops event "
					"of a set overflows (the trace counts one kind of FLOP for it): put the other in "
					"another set",
					name);
				return PAPI_ECNFLCT;
			}
		if (pos >= FLO_MAX_EVENTS)
			return PAPI_EINVAL;
		if (threshold > 0)
			ctl->ovf_sel = PFC_PUB_OVF_SEL(e, FLO_WQ(ctl->code[pos]), FLO_PQ(ctl->code[pos]));
		return flo_set(&ctl->ovf, pos, threshold, FL_OVF_SIGNAL, _flops_vector.cmp_info.CmpIdx);
	}
	if (threshold > 0 && ctl->slot_of[pos] < 0) {
		say_once(
			"PAPI_overflow on flops:::%s refused: a status event counts on no counter and cannot overflow; overflow a FLOP event (flops:::DP_OPS ...)",
			name);
		return PAPI_EINVAL;
	}
	if (threshold > 0 && fl.access != PFLOPS_OK) {
		say_once("PAPI_overflow on flops:::%s refused: %s", name, _flops_vector.cmp_info.disabled_reason);
		return fl.papi_access;
	}
	close_set(ctl);
	int rc = flo_set(&ctl->ovf, pos, threshold, FL_OVF_SIGNAL, _flops_vector.cmp_info.CmpIdx);
	if (rc == PAPI_OK && threshold > 0 && (rc = sample_layout(ctl)))
		flo_set(&ctl->ovf, pos, 0, FL_OVF_SIGNAL, _flops_vector.cmp_info.CmpIdx);
	return rc;
}

static void fl_dispatch(int sig, hwd_siginfo_t *si, void *uc)
{
	if (fl.source == FL_SRC_TRACE && trace_dispatch(si, uc))
		return;
	flo_dispatch(_flops_vector.cmp_info.CmpIdx, offsetof(struct fl_control, ovf), si, uc);
}

/* ---- options ---- */

static int fl_set_domain(hwd_control_state_t *c, int domain)
{
	struct fl_control *ctl = (struct fl_control *)c;
	if (!(domain & (PAPI_DOM_USER | PAPI_DOM_KERNEL)))
		return PAPI_EINVAL;
	ctl->domain = domain;
	close_set(ctl);
	return PAPI_OK;
}

static int fl_ctl(hwd_context_t *ctx, int code, _papi_int_option_t *option)
{
	struct fl_control *ctl;
	switch (code) {
	case PAPI_DOMAIN:
		return fl_set_domain(option->domain.ESI->ctl_state, option->domain.domain);
	case PAPI_GRANUL:
		return option->granularity.granularity == PAPI_GRN_THR ? PAPI_OK : PAPI_EINVAL;
	case PAPI_MULTIPLEX:
		ctl = (struct fl_control *)option->multiplex.ESI->ctl_state;
		ctl->multiplex = 1;
		return replan(ctl);
	case PAPI_ATTACH:
		ctl = (struct fl_control *)option->attach.ESI->ctl_state;
		ctl->tid = option->attach.tid;
		close_set(ctl);
		return PAPI_OK;
	case PAPI_DETACH:
		ctl = (struct fl_control *)option->attach.ESI->ctl_state;
		ctl->tid = 0;
		close_set(ctl);
		return PAPI_OK;
	default:
		return PAPI_ENOSUPP;
	}
}

/* ---- native events ---- */

static int fl_code_to_name(unsigned int code, char *name, int len);

/* PAPI 7 maps (component code, name) to the user's event code: tell it
 * the name of what we enumerate, so PAPI_event_name_to_code gives the
 * same code back. */
static int enumerated(unsigned int *code, unsigned c)
{
	char name[PAPI_MIN_STR_LEN];
	*code = c;
	if (fl_code_to_name(c, name, sizeof(name)) == PAPI_OK)
		_papi_hwi_set_papi_event_string(name);
	return PAPI_OK;
}

static int fl_enum_events(unsigned int *code, int modifier)
{
	unsigned c = *code;
	switch (modifier) {
	case PAPI_ENUM_FIRST:
		for (unsigned e = 0; e < FL_NENTRY; e++)
			if (code_valid(e))
				return enumerated(code, e);
		return PAPI_ENOEVNT;
	case PAPI_ENUM_EVENTS:
		for (unsigned e = FLO_ENTRY(c) + 1; e < FL_NENTRY; e++)
			if (code_valid(e))
				return enumerated(code, e);
		return PAPI_ENOEVNT;
	case PAPI_NTV_ENUM_UMASKS: {
		/* widths, then precisions, one qualifier at a time */
		unsigned e = FLO_ENTRY(c), wq = FLO_WQ(c), pq = FLO_PQ(c);
		unsigned seq = pq ? PFLOPS_NWIDTH + pq : wq; /* 0 = the base event */
		for (unsigned n = seq + 1; n <= PFLOPS_NWIDTH + PFLOPS_NPREC; n++) {
			unsigned cand = n <= PFLOPS_NWIDTH ? FLO_CODE(e, n, 0) : FLO_CODE(e, 0, n - PFLOPS_NWIDTH);
			if (code_valid(cand))
				return enumerated(code, cand);
		}
		return PAPI_ENOEVNT;
	}
	default:
		return PAPI_EINVAL;
	}
}

static int fl_code_to_name(unsigned int code, char *name, int len)
{
	if (!code_ok(code, 1))
		return PAPI_ENOEVNT;
	struct pfc_evname e = { FLO_ENTRY(code), FLO_WQ(code), FLO_PQ(code) };
	return pfc_evname_format(&e, fl.detect_status, name, len > 0 ? (size_t)len : 0) ? PAPI_EBUF : PAPI_OK;
}

/* Every name of the table's metrics resolves, countable here or not: an
 * unavailable one is described with its reason and refused when added. */
static int fl_name_to_code(const char *name, unsigned int *code)
{
	struct pfc_evname e;
	if (pfc_evname_parse(name, fl.detect_status, &e, NULL))
		return PAPI_ENOEVNT;
	unsigned c = FLO_CODE(e.entry, e.wq, e.pq);
	if (!code_ok(c, 1))
		return PAPI_ENOEVNT;
	*code = c;
	return PAPI_OK;
}

/* Long description: what it counts, the formula, the accuracy class and
 * the caveat, per core kind. */
static void describe(unsigned code, char *out, size_t len)
{
	unsigned e = FLO_ENTRY(code), wq = FLO_WQ(code), pq = FLO_PQ(code);
	out[0] = 0;
	if (e == FL_SCALED) {
		snprintf(
			out, len,
			"1 when the FLOP counts of this read were extrapolated from multiplexed counters (time_enabled/time_running), else 0. No counter used.");
		return;
	}
	if (e == FL_UNCOVERED) {
		snprintf(
			out, len,
			"Nanoseconds this thread ran on core kinds whose PMU cannot count FLOPs (hybrid CPUs): FLOPs there are missing from the counts, not hidden. No general counter used.");
		char untimed[320];
		for (int k = 0; k < fl.ks.n; k++) /* a kind with no PMU found is not in it */
			if (pfc_count_untimed(&fl.ks, k, untimed, sizeof(untimed))) {
				size_t l = strlen(out);
				snprintf(out + l, len - l, " But %s.", untimed);
				break;
			}
		return;
	}
	if (e == FL_DETECT) {
		for (int k = 0; k < fl.ks.n; k++) {
			const struct pflops_pmu *p = fl.ks.kind[k].pmu;
			if (p && p->detect.line) {
				snprintf(
					out, len,
					"Instructions that %s weighs but %s left out (0 unless %s was planned without %s to fit the counters): a non-zero count means %s is low by their FLOPs; add %s to count them. %s: the detector counter %s (%s).",
					pflops_metric_name(p->detect.part), pflops_metric_name(p->detect.metric),
					pflops_metric_name(p->detect.metric), pflops_metric_name(p->detect.part),
					pflops_metric_name(p->detect.metric), pflops_metric_name(p->detect.part),
					p->name, p->events[p->detect.event].alias, p->events[p->detect.event].spec);
				return;
			}
		}
		return;
	}
	size_t l = snprintf(out, len, "%s", pflops_metric_info(e)->descr);
	if (wq)
		l += snprintf(out + l, len - l, ", %s only", pflops_width_name((enum pflops_width)(wq - 1)));
	if (pq && l < len)
		l += snprintf(out + l, len - l, ", %s only", pflops_prec_name((enum pflops_prec)(pq - 1)));
	if (fl.source == FL_SRC_TRACE) {
		snprintf(
			out + l, len - l,
			". Source trace (PAPI_FLOPS_SOURCE=trace): every instruction this thread executes is decoded by a helper process tracing it [%s]",
			pflops_class_name(PFLOPS_EXACT));
		return;
	}
	if (fl.source == FL_SRC_MODEL && l < len)
		l += snprintf(
			out + l, len - l,
			". Source model (PAPI_FLOPS_SOURCE=model:%s): the traced instructions read through this formula",
			fl.ks.kind[0].pmu->name);
	for (int k = 0; k < fl.ks.n && l < len; k++) {
		const struct pflops_pmu *p = fl.ks.kind[k].pmu;
		if (!p)
			continue;
		const struct pflops_metric_def *d = &p->metrics[e];
		if (d->klass == PFLOPS_UNAVAILABLE || ((wq || pq) && !qualifier_ok(p, e, wq, pq))) {
			l += snprintf(out + l, len - l, ". %s: not counted (%s)", p->name,
				      d->caveat ? d->caveat : "no formula");
			continue;
		}
		l += snprintf(out + l, len - l, ". %s: %s [%s]", p->name, d->formula, pflops_class_name(d->klass));
		int vl = 0;
		for (int t = 0; t < d->nterms; t++)
			vl |= d->terms[t].wvl != 0;
		int sve = fl.ks.kind[k].sve_bits, now = pfc_sve_vl_bits();
		if (vl && l < len) /* what the plans weight it with */
		{
			char other[96];
			snprintf(other, sizeof(other),
				 "the length at initialization; this thread's is %d bits, where counting is refused",
				 now);
			l += snprintf(out + l, len - l, " (VL = %d bits: %s)", sve,
				      now && now == sve ? "this thread's SVE vector length"
				      : now		? other
							: "the table's figure; this process has no SVE vector length");
		}
		if (d->caveat && l < len)
			l += snprintf(out + l, len - l, " %s", d->caveat);
	}
	if ((wq || pq) && l < len) {
		/* papi_native_avail shows what follows "masks:" for a qualifier */
		l += snprintf(out + l, len - l,
			      " masks:%s%s%s only:", wq ? pflops_width_name((enum pflops_width)(wq - 1)) : "",
			      wq && pq ? " " : "", pq ? pflops_prec_name((enum pflops_prec)(pq - 1)) : "");
		for (int k = 0; k < fl.ks.n && l < len; k++) {
			const struct pflops_pmu *p = fl.ks.kind[k].pmu;
			if (!p || !qualifier_ok(p, e, wq, pq))
				continue;
			const struct pflops_metric_def *d = &p->metrics[e];
			int first = 1;
			for (int t = 0; t < d->nterms && l < len; t++)
				if (pfc_count_term_passes(p, &d->terms[t], (int)wq - 1, (int)pq - 1)) {
					l += snprintf(out + l, len - l, "%s%g*%s", first ? " " : " + ", d->terms[t].w0,
						      p->events[d->terms[t].event].alias);
					first = 0;
				}
		}
	}
}

static int fl_code_to_descr(unsigned int code, char *descr, int len)
{
	if (!code_ok(code, 1))
		return PAPI_ENOEVNT;
	describe(code, descr, len);
	return PAPI_OK;
}

static int fl_code_to_info(unsigned int code, PAPI_event_info_t *info)
{
	int rc = fl_code_to_name(code, info->symbol, sizeof(info->symbol));
	if (rc)
		return rc;
	describe(code, info->long_descr, sizeof(info->long_descr));
	unsigned e = FLO_ENTRY(code);
	snprintf(info->short_descr, sizeof(info->short_descr), "%s", info->symbol);
	snprintf(info->units, sizeof(info->units), "%s",
		 e == FL_UNCOVERED    ? "ns"
		 : e == FL_SCALED     ? ""
		 : e < PFLOPS_NMETRIC ? pflops_metric_info(e)->unit
				      : "instructions");
	info->data_type = PAPI_DATATYPE_INT64;
	/* SCALED is a 0/1 flag about the values read, not a sum; the other
	 * status events (ns, instructions) add up since the start */
	info->value_type = e == FL_SCALED ? PAPI_VALUETYPE_ABSOLUTE : PAPI_VALUETYPE_RUNNING_SUM;
	info->timescope = e == FL_SCALED ? PAPI_TIMESCOPE_POINT : PAPI_TIMESCOPE_SINCE_START;
	info->location = PAPI_LOCATION_CORE;
	return PAPI_OK;
}

papi_vector_t _flops_vector = {
	.cmp_info = {
		.name = "flops",
		.short_name = "flops",
		.description = "FLOP counts (FP_OPS, DP_OPS ...) from the papi-flops formula table over perf_event",
		.version = "0.1.0",
		.default_domain = PAPI_DOM_USER,
		.available_domains = PAPI_DOM_USER | PAPI_DOM_KERNEL,
		.default_granularity = PAPI_GRN_THR,
		.available_granularities = PAPI_GRN_THR,
		.hardware_intr_sig = PAPI_INT_SIGNAL,
		.num_mpx_cntrs = FL_MAX_EVENTS,
		.num_cntrs = FL_MAX_EVENTS,
	},
	.size = {
		.context = sizeof(struct fl_context),
		.control_state = sizeof(struct fl_control),
		.reg_value = 1,
		.reg_alloc = 1,
	},
	.init_component = fl_init_component,
	.init_thread = fl_init_thread,
	.init_control_state = fl_init_control_state,
	.update_control_state = fl_update_control_state,
	.start = fl_start,
	.stop = fl_stop,
	.read = fl_read,
	.reset = fl_reset,
	.cleanup_eventset = fl_cleanup_eventset,
	.shutdown_thread = fl_shutdown_thread,
	.shutdown_component = fl_shutdown_component,
	.ctl = fl_ctl,
	.set_domain = fl_set_domain,
	.set_overflow = fl_set_overflow,
	.dispatch_timer = fl_dispatch,
	.ntv_enum_events = fl_enum_events,
	.ntv_name_to_code = fl_name_to_code,
	.ntv_code_to_name = fl_code_to_name,
	.ntv_code_to_descr = fl_code_to_descr,
	.ntv_code_to_info = fl_code_to_info,
};
