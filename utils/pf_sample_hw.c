/*
 * papi_flops_run --sample P --source hw: every native event of the
 * sampled metric's formula samples every ceil(P / weight) counts
 * (pfc_perf_sample, as PAPI_overflow on a flops event does), with
 * the user call chain (the kernel walks frame pointers); each sample
 * credits P FLOPs to its stack, symbolized from the program's file
 * mappings (MMAP2 records) and the files' ELF symbols.
 *
 * PAPI_FLOPS_TEST_SWEVENT=page-faults|task-clock (tests only, as for
 * the component) opens every native as that perf software event, so
 * that periods, crediting and stacks can be tested without counters;
 * PAPI_FLOPS_PMU=NAME then picks the table PMU whose formula is used.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pf_sample_hw.h"
#include "pf_signal.h"
#include "pflops_count.h"
#include "pflops_perf.h"
#include "pflops_sampler.h"
#include "pflops_trace.h"

#define EXIT_TOOL 125

struct hw_sample {
	struct pfc_sampler *s;
	struct pft_funcs *names;
	struct pf_sample *prof;
	int nev;
};

/* the stand-in's perf software config, or 0 when none is asked */
static const char *standin(uint64_t *config)
{
	const char *v = getenv("PAPI_FLOPS_TEST_SWEVENT");
	if (!v || !*v)
		return NULL;
	if (!strcmp(v, "page-faults"))
		*config = PERF_COUNT_SW_PAGE_FAULTS;
	else if (!strcmp(v, "task-clock"))
		*config = PERF_COUNT_SW_TASK_CLOCK;
	else
		return NULL;
	return v;
}

/* one frame's id: the function holding addr in pid; -2: a caller's
 * address in no file mapping (a frame-pointer walk gone past the
 * outermost frame, or through code without frame pointers) */
static int frame(struct hw_sample *h, uint32_t pid, uint64_t addr, int caller)
{
	const char *path = NULL, *object = NULL;
	uint64_t start = 0, off = addr;
	char name[512];
	if (!pfc_sampler_where(h->s, pid, addr, &path, &start, &off)) {
		if (caller)
			return -2;
		start = 0; /* anonymous, or mapped before the sampling saw it */
	}
	if (pft_funcs_name(h->names, path, start, off, name, sizeof(name), &object) < 0)
		return -1;
	return pf_sample_frame_id(h->prof, name, object);
}

static void on_sample(void *arg, int ev, const struct pfc_sample_rec *r)
{
	struct hw_sample *h = arg;
	int ids[PF_SAMPLE_MAX_FRAMES], n = 0, user = 0;
	if (ev < 0 || ev >= h->nev)
		return;
	h->prof->native[ev].samples++;
	/* the chain: PERF_CONTEXT_USER, the sampled IP, then return
	 * addresses (the call is the byte before each) */
	for (uint64_t i = 0; i < r->nr_callchain && n < PF_SAMPLE_MAX_FRAMES; i++) {
		uint64_t a = pfc_sample_frame(r, i);
		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			user = a == (uint64_t)PERF_CONTEXT_USER;
			continue;
		}
		if (!user)
			continue;
		int id = frame(h, r->pid, n ? a - 1 : a, n > 0);
		if (id == -2)
			break;
		if (id < 0)
			return;
		ids[n++] = id;
	}
	if (!n) { /* no chain: the sampled address alone */
		int id = frame(h, r->pid, r->ip, 0);
		if (id < 0)
			return;
		ids[n++] = id;
	}
	if (r->nr_callchain >= 127) /* perf_event_max_stack's default */
		h->prof->unwound_short++;
	pf_sample_add(h->prof, ids, n, 1);
}

