/*
 * maskest.c: the active-lane estimator of masked AVX-512 instructions
 * from sampled opmask registers (pflops_mask.h; docs/masked-lanes.md).
 */
#include <math.h>
#include <string.h>
#include "pflops_internal.h"
#include "pflops_mask.h"
#include "pflops_trace.h"

#define Z95 1.959963984540054

/* Elements of one full register of this class (scalar: 1). */
static unsigned lanes_of(int prec, int width)
{
#define BITS(id, name, bits) bits,
	static const unsigned bits[PFLOPS_NPREC] = { PFLOPS_PRECS(BITS) };
	static const unsigned wbits[PFLOPS_NWIDTH] = { PFLOPS_WIDTHS(BITS) };
#undef BITS
	if (width == PFLOPS_SCALAR)
		return 1;
	return bits[prec] ? wbits[width] / bits[prec] : 0; /* x87: no packed form */
}

int pfc_mask_event_from_model(const char *model, struct pfc_mask_event *ev, struct pflops_error *err)
{
	struct pflops_mix one; /* one instruction of one class */
	int any = 0;

	memset(ev, 0, sizeof(*ev));
	ev->weight = 1;
	for (int p = 0; p < PFLOPS_NPREC; p++)
		for (int w = 0; w < PFLOPS_NWIDTH; w++)
			for (int o = 0; o < PFLOPS_NOP; o++) {
				unsigned l = lanes_of(p, w);
				double n;
				if (!l)
					continue;
				memset(&one, 0, sizeof(one));
				one.insts[p][w][o] = 1;
				one.lanes_full[p][w][o] = l;
				one.lanes_active[p][w][o] = l;
				one.total_insts = 1;
				int rc = pfc_model_eval(model, &one, &n, err);
				if (rc)
					return rc;
				ev->inc[p][w][o] = (float)n;
				any |= n > 0;
			}
	if (!any)
		return pfc_err(err, PFLOPS_EUNAVAIL, "model '%s' counts no floating-point instruction class", model);
	return 0;
}

