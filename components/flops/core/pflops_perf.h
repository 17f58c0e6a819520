/*
 * pflops_perf.h: the counting engine of papi-flops, on Linux perf_event.
 *
 * PAPI-independent: it opens generic (perf type, config) events for one
 * thread, in perf groups, reads them with one read() per group, scales
 * multiplexed counts by time_enabled / time_running, and sums the events
 * of several core kinds (hybrid CPUs: one PMU per kind) into output slots.
 * The flops PAPI component and the utilities use it; its tests run on
 * perf's software events (task-clock, page-faults ...), which every Linux
 * machine has, with or without hardware counters.
 *
 * Errors follow papi_flops.h: PFLOPS_OK or a negative PFLOPS_E* code, and
 * one sentence in err->msg when err is non-NULL.
 */
#ifndef PFC_PERF_H
#define PFC_PERF_H

#include <stdint.h>
#include <signal.h>
#include <sys/types.h>
#include "papi_flops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One event to open.  Consecutive events with equal `group` form one perf
 * group (the first is its leader; one read() returns them all).  Events of
 * equal `slot` are summed into that output slot (one per core kind on a
 * hybrid CPU).
 *
 * slot < 0 marks a time reference of its kind (an event that always runs
 * while the thread is on that kind, e.g. cycles on a fixed counter): its
 * running time is the time spent on the kind.  Why: on a hybrid CPU an
 * event of one kind's PMU is enabled all the time but runs only while the
 * thread is on that kind, so enabled/running would mistake time on the
 * other kind for multiplexing.  A kind with a reference scales its events
 * by reference-time / running; a kind without one (non-hybrid) by
 * enabled / running.  A kind with only a reference is not covered (no
 * FLOP event there, e.g. Gracemont): its time is reported, not hidden. */
struct pfc_perf_event {
	uint32_t type; /* PERF_TYPE_RAW, a sysfs PMU type, PERF_TYPE_SOFTWARE ... */
	uint64_t config;
	int group;
	int slot;
	int kind;      /* core kind index (< PFLOPS_MAX_KINDS) */
	int cpu;       /* -1: wherever the thread runs; else only on that CPU */
	char name[64]; /* for messages: "cpu_core/FP_ARITH_INST_RETIRED:SCALAR/" */
	/* sampling (overflow): 0 counts only; else the event overflows every
	 * sample_period counts, records its IP (PERF_SAMPLE_IP) and wakes up
	 * on each overflow; precise: the precise_ip tried first, lowered
	 * until the kernel takes it (precise_used: what it took) */
	uint64_t sample_period;
	int precise, precise_used;
};

struct pfc_perf_attr {
	pid_t tid; /* 0: the calling thread; else attach to that thread */
	int exclude_user, exclude_kernel, exclude_hv;
	int inherit;	    /* count the threads and children tid creates later */
	int enable_on_exec; /* start counting when tid execs (a program run
				 * under pfc_child_*): never start it by hand */
	int check_schedule; /* after opening, run each group once and fail with
				 * PFLOPS_ECNFLCT when the kernel could not schedule it
				 * (not with enable_on_exec; a kind whose reference did
				 * not run while another's did is skipped: the thread
				 * was on that other kind) */
};

/* What one event read: its count and times since the last start/reset. */
struct pfc_perf_value {
	uint64_t raw;
	uint64_t enabled, running; /* ns */
};

struct pfc_perf_status {
	int estimated;			    /* some slot was scaled (multiplexed) */
	int unscheduled;		    /* some slot's events never ran: no count at all */
	uint64_t covered_ns;		    /* time on kinds that count */
	uint64_t uncovered_ns;		    /* time on kinds with only a reference event */
	double uncovered_share;		    /* uncovered / (covered + uncovered), 0 if no time */
	uint64_t kind_ns[PFLOPS_MAX_KINDS]; /* time on each kind (its reference's, else enabled) */
};

struct pfc_perf_set;

/* Open n events for attr->tid (disabled).  Fails (nothing left open) with
 * PFLOPS_EPERM, PFLOPS_ENOPMU (no such PMU / event here), PFLOPS_ECNFLCT,
 * PFLOPS_EINVAL or PFLOPS_ESYS, naming the event. */
int pfc_perf_open(struct pfc_perf_set **set, const struct pfc_perf_event *ev, int n, const struct pfc_perf_attr *attr,
		  struct pflops_error *err);
void pfc_perf_close(struct pfc_perf_set *set);
int pfc_perf_count(const struct pfc_perf_set *set);
/* The file descriptor of event i (open order), -1 when none: a sampling
 * event's, for its ring (mmap) and its overflow signal (fcntl). */
int pfc_perf_fd(const struct pfc_perf_set *set, int i);
/* The precise_ip event i was opened with. */
int pfc_perf_precise(const struct pfc_perf_set *set, int i);

/* start: zero and enable; stop: disable (values stay readable);
 * reset: zero without changing whether it runs.  Counts are zeroed by
 * taking a baseline, so times scale correctly after a reset. */
int pfc_perf_start(struct pfc_perf_set *set, struct pflops_error *err);
int pfc_perf_stop(struct pfc_perf_set *set, struct pflops_error *err);
int pfc_perf_reset(struct pfc_perf_set *set, struct pflops_error *err);

/* Values of every event (in open order) since start/reset: one read() per group. */
int pfc_perf_read(struct pfc_perf_set *set, struct pfc_perf_value *v, struct pflops_error *err);

/* raw scaled to the full enabled time: raw * enabled / running.
 * *estimated (may be NULL) is set to 1 when running < enabled; running 0
 * gives 0 and *estimated = -1 (not counted at all). */
