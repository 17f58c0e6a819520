/*
 * trace_sys.c: system calls the tracer answers or changes so that the
 * traced program behaves as it does untraced (docs/trace-engine.md,
 * "Transparency"), and those it can only report:
 *
 *   rseq      registration refused (ENOSYS), as valgrind does: the
 *             kernel restarts a critical section only when the thread is
 *             at the section's own addresses, never in its cache copy,
 *             and each stop of the stopping path inside a section would
 *             restart it forever.  glibc (2.35 on) then runs without
 *             rseq (sched_getcpu reads the vDSO), and so do programs
 *             that check the result.  Not refused where rseq may already
 *             be on (--pid, --region's native threads): glibc aborts a
 *             new thread whose registration fails after the first
 *             succeeded.
 *   clone     CLONE_UNTRACED cleared: a child cloned in the code cache
 *             starts there, and untraced it would die on the cache's
 *             int3s (LeakSanitizer clones its helper so).  Whether a
 *             child shares its parent's memory is read from the flags,
 *             not from the event's kind.
 *   seccomp   once a process turns it on, nothing more is injected
 *             into it (strict mode kills the process at the first
 *             call that is not read, write, exit or sigreturn; a filter
 *             may too): its new code runs on the stopping path.
 *   ptrace, open("/proc/.../status")   counted only: a process has one
 *             tracer (the program's own ptrace fails, TracerPid shows
 *             ours); the report says so.
 *   write, pwrite64, writev, pwritev, pwritev2 on /proc/PID/mem (looked
 *             at once a file named mem was opened), process_vm_writev
 *             code written so (the kernel ignores our write protection,
 *             or the program's own) is dropped at the call's exit, to
 *             be decoded afresh.  process_vm_writev honours page
 *             protections: one that meets a page we guard is skipped at
 *             entry and made at exit, after the guard is lifted.
 *   ftruncate, truncate, creat, open, openat, openat2 with O_TRUNC,
 *             fallocate that punches, zeroes, collapses or inserts:
 *             the file's bytes there are gone (a fetch past the new end
 *             raises SIGBUS) or changed; the blocks on those pages of
 *             its executable mappings, in every traced space, are
 *             dropped at the call's exit (file_cut), so that the next
 *             run there is decoded afresh and meets what the program
 *             would (their copies ran on before).
 *   open, openat, openat2 of /proc/.../maps or smaps, and reads of it
 *             the guards of the process lifted first (reads: skipped
 *             at entry, made at exit), so that the program sees its own
 *             permissions; its code there is decoded afresh (and guarded
 *             again) when it runs.
 *
 * Every other system call of a thread running in the code cache runs
 * there without a ptrace stop (the thread runs under PTRACE_CONT): the
 * copy of a block ending in `syscall` looks the number up in a map
 * (pft_sys_map_fill) and either runs it at once or runs it between two
 * int3s of the copy, at which the tracer does what it does at the
 * call's entry and exit stops (trace_ptrace.c; sigreturn without its
 * fast way, rseq and int 0x80 get PTRACE_SYSCALL stops instead).  Those that trap are the ones the
 * tracer handles: above, and mappings that may change code or guarded
 * pages (trace_ptrace.c's after_syscall), sigreturn (the thread goes
 * back to the address in its frame), the cache's base register
 * (pft_arch_base_sys: arch_prctl on %gs), clone, fork,
 * exec and exit, and PFLOPS_TRACE_REARM_SYSCALL where an overflow
 * period can be rearmed (opts.overflow_rearm).  Not with --region
 * (threads are moved between native code and the cache at system
 * calls) or PFLOPS_TRACE_SYSCALL_STOPS=1: then every system call stops,
 * as on the stopping path.  The map changes with the program: the write
 * family traps once it opened a /proc/PID/mem, the read family and close
 * while it holds a maps fd (pft_sys_map_refresh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/falloc.h>
#include <linux/seccomp.h>

#include "trace_internal.h"

#ifndef CLONE_UNTRACED
#define CLONE_UNTRACED 0x00800000
#endif
#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f
#endif

static int read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)addr, len };

	return process_vm_readv(tid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

void pft_sys_fast_pick(struct pft_tracer *T)
{
	const char *e = getenv("PFLOPS_TRACE_SYSCALL_STOPS");

	T->sysfast = T->engine == PFT_ENGINE_CACHE && !T->o->single_step && !T->o->region &&
		     !(e && *e && strcmp(e, "0"));
}

int pft_cache_resume(const struct pft_tracer *T)
{
	return T->sysfast ? PTRACE_CONT : PTRACE_SYSCALL;
}

int pft_sys_watched(long nr)
{
	if (pft_arch_base_sys(nr)) /* the program's own base register */
		return 1;
	switch (nr) {
	case SYS_rt_sigreturn: /* back to the frame's address */
	case SYS_mmap:	       /* code mapped over, unmapped, made writable */
	case SYS_munmap:
	case SYS_mremap:
	case SYS_mprotect:
	case SYS_pkey_mprotect:
	case SYS_madvise:
	case SYS_shmat:
	case SYS_shmdt:
	case SYS_clone: /* CLONE_UNTRACED, shared memory or not */
	case SYS_clone3:
	case SYS_fork:
	case SYS_vfork:
	case SYS_execve:
	case SYS_execveat:
	case SYS_exit:
	case SYS_exit_group:
	case SYS_rseq: /* refused */
	case SYS_seccomp:
	case SYS_prctl: /* PR_SET_SECCOMP */
	case SYS_ptrace:
	case SYS_open: /* /proc/.../status: counted; /proc/.../mem, maps */
	case SYS_openat:
	case SYS_openat2:
	case SYS_process_vm_writev: /* code written in another way */
	case SYS_ftruncate:	    /* a file of code cut, or its bytes moved */
	case SYS_truncate:
	case SYS_fallocate:
	case SYS_creat:
	case SYS_sched_getaffinity: /* while held on one CPU (trace_pin.c) */
	case SYS_sched_setaffinity:
	case SYS_wait4: /* waiting, not running */
	case SYS_waitid:
	case SYS_setrlimit: /* RLIMIT_AS lowered: the cache made to fit */
	case SYS_prlimit64:
		return 1;
	default:
		/* brk too: the heap only grows into free space or shrinks
		 * (code made executable there needs mprotect, watched); a
		 * lookup that misses the map reloads it */
		return 0;
	}
}

