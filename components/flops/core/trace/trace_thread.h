/*
 * trace_thread.h: the run (struct pft_tracer) and its threads (trace_thread.c)
 */
#ifndef PFT_TRACE_THREAD_H
#define PFT_TRACE_THREAD_H

#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>
#include "pflops_trace.h"
#include "pflops_internal.h"
#include "trace_block.h"
#include "trace_space.h"

struct pft_arena;
struct pft_prof;
struct pfc_pub;

/* Thread modes (see the top of this file). */
enum { PFT_M_STOP, PFT_M_CACHE, PFT_M_NATIVE };
enum { PFT_TH_RUN, PFT_TH_WAIT_PARENT, PFT_TH_WAIT_STOP };

struct pft_thr {
	pid_t tid;
	int state;
	int mode; /* PFLOPS_M_* */
	struct pft_space *sp;
	struct pft_block *blk; /* STOP: the block being run */
	int resume;	       /* PTRACE_CONT / _SYSCALL / _SINGLESTEP */
	int in_syscall;	       /* between syscall-entry and -exit stops */
	long sys_nr;	       /* the syscall between those stops */
	int pin_wait;	       /* in a blocking wait4/waitid (trace_pin.c) */
	uint64_t sys_args[6];
	int sys_refused;		      /* this syscall was refused at entry: the
				 * -errno it returns (trace_sys.c) */
	uint64_t sys_undo_addr, sys_undo_val; /* a word of the program's
				 * memory changed at entry, put back at exit */
	int sys_kind;			      /* what its exit must look at (trace_sys.c) */
	int sys_redo;			      /* skipped at entry: made at exit, after the
				 * guards in its way were lifted */
	pid_t sys_pid;			      /* the process whose memory or maps it uses */
	uint64_t sys_lo, sys_hi;	      /* the memory it writes */
	int rseq_checked;		      /* --region: its rseq registration looked at */
	int slotless;			      /* counted in stats.slotless_threads */
	int to_handler;			      /* a caught signal was injected */
	int raw_step;			      /* a branch runs for real (see go()) */
	uint64_t reinsert;		      /* breakpoint lifted to run a faulting branch */
	uint64_t step_pc;		      /* STEP blocks: instruction being stepped */
	uint64_t step_tf;		      /* and the program's own EFLAGS.TF */
	int step_idx;
	uint64_t tramp;	     /* STOP: the block's first instruction runs
				 * displaced here (its int3 is a region entry) */
	uint64_t tramp_back; /* the displaced copy's jump back */
	int in_region;
	uint64_t region_ret, region_sp;
	/* --region windows (trace_window.c) */
	int win_join;		 /* interrupted to count in the window */
	int win_leave;		 /* interrupted to leave the cache after one */
	int win_busy;		 /* 1: ran program code when the window opened,
				 * -1: not known yet, 0: waited or started in it */
	int win_caller;		 /* called the function (some time) */
	int win_ran;		 /* did FP work in a window it was busy at */
	uint64_t win_flops;	 /* FLOPs it counted in windows */
	uint64_t win_open_flops; /* win_flops when the last one opened */
	int slot;		 /* counter slot in sp->arena, -1: none */
	uint64_t prog_gs;	 /* the program's own %gs base */
	int resend_sig;		 /* a signal held back while we used the
				 * thread; sent again with its siginfo */
	int resend_armed;	 /* sent: restore its siginfo when it stops */
	siginfo_t resend_info;
	int fork_pending; /* forked child: its arena is still the
				 * parent's (shared) until pft_arena_fork */
	const struct pft_arena *fork_from;
	int roll_sig; /* rolling forward to a clean point before
				 * delivering this signal */
	siginfo_t roll_info;
	int detach_sig; /* detaching: -1 not stopped yet, else the
				 * signal to pass on (0: none) */
	/* overflow (trace_ovf.c): the thread's weighted count, its period
	 * and what remains to the next multiple (the slot's OVF word holds
	 * ovf_rem - sp->ovf_maxpre while it runs in the cache; ovf_s is
	 * what was written there) */
	uint64_t ovf_period;
	uint64_t ovf_count;
	int64_t ovf_rem;
	uint64_t ovf_s;
	int ovf_hold;	    /* left the cache near a crossing: stay out */
	int ovf_stepping;   /* t->blk single-stepped to its crossing (its
				 * instructions counted one by one) */
	unsigned ovf_idle;  /* blocks without weight run since on stops */
	int detach_entry;   /* detaching: stopped at a syscall entry */
	pid_t vfork_parent; /* a vfork child until it execs: the thread
				 * waiting for it (trace_detach.c) */
	uint64_t ids_seen;  /* the grace set of dropped copies it was seen
				* outside of (trace_ids.c) */
	int ids_intr;	    /* interrupted to be seen (PTRACE_INTERRUPT) */
	int status_fd;	    /* its /proc/TID/status, kept open + 1 (0:
				 * none; trace_signal.c's dispositions) */
	int stat_fd;	    /* and its /proc/TID/stat, the same */
	struct pft_thr *next;
};

struct pft_deferred {
	pid_t pid;
	int status;
};

