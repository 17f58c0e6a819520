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
#ifndef PFT_TRACE_INTERNAL_H
#define PFT_TRACE_INTERNAL_H

#include <sys/types.h>
#include <sys/user.h>
#include <signal.h>
#include "pflops_trace.h"
#include "pflops_internal.h"
#include "pft_arch.h"

/* How a thread runs through a block on the stopping path. */
enum {
	PFT_BLK_BP,	 /* int3 at the terminator, which we emulate */
	PFT_BLK_SYSCALL, /* ends in a syscall: PTRACE_SYSCALL stops */
	PFT_BLK_STEP,	 /* single-step every instruction */
};

struct pft_fpent {    /* one FP instruction of a block */
	uint32_t idx; /* instruction index in the block */
	uint8_t prec, width, op, lanes, mask_reg, lanes_per_bit;
};

struct pft_xblock;

struct pft_block {
	uint64_t start;
	uint64_t last; /* address of the last instruction */
	uint64_t end;  /* first byte after the block */
	uint32_t ninsts;
	uint32_t nfp;
	uint8_t mode;	      /* PFLOPS_BLK_* */
	uint8_t has_mask;     /* some FP instruction uses k1..k7 */
	uint8_t region_entry; /* start is the region function's entry */
	uint8_t dead;	      /* its code was unmapped or rewritten */
	uint8_t wp_done;      /* its pages were guarded (trace_wprot.c) */
	struct pft_insn term; /* the last instruction when it is a branch */
	uint32_t *offs;	      /* ninsts instruction offsets from start */
	struct pft_fpent *fp;
	uint32_t extra[PFLOPS_NEXTRA];
	/* Executions counted so far (all threads), for per-block reports. */
	uint64_t execs;
	struct pft_xblock *x; /* its code-cache copy, or NULL */
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
	struct pft_block *next; /* hash chain */
};

struct pft_region;
struct pft_arena;
struct pft_prof;

/* One memory mapping of a traced process (/proc/PID/maps). */
struct pft_map {
	uint64_t lo, hi, off;
	uint8_t r, w, x;
	char *path; /* NULL for anonymous mappings */
};

struct pft_maps {
	struct pft_map *v;
	size_t n;
	int stale; /* reload before the next lookup */
};

/* An address space: shared by threads (and a vfork child until exec). */
struct pft_space {
	int refs;
	pid_t pid; /* a process id in it (for /proc and reads) */
	/* breakpoints: open addressing, key 0 = empty */
	uint64_t *bp_addr;
	uint8_t *bp_orig;
	size_t bp_cap, bp_n;
	/* block cache */
	struct pft_block **blk_tab;
	size_t blk_cap, blk_n;
	struct pft_block **dead; /* invalidated blocks, kept for counts */
	size_t ndead, dead_cap;
	uint64_t *pages; /* set of pages holding decoded code */
	size_t pg_cap, pg_n;
	struct pft_region *region; /* NULL when no region is asked */
	struct pft_maps maps;
	uint64_t gadget;	 /* a `syscall` instruction (injection) */
	struct pft_arena *arena; /* code cache; NULL until needed */
	int arena_failed;	 /* setup failed: stopping path only */
	int no_inject;		 /* it turned on seccomp: no system call
					 * may be injected (trace_sys.c) */
	struct pft_prof *prof;	 /* per-block counts asked (opts.block) */
	uint64_t ovf_maxpre;	 /* overflow: the most weight a copy runs
				 * before its check (<= PFT_OVF_GUARD) */
	int win_calls;		 /* --region: threads inside the function (the
				 * window is open while > 0: trace_window.c) */
	struct pft_wpage *wp;	 /* pages write-protected by us (trace_wprot.c) */
	size_t wp_cap, wp_used;
};

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
	int ovf_hold;	   /* left the cache near a crossing: stay out */
	int ovf_stepping;  /* t->blk single-stepped to its crossing (its
				 * instructions counted one by one) */
	unsigned ovf_idle; /* blocks without weight run since on stops */
	int detach_entry;  /* detaching: stopped at a syscall entry */
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
	uint8_t *xbuf; /* trace_xlate.c's code buffer */
	int sfd;       /* signalfd of SIGCHLD (progress), or -1 */
	sigset_t oldmask;
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
};

