/*
 * simd_sample.c: sampling events on a program, their rings drained into
 * parsed samples, and the program's file mappings kept to read the
 * sampled code back (pflops_sampler.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "pflops_internal.h"
#include "pflops_perf.h"
#include "pflops_sampler.h"

struct map {
	uint32_t pid;
	uint64_t addr, len, pgoff;
	int file; /* index into files */
};

struct file {
	char *name;
	int fd; /* -1: not opened yet, -2: cannot be */
};

struct task {
	uint32_t pid, ppid;
	int execd; /* its own mappings from now on */
};

/* One CPU's ring: every sampling event on that CPU writes into it
 * (PERF_EVENT_IOC_SET_OUTPUT), as the kernel refuses to mmap an
 * inherited event that follows a task over all CPUs. */
struct ring {
	struct perf_event_mmap_page *pg;
	uint8_t *data;
	uint64_t size;
	size_t maplen;
	int fd; /* the owner's */
};

/* An opened (event, cpu): its id names it in the records. */
struct efd {
	int fd, event;
	uint64_t id;
};

struct pfc_sampler {
	int n;			       /* events */
	struct pfc_sample_format *fmt; /* per event */
	struct efd *fds;
	int nfds;
	struct ring *rings;
	int nrings;
	struct map *maps;
	size_t nmaps, capmaps;
	struct file *files;
	size_t nfiles, capfiles;
	struct task *tasks;
	size_t ntasks, captasks;
	struct pfc_sampler_stats st;
	/* drain context */
	pfc_sampler_fn fn;
	void *arg;
	int pass; /* 0: side-band records, 1: samples */
};

static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 16;
	void *q = realloc(*p, nc * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}

static int file_index(struct pfc_sampler *s, const char *name)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i].name, name))
			return (int)i;
	if (grow((void **)&s->files, &s->capfiles, s->nfiles, sizeof(*s->files)))
		return -1;
	char *dup = pfc_strdup(name);
	if (!dup)
		return -1;
	s->files[s->nfiles] = (struct file){ dup, -1 };
	return (int)s->nfiles++;
}

static void add_map(struct pfc_sampler *s, const struct pfc_mmap_rec *m)
{
	if (m->filename[0] != '/') /* [anon], [stack], //anon: nothing to read back */
		return;
	int f = file_index(s, m->filename);
	if (f < 0)
		return;
	/* every ring carries the mappings: keep one copy */
	for (size_t i = s->nmaps; i-- > 0;)
		if (s->maps[i].pid == m->pid && s->maps[i].addr == m->addr && s->maps[i].len == m->len &&
		    s->maps[i].pgoff == m->pgoff && s->maps[i].file == f)
			return;
	if (grow((void **)&s->maps, &s->capmaps, s->nmaps, sizeof(*s->maps)))
		return;
	s->maps[s->nmaps++] = (struct map){ m->pid, m->addr, m->len, m->pgoff, f };
	s->st.mmaps = s->nmaps;
}

static struct task *task(struct pfc_sampler *s, uint32_t pid, int create)
{
	for (size_t i = 0; i < s->ntasks; i++)
		if (s->tasks[i].pid == pid)
			return &s->tasks[i];
	if (!create || grow((void **)&s->tasks, &s->captasks, s->ntasks, sizeof(*s->tasks)))
		return NULL;
	s->tasks[s->ntasks] = (struct task){ pid, 0, 0 };
	return &s->tasks[s->ntasks++];
}

