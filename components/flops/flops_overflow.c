/*
 * PAPI_overflow on flops events over perf_event sampling: flops_overflow.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "papi.h"
#include "papi_internal.h"
#include "papi_vector.h"
#include "extras.h"
#include "threads.h"
#include "linux-context.h"

#include "flops_overflow.h"

#define FLO_RING_PAGES 8 /* data pages per sampling event: 2048 IP samples */

int flo_standin(uint64_t *config)
{
	static int said;
	const char *v = getenv("PAPI_FLOPS_TEST_SWEVENT");
	if (!v || !*v)
		return 0;
	uint64_t c;
	if (!strcmp(v, "page-faults"))
		c = PERF_COUNT_SW_PAGE_FAULTS;
	else if (!strcmp(v, "task-clock"))
		c = PERF_COUNT_SW_TASK_CLOCK;
	else {
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			fprintf(stderr,
				"PAPI flops component: PAPI_FLOPS_TEST_SWEVENT=%.40s is neither page-faults nor task-clock: ignored\n",
				v);
		return 0;
	}
	if (config)
		*config = c;
	return 1;
}

void flo_standin_apply(struct pfc_perf_event *ev, int n)
{
	uint64_t c;
	if (!flo_standin(&c))
		return;
	for (int i = 0; i < n; i++) {
		ev[i].type = PERF_TYPE_SOFTWARE;
		ev[i].config = c;
	}
}

int flo_active(const struct flo_state *o)
{
	for (int i = 0; i < FLO_MAX_EVENTS; i++)
		if (o->threshold[i] > 0)
			return 1;
	return 0;
}

int flo_layout(struct flo_state *o, const int *slot_of, int nevents, const struct pfc_perf_kind *pk, int nk,
	       int counter_slot[][PFLOPS_MAX_COUNTERS], struct pfc_perf_event *ev, int n, const char *const *names,
	       char *msg, size_t len)
{
	if (n > FLO_MAX_RINGS) {
		snprintf(msg, len, "%d perf events to sample, at most %d", n, FLO_MAX_RINGS);
		return PAPI_ECOUNT;
	}
	for (int i = 0; i < n; i++)
		o->owner[i] = -1;
	for (int pos = 0; pos < nevents && pos < FLO_MAX_EVENTS; pos++) {
		if (o->threshold[pos] <= 0)
			continue;
		struct pflops_error err = { 0 };
		int rc = pfc_perf_sample(pk, nk, counter_slot, ev, n, o->owner, slot_of[pos],
					 (uint64_t)o->threshold[pos], pos, &err);
		if (rc < 0) {
			snprintf(msg, len, "PAPI_overflow on %s cannot be done: %s", names[pos], err.msg);
			return rc == PFLOPS_ECNFLCT ? PAPI_ECNFLCT : PAPI_EINVAL;
		}
	}
	return PAPI_OK;
}

void flo_disarm(struct flo_state *o)
{
	for (int r = 0; r < o->nring; r++)
		if (o->ring[r].map)
			munmap(o->ring[r].map, o->ring[r].maplen);
	o->nring = 0;
}

