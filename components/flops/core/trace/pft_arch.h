/*
 * pft_arch.h: what the tracer's engine (core/trace/) asks of an
 * instruction set; core/trace/x86_64/ provides it (docs/trace-engine.md,
 * "Layout").  The arch code sees no engine structure: it reads and
 * writes the traced program's memory through struct pft_arch_mem, and
 * works on instructions (struct pft_insn), register sets and bytes.  The
 * engine includes no decoder or ISA header.
 */
#ifndef PFT_ARCH_H
#define PFT_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>
#include "pflops_trace.h"

/* The registers by their job (PFT_PC(r), PFT_SP(r), PFT_SYSNR(r), ...):
 * lvalues in struct user_regs_struct, one header per ISA. */
#if defined(__x86_64__)
#include "x86_64/pft_regs.h"
#else
#error "core/trace/ has no backend for this ISA (mk/<arch>/trace.mk builds trace_none.c instead)"
#endif

/* The traced program's memory, as the arch code reaches it: 0 or a
 * negative PFLOPS_E*. */
struct pft_arch_mem {
	void *ctx;
	int (*read64)(void *ctx, uint64_t addr, uint64_t *val);
	int (*write64)(void *ctx, uint64_t addr, uint64_t val);
};

/* Decoding (x86_64/trace_decode.c): pfc_decode (pflops_trace.h) fills
 * struct pft_insn: FLOP class, opmask use, how it ends a block. */

/* Where the indirect branch `term` at `at` reads its target from a slot
 * at a fixed address (x86_64: jmp/call *disp(%rip), a PLT entry), that
 * address; else 0.  For translation ahead: a guess of where it goes. */
uint64_t pft_arch_branch_slot(const struct pft_insn *term, uint64_t at);

/* Branch emulation (x86_64/trace_emul.c): run the block-ending branch
 * `term` at address `at` on regs (pc, stack, return address) without
 * letting the thread run it; 0 or negative. */
int pft_arch_emulate(const struct pft_insn *term, uint64_t at, const struct pft_arch_mem *m,
		     struct user_regs_struct *regs);

/* Single-stepping (x86_64/trace_emul.c).  flagsop: the instruction
 * whose first bytes are p (len of them) stores or loads the flags
 * (pushf, popf).  step_flags: the one at op was just stepped (r: the
 * registers after it): the program's own step flag *tf is put in what it
 * stored, or taken from what it loaded (the kernel hides the step's flag
 * from the registers, not from memory). */
int pft_arch_flagsop(const uint8_t *p, size_t len);
void pft_arch_step_flags(const uint8_t *op, size_t len, const struct user_regs_struct *r, const struct pft_arch_mem *m,
			 uint64_t *tf);

/* Relocation (x86_64/trace_reloc.c): what it takes to run one
 * instruction at another address. */
struct pft_reloc {
	uint8_t len;
	uint8_t rip_rel;     /* has a RIP-relative memory operand */
	uint8_t disp_off;    /* offset of its disp32 */
	uint8_t uses_gs;     /* %gs segment, rd/wrgsbase, loads of %gs */
	uint8_t pops_flags;  /* popf: may set EFLAGS.TF (trace_sys.c) */
	uint8_t kills_flags; /* writes OF SF ZF AF PF, reads none */
	uint8_t kills_cf;    /* the same, and CF too */
	uint8_t dead_reg;    /* a general register it overwrites whole
			      * without reading it, and it cannot fault
			      * (mov, lea, movzx from a register or an
			      * immediate): its number + 1, 0: none */
	uint8_t ind_modrm;   /* indirect jmp/call: offset of the ModRM */
	uint8_t ind_rex;     /* its REX byte (0 if none) */
	uint8_t ind_pfx[4];  /* its kept legacy prefixes */
	uint8_t ind_npfx;
	uint64_t rip_target; /* absolute address of the operand */
};
int pft_reloc_decode(const uint8_t *buf, size_t len, uint64_t addr, struct pft_reloc *r);
uint32_t pft_reloc_gprs(const uint8_t *buf, size_t len, int *stores);
/* pfc_decode and, when r is not NULL, pft_reloc_decode from one decode
 * (a block's decode keeps them for its translation: trace_blocks.c);
 * r->len is 0 where the relocation failed. */
int pft_arch_decode(const uint8_t *buf, size_t len, uint64_t addr, struct pft_insn *out, struct pft_reloc *r);