/* watched only while the program holds what makes them matter */
static int watched_now(const struct pft_tracer *T, const struct pft_space *sp, long nr)
{
	switch (nr) {
	case SYS_write: /* on a /proc/PID/mem fd */
	case SYS_pwrite64:
	case SYS_writev:
	case SYS_pwritev:
	case SYS_pwritev2:
		return T->procmem;
	case SYS_read: /* on a maps or smaps fd */
	case SYS_pread64:
	case SYS_readv:
	case SYS_preadv:
	case SYS_preadv2:
	case SYS_close:
		return sp && sp->n_maps_fd > 0;
	case PFLOPS_TRACE_REARM_SYSCALL: /* a new overflow period */
		return T->o->overflow_rearm && pft_ovf_on(T);
	default:
		return pft_sys_watched(nr);
	}
}

void pft_sys_map_fill(const struct pft_tracer *T, const struct pft_space *sp, uint8_t *map)
{
	/* the kernel reads the low 32 bits of the number: one whose low 16
	 * bits are not a plain x86-64 system call (x32's, numbers past the
	 * table) traps; one that merely aliases a plain one fails with
	 * ENOSYS in the kernel either way */
	for (long i = 0; i < PFT_SYSMAP_BYTES; i++)
		map[i] = (uint8_t)(i >= 512 || watched_now(T, sp, i));
}

/* the map of SP's cache after what it watches changed (the thread that
 * changed it is stopped; the fd it got is not yet known to others) */
void pft_sys_map_refresh(const struct pft_tracer *T, struct pft_space *sp)
{
	uint8_t *map = sp && sp->arena ? pft_arena_sysmap(sp->arena) : NULL;

	if (map)
		pft_sys_map_fill(T, sp, map);
}

/* rseq refused only where no thread can have registered untraced */
static int refuse_rseq(const struct pft_tracer *T)
{
	return !T->o->region && !T->attached;
}

/* /proc/self/status, /proc/PID/status, /proc/.../task/TID/status */
static int status_path(const char *p)
{
	size_t n = strlen(p);

	return !strncmp(p, "/proc/", 6) && n > 7 && !strcmp(p + n - 7, "/status");
}

