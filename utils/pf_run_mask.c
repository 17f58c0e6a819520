/*
 * papi_flops_run --source hw --mask-sampling PERIOD: each FP_ARITH event
 * of the masked-full metrics asked is opened on its own counter, sampled
 * every PERIOD counts with the opmask registers (the perf SIMD-register
 * series, pflops_simd.h); each sample's instruction is read back from
 * the file mapped at its address and judged by the estimator
 * (pflops_mask.h); the events' totals give the full-lane values and,
 * with the sampled shares, the corrected ones.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pf_signal.h"
#include "pf_run_mask.h"
#include "pflops_mask.h"
#include "pflops_perf.h"
#include "pflops_sampler.h"

#define EXIT_TOOL 125

static int is_prime(unsigned n)
{
	if (n < 2)
		return 0;
	for (unsigned d = 2; d <= n / d; d++)
		if (n % d == 0)
			return 0;
	return 1;
}

/* Sampling every P-th count of a loop whose body counts L visits only
 * L / gcd(L, P) of its counts: a composite P can lock onto a few
 * instructions (docs/masked-lanes.md measures it).  A prime cannot. */
static void period_note(struct pf_report *r, unsigned period)
{
	if (period < 2 || is_prime(period))
		return;
	unsigned q = period;
	while (!is_prime(q))
		q++;
	pf_report_note(r,
		       "the period %u is not prime: in a loop whose body counts a multiple of one of its factors, "
		       "every sample falls on the same few instructions; a prime such as %u avoids it",
		       period, q);
}

struct hw_run {
	struct pfc_sampler *s;
	struct pfc_mask_acc acc[PFLOPS_MAX_COUNTERS];
	int sampled[PFLOPS_MAX_COUNTERS];
};

static void on_sample(void *arg, int ev, const struct pfc_sample_rec *rec)
{
	struct hw_run *h = arg;
	if (ev < 0 || ev >= PFLOPS_MAX_COUNTERS || !h->sampled[ev])
		return;
	struct pfc_mask_sample s = { .ip = rec->ip, .pid = rec->pid, .have_k = rec->user.kvalid == 0xff };
	memcpy(s.k, rec->user.k, sizeof(s.k));
	pfc_mask_add(&h->acc[ev], &s, pfc_sampler_read_code, h->s, NULL);
}

/* Why the hardware path cannot run here, all reasons at once. */
static int refuse(const struct pflops_probe *pr, const struct pfc_simd_caps *c, const char *prog)
{
	fprintf(stderr, "papi_flops_run: --mask-sampling cannot sample the opmask registers here:\n");
	if (pr->access.code)
		fprintf(stderr, "  counters: %s\n    fix: %s\n", pr->access.msg, pr->access.fix);
	if (c->verdict != PFC_SIMD_SUPPORTED)
		fprintf(stderr, "  opmask sampling: %s\n%s%s%s", c->msg, c->fix[0] ? "    fix: " : "", c->fix,
			c->fix[0] ? "\n" : "");
	fprintf(stderr, "  without them: papi_flops_run --source trace -- %s ... counts the active lanes exactly\n",
		prog);
	return EXIT_TOOL;
}

/* what became of one event's samples, into the report's totals */
static void add_samples(struct pf_mask *k, const struct pfc_mask_result *res)
{
	k->samples += res->samples;
	k->used += res->used;
	k->masked += res->masked;
	k->skid += res->skid;
	k->nomask += res->nomask;
	k->unreadable += res->unreadable;
	k->changed += res->changed;
	k->known_full += res->known_full;
}