double pfc_perf_scale(uint64_t raw, uint64_t enabled, uint64_t running, int *estimated);

/* Sum scaled values into slots[0..nslots-1] (events of equal slot over
 * kinds, scaled as described above) and summarize estimation and
 * coverage in st (may be NULL). */
void pfc_perf_sum(const struct pfc_perf_set *set, const struct pfc_perf_value *v, double *slots, int nslots,
		  struct pfc_perf_status *st);

/* ---------------------------------------------------------------------
 * Plans of core kinds as perf events, and metrics back from the summed
 * slots: the one layout the component and papi_flops_run share.
 */
struct pfc_perf_kind {
	const struct pflops_plan *plan; /* NULL: nothing counted, only its time */
	uint32_t type;			/* perf type of its PMU (PERF_TYPE_RAW unless hybrid) */
	int arch;			/* enum pflops_arch: how its cycles reference is coded */
	int ref;			/* open a cycles time reference (hybrid kinds) */
	int split;			/* one event per group: the kernel multiplexes them */
	const char *pmu_name;		/* for messages: "cpu_core" */
};

/* Events for the kinds: each kind's time reference (slot -1) then its
 * plan's counters, one group per kind unless split.  slot[k][c] receives
 * the output slot of counter c of kind k.  Returns the number of events,
 * or PFLOPS_EINVAL when more than max. */
int pfc_perf_layout(const struct pfc_perf_kind *kinds, int nkinds, struct pfc_perf_event *ev, int max,
		    int slot[][PFLOPS_MAX_COUNTERS], int *nslots);
/* Planner slot s (a metric of the plans) from the summed slots. */
double pfc_perf_metric(const struct pfc_perf_kind *kinds, int nkinds, int slot[][PFLOPS_MAX_COUNTERS],
		       const double *slots, int s);
/* Overflow every P units of planner slot s (a FLOP metric): every counter
 * of the kinds' plans with a positive weight w for s samples with period
 * ceil(P / w), so each overflow stands for P units (ceil(P / w) counts are
 * w * ceil(P / w) units, at most w - 1 more than P: crediting P per
 * overflow errs by less than w units in P) and the overflows number
 * about slot / P.  The layout's events of
 * those counters get their sample_period; owner[i] (n entries, -1 =
 * none) is set to tag, and an event another tag already samples is
 * PFLOPS_ECNFLCT (one perf event has one period), a negative weight
 * PFLOPS_EINVAL (a subtracted count cannot overflow).  Returns the
 * number of sampling events, or PFLOPS_EUNAVAIL when no counter counts s. */
int pfc_perf_sample(const struct pfc_perf_kind *kinds, int nkinds, int slot[][PFLOPS_MAX_COUNTERS],
		    struct pfc_perf_event *ev, int n, int *owner, int s, uint64_t P, int tag, struct pflops_error *err);
/* What the plans' detector counters read (instructions left unweighted). */
double pfc_perf_detected(const struct pfc_perf_kind *kinds, int nkinds, int slot[][PFLOPS_MAX_COUNTERS],
			 const double *slots);

/* ---------------------------------------------------------------------
 * A program to count: forked and held before exec, so that events can be
 * opened on it (inherit + enable_on_exec) before it runs.
 */
struct pflops_child {
	pid_t pid;
	const char *prog; /* argv[0], for messages */
	int go, fail;	  /* pipes: release it; its exec error */
	/* optional, as pflops_trace_opts.interrupt: a signal the caller's
	 * handler saw is passed on to the program (when it did not get it
	 * too); it is killed after the grace time or at a second signal */
	const volatile sig_atomic_t *interrupt;
};
/* Fork argv[0] (searched in PATH), held.  PFLOPS_ESYS on failure. */
int pfc_child_spawn(struct pflops_child *c, char *const argv[], struct pflops_error *err);
/* Release it and wait: *status its wait status, *wall seconds from release
 * (may be NULL).  PFLOPS_ECHILD when it could not exec.  The interrupt
 * flag is acted on as the tracer does (passed on, then SIGKILL after
 * PFLOPS_INTERRUPT_GRACE_MS or at a second signal). */
int pfc_child_run(struct pflops_child *c, int *status, double *wall_seconds, struct pflops_error *err);
/* The same, calling tick(arg) about every tick_ms while the program runs
 * (a sampler drains its rings). */
typedef void (*pfc_child_tick_fn)(void *arg);
int pfc_child_run_tick(struct pflops_child *c, int *status, double *wall_seconds, unsigned tick_ms,
		       pfc_child_tick_fn tick, void *arg, struct pflops_error *err);
/* Kill a held child that must not run (events could not be opened). */
void pfc_child_abort(struct pflops_child *c);
/* The whole sequence: spawn argv held, open(arg, its pid) the events on
 * it (killed unrun when that fails), release it and wait (pfc_child_run,
 * with interrupt as pflops_child.interrupt; may be NULL). */
typedef int (*pfc_child_open_fn)(void *arg, pid_t pid, struct pflops_error *err);
int pfc_child_count(char *const argv[], const volatile sig_atomic_t *interrupt, pfc_child_open_fn open, void *arg,
		    int *status, double *wall_seconds, struct pflops_error *err);

/* The perf PMU type of /sys/bus/event_source/devices/<pmu>/type
 * (PAPI_FLOPS_SYSFS overrides the directory, as for the probe). */
int pfc_perf_pmu_type(const char *pmu, uint32_t *type, struct pflops_error *err);

#ifdef __cplusplus
}
#endif
#endif
