/*
 * trace_thread.c: the traced threads of a run (T->threads): found,
 * added, dropped; a dropped thread's cache counts go into the run's mix
 * and its address space is let go.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "trace_thread.h"
#include "trace_cache.h"
#include "trace_count.h"
#include "trace_elf.h"
#include "trace_engine.h"
#include "trace_hints.h"

struct pft_thr *pft_thread_find(struct pft_tracer *T, pid_t tid)
{
	for (struct pft_thr *t = T->threads; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

struct pft_thr *pft_thread_add(struct pft_tracer *T, pid_t tid, int state)
{
	struct pft_thr *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	t->tid = tid;
	t->state = state;
	t->resume = PTRACE_CONT;
	t->mode = PFT_M_STOP;
	t->slot = -1;
	pft_ovf_thread(T, t);
	t->next = T->threads;
	T->threads = t;
	T->st.threads++;
	pft_pin_update(T);
	return t;
}

/* The thread's counts in the cache go into the mix; its slot is freed. */
void pft_thread_harvest(struct pft_tracer *T, struct pft_thr *t)
{
	if (t->slot >= 0 && t->sp && t->sp->arena) {
		uint8_t *m = pft_slot_mem(t->sp->arena, t->slot);
		uint64_t n = 0, ns = 0;
		if (m) { /* system calls it ran from the cache unstopped */
			memcpy(&n, m + PFT_SLOT_NSYS, 8);
			memcpy(&ns, m + PFT_SLOT_NSIGRET, 8);
		}
		T->st.syscalls_fast += n + ns;
		T->st.fast_sigreturns += ns;
		T->st.cache_runs += pft_harvest(t->sp->arena, t->slot, T->mix, 1);
		pft_slot_free(t->sp->arena, t->slot);
	}
	t->slot = -1;
}

void pft_space_release(struct pft_tracer *T, struct pft_space *sp)
{
	if (sp && pft_region_found(sp->region))
		T->st.region_found = 1;
	if (sp && pft_region_refused(sp->region) && !T->st.region_refused[0])
		snprintf(T->st.region_refused, sizeof T->st.region_refused, "%s", pft_region_refused(sp->region));
	if (sp && sp->refs == 1) {
		pft_hints_save(T, sp); /* its last thread: what ran, by file */
		T->st.code_view_pages += sp->fv_pages;
	}
	pft_space_put(sp);
}

void pft_thread_drop(struct pft_tracer *T, pid_t tid)
{
	for (struct pft_thr **p = &T->threads; *p; p = &(*p)->next)
		if ((*p)->tid == tid) {
			struct pft_thr *t = *p;
			pft_win_drop(T, t);
			*p = t->next;
			pft_signal_forget(t);
			pft_thread_harvest(T, t);
			pft_space_release(T, t->sp);
			free(t);
			pft_pin_update(T);
			return;
		}
}