/* trace_thread.c: the thread list (drop harvests the thread's counts) */
struct pft_thr *pft_thread_find(struct pft_tracer *T, pid_t tid);
struct pft_thr *pft_thread_add(struct pft_tracer *T, pid_t tid, int state);
void pft_thread_drop(struct pft_tracer *T, pid_t tid);
/* the thread's cache counts into the run's mix, its slot freed */
void pft_thread_harvest(struct pft_tracer *T, struct pft_thr *t);
/* a thread lets its address space go (the region's outcome kept) */
void pft_space_release(struct pft_tracer *T, struct pft_space *sp);
/* trace_detach.c: count the remaining processes up to now, then let them
 * run on untraced (the program has ended; they are not waited for) */
int pft_detach_rest(struct pft_tracer *T);

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
int pft_on_signal(struct pft_tracer *T, struct pft_thr *t, int sig, siginfo_t *si);
int pft_cache_sigtrap(struct pft_tracer *T, struct pft_thr *t, siginfo_t *si);
/* a thread stopped at a clean point of a copy goes back to the original
 * address (its count corrected to what ran); -1 if not a clean point */
/* A thread stopped on an int3 of the cache (a copy's exit stub, the
 * lookup routine's miss or exit; rip one past it): r becomes where it
 * goes in the program, with the registers the lookup routine saved put
 * back; *exit: the copy's exit number, -1 for the lookup routine.
 * -1 when rip - 1 is no such int3. */
int pft_cache_trap_target(struct pft_thr *t, struct user_regs_struct *r, int *exit);
int pft_cache_to_orig(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r);

/* trace_space.c: an address space's life */
struct pft_space *pft_space_new(pid_t pid, const char *region);
struct pft_space *pft_space_fork(const struct pft_space *parent, pid_t child, const char *region);
void pft_space_put(struct pft_space *sp);
/* trace_mem.c: memory and breakpoints */
/* read len bytes of tracee memory with breakpoints undone; returns bytes read */
size_t pft_mem_read(struct pft_space *sp, pid_t tid, uint64_t addr, void *buf, size_t len);
int pft_mem_write64(pid_t tid, uint64_t addr, uint64_t val);
/* one word, as it is (breakpoints not undone) */
int pft_mem_read64(pid_t tid, uint64_t addr, uint64_t *val);
int pft_bp_has(const struct pft_space *sp, uint64_t addr);
int pft_bp_insert(struct pft_space *sp, pid_t tid, uint64_t addr);
int pft_bp_remove(struct pft_space *sp, pid_t tid, uint64_t addr);
/* breakpoints in [lo, hi) out: their bytes restored through tid, or,
 * with tid 0, only forgotten (the memory is gone: munmap) */
void pft_bp_clear(struct pft_space *sp, pid_t tid, uint64_t lo, uint64_t hi);
/* the breakpoint table of a new space, a forked child's copy, freed */
int pft_bp_init(struct pft_space *sp);
int pft_bp_copy(struct pft_space *sp, const struct pft_space *parent);
void pft_bp_free(struct pft_space *sp);

/* Active lanes of one execution of FP entry e under opmasks k (NULL:
 * unknown, all lanes); zeroing and merging alike: only active lanes
 * compute. */
static inline uint64_t pft_fp_active(const struct pft_fpent *e, const uint64_t *k)
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
struct pft_block *pft_block_get(struct pft_space *sp, pid_t tid, uint64_t pc, int force_step, uint64_t *decoded);
/* index of the instruction at pc in blk, or -1 */
int pft_block_index(const struct pft_block *blk, uint64_t pc);
/* count instructions [0, n) of blk into m; k: opmask values (or NULL) */
void pft_block_count(struct pflops_mix *m, const struct pft_block *blk, uint32_t n, const uint64_t *k);
void pft_block_count_one(struct pflops_mix *m, const struct pft_block *blk, uint32_t idx, const uint64_t *k);
/* add `times` complete unmasked executions of blk to m */
void pft_block_count_times(struct pflops_mix *m, const struct pft_block *blk, uint64_t times);
void pft_block_free_all(struct pft_space *sp);
/* a copy of b (without its cache copy), and putting one in sp's cache */
struct pft_block *pft_block_clone(const struct pft_block *b);
int pft_block_adopt(struct pft_space *sp, struct pft_block *b);
/* Drop every block with a byte in [lo, hi) from the cache (their code
 * changed); cached copies are detached.  Returns how many. */