int flo_arm(struct flo_state *o, const struct pfc_perf_set *set, int n, int signo, char *msg, size_t len)
{
	long ps = sysconf(_SC_PAGESIZE);
	pid_t tid = (pid_t)syscall(SYS_gettid);
	o->nring = 0;
	for (int i = 0; i < n; i++) {
		if (o->owner[i] < 0)
			continue;
		struct flo_ring *r = &o->ring[o->nring];
		r->fd = pfc_perf_fd(set, i);
		r->pos = o->owner[i];
		r->maplen = (size_t)(1 + FLO_RING_PAGES) * ps;
		r->map = mmap(NULL, r->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (r->map == MAP_FAILED) {
			r->map = NULL;
			snprintf(
				msg, len,
				"overflow: mmap of the sample ring of a perf event failed: %s (ulimit -l, perf_event_mlock_kb)",
				strerror(errno));
			flo_disarm(o);
			return PAPI_ESYS;
		}
		o->nring++;
		/* one signal per overflow, to this thread, naming the fd */
		struct f_owner_ex own = { .type = F_OWNER_TID, .pid = tid };
		if (fcntl(r->fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0 || fcntl(r->fd, F_SETSIG, signo) < 0 ||
		    fcntl(r->fd, F_SETOWN_EX, &own) < 0) {
			snprintf(msg, len, "overflow: fcntl on a perf event failed: %s", strerror(errno));
			flo_disarm(o);
			return PAPI_ESYS;
		}
	}
	return PAPI_OK;
}

int flo_set(struct flo_state *o, int pos, long long threshold, int signo, int cidx)
{
	if (pos < 0 || pos >= FLO_MAX_EVENTS)
		return PAPI_EINVAL;
	if (!threshold && o->threshold[pos] <= 0)
		return PAPI_EINVAL; /* cleared, never set (as perf_event) */
	o->threshold[pos] = threshold;
	if (flo_active(o) && !o->signal_on) {
		int rc = _papi_hwi_start_signal(signo, 1, cidx);
		if (rc != PAPI_OK) {
			o->threshold[pos] = 0;
			return rc;
		}
		o->signal_on = 1;
	} else if (!flo_active(o) && o->signal_on) {
		_papi_hwi_stop_signal(signo);
		o->signal_on = 0;
	}
	return PAPI_OK;
}

void flo_release(struct flo_state *o, int signo)
{
	flo_disarm(o);
	memset(o->threshold, 0, sizeof(o->threshold));
	if (o->signal_on)
		_papi_hwi_stop_signal(signo);
	o->signal_on = 0;
}

/* The oldest sample's IP, consumed: one sample per signal (signals and
 * samples pair up; the RT signal queue keeps them apart).  Records do not
 * wrap inside their 8-byte fields, so no copy: a signal handler must not
 * need much stack. */
static int ring_take(struct flo_ring *r, uint64_t *ip)
{
	long ps = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *pg = r->map;
	const uint8_t *data = (const uint8_t *)r->map + ps;
	uint64_t mask = (uint64_t)(r->maplen - ps) - 1;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;
	int found = 0;
	while (!found && tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		memcpy(&h, data + (tail & mask), sizeof(h));
		if (h.size < sizeof(h) || tail + h.size > head) {
			tail = head; /* not a record: start afresh */
			break;
		}
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 8) {
			memcpy(ip, data + ((tail + sizeof(h)) & mask), 8);
			found = 1;
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return found;
}

void flo_dispatch(int cidx, size_t ovf_offset, void *siginfo, void *ucontext)
{
	siginfo_t *si = siginfo;
	_papi_hwi_context_t ctx;
	ThreadInfo_t *thread = _papi_hwi_lookup_thread(0);
	if (!thread || !thread->running_eventset[cidx])
		return; /* a signal left over after PAPI_stop */
	EventSetInfo_t *ESI = thread->running_eventset[cidx];
	if (!ESI->overflow.flags)
		return;
	ctx.si = si;
	ctx.ucontext = (hwd_ucontext_t *)ucontext;
	vptr_t pc = GET_OVERFLOW_ADDRESS(ctx);
	if (ESI->overflow.flags & PAPI_OVERFLOW_FORCE_SW) {
		/* PAPI's timer: it reads the counters and compares */
		_papi_hwi_dispatch_overflow_signal(&ctx, pc, NULL, 0, 0, &thread, cidx);
		return;
	}
	struct flo_state *o = (struct flo_state *)((char *)ESI->ctl_state + ovf_offset);
	for (int r = 0; r < o->nring; r++) {
		if (o->ring[r].fd != si->si_fd)
			continue;
		uint64_t ip;
		if (!ring_take(&o->ring[r], &ip))
			ip = (uint64_t)(uintptr_t)pc; /* the sample was lost: where the signal came */
		_papi_hwi_dispatch_overflow_signal(&ctx, (vptr_t)(uintptr_t)ip, NULL, 1LL << o->ring[r].pos, 0, &thread,
						   cidx);
		return;
	}
}
