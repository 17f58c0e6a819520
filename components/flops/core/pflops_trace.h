/*
 * pflops_trace.h: exact FLOP counting of a program without hardware
 * counters (ptrace + Zydis), and PMU models evaluated on the traced mix.
 *
 * Two engines count the same thing (docs/trace-engine.md):
 *   cache (default)  each basic block stops the program once; a relocated
 *                    copy of it that counts its own executions is put in
 *                    the traced process, and the program runs there at
 *                    near-native speed; FLOPs = executions x the block's
 *                    decoded mix.  Blocks with masked AVX-512 FP run
 *                    from copies that stop at their end (the opmasks are
 *                    read at each run, in the cache's memory).
 *   stop             a ptrace stop per executed block (an int3 at its
 *                    terminating branch, which is then emulated).
 * Threads and forked children are followed.  x86-64 Linux only.
 */
#ifndef PFT_TRACE_H
#define PFT_TRACE_H

#include <signal.h>
#include <sys/syscall.h>
#include "papi_flops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a block is not put in the code cache (stats, docs/trace-engine.md). */
enum {
	PFT_NC_NONE = 0,
	PFT_NC_MASK,	 /* masked AVX-512 FP ending at a system call
				 * (others are copied, counted at each run's end) */
	PFT_NC_MODE,	 /* stepped or undecodable block, sysenter */
	PFT_NC_GS,	 /* uses the %gs segment, which the cache owns */
	PFT_NC_WRITABLE, /* on a writable page that stays writable (code
				 * and data on one page, written too often) */
	PFT_NC_REACH,	 /* RIP-relative operand out of reach */
	PFT_NC_FULL,	 /* out of cache space or counter ids */
	PFT_NC_NOTIFY,	 /* the dynamic loader's notification hook */
	PFT_NC_OVF,	 /* overflow asked: more weight than 1024
				 * before the block's first instruction that
				 * rewrites the flags, or none there */
	PFT_NC_REGION,	 /* --region: the function's entry (each call
				 * stops there: its thread joins the window) */
	PFT_NC_NOINJ,	 /* no room in the cache's chunks, and no new one:
				 * the program called seccomp, no system call
				 * may be injected (trace_sys.c) */
	PFT_NC_N
};

/* Per-run statistics of the tracer itself (how it spent its stops). */
/* --region: one thread's FLOPs counted in the region's windows (a
 * window: from an entry of the function to the return on the thread that
 * called it; every thread of the process counts in it). */
enum pft_region_role {
	PFT_RT_CALLER,	/* called the function */
	PFT_RT_POOL,	/* started in a window, or waiting in a system
				 * call when one opened: worked for the call */
	PFT_RT_RUNNING, /* was running program code when a window
				 * opened and did FP work in it: possibly
				 * unrelated concurrent work */
};
#define PFT_REGION_THREADS 64
struct pft_region_thread {
	int32_t tid;
	int32_t role;	/* enum pft_region_role */
	uint64_t flops; /* exact FLOPs (all precisions) in windows */
};