size_t pft_block_invalidate(struct pft_space *sp, uint64_t lo, uint64_t hi);

/* trace_blocks.c: emulate the terminator of blk on regs (pft_arch_emulate);
 * 0 or negative */
int pft_emulate(struct pft_space *sp, pid_t tid, const struct pft_block *blk, struct user_regs_struct *regs);

/* trace_maps.c */
int pft_maps_load(struct pft_maps *m, pid_t pid);
void pft_maps_free(struct pft_maps *m);
/* the mapping holding addr (reloading once when stale or unknown) */
const struct pft_map *pft_maps_find(struct pft_maps *m, pid_t pid, uint64_t addr);
/* A free page-aligned range of size bytes, every byte of it within
 * `reach` of every byte of [lo, hi); 0 if none. */
uint64_t pft_maps_gap_near(const struct pft_maps *m, uint64_t lo, uint64_t hi, uint64_t size, uint64_t reach);

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

/* trace_region.c */
/* the region's symbol was found in some object of the process */
int pft_region_found(const struct pft_region *r);
struct pft_region *pft_region_new(const char *sym);
void pft_region_free(struct pft_region *r);
struct pft_region *pft_region_copy(const struct pft_region *r);
int pft_region_is_entry(struct pft_region *r, pid_t pid, uint64_t pc);
/* Re-read the maps and find the region symbol (and the dynamic loader's
 * notification hook) in files mapped since the last call.  New
 * addresses go to *found (entries first, then hooks; *nentries of them
 * are entries), to be armed with breakpoints. */
int pft_region_scan(struct pft_region *r, pid_t pid, uint64_t **found, size_t *nfound, size_t *nentries);
int pft_region_is_hook(const struct pft_region *r, uint64_t pc);
/* why an entry of the function was not armed (the first reason), or NULL */
const char *pft_region_refused(const struct pft_region *r);

/* trace_elf.c: ELF files mapped by the traced process. */
struct pft_elf {
	const uint8_t *p; /* the whole file, mapped read-only */
	size_t size;
};
struct pft_elf_sym {
	const char *name;
	uint64_t value, size;
	int global, weak; /* binding: STB_GLOBAL, STB_WEAK (else local) */
	unsigned shndx;	  /* its section */
};
/* fn returns nonzero to stop the walk (that value is returned) */
typedef int (*pft_elf_sym_fn)(void *arg, const struct pft_elf_sym *s);
/* 0, or PFLOPS_ENOENT: missing, unreadable, not a 64-bit ELF file */
int pft_elf_open(struct pft_elf *e, const char *path);
/* e->p, e->size hold a file (any bytes): 0 when its headers are in
 * bounds (what pft_elf_open checks; the fuzz harness's entry point) */
int pft_elf_check(const struct pft_elf *e);
void pft_elf_close(struct pft_elf *e);
/* defined functions (STT_FUNC, STT_GNU_IFUNC, value != 0) of the
 * .symtab sections (dynamic = 0) or the .dynsym ones (dynamic = 1) */
int pft_elf_funcs(const struct pft_elf *e, int dynamic, pft_elf_sym_fn fn, void *arg);
/* the page-aligned vaddr and file offset of the first PT_LOAD */
int pft_elf_first_load(const struct pft_elf *e, uint64_t *vaddr, uint64_t *off);
/* the PT_LOAD segments, *v malloc'ed: a file offset `off` in one of
 * them is link-time address (the symbols' address space)
 * off - seg.off + seg.vaddr */
struct pft_elf_seg {
	uint64_t off, filesz, vaddr;
	uint32_t flags;
};
int pft_elf_loads(const struct pft_elf *e, struct pft_elf_seg **v, size_t *n);
/* A defined function `sym` in a file (.symtab first, then .dynsym): its
 * st_value, the page-aligned vaddr/offset of the first PT_LOAD (for the
 * load bias), and its first bytes in the file.  why[0] != 0: its address
 * is not an instruction start, or cannot be shown to be one (not in an
 * executable segment, inside an instruction of an enclosing function,
 * not decodable): a sentence naming the file and the reason; no int3 may
 * go there. */