enum { K_NONE, K_MEMW, K_VMW, K_MAPS_OPEN, K_MAPS_READ, K_SECCOMP };

#define IOV_CAP 1024 /* the kernel's UIO_MAXIOV */

/* The space of traced process (or thread) pid, or NULL */
static struct pft_space *space_of(const struct pft_tracer *T, pid_t pid)
{
	for (const struct pft_thr *o = T->threads; o; o = o->next)
		if (o->tid == pid && o->sp)
			return o->sp;
	return NULL;
}

/* the last path component is name */
static int base_is(const char *p, const char *name)
{
	const char *b = strrchr(p, '/');

	return !strcmp(b ? b + 1 : p, name);
}

/* /proc/{self,thread-self,PID}[/task/TID]/{maps,smaps}: the process it
 * names (t's own for self), 0 when another file */
static pid_t maps_path(const struct pft_thr *t, const char *p)
{
	int pid = 0, n = 0;

	if (strncmp(p, "/proc/", 6) || !(base_is(p, "maps") || base_is(p, "smaps")))
		return 0;
	p += 6;
	if (!strncmp(p, "self/", 5) || !strncmp(p, "thread-self/", 12))
		pid = t->sp->pid;
	else if (sscanf(p, "%d%n", &pid, &n) != 1 || p[n] != '/')
		return 0;
	return pid;
}

/* fd of tid is /proc/PID/mem (or .../task/TID/mem): that PID, else 0 */
static pid_t mem_fd(pid_t tid, uint64_t fd)
{
	char fn[64], link[128];
	ssize_t n;
	int pid = 0, k = 0;

	snprintf(fn, sizeof fn, "/proc/%d/fd/%llu", (int)tid, (unsigned long long)fd);
	if ((n = readlink(fn, link, sizeof link - 1)) <= 0)
		return 0;
	link[n] = 0;
	if (!base_is(link, "mem") || sscanf(link, "/proc/%d/%n", &pid, &k) != 1)
		return 0;
	if (!strncmp(link + k, "task/", 5))
		sscanf(link + k, "task/%d/", &pid);
	return pid;
}

/* the file position of tid's fd (write, writev on /proc/PID/mem) */
static int fd_pos(pid_t tid, uint64_t fd, uint64_t *pos)
{
	char fn[64], line[128];
	unsigned long long p;
	int ok = 0;
	FILE *f;

	snprintf(fn, sizeof fn, "/proc/%d/fdinfo/%llu", (int)tid, (unsigned long long)fd);
	if (!(f = fopen(fn, "re")))
		return -1;
	while (!ok && fgets(line, sizeof line, f))
		ok = sscanf(line, "pos: %llu", &p) == 1;
	fclose(f);
	*pos = p;
	return ok ? 0 : -1;
}

/* the bytes an iovec array of the program's describes */
static int iov_len(pid_t tid, uint64_t at, uint64_t cnt, uint64_t *len)
{
	struct iovec *v;

	*len = 0;
	if (!cnt || cnt > IOV_CAP || !(v = malloc(cnt * sizeof *v)))
		return -1;
	if (read_mem(tid, at, v, cnt * sizeof *v)) {
		free(v);
		return -1;
	}
	for (uint64_t i = 0; i < cnt; i++)
		*len += v[i].iov_len;
	free(v);
	return 0;
}

/* a write of the program's to /proc/PID/mem: where it writes */
static void mem_write_entry(struct pft_tracer *T, struct pft_thr *t, const struct user_regs_struct *r)
{
	pid_t pid = mem_fd(t->tid, PFT_SYSARG0(r));
	uint64_t pos, len = PFT_SYSARG2(r);
	int vec = t->sys_nr != SYS_write && t->sys_nr != SYS_pwrite64;

	if (!pid || !space_of(T, pid))
		return;
	if (t->sys_nr == SYS_pwrite64 ||
	    ((t->sys_nr == SYS_pwritev || t->sys_nr == SYS_pwritev2) && (int64_t)PFT_SYSARG3(r) != -1))
		pos = PFT_SYSARG3(r);
	else if (fd_pos(t->tid, PFT_SYSARG0(r), &pos))
		return;
	if (vec && iov_len(t->tid, PFT_SYSARG1(r), PFT_SYSARG2(r), &len))
		return;
	t->sys_kind = K_MEMW;
	t->sys_pid = pid;
	t->sys_lo = pos;
	t->sys_hi = pos + len;
}