int pf_mask_hw(const struct pflops_table *t, char **argv, unsigned metrics, unsigned period, struct pf_report *r)
{
	struct pflops_probe pr;
	struct pfc_simd_caps caps;
	struct pflops_error err = { 0 };
	if (pflops_probe_run(&pr, t, NULL, &err)) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	pfc_simd_probe(&caps);
	if (pr.access.code || caps.verdict != PFC_SIMD_SUPPORTED)
		return refuse(&pr, &caps, argv[0]);
	if (pr.nkinds != 1 || !pr.kinds[0].pmu) {
		fprintf(stderr,
			"papi_flops_run: --mask-sampling needs one kind of core with a formula (this machine has %d%s%s)\n",
			pr.nkinds, pr.nkinds == 1 ? ": " : " kinds", pr.nkinds == 1 ? pr.kinds[0].why : "");
		return EXIT_TOOL;
	}
	const struct pflops_kind *kd = &pr.kinds[0];
	const struct pflops_pmu *pmu = kd->pmu;
	struct pfc_mask_plan mp;
	unsigned want = metrics ? metrics : pflops_pmu_available(pmu);
	if (pfc_mask_plan_make(&mp, pmu, want, &err)) {
		fprintf(stderr, "papi_flops_run: --mask-sampling: %s\n", err.msg);
		return EXIT_TOOL;
	}
	if (mp.nevents > kd->budget) {
		fprintf(stderr,
			"papi_flops_run: --mask-sampling opens each event on its own counter: %d events for %d "
			"counters per thread here; ask fewer metrics (--metrics DP_OPS, then SP_OPS)\n",
			mp.nevents, kd->budget);
		return EXIT_TOOL;
	}
	struct pfc_sampler_event se[PFLOPS_MAX_COUNTERS];
	static struct hw_run h;
	memset(&h, 0, sizeof(h));
	memset(se, 0, sizeof(se));
	for (int i = 0; i < mp.nevents; i++) {
		const struct pflops_event *e = &pmu->events[mp.e[i].event];
		se[i].type = PERF_TYPE_RAW;
		if (pflops_encode(pmu, e->spec, &se[i].config, NULL, 0, &err)) {
			fprintf(stderr, "papi_flops_run: %s\n", err.msg);
			return EXIT_TOOL;
		}
		snprintf(se[i].name, sizeof(se[i].name), "%s", e->spec);
		if (mp.e[i].sampled) {
			se[i].period = period;
			se[i].opmask = 1;
			se[i].precise = 2; /* the eventing instruction's address, where the PMU has it */
			h.sampled[i] = 1;
		}
	}
	struct pflops_child child;
	if (pfc_child_spawn(&child, argv, &err)) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	child.interrupt = &pf_interrupt; /* SIGINT/SIGTERM: passed on, as for the other sources */
	if (pfc_sampler_open(&h.s, se, mp.nevents, child.pid, 0, &err)) {
		pfc_child_abort(&child);
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	int precise = 3;
	for (int i = 0; i < mp.nevents; i++) {
		h.acc[i].ev = &mp.e[i].ev;
		if (h.sampled[i]) {
			/* with PEBS the address is the eventing instruction's, the
			 * registers are read at the interrupt a few instructions on */
			mp.e[i].ev.capture_lag = se[i].precise_used ? 16 : 0;
			precise = se[i].precise_used < precise ? se[i].precise_used : precise;
		}
	}
	double counts[PFLOPS_MAX_COUNTERS];
	int rc = pfc_sampler_run(h.s, &child, on_sample, &h, &r->status, &r->wall, &err);
	if (!rc)
		rc = pfc_sampler_counts(h.s, counts, &err);
	struct pfc_sampler_stats ss;
	pfc_sampler_stats(h.s, &ss);
	pfc_sampler_close(h.s);
	if (rc) {
		fprintf(stderr, "papi_flops_run: %s\n", err.msg);
		return EXIT_TOOL;
	}
	struct pfc_mask_result res[PFLOPS_MAX_COUNTERS];
	struct pf_mask *k = &r->mask;
	for (int i = 0; i < mp.nevents; i++) {
		pfc_mask_result(&h.acc[i], counts[i], &res[i]);
		add_samples(k, &res[i]);
	}
	k->lost = ss.lost;
	k->period = period;
	k->corrected = mp.corrected;
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (mp.metrics >> m & 1) {
			pfc_mask_metric(&mp, m, counts, res, &r->v[m], &k->est[m], &k->lo[m], &k->hi[m]);
			r->got |= 1u << m;
		}
	r->asked = want;
	r->pmu = pmu;
	r->wall_real = 1;
	snprintf(r->source_detail, sizeof(r->source_detail),
		 "hardware counters, %d events of %s each on its own counter", mp.nevents, pmu->name);
	snprintf(k->method, sizeof(k->method),
		 "hardware: each masked-full event sampled every %u counts with k0-k7 (precise_ip %d%s)", period,
		 precise,
		 precise ? ": eventing address, registers up to 16 instructions later"
			 : ": registers and address at the interrupt");
	period_note(r, period);
	if (ss.lost)
		pf_report_note(r, "%llu sample records were lost (ring full): the shares come from the rest",
			       (unsigned long long)ss.lost);
	if (k->samples && k->skid * 5 > k->samples)
		pf_report_note(r,
			       "%.0f%% of the samples landed on instructions the events do not count (skid): a smaller "
			       "precise level or a busy interrupt path; see docs/masked-lanes.md",
			       100.0 * (double)k->skid / (double)k->samples);
	pf_report_note(r, "the hardware path of --mask-sampling follows the v5 interface of the perf SIMD-register "
			  "series and has not been verified on a machine with it");
	return 0;
}

/* ---- the model path ---------------------------------------------------- */

struct pf_mask_model {
	struct pfc_mask_plan mp;
	struct pfc_mask_trace *mt;
	unsigned period;
};

struct pf_mask_model *pf_mask_model_new(const struct pflops_pmu *pmu, unsigned metrics, unsigned period)
{
	struct pflops_error err = { 0 };
	struct pf_mask_model *mm = calloc(1, sizeof(*mm));
	unsigned want = metrics ? metrics : pflops_pmu_available(pmu);
	struct pfc_mask_stream st = { period, 0 };
	if (!mm || pfc_mask_plan_make(&mm->mp, pmu, want, &err) ||
	    !(mm->mt = pfc_mask_trace_new(&mm->mp, &st, 1, &err))) {
		fprintf(stderr, "papi_flops_run: --mask-sampling: %s\n", mm ? err.msg : "out of memory");
		free(mm);
		return NULL;
	}
	mm->period = period;
	return mm;
}

void pf_mask_model_opts(struct pf_mask_model *mm, struct pflops_trace_opts *o)
{
	o->fp_exec = pfc_mask_trace_hook;
	o->fp_exec_arg = mm->mt;
}

int pf_mask_model_report(struct pf_mask_model *mm, const struct pflops_mix *mix, struct pf_report *r)
{
	struct pflops_error err = { 0 };
	double counts[PFLOPS_MAX_COUNTERS], exact[PFLOPS_NMETRIC];
	struct pfc_mask_result res[PFLOPS_MAX_COUNTERS];
	struct pf_mask *k = &r->mask;
	int rc = pfc_mask_trace_result(mm->mt, mix, 0, counts, res, &err);
	if (rc) {
		fprintf(stderr, "papi_flops_run: --mask-sampling: %s\n", err.msg);
		rc = EXIT_TOOL;
		goto out;
	}
	pflops_mix_metrics(mix, exact);
	for (int i = 0; i < mm->mp.nevents; i++) {
		if (!mm->mp.e[i].sampled)
			continue;
		add_samples(k, &res[i]);
	}
	k->period = mm->period;
	period_note(r, mm->period);
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if ((mm->mp.corrected >> m & 1) && (r->got >> m & 1)) {
			double full;
			pfc_mask_metric(&mm->mp, m, counts, res, &full, &k->est[m], &k->lo[m], &k->hi[m]);
			k->corrected |= 1u << m;
			k->exact[m] = exact[m];
			k->have_exact |= 1u << m;
		}
	snprintf(k->method, sizeof(k->method),
		 "trace: every %u%s count of each sampled %s event, with k0-k7 as the instruction ran (no skid)",
		 mm->period,
		 mm->period % 10 == 1 && mm->period % 100 != 11	  ? "st"
		 : mm->period % 10 == 2 && mm->period % 100 != 12 ? "nd"
		 : mm->period % 10 == 3 && mm->period % 100 != 13 ? "rd"
								  : "th",
		 mm->mp.pmu->name);
out:
	pf_mask_model_free(mm);
	return rc;
}

void pf_mask_model_free(struct pf_mask_model *mm)
{
	if (!mm)
		return;
	pfc_mask_trace_free(mm->mt);
	free(mm);
}
