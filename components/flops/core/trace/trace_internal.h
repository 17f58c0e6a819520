/*
 * trace_internal.h: what the tracer's files share (not installed).
 *
 * The engine (trace_ptrace.c) runs every thread of the traced program in
 * one of three modes:
 *   STOP    the stopping engine: an int3 at the end of each basic block
 *           (trace_blocks.c, trace_emul.c), a ptrace stop per block;
 *   CACHE   the code cache: the thread runs relocated copies of the
 *           program's blocks that count their own executions
 *           (trace_xlate.c, trace_arena.c); it stops only at blocks not
 *           yet translated, system calls and signals;
 *   NATIVE  --region outside the region: the program's own code, no
 *           stops except our int3s (region entries, shared code).
 */
#ifndef PFLOPS_TRACE_INTERNAL_H
#define PFLOPS_TRACE_INTERNAL_H

#include <sys/types.h>
#include <sys/user.h>
#include <signal.h>
#include "pflops_trace.h"

/* How a thread runs through a block on the stopping path. */
enum {
	PFLOPS_BLK_BP,	    /* int3 at the terminator, which we emulate */
	PFLOPS_BLK_SYSCALL, /* ends in a syscall: PTRACE_SYSCALL stops */
	PFLOPS_BLK_STEP,    /* single-step every instruction */
};

struct pflops_fpent { /* one FP instruction of a block */
	uint32_t idx; /* instruction index in the block */
	uint8_t prec, width, op, lanes, mask_reg, lanes_per_bit;
};

struct pflops_xblock;

struct pflops_block {
	uint64_t start;
	uint64_t last; /* address of the last instruction */
	uint64_t end;  /* first byte after the block */
	uint32_t ninsts;
	uint32_t nfp;
	uint8_t mode;		 /* PFLOPS_BLK_* */
	uint8_t has_mask;	 /* some FP instruction uses k1..k7 */
	uint8_t region_entry;	 /* start is the region function's entry */
	uint8_t dead;		 /* its code was unmapped or rewritten */
	uint8_t wp_done;	 /* its pages were guarded (trace_wprot.c) */
	struct pflops_insn term; /* the last instruction when it is a branch */
	uint32_t *offs;		 /* ninsts instruction offsets from start */
	struct pflops_fpent *fp;
	uint32_t extra[PFLOPS_NEXTRA];
	/* Executions counted so far (all threads), for per-block reports. */
	uint64_t execs;
	struct pflops_xblock *x; /* its code-cache copy, or NULL */
	/* Per-block counts (opts.block, trace_prof.c; NULL when not
	 * asked): [0] instructions, [1] complete runs, then per FP entry
	 * i its executions [2+i] and active lanes [2+nfp+i]. */
	uint64_t *acc;
	const char *path;    /* the file mapped at start (interned), or NULL */
	uint64_t map_lo;     /* that mapping's start, 0: none found */
	uint64_t map_off;    /* start's offset in the file (in the mapping
				 * when it is no file) */
	int nocache;	     /* why it stays on the stopping path (PFLOPS_NC_*) */
	uint64_t tramp;	     /* displaced copy of its first instruction */
	uint64_t tramp_back; /* and the jump back after it */
	/* overflow (trace_ovf.c): weight of each FP entry at full lanes,
	 * and their sum; NULL until first needed */
	uint64_t *ovf_w;
	uint64_t ovf_sum;
	struct pflops_block *next; /* hash chain */
};

struct pflops_region;
struct pflops_arena;
struct pflops_prof;

/* One memory mapping of a traced process (/proc/PID/maps). */
struct pflops_map {
	uint64_t lo, hi, off;
	uint8_t r, w, x;
	char *path; /* NULL for anonymous mappings */
};

struct pflops_maps {
	struct pflops_map *v;
	size_t n;
	int stale; /* reload before the next lookup */
};

/* An address space: shared by threads (and a vfork child until exec). */
struct pflops_space {
	int refs;
	pid_t pid; /* a process id in it (for /proc and reads) */
	/* breakpoints: open addressing, key 0 = empty */
	uint64_t *bp_addr;
	uint8_t *bp_orig;
	size_t bp_cap, bp_n;
	/* block cache */
	struct pflops_block **blk_tab;
	size_t blk_cap, blk_n;
	struct pflops_block **dead; /* invalidated blocks, kept for counts */
	size_t ndead, dead_cap;
	uint64_t *pages; /* set of pages holding decoded code */
	size_t pg_cap, pg_n;
	struct pflops_region *region; /* NULL when no region is asked */
	struct pflops_maps maps;
	uint64_t gadget;	    /* a `syscall` instruction (injection) */
	struct pflops_arena *arena; /* code cache; NULL until needed */
	int arena_failed;	    /* setup failed: stopping path only */
	int no_inject;		    /* it turned on seccomp: no system call
					 * may be injected (trace_sys.c) */
	struct pflops_prof *prof;   /* per-block counts asked (opts.block) */
	uint64_t ovf_maxpre;	    /* overflow: the most weight a copy runs
				 * before its check (<= PFLOPS_OVF_GUARD) */
	int win_calls;		    /* --region: threads inside the function (the
				 * window is open while > 0: trace_window.c) */
	struct pflops_wpage *wp;    /* pages write-protected by us (trace_wprot.c) */
	size_t wp_cap, wp_used;
};