/* Breakpoints and the cache's base register (x86_64/trace_trap.c).
 * brk_bytes: the PFT_BRK_LEN bytes of a breakpoint (x86-64: int3), at
 * an address aligned to PFT_BRK_LEN (it fits in one aligned 8-byte
 * word).  trap_brk: where the breakpoint is that a thread trapped on,
 * its pc after the trap being pc (x86-64: pc - 1, the int3 has run; a
 * port whose trap leaves pc on the breakpoint returns pc).  A thread
 * stopped on a breakpoint, not yet trapped, passes it at pc +
 * PFT_BRK_LEN. */
const uint8_t *pft_arch_brk_bytes(void);
uint64_t pft_arch_trap_brk(uint64_t pc);
/* The program's own system calls on the register the cache borrows to
 * find the thread's slot (PFT_CACHE_BASE; x86-64: arch_prctl
 * ARCH_SET_GS and ARCH_GET_GS on %gs).  base_sys: system call nr may be
 * one (the engine watches it).  base_call: what the call nr with
 * arguments a did, once it returned: PFT_BASE_SET, the program's base
 * is now *v (the thread's register must go back to its slot);
 * PFT_BASE_GET, the program asked for it at address *v (the engine
 * writes the program's base there, not the slot's); else 0. */
enum { PFT_BASE_SET = 1, PFT_BASE_GET };
int pft_arch_base_sys(long nr);
int pft_arch_base_call(long nr, const uint64_t a[6], uint64_t *v);
/* What else the engine looks for (x86_64/trace_trap.c).  is_syscall:
 * the system call instruction the engine injects through (x86-64:
 * `syscall`) starts at p (n bytes there; trace_arena.c's gadget).
 * is_spin_hint: the CPU's spin-wait hint does (x86-64: pause; libgomp's
 * spin before it sleeps, trace_window.c).  foreign_mode: NULL when a
 * thread with registers r (just exec'd) runs the code this backend
 * decodes, else the rest of a sentence saying what it runs instead. */
int pft_arch_is_syscall(const uint8_t *p, size_t n);
int pft_arch_is_spin_hint(const uint8_t *p, size_t n);
const char *pft_arch_foreign_mode(const struct user_regs_struct *r);

/* The tracer's own wait (x86_64/trace_wait.c): wait4(pid, status,
 * options, NULL) as a raw system call, -errno on failure, that returns
 * -EINTR at once when *flag is set; a signal handler that sets *flag and
 * calls pft_arch_wait_wake with its ucontext ends the wait wherever the
 * signal lands (before the call: it is not made; in it: it ends with
 * -EINTR, even under SA_RESTART), so no wake-up is lost. */
long pft_arch_wait4(pid_t pid, int *status, int options, const volatile int *flag);
void pft_arch_wait_wake(void *ucontext);

/* Extended state (x86_64/trace_xstate.c): the opmask registers k0..k7
 * of a stopped thread (all 0 where the ISA has none in use). */
int pft_read_kregs(pid_t tid, uint64_t k[8]);

/* The per-thread slot the emitted code and the engine share (its base:
 * the thread's %gs base in the cache): scratch words, then counters. */
#define PFT_SLOT_RAX 0
#define PFT_SLOT_RCX 8
#define PFT_SLOT_RDX 16
#define PFT_SLOT_TGT 24
#define PFT_SLOT_TABLE 32 /* tracee address of the lookup table */
#define PFT_SLOT_RSP0 40  /* --region: %rsp at the region's entry */
#define PFT_SLOT_OVF \
	48		    /* overflow: what remains before the thread
				 * must leave the cache (trace_ovf.c) */
#define PFT_SLOT_CF 56	    /* overflow: CF kept across the check (byte) */
#define PFT_SLOT_SYSMAP 64  /* tracee address of the system-call map */
#define PFT_SLOT_NSYS 72    /* system calls run from the cache unstopped */
#define PFT_SLOT_R11 80	    /* the program's %r11 at a `syscall` */
#define PFT_SLOT_SCR 88	    /* a register a loop's count borrows */
#define PFT_SLOT_NSIGRET 96 /* rt_sigreturns sent into the cache unstopped */
#define PFT_SLOT_HDR 104    /* header bytes cleared at a slot's start */
#define PFT_SLOT_CNT 4096   /* counters: 8 bytes per block id */
/* lookup table buckets (+ overflow): 65,536 groups of 4 (one cache line),
 * a key's probe starting at its group's first (pft_table_bucket) */