struct pft_stats {
	uint64_t stops;		 /* ptrace stops handled */
	uint64_t block_stops;	 /* breakpoint stops at block ends */
	uint64_t steps;		 /* single-steps */
	uint64_t syscalls;	 /* syscall-entry stops */
	uint64_t blocks_decoded; /* distinct blocks decoded (cache misses) */
	uint64_t blocks_run;	 /* blocks counted */
	uint64_t desync;	 /* stops where a thread was not where expected */
	uint64_t threads;	 /* threads and processes traced */
	uint64_t region_calls;	 /* outermost entries into the region function */
	uint64_t mask_unknown;	 /* masked blocks run while the opmask registers
				 * could not be read (then active = all lanes):
				 * e.g. under valgrind, whose CPUID hides the
				 * XSAVE layout */
	/* the code cache (engine "cache") */
	int engine;		     /* PFT_ENGINE_STOP or _CACHE: the one used */
	uint64_t cache_blocks;	     /* blocks translated into the cache */
	uint64_t cache_bytes;	     /* their code */
	uint64_t cache_chunks;	     /* code chunks mapped into the program */
	uint64_t cache_runs;	     /* block executions counted in the cache */
	uint64_t cache_exits;	     /* stops at a copy's exit not yet linked */
	uint64_t cache_links;	     /* exits linked copy to copy */
	uint64_t cache_falls;	     /* of them, jumps to the copy right after
				      * made nops: the copies fall through */
	uint64_t cache_unrolled;     /* one-block loops' copies emitted twice */
	uint64_t cache_nocount;	     /* copies that count nothing (no FP
				      * instruction, count_all off): while
				      * non-zero, mix->total_insts holds only
				      * part of the instructions */
	uint64_t ibl_misses;	     /* indirect branches to a target not found */
	uint64_t mask_exits;	     /* runs of masked AVX-512 copies, counted
				 * at the trap that ends each (opmasks read) */
	uint64_t ahead_blocks;	     /* blocks translated ahead of their first
				 * run (direct targets, return sites, PLT
				 * slots of a new block): no stop there */
	uint64_t cache_signals;	     /* signals met in the cache (put back at
				 * the original instruction) */
	uint64_t roll_steps;	     /* single-steps to leave the cache's own code
				 * before a signal */
	uint64_t invalidated;	     /* blocks dropped: their code was unmapped or
				 * made writable (JIT, dlclose) */
	uint64_t ids_reused;	     /* block ids of dropped copies given to new
				 * ones (trace_ids.c) */
	uint64_t ids_interrupts;     /* threads interrupted so that those ids
				 * could be reused */
	uint64_t table_renewed;	     /* lookup tables built anew without the
				      * tombstones of dropped copies */
	uint64_t table_full;	     /* lookup misses whose target found no room
				      * in the table: its next runs stop too */
	uint64_t wprot_pages;	     /* code on writable pages (JIT): pages the
				 * tracer write-protected while it held
				 * decoded code there */
	uint64_t wprot_faults;	     /* writes to them caught: the page's blocks
				 * dropped, the write let through */
	uint64_t wprot_views;	     /* writable views of shared memory (memfd,
				 * shm) holding code at another address:
				 * write-protected by the tracer too */
	uint64_t wprot_hot;	     /* writable pages left writable, their blocks
				 * on the stopping path: written from code
				 * on the page itself or too often, stacks */
	uint64_t wprot_cooled;	     /* of those, guarded again after many stepped
				      * runs of their blocks */
	uint64_t injected;	     /* system calls run on the program's behalf */
	uint64_t cache_setup_failed; /* processes left on the stopping path */
	uint64_t cache_as_bytes;     /* the most address space the cache took
				 * in one process (counts against its
				 * RLIMIT_AS, ulimit -v) */
	uint64_t cache_as_limited;   /* the same, among processes with an
				 * RLIMIT_AS: at most 1/8 of it */
	uint64_t as_limit;	     /* the smallest RLIMIT_AS of a traced process
				 * (0: none) */
	uint64_t as_too_small;	     /* processes on the stopping path because
				 * 1/8 of their RLIMIT_AS holds no cache */
	uint64_t cache_as_fit;	     /* times a process lowered its own RLIMIT_AS
				 * and its cache gave back unused slots */
	uint64_t nocache[PFT_NC_N];  /* blocks kept on the stopping path,
				 * by reason (PFLOPS_NC_*) */
	uint64_t fork_given;	     /* blocks translated in a parent at its fork
				 * because an earlier child ran them */
	uint64_t full_ids;	     /* PFT_NC_FULL: the block ids of a process
				 * that used them up (the fewest; 0: none did) */
	uint64_t full_copy_mib;	     /* PFT_NC_FULL: the MiB of copies of a
				 * process that filled them (the fewest; 0: none) */
	uint64_t native_resumes;     /* --region: threads let run natively */
	/* overflow (opts.overflow) */
	uint64_t overflows;	  /* calls of opts.overflow */
	uint64_t ovf_exits;	  /* threads that left the cache near a crossing */
	uint64_t ovf_steps;	  /* blocks single-stepped to reach a crossing */
	uint64_t ovf_late;	  /* crossings seen only after the instruction
				 * ran (regs NULL in the call): 0 by design */
	uint64_t group_stops;	  /* job-control stops of the program, kept */
	int interrupted;	  /* the signal that interrupted the run (0: none):
				 * the counts are partial */
	int killed;		  /* the program was stopped with SIGKILL after
				 * the grace time */
	uint64_t detached;	  /* processes still running when the program
				 * ended (daemons): counted until then, then
				 * detached, not waited for */
	pid_t detached_pid;	  /* one of them */
	int region_found;	  /* --region: the symbol was found in some object */
	char region_refused[512]; /* --region: why the function was found
				 * but not armed (its address is not an
				 * instruction start, the file changed on
				 * disk); "" when it was not */
	/* --region with threads (trace_window.c) */
	uint64_t region_windows;      /* windows opened (outermost calls
				 * while no other thread was inside) */
	uint64_t region_joined;	      /* threads stopped to count in a window */
	uint64_t region_busy_threads; /* threads (per window) that were
				 * running program code when it opened and
				 * did FP work in it */
	uint64_t region_busy_flops;   /* their FLOPs in those windows */
	uint32_t region_nthreads;     /* threads listed in region_thread */
	uint64_t region_more_threads; /* threads with FLOPs not listed */
	uint64_t region_more_flops;   /* and their FLOPs */
	struct pft_region_thread region_thread[PFT_REGION_THREADS];
	/* Transparency (docs/trace-engine.md#transparency): what the tracer
	 * changed so the program behaves as untraced, and what it could not */
	uint64_t rseq_refused;	   /* rseq registrations answered ENOSYS (glibc
				 * then runs without rseq, as under valgrind) */
	uint64_t rseq_kept;	   /* threads whose rseq was registered untraced
				 * (--pid, or outside --region) and then ran in
				 * the cache: rseq critical sections do not
				 * abort there */
	uint64_t untraced_cleared; /* clone(CLONE_UNTRACED) traced anyway */
	uint64_t prog_ptrace;	   /* ptrace() calls of the program: a process
				 * has one tracer, they fail (LeakSanitizer,
				 * debuggers, anti-debugging) */
	uint64_t status_reads;	   /* opens of /proc/.../status, where TracerPid
				 * shows the tracer */
	uint64_t mem_writes;	   /* writes into a traced process through
				 * /proc/PID/mem or process_vm_writev that
				 * changed decoded code (its blocks dropped) */
	uint64_t maps_reads;	   /* opens and reads of /proc/.../maps or
				 * smaps while the tracer guarded pages:
				 * the guards were lifted first */
	uint64_t maps_lifted;	   /* pages whose guard those lifted */
	uint64_t slotless_threads; /* threads that ran (some) cached blocks
				 * on the stopping path: every counter slot
				 * was taken (more than 256 threads at once,
				 * fewer under a ulimit -v) */
	uint64_t self_traps;	   /* SIGTRAPs run by a handler of the program
				 * (it single-steps itself with EFLAGS.TF):
				 * each handler uncounted up to its first
				 * system call or block end */
	uint64_t seccomp;	   /* processes that turned seccomp on: no system
				 * call is injected in them from then on; new
				 * code beyond the cache they have runs on the
				 * stopping path */
	uint64_t seccomp_failed;   /* seccomp/prctl(PR_SET_SECCOMP) calls that
				 * failed in a process that had not turned it
				 * on: injection stayed off there all the same
				 * (not in seccomp) */
	uint64_t syscalls_fast;	   /* system calls run from the code cache
				 * without a ptrace stop (trace_sys.c) */
	uint64_t syscall_traps;	   /* system calls of the cache the tracer
				 * watches (trapped, then their syscall
				 * stops: counted in syscalls too) */
	uint64_t fast_sigreturns;  /* rt_sigreturns sent straight back into
				 * the cache: by its copy's look-up (no
				 * stop; in syscalls_fast) or at its trap
				 * (one stop, no syscall stops; in
				 * syscall_traps) */
	uint64_t sys_exit_signals; /* watched calls whose exit's work was
				    * done at a signal that came as they
				    * returned (their trap not run) */
	/* the hint store (trace_hints.c, PFLOPS_TRACE_HINTS*) */
	uint64_t hint_files;  /* file mappings with hints read */
	uint64_t hint_blocks; /* blocks translated from them at first touch */
	uint64_t hint_saved;  /* hint files written */
	uint64_t hint_bad;    /* hint files ignored (malformed, another
				 * file's): removed, rewritten */
	char hint_note[512];  /* why hints were off or a file was bad, for
				 * the report ("": nothing to say) */
	uint64_t pins;	      /* times the program, down to one thread,
			       * was held on the tracer's CPU (trace_pin.c) */
	uint64_t pin_fixes;   /* sched_getaffinity results given the
			       * program's own mask while it was held */