/* process_vm_writev's remote ranges: each given to fn; stops at the
 * first nonzero (returned) */
static int vm_ranges(pid_t tid, const uint64_t *a, int (*fn)(void *, uint64_t, uint64_t), void *arg)
{
	struct iovec *v;
	int rc = 0;

	if (!a[4] || a[4] > IOV_CAP || !(v = malloc(a[4] * sizeof *v)))
		return 0;
	if (read_mem(tid, a[3], v, a[4] * sizeof *v) == 0)
		for (uint64_t i = 0; i < a[4] && !rc; i++)
			if (v[i].iov_len)
				rc = fn(arg, (uint64_t)v[i].iov_base, (uint64_t)v[i].iov_base + v[i].iov_len);
	free(v);
	return rc;
}

static int range_guarded(void *sp, uint64_t lo, uint64_t hi)
{
	return pft_wprot_guarded(sp, lo, hi);
}

struct lift {
	struct pft_tracer *T;
	struct pft_thr *t;
};

static int range_lift(void *arg, uint64_t lo, uint64_t hi)
{
	struct lift *l = arg;

	pft_wprot_lift(l->T, l->t, lo, hi);
	return 0;
}

struct drop {
	struct pft_tracer *T;
	struct pft_space *sp;
	size_t n;
};

/* code written in [lo, hi) of sp: its blocks (and those of other views
 * of the same shared memory) dropped, our int3s there overwritten */
static int range_drop(void *arg, uint64_t lo, uint64_t hi)
{
	struct drop *d = arg;
	size_t n = pft_block_invalidate(d->sp, lo, hi);

	pft_bp_clear(d->sp, 0, lo, hi);
	pft_wprot_shared(d->T, d->sp, lo, hi);
	pft_fview_written(d->sp, lo, hi); /* not its file's bytes now */
	d->n += n;
	d->T->st.invalidated += n;
	return 0;
}

/* the call is made at its exit instead (t->sys_redo) */
static int postpone(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int kind)
{
	t->sys_kind = kind;
	t->sys_redo = 1;
	PFT_SYSNR(r) = (uint64_t)-1; /* skipped */
	return pft_setregs(T, t, r);
}

static int maps_fd(const struct pft_space *sp, uint64_t fd)
{
	for (int i = 0; i < sp->n_maps_fd; i++)
		if ((uint64_t)sp->maps_fd[i] == fd)
			return i;
	return -1;
}

/* the guards of t's space lifted before its maps are read */
static void maps_lift(struct pft_tracer *T, struct pft_thr *t)
{
	size_t n = pft_wprot_lift(T, t, 0, ~0ULL);

	if (n) {
		T->st.maps_reads++;
		T->st.maps_lifted += n;
	}
}

/* t's call turns seccomp on */
static int sets_seccomp(const struct pft_thr *t)
{
	const uint64_t *a = t->sys_args;

	return (t->sys_nr == SYS_seccomp && (a[0] == SECCOMP_SET_MODE_STRICT || a[0] == SECCOMP_SET_MODE_FILTER)) ||
	       (t->sys_nr == SYS_prctl && a[0] == PR_SET_SECCOMP);
}