#define PFT_TABLE_N 262144
#define PFT_TABLE_GROUP 4
#define PFT_TABLE_OVER 1024
#define PFT_TOMB 0x8000000000000001ULL /* removed table entry */
/* Translation requests without a stop (trace_freq.c, PFLOPS_TRACE_FUTEX):
 * an exit stub stores its offset in its chunk (Q_ID, never 0 nor 1, which
 * is a lookup miss's: the marker
 * that the thread may be in the request path until the tracer sees it
 * elsewhere), the chunk's request routine saves the registers a futex
 * call clobbers, posts Q_STATE = 1, rings its process's bell (a word in
 * slot 0, Q_BELL its address) and waits on Q_STATE (Q_SELF: its address)
 * until the tracer answers 2 with the address to go to in Q_TO. */
#define PFT_SLOT_Q_ID 128    /* u32: the stub's offset in its chunk */
#define PFT_SLOT_Q_STATE 132 /* u32 futex: 0 none, 1 asked, 2 answered */
#define PFT_SLOT_Q_CHUNK 136 /* the chunk of the stub (its address) */
#define PFT_SLOT_Q_TO 144    /* the answer: where the thread goes */
#define PFT_SLOT_Q_SELF 152  /* tracee address of this slot's Q_STATE */
#define PFT_SLOT_Q_BELL 160  /* tracee address of its process's bell */
#define PFT_SLOT_Q_REGS 168  /* rax rcx rdx rsi rdi r10 r11, saved */
#define PFT_SLOT_Q_TGT 224   /* a lookup miss's target */
#define PFT_SLOT_Q_END 232
#define PFT_SLOT_BELL 256 /* slot 0 only: the process's bell (u32) */

/* What each byte range of a block's copy in the cache stands for (the
 * translator writes them; signals inside a copy are placed by them). */
struct pft_xpoint {	   /* a range of the copy, for signals */
	uint32_t off : 24; /* (a copy is within a 4 MiB chunk) */
	uint32_t kind : 8; /* PFLOPS_XP_* */
	uint32_t arg;	   /* instruction index or exit number */
};

enum {
	PFT_XP_INC,	/* counter not yet incremented; at insn arg */
	PFT_XP_BODY,	/* at instruction arg, not yet executed */
	PFT_XP_RCX,	/* terminator, %rcx in the slot (fault: at
				 * insn arg; signal: roll forward) */
	PFT_XP_ROLL,	/* inside our code: roll forward */
	PFT_XP_DONE,	/* block done; at exit arg's target */
	PFT_XP_DATA,	/* literals: never executed */
	PFT_XP_OVF,	/* overflow word lowered, counter not yet
				 * incremented; at insn arg */
	PFT_XP_OVFSTUB, /* near an overflow: the same, trapped */
	PFT_XP_SYS,	/* at the system call instruction (insn arg),
				 * not yet run; the registers the look-up
				 * before it borrows in the slot */
	PFT_XP_INC2,	/* an unrolled loop's second half: as INC, and
				 * the first half's run not counted either */
	PFT_XP_OWED,	/* as DONE, one run not yet counted (an
				 * unrolled loop's first half left) */
};

/* Code emission for a block's copy (x86_64/trace_gen.c).  The engine
 * (trace_xlate.c) decides what the copy does: its instructions, where
 * the count is taken, the overflow check, its exits and their targets,
 * whether its system call looks up the map first; the arch writes the
 * bytes, describes them (struct pft_xpoint) and says where the parts the
 * engine patches or traps on landed.  The instructions are the
 * program's, relocated (struct pft_reloc); the branch at the end is
 * rewritten: exit 0 is where it goes when taken (a system call: the next
 * instruction), exit 1 where it falls through; each exit leaves through
 * a trap stub that pft_arch_link can re-aim.  Indirect branches and
 * returns go to the chunk's lookup routine (pft_ibl_emit). */
struct pft_gen_insn {
	struct pft_reloc r;
	const uint8_t *bytes; /* as the program has them */
	uint64_t addr;	      /* where the program has them */
};