static unsigned popcount64(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

/* Decode the sample's instruction and judge what it is to this event;
 * e->verdict is USED for an instruction of the event's classes (then
 * lanes, mask_reg, lanes_per_bit and kclobber are filled). */
static void judge(const struct pfc_mask_event *ev, const struct pfc_mask_sample *s, pfc_mask_read_fn read, void *arg,
		  struct pfc_mask_cached *e)
{
	uint8_t buf[256];
	size_t have;
	struct pft_insn in;

	memset(e, 0, sizeof(*e));
	e->ip = s->ip;
	e->pid = s->pid;
	e->valid = 1;
	if (s->insn_len) {
		have = s->insn_len < sizeof(s->insn) ? s->insn_len : sizeof(s->insn);
		memcpy(buf, s->insn, have);
	} else {
		/* the instruction, plus the straight-line code the capture may trail it by */
		size_t want = ev->capture_lag ? sizeof(buf) : 16;
		have = read ? read(arg, s->pid, s->ip, buf, want) : 0;
	}
	if (!have || pfc_decode(buf, have, s->ip, &in)) {
		e->verdict = PFC_MS_UNREADABLE;
		return;
	}
	if (!in.fp || in.prec >= PFLOPS_NPREC || in.width >= PFLOPS_NWIDTH || in.op >= PFLOPS_NOP ||
	    !(ev->inc[in.prec][in.width][in.op] > 0)) {
		e->verdict = PFC_MS_SKID;
		return;
	}
	e->verdict = PFC_MS_USED;
	e->lanes = in.lanes;
	e->mask_reg = in.mask_reg;
	e->lanes_per_bit = in.lanes_per_bit ? in.lanes_per_bit : 1;
	/* opmask registers written by the straight-line code that follows,
	 * up to capture_lag instructions or the first branch: beyond a branch
	 * the path is unknown, and the window is a bound, not a measurement */
	size_t pos = in.len;
	for (unsigned i = 0; i < ev->capture_lag && pos < have && in.term == PFT_T_NONE; i++) {
		if (pfc_decode(buf + pos, have - pos, s->ip + pos, &in))
			break;
		e->kclobber |= in.kwrites;
		pos += in.len;
	}
}

enum pfc_mask_verdict pfc_mask_add(struct pfc_mask_acc *a, const struct pfc_mask_sample *s, pfc_mask_read_fn read,
				   void *arg, double *share)
{
	struct pfc_mask_cached tmp, *e;
	size_t slot = (size_t)((s->ip ^ (s->ip >> 12) ^ ((uint64_t)s->pid * 0x9e3779b9u)) % PFC_MASK_CACHE);

	a->samples++;
	/* bytes carried in the sample are decoded each time (they may differ
	 * between processes at one address); bytes read through the reader
	 * are remembered per (pid, ip), unless they could not be read */
	if (s->insn_len) {
		e = &tmp;
		judge(a->ev, s, read, arg, e);
	} else {
		e = &a->cache[slot];
		if (!e->valid || e->ip != s->ip || e->pid != s->pid)
			judge(a->ev, s, read, arg, e);
	}
	if (e->verdict != PFC_MS_USED) {
		if (e->verdict == PFC_MS_SKID) {
			a->skid++;
			return PFC_MS_SKID;
		}
		/* not remembered: the mapping may be learnt later */
		e->valid = 0;
		a->unreadable++;
		return PFC_MS_UNREADABLE;
	}
	double sh = 1;
	if (e->mask_reg) {
		if (!s->have_k) {
			a->nomask++;
			return PFC_MS_NOMASK;
		}
		if (e->kclobber & (1u << e->mask_reg)) {
			a->changed++;
			return PFC_MS_CHANGED;
		}
		unsigned bits = e->lanes / e->lanes_per_bit;
		uint64_t sel = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
		sh = e->lanes ? (double)(popcount64(s->k[e->mask_reg] & sel) * e->lanes_per_bit) / e->lanes : 1;
		a->masked++;
	}
	a->used++;
	a->sum_share += sh;
	if (share)
		*share = sh;
	return PFC_MS_USED;
}

void pfc_mask_add_full(struct pfc_mask_acc *a, uint64_t n)
{
	a->known_full += n;
	a->samples += n;
	a->sum_share += (double)n;
}

void pfc_mask_result(const struct pfc_mask_acc *a, double count, struct pfc_mask_result *r)
{
	double w = a->ev ? a->ev->weight : 1, n = (double)(a->used + a->known_full);

	memset(r, 0, sizeof(*r));
	r->count = count;
	r->full = w * count;
	r->samples = a->samples;
	r->used = a->used;
	r->masked = a->masked;
	r->skid = a->skid;
	r->nomask = a->nomask;
	r->unreadable = a->unreadable;
	r->changed = a->changed;
	r->known_full = a->known_full;
	if (n <= 0 || count <= 0) {
		/* nothing known of the lanes: the full-lane bound, interval [0, full] */
		r->share = r->share_hi = 1;
		r->share_lo = count > 0 ? 0 : 1;
	} else {
		double p = a->sum_share / n;
		/* score interval for a [0,1] mean at the largest variance,
		 * p(1-p), with the finite-population correction (sampling n of
		 * count units without replacement) folded into z^2 */
		double fpc = n >= count ? 0 : 1 - n / count;
		double z2 = Z95 * Z95 * fpc;
		double den = 1 + z2 / n;
		double mid = (p + z2 / (2 * n)) / den;
		double half = sqrt(z2 * p * (1 - p) / n + z2 * z2 / (4 * n * n)) / den;
		p = p > 1 ? 1 : p < 0 ? 0 : p;
		r->share = p;
		r->share_lo = mid - half < 0 ? 0 : mid - half;
		r->share_hi = mid + half > 1 ? 1 : mid + half;
		if (r->share_lo > p) /* rounding: the interval holds the estimate */
			r->share_lo = p;
		if (r->share_hi < p)
			r->share_hi = p;
	}
	r->flops = r->full * r->share;
	r->lo = r->full * r->share_lo;
	r->hi = r->full * r->share_hi;
}

/* ---------------------------------------------------------------------
 * Events and metrics.
 */

static int plan_find(const struct pfc_mask_plan *mp, int event)
{
	for (int i = 0; i < mp->nevents; i++)
		if (mp->e[i].event == event)
			return i;
	return -1;
}

static double term_weight(const struct pflops_pmu *pmu, const struct pflops_term *t)
{
	return t->w0 + t->wvl * pmu->sve_bits;
}

int pfc_mask_plan_make(struct pfc_mask_plan *mp, const struct pflops_pmu *pmu, unsigned metrics,
		       struct pflops_error *err)
{
	memset(mp, 0, sizeof(*mp));
	mp->pmu = pmu;
	/* which masked-full metrics have every event modelled */
	for (int m = 0; m < PFLOPS_NMETRIC; m++) {
		const struct pflops_metric_def *d = &pmu->metrics[m];
		if (!(metrics >> m & 1) || d->klass != PFLOPS_MASKED_FULL)
			continue;
		int ok = d->nterms > 0;
		for (int t = 0; t < d->nterms && ok; t++) {
			struct pfc_mask_event ev;
			const char *model = pmu->events[d->terms[t].event].model;
			ok = model && pfc_mask_event_from_model(model, &ev, NULL) == 0;
		}
		if (ok)
			mp->corrected |= 1u << m;
	}
	if (!mp->corrected)
		return pfc_err(
			err, PFLOPS_EUNAVAIL,
			"nothing to correct on %s (%s): none of the metrics asked is masked-full with modelled events "
			"(only AVX-512 cores count masked lanes in full)",
			pmu->name, pmu->title);
	for (int m = 0; m < PFLOPS_NMETRIC; m++) {
		const struct pflops_metric_def *d = &pmu->metrics[m];
		if (!(metrics >> m & 1) || d->klass == PFLOPS_UNAVAILABLE)
			continue;
		for (int t = 0; t < d->nterms; t++) {
			int e = d->terms[t].event, i = plan_find(mp, e);
			if (i < 0) {
				if (mp->nevents == PFLOPS_MAX_COUNTERS)
					return pfc_err(err, PFLOPS_ECNFLCT,
						       "the metrics asked need more than %d events on %s",
						       PFLOPS_MAX_COUNTERS, pmu->name);
				i = mp->nevents++;
				mp->e[i].event = e;
				mp->e[i].ev.weight = 1;
			}
			if ((mp->corrected >> m & 1) && !mp->e[i].sampled) {
				struct pflops_error e2;
				if (pfc_mask_event_from_model(pmu->events[e].model, &mp->e[i].ev, &e2))
					return pfc_err(err, e2.code, "%s", e2.msg);
				mp->e[i].sampled = 1;
				mp->e[i].ev.weight = term_weight(pmu, &d->terms[t]);
			}
		}
		mp->metrics |= 1u << m;
	}
	/* an event's FLOPs per count: its weight in a corrected FLOP metric */
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		for (int t = 0; (mp->corrected >> m & 1) && pflops_metric_is_flop(m) && t < pmu->metrics[m].nterms;
		     t++) {
			int i = plan_find(mp, pmu->metrics[m].terms[t].event);
			if (i >= 0)
				mp->e[i].ev.weight = term_weight(pmu, &pmu->metrics[m].terms[t]);
		}
	return 0;
}

void pfc_mask_metric(const struct pfc_mask_plan *mp, int m, const double *counts, const struct pfc_mask_result *res,
		     double *full, double *est, double *lo, double *hi)
{
	const struct pflops_metric_def *d = &mp->pmu->metrics[m];
	double f = 0, e = 0, vlo = 0, vhi = 0;
	int corr = res && (mp->corrected >> m & 1);

	for (int t = 0; t < d->nterms; t++) {
		int i = plan_find(mp, d->terms[t].event);
		double w = term_weight(mp->pmu, &d->terms[t]);
		if (i < 0)
			continue;
		f += w * counts[i];
		if (corr && mp->e[i].sampled) {
			const struct pfc_mask_result *r = &res[i];
			double c = w * counts[i];
			e += c * r->share;
			vlo += (c * (r->share - r->share_lo)) * (c * (r->share - r->share_lo));
			vhi += (c * (r->share_hi - r->share)) * (c * (r->share_hi - r->share));
		} else {
			e += w * counts[i];
		}
	}
	*full = f;
	if (est)
		*est = e;
	if (lo)
		*lo = e - sqrt(vlo) < 0 ? 0 : e - sqrt(vlo);
	if (hi)
		*hi = e + sqrt(vhi);
}
