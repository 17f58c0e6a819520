/*
 * mask_trace.c: the masked-lane estimator fed by the tracer (the model
 * path of --mask-sampling, and papi_flops_check's measure of its bias
 * and interval coverage): every period-th count of each sampled event,
 * with the opmask registers as the instruction ran (pflops_mask.h).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "pflops_internal.h"
#include "pflops_mask.h"

struct pfc_mask_trace {
	const struct pfc_mask_plan *mp;
	int n;
	struct pfc_mask_stream *st;
	double seen[PFLOPS_MAX_COUNTERS]; /* counts the hook saw, per plan event */
	struct pfc_mask_acc *acc;	  /* [stream][plan event] */
};

struct pfc_mask_trace *pfc_mask_trace_new(const struct pfc_mask_plan *mp, const struct pfc_mask_stream *st, int n,
					  struct pflops_error *err)
{
	struct pfc_mask_trace *t = calloc(1, sizeof(*t));
	if (!t || n <= 0 || !(t->st = calloc((size_t)n, sizeof(*st))) ||
	    !(t->acc = calloc((size_t)n * PFLOPS_MAX_COUNTERS, sizeof(*t->acc)))) {
		pfc_mask_trace_free(t);
		pfc_err(err, n <= 0 ? PFLOPS_EINVAL : PFLOPS_ENOMEM, n <= 0 ? "no sampling stream" : "out of memory");
		return NULL;
	}
	for (int s = 0; s < n; s++) {
		if (!st[s].period || st[s].phase >= st[s].period) {
			pfc_mask_trace_free(t);
			pfc_err(err, PFLOPS_EINVAL,
				"sampling period %u with phase %u: the period must be at least 1 "
				"and the phase below it",
				st[s].period, st[s].phase);
			return NULL;
		}
		t->st[s] = st[s];
		for (int i = 0; i < mp->nevents; i++)
			t->acc[s * PFLOPS_MAX_COUNTERS + i].ev = &mp->e[i].ev;
	}
	t->mp = mp;
	t->n = n;
	return t;
}

void pfc_mask_trace_free(struct pfc_mask_trace *t)
{
	if (!t)
		return;
	free(t->st);
	free(t->acc);
	free(t);
}

/* Samples a stream takes as its count goes from c to c + inc. */
static uint64_t crossings(double c, double inc, const struct pfc_mask_stream *st)
{
	return (uint64_t)(floor((c + inc + st->phase) / st->period) - floor((c + st->phase) / st->period));
}

void pfc_mask_trace_hook(void *arg, const struct pft_fp_exec *x)
{
	struct pfc_mask_trace *t = arg;
	struct pfc_mask_sample smp;
	int have_bytes = 0;

	if (x->prec >= PFLOPS_NPREC || x->width >= PFLOPS_NWIDTH || x->op >= PFLOPS_NOP)
		return;
	for (int i = 0; i < t->mp->nevents; i++) {
		if (!t->mp->e[i].sampled)
			continue;
		double inc = t->mp->e[i].ev.inc[x->prec][x->width][x->op];
		if (!(inc > 0))
			continue;
		for (int s = 0; s < t->n; s++) {
			uint64_t k = crossings(t->seen[i], inc, &t->st[s]);
			if (!k)
				continue;
			if (!have_bytes) {
				/* the instruction as the counters' sample would show it:
				 * address, bytes (read now: the thread is stopped), k0-k7 */
				struct iovec local = { smp.insn, sizeof(smp.insn) },
					     remote = { (void *)(uintptr_t)x->addr, sizeof(smp.insn) };
				memset(&smp, 0, sizeof(smp));
				smp.ip = x->addr;
				smp.pid = (uint32_t)x->tid;
				ssize_t got = process_vm_readv(x->tid, &local, 1, &remote, 1, 0);
				if (got < 0) { /* near the end of a mapping: the instruction alone */
					remote.iov_len = local.iov_len = 1;
					got = 0;
					while (got < (ssize_t)sizeof(smp.insn)) {
						local.iov_base = smp.insn + got;
						remote.iov_base = (void *)(uintptr_t)(x->addr + (uint64_t)got);
						if (process_vm_readv(x->tid, &local, 1, &remote, 1, 0) != 1)
							break;
						got++;
					}
				}
				smp.insn_len = (uint8_t)(got > 0 ? got : 0);
				if (x->k) {
					smp.have_k = 1;
					memcpy(smp.k, x->k, sizeof(smp.k));
				}
				have_bytes = 1;
			}
			struct pfc_mask_acc *a = &t->acc[s * PFLOPS_MAX_COUNTERS + i];
			if (!smp.insn_len) { /* nothing read: counted as unreadable */
				a->samples += k;
				a->unreadable += k;
				continue;
			}
			for (uint64_t j = 0; j < k; j++)
				pfc_mask_add(a, &smp, NULL, NULL, NULL);
		}
		t->seen[i] += inc;
	}
}

int pfc_mask_trace_result(struct pfc_mask_trace *t, const struct pflops_mix *mix, int s, double *counts,
			  struct pfc_mask_result *res, struct pflops_error *err)
{
	const struct pfc_mask_plan *mp = t->mp;
	if (s < 0 || s >= t->n)
		return pfc_err(err, PFLOPS_EINVAL, "no sampling stream %d", s);
	for (int i = 0; i < mp->nevents; i++) {
		const struct pflops_event *e = &mp->pmu->events[mp->e[i].event];
		struct pflops_error e2;
		if (!e->model)
			return pfc_err(err, PFLOPS_EUNAVAIL, "event %s of %s has no model", e->alias, mp->pmu->name);
		int rc = pfc_model_eval(e->model, mix, &counts[i], &e2);
		if (rc)
			return pfc_err(err, rc, "%s", e2.msg);
		struct pfc_mask_acc a = t->acc[s * PFLOPS_MAX_COUNTERS + i];
		if (mp->e[i].sampled) {
			/* the counts of blocks without a masked instruction, all
			 * unmasked, continue the stream after those the hook saw */
			double rest = counts[i] - t->seen[i];
			if (rest > 0)
				pfc_mask_add_full(&a, crossings(t->seen[i], rest, &t->st[s]));
		}
		pfc_mask_result(&a, counts[i], &res[i]);
	}
	return 0;
}