int pft_sys_entry(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r)
{
	uint64_t flags;
	char path[128];

	t->sys_refused = 0;
	t->sys_undo_addr = 0;
	t->sys_kind = K_NONE;
	t->sys_redo = 0;
	if (T->attached)
		pft_sys_rseq_check(T, t);
	pft_pin_sys(T, t, 1);
	switch (t->sys_nr) {
	case SYS_rseq:
		if (!refuse_rseq(T)) {
			if (PFT_SYSARG2(r) == 0) /* a registration */
				T->st.rseq_kept++;
			return 0;
		}
		if (PFT_SYSARG2(r) == 0)
			T->st.rseq_refused++;
		PFT_SYSNR(r) = (uint64_t)-1; /* skipped */
		t->sys_refused = -ENOSYS;
		return pft_setregs(T, t, r);
	case SYS_clone:
		if (!(PFT_SYSARG0(r) & CLONE_UNTRACED))
			return 0;
		PFT_SYSARG0(r) &= ~(uint64_t)CLONE_UNTRACED;
		t->sys_args[0] = PFT_SYSARG0(r);
		T->st.untraced_cleared++;
		return pft_setregs(T, t, r);
	case SYS_clone3:
		/* struct clone_args starts with the flags */
		if (PFT_SYSARG1(r) < 8 || read_mem(t->tid, PFT_SYSARG0(r), &flags, 8) || !(flags & CLONE_UNTRACED))
			return 0;
		if (pft_mem_write64(t->tid, PFT_SYSARG0(r), flags & ~(uint64_t)CLONE_UNTRACED))
			return 0;
		t->sys_undo_addr = PFT_SYSARG0(r); /* the program's struct, put back */
		t->sys_undo_val = flags;
		T->st.untraced_cleared++;
		return 0;
	case SYS_ptrace:
		T->st.prog_ptrace++;
		return 0;
	case SYS_seccomp:
	case SYS_prctl:
		if (!sets_seccomp(t))
			return 0;
		/* From its entry, not its exit: a TSYNC filter holds for the
		 * other threads as soon as it runs, and the exit's work is
		 * not done when a signal comes as the call returns (its
		 * trap after the call not run).  A call that fails then only
		 * slows the process down: its exit moves the count to
		 * seccomp_failed, so the report says what happened. */
		if (t->sp->no_inject != 1) {
			T->st.seccomp++;
			t->sys_kind = K_SECCOMP;
		}
		t->sp->no_inject = 1;
		/* no futex calls of ours under the filter: requests off, the
		 * threads inside one got out */
		pft_freq_seccomp(T, t);
		return 0;
	case SYS_sched_setaffinity: /* the program's own wins */
		pft_pin_off(T);
		return 0;
	case SYS_open:
	case SYS_openat:
	case SYS_openat2:
		memset(path, 0, sizeof path);
		if (read_mem(t->tid, t->sys_nr == SYS_open ? PFT_SYSARG0(r) : PFT_SYSARG1(r), path, sizeof path - 1) &&
		    read_mem(t->tid, t->sys_nr == SYS_open ? PFT_SYSARG0(r) : PFT_SYSARG1(r), path,
			     32)) /* the string may end near a page end */
			return 0;
		if (status_path(path)) {
			T->st.status_reads++;
			pft_pin_off(T); /* its Cpus_allowed: the program's own */
		}
		if (base_is(path, "mem") && !T->procmem) {
			T->procmem = 1; /* its writes are looked at from now on */
			pft_sys_map_refresh(T, t->sp);
			/* and code is read from the program only (writes by
			 * calls not watched: splice, io_uring) */
			for (struct pft_thr *o = T->threads; o; o = o->next)
				if (o->sp)
					pft_fview_off(o->sp);
		}
		if ((t->sys_pid = maps_path(t, path)))
			t->sys_kind = K_MAPS_OPEN;
		return 0;
	case SYS_write:
	case SYS_pwrite64:
	case SYS_writev:
	case SYS_pwritev:
	case SYS_pwritev2:
		if (T->procmem)
			mem_write_entry(T, t, r);
		return 0;
	case SYS_process_vm_writev:
		if (!space_of(T, (pid_t)PFT_SYSARG0(r)))
			return 0;
		t->sys_pid = (pid_t)PFT_SYSARG0(r);
		t->sys_kind = K_VMW;
		/* a page we guard would fail it (EFAULT): lifted at exit */
		if (space_of(T, t->sys_pid) == t->sp && !t->sp->no_inject && t->sp->wp_used &&
		    vm_ranges(t->tid, t->sys_args, range_guarded, t->sp))
			return postpone(T, t, r, K_VMW);
		return 0;
	case SYS_read:
	case SYS_pread64:
	case SYS_readv:
	case SYS_preadv:
	case SYS_preadv2:
		if (t->sp->n_maps_fd && maps_fd(t->sp, PFT_SYSARG0(r)) >= 0 && !t->sp->no_inject &&
		    pft_wprot_guarded(t->sp, 0, ~0ULL))
			return postpone(T, t, r, K_MAPS_READ);
		return 0;
	case SYS_close: {
		int i = t->sp->n_maps_fd ? maps_fd(t->sp, PFT_SYSARG0(r)) : -1;
		if (i >= 0) {
			t->sp->maps_fd[i] = t->sp->maps_fd[--t->sp->n_maps_fd];
			pft_sys_map_refresh(T, t->sp);
		}
		return 0;
	}
	default:
		return 0;
	}
}

