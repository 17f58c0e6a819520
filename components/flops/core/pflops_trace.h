/*
 * pflops_trace.h: exact FLOP counting of a program without hardware
 * counters (ptrace + Zydis), and PMU models evaluated on the traced mix.
 *
 * Two engines count the same thing (docs/trace-engine.md):
 *   cache (default)  each basic block stops the program once; a relocated
 *                    copy of it that counts its own executions is put in
 *                    the traced process, and the program runs there at
 *                    near-native speed; FLOPs = executions x the block's
 *                    decoded mix.  Blocks with masked AVX-512 FP stay on
 *                    the stopping path (the opmask is read at each run).
 *   stop             a ptrace stop per executed block (an int3 at its
 *                    terminating branch, which is then emulated).
 * Threads and forked children are followed.  x86-64 Linux only.
 */
#ifndef PFLOPS_TRACE_H
#define PFLOPS_TRACE_H

#include <signal.h>
#include "papi_flops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a block is not put in the code cache (stats, docs/trace-engine.md). */
enum {
	PFLOPS_NC_NONE = 0,
	PFLOPS_NC_MASK,		/* masked AVX-512 FP: opmask read at each run */
	PFLOPS_NC_MODE,		/* stepped or undecodable block, sysenter */
	PFLOPS_NC_GS,		/* uses the %gs segment, which the cache owns */
	PFLOPS_NC_WRITABLE,	/* on a writable page that stays writable (code
				 * and data on one page, written too often) */
	PFLOPS_NC_REACH,	/* RIP-relative operand out of reach */
	PFLOPS_NC_FULL,		/* out of cache space or counter ids */
	PFLOPS_NC_NOTIFY,	/* the dynamic loader's notification hook */
	PFLOPS_NC_N
};

/* Per-run statistics of the tracer itself (how it spent its stops). */
struct pflops_trace_stats {
	uint64_t stops;		/* ptrace stops handled */
	uint64_t block_stops;	/* breakpoint stops at block ends */
	uint64_t steps;		/* single-steps */
	uint64_t syscalls;	/* syscall-entry stops */
	uint64_t blocks_decoded;/* distinct blocks decoded (cache misses) */
	uint64_t blocks_run;	/* blocks counted */
	uint64_t desync;	/* stops where a thread was not where expected */
	uint64_t threads;	/* threads and processes traced */
	uint64_t region_calls;	/* outermost entries into the region function */
	uint64_t mask_unknown;	/* masked blocks run while the opmask registers
				 * could not be read (then active = all lanes):
				 * e.g. under valgrind, whose CPUID hides the
				 * XSAVE layout */
	/* the code cache (engine "cache") */
	int engine;		/* PFLOPS_ENGINE_STOP or _CACHE: the one used */
	uint64_t cache_blocks;	/* blocks translated into the cache */
	uint64_t cache_bytes;	/* their code */
	uint64_t cache_chunks;	/* code chunks mapped into the program */
	uint64_t cache_runs;	/* block executions counted in the cache */
	uint64_t cache_exits;	/* stops at a copy's exit not yet linked */
	uint64_t cache_links;	/* exits linked copy to copy */
	uint64_t ibl_misses;	/* indirect branches to a target not found */
	uint64_t cache_signals;	/* signals met in the cache (put back at
				 * the original instruction) */
	uint64_t roll_steps;	/* single-steps to leave the cache's own code
				 * before a signal */
	uint64_t invalidated;	/* blocks dropped: their code was unmapped or
				 * made writable (JIT, dlclose) */
	uint64_t wprot_pages;	/* code on writable pages (JIT): pages the
				 * tracer write-protected while it held
				 * decoded code there */
	uint64_t wprot_faults;	/* writes to them caught: the page's blocks
				 * dropped, the write let through */
	uint64_t wprot_hot;	/* writable pages left writable, their blocks
				 * on the stopping path: written from code
				 * on the page itself or too often, stacks */
	uint64_t injected;	/* system calls run on the program's behalf */
	uint64_t cache_setup_failed;	/* processes left on the stopping path */
	uint64_t cache_as_bytes;	/* the most address space the cache took
				 * in one process (counts against its
				 * RLIMIT_AS, ulimit -v) */
	uint64_t cache_as_limited;	/* the same, among processes with an
				 * RLIMIT_AS: at most 1/8 of it */
	uint64_t as_limit;	/* the smallest RLIMIT_AS of a traced process
				 * (0: none) */
	uint64_t as_too_small;	/* processes on the stopping path because
				 * 1/8 of their RLIMIT_AS holds no cache */
	uint64_t nocache[PFLOPS_NC_N];	/* blocks kept on the stopping path,
				 * by reason (PFLOPS_NC_*) */
	uint64_t native_resumes;/* --region: threads let run natively */
	uint64_t group_stops;	/* job-control stops of the program, kept */
	int interrupted;	/* the signal that interrupted the run (0: none):
				 * the counts are partial */
	int killed;		/* the program was stopped with SIGKILL after
				 * the grace time */
	uint64_t detached;	/* processes still running when the program
				 * ended (daemons): counted until then, then
				 * detached, not waited for */
	pid_t detached_pid;	/* one of them */
	int region_found;	/* --region: the symbol was found in some object */
	char region_refused[512];	/* --region: why the function was found
				 * but not armed (its address is not an
				 * instruction start, the file changed on
				 * disk); "" when it was not */
};