static int on_record(void *arg, const struct perf_event_header *h, const void *rec)
{
	struct pfc_sampler *s = arg;
	const uint32_t *u = (const uint32_t *)((const uint8_t *)rec + sizeof(*h));

	if (s->pass == 1 && h->type != PERF_RECORD_SAMPLE)
		return 0;
	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		struct pfc_sample_rec r;
		uint64_t id;
		int ev = -1;
		if (s->pass == 0)
			break;
		/* PERF_SAMPLE_IDENTIFIER: the event, whose format says the rest */
		memcpy(&id, (const uint8_t *)rec + sizeof(*h), h->size >= sizeof(*h) + 8 ? 8 : 0);
		for (int i = 0; h->size >= sizeof(*h) + 8 && i < s->nfds && ev < 0; i++)
			if (s->fds[i].id == id)
				ev = s->fds[i].event;
		if (ev < 0 || pfc_sample_parse(&s->fmt[ev], rec, h->size, &r, NULL)) {
			s->st.bad++;
			break;
		}
		s->st.samples++;
		if (s->fn)
			s->fn(s->arg, ev, &r);
		break;
	}
	case PERF_RECORD_MMAP2: {
		static __thread struct pfc_mmap_rec m; /* 4 KB of file name */
		if (pfc_mmap2_parse(rec, h->size, &m, NULL) == 0)
			add_map(s, &m);
		else
			s->st.bad++;
		break;
	}
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(*h) + 16) {
			uint64_t lost;
			memcpy(&lost, (const uint8_t *)rec + sizeof(*h) + 8, 8);
			s->st.lost += lost;
		}
		break;
	case PERF_RECORD_FORK: /* u32 pid, ppid, tid, ptid: a new process sees its parent's maps */
		if (h->size >= sizeof(*h) + 16 && u[0] != u[1]) {
			struct task *t = task(s, u[0], 1);
			if (t && !t->execd)
				t->ppid = u[1];
		}
		break;
	case PERF_RECORD_COMM: /* u32 pid, tid: after an exec, its own maps only */
		if ((h->misc & PERF_RECORD_MISC_COMM_EXEC) && h->size >= sizeof(*h) + 8) {
			struct task *t = task(s, u[0], 1);
			if (t)
				t->execd = 1;
		}
		break;
	default:
		break;
	}
	return 0;
}

/* Two passes over the rings up to one snapshot of their heads: first the
 * mappings (written to the ring of the CPU where the mmap happened), then
 * the samples, so that a sample finds the mapping of its code whatever
 * CPU either ran on. */
void pfc_sampler_drain(struct pfc_sampler *s, pfc_sampler_fn fn, void *arg)
{
	uint64_t head[1024];
	int n = s->nrings < 1024 ? s->nrings : 1024;

	s->fn = fn;
	s->arg = arg;
	for (int i = 0; i < n; i++)
		head[i] = __atomic_load_n(&s->rings[i].pg->data_head, __ATOMIC_ACQUIRE);
	for (s->pass = 0; s->pass < 2; s->pass++)
		for (int i = 0; i < n; i++) {
			struct ring *r = &s->rings[i];
			if (pfc_ring_walk(r->data, r->size, r->pg->data_tail, head[i], on_record, s, NULL) < 0 &&
			    s->pass)
				s->st.bad++; /* a broken ring: the rest of it is skipped */
		}
	for (int i = 0; i < n; i++)
		__atomic_store_n(&s->rings[i].pg->data_tail, head[i], __ATOMIC_RELEASE);
}

struct drain_ctx {
	struct pfc_sampler *s;
	pfc_sampler_fn fn;
	void *arg;
};

static void drain_tick(void *p)
{
	struct drain_ctx *d = p;
	pfc_sampler_drain(d->s, d->fn, d->arg);
}

int pfc_sampler_run(struct pfc_sampler *s, struct pflops_child *c, pfc_sampler_fn fn, void *arg, int *status,
		    double *wall_seconds, struct pflops_error *err)
{
	/* the rings fill in well under a second at short periods: drain them
	 * every 50 ms while the program runs, then once more */
	struct drain_ctx d = { s, fn, arg };
	int rc = pfc_child_run_tick(c, status, wall_seconds, 50, drain_tick, &d, err);
	pfc_sampler_drain(s, fn, arg);
	return rc;
}

/* An event opened per CPU for one task tree is enabled whenever the
 * tree runs, but runs only while it is on that CPU: the sum of the
 * running times over the CPUs is the time it counted, the (common)
 * enabled time the time it should have.  The ratio scales for
 * multiplexing; without any, the raw counts just add up. */
int pfc_sampler_counts(struct pfc_sampler *s, double *counts, struct pflops_error *err)
{
	for (int e = 0; e < s->n; e++) {
		double raw = 0, running = 0, enabled = 0;
		for (int i = 0; i < s->nfds; i++) {
			uint64_t v[3];
			if (s->fds[i].event != e)
				continue;
			if (read(s->fds[i].fd, v, sizeof(v)) != (ssize_t)sizeof(v))
				return pfc_err(err, PFLOPS_ESYS, "reading sampled event %d failed: %s", e,
					       strerror(errno));
			raw += (double)v[0];
			enabled = (double)v[1] > enabled ? (double)v[1] : enabled;
			running += (double)v[2];
		}
		counts[e] = running > 0 ? raw * (enabled > running ? enabled / running : 1) : 0;
	}
	return 0;
}

void pfc_sampler_stats(const struct pfc_sampler *s, struct pfc_sampler_stats *st)
{
	*st = s->st;
}

