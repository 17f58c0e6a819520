/*
 * pflops_sampler.h: sampling a program with perf_event, for the masked-
 * lane estimator (pflops_mask.h).
 *
 * Each event is opened on the program (inherit, enabled at exec) with its
 * own mmap ring; a sampling event records IP, TID, PERIOD and the user
 * registers (the IP register, and k0-k7 when opmask is asked: the
 * SIMD-register fields of pflops_simd.h), plus MMAP2, FORK and COMM
 * records, so that a sampled address can be read back from the file
 * mapped there after the program is gone.  The rings are drained while
 * the program runs (from another thread, as the caller likes) and at the
 * end; each event's total count is read as a counting event's.
 *
 * Tested on perf's software events (cpu-clock), which every Linux has;
 * hardware FP_ARITH events use the same code.  Errors: papi_flops.h.
 */
#ifndef PFC_SAMPLER_H
#define PFC_SAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "papi_flops.h"
#include "pflops_simd.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pfc_sampler_event {
	uint32_t type; /* PERF_TYPE_RAW, PERF_TYPE_SOFTWARE ... */
	uint64_t config;
	uint64_t period; /* sample every period counts; 0: count only */
	int opmask;	 /* ask k0-k7 with each sample */
	int precise;	 /* precise_ip to try first; lowered until the kernel takes it */
	int callchain;	 /* ask the user call chain with each sample (frame pointers) */
	char name[64];	 /* for messages */
	/* after open */
	int precise_used;
};

struct pfc_sampler_stats {
	uint64_t samples; /* sample records handed on */
	uint64_t lost;	  /* records the kernel dropped (ring full) */
	uint64_t bad;	  /* records that could not be parsed */
	uint64_t mmaps;	  /* mappings known */
};

struct pfc_sampler;

/* Called per sample: the event's index and the parsed record. */
typedef void (*pfc_sampler_fn)(void *arg, int event, const struct pfc_sample_rec *r);

/* Open n events on tid (a held child: pfc_child_spawn), each with a
 * ring of ring_pages data pages (a power of two; 0: 64).  Nothing is
 * left open on failure: PFLOPS_EUNAVAIL when the kernel refuses the
 * opmask fields (E2BIG / EOPNOTSUPP), else as pfc_perf_open. */
int pfc_sampler_open(struct pfc_sampler **s, struct pfc_sampler_event *ev, int n, pid_t tid, size_t ring_pages,
		     struct pflops_error *err);
/* Consume every ring: mappings are kept, samples go to fn. */
void pfc_sampler_drain(struct pfc_sampler *s, pfc_sampler_fn fn, void *arg);
/* Release a held child (pfc_child_spawn) and drain the rings into fn
 * while it runs, then once more after it ended: *status its wait
 * status, *wall seconds from release (may be NULL).  PFLOPS_ECHILD when
 * it could not exec. */
struct pflops_child;
int pfc_sampler_run(struct pfc_sampler *s, struct pflops_child *c, pfc_sampler_fn fn, void *arg, int *status,
		    double *wall_seconds, struct pflops_error *err);
/* Each event's total count, scaled by enabled / running. */
int pfc_sampler_counts(struct pfc_sampler *s, double *counts, struct pflops_error *err);
void pfc_sampler_stats(const struct pfc_sampler *s, struct pfc_sampler_stats *st);
/* A pfc_mask_read_fn: the bytes at addr in pid's code, from the file
 * mapped there (MMAP2 records; a forked child sees its parent's until it
 * execs).  0 for anonymous or unknown memory. */
size_t pfc_sampler_read_code(void *sampler, uint32_t pid, uint64_t addr, uint8_t *buf, size_t len);
/* Where addr lies in pid's memory: the file mapped there (MMAP2
 * records; NULL: anonymous or unknown, then 0), that mapping's start and
 * addr's offset in the file.  *path stays valid until the sampler is
 * closed. */
int pfc_sampler_where(const struct pfc_sampler *s, uint32_t pid, uint64_t addr, const char **path, uint64_t *map_start,
		      uint64_t *offset);
void pfc_sampler_close(struct pfc_sampler *s);

#ifdef __cplusplus
}
#endif
#endif