#define PFT_GEN_EXT 32 /* rel32s out of a copy a move can fix (more: made again) */
struct pft_gen {
	/* in: the block (n instructions, the last its branch: term) */
	const struct pft_gen_insn *ii;
	uint32_t n;
	const struct pft_insn *term;
	uint64_t next;	   /* the address after the block */
	uint32_t cnt;	   /* its counter's offset in the slot */
	uint8_t inc_first; /* count first, changing no flags, or ... */
	uint32_t inc_at;   /* ... right before instruction inc_at, which
			    * overwrites the flags the count changes, ... */
	uint8_t inc_reg;   /* ... or (number + 1) the register it
			    * overwrites (pft_reloc.dead_reg), borrowed
			    * by a flag-free count (0: incq) */
	uint8_t cnt_base;  /* the counter's load through a zeroed base
			    * register (a loop's copy: docs/trace-engine.md,
			    * "The counter's load"); the incq form borrows
			    * register cnt_base - 1, which the block leaves
			    * alone */
	uint8_t unroll;	   /* a one-block jcc loop, emitted twice: the
			    * first half uncounted, the second adding 2,
			    * the first's way out adding 1 (flag-free;
			    * docs/trace-engine.md, "Cheaper counting") */
	uint32_t ovf_w;	   /* overflow: lower the slot's word by this
			    * before the count (0: no check) ... */
	uint8_t ovf_cf;	   /* ... and keep the carry flag around it */
	uint8_t sysfast;   /* system calls look up the slot's map first:
			    * run at once, or trap before and after */
	uint8_t no_count;  /* no count at all (a masked block: the tracer
			    * counts each run at the trap that ends it; a
			    * block without FP: not counted);
			    * inc_* and ovf_w unused */
	uint32_t ovf_near; /* no_count, overflow: trap first (ovf_stub)
			    * when the slot's word is at most this,
			    * lowering nothing and changing no flags (0: no
			    * check) */
	uint8_t ind_trap;  /* an indirect branch or return traps (out:
			    * ind_trap_at) instead of going to the lookup
			    * routine, the registers as at its miss */
	int nex;	   /* exits (0 for an indirect branch or return) */
	/* in: where the copy goes: its hot part (what runs) at base, or
	 * up to 7 bytes later (lead), its cold part (exit stubs, traps,
	 * literals: apart, so that hot copies lie close together) in 8-byte
	 * words right below cold_top */
	uint8_t *buf; /* the tracer's buffer (cap bytes) for the hot part */
	size_t cap;
	uint64_t base; /* its tracee address */
	uint8_t *cbuf; /* the tracer's buffer (ccap bytes) for the cold part */
	size_t ccap;
	uint64_t cold_top; /* 8-aligned */
	uint64_t ibl;	   /* its chunk's lookup routine ... */
	uint64_t ibl_miss; /* ... and the trap of its miss: with one, an
			    * indirect branch probes the table in its
			    * copy, the routine's miss its way out (0: the
			    * routine does it all, a --region's) */
	uint64_t req;	   /* freq: its chunk's request routine ... */
	uint64_t chunk;	   /* ... and the chunk's address */
	uint8_t freq;	   /* exit stubs ask the tracer through a futex
			    * first (PFT_FSTUB_*), int3 when it says so */
	uint8_t room;	   /* the previous copy's last jump goes here:
			    * a lead under room lets its link be a nop
			    * (pft_arch_link); 0: it does not */
	/* out */
	uint32_t lead;	       /* the entry is base + lead (bytes before: unused) */
	size_t len;	       /* hot bytes from the entry */
	size_t clen;	       /* cold bytes, at cold_top - clen */
	struct pft_xpoint *pt; /* offsets from the entry (the cold part's
				* beyond); in and out: malloc'd, pt_cap of
				* them, grown as needed, the caller's to keep
				* for its next copy and to free */
	int npt, pt_cap;
	uint32_t site[2], stub[2]; /* each exit's patch site and stub */
	uint32_t ovf_stub;	   /* the overflow check's trap */
	uint32_t ind_trap_at;	   /* ind_trap's trap, 0: none */
	uint32_t sys_trap;	   /* the trap before its system call, 0: none */
	uint32_t sys_trap2;	   /* the one after it, 0: none */
	uint32_t lookup;	   /* its look-up of the table (trace_gen.c), 0: none */
	/* (the arch's own: what moving the copy on changes, trace_gen.c) */
	uint32_t ext[PFT_GEN_EXT];
	int n_ext, cold_pt;
};
enum {
	PFT_GEN_OK = 0,
	PFT_GEN_MODE,  /* a branch or system call the copy cannot take */
	PFT_GEN_REACH, /* a target or operand out of reach, or too long */
};
int pft_arch_gen_block(struct pft_gen *g);
/* A displaced copy of the one instruction in (relocated) at base (buf:
 * the tracer's, cap bytes), then a jump back to the instruction after
 * it; *back: that jump's address.  The bytes used, 0 if impossible. */