enum pflops_engine {
	PFLOPS_ENGINE_AUTO = 0,	/* cache, or $PFLOPS_TRACE_ENGINE (stop|cache) */
	PFLOPS_ENGINE_STOP,	/* a stop per block (the reference) */
	PFLOPS_ENGINE_CACHE,	/* the in-process code cache */
};

/* Called about every `progress_ms` with the mix counted so far. */
typedef void (*pflops_trace_progress_fn)(void *arg,
					 const struct pflops_mix *mix,
					 const struct pflops_trace_stats *st);

/* One executed floating-point instruction of a basic block that uses an
 * AVX-512 opmask (see pflops_trace_opts.fp_exec). */
struct pflops_fp_exec {
	uint64_t addr;		/* its address in the tracee */
	int32_t tid;		/* the thread that ran it (stopped during the call) */
	uint8_t prec, width, op, lanes, mask_reg, lanes_per_bit;	/* as struct pflops_insn */
	const uint64_t *k;	/* k0..k7 as it ran; NULL: could not be read */
};
typedef void (*pflops_trace_fp_fn)(void *arg, const struct pflops_fp_exec *x);

/* One basic block's counts, for per-function reports (see
 * pflops_trace_opts.block).  Where it lies is read from /proc/PID/maps
 * when the block is first decoded, while its mapping exists. */
struct pflops_trace_block {
	uint64_t addr;		/* its first instruction, in the process */
	uint64_t end;		/* the byte after its last instruction */
	int32_t pid;		/* the process it ran in (its address space) */
	const char *path;	/* what the mapping holding addr maps, as
				 * /proc/PID/maps names it: a file
				 * ("/usr/lib/x86_64-linux-gnu/libc.so.6"),
				 * "[vdso]"...; NULL: anonymous memory (JIT
				 * code) or no mapping found */
	uint64_t map_start;	/* that mapping's start address (0: none) */
	uint64_t offset;	/* addr's offset in the file (path a file),
				 * else addr - map_start */
	uint64_t execs;		/* complete executions */
	const struct pflops_mix *mix;	/* all it counted: executions x its
				 * decoded instructions where the code cache
				 * counted it, the active lanes of each run for
				 * masked blocks, partial runs (signals) */
};
typedef void (*pflops_trace_block_fn)(void *arg, const struct pflops_trace_block *b);