	/* code read from the tracer's own mappings (trace_codemap.c) */
	uint64_t code_view_pages; /* pages of the program's code read from the
				   * tracer's mapping of their file, not through
				   * process_vm_readv */
	/* requests through a futex (trace_freq.c): exits and lookup misses
	 * translated on a futex request without a stop (misses: of them);
	 * requests answered the old way (the int3); threads stopped in a
	 * request put back at it; threads stopped when their process set
	 * a seccomp filter (pft_freq_seccomp) */
	uint64_t freq_served, freq_misses, freq_traps, freq_settled, freq_stopped;
};

enum pft_engine {
	PFT_ENGINE_AUTO = 0, /* cache, or $PFLOPS_TRACE_ENGINE (stop|cache) */
	PFT_ENGINE_STOP,     /* a stop per block (the reference) */
	PFT_ENGINE_CACHE,    /* the in-process code cache */
};

/* Called about every `progress_ms` with the mix counted so far. */
typedef void (*pft_progress_fn)(void *arg, const struct pflops_mix *mix, const struct pft_stats *st);

/* One executed floating-point instruction of a basic block that uses an
 * AVX-512 opmask (see pflops_trace_opts.fp_exec). */
struct pft_fp_exec {
	uint64_t addr;						 /* its address in the tracee */
	int32_t tid;						 /* the thread that ran it (stopped during the call) */
	uint8_t prec, width, op, lanes, mask_reg, lanes_per_bit; /* as struct pft_insn */
	const uint64_t *k;					 /* k0..k7 as it ran; NULL: could not be read */
};
typedef void (*pft_fp_fn)(void *arg, const struct pft_fp_exec *x);