/* what a call looked at at entry (t->sys_kind) done at its exit */
static void sys_kind_exit(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *dirty)
{
	const uint64_t *a = t->sys_args;
	struct lift l = { T, t };
	struct drop d = { T, NULL, 0 };
	int64_t ret;
	int redo = t->sys_redo;

	if (redo) { /* skipped at entry: the guards off, then made */
		t->sys_redo = 0;
		if (t->sys_kind == K_VMW)
			vm_ranges(t->tid, a, range_lift, &l);
		else
			maps_lift(T, t);
		if (pft_inject(T, t, t->sys_nr, a[0], a[1], a[2], a[3], a[4], a[5], &ret))
			ret = -EFAULT; /* cannot happen: it was checked */
		PFT_SYSRET(r) = (uint64_t)ret;
		*dirty = 1;
	}
	ret = (int64_t)PFT_SYSRET(r);
	switch (t->sys_kind) {
	case K_MEMW:
	case K_VMW:
		if (ret <= 0 || !(d.sp = space_of(T, t->sys_pid)))
			break;
		if (t->sys_kind == K_MEMW)
			range_drop(&d, t->sys_lo, t->sys_lo + (uint64_t)ret);
		else
			vm_ranges(t->tid, a, range_drop, &d);
		if (d.n || redo) /* (redo: it met guarded code) */
			T->st.mem_writes++;
		break;
	case K_MAPS_OPEN:
		if (ret < 0 || space_of(T, t->sys_pid) != t->sp)
			break;
		if (t->sp->n_maps_fd < (int)(sizeof t->sp->maps_fd / sizeof t->sp->maps_fd[0]))
			t->sp->maps_fd[t->sp->n_maps_fd++] = (int)ret;
		pft_sys_map_refresh(T, t->sp);
		if (!t->sp->no_inject)
			maps_lift(T, t);
		break;
	case K_SECCOMP: /* failed: seccomp is not on, injection stays off */
		if (ret >= 0 || ret <= -4096 || t->sp->no_inject != 1)
			break;
		T->st.seccomp--;
		T->st.seccomp_failed++;
		t->sp->no_inject = PFT_NOINJ_FAILED;
		break;
	default:
		break;
	}
	t->sys_kind = K_NONE;
}

/* A file's bytes gone or changed under its mappings: the file (device
 * and inode, and its path where a file system shows the maps another
 * device: overlayfs), the file offsets [lo, hi) changed, and those from
 * `gone` on dropped from memory with the private copies of their pages
 * (truncation: our int3s there went with them; UINT64_MAX: none) */
struct cut {
	uint64_t dev, ino, lo, hi, gone;
	char path[PATH_MAX];
};

/* fn, a /proc/TID/fd link (link) or a path, names a regular file: c's */
static int cut_file(struct cut *c, const char *fn, int link)
{
	struct stat st;
	ssize_t n;

	if (stat(fn, &st) || !S_ISREG(st.st_mode))
		return -1;
	c->dev = (uint64_t)major(st.st_dev) << 32 | minor(st.st_dev);
	c->ino = (uint64_t)st.st_ino;
	c->path[0] = 0;
	if (link) {
		if ((n = readlink(fn, c->path, sizeof c->path - 1)) > 0)
			c->path[n] = 0;
	} else if (!realpath(fn, c->path))
		c->path[0] = 0;
	return 0;
}

/* a string of the program's, read up to each page's end (the next page
 * may be unmapped) */
static int read_str(pid_t tid, uint64_t addr, char *buf, size_t cap)
{
	for (size_t n = 0; n + 1 < cap;) {
		size_t k = 4096 - ((addr + n) & 4095);
		if (k > cap - 1 - n)
			k = cap - 1 - n;
		if (read_mem(tid, addr + n, buf + n, k))
			return -1;
		if (memchr(buf + n, 0, k))
			return 0;
		n += k;
	}
	return -1;
}

/* sp's maps as they are where it has code: read again only where a
 * mapping call touched a range holding blocks since (an O_TRUNC open
 * needs no read of the maps in most runs) */