/* Thread modes (see the top of this file). */
enum { PFLOPS_M_STOP, PFLOPS_M_CACHE, PFLOPS_M_NATIVE };
enum { PFLOPS_TH_RUN, PFLOPS_TH_WAIT_PARENT, PFLOPS_TH_WAIT_STOP };

struct pflops_thr {
	pid_t tid;
	int state;
	int mode; /* PFLOPS_M_* */
	struct pflops_space *sp;
	struct pflops_block *blk; /* STOP: the block being run */
	int resume;		  /* PTRACE_CONT / _SYSCALL / _SINGLESTEP */
	int in_syscall;		  /* between syscall-entry and -exit stops */
	long sys_nr;		  /* the syscall between those stops */
	uint64_t sys_args[6];
	int sys_refused;		      /* this syscall was refused at entry: the
				 * -errno it returns (trace_sys.c) */
	uint64_t sys_undo_addr, sys_undo_val; /* a word of the program's
				 * memory changed at entry, put back at exit */
	int rseq_checked;		      /* --region: its rseq registration looked at */
	int slotless;			      /* counted in stats.slotless_threads */
	int to_handler;			      /* a caught signal was injected */
	int raw_step;			      /* a branch runs for real (see go()) */
	uint64_t reinsert;		      /* breakpoint lifted to run a faulting branch */
	uint64_t step_pc;		      /* STEP blocks: instruction being stepped */
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
				 * parent's (shared) until pflops_arena_fork */
	const struct pflops_arena *fork_from;
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
	int ovf_hold;	   /* left the cache near a crossing: stay out */
	int ovf_stepping;  /* t->blk single-stepped to its crossing (its
				 * instructions counted one by one) */
	unsigned ovf_idle; /* blocks without weight run since on stops */
	int detach_entry;  /* detaching: stopped at a syscall entry */
	struct pflops_thr *next;
};

struct pflops_deferred {
	pid_t pid;
	int status;
};

struct pflops_tracer {
	const struct pflops_trace_opts *o;
	int engine; /* PFLOPS_ENGINE_STOP or _CACHE */
	struct pflops_mix *mix;
	struct pflops_trace_stats st;
	struct pflops_error *err;
	struct pflops_thr *threads;
	pid_t root;
	int root_status, root_done;
	struct timespec last;
	unsigned progress_ms;
	uint8_t *xbuf; /* trace_xlate.c's code buffer */
	int sfd;       /* signalfd of SIGCHLD (progress), or -1 */
	sigset_t oldmask;
	/* wait statuses taken while injecting, handled by the main loop */
	struct pflops_deferred *defer;
	size_t ndefer, defer_cap;
	struct timespec int_at;	  /* when an interrupt was first seen */
	struct pflops_prof *prof; /* opts.block: per-block counts */
	/* attached (trace_attach.c): counts published to the process */
	struct pflops_pub *pub;
	const struct pflops_space *pub_sp; /* the space published */
	int attached;			   /* pflops_trace_attach: the program ran
				 * untraced before (its rseq may be set) */
};

