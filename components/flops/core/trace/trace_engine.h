/*
 * trace_engine.h: the engine's steps: entering blocks (trace_enter.c), system calls
 * (trace_sys.c), signals (trace_signal.c), injection (trace_inject.c),
 * --region windows (trace_window.c), detaching (trace_detach.c), the
 * event loop (trace_ptrace.c)
 */
#ifndef PFT_TRACE_ENGINE_H
#define PFT_TRACE_ENGINE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include "pft_arch.h"
#include "trace_thread.h"

/* trace_detach.c: count the remaining processes up to now, then let them
 * run on untraced (the program has ended; they are not waited for) */
int pft_detach_rest(struct pft_tracer *T);
/* a SIGTRAP queued for the stopped thread tid (an int3 it just ran) */
int pft_trap_queued(pid_t tid);
/* the number after "key:" in /proc/tid/status (0 or -1: none) */
int pft_proc_status(pid_t tid, const char *key, int base, unsigned long long *v);

/* trace_freq.c: translation requests through a futex (PFLOPS_TRACE_FUTEX) */
#define PFT_FREQ_OFF 0
#define PFT_FREQ_ALL 1 /* every process (PFLOPS_TRACE_FUTEX=1) */
#define PFT_FREQ_ONE 2 /* a process while it has one thread (the default) */
int pft_freq_pick(struct pft_tracer *T, struct pflops_error *err);
void pft_freq_start(struct pft_tracer *T); /* SIGCHLD handler, for the run */
void pft_freq_stop(struct pft_tracer *T);
int pft_freq_space_ok(const struct pft_tracer *T, const struct pft_space *sp);
int pft_freq_bell(struct pft_arena *a);
/* no more requests from sp (a seccomp filter, a second thread): its stubs and lookup
 * misses back to their int3s (1: now; 0: they were, or never asked);
 * requests under way are still answered */
int pft_freq_off(struct pft_space *sp);
/* t at the entry of a call that sets a seccomp filter: pft_freq_off,
 * and every other running thread of its memory stopped, its stop
 * deferred to the event loop, which settles it before it runs on */
void pft_freq_seccomp(struct pft_tracer *T, struct pft_thr *t);
/* sp's first thread made a second one (stopped at the event, so no
 * thread of sp is in a request): PFT_FREQ_ONE turns sp's requests off,
 * and the run's when no process asks any more */
void pft_freq_thread(struct pft_tracer *T, struct pft_space *sp);
/* a stopped thread in the request path put back at its stub's int3
 * (1), registers and all; 0: it was not there; -1: error */
int pft_freq_settle(struct pft_tracer *T, struct pft_thr *t);
/* a stopped thread seen at an int3 of the cache: not in a request */
void pft_freq_outside(const struct pft_thr *t);
/* the next wait status without sleeping, requests served meanwhile (0:
 * none); then a sleep until an event, a request or timeout_ms (-1:
 * none): 1 when it timed out */
pid_t pft_freq_poll(struct pft_tracer *T, int *st);
int pft_freq_sleep(struct pft_tracer *T, int timeout_ms);

/* trace_enter.c (and trace_ptrace.c): the engine's steps */
int pft_counting(const struct pft_tracer *T, const struct pft_thr *t);
void pft_count_block(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, uint32_t n);
int pft_set_mode(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int mode, int *dirty);
int pft_enter(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *dirty);
int pft_go(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int dirty);
int pft_resume(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int dirty, int rc);
int pft_restart(struct pft_tracer *T, struct pft_thr *t, int req, int sig);
int pft_getregs(pid_t tid, struct user_regs_struct *r);
int pft_on_sigtrap(struct pft_tracer *T, struct pft_thr *t);
int pft_setregs(struct pft_tracer *T, struct pft_thr *t, const struct user_regs_struct *r);

/* trace_sys.c: what the tracer changes at a system call so that the
 * program behaves as it does untraced (docs/trace-engine.md,
 * "Transparency"); entry: at the syscall-entry stop (regs of it,
 * t->sys_nr and t->sys_args set), exit: at its exit stop. */
int pft_sys_entry(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r);
void pft_sys_exit(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *dirty);
/* Fast system calls: whether this run uses them (set T->sysfast once
 * the engine is known), whether number nr must stop (clone, exec,
 * mappings, sigreturn...: what the tracer handles), the map the cache's
 * copies read (PFT_SYSMAP_BYTES, indexed by the low 16 bits of the
 * number; nonzero: trap to the tracer) and the resume request of a
 * thread running in the cache. */
#define PFT_SYSMAP_BYTES 65536
void pft_sys_fast_pick(struct pft_tracer *T);
int pft_sys_watched(long nr);
void pft_sys_map_fill(const struct pft_tracer *T, const struct pft_space *sp, uint8_t *map);
void pft_sys_map_refresh(const struct pft_tracer *T, struct pft_space *sp);
int pft_cache_resume(const struct pft_tracer *T);
/* trace_ptrace.c: the copy's traps around a watched system call (r at
 * the trap; trace_signal.c finds them) */