size_t pft_arch_gen_tramp(uint8_t *buf, size_t cap, uint64_t base, const struct pft_gen_insn *in, uint64_t *back);

/* Code emission (x86_64/trace_ibl.c): the start of a code-cache chunk,
 * written to mem (its tracee address addr): a system call instruction
 * (injection), then the indirect-branch lookup routine, which probes the
 * lookup table from bucket pft_table_bucket(target) on.
 * Returns the bytes used; *out: where its parts are. */
struct pft_ibl {
	uint64_t entry; /* the lookup routine */
	uint64_t miss;	/* its traps: target not cached */
	uint64_t exit;	/*            --region left (stack above) */
	uint64_t end;
	/* the request routines (req asked), else 0: an exit's ... */
	uint64_t req;	    /* ... */
	uint64_t req_saved; /* from here on the registers are in the slot */
	uint64_t mreq;	    /* a lookup miss's (from miss) */
	uint64_t mreq_saved;
	uint64_t mtrap_pre; /* the old miss state back, then ... */
	uint64_t mtrap;	    /* ... its int3 */
	uint64_t req_end;
};
size_t pft_ibl_emit(uint8_t *mem, uint64_t addr, int region, int req, struct pft_ibl *out);
/* A thread stopped in a request routine past its saves (req_saved,
 * mreq_saved): the registers it borrows, back from the slot (miss: those
 * the lookup routine had not saved); _target: %rax the miss's target, as
 * at the old miss's int3. */
void pft_arch_req_restore(struct user_regs_struct *r, const uint8_t *slot, int miss);
void pft_arch_req_target(struct user_regs_struct *r, const uint8_t *slot);
/* Request stubs (gen.freq): each exit stub is PFT_FSTUB_BYTES long; its
 * int3, where the old way goes on, at PFT_FSTUB_TRAP; the request itself
 * from PFT_FSTUB_REQ on (before that the stub's far jump). */
#define PFT_STUB_BYTES 16
#define PFT_FSTUB_BYTES 40
#define PFT_FSTUB_REQ 16
#define PFT_FSTUB_TRAP 33
uint32_t pft_table_hash(uint64_t orig);
/* the bucket orig's probe starts at: its group's first */
size_t pft_table_bucket(uint64_t orig);
/* A thread stopped inside a probe of the lookup table (pft_emit_probe)
 * with registers r: does it hold an address in [lo, hi) (the table's,
 * loaded from its slot, or a bucket's)? */
int pft_arch_probe_holds(const struct user_regs_struct *r, uint64_t lo, uint64_t hi);
/* Links (x86_64/trace_ibl.c): point a copy's exit, whose branch
 * displacement is at `site` (mem: the tracer's view of it), at `to`;
 * through its stub's far jump (stub, stub_mem) when `to` is out of
 * reach; a jump to a copy that starts right after it (at most 3 dead
 * bytes between) becomes a nop, where one word holds it: returns 1 then,
 * else 0.  Unlink: back to the stub. */
int pft_arch_link(uint8_t *site_mem, uint64_t site, uint8_t *stub_mem, uint64_t stub, uint64_t to);
void pft_arch_unlink(uint8_t *site_mem, uint64_t site, uint64_t stub);
/* The registers the emitted code borrows, given back to a thread stopped
 * in it (x86_64/trace_ibl.c; slot: the thread's slot in the tracer):
 * at the lookup routine's traps, pc becomes the target it looked up;
 * in a copy's terminator (PFT_XP_RCX), the one it keeps in the slot; past
 * a copy's system call instruction ending at code[off], what that
 * instruction sets as it returns to the program (the copy sets it next). */
void pft_arch_ibl_restore(struct user_regs_struct *r, const uint8_t *slot);
void pft_arch_term_restore(struct user_regs_struct *r, const uint8_t *slot);
void pft_arch_syscall_done(const uint8_t *code, uint32_t off, struct user_regs_struct *r);
/* ... and before a copy's system call instruction (PFT_XP_SYS), those
 * the look-up of the number borrowed (trace_sys.c) */
void pft_arch_sys_restore(struct user_regs_struct *r, const uint8_t *slot);

#endif
