/*
 * The counting engine on perf_event_open(2): groups, one read() per
 * group, baselines for start/reset, scaling and summing over core kinds.
 * See pflops_perf.h for the model.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "pflops_internal.h"
#include "pflops_perf.h"

struct pfc_group {
	int first, count; /* events [first, first+count) */
	int fd;		  /* the leader's */
};

struct pfc_perf_set {
	int n, ngroups;
	struct pfc_perf_event *ev;
	int *fd;
	struct pfc_group *g;
	struct pfc_perf_value *base; /* values at the last start/reset */
	uint64_t *buf;		     /* one group read: nr, enabled, running, values */
	size_t buflen;
	int refs; /* some event is a kind's time reference */
};

static long pfc_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static int paranoid(void)
{
	int v = -99;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -99;
		fclose(f);
	}
	return v;
}

static int open_error(const struct pfc_perf_event *e, pid_t tid, int errnum, struct pflops_error *err)
{
	switch (errnum) {
	case EACCES:
	case EPERM:
		return pfc_err(
			err, PFLOPS_EPERM,
			"perf_event_open(%s) refused: %s (perf_event_paranoid is %d; CAP_PERFMON or a lower setting allows it)",
			e->name, strerror(errnum), paranoid());
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		return pfc_err(
			err, PFLOPS_ENOPMU,
			"perf_event_open(%s): the kernel has no such event here (type %u config 0x%llx: %s); no hardware PMU exposed?",
			e->name, e->type, (unsigned long long)e->config, strerror(errnum));
	case ESRCH:
		return pfc_err(err, PFLOPS_EINVAL, "perf_event_open(%s): no thread %d", e->name, (int)tid);
	case EINVAL:
		return pfc_err(err, PFLOPS_EINVAL, "perf_event_open(%s): invalid event (type %u config 0x%llx)",
			       e->name, e->type, (unsigned long long)e->config);
	default:
		return pfc_err(err, PFLOPS_ESYS, "perf_event_open(%s): %s", e->name, strerror(errnum));
	}
}

int pfc_perf_count(const struct pfc_perf_set *set)
{
	return set ? set->n : 0;
}

int pfc_perf_fd(const struct pfc_perf_set *set, int i)
{
	return set && i >= 0 && i < set->n ? set->fd[i] : -1;
}

int pfc_perf_precise(const struct pfc_perf_set *set, int i)
{
	return set && i >= 0 && i < set->n ? set->ev[i].precise_used : 0;
}

void pfc_perf_close(struct pfc_perf_set *set)
{
	if (!set)
		return;
	for (int i = 0; i < set->n; i++)
		if (set->fd[i] >= 0)
			close(set->fd[i]);
	free(set->ev);
	free(set->fd);
	free(set->g);
	free(set->base);
	free(set->buf);
	free(set);
}

static int read_group(struct pfc_perf_set *s, const struct pfc_group *g, struct pfc_perf_value *v,
		      struct pflops_error *err)
{
	size_t want = (3 + (size_t)g->count) * sizeof(uint64_t);
	ssize_t r = read(g->fd, s->buf, want);
	if (r < 0)
		return pfc_err(err, PFLOPS_ESYS, "read of perf group led by %s: %s", s->ev[g->first].name,
			       strerror(errno));
	if ((size_t)r != want || s->buf[0] != (uint64_t)g->count)
		return pfc_err(err, PFLOPS_ESYS, "short read of perf group led by %s: %zd bytes, %llu events",
			       s->ev[g->first].name, r, (unsigned long long)s->buf[0]);
	for (int i = 0; i < g->count; i++) {
		v[g->first + i].raw = s->buf[3 + i];
		v[g->first + i].enabled = s->buf[1];
		v[g->first + i].running = s->buf[2];
	}
	return 0;
}