/* One basic block's counts, for per-function reports (see
 * pflops_trace_opts.block).  Where it lies is read from /proc/PID/maps
 * when the block is first decoded, while its mapping exists. */
struct pft_trace_block {
	uint64_t addr;		      /* its first instruction, in the process */
	uint64_t end;		      /* the byte after its last instruction */
	int32_t pid;		      /* the process it ran in (its address space) */
	const char *path;	      /* what the mapping holding addr maps, as
				 * /proc/PID/maps names it: a file
				 * ("/usr/lib/x86_64-linux-gnu/libc.so.6"),
				 * "[vdso]"...; NULL: anonymous memory (JIT
				 * code) or no mapping found */
	uint64_t map_start;	      /* that mapping's start address (0: none) */
	uint64_t offset;	      /* addr's offset in the file (path a file),
				 * else addr - map_start */
	uint64_t execs;		      /* complete executions */
	const struct pflops_mix *mix; /* all it counted: executions x its
				 * decoded instructions where the code cache
				 * counted it, the active lanes of each run for
				 * masked blocks, partial runs (signals) */
};
typedef void (*pft_block_fn)(void *arg, const struct pft_trace_block *b);

/* One crossing of a multiple of the overflow period by a thread's
 * weighted FLOP count (see pflops_trace_opts.overflow).  The thread is
 * stopped before the FP instruction that crossed it runs: regs->rip ==
 * addr, its original address (never a code-cache one), and the other
 * registers are the program's at that point (enough to unwind its
 * stack; %gs_base is the program's own). */
struct user_regs_struct;
struct pft_insn;
struct pft_overflow {
	int32_t pid, tid;		     /* the process and thread */
	uint64_t addr;			     /* the FP instruction that crossed it */
	uint64_t count;			     /* the thread's weighted count, that
				 * instruction included, since its count
				 * last (re)started */
	uint64_t crossings;		     /* multiples of the period it crossed: 1,
				 * more when its weight exceeds the period */
	uint64_t period;		     /* the thread's period */
	const struct user_regs_struct *regs; /* NULL: seen late (stats.ovf_late) */
};
typedef void (*pft_overflow_fn)(void *arg, const struct pft_overflow *o);