struct pft_elf_hit {
	uint64_t value, load_vaddr, load_off;
	uint8_t code[16]; /* the file's bytes at value */
	size_t ncode;
	char why[320];
};
/* a section by name: its file offset, size and link-time address */
int pft_elf_section(const struct pft_elf *e, const char *name, uint64_t *off, uint64_t *size, uint64_t *addr);
/* trace_cfi.c: the start of the .eh_frame entry (a function's unwind
 * information) that covers link-time address v and starts below it;
 * -1 when none does */
int pft_cfi_enclosing(const struct pft_elf *e, uint64_t v, uint64_t *start);
int pft_elf_lookup_e(const struct pft_elf *e, const char *path, const char *sym, struct pft_elf_hit *h);
int pft_elf_lookup(const char *path, const char *sym, struct pft_elf_hit *h);

/* trace_prof.c: per-block counts for opts.block.  Every count the engine
 * adds to the run's mix through a block is added to that block's acc
 * too (pft_count_block, the stepped path, the cache's harvest), so
 * the blocks' mixes add up to the run's exactly. */
struct pft_prof *pft_prof_new(const struct pflops_trace_opts *o);
void pft_prof_free(struct pft_prof *p);
/* a block just decoded in sp: its counters, and the mapping it lies in
 * (read now: mappings change and are gone when the process ends) */
int pft_prof_block(struct pft_space *sp, pid_t tid, struct pft_block *b);
/* instructions [0, n) of b ran (opmasks k, or NULL) */
void pft_prof_count(struct pft_block *b, uint32_t n, const uint64_t *k);
/* instruction idx of b ran (stepped) */
void pft_prof_one(struct pft_block *b, uint32_t idx, const uint64_t *k);
/* `times` complete unmasked runs of b (the code cache's counters) */
void pft_prof_times(struct pft_block *b, uint64_t times);
/* sp's counts are final (its process ended or exec'ed): report every
 * block of it that counted something to opts.block */
void pft_prof_report(struct pft_space *sp);

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

/* trace_arena.c: the code cache's memory in one traced process (the
 * slot layout: pft_arch.h). */
#define PFT_MAX_IDS 262144
#define PFT_MAX_SLOTS 256
#define PFT_SLOT_BYTES (PFT_SLOT_CNT + 8 * PFT_MAX_IDS)

struct pft_chunk {
	size_t index;  /* in its arena's list */
	uint64_t addr; /* in the tracee */
	uint8_t *mem;  /* the same bytes in the tracer */
	size_t size, used;
	uint64_t ibl;	   /* indirect-branch lookup routine */
	uint64_t ibl_miss; /* its int3s: target not cached */
	uint64_t ibl_exit; /*            --region left (stack above) */
	uint64_t ibl_end;
	struct pft_xblock **xb; /* blocks in address order */
	size_t nxb, xb_cap;
};

struct pft_arena {
	uint64_t table; /* tracee address of the lookup table */
	uint8_t *table_mem;
	uint64_t slots;			  /* tracee address of the counter slots */
	int slots_fd;			  /* tracer's descriptor of the slots memfd */
	uint8_t *slot_mem[PFT_MAX_SLOTS]; /* tracer mappings, lazily */
	uint8_t slot_used[PFT_MAX_SLOTS];
	struct pft_chunk **chunks; /* stable: blocks point to them */
	size_t nchunks;
	/* sized to the process's RLIMIT_AS (pft_arena_setup) */
	int nslots; /* threads with a slot at once */
	size_t max_chunks;
	uint64_t as_limit;	/* that limit (0: none) */
	int region;		/* lookup routine checks the region's stack */
	struct pft_block **ids; /* block of each counter id */
	uint32_t nids;
};