static int cut_maps(struct pft_space *sp)
{
	struct pft_maps *m = &sp->maps;
	int load = m->stale || !m->n;

	for (int i = 0; i < m->ndirty && !load; i++)
		load = pft_block_in(sp, m->dirty[i][0], m->dirty[i][1]);
	return load ? pft_maps_load(m, sp->pid) : 0;
}

/* the blocks of sp on pages of c's file that changed: dropped */
static size_t cut_space(struct pft_space *sp, const struct cut *c)
{
	size_t n = 0;

	if (!sp->blk_n || cut_maps(sp))
		return 0;
	for (size_t i = 0; i < sp->maps.n; i++) {
		const struct pft_map *e = &sp->maps.v[i];
		uint64_t end = e->off + (e->hi - e->lo), a = c->lo & ~4095ULL, b = c->hi < end ? c->hi : end;
		if (!e->x || !((e->ino && e->ino == c->ino && e->dev == c->dev) ||
			       (e->path && c->path[0] && !strcmp(e->path, c->path))))
			continue;
		if (a < e->off)
			a = e->off;
		if (a < b)
			n += pft_block_invalidate(sp, e->lo + (a - e->off), e->lo + (b - e->off));
		if (c->gone == UINT64_MAX)
			continue;
		a = (c->gone + 4095) & ~4095ULL;
		if (a < e->off)
			a = e->off;
		if (a < end) /* those pages are gone: our int3s with them */
			pft_bp_clear(sp, 0, e->lo + (a - e->off), e->hi);
	}
	return n;
}

/* t's successful call cut a file, or moved or zeroed its bytes: the
 * blocks on those pages of its executable mappings, in every traced
 * space, dropped (their copies unlinked), so that the next run there is
 * decoded afresh from the program's memory and meets what it would
 * natively (SIGBUS past the end, zeros in a hole) */
static __attribute__((noinline)) void file_cut(struct pft_tracer *T, struct pft_thr *t, int64_t ret)
{
	const uint64_t *a = t->sys_args;
	char fn[PATH_MAX + 64], path[PATH_MAX];
	struct cut c;
	uint64_t fd = (uint64_t)ret, flags = O_TRUNC;
	size_t n = 0;

	c.lo = c.gone = 0;
	c.hi = UINT64_MAX;
	switch (t->sys_nr) {
	case SYS_ftruncate:
		fd = a[0];
		c.lo = c.gone = a[1];
		break;
	case SYS_fallocate:
		fd = a[0];
		if (a[1] & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) { /* zeros there */
			c.lo = a[2];
			c.hi = a[2] + a[3] < a[2] ? UINT64_MAX : a[2] + a[3];
			c.gone = UINT64_MAX; /* private copies of its pages stay */
		} else if (a[1] & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE))
			c.lo = c.gone = a[2]; /* what follows moved */
		else
			return;
		break;
	case SYS_truncate:
		if (read_str(t->tid, a[0], path, sizeof path))
			return;
		if (path[0] == '/')
			snprintf(fn, sizeof fn, "%s", path);
		else
			snprintf(fn, sizeof fn, "/proc/%d/cwd/%s", (int)t->tid, path);
		if (cut_file(&c, fn, 0))
			return;
		c.lo = c.gone = a[1];
		fd = UINT64_MAX;
		break;
	case SYS_creat:
		break;
	case SYS_open:
		flags = a[1];
		break;
	case SYS_openat:
		flags = a[2];
		break;
	case SYS_openat2: /* struct open_how starts with the flags */
		if (a[3] < 8 || read_mem(t->tid, a[2], &flags, 8))
			return;
		break;
	default:
		return;
	}
	if (!(flags & O_TRUNC))
		return;
	if (fd != UINT64_MAX) {
		snprintf(fn, sizeof fn, "/proc/%d/fd/%llu", (int)t->tid, (unsigned long long)fd);
		if (cut_file(&c, fn, 1))
			return;
	}
	T->cut_gen++;
	for (struct pft_thr *o = T->threads; o; o = o->next)
		if (o->sp && o->sp->cut_gen != T->cut_gen) { /* each space once */
			o->sp->cut_gen = T->cut_gen;
			n += cut_space(o->sp, &c);
		}
	if (n) {
		T->st.invalidated += n;
		pft_mem_fresh(); /* pages read before: not what is there now */
	}
}