int pft_sys_trapped_entry(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r);
int pft_sys_trapped_exit(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r);
/* ... a signal stopped t at the trap after its finished call, before it
 * ran: the exit's work now (the signal takes t elsewhere); *dirty: r
 * changed; <0 an error */
int pft_sys_exit_at_signal(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *dirty);
/* trace_signal.c: a thread stopped on a copy's trap after its system
 * call (at it, not run) moves past it: 1 when r changed */
int pft_cache_past_exit_trap(const struct pft_thr *t, struct user_regs_struct *r);
/* a process attached (--pid): what it turned on before (seccomp) */
void pft_sys_attached(struct pft_tracer *T, struct pft_space *sp);
/* a clone/fork/vfork event of t: 1 when the child shares t's memory */
int pft_sys_shares_vm(struct pft_tracer *T, struct pft_thr *t, int ev);
/* PFT_TF: pft_arch.h */
/* the program's single-step trap that a branch we emulated would have
 * raised: sent to it before it runs on (as a held signal) */
void pft_sys_owe_trap(struct pft_thr *t);
/* a thread that may have registered rseq untraced (attached, or
 * entering --region): stats.rseq_kept when it did */
void pft_sys_rseq_check(struct pft_tracer *T, struct pft_thr *t);

/* trace_signal.c: signals in each mode, and the cache's own traps */
void pft_signal_forget(struct pft_thr *t); /* its status fd closed */
int pft_on_signal(struct pft_tracer *T, struct pft_thr *t, int sig, siginfo_t *si);
/* a SIGTRAP of a thread in the cache; si NULL: not read yet */
int pft_cache_sigtrap(struct pft_tracer *T, struct pft_thr *t, siginfo_t *si);
/* a thread stopped at a clean point of a copy goes back to the original
 * address (its count corrected to what ran); -1 if not a clean point */
/* A thread stopped on an int3 of the cache (a copy's exit stub, the
 * lookup routine's miss or exit; rip one past it): r becomes where it
 * goes in the program, with the registers the lookup routine saved put
 * back; *exit: the copy's exit number, -1 for the lookup routine, -2
 * for the trap before a watched system call (r unchanged: at the
 * `syscall`, a clean point).  -1 when rip - 1 is no such int3.  The
 * run of a masked copy that ends there is counted (opmasks read now). */
int pft_cache_trap_target(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r, int *exit);
int pft_cache_to_orig(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r);

/* trace_window.c: --region's windows (a call, every thread counting) */
#define PFT_WIN_RSP0 \
	(1ULL << 63) /* slot RSP0 of a thread counting
					 * for the window: never left */
void pft_win_enter(struct pft_tracer *T, struct pft_thr *t);
void pft_win_leave(struct pft_tracer *T, struct pft_thr *t);
void pft_win_drop(struct pft_tracer *T, struct pft_thr *t);
int pft_win_stop(struct pft_tracer *T, struct pft_thr *t);
/* stopped where the kernel will restart an interrupted system call */
int pft_sys_restarting(const struct user_regs_struct *r);
void pft_win_flops(struct pft_tracer *T, struct pft_thr *t, uint64_t before);

/* trace_inject.c: make a stopped thread (not at a syscall-entry stop)
 * run one system call; its registers are restored afterwards.  Returns
 * 0 with the kernel's return value in *ret, or a negative PFLOPS_E*
 * (PFLOPS_ECHILD: the thread died meanwhile). */
int pft_inject(struct pft_tracer *T, struct pft_thr *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
	       uint64_t a4, uint64_t a5, int64_t *ret);
/* The same from a syscall-entry stop: the program's system call is
 * replaced by this one, then set to run again when the thread goes on
 * (it is left at that syscall's exit stop). */
int pft_inject_entry(struct pft_tracer *T, struct pft_thr *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
		     int64_t *ret);
void pft_defer(struct pft_tracer *T, pid_t pid, int status);
/* hold a signal back (it is sent again at the next restart) */
void pft_hold_signal(struct pft_thr *t, int sig, const siginfo_t *si);

/* trace_signal.c: a thread faulting at a program instruction of a copy
 * goes back to that instruction (counted up to it); -1 if not one */
int pft_cache_fault_to_orig(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r);
/* a thread of the stopping path stopped at a program instruction: out of
 * a displaced first instruction (1: r changed), its block counted up to
 * that instruction */
int pft_stop_to_orig(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r);

/* trace_ptrace.c, for the attach loop (trace_attach.c) */
int pft_engine_handle(struct pft_tracer *T, pid_t tid, int status);
int pft_engine_pick(const struct pflops_trace_opts *o, struct pft_tracer *T, struct pflops_error *err);
void pft_engine_kill_all(struct pft_tracer *T);

#endif