int pft_arena_setup(struct pft_tracer *T, struct pft_thr *t);
/* the address space the arena takes in its process (bytes) */
uint64_t pft_arena_as_bytes(const struct pft_arena *a);
void pft_arena_free(struct pft_arena *a);
/* a chunk with `need` free bytes reachable (rel32) from [lo, hi) */
struct pft_chunk *pft_arena_chunk(struct pft_tracer *T, struct pft_thr *t, uint64_t lo, uint64_t hi, size_t need);
struct pft_chunk *pft_arena_chunk_of(const struct pft_arena *a, uint64_t addr);
int pft_slot_alloc(struct pft_arena *a);
/* take slot number `slot` (its header written); returns it or -1 */
int pft_slot_init(struct pft_arena *a, int slot);
void pft_slot_free(struct pft_arena *a, int slot);
uint8_t *pft_slot_mem(struct pft_arena *a, int slot);
uint64_t pft_slot_addr(const struct pft_arena *a, int slot);
/* give forked child t its own copy of its parent's arena */
int pft_arena_fork(struct pft_tracer *T, struct pft_thr *t, const struct pft_arena *parent);
/* one tracee `syscall` instruction for pft_inject */
uint64_t pft_find_gadget(struct pft_space *sp, pid_t tid);

/* trace_xlate.c: translation of blocks into the cache. */
struct pft_xexit {
	uint64_t target;       /* original address it goes to */
	uint32_t site;	       /* offset of its rel32 in the block's code */
	uint32_t stub;	       /* offset of its 16-byte stub */
	struct pft_xblock *to; /* linked to this block, or NULL */
};

struct pft_xblock {
	struct pft_block *b;
	struct pft_chunk *ch;
	uint64_t addr; /* entry in the tracee */
	uint32_t size;
	uint32_t id;	   /* counter id */
	uint32_t inc_at;   /* instruction before which the count is
				 * incremented */
	uint32_t ovf_w;	   /* overflow weight subtracted there (0: none) */
	uint8_t ovf_cf;	   /* CF saved in the slot around the check */
	uint32_t ovf_pre;  /* weight run before the check */
	uint32_t ovf_stub; /* offset of its int3 (near a crossing) */
	struct pft_xexit ex[2];
	int nex;
	struct pft_xpoint *pt;
	int npt;
	struct {
		struct pft_xblock *from;
		int exit;
	} * in; /* links */
	int nin, in_cap;
	uint8_t dead;
};

/* Why blk cannot go to the cache, or PFT_NC_NONE. */
int pft_xlate_check(struct pft_space *sp, pid_t tid, struct pft_block *b);
/* The cache entry of b (translated now if needed); 0: not cacheable. */
uint64_t pft_xlate(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b);
/* Translate and link what b's copy goes to next (direct targets, the
 * return site of a call), breadth-first, up to budget blocks: each one
 * saves a stop at its first run. */
void pft_xlate_ahead(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, int budget);
/* A displaced copy of the instruction at addr followed by a jump back to
 * the next one (STOP mode past a region-entry int3); 0 if impossible. */
uint64_t pft_xlate_tramp(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, uint64_t *back);
/* the block and point of a tracee address in the cache */
struct pft_xblock *pft_xlate_find(const struct pft_arena *a, uint64_t addr, const struct pft_xpoint **pt);
void pft_xlate_link(struct pft_xblock *from, int exit, struct pft_xblock *to);
void pft_xlate_detach(struct pft_space *sp, struct pft_xblock *x);
void pft_table_insert(struct pft_arena *a, uint64_t orig, uint64_t entry);
/* trace_harvest.c: add the counts of one thread's slot to m (zero them
 * when `take`) */
uint64_t pft_harvest(struct pft_arena *a, int slot, struct pflops_mix *m, int take);
/* trace_space.c: sp (a forked child's new space) gets copies of parent's
 * cached blocks and of its arena's layout; pft_arena_fork then gives it
 * memory */
int pft_xlate_fork(struct pft_space *sp, const struct pft_space *parent);

/* trace_pub.c: counts the traced process reads itself (pflops_pub.h);
 * each does nothing unless T->pub is set.  idx < 0: instructions [0, n)
 * of b ran, else instruction idx alone. */
struct pfc_pub;
void pft_pub_count(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *b, uint32_t n, int idx,
		   const uint64_t *k);
void pft_pub_slot(struct pft_tracer *T, struct pft_thr *t);
void pft_pub_block(struct pft_tracer *T, const struct pft_space *sp, uint32_t id, const struct pft_block *b);
void pft_pub_forget(struct pft_tracer *T, pid_t tid);