void pft_sys_exit(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *dirty)
{
	const uint64_t *a = t->sys_args;
	int64_t ret;

	if (t->sys_kind)
		sys_kind_exit(T, t, r, dirty);
	pft_pin_sys(T, t, 0);
	ret = (int64_t)PFT_SYSRET(r);

	if (t->sys_refused) {
		PFT_SYSRET(r) = (uint64_t)(int64_t)t->sys_refused;
		t->sys_refused = 0;
		*dirty = 1;
		return;
	}
	if (t->sys_undo_addr) {
		pft_mem_write64(t->tid, t->sys_undo_addr, t->sys_undo_val);
		t->sys_undo_addr = 0;
	}
	if (ret < 0 && ret > -4096)
		return;
	switch (t->sys_nr) { /* (file_cut's frame, 12 KiB, only here) */
	case SYS_ftruncate:
	case SYS_truncate:
	case SYS_fallocate:
	case SYS_creat:
	case SYS_open:
	case SYS_openat:
	case SYS_openat2:
		file_cut(T, t, ret);
		break;
	default:
		break;
	}
	if (t->sys_nr == SYS_sched_getaffinity && T->pin == PFT_PIN_HELD &&
	    (a[0] == 0 || a[0] == (uint64_t)t->tid || a[0] == (uint64_t)t->sp->pid)) {
		/* held on one CPU: the program's own mask, as untraced (the
		 * kernel wrote ret bytes, a multiple of 8) */
		for (int64_t o = 0; o + 8 <= ret && o < (int64_t)sizeof T->pin_mask; o += 8)
			pft_mem_write64(t->tid, a[2] + (uint64_t)o, T->pin_mask[o / 8]);
		T->st.pin_fixes++;
	}
	if (t->sp->wp_shared && (a[2] & PROT_WRITE) &&
	    ((t->sys_nr == SYS_mmap && (a[3] & MAP_SHARED)) || t->sys_nr == SYS_mprotect ||
	     t->sys_nr == SYS_pkey_mprotect)) {
		/* maybe a new writable view of shared memory holding code */
		uint64_t lo = t->sys_nr == SYS_mmap ? (uint64_t)ret : a[0] & ~4095ULL;
		pft_wprot_shared(T, t->sp, lo, lo + ((a[1] + (a[0] & 4095) + 4095) & ~4095ULL));
	}
}

int pft_sys_shares_vm(struct pft_tracer *T, struct pft_thr *t, int ev)
{
	struct user_regs_struct r;
	uint64_t flags;

	(void)T;
	/* at the event the parent's registers are those of its system call */
	if (pft_getregs(t->tid, &r) == 0) {
		switch ((long)PFT_SYSNR(&r)) {
		case SYS_clone:
			return !!(PFT_SYSARG0(&r) & CLONE_VM);
		case SYS_clone3:
			if (PFT_SYSARG1(&r) >= 8 && read_mem(t->tid, PFT_SYSARG0(&r), &flags, 8) == 0)
				return !!(flags & CLONE_VM);
			break;
		case SYS_fork:
			return 0;
		case SYS_vfork:
			return 1;
		default:
			break;
		}
	}
	return ev != PTRACE_EVENT_FORK;
}

void pft_sys_rseq_check(struct pft_tracer *T, struct pft_thr *t)
{
	struct {
		uint64_t ptr;
		uint32_t size, sig, flags, pad;
	} c;

	if (t->rseq_checked)
		return;
	t->rseq_checked = 1;
	memset(&c, 0, sizeof c);
	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, t->tid, (void *)sizeof c, &c) > 0 && c.ptr)
		T->st.rseq_kept++;
}

void pft_sys_owe_trap(struct pft_thr *t)
{
	siginfo_t si;

	memset(&si, 0, sizeof si);
	si.si_signo = SIGTRAP;
	si.si_code = TRAP_TRACE;
	pft_hold_signal(t, SIGTRAP, &si);
}

void pft_sys_attached(struct pft_tracer *T, struct pft_space *sp)
{
	char fn[64], line[128];
	int mode = 0;
	FILE *f;

	/* seccomp turned on before the attach: nothing may be injected */
	snprintf(fn, sizeof fn, "/proc/%d/status", (int)sp->pid);
	if (!(f = fopen(fn, "re")))
		return;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	if (mode > 0) {
		sp->no_inject = 1;
		T->st.seccomp++;
	}
}