struct pflops_trace_opts {
	/* Count only inside calls to this function (ELF .symtab/.dynsym of
	 * the executable or any shared library it loads); NULL: count all. */
	const char *region;
	/* 1: single-step every instruction (slow reference mode, for
	 * benchmarks and cross-checks; implies the stop engine). */
	int single_step;
	int engine; /* enum pft_engine */
	/* 1: every code-cache copy counts its runs, so mix->total_insts
	 * holds every instruction (as PFLOPS_TRACE_COUNT=all).  0: copies
	 * of blocks with no FP instruction (nothing in the mix but the
	 * instruction total) count nothing, which saves the program 10-20%
	 * of its time in the cache (docs/trace-engine.md, "Counting only
	 * what FLOPs need"); stats->cache_nocount then says the total is
	 * partial.  FLOPs are exact either way. */
	int count_all;
	pft_progress_fn progress;
	void *progress_arg;
	unsigned progress_ms; /* 0: 500 ms */
	/* If non-NULL, filled at the end. */
	struct pft_stats *stats;
	/* If set: called for each executed FP instruction of a block that has
	 * a masked FP instruction, in execution order per thread, where
	 * counting applies (region); blocks without one are counted in bulk
	 * and not reported (the masked-lane sampler, pflops_mask.h). */
	pft_fp_fn fp_exec;
	void *fp_exec_arg;
	/* If set: counts are kept per basic block too, and `block` is called
	 * once for each block that counted anything, per process, when its
	 * counts are final: when the process ends or execs (its blocks
	 * belong to the old image), else at the end of the run.  A forked
	 * child reports its own blocks.  The blocks' mixes add up to what
	 * the run adds to *mix, exactly.  Called from inside
	 * pft_run, possibly while other traced processes run; it
	 * must not call pft_run.  pft_funcs_add is one. */
	pft_block_fn block;
	void *block_arg;
	/* If set, the caller's SIGINT/SIGTERM handler writes the signal
	 * number here (| PFLOPS_INTERRUPT_FORWARD when another process sent
	 * it, so the program did not get it too): the tracer then passes it
	 * on to the program, gives the program PFLOPS_INTERRUPT_GRACE_MS to
	 * end, and stops it otherwise (SIGKILL), keeping what it counted;
	 * stats->interrupted says so.  Install the handler without
	 * SA_RESTART. */
	const volatile sig_atomic_t *interrupt;
	/* With progress or interrupt: a signal the calling process gives
	 * the tracer for the run (papi_flops_run and the bench:
	 * SIGRTMIN).  The tracer then installs its handler (SA_RESTART)
	 * and a timer of it directed at the calling thread, so that each
	 * wait is one blocking waitpid that the timer ends; the old
	 * disposition and mask are back when pft_run returns.  0: the
	 * waits take three system calls (waitpid, sigtimedwait for
	 * SIGCHLD, waitpid) and touch no disposition.  Only where the
	 * process uses that signal for nothing else. */
	int wait_signal;
	/* Overflow (docs/trace-engine.md#overflow): each traced thread keeps
	 * an exact running count of a FLOP weight, and `overflow` is called
	 * at each FP instruction whose weight takes it across a multiple of
	 * its period, where counting applies (region).  overflow_weight
	 * gives an executed FP instruction's weight (e.g. its DP FLOPs;
	 * only the FP fields of *in are set): called when a block is
	 * translated with active_lanes = in->lanes, and for instructions
	 * with an opmask at each run with the lanes active.  Weights must
	 * stay below 2^31.  Code-cache blocks with FP instructions of
	 * weight > 0 subtract their weight from a per-thread word and leave
	 * the cache only near a crossing; other blocks are unchanged. */
	uint64_t (*overflow_weight)(void *arg, const struct pft_insn *in, unsigned active_lanes);
	uint64_t overflow_period; /* every thread's at its start; 0: off */
	pft_overflow_fn overflow;
	void *overflow_arg;
	/* If set: called at each system-call stop of a thread (with
	 * overflow_weight set); returning 1 restarts its count at 0 with
	 * period *period (0: none for it), 2 does the same after
	 * overflow_weight changed (every block of the thread's process is
	 * then decoded and translated afresh: costly, for rare changes;
	 * other threads already running a copy finish it with the old
	 * weights), 0 leaves it.  A traced process changes its own period
	 * this way: it writes it where the callback looks, then makes the
	 * system call PFLOPS_TRACE_REARM_SYSCALL, which always stops (other
	 * calls run in the code cache without a stop). */
	int (*overflow_rearm)(void *arg, pid_t tid, uint64_t *period);
};

/* The system call a traced process makes after writing a new overflow
 * period for overflow_rearm: getppid, harmless and never on a hot path
 * (with a rearm callback set, the code cache stops at it) */
#define PFLOPS_TRACE_REARM_SYSCALL SYS_getppid