static const struct map *find_map(const struct pfc_sampler *s, uint32_t pid, uint64_t addr)
{
	/* its own mappings, then (until it execs) its parents' */
	for (int depth = 0; depth < 16; depth++) {
		for (size_t i = s->nmaps; i-- > 0;)
			if (s->maps[i].pid == pid && addr >= s->maps[i].addr && addr - s->maps[i].addr < s->maps[i].len)
				return &s->maps[i];
		const struct task *t = NULL;
		for (size_t i = 0; i < s->ntasks; i++)
			if (s->tasks[i].pid == pid)
				t = &s->tasks[i];
		if (!t || t->execd || !t->ppid)
			return NULL;
		pid = t->ppid;
	}
	return NULL;
}

size_t pfc_sampler_read_code(void *sampler, uint32_t pid, uint64_t addr, uint8_t *buf, size_t len)
{
	struct pfc_sampler *s = sampler;
	const struct map *m = find_map(s, pid, addr);
	if (!m)
		return 0;
	struct file *f = &s->files[m->file];
	if (f->fd == -1)
		f->fd = open(f->name, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		f->fd = -2;
		return 0;
	}
	uint64_t left = m->addr + m->len - addr;
	ssize_t got = pread(f->fd, buf, len < left ? len : (size_t)left, (off_t)(m->pgoff + (addr - m->addr)));
	return got > 0 ? (size_t)got : 0;
}

int pfc_sampler_where(const struct pfc_sampler *s, uint32_t pid, uint64_t addr, const char **path, uint64_t *map_start,
		      uint64_t *offset)
{
	const struct map *m = find_map(s, pid, addr);
	if (!m)
		return 0;
	*path = s->files[m->file].name;
	*map_start = m->addr;
	*offset = m->pgoff + (addr - m->addr);
	return 1;
}

void pfc_sampler_close(struct pfc_sampler *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nrings; i++)
		munmap(s->rings[i].pg, s->rings[i].maplen);
	for (int i = 0; i < s->nfds; i++)
		close(s->fds[i].fd);
	for (size_t i = 0; i < s->nfiles; i++) {
		if (s->files[i].fd >= 0)
			close(s->files[i].fd);
		free(s->files[i].name);
	}
	free(s->fmt);
	free(s->fds);
	free(s->rings);
	free(s->maps);
	free(s->files);
	free(s->tasks);
	free(s);
}

/* Open event e for tid on cpu (-1: a counting event on every CPU),
 * lowering precise_ip until the kernel takes it; fd or -errno. */
static int open_one(struct pfc_sampler_event *e, pid_t tid, int cpu, int sideband, struct pfc_perf_attr_simd *a)
{
	for (int p = e->precise > 3 ? 3 : e->precise < 0 ? 0 : e->precise;; p--) {
		pfc_simd_attr(a, e->type, e->config, e->period, e->period && e->opmask);
		struct perf_event_attr *at = &a->u.attr;
		at->inherit = 1;
		at->enable_on_exec = 1;
		at->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		if (e->period) {
			at->sample_type |= PERF_SAMPLE_IDENTIFIER;
			at->sample_id_all = 1;
			at->wakeup_events = 64;
			at->precise_ip = (unsigned)p;
			if (e->callchain) { /* the user stack only, walked by the kernel */
				/* and no PERIOD: with it a software event samples
				 * every count, whatever its period (a stand-in's test) */
				at->sample_type = (at->sample_type | PERF_SAMPLE_CALLCHAIN) &
						  ~(uint64_t)PERF_SAMPLE_PERIOD;
				at->exclude_callchain_kernel = 1;
			}
			/* the code behind a sampled address, after the program is gone */
			if (sideband)
				at->mmap = at->mmap2 = at->task = at->comm = at->comm_exec = 1;
		} else {
			at->sample_period = 0;
			at->sample_type = 0;
			at->sample_regs_user = 0;
		}
		long fd = syscall(SYS_perf_event_open, at, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0) {
			e->precise_used = p;
			return (int)fd;
		}
		if (p <= 0 || (errno != EINVAL && errno != EOPNOTSUPP))
			return -errno;
	}
}

static int open_fail(struct pfc_sampler *s, const struct pfc_sampler_event *e, int errnum, struct pflops_error *err)
{
	int code = errnum == EACCES || errnum == EPERM				  ? PFLOPS_EPERM
		   : errnum == E2BIG || (errnum == EOPNOTSUPP && e->opmask)	  ? PFLOPS_EUNAVAIL
		   : errnum == ENOENT || errnum == ENODEV || errnum == EOPNOTSUPP ? PFLOPS_ENOPMU
										  : PFLOPS_ESYS;
	pfc_sampler_close(s);
	return pfc_err(
		err, code, "perf_event_open(%s%s) failed: %s%s", e->name,
		e->opmask && e->period ? ", sampling k0-k7" : "", strerror(errnum),
		errnum == E2BIG
			? " (this kernel predates the SIMD register fields: papi_flops_avail says what brings them)"
		: code == PFLOPS_EUNAVAIL ? " (this PMU cannot sample the opmask registers)"
					  : "");
}