static int read_all(struct pfc_perf_set *s, struct pfc_perf_value *v, struct pflops_error *err)
{
	for (int g = 0; g < s->ngroups; g++) {
		int rc = read_group(s, &s->g[g], v, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int ioctl_all(struct pfc_perf_set *s, unsigned long req, const char *what, struct pflops_error *err)
{
	for (int g = 0; g < s->ngroups; g++)
		if (ioctl(s->g[g].fd, req, 0) < 0) /* the leader: members follow it */
			return pfc_err(err, PFLOPS_ESYS, "%s of perf group led by %s: %s", what,
				       s->ev[s->g[g].first].name, strerror(errno));
	return 0;
}

/* Run every group once: a group the kernel cannot place on the PMU
 * (more events than counters, counters held by others) never runs.  On a
 * hybrid machine a kind's groups also never run while the thread is on
 * another kind: a kind whose time reference did not run is skipped when
 * some other kind's did (the thread was there, not short of counters). */
static int check_schedule(struct pfc_perf_set *s, struct pflops_error *err)
{
	int rc = ioctl_all(s, PERF_EVENT_IOC_ENABLE, "enable", err);
	if (!rc)
		rc = ioctl_all(s, PERF_EVENT_IOC_DISABLE, "disable", err);
	if (!rc)
		rc = read_all(s, s->base, err);
	int has_ref[PFLOPS_MAX_KINDS] = { 0 }, ran[PFLOPS_MAX_KINDS] = { 0 }, some_ran = 0;
	for (int i = 0; !rc && i < s->n; i++) {
		int k = s->ev[i].kind;
		if (s->ev[i].slot >= 0 || k < 0 || k >= PFLOPS_MAX_KINDS)
			continue;
		has_ref[k] = 1;
		ran[k] |= s->base[i].running > 0;
		some_ran |= s->base[i].running > 0;
	}
	for (int g = 0; !rc && g < s->ngroups; g++) {
		const struct pfc_perf_value *v = &s->base[s->g[g].first];
		int k = s->ev[s->g[g].first].kind;
		if (some_ran && k >= 0 && k < PFLOPS_MAX_KINDS && has_ref[k] && !ran[k])
			continue; /* the thread was on another kind */
		if (v->enabled > 0 && v->running == 0)
			rc = pfc_err(
				err, PFLOPS_ECNFLCT,
				"the perf group of %d events led by %s could not be scheduled: more events than free counters",
				s->g[g].count, s->ev[s->g[g].first].name);
	}
	return rc;
}

int pfc_perf_open(struct pfc_perf_set **out, const struct pfc_perf_event *ev, int n, const struct pfc_perf_attr *attr,
		  struct pflops_error *err)
{
	*out = NULL;
	if (n <= 0 || !ev || !attr)
		return pfc_err(err, PFLOPS_EINVAL, "no events to open");
	struct pfc_perf_set *s = calloc(1, sizeof(*s));
	if (!s)
		return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
	s->ev = calloc(n, sizeof(*s->ev));
	s->fd = malloc(n * sizeof(*s->fd));
	s->g = calloc(n, sizeof(*s->g));
	s->base = calloc(n, sizeof(*s->base));
	s->buflen = 3 + (size_t)n;
	s->buf = calloc(s->buflen, sizeof(uint64_t));
	if (!s->ev || !s->fd || !s->g || !s->base || !s->buf) {
		pfc_perf_close(s);
		return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
	}
	memcpy(s->ev, ev, n * sizeof(*ev));
	for (int i = 0; i < n; i++) {
		s->fd[i] = -1;
		s->refs |= ev[i].slot < 0;
	}
	s->n = n;
	for (int i = 0; i < n; i++) {
		struct pfc_perf_event *e = &s->ev[i];
		int leader = i == 0 || ev[i].group != ev[i - 1].group;
		if (!e->name[0])
			snprintf(e->name, sizeof(e->name), "type %u config 0x%llx", e->type,
				 (unsigned long long)e->config);
		if (leader) {
			s->g[s->ngroups].first = i;
			s->ngroups++;
		}
		struct pfc_group *g = &s->g[s->ngroups - 1];
		struct perf_event_attr a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = e->type;
		a.config = e->config;
		a.disabled = leader; /* members follow their leader */
		a.enable_on_exec = leader && attr->enable_on_exec;
		a.inherit = !!attr->inherit; /* group reads sum the children too */
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		a.exclude_user = !!attr->exclude_user;
		a.exclude_kernel = !!attr->exclude_kernel;
		a.exclude_hv = !!attr->exclude_hv;
		if (e->sample_period) {
			a.sample_period = e->sample_period;
			a.sample_type = PERF_SAMPLE_IP;
			a.wakeup_events = 1; /* a wakeup (the overflow signal) per sample */
			a.precise_ip = e->precise > 3 ? 3 : e->precise < 0 ? 0 : e->precise;
		}
		long fd = pfc_perf_event_open(&a, attr->tid, e->cpu, leader ? -1 : g->fd);
		/* the PMU may not sample this event that precisely: take less */
		while (fd < 0 && a.precise_ip && (errno == EINVAL || errno == EOPNOTSUPP)) {
			a.precise_ip--;
			fd = pfc_perf_event_open(&a, attr->tid, e->cpu, leader ? -1 : g->fd);
		}
		e->precise_used = a.precise_ip;
		if (fd < 0) {
			int e2 = errno;
			int rc = open_error(e, attr->tid, e2, err);
			pfc_perf_close(s);
			return rc;
		}
		s->fd[i] = (int)fd;
		if (leader)
			g->fd = (int)fd;
		g->count++;
	}
	if (attr->check_schedule && !attr->enable_on_exec) {
		int rc = check_schedule(s, err);
		if (rc) {
			pfc_perf_close(s);
			return rc;
		}
	}
	*out = s;
	return 0;
}

int pfc_perf_reset(struct pfc_perf_set *s, struct pflops_error *err)
{
	return read_all(s, s->base, err);
}

int pfc_perf_start(struct pfc_perf_set *s, struct pflops_error *err)
{
	int rc = read_all(s, s->base, err);
	return rc ? rc : ioctl_all(s, PERF_EVENT_IOC_ENABLE, "enable", err);
}

int pfc_perf_stop(struct pfc_perf_set *s, struct pflops_error *err)
{
	return ioctl_all(s, PERF_EVENT_IOC_DISABLE, "disable", err);
}

int pfc_perf_read(struct pfc_perf_set *s, struct pfc_perf_value *v, struct pflops_error *err)
{
	int rc = read_all(s, v, err);
	if (rc)
		return rc;
	for (int i = 0; i < s->n; i++) {
		v[i].raw -= s->base[i].raw;
		v[i].enabled -= s->base[i].enabled;
		v[i].running -= s->base[i].running;
	}
	return 0;
}

double pfc_perf_scale(uint64_t raw, uint64_t enabled, uint64_t running, int *estimated)
{
	int est = 0;
	double v = (double)raw;
	if (running == 0) {
		est = enabled ? -1 : 0;
		v = 0;
	} else if (running < enabled) {
		est = 1;
		v = (double)raw * ((double)enabled / (double)running);
	}
	if (estimated)
		*estimated = est;
	return v;
}

void pfc_perf_sum(const struct pfc_perf_set *s, const struct pfc_perf_value *v, double *slots, int nslots,
		  struct pfc_perf_status *st)
{
	struct pfc_perf_status tmp;
	if (!st)
		st = &tmp;
	if (!s->refs) {
		/* no time references (non-hybrid): enabled/running per event */
		uint64_t en = 0;
		memset(st, 0, sizeof(*st));
		for (int k = 0; k < nslots; k++)
			slots[k] = 0;
		for (int i = 0; i < s->n; i++) {
			int slot = s->ev[i].slot, est;
			double x = pfc_perf_scale(v[i].raw, v[i].enabled, v[i].running, &est);
			st->estimated |= est > 0;
			st->unscheduled |= est < 0;
			if (slot < nslots)
				slots[slot] += x;
			if (v[i].enabled > en)
				en = v[i].enabled;
			int k = s->ev[i].kind;
			if (k >= 0 && k < PFLOPS_MAX_KINDS && v[i].enabled > st->kind_ns[k])
				st->kind_ns[k] = v[i].enabled;
		}
		st->covered_ns = en;
		return;
	}
	/* per kind: reference time (max running of its references), whether
	 * it has references, and whether it counts anything */
	uint64_t ref[PFLOPS_MAX_KINDS] = { 0 }, en[PFLOPS_MAX_KINDS] = { 0 };
	int has_ref[PFLOPS_MAX_KINDS] = { 0 }, counts[PFLOPS_MAX_KINDS] = { 0 };
	for (int k = 0; k < nslots; k++)
		slots[k] = 0;
	memset(st, 0, sizeof(*st));
	for (int i = 0; i < s->n; i++) {
		int k = s->ev[i].kind;
		if (k < 0 || k >= PFLOPS_MAX_KINDS)
			continue;
		if (v[i].enabled > en[k])
			en[k] = v[i].enabled;
		if (s->ev[i].slot < 0) {
			has_ref[k] = 1;
			if (v[i].running > ref[k])
				ref[k] = v[i].running;
		} else {
			counts[k] = 1;
		}
	}
	for (int i = 0; i < s->n; i++) {
		int k = s->ev[i].kind, slot = s->ev[i].slot;
		if (slot < 0 || slot >= nslots || k < 0 || k >= PFLOPS_MAX_KINDS)
			continue;
		int est;
		double x = pfc_perf_scale(v[i].raw, has_ref[k] ? ref[k] : v[i].enabled, v[i].running, &est);
		if (est > 0)
			st->estimated = 1;
		else if (est < 0)
			st->unscheduled = 1;
		slots[slot] += x;
	}
	for (int k = 0; k < PFLOPS_MAX_KINDS; k++) {
		uint64_t t = has_ref[k] ? ref[k] : en[k];
		st->kind_ns[k] = t;
		if (counts[k])
			st->covered_ns += t;
		else if (has_ref[k])
			st->uncovered_ns += t;
	}
	if (st->covered_ns + st->uncovered_ns)
		st->uncovered_share = (double)st->uncovered_ns / (double)(st->covered_ns + st->uncovered_ns);
}

int pfc_perf_pmu_type(const char *pmu, uint32_t *type, struct pflops_error *err)
{
	const char *base = getenv("PAPI_FLOPS_SYSFS") ? getenv("PAPI_FLOPS_SYSFS") : "/sys/bus/event_source/devices";
	char path[512];
	snprintf(path, sizeof(path), "%s/%s/type", base, pmu);
	/* PAPI_FLOPS_SYSFS is the user's: no FIFO to wait on in PAPI_library_init */
	struct pflops_error own;
	if (!err)
		err = &own;
	FILE *f = pfc_input_open(path, "PMU type files", 1, err);
	if (!f) {
		if (err->code == PFLOPS_EINVAL)
			return PFLOPS_EINVAL;
		char why[PFLOPS_ERRMSG_MAX];
		snprintf(why, sizeof(why), "%s", err->msg);
		return pfc_err(err, PFLOPS_ENOPMU, "the kernel exposes no perf PMU '%s' (%.400s)", pmu, why);
	}
	unsigned t;
	int ok = fscanf(f, "%u", &t) == 1;
	fclose(f);
	if (!ok)
		return pfc_err(err, PFLOPS_ESYS, "%s: not a PMU type number", path);
	*type = t;
	return 0;
}
