/*
 * trace_pin.c: a traced program of one thread and the tracer on one CPU.
 *
 * Every ptrace stop is a hand-over: the program stops and wakes the
 * tracer, the tracer resumes the program and sleeps.  Left to the
 * scheduler, the program is woken on the other, idle CPU (the tracer's
 * is busy at that moment), so each hand-over is a cross-CPU wake-up and
 * two CPUs going idle and waking, which in a VM are exits to the host.
 * Held on one CPU, the two take turns there like a pipe's two ends:
 * cold numpy solve, 9,800 stops, 0.76 s of CPU to 0.47 (tracer and
 * program; docs/trace-engine.md, "Cold runs").
 *
 * Only while the whole traced run has one thread that may run: others
 * waiting for a child in wait4 or waitid (gcc's driver while cc1 and as
 * run; the calls are watched) are left alone.  A second thread or
 * process that may run beside it, and everyone has the program's own
 * mask back, held again when one is left.  Never for
 * --pid (a running program is left as it was) or --region (outside it
 * the program runs natively, its system calls unseen), and off for good once
 * the program sets an affinity itself or opens a /proc status file
 * (where Cpus_allowed would show the hold).  sched_getaffinity is
 * watched: while held, its result is the program's own mask.  A
 * program that runs on without a stop for a wait's timeout (250 ms, or
 * the progress interval) is let go until its next stop: held, it could
 * not move away from another process busy on that CPU.
 * PFLOPS_TRACE_PIN=0 turns it off.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "trace_internal.h"

_Static_assert(sizeof(cpu_set_t) == sizeof(((struct pft_tracer *)0)->pin_mask), "pin_mask holds a cpu_set_t");

static int set(pid_t tid, const cpu_set_t *m)
{
	return sched_setaffinity(tid, sizeof *m, m);
}

static int hold(struct pft_tracer *T, pid_t tid)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(T->pin_cpu, &one);
	if (set(tid, &one) || set(0, &one)) {
		set(tid, (const cpu_set_t *)T->pin_mask);
		set(0, (const cpu_set_t *)T->pin_mask);
		return -1;
	}
	T->pin = PFT_PIN_HELD;
	T->pin_tid = tid;
	T->st.pins++;
	return 0;
}

static void release(struct pft_tracer *T)
{
	for (struct pft_thr *t = T->threads; t; t = t->next)
		set(t->tid, (const cpu_set_t *)T->pin_mask);
	set(0, (const cpu_set_t *)T->pin_mask);
	T->pin = PFT_PIN_FREE;
}

/* PFLOPS_TRACE_PIN: 0 off, 1 (or unset) on, anything else an error */
int pft_pin_init(struct pft_tracer *T, struct pflops_error *err)
{
	const char *e = getenv("PFLOPS_TRACE_PIN");

	T->pin_ok = !e || !*e || !strcmp(e, "1");
	if (e && *e && !T->pin_ok && strcmp(e, "0"))
		return pfc_err(err, PFLOPS_EINVAL, "PFLOPS_TRACE_PIN='%s' is neither 0 (off) nor 1 (on)", e);
	return 0;
}

/* the child forked to run the program, not yet exec'd */
void pft_pin_start(struct pft_tracer *T, pid_t child)
{
	int cpu = sched_getcpu();

	T->pin = PFT_PIN_OFF;
	/* not with --region: native code runs there unwatched */
	if (!T->pin_ok || T->o->region || cpu < 0 || cpu >= CPU_SETSIZE ||
	    sched_getaffinity(0, sizeof T->pin_mask, (cpu_set_t *)T->pin_mask) ||
	    CPU_COUNT((cpu_set_t *)T->pin_mask) < 2 || !CPU_ISSET(cpu, (cpu_set_t *)T->pin_mask))
		return;
	T->pin_cpu = cpu;
	if (hold(T, child))
		T->pin = PFT_PIN_OFF;
}

/* after a thread came or went, or began or ended waiting for a child */
void pft_pin_update(struct pft_tracer *T)
{
	struct pft_thr *one = NULL;
	int n = 0;

	if (T->pin == PFT_PIN_OFF)
		return;
	for (struct pft_thr *t = T->threads; t && n < 2; t = t->next)
		if (!t->pin_wait) {
			one = t;
			n++;
		}
	if (T->pin == PFT_PIN_HELD && (n != 1 || one->tid != T->pin_tid))
		release(T);
	if (T->pin == PFT_PIN_FREE && n == 1 && hold(T, one->tid))
		release(T);
}

/* a system call's entry (exit: 0) of t: a blocking wait for a child
 * makes t wait */
void pft_pin_sys(struct pft_tracer *T, struct pft_thr *t, int entry)
{
	const uint64_t *a = t->sys_args;
	int w = entry &&
		((t->sys_nr == SYS_wait4 && !(a[2] & WNOHANG)) || (t->sys_nr == SYS_waitid && !(a[3] & WNOHANG)));

	if (w != t->pin_wait) {
		t->pin_wait = w;
		pft_pin_update(T);
	}
}

/* no stop for a while: free until the next (pft_pin_update) */
void pft_pin_relax(struct pft_tracer *T)
{
	if (T->pin == PFT_PIN_HELD)
		release(T);
}

/* for good: the program's own masks back */
void pft_pin_off(struct pft_tracer *T)
{
	if (T->pin == PFT_PIN_HELD)
		release(T);
	T->pin = PFT_PIN_OFF;
}