int pflops_fail(struct pflops_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* trace_ptrace.c: the thread list (drop harvests the thread's counts) */
struct pflops_thr *pflops_thread_add(struct pflops_tracer *T, pid_t tid, int state);
void pflops_thread_drop(struct pflops_tracer *T, pid_t tid);
/* trace_detach.c: count the remaining processes up to now, then let them
 * run on untraced (the program has ended; they are not waited for) */
int pflops_detach_rest(struct pflops_tracer *T);

/* trace_enter.c (and trace_ptrace.c): the engine's steps */
int pflops_counting(const struct pflops_tracer *T, const struct pflops_thr *t);
void pflops_count_block(struct pflops_tracer *T, struct pflops_thr *t, struct pflops_block *b, uint32_t n);
int pflops_set_mode(struct pflops_tracer *T, struct pflops_thr *t, struct user_regs_struct *r, int mode, int *dirty);
int pflops_enter(struct pflops_tracer *T, struct pflops_thr *t, struct user_regs_struct *r, int *dirty);
int pflops_go(struct pflops_tracer *T, struct pflops_thr *t, struct user_regs_struct *r, int dirty);
int pflops_resume(struct pflops_tracer *T, struct pflops_thr *t, struct user_regs_struct *r, int dirty, int rc);
int pflops_restart(struct pflops_tracer *T, struct pflops_thr *t, int req, int sig);
int pflops_getregs(pid_t tid, struct user_regs_struct *r);
int pflops_on_sigtrap(struct pflops_tracer *T, struct pflops_thr *t);
int pflops_setregs(struct pflops_tracer *T, struct pflops_thr *t, const struct user_regs_struct *r);

/* trace_sys.c: what the tracer changes at a system call so that the
 * program behaves as it does untraced (docs/trace-engine.md,
 * "Transparency"); entry: at the syscall-entry stop (regs of it,
 * t->sys_nr and t->sys_args set), exit: at its exit stop. */
int pflops_sys_entry(struct pflops_tracer *T, struct pflops_thr *t, struct user_regs_struct *r);
void pflops_sys_exit(struct pflops_tracer *T, struct pflops_thr *t, struct user_regs_struct *r, int *dirty);
/* a process attached (--pid): what it turned on before (seccomp) */
void pflops_sys_attached(struct pflops_tracer *T, struct pflops_space *sp);
/* a clone/fork/vfork event of t: 1 when the child shares t's memory */
int pflops_sys_shares_vm(struct pflops_tracer *T, struct pflops_thr *t, int ev);
/* EFLAGS.TF set by the program (popf, sigreturn): it steps itself */
#define PFLOPS_TF 0x100ULL
/* the program's single-step trap that a branch we emulated would have
 * raised: sent to it before it runs on (as a held signal) */
void pflops_sys_owe_trap(struct pflops_thr *t);
/* a thread that may have registered rseq untraced (attached, or
 * entering --region): stats.rseq_kept when it did */
void pflops_sys_rseq_check(struct pflops_tracer *T, struct pflops_thr *t);

/* trace_signal.c: signals in each mode, and the cache's own traps */
int pflops_on_signal(struct pflops_tracer *T, struct pflops_thr *t, int sig, siginfo_t *si);
int pflops_cache_sigtrap(struct pflops_tracer *T, struct pflops_thr *t, siginfo_t *si);
/* a thread stopped at a clean point of a copy goes back to the original
 * address (its count corrected to what ran); -1 if not a clean point */
/* A thread stopped on an int3 of the cache (a copy's exit stub, the
 * lookup routine's miss or exit; rip one past it): r becomes where it
 * goes in the program, with the registers the lookup routine saved put
 * back; *exit: the copy's exit number, -1 for the lookup routine.
 * -1 when rip - 1 is no such int3. */
int pflops_cache_trap_target(struct pflops_thr *t, struct user_regs_struct *r, int *exit);
int pflops_cache_to_orig(struct pflops_tracer *T, struct pflops_thr *t, struct user_regs_struct *r);

/* trace_mem.c */
struct pflops_space *pflops_space_new(pid_t pid, const char *region);
struct pflops_space *pflops_space_fork(const struct pflops_space *parent, pid_t child, const char *region);
void pflops_space_put(struct pflops_space *sp);
/* read len bytes of tracee memory with breakpoints undone; returns bytes read */
size_t pflops_mem_read(struct pflops_space *sp, pid_t tid, uint64_t addr, void *buf, size_t len);
int pflops_mem_write64(pid_t tid, uint64_t addr, uint64_t val);
int pflops_bp_has(const struct pflops_space *sp, uint64_t addr);
int pflops_bp_insert(struct pflops_space *sp, pid_t tid, uint64_t addr);
int pflops_bp_remove(struct pflops_space *sp, pid_t tid, uint64_t addr);
/* breakpoints in [lo, hi) out: their bytes restored through tid, or,
 * with tid 0, only forgotten (the memory is gone: munmap) */
void pflops_bp_clear(struct pflops_space *sp, pid_t tid, uint64_t lo, uint64_t hi);

/* Active lanes of one execution of FP entry e under opmasks k (NULL:
 * unknown, all lanes); zeroing and merging alike: only active lanes
 * compute. */
static inline uint64_t pflops_fp_active(const struct pflops_fpent *e, const uint64_t *k)
{
	unsigned bits;
	uint64_t sel;

	if (!e->mask_reg || !k)
		return e->lanes;
	bits = e->lanes / e->lanes_per_bit;
	sel = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
	return (uint64_t)__builtin_popcountll(k[e->mask_reg] & sel) * e->lanes_per_bit;
}

/* trace_blocks.c */
struct pflops_block *pflops_block_get(struct pflops_space *sp, pid_t tid, uint64_t pc, int force_step,
				      uint64_t *decoded);
/* index of the instruction at pc in blk, or -1 */
int pflops_block_index(const struct pflops_block *blk, uint64_t pc);
/* count instructions [0, n) of blk into m; k: opmask values (or NULL) */
void pflops_block_count(struct pflops_mix *m, const struct pflops_block *blk, uint32_t n, const uint64_t *k);
void pflops_block_count_one(struct pflops_mix *m, const struct pflops_block *blk, uint32_t idx, const uint64_t *k);
/* add `times` complete unmasked executions of blk to m */
void pflops_block_count_times(struct pflops_mix *m, const struct pflops_block *blk, uint64_t times);
void pflops_block_free_all(struct pflops_space *sp);
/* a copy of b (without its cache copy), and putting one in sp's cache */
struct pflops_block *pflops_block_clone(const struct pflops_block *b);
int pflops_block_adopt(struct pflops_space *sp, struct pflops_block *b);
/* Drop every block with a byte in [lo, hi) from the cache (their code
 * changed); cached copies are detached.  Returns how many. */
size_t pflops_block_invalidate(struct pflops_space *sp, uint64_t lo, uint64_t hi);

/* trace_emul.c: emulate the terminator of blk on regs; 0 or negative */
int pflops_emulate(struct pflops_space *sp, pid_t tid, const struct pflops_block *blk, struct user_regs_struct *regs);

/* trace_xstate.c: opmask registers k0..k7 of a stopped thread */
int pflops_read_kregs(pid_t tid, uint64_t k[8]);

/* trace_maps.c */
int pflops_maps_load(struct pflops_maps *m, pid_t pid);
void pflops_maps_free(struct pflops_maps *m);
/* the mapping holding addr (reloading once when stale or unknown) */
const struct pflops_map *pflops_maps_find(struct pflops_maps *m, pid_t pid, uint64_t addr);
/* A free page-aligned range of size bytes, every byte of it within
 * `reach` of every byte of [lo, hi); 0 if none. */
uint64_t pflops_maps_gap_near(const struct pflops_maps *m, uint64_t lo, uint64_t hi, uint64_t size, uint64_t reach);

/* trace_window.c: --region's windows (a call, every thread counting) */
#define PFLOPS_WIN_RSP0 \
	(1ULL << 63) /* slot RSP0 of a thread counting
					 * for the window: never left */
void pflops_win_enter(struct pflops_tracer *T, struct pflops_thr *t);
void pflops_win_leave(struct pflops_tracer *T, struct pflops_thr *t);
void pflops_win_drop(struct pflops_tracer *T, struct pflops_thr *t);
int pflops_win_stop(struct pflops_tracer *T, struct pflops_thr *t);
/* stopped where the kernel will restart an interrupted system call */
int pflops_sys_restarting(const struct user_regs_struct *r);
void pflops_win_flops(struct pflops_tracer *T, struct pflops_thr *t, uint64_t before);

/* trace_region.c */
/* the region's symbol was found in some object of the process */
int pflops_region_found(const struct pflops_region *r);
struct pflops_region *pflops_region_new(const char *sym);
void pflops_region_free(struct pflops_region *r);
struct pflops_region *pflops_region_copy(const struct pflops_region *r);
int pflops_region_is_entry(struct pflops_region *r, pid_t pid, uint64_t pc);
/* Re-read the maps and find the region symbol (and the dynamic loader's
 * notification hook) in files mapped since the last call.  New
 * addresses go to *found (entries first, then hooks; *nentries of them
 * are entries), to be armed with breakpoints. */
int pflops_region_scan(struct pflops_region *r, pid_t pid, uint64_t **found, size_t *nfound, size_t *nentries);
int pflops_region_is_hook(const struct pflops_region *r, uint64_t pc);
/* why an entry of the function was not armed (the first reason), or NULL */
const char *pflops_region_refused(const struct pflops_region *r);

/* trace_elf.c: ELF files mapped by the traced process. */
struct pflops_elf {
	const uint8_t *p; /* the whole file, mapped read-only */
	size_t size;
};
struct pflops_elf_sym {
	const char *name;
	uint64_t value, size;
	int global, weak; /* binding: STB_GLOBAL, STB_WEAK (else local) */
	unsigned shndx;	  /* its section */
};
/* fn returns nonzero to stop the walk (that value is returned) */
typedef int (*pflops_elf_sym_fn)(void *arg, const struct pflops_elf_sym *s);
/* 0, or PFLOPS_ENOENT: missing, unreadable, not a 64-bit ELF file */
int pflops_elf_open(struct pflops_elf *e, const char *path);
/* e->p, e->size hold a file (any bytes): 0 when its headers are in
 * bounds (what pflops_elf_open checks; the fuzz harness's entry point) */
int pflops_elf_check(const struct pflops_elf *e);
void pflops_elf_close(struct pflops_elf *e);
/* defined functions (STT_FUNC, STT_GNU_IFUNC, value != 0) of the
 * .symtab sections (dynamic = 0) or the .dynsym ones (dynamic = 1) */
int pflops_elf_funcs(const struct pflops_elf *e, int dynamic, pflops_elf_sym_fn fn, void *arg);
/* the page-aligned vaddr and file offset of the first PT_LOAD */
int pflops_elf_first_load(const struct pflops_elf *e, uint64_t *vaddr, uint64_t *off);
/* the PT_LOAD segments, *v malloc'ed: a file offset `off` in one of
 * them is link-time address (the symbols' address space)
 * off - seg.off + seg.vaddr */
struct pflops_elf_seg {
	uint64_t off, filesz, vaddr;
	uint32_t flags;
};
int pflops_elf_loads(const struct pflops_elf *e, struct pflops_elf_seg **v, size_t *n);
/* A defined function `sym` in a file (.symtab first, then .dynsym): its
 * st_value, the page-aligned vaddr/offset of the first PT_LOAD (for the
 * load bias), and its first bytes in the file.  why[0] != 0: its address
 * is not an instruction start, or cannot be shown to be one (not in an
 * executable segment, inside an instruction of an enclosing function,
 * not decodable): a sentence naming the file and the reason; no int3 may
 * go there. */
struct pflops_elf_hit {
	uint64_t value, load_vaddr, load_off;
	uint8_t code[16]; /* the file's bytes at value */
	size_t ncode;
	char why[320];
};
/* a section by name: its file offset, size and link-time address */
int pflops_elf_section(const struct pflops_elf *e, const char *name, uint64_t *off, uint64_t *size, uint64_t *addr);
/* trace_cfi.c: the start of the .eh_frame entry (a function's unwind
 * information) that covers link-time address v and starts below it;
 * -1 when none does */
int pflops_cfi_enclosing(const struct pflops_elf *e, uint64_t v, uint64_t *start);
int pflops_elf_lookup_e(const struct pflops_elf *e, const char *path, const char *sym, struct pflops_elf_hit *h);
int pflops_elf_lookup(const char *path, const char *sym, struct pflops_elf_hit *h);

/* trace_prof.c: per-block counts for opts.block.  Every count the engine
 * adds to the run's mix through a block is added to that block's acc
 * too (pflops_count_block, the stepped path, the cache's harvest), so
 * the blocks' mixes add up to the run's exactly. */
struct pflops_prof *pflops_prof_new(const struct pflops_trace_opts *o);
void pflops_prof_free(struct pflops_prof *p);
/* a block just decoded in sp: its counters, and the mapping it lies in
 * (read now: mappings change and are gone when the process ends) */
int pflops_prof_block(struct pflops_space *sp, pid_t tid, struct pflops_block *b);
/* instructions [0, n) of b ran (opmasks k, or NULL) */
void pflops_prof_count(struct pflops_block *b, uint32_t n, const uint64_t *k);
/* instruction idx of b ran (stepped) */
void pflops_prof_one(struct pflops_block *b, uint32_t idx, const uint64_t *k);
/* `times` complete unmasked runs of b (the code cache's counters) */
void pflops_prof_times(struct pflops_block *b, uint64_t times);
/* sp's counts are final (its process ended or exec'ed): report every
 * block of it that counted something to opts.block */
void pflops_prof_report(struct pflops_space *sp);

/* trace_inject.c: make a stopped thread (not at a syscall-entry stop)
 * run one system call; its registers are restored afterwards.  Returns
 * 0 with the kernel's return value in *ret, or a negative PFLOPS_E*
 * (PFLOPS_ECHILD: the thread died meanwhile). */
int pflops_inject(struct pflops_tracer *T, struct pflops_thr *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
		  uint64_t a3, uint64_t a4, uint64_t a5, int64_t *ret);
/* The same from a syscall-entry stop: the program's system call is
 * replaced by this one, then set to run again when the thread goes on
 * (it is left at that syscall's exit stop). */
int pflops_inject_entry(struct pflops_tracer *T, struct pflops_thr *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
			int64_t *ret);
void pflops_defer(struct pflops_tracer *T, pid_t pid, int status);
/* hold a signal back (it is sent again at the next restart) */
void pflops_hold_signal(struct pflops_thr *t, int sig, const siginfo_t *si);

/* trace_arena.c: the code cache's memory in one traced process. */
#define PFLOPS_SLOT_RAX 0 /* per-thread slot (%gs base), scratch words */
#define PFLOPS_SLOT_RCX 8
#define PFLOPS_SLOT_RDX 16
#define PFLOPS_SLOT_TGT 24
#define PFLOPS_SLOT_TABLE 32 /* tracee address of the lookup table */
#define PFLOPS_SLOT_RSP0 40  /* --region: %rsp at the region's entry */
#define PFLOPS_SLOT_OVF \
	48		     /* overflow: what remains before the thread
				 * must leave the cache (trace_ovf.c) */
#define PFLOPS_SLOT_CF 56    /* overflow: CF kept across the check (byte) */
#define PFLOPS_SLOT_CNT 4096 /* counters: 8 bytes per block id */
#define PFLOPS_MAX_IDS 262144
#define PFLOPS_MAX_SLOTS 256
#define PFLOPS_SLOT_BYTES (PFLOPS_SLOT_CNT + 8 * PFLOPS_MAX_IDS)
#define PFLOPS_TABLE_N 65536 /* lookup table buckets (+ overflow) */
#define PFLOPS_TABLE_OVER 1024
#define PFLOPS_TOMB 0x8000000000000001ULL /* removed table entry */

struct pflops_chunk {
	size_t index;  /* in its arena's list */
	uint64_t addr; /* in the tracee */
	uint8_t *mem;  /* the same bytes in the tracer */
	size_t size, used;
	uint64_t ibl;	   /* indirect-branch lookup routine */
	uint64_t ibl_miss; /* its int3s: target not cached */
	uint64_t ibl_exit; /*            --region left (stack above) */
	uint64_t ibl_end;
	struct pflops_xblock **xb; /* blocks in address order */
	size_t nxb, xb_cap;
};

struct pflops_arena {
	uint64_t table; /* tracee address of the lookup table */
	uint8_t *table_mem;
	uint64_t slots;			     /* tracee address of the counter slots */
	int slots_fd;			     /* tracer's descriptor of the slots memfd */
	uint8_t *slot_mem[PFLOPS_MAX_SLOTS]; /* tracer mappings, lazily */
	uint8_t slot_used[PFLOPS_MAX_SLOTS];
	struct pflops_chunk **chunks; /* stable: blocks point to them */
	size_t nchunks;
	/* sized to the process's RLIMIT_AS (pflops_arena_setup) */
	int nslots; /* threads with a slot at once */
	size_t max_chunks;
	uint64_t as_limit;	   /* that limit (0: none) */
	int region;		   /* lookup routine checks the region's stack */
	struct pflops_block **ids; /* block of each counter id */
	uint32_t nids;
};

int pflops_arena_setup(struct pflops_tracer *T, struct pflops_thr *t);
/* the address space the arena takes in its process (bytes) */
uint64_t pflops_arena_as_bytes(const struct pflops_arena *a);
void pflops_arena_free(struct pflops_arena *a);
/* a chunk with `need` free bytes reachable (rel32) from [lo, hi) */
struct pflops_chunk *pflops_arena_chunk(struct pflops_tracer *T, struct pflops_thr *t, uint64_t lo, uint64_t hi,
					size_t need);
struct pflops_chunk *pflops_arena_chunk_of(const struct pflops_arena *a, uint64_t addr);
int pflops_slot_alloc(struct pflops_arena *a);
/* take slot number `slot` (its header written); returns it or -1 */
int pflops_slot_init(struct pflops_arena *a, int slot);
void pflops_slot_free(struct pflops_arena *a, int slot);
uint8_t *pflops_slot_mem(struct pflops_arena *a, int slot);
uint64_t pflops_slot_addr(const struct pflops_arena *a, int slot);
/* give forked child t its own copy of its parent's arena */
int pflops_arena_fork(struct pflops_tracer *T, struct pflops_thr *t, const struct pflops_arena *parent);
/* the start of a new chunk: a `syscall`, then the lookup routine
 * (trace_link.c); returns the bytes used */
size_t pflops_ibl_emit(struct pflops_chunk *ch, int region);
/* one tracee `syscall` instruction for pflops_inject */
uint64_t pflops_find_gadget(struct pflops_space *sp, pid_t tid);

/* trace_xlate.c: translation of blocks into the cache. */
struct pflops_xexit {
	uint64_t target;	  /* original address it goes to */
	uint32_t site;		  /* offset of its rel32 in the block's code */
	uint32_t stub;		  /* offset of its 16-byte stub */
	struct pflops_xblock *to; /* linked to this block, or NULL */
};

struct pflops_xpoint { /* a range of the copy, for signals */
	uint32_t off;
	uint8_t kind; /* PFLOPS_XP_* */
	uint32_t arg; /* instruction index or exit number */
};

enum {
	PFLOPS_XP_INC,	   /* counter not yet incremented; at insn arg */
	PFLOPS_XP_BODY,	   /* at instruction arg, not yet executed */
	PFLOPS_XP_RCX,	   /* terminator, %rcx in the slot (fault: at
				 * insn arg; signal: roll forward) */
	PFLOPS_XP_ROLL,	   /* inside our code: roll forward */
	PFLOPS_XP_DONE,	   /* block done; at exit arg's target */
	PFLOPS_XP_DATA,	   /* literals: never executed */
	PFLOPS_XP_OVF,	   /* overflow word lowered, counter not yet
				 * incremented; at insn arg */
	PFLOPS_XP_OVFSTUB, /* near an overflow: the same, trapped */
};

struct pflops_xblock {
	struct pflops_block *b;
	struct pflops_chunk *ch;
	uint64_t addr; /* entry in the tracee */
	uint32_t size;
	uint32_t id;	   /* counter id */
	uint32_t inc_at;   /* instruction before which the count is
				 * incremented */
	uint32_t ovf_w;	   /* overflow weight subtracted there (0: none) */
	uint8_t ovf_cf;	   /* CF saved in the slot around the check */
	uint32_t ovf_pre;  /* weight run before the check */
	uint32_t ovf_stub; /* offset of its int3 (near a crossing) */
	struct pflops_xexit ex[2];
	int nex;
	struct pflops_xpoint *pt;
	int npt;
	struct {
		struct pflops_xblock *from;
		int exit;
	} * in; /* links */
	int nin, in_cap;
	uint8_t dead;
};

/* Why blk cannot go to the cache, or PFLOPS_NC_NONE. */
int pflops_xlate_check(struct pflops_space *sp, pid_t tid, struct pflops_block *b);
/* The cache entry of b (translated now if needed); 0: not cacheable. */
uint64_t pflops_xlate(struct pflops_tracer *T, struct pflops_thr *t, struct pflops_block *b);
/* Translate and link what b's copy goes to next (direct targets, the
 * return site of a call), breadth-first, up to budget blocks: each one
 * saves a stop at its first run. */
void pflops_xlate_ahead(struct pflops_tracer *T, struct pflops_thr *t, struct pflops_block *b, int budget);
/* A displaced copy of the instruction at addr followed by a jump back to
 * the next one (STOP mode past a region-entry int3); 0 if impossible. */
uint64_t pflops_xlate_tramp(struct pflops_tracer *T, struct pflops_thr *t, struct pflops_block *b, uint64_t *back);
/* the block and point of a tracee address in the cache */
struct pflops_xblock *pflops_xlate_find(const struct pflops_arena *a, uint64_t addr, const struct pflops_xpoint **pt);
void pflops_xlate_link(struct pflops_xblock *from, int exit, struct pflops_xblock *to);
void pflops_xlate_detach(struct pflops_space *sp, struct pflops_xblock *x);
void pflops_table_insert(struct pflops_arena *a, uint64_t orig, uint64_t entry);
/* add the counts of one thread's slot to m (zero them when `take`) */
uint64_t pflops_harvest(struct pflops_arena *a, int slot, struct pflops_mix *m, int take);
/* sp (a forked child's new space) gets copies of parent's cached blocks
 * and of its arena's layout; pflops_arena_fork then gives it memory */
int pflops_xlate_fork(struct pflops_space *sp, const struct pflops_space *parent);

/* trace_reloc.c: copy one instruction to another address. */
struct pflops_reloc {
	uint8_t len;
	uint8_t rip_rel;     /* has a RIP-relative memory operand */
	uint8_t disp_off;    /* offset of its disp32 */
	uint8_t uses_gs;     /* %gs segment, rd/wrgsbase, loads of %gs */
	uint8_t pops_flags;  /* popf: may set EFLAGS.TF (trace_sys.c) */
	uint8_t kills_flags; /* writes OF SF ZF AF PF, reads none */
	uint8_t kills_cf;    /* the same, and CF too */
	uint8_t ind_modrm;   /* indirect jmp/call: offset of the ModRM */
	uint8_t ind_rex;     /* its REX byte (0 if none) */
	uint8_t ind_pfx[4];  /* its kept legacy prefixes */
	uint8_t ind_npfx;
	uint64_t rip_target; /* absolute address of the operand */
};
int pflops_reloc_decode(const uint8_t *buf, size_t len, uint64_t addr, struct pflops_reloc *r);

/* trace_pub.c: counts the traced process reads itself (pflops_pub.h);
 * each does nothing unless T->pub is set.  idx < 0: instructions [0, n)
 * of b ran, else instruction idx alone. */
struct pflops_pub;
void pflops_pub_count(struct pflops_tracer *T, struct pflops_thr *t, const struct pflops_block *b, uint32_t n, int idx,
		      const uint64_t *k);
void pflops_pub_slot(struct pflops_tracer *T, struct pflops_thr *t);
void pflops_pub_block(struct pflops_tracer *T, const struct pflops_space *sp, uint32_t id,
		      const struct pflops_block *b);
void pflops_pub_forget(struct pflops_tracer *T, pid_t tid);

/* trace_ovf.c: overflow of a thread's weighted count (opts.overflow).
 * Cached blocks subtract their weight from the slot's OVF word at their
 * counter increment and trap when it reaches 0, the guard (the most
 * weight a copy runs before its check, sp->ovf_maxpre) before the
 * crossing at the latest; the thread then runs on the stopping path,
 * single-stepping the block in which the crossing falls.  A block with
 * more than PFLOPS_OVF_GUARD before its check stays on the stopping
 * path (PFLOPS_NC_OVF). */
#define PFLOPS_OVF_GUARD 1024 /* at most this weight before the check */
int pflops_ovf_on(const struct pflops_tracer *T);
void pflops_ovf_thread(struct pflops_tracer *T, struct pflops_thr *t);
/* weights of b's FP entries (computed once); its full-run sum */
uint64_t pflops_ovf_block(struct pflops_tracer *T, struct pflops_block *b);
/* instructions [lo, hi) of b ran (opmasks k or NULL) */
void pflops_ovf_count(struct pflops_tracer *T, struct pflops_thr *t, const struct pflops_block *b, uint32_t lo,
		      uint32_t hi, const uint64_t *k);
/* t is about to run instruction idx of b (regs r): the callback if it
 * crosses */
void pflops_ovf_at(struct pflops_tracer *T, struct pflops_thr *t, const struct pflops_block *b, uint32_t idx,
		   const struct user_regs_struct *r);
/* t starts running b on the stopping path: 1 when the crossing falls in
 * this run (step it) */
int pflops_ovf_near(struct pflops_tracer *T, struct pflops_thr *t, struct pflops_block *b);
/* t trapped at a copy's check: near a crossing */
void pflops_ovf_trapped(struct pflops_tracer *T, struct pflops_thr *t);
/* t may enter the cache: its crossing is more than the guard away, or
 * it has run PFLOPS_OVF_IDLE blocks without weight on the stopping path
 * (it left its FP code: the next weighted copy traps at its check, and
 * a crossing before that check is seen late) */
#define PFLOPS_OVF_IDLE 256	  /* when no copy can cross before its check */
#define PFLOPS_OVF_IDLE_LONG 8192 /* otherwise */
int pflops_ovf_cache_ok(const struct pflops_tracer *T, const struct pflops_thr *t);
/* the slot's OVF word: read back what t ran in the cache (leaving), or
 * set for a run there (entering) */
void pflops_ovf_sync(struct pflops_tracer *T, struct pflops_thr *t, int entering);
/* a system call finished: the caller may restart t's count; 1: t
 * must leave the cache (its crossing is near) */
int pflops_ovf_rearm(struct pflops_tracer *T, struct pflops_thr *t);
/* trace_wprot.c: code on writable pages, write-protected while cached
 * or decoded.  wprot_code guards the pages of a block just met (1: all
 * of its writable pages are guarded or it has none); wprot_check is
 * trace_xlate.c's test; wprot_fault takes a write fault on a guarded
 * page (1: it was ours and the thread goes on, 0: the program's, <0
 * error); forget/moved follow the program's own mprotect, munmap,
 * mmap(MAP_FIXED), mremap; restore puts the program's protections back
 * before a detach. */
struct pflops_wpage;
int pflops_wprot_code(struct pflops_tracer *T, struct pflops_thr *t, struct pflops_block *b,
		      const struct user_regs_struct *r);
int pflops_wprot_check(struct pflops_space *sp, pid_t tid, struct pflops_block *b);
int pflops_wprot_fault(struct pflops_tracer *T, struct pflops_thr *t, const siginfo_t *si);
void pflops_wprot_forget(struct pflops_space *sp, uint64_t lo, uint64_t hi, int prot);
void pflops_wprot_moved(struct pflops_tracer *T, struct pflops_thr *t, uint64_t lo, uint64_t len, uint64_t dst);
void pflops_wprot_restore(struct pflops_tracer *T, struct pflops_thr *t);
int pflops_wprot_copy(struct pflops_space *sp, const struct pflops_space *parent);
void pflops_wprot_free(struct pflops_space *sp);
/* trace_signal.c: a thread faulting at a program instruction of a copy
 * goes back to that instruction (counted up to it); -1 if not one */
int pflops_cache_fault_to_orig(struct pflops_tracer *T, struct pflops_thr *t, struct user_regs_struct *r);
/* a thread of the stopping path stopped at a program instruction: out of
 * a displaced first instruction (1: r changed), its block counted up to
 * that instruction */
int pflops_stop_to_orig(struct pflops_tracer *T, struct pflops_thr *t, struct user_regs_struct *r);

/* trace_ptrace.c, for the attach loop (trace_attach.c) */
int pflops_engine_handle(struct pflops_tracer *T, pid_t tid, int status);
int pflops_engine_pick(const struct pflops_trace_opts *o, int *engine, struct pflops_error *err);
void pflops_engine_kill_all(struct pflops_tracer *T);

#endif
