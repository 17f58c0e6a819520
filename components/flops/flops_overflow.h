/*
 * flops_overflow.h: PAPI_overflow on flops events, hw source (counters).
 *
 * A FLOP event overflows through the native events of its formula: each
 * counter with weight w samples every ceil(P / w) counts (core:
 * pfc_perf_sample), so each overflow stands for P FLOPs and the
 * overflows number FLOPs / P.  Every sampling perf event gets a ring (its
 * sampled IP, precise where the PMU allows) and sends the component's
 * signal to the thread that started the set (F_SETSIG, F_SETOWN_EX), one
 * per overflow; flo_dispatch hands it to PAPI's overflow dispatch
 * (_papi_hwi_dispatch_overflow_signal) with that IP and the event's
 * position.  PAPI_OVERFLOW_FORCE_SW goes through the same dispatch from
 * PAPI's interval timer.
 *
 * PAPI_FLOPS_TEST_SWEVENT=page-faults|task-clock (tests only) opens every
 * native event of a set as that perf software event, and lets the
 * component count without hardware counters: counts and overflows are
 * then of the stand-in, not FLOPs (said on stderr).
 */
#ifndef FLOPS_OVERFLOW_H
#define FLOPS_OVERFLOW_H

#include <stddef.h>
#include <stdint.h>
#include "core/pflops_perf.h"

#define FLO_MAX_EVENTS 16
#define FLO_MAX_RINGS (PFLOPS_MAX_KINDS * (PFLOPS_MAX_COUNTERS + 1))

struct flo_ring {
	int fd;
	int pos;   /* PAPI position of the event it overflows for */
	void *map; /* the perf mmap: one header page, then the data */
	size_t maplen;
};

/* Per event set (inside the component's control state). */
struct flo_state {
	long long threshold[FLO_MAX_EVENTS]; /* by event position; 0: not overflowing */
	int signal_on;			     /* the dispatch handler installed for this set */
	int owner[FLO_MAX_RINGS];	     /* layout event -> position it samples for, -1 */
	int nring;
	struct flo_ring ring[FLO_MAX_RINGS];
};

/* The stand-in's perf software config when PAPI_FLOPS_TEST_SWEVENT names
 * one (1), else 0; a value it does not know is said on stderr, once, and
 * taken as none.  flo_standin_apply turns every event into it. */
int flo_standin(uint64_t *config);
void flo_standin_apply(struct pfc_perf_event *ev, int n);

int flo_active(const struct flo_state *o);

/* Give the layout's events their periods for every overflowing position
 * (slot_of[pos]: its planner slot).  msg: one sentence on failure, which
 * is PAPI_ECNFLCT (a counter shared by two overflowing events) or
 * PAPI_EINVAL. */
int flo_layout(struct flo_state *o, const int *slot_of, int nevents, const struct pfc_perf_kind *pk, int nk,
	       int counter_slot[][PFLOPS_MAX_COUNTERS], struct pfc_perf_event *ev, int n, const char *const *names,
	       char *msg, size_t len);
/* After the set is open: a ring and the signal on each sampling event. */
int flo_arm(struct flo_state *o, const struct pfc_perf_set *set, int n, int signo, char *msg, size_t len);
/* Rings unmapped (the engine closes the descriptors). */
void flo_disarm(struct flo_state *o);

/* Record (threshold > 0) or clear position pos; installs PAPI's signal
 * handler for the component (cidx) with the first overflowing event,
 * removes it with the last. */
int flo_set(struct flo_state *o, int pos, long long threshold, int signo, int cidx);
/* Before the set goes away. */
void flo_release(struct flo_state *o, int signo);

/* The component's dispatch_timer: ovf_offset is where the flo_state lies
 * in the control state. */
void flo_dispatch(int cidx, size_t ovf_offset, void *siginfo, void *ucontext);

#endif