int pf_sample_hw(const struct pflops_table *t, char **argv, unsigned metrics, int metric, uint64_t period,
		 struct pf_report *r, struct pf_sample **out)
{
	struct pflops_probe pr;
	struct pflops_error err = { 0 };
	uint64_t swconfig = 0;
	const char *sw = standin(&swconfig), *force = getenv("PAPI_FLOPS_PMU");
	if (pflops_probe_run(&pr, t, NULL, &err)) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	if (pr.access.code && !sw) {
		fprintf(stderr, "papi_flops_run: --sample cannot sample hardware counters: %s\n  fix: %s\n",
			pr.access.msg, pr.access.fix);
#if defined(__x86_64__)
		fprintf(stderr,
			"  or profile exactly without them: papi_flops_run --sample %llu --source trace -- %s ...\n",
			(unsigned long long)period, argv[0]);
#endif
		return EXIT_TOOL;
	}
	const struct pflops_pmu *pmu = NULL;
	int budget = PFLOPS_MAX_COUNTERS, sve_bits = -1; /* a PMU named: this process's VL */
	if (force && *force) {
		if (!(pmu = pflops_table_find(t, force))) {
			fprintf(stderr,
				"papi_flops_run: PAPI_FLOPS_PMU=%s is not in the formula table ('papi_flops_avail --arch all' lists it)\n",
				force);
			return EXIT_TOOL;
		}
	} else if (pr.nkinds != 1 || !pr.kinds[0].pmu) {
		fprintf(stderr,
			"papi_flops_run: --sample --source hw needs one kind of core with a formula (this machine has %d%s%s)\n",
			pr.nkinds, pr.nkinds == 1 ? ": " : " kinds", pr.nkinds == 1 ? pr.kinds[0].why : "");
		return EXIT_TOOL;
	} else {
		pmu = pr.kinds[0].pmu;
		budget = pr.kinds[0].budget;
		sve_bits = pr.kinds[0].sve_bits;
	}
	if (sw) {
		budget = PFLOPS_MAX_COUNTERS; /* software events: no counter limit */
		fprintf(stderr,
			"papi_flops_run: PAPI_FLOPS_TEST_SWEVENT=%s: every native event of %s opens as that perf "
			"software event (a test stand-in: the numbers are of %s, not FLOPs)\n",
			sw, pmu->name, sw);
	}
	unsigned want = metrics ? metrics : pflops_pmu_available(pmu);
	/* planned and laid out by the counting pipeline (pflops_count.h), as
	 * papi_flops_run --source hw and the component plan: one group */
	static struct pfc_count_kinds ks;
	static struct pfc_count c;
	struct pfc_count_want w[PFLOPS_NMETRIC];
	memset(&ks, 0, sizeof(ks));
	pfc_count_kind_add(&ks, pmu, budget, 1, 0, 0, pr.nmi_watchdog, sve_bits, NULL);
	pfc_count_kinds_exec_vl(&ks); /* the program's length, not this thread's */
	pfc_count_want_metrics(w, want | 1u << metric);
	if (!pfc_count_plan(&c, &ks, w, PFLOPS_NMETRIC, 1)) {
		fprintf(stderr, "papi_flops_run: --sample: %s\n", c.why[0]);
		return EXIT_TOOL;
	}
	const struct pflops_plan *plan = &c.plan[0];
	int owner[PFLOPS_MAX_COUNTERS + 1], nev = 0;
	if (!pfc_count_layout(&c, &err))
		nev = c.nev;
	struct pfc_perf_event *ev = c.ev;
	for (int i = 0; i < PFLOPS_MAX_COUNTERS + 1; i++)
		owner[i] = -1;
	if (nev <= 0 || nev > PFLOPS_MAX_COUNTERS ||
	    pfc_perf_sample(c.pk, 1, c.counter_slot, ev, nev, owner, metric, period, 0, &err) < 0) {
		fprintf(stderr, "papi_flops_run: --sample %llu on %s: %s\n", (unsigned long long)period,
			pflops_metric_name(metric),
			nev <= 0 || nev > PFLOPS_MAX_COUNTERS ? "too many events" : err.msg);
		pfc_count_close(&c);
		return EXIT_TOOL;
	}
	if (plan->cost > budget)
		pf_report_note(
			r,
			"%d counters for %d: the kernel multiplexes, counts are scaled and a sample stands for P FLOPs "
			"only while its event ran",
			plan->cost, budget);
	static struct hw_sample h;
	memset(&h, 0, sizeof(h));
	struct pfc_sampler_event se[PFLOPS_MAX_COUNTERS];
	memset(se, 0, sizeof(se));
	h.nev = nev;
	if (!(h.prof = pf_sample_new(period, metric, 0)) || !(h.names = pft_funcs_new(&err))) {
		fprintf(stderr, "papi_flops_run: --sample: %s\n", h.prof ? err.msg : "out of memory");
		pf_sample_free(h.prof);
		pfc_count_close(&c);
		return EXIT_TOOL;
	}
	h.prof->standin = sw;
	h.prof->nnative = nev;
	for (int i = 0; i < nev; i++) {
		se[i].type = sw ? PERF_TYPE_SOFTWARE : ev[i].type;
		se[i].config = sw ? swconfig : ev[i].config;
		se[i].period = ev[i].sample_period;
		se[i].precise = sw ? 0 : 2; /* the FP instruction's own address, where the PMU has it */
		se[i].callchain = 1;
		snprintf(se[i].name, sizeof(se[i].name), "%s", ev[i].name);
		struct pf_sample_native *nv = &h.prof->native[i];
		snprintf(nv->name, sizeof(nv->name), "%s", ev[i].name);
		nv->period = ev[i].sample_period;
		for (int k = 0; k < plan->ncounters; k++)
			if (c.counter_slot[0][k] == ev[i].slot)
				nv->weight = plan->counter[k].weight[metric];
	}
	struct pflops_child child;
	int rc = pfc_child_spawn(&child, argv, &err);
	if (!rc) {
		child.interrupt = &pf_interrupt;
		if ((rc = pfc_sampler_open(&h.s, se, nev, child.pid, 0, &err)))
			pfc_child_abort(&child);
	}
	double counts[PFLOPS_MAX_COUNTERS];
	if (!rc)
		rc = pfc_sampler_run(h.s, &child, on_sample, &h, &r->status, &r->wall, &err);
	if (!rc)
		rc = pfc_sampler_counts(h.s, counts, &err);
	struct pfc_sampler_stats ss = { 0 };
	if (h.s)
		pfc_sampler_stats(h.s, &ss);
	pfc_sampler_close(h.s);
	pft_funcs_free(h.names);
	if (rc) {
		pf_sample_free(h.prof);
		pfc_count_close(&c);
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	for (int i = 0; i < nev; i++) {
		h.prof->native[i].count = counts[i];
		if (ev[i].slot >= 0 && ev[i].slot < c.nslots)
			c.slots[ev[i].slot] += counts[i];
	}
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if ((want | 1u << metric) >> m & 1) {
			r->v[m] = pfc_count_value(&c, m);
			r->got |= 1u << m;
		}
	pfc_count_close(&c);
	h.prof->counted = r->v[metric];
	h.prof->lost = ss.lost;
	r->asked = want | 1u << metric;
	r->pmu = pmu;
	r->wall_real = 1;
	snprintf(r->source_detail, sizeof(r->source_detail),
		 "hardware counters, formula of %s, sampled every %llu %s%s", pmu->name, (unsigned long long)period,
		 pflops_metric_name(metric), sw ? " (TEST STAND-IN: software events, not FLOPs)" : "");
	if (ss.lost)
		pf_report_note(
			r,
			"%llu sample records were lost (ring full): the profile misses them; a larger --sample P "
			"takes fewer",
			(unsigned long long)ss.lost);
	*out = h.prof;
	return 0;
}