/*
 * Run argv[0] (searched in PATH) with arguments argv under the tracer and
 * add what it executed to *mix (zero it first for a fresh count).
 * *exit_status receives the program's raw wait status (WIFEXITED /
 * WIFSIGNALED apply; see pft_status_str).  Returns 0 when the
 * program ran, whatever its exit status (a crash is reported through the
 * status, not as an error); PFLOPS_ECHILD when it could not be started;
 * PFLOPS_ESYS when ptrace failed.  An unknown opts->region symbol is not
 * an error (it may live in a library loaded later): stats->region_calls
 * tells whether it was ever called.
 */
int pft_run(char *const argv[], const struct pflops_trace_opts *opts, struct pflops_mix *mix, int *exit_status,
	    struct pflops_error *err);

/* "exited with status 3", "killed by signal 11 (Segmentation fault)".
 * Every source reports the program's wait status: wait_status.c. */
void pft_status_str(int status, char *buf, size_t len);

/* NULL where this build has the tracer (x86-64); else why not (aarch64,
 * where trace_none.c stands in for core/trace/).  Inline: the component,
 * which links no tracer, asks too. */
#define PFT_TRACE_ARCH_ONLY "the trace source (and model:PMU, which reads the trace) is x86-64 only for now"
static inline const char *pft_unavailable(void)
{
#if defined(__x86_64__)
	return NULL;
#else
	return PFT_TRACE_ARCH_ONLY;
#endif
}

/* ------------------------------------------------------------------ */
/* FLOPs per function (trace_funcs.c): blocks (pflops_trace_opts.block)
 * grouped by the function holding their address.  The function is the
 * symbol of the file on disk (STT_FUNC, .symtab first, then .dynsym)
 * with the largest start <= the address and start + size > it; the
 * address in the file comes from the block's file offset through the
 * file's PT_LOAD headers (so PIE and library load addresses do not
 * matter).  Code no symbol covers is grouped by its mapping: per file
 * ("libfoo.so+0x1234 (no symbol)", named by the address of its block
 * with the most FLOPs) or per anonymous mapping ("[anon 0x7f...]",
 * JIT code; "[vdso 0x7f...]" likewise for the kernel's mappings).
 * Symbols are read from the files when blocks are added, i.e. when the
 * process ends: a file replaced meanwhile gives wrong names. */
struct pft_func {
	const char *name;   /* the symbol, or the group's name (above) */
	const char *object; /* the file (as the process mapped it); NULL:
				 * anonymous or kernel memory */
	int has_symbol;
	uint64_t addr;	       /* the symbol's value (objdump's address); no
				 * symbol: the hottest block's address in the
				 * file; anonymous: the mapping's start */
	uint64_t size;	       /* the symbol's size; 0 without one */
	uint64_t blocks;       /* blocks counted (per process) */
	struct pflops_mix mix; /* what its blocks counted */
};
struct pft_funcs;

struct pft_funcs *pft_funcs_new(struct pflops_error *err);
/* Add one block (a pft_block_fn: pass it as opts.block with
 * the pft_funcs as opts.block_arg). */
void pft_funcs_add(void *funcs, const struct pft_trace_block *b);
/* The functions, by exact FLOPs, most first (then by name); *v stays
 * valid until pft_funcs_free.  Functions that ran but did no FLOP
 * are listed too (their mix has instructions).  PFLOPS_ENOMEM if
 * memory ran out while adding blocks (the counts would not add up). */
int pft_funcs_list(struct pft_funcs *f, const struct pft_func *const **v, size_t *n, struct pflops_error *err);
void pft_funcs_free(struct pft_funcs *f);
/* The function holding one address, named as above: path and map_start
 * as a block's (path NULL or not a file: anonymous memory at map_start),
 * offset the address's in the file.  Into buf the symbol (returns 1) or
 * the group's name for code no symbol covers (returns 0): "libm.so.6 (no
 * symbol)", "[anon 0x7f...]"; *object the file (NULL: anonymous), valid
 * until pft_funcs_free.  PFLOPS_ENOMEM. */
int pft_funcs_name(struct pft_funcs *f, const char *path, uint64_t map_start, uint64_t offset, char *buf, size_t len,
		   const char **object);

/* ------------------------------------------------------------------ */
/* One decoded instruction, classified (trace_decode.c).               */