struct pflops_trace_opts {
	/* Count only inside calls to this function (ELF .symtab/.dynsym of
	 * the executable or any shared library it loads); NULL: count all. */
	const char *region;
	/* 1: single-step every instruction (slow reference mode, for
	 * benchmarks and cross-checks; implies the stop engine). */
	int single_step;
	int engine;		/* enum pflops_engine */
	pflops_trace_progress_fn progress;
	void *progress_arg;
	unsigned progress_ms;	/* 0: 500 ms */
	/* If non-NULL, filled at the end. */
	struct pflops_trace_stats *stats;
	/* If set: called for each executed FP instruction of a block that has
	 * a masked FP instruction, in execution order per thread, where
	 * counting applies (region); blocks without one are counted in bulk
	 * and not reported (the masked-lane sampler, pflops_mask.h). */
	pflops_trace_fp_fn fp_exec;
	void *fp_exec_arg;
	/* If set: counts are kept per basic block too, and `block` is called
	 * once for each block that counted anything, per process, when its
	 * counts are final: when the process ends or execs (its blocks
	 * belong to the old image), else at the end of the run.  A forked
	 * child reports its own blocks.  The blocks' mixes add up to what
	 * the run adds to *mix, exactly.  Called from inside
	 * pflops_trace_run, possibly while other traced processes run; it
	 * must not call pflops_trace_run.  pflops_funcs_add is one. */
	pflops_trace_block_fn block;
	void *block_arg;
	/* If set, the caller's SIGINT/SIGTERM handler writes the signal
	 * number here (| PFLOPS_INTERRUPT_FORWARD when another process sent
	 * it, so the program did not get it too): the tracer then passes it
	 * on to the program, gives the program PFLOPS_INTERRUPT_GRACE_MS to
	 * end, and stops it otherwise (SIGKILL), keeping what it counted;
	 * stats->interrupted says so.  Install the handler without
	 * SA_RESTART. */
	const volatile sig_atomic_t *interrupt;
};


/*
 * Run argv[0] (searched in PATH) with arguments argv under the tracer and
 * add what it executed to *mix (zero it first for a fresh count).
 * *exit_status receives the program's raw wait status (WIFEXITED /
 * WIFSIGNALED apply; see pflops_trace_status_str).  Returns 0 when the
 * program ran, whatever its exit status (a crash is reported through the
 * status, not as an error); PFLOPS_ECHILD when it could not be started;
 * PFLOPS_ESYS when ptrace failed.  An unknown opts->region symbol is not
 * an error (it may live in a library loaded later): stats->region_calls
 * tells whether it was ever called.
 */
int pflops_trace_run(char *const argv[], const struct pflops_trace_opts *opts,
		     struct pflops_mix *mix, int *exit_status,
		     struct pflops_error *err);

/* "exited with status 3", "killed by signal 11 (Segmentation fault)". */
void pflops_trace_status_str(int status, char *buf, size_t len);

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
struct pflops_func {
	const char *name;	/* the symbol, or the group's name (above) */
	const char *object;	/* the file (as the process mapped it); NULL:
				 * anonymous or kernel memory */
	int has_symbol;
	uint64_t addr;		/* the symbol's value (objdump's address); no
				 * symbol: the hottest block's address in the
				 * file; anonymous: the mapping's start */
	uint64_t size;		/* the symbol's size; 0 without one */
	uint64_t blocks;	/* blocks counted (per process) */
	struct pflops_mix mix;	/* what its blocks counted */
};
struct pflops_funcs;

struct pflops_funcs *pflops_funcs_new(struct pflops_error *err);
/* Add one block (a pflops_trace_block_fn: pass it as opts.block with
 * the pflops_funcs as opts.block_arg). */
void pflops_funcs_add(void *funcs, const struct pflops_trace_block *b);
/* The functions, by exact FLOPs, most first (then by name); *v stays
 * valid until pflops_funcs_free.  Functions that ran but did no FLOP
 * are listed too (their mix has instructions).  PFLOPS_ENOMEM if
 * memory ran out while adding blocks (the counts would not add up). */
int pflops_funcs_list(struct pflops_funcs *f, const struct pflops_func *const **v,
		      size_t *n, struct pflops_error *err);
void pflops_funcs_free(struct pflops_funcs *f);

/* ------------------------------------------------------------------ */
/* One decoded instruction, classified (trace_decode.c).               */