static int add_fd(struct pfc_sampler *s, int fd, int event)
{
	struct efd *f = &s->fds[s->nfds++];
	f->fd = fd;
	f->event = event;
	f->id = 0;
	return ioctl(fd, PERF_EVENT_IOC_ID, &f->id);
}

int pfc_sampler_open(struct pfc_sampler **out, struct pfc_sampler_event *ev, int n, pid_t tid, size_t ring_pages,
		     struct pflops_error *err)
{
	long pg = sysconf(_SC_PAGESIZE), ncpu = sysconf(_SC_NPROCESSORS_CONF);
	struct pfc_sampler *s;

	*out = NULL;
	if (n <= 0 || n > PFLOPS_MAX_COUNTERS)
		return pfc_err(err, PFLOPS_EINVAL, "between 1 and %d events can be sampled, not %d",
			       PFLOPS_MAX_COUNTERS, n);
	if (!ring_pages)
		ring_pages = 64;
	if (ring_pages & (ring_pages - 1))
		return pfc_err(err, PFLOPS_EINVAL, "ring of %zu pages: give a power of two", ring_pages);
	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > 1024)
		ncpu = 1024;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->fmt = calloc((size_t)n, sizeof(*s->fmt))) ||
	    !(s->fds = calloc((size_t)n * (size_t)ncpu, sizeof(*s->fds))) ||
	    !(s->rings = calloc((size_t)ncpu, sizeof(*s->rings)))) {
		pfc_sampler_close(s);
		return pfc_err(err, PFLOPS_ENOMEM, "out of memory");
	}
	s->n = n;
	int any_sampled = 0;
	for (int e = 0; e < n; e++) {
		struct pfc_perf_attr_simd a;
		if (ev[e].period) {
			any_sampled = 1;
			continue;
		}
		int fd = open_one(&ev[e], tid, -1, 0, &a); /* counted only: one event for all CPUs */
		if (fd < 0)
			return open_fail(s, &ev[e], -fd, err);
		add_fd(s, fd, e);
	}
	for (long cpu = 0; any_sampled && cpu < ncpu; cpu++) {
		struct ring *r = NULL;
		for (int e = 0; e < n; e++) {
			struct pfc_perf_attr_simd a;
			if (!ev[e].period)
				continue;
			int fd = open_one(&ev[e], tid, (int)cpu, r == NULL, &a);
			if (fd == -ENODEV && !r) /* an offline CPU */
				break;
			if (fd < 0)
				return open_fail(s, &ev[e], -fd, err);
			pfc_simd_format(&a, &s->fmt[e]);
			if (add_fd(s, fd, e)) {
				int er = errno;
				pfc_sampler_close(s);
				return pfc_err(err, PFLOPS_ESYS, "PERF_EVENT_IOC_ID on %s: %s", ev[e].name,
					       strerror(er));
			}
			if (r) { /* into this CPU's ring */
				if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd)) {
					int er = errno;
					pfc_sampler_close(s);
					return pfc_err(err, PFLOPS_ESYS,
						       "PERF_EVENT_IOC_SET_OUTPUT of %s on CPU %ld: %s", ev[e].name,
						       cpu, strerror(er));
				}
				continue;
			}
			size_t len = (1 + ring_pages) * (size_t)pg;
			void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (m == MAP_FAILED) {
				int er = errno;
				pfc_sampler_close(s);
				return pfc_err(err, er == EPERM ? PFLOPS_EPERM : PFLOPS_ESYS,
					       "mmap of the sample ring of CPU %ld (%zu KiB) failed: %s%s", cpu,
					       len / 1024, strerror(er),
					       er == EPERM ? " (more than kernel.perf_event_mlock_kb allows)" : "");
			}
			r = &s->rings[s->nrings++];
			r->pg = m;
			r->maplen = len;
			r->fd = fd;
			r->size = r->pg->data_size ? r->pg->data_size : ring_pages * (uint64_t)pg;
			r->data = (uint8_t *)m + (r->pg->data_offset ? r->pg->data_offset : (uint64_t)pg);
		}
	}
	if (any_sampled && !s->nrings) {
		pfc_sampler_close(s);
		return pfc_err(err, PFLOPS_ESYS, "no online CPU to sample on");
	}
	*out = s;
	return 0;
}
