/*
 * trace_wait.c: how pft_run's loop waits for the next stop.
 *
 * Most waits find no stop yet: the tracer resumes the program and gets
 * to its wait first (on one CPU, trace_pin.c, always).  A blocking
 * waitpid is one system call a stop.  With a progress callback or an
 * interrupt flag the wait must also end now and then with nothing
 * (a program may run in the code cache for seconds without a stop: the
 * progress line, the interrupt's grace, pft_pin_relax), and the
 * caller's SIGINT handler must end it:
 *
 *   PFT_WAIT_TICK     opts.wait_signal: a periodic timer of that signal,
 *                     directed at this thread, ends a blocking wait4
 *                     (x86_64/trace_wait.c: no tick is lost, and the
 *                     handler is SA_RESTART for every other call); one
 *                     system call a stop.  The handler is process-wide,
 *                     so only where the caller says the signal is ours.
 *   PFT_WAIT_SIGCHLD  otherwise: waitpid(WNOHANG), then sigtimedwait for
 *                     SIGCHLD (blocked in this thread) and waitpid again:
 *                     three (a poll on a signalfd, reading it until
 *                     EAGAIN, was five).
 *   PFT_WAIT_BLOCK    neither callback nor flag: a blocking waitpid.
 *
 * A wait that ends with nothing returns 0 (a tick, a timeout), with
 * T->wait_quiet set when no stop came for the whole timeout (250 ms, the
 * progress interval, 100 ms after an interrupt); -1 with EINTR: another
 * signal (the caller's interrupt).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "trace_internal.h"

/* the tick handler's flag (one tracer a process: waitpid(-1)) */
static volatile int ticked;

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	ticked = 1;
	pft_arch_wait_wake(uc);
}

static unsigned timeout_ms(const struct pft_tracer *T)
{
	if (T->st.interrupted)
		return 100;
	return T->o->progress ? T->progress_ms : 250;
}

static int start_tick(struct pft_tracer *T, int sig)
{
	struct sigaction sa;
	struct sigevent ev;
	struct itimerspec it;
	sigset_t one;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = sig;
	ev._sigev_un._tid = gettid(); /* sigev_notify_thread_id, glibc 2.35 on */
	/* ticks fine enough for the shortest timeout (100 ms after an
	 * interrupt, the progress interval): each comes up to a tick late */
	T->wait_tick_ms = timeout_ms(T) < 100 ? (timeout_ms(T) + 1) / 2 : 50;
	it.it_value.tv_sec = it.it_interval.tv_sec = T->wait_tick_ms / 1000;
	it.it_value.tv_nsec = it.it_interval.tv_nsec = (long)(T->wait_tick_ms % 1000) * 1000000;
	sigemptyset(&one);
	sigaddset(&one, sig);
	if (sig <= 0 || sig >= NSIG || sigaction(sig, &sa, &T->wait_old))
		return -1;
	if (timer_create(CLOCK_MONOTONIC, &ev, &T->wait_timer)) {
		sigaction(sig, &T->wait_old, NULL);
		return -1;
	}
	ticked = 0;
	T->wait_sig = sig;
	pthread_sigmask(SIG_UNBLOCK, &one, &T->oldmask);
	if (timer_settime(T->wait_timer, 0, &it, NULL)) {
		pft_wait_end(T);
		return -1;
	}
	return 0;
}

void pft_wait_start(struct pft_tracer *T)
{
	sigset_t chld;

	T->wait_mode = PFT_WAIT_BLOCK;
	if (!T->o->progress && !T->o->interrupt)
		return;
	T->wait_mode = PFT_WAIT_TICK;
	if (T->o->wait_signal && !start_tick(T, T->o->wait_signal))
		return;
	/* after the fork: the program keeps its own signal mask */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	T->wait_mode = PFT_WAIT_SIGCHLD;
	if (pthread_sigmask(SIG_BLOCK, &chld, &T->oldmask))
		T->wait_mode = PFT_WAIT_BLOCK;
}

/* a tick: a while without a stop adds up to the timeout */
static pid_t tick(struct pft_tracer *T)
{
	ticked = 0;
	if (T->st.stops != T->wait_stops) {
		T->wait_stops = T->st.stops;
		T->wait_quiet_ms = 0;
	}
	T->wait_quiet_ms += T->wait_tick_ms;
	T->wait_quiet = T->wait_quiet_ms >= timeout_ms(T);
	return 0;
}

pid_t pft_wait(struct pft_tracer *T, int *status)
{
	sigset_t chld;
	struct timespec ts;
	unsigned ms;
	long r;

	T->wait_quiet = 0;
	switch (T->wait_mode) {
	case PFT_WAIT_TICK:
		r = pft_arch_wait4(-1, status, __WALL, &ticked);
		if (r > 0 || (r < 0 && r != -EINTR)) {
			errno = r < 0 ? (int)-r : errno;
			return r > 0 ? (pid_t)r : -1;
		}
		if (ticked)
			return tick(T);
		errno = EINTR; /* another signal: the caller's interrupt */
		return -1;
	case PFT_WAIT_SIGCHLD:
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		for (;;) {
			pid_t p = waitpid(-1, status, __WALL | WNOHANG);
			if (p != 0)
				return p;
			ms = timeout_ms(T);
			ts.tv_sec = ms / 1000;
			ts.tv_nsec = (long)(ms % 1000) * 1000000;
			/* a stop after the waitpid above sends SIGCHLD; one
			 * pending from stops already taken only costs a turn */
			if (sigtimedwait(&chld, NULL, &ts) == SIGCHLD)
				continue;
			if (errno == EAGAIN) {
				T->wait_quiet = 1;
				return 0;
			}
			if (errno == EINTR)
				return -1;
		}
	default:
		return waitpid(-1, status, __WALL);
	}
}

void pft_wait_end(struct pft_tracer *T)
{
	switch (T->wait_mode) {
	case PFT_WAIT_TICK:
		/* the timer first: no tick after the disposition is back */
		timer_delete(T->wait_timer);
		pthread_sigmask(SIG_SETMASK, &T->oldmask, NULL);
		sigaction(T->wait_sig, &T->wait_old, NULL);
		break;
	case PFT_WAIT_SIGCHLD:
		pthread_sigmask(SIG_SETMASK, &T->oldmask, NULL);
		break;
	}
	T->wait_mode = PFT_WAIT_BLOCK;
}