/* trace_ovf.c: overflow of a thread's weighted count (opts.overflow).
 * Cached blocks subtract their weight from the slot's OVF word at their
 * counter increment and trap when it reaches 0, the guard (the most
 * weight a copy runs before its check, sp->ovf_maxpre) before the
 * crossing at the latest; the thread then runs on the stopping path,
 * single-stepping the block in which the crossing falls.  A block with
 * more than PFT_OVF_GUARD before its check stays on the stopping
 * path (PFT_NC_OVF). */
#define PFT_OVF_GUARD 1024 /* at most this weight before the check */
int pft_ovf_on(const struct pft_tracer *T);
void pft_ovf_thread(struct pft_tracer *T, struct pft_thr *t);
/* weights of b's FP entries (computed once); its full-run sum */
uint64_t pft_ovf_block(struct pft_tracer *T, struct pft_block *b);
/* instructions [lo, hi) of b ran (opmasks k or NULL) */
void pft_ovf_count(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *b, uint32_t lo, uint32_t hi,
		   const uint64_t *k);
/* t is about to run instruction idx of b (regs r): the callback if it
 * crosses */
void pft_ovf_at(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *b, uint32_t idx,
		const struct user_regs_struct *r);
/* t starts running b on the stopping path: 1 when the crossing falls in
 * this run (step it) */
int pft_ovf_near(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b);
/* t trapped at a copy's check: near a crossing */
void pft_ovf_trapped(struct pft_tracer *T, struct pft_thr *t);
/* t may enter the cache: its crossing is more than the guard away, or
 * it has run PFT_OVF_IDLE blocks without weight on the stopping path
 * (it left its FP code: the next weighted copy traps at its check, and
 * a crossing before that check is seen late) */
#define PFT_OVF_IDLE 256       /* when no copy can cross before its check */
#define PFT_OVF_IDLE_LONG 8192 /* otherwise */
int pft_ovf_cache_ok(const struct pft_tracer *T, const struct pft_thr *t);
/* the slot's OVF word: read back what t ran in the cache (leaving), or
 * set for a run there (entering) */
void pft_ovf_sync(struct pft_tracer *T, struct pft_thr *t, int entering);
/* a system call finished: the caller may restart t's count; 1: t
 * must leave the cache (its crossing is near) */
int pft_ovf_rearm(struct pft_tracer *T, struct pft_thr *t);
/* trace_wprot.c: code on writable pages, write-protected while cached
 * or decoded.  wprot_code guards the pages of a block just met (1: all
 * of its writable pages are guarded or it has none); wprot_check is
 * trace_xlate.c's test; wprot_fault takes a write fault on a guarded
 * page (1: it was ours and the thread goes on, 0: the program's, <0
 * error); forget/moved follow the program's own mprotect, munmap,
 * mmap(MAP_FIXED), mremap; restore puts the program's protections back
 * before a detach. */
struct pft_wpage;
int pft_wprot_code(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, const struct user_regs_struct *r);
int pft_wprot_check(struct pft_space *sp, pid_t tid, struct pft_block *b);
int pft_wprot_fault(struct pft_tracer *T, struct pft_thr *t, const siginfo_t *si);
void pft_wprot_forget(struct pft_space *sp, uint64_t lo, uint64_t hi, int prot);
void pft_wprot_moved(struct pft_tracer *T, struct pft_thr *t, uint64_t lo, uint64_t len, uint64_t dst);
void pft_wprot_restore(struct pft_tracer *T, struct pft_thr *t);
int pft_wprot_copy(struct pft_space *sp, const struct pft_space *parent);
void pft_wprot_free(struct pft_space *sp);
/* trace_signal.c: a thread faulting at a program instruction of a copy
 * goes back to that instruction (counted up to it); -1 if not one */
int pft_cache_fault_to_orig(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r);
/* a thread of the stopping path stopped at a program instruction: out of
 * a displaced first instruction (1: r changed), its block counted up to
 * that instruction */
int pft_stop_to_orig(struct pft_tracer *T, struct pft_thr *t, struct user_regs_struct *r);

/* trace_ptrace.c, for the attach loop (trace_attach.c) */
int pft_engine_handle(struct pft_tracer *T, pid_t tid, int status);
int pft_engine_pick(const struct pflops_trace_opts *o, int *engine, struct pflops_error *err);
void pft_engine_kill_all(struct pft_tracer *T);

#endif