enum pflops_branch {		/* how an instruction ends a basic block */
	PFLOPS_T_NONE = 0,	/* not a branch */
	PFLOPS_T_JCC,		/* conditional relative jump */
	PFLOPS_T_JMP,		/* jmp rel / reg / mem */
	PFLOPS_T_CALL,		/* call rel / reg / mem */
	PFLOPS_T_RET,		/* ret [imm16] */
	PFLOPS_T_LOOP,		/* loop / loope / loopne */
	PFLOPS_T_JRCXZ,		/* jrcxz / jecxz */
	PFLOPS_T_SYSCALL,	/* syscall, sysenter, int 0x80 */
	PFLOPS_T_OTHER,		/* anything else changing rip: single-step it */
};

struct pflops_insn {
	uint8_t len;
	uint8_t fp;		/* 1: a FLOP class below applies */
	uint8_t prec, width, op;/* enum pflops_prec / width / op */
	uint8_t lanes;		/* FP elements at full width */
	uint8_t mask_reg;	/* 0: unmasked; 1..7: k1..k7 */
	uint8_t lanes_per_bit;	/* elements per opmask bit (2: FP16 complex, bf16 dot) */
	int8_t extra;		/* -1 or enum pflops_extra */
	uint8_t kwrites;	/* bit i: writes opmask register ki */
	uint8_t term;		/* enum pflops_branch */
	/* branch operand, for emulation */
	uint8_t cc;		/* condition code 0..15 (Jcc), loop kind */
	uint8_t ind;		/* 0: relative, 1: register, 2: memory */
	uint8_t addr32;		/* 32-bit address/count size (jecxz, loopd) */
	uint16_t ret_imm;
	uint64_t target;	/* relative target (absolute address) */
	int16_t reg;		/* ZydisRegister (indirect via register) */
	int16_t mseg, mbase, mindex; /* ZydisRegister of the memory operand */
	uint8_t mscale;
	int64_t mdisp;
};

/* Decode the instruction at buf (runtime address addr).  Returns 0, or
 * PFLOPS_EINVAL for bytes that are no valid x86-64 instruction. */
int pflops_decode(const uint8_t *buf, size_t len, uint64_t addr,
		  struct pflops_insn *out);

/* ------------------------------------------------------------------ */
/* PMU models (model.c).                                               */

/*
 * What one hardware event would have counted for the traced mix m.
 * spec: "UNIT [prec=LIST] [width=LIST] [ops=LIST] [fma=N] [plus=X,...]",
 * UNIT one of inst | flops | flops_active | none.  `none` yields
 * PFLOPS_EUNAVAIL (the event cannot be modelled on x86).  A malformed
 * spec yields PFLOPS_EINVAL naming the bad token.
 */
int pflops_model_eval(const char *spec, const struct pflops_mix *m,
		      double *count, struct pflops_error *err);


/* ------------------------------------------------------------------ */
/* Attaching to a running process (trace_attach.c).                    */

struct pflops_pub;
struct pflops_attach_opts {
	/* Written one byte once every thread is seized: 'r' (counting
	 * from now on) or 'e' (failed: err says why); -1: none. */
	int ready_fd;
	/* A byte or end of file here, or opts->interrupt: detach; -1: none. */
	int ctl_fd;
	/* Per-thread counts for the process itself (pflops_pub.h), NULL:
	 * none.  Its state says when counting started, failed or ended. */
	struct pflops_pub *pub;
};

/*
 * Trace the running process pid, every thread of it and what it starts
 * (as pflops_trace_run does), adding what it executes to *mix, until it
 * ends (*exit_status: its wait status; 0 with *detached = 1 when the
 * tracer let go first) or until a detach request (a->ctl_fd,
 * opts->interrupt): then every thread is put back in its own code and
 * left running untraced, unharmed.  Needs ptrace permission over pid
 * (same user; Yama ptrace_scope 1: an ancestor, or PR_SET_PTRACER).
 * Returns 0, PFLOPS_ECHILD when pid cannot be traced (err says why),
 * PFLOPS_ESYS when ptrace failed meanwhile.
 */
int pflops_trace_attach(pid_t pid, const struct pflops_trace_opts *opts,
			const struct pflops_attach_opts *a,
			struct pflops_mix *mix, int *exit_status, int *detached,
			struct pflops_error *err);

#ifdef __cplusplus
}
#endif
#endif