struct pft_tracer {
	const struct pflops_trace_opts *o;
	int engine; /* PFT_ENGINE_STOP or _CACHE */
	struct pflops_mix *mix;
	struct pft_stats st;
	struct pflops_error *err;
	struct pft_thr *threads;
	pid_t root;
	int root_status, root_done;
	struct timespec last;
	unsigned progress_ms;
	uint8_t *xbuf;	  /* trace_xlate.c's buffers (pft_xlate_free) */
	int ahead;	  /* blocks translated ahead per new block
			* (PFLOPS_TRACE_AHEAD; pft_xlate_ahead) */
	int unroll;	  /* one-block jcc loops emitted twice (PFLOPS_TRACE_UNROLL) */
	int count_all;	  /* every copy counts (opts, PFLOPS_TRACE_COUNT=all) */
	int hint_learn;	  /* the copy being made is of a hint whose runs
			   * are unknown: counted, to learn them (trace_hints.c) */
	uint32_t max_ids; /* block ids a process gets (PFLOPS_TRACE_IDS) */
	uint64_t ids_gen; /* grace sets of dropped copies (trace_ids.c) */
	int sfd;	  /* signalfd of SIGCHLD (pft_attach), or -1 */
	sigset_t oldmask;
	/* trace_wait.c: how pft_run's loop waits for the next stop */
	int wait_mode;		   /* PFT_WAIT_* */
	int wait_sig;		   /* PFT_WAIT_TICK: the timer's signal */
	timer_t wait_timer;	   /* PFT_WAIT_TICK: the periodic timer */
	struct sigaction wait_old; /* the signal's disposition before */
	unsigned wait_tick_ms;	   /* PFT_WAIT_TICK: the timer's period */
	unsigned wait_quiet_ms;	   /* ticks since the last stop, in ms */
	uint64_t wait_stops;	   /* stops at the last tick */
	int wait_quiet;		   /* the last timeout ended a while without an event */
	/* requests through a futex (trace_freq.c) */
	int freq;	   /* PFT_FREQ_*: where the run allows them */
	int freq_on;	   /* its SIGCHLD handler installed */
	int noinject;	   /* serving one: no system call can be injected */
	int inject_wanted; /* ... and one was needed (a new chunk) */
	struct sigaction freq_oldact;
	sigset_t freq_oldmask;
	/* wait statuses taken while injecting, handled by the main loop */
	struct pft_deferred *defer;
	size_t ndefer, defer_cap;
	struct timespec int_at; /* when an interrupt was first seen */
	struct pft_prof *prof;	/* opts.block: per-block counts */
	/* attached (trace_attach.c): counts published to the process */
	struct pfc_pub *pub;
	const struct pft_space *pub_sp; /* the space published */
	int attached;			/* pft_attach: the program ran
				 * untraced before (its rseq may be set) */
	int procmem;			/* a /proc/PID/mem was opened: writes
				 * are looked at (trace_sys.c) */
	unsigned long cut_gen;		/* files cut by the program (trace_sys.c) */
	int sysfast;			/* system calls from the cache run without a stop
				 * unless watched (trace_sys.c) */
	char hints_dir[1024];		/* the hint store ("": off; trace_hints.c) */
	/* trace_pin.c: a program of one thread held on the tracer's CPU */
	int pin;	       /* PFT_PIN_*: off for good, free, held */
	int pin_ok;	       /* PFLOPS_TRACE_PIN allows it (pft_pin_init) */
	int pin_cpu;	       /* the CPU (held) */
	pid_t pin_tid;	       /* the thread held there */
	uint64_t pin_mask[16]; /* the program's and the tracer's own mask (a cpu_set_t) */
};

/* trace_pin.c: while the traced program has one thread, it and the
 * tracer run on one CPU (a stop then costs no cross-CPU wake-up) */
enum { PFT_PIN_OFF, PFT_PIN_FREE, PFT_PIN_HELD };
int pft_pin_init(struct pft_tracer *T, struct pflops_error *err);
void pft_pin_start(struct pft_tracer *T, pid_t child);
void pft_pin_update(struct pft_tracer *T);
void pft_pin_relax(struct pft_tracer *T);
void pft_pin_sys(struct pft_tracer *T, struct pft_thr *t, int entry);
void pft_pin_off(struct pft_tracer *T);

/* trace_wait.c: pft_run's waits for the next stop.  Without a progress
 * callback or an interrupt flag a blocking waitpid; with them bounded
 * (a timeout: 0, T->wait_quiet set when nothing came for the whole
 * timeout), by a timer signal (opts.wait_signal) or sigtimedwait */
enum { PFT_WAIT_BLOCK, PFT_WAIT_TICK, PFT_WAIT_SIGCHLD };
void pft_wait_start(struct pft_tracer *T);
pid_t pft_wait(struct pft_tracer *T, int *status);
void pft_wait_end(struct pft_tracer *T);

/* trace_thread.c: the thread list (drop harvests the thread's counts) */
struct pft_thr *pft_thread_find(struct pft_tracer *T, pid_t tid);
struct pft_thr *pft_thread_add(struct pft_tracer *T, pid_t tid, int state);
void pft_thread_drop(struct pft_tracer *T, pid_t tid);
/* the thread's cache counts into the run's mix, its slot freed */
void pft_thread_harvest(struct pft_tracer *T, struct pft_thr *t);
/* a thread lets its address space go (the region's outcome kept) */
void pft_space_release(struct pft_tracer *T, struct pft_space *sp);

#endif