/* how an instruction ends a basic block */
enum pft_branch {
	PFT_T_NONE = 0, /* not a branch */
	PFT_T_JCC,	/* conditional relative jump */
	PFT_T_JMP,	/* jmp rel / reg / mem */
	PFT_T_CALL,	/* call rel / reg / mem */
	PFT_T_RET,	/* ret [imm16] */
	PFT_T_LOOP,	/* loop / loope / loopne */
	PFT_T_JRCXZ,	/* jrcxz / jecxz: the last one pft_arch_emulate runs */
	PFT_T_SYSCALL,	/* syscall, sysenter, int 0x80 */
	PFT_T_OTHER,	/* anything else changing rip: single-step it */
};

/* a branch the tracer runs itself (pft_arch_emulate): a breakpoint or a
 * copy's exit may end its block */
static inline int pft_branch_emulable(int term)
{
	return term >= PFT_T_JCC && term <= PFT_T_JRCXZ;
}

struct pft_insn {
	uint8_t len;
	uint8_t fp;		 /* 1: a FLOP class below applies */
	uint8_t prec, width, op; /* enum pflops_prec / width / op */
	uint8_t lanes;		 /* FP elements at full width */
	uint8_t mask_reg;	 /* 0: unmasked; 1..7: k1..k7 */
	uint8_t lanes_per_bit;	 /* elements per opmask bit (2: FP16 complex, bf16 dot) */
	int8_t extra;		 /* -1 or enum pflops_extra */
	uint8_t kwrites;	 /* bit i: writes opmask register ki */
	uint8_t term;		 /* enum pft_branch */
	/* branch operand, for emulation */
	uint8_t cc;	/* condition code 0..15 (Jcc), loop kind */
	uint8_t ind;	/* 0: relative, 1: register, 2: memory */
	uint8_t addr32; /* 32-bit address/count size (jecxz, loopd) */
	uint16_t ret_imm;
	uint64_t target;	     /* relative target (absolute address) */
	int16_t reg;		     /* ZydisRegister (indirect via register) */
	int16_t mseg, mbase, mindex; /* ZydisRegister of the memory operand */
	uint8_t mscale;
	int64_t mdisp;
};

/* Decode the instruction at buf (runtime address addr).  Returns 0, or
 * PFLOPS_EINVAL for bytes that are no valid x86-64 instruction. */
int pfc_decode(const uint8_t *buf, size_t len, uint64_t addr, struct pft_insn *out);

/* ------------------------------------------------------------------ */
/* PMU models (model.c).                                               */

/*
 * What one hardware event would have counted for the traced mix m.
 * spec: "UNIT [prec=LIST] [width=LIST] [ops=LIST] [fma=N] [plus=X,...]",
 * UNIT one of inst | flops | flops_active | none.  `none` yields
 * PFLOPS_EUNAVAIL (the event cannot be modelled on x86).  A malformed
 * spec yields PFLOPS_EINVAL naming the bad token.
 */
int pfc_model_eval(const char *spec, const struct pflops_mix *m, double *count, struct pflops_error *err);

/* ------------------------------------------------------------------ */
/* Attaching to a running process (trace_attach.c).                    */

struct pfc_pub;
struct pft_attach_opts {
	/* Written one byte once every thread is seized: 'r' (counting
	 * from now on) or 'e' (failed: err says why); -1: none. */
	int ready_fd;
	/* A byte or end of file here, or opts->interrupt: detach; -1: none. */
	int ctl_fd;
	/* Per-thread counts for the process itself (pflops_pub.h), NULL:
	 * none.  Its state says when counting started, failed or ended. */
	struct pfc_pub *pub;
};

/*
 * Trace the running process pid, every thread of it and what it starts
 * (as pft_run does), adding what it executes to *mix, until it
 * ends (*exit_status: its wait status; 0 with *detached = 1 when the
 * tracer let go first) or until a detach request (a->ctl_fd,
 * opts->interrupt): then every thread is put back in its own code and
 * left running untraced, unharmed.  Needs ptrace permission over pid
 * (same user; Yama ptrace_scope 1: an ancestor, or PR_SET_PTRACER).
 * Returns 0, PFLOPS_ECHILD when pid cannot be traced (err says why),
 * PFLOPS_ESYS when ptrace failed meanwhile.
 */
int pft_attach(pid_t pid, const struct pflops_trace_opts *opts, const struct pft_attach_opts *a, struct pflops_mix *mix,
	       int *exit_status, int *detached, struct pflops_error *err);

#ifdef __cplusplus
}
#endif
#endif
