/*
 * trace_gen.c: the x86-64 bytes of a basic block's copy in the code
 * cache, as the engine planned it (struct pft_gen; trace_xlate.c).
 *
 * The copy runs the block's own instructions (RIP-relative operands
 * re-aimed at the same data) and adds one to the block's counter in the
 * thread's slot: `incq %gs:CNT+8*id`, placed right before an instruction
 * that rewrites the flags it changes, or, when the block has none, a
 * flag-free load/lea/store through a register that an instruction of the
 * block overwrites (right before it), else through %rax saved in the
 * slot's scratch word.  A one-block loop's copy (cnt_base) loads its
 * counter through a base register set to 0: on Zen 5 a load from
 * %gs:disp32 waits for the store to the same word before it, which made
 * the counter a chain of about 1.6 ns a turn.  (The incq form borrows a
 * register the block leaves alone, kept in the slot meanwhile.)  A
 * one-block jcc loop's copy is the block twice, one count (adding 2) per
 * two runs (unroll, emit_unrolled): on an Intel Xeon the counter's
 * chain through memory kept such loops at about 2.3 ns a run.  The
 * branch at its end becomes:
 *
 *   jcc/jmp/call rel   jumps to 16-byte exit stubs (int3: "not yet
 *                      translated"); once the target is translated the
 *                      jump is aimed at its copy (linked), directly when
 *                      within a rel32, else through the stub's far jump.
 *                      A call pushes the original return address.
 *   jmp/call/ret ind   the target goes to %rcx and the copy looks up
 *                      its copy in a hash table (crc32 of the address),
 *                      as the chunk's lookup routine does, on to the
 *                      routine's trap when it is not there (under
 *                      --region: the routine itself, which checks the
 *                      stack first).  Nothing there changes the flags:
 *                      compares are `not; lea; jrcxz`.
 *   loop, jrcxz        the same rel8 instruction over two exit jumps.
 *   syscall            itself, then an exit to the next instruction;
 *                      with fast system calls (trace_sys.c) a look-up
 *                      first: run at once, or trap to the tracer.
 *
 * A copy with no_count has no count: a block with no FP instruction
 * (trace_xlate.c) is not counted at all; for a masked block the tracer counts each
 * run at the trap that ends it, an exit stub never linked or, for an
 * indirect branch, an int3 in the lookup routine's miss state
 * (ind_trap); under overflow it first checks, flag-free, how far the
 * next crossing is (ovf_near).
 *
 * Layout: what runs (the hot part) lies contiguous, copy after copy;
 * what runs only until an exit is linked, or never (exit stubs, the
 * overflow trap, the return-address literal: the cold part), lies apart,
 * at the end of the chunk (docs/trace-engine.md, "Layout of a copy").
 * No padding runs: a copy whose patched rel32s would cross an 8-byte
 * word starts a few bytes later instead (rel_ok, lead_for).
 *
 * Every byte range of a copy is described (struct pft_xpoint) so that
 * a thread stopped anywhere in it by a signal can be put back where it
 * is in the original program, its count corrected to what really ran.
 * Links and the lookup routine: trace_ibl.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_emit.h"

static void emit_body(struct emit *e, const struct pft_gen_insn *ii)
{
	size_t at = e->n;

	put(e, ii->bytes, ii->r.len);
	if (ii->r.rip_rel && !e->bad) {
		int64_t d = (int64_t)(ii->r.rip_target - (e->base + at + ii->r.len));
		int32_t d32 = (int32_t)d;
		if (!fits32(d))
			e->bad = 1;
		memcpy(e->buf + at + ii->r.disp_off, &d32, 4);
		ext_rel(e, at + ii->r.disp_off);
	}
}

/* mov <the indirect branch's operand>, %rcx */
static void emit_ind_operand(struct emit *e, const struct pft_gen_insn *ii)
{
	const struct pft_reloc *r = &ii->r;
	size_t rest = r->len - r->ind_modrm - 1, at;
	uint8_t modrm = ii->bytes[r->ind_modrm];

	put(e, r->ind_pfx, r->ind_npfx);
	put8(e, (uint8_t)(0x48 | (r->ind_rex & 3)));
	put8(e, 0x8b);
	put8(e, (uint8_t)((modrm & 0xc7) | (RCX << 3)));
	at = e->n;
	put(e, ii->bytes + r->ind_modrm + 1, rest);
	if (r->rip_rel && !e->bad) {
		size_t doff = at + (r->disp_off - r->ind_modrm - 1);
		int64_t d = (int64_t)(r->rip_target - here(e));
		int32_t d32 = (int32_t)d;
		if (!fits32(d))
			e->bad = 1;
		memcpy(e->buf + doff, &d32, 4);
		ext_rel(e, doff);
	}
}

struct exit_fix {
	size_t site;
	int exit;
};

static void emit_exit_jmp(struct emit *e, struct exit_fix *f, int *nf, int k)
{
	align_rel(e, 1);
	put8(e, 0xe9);
	f[*nf] = (struct exit_fix){ e->n, k };
	(*nf)++;
	put32(e, 0);
}

/* the block is `mov $15, %eax` (or %rax), `syscall`: rt_sigreturn
 * (glibc's and musl's __restore_rt) */
static int sets_sigreturn(const struct pft_gen *g)
{
	static const uint8_t movq[] = { 0x48, 0xc7, 0xc0, 15, 0, 0, 0 }, movl[] = { 0xb8, 15, 0, 0, 0 };
	const struct pft_gen_insn *m = g->n >= 2 ? &g->ii[g->n - 2] : NULL;

	return m && ((m->r.len == sizeof movq && !memcmp(m->bytes, movq, sizeof movq)) ||
		     (m->r.len == sizeof movl && !memcmp(m->bytes, movl, sizeof movl)));
}

/*
 * rt_sigreturn straight back into the cache, without a stop: the
 * address the signal frame returns to (the program's: signals are
 * delivered at original addresses) is looked up in the chunk's table as
 * the lookup routine does, and on a hit its copy's address is written in
 * the frame, which the call consumes (the program never sees it).  A
 * miss, or EFLAGS.TF set in the frame (the program steps itself: the
 * stopping path), goes on to the watched call's trap (trace_signal.c's
 * fast_sigreturn, which enters the target in the table for next time).
 * Before the look-up (PFT_XP_SYS) only %rcx and %r11 are used, the
 * flags kept: a fault reading the frame is the program's, at its
 * `syscall`.  The look-up borrows %rdx (PFT_XP_ROLL: a signal there is
 * held until the call is made, or the trap reached); %rax stays 15.
 *
 *	movzbl FLAGS+1(%rsp), %ecx; lea tf(%rip), %r11
 *	movzbl (%r11,%rcx), %ecx; jrcxz 1f	TF (bit 8) set?
 *	jmp 3f
 *  1:	mov PC(%rsp), %r11			the key
 *	mov %rdx, %gs:RDX; <the routine's probe of %r11, %rcx the entry>
 *  2:	mov %gs:RDX, %rdx; jmp 3f		(a miss)
 *	mov %rcx, PC(%rsp); mov %gs:RDX, %rdx; NSIGRET += 1
 *	syscall					(a hit)
 *  tf:	256 bytes, i & 1 (never run)
 *  3:	the watched call's look-up (its trap)
 */
static void emit_sigreturn(struct emit *e, struct pft_gen *g, uint32_t idx)
{
	size_t tf_rel, j_fast, j_tf, j_miss, j_hit, j_slow;

	g->lookup = (uint32_t)e->n;
	put(e, (uint8_t[]){ 0x0f, 0xb6, 0x8c, 0x24 }, 4); /* movzbl FLAGS+1(%rsp),%ecx */
	put32(e, PFT_SIGFRAME_FLAGS + 1);
	put(e, (uint8_t[]){ 0x4c, 0x8d, 0x1d }, 3); /* lea tf(%rip),%r11 */
	tf_rel = e->n;
	put32(e, 0);
	put(e, (uint8_t[]){ 0x41, 0x0f, 0xb6, 0x0c, 0x0b }, 5); /* movzbl (%r11,%rcx),%ecx */
	put(e, (uint8_t[]){ 0xe3, 0x00 }, 2);			/* jrcxz 1f */
	j_fast = e->n - 1;
	put8(e, 0xe9); /* jmp 3f */
	j_tf = e->n;
	put32(e, 0);
	e->buf[j_fast] = (uint8_t)(e->n - (j_fast + 1));
	put(e, (uint8_t[]){ 0x4c, 0x8b, 0x9c, 0x24 }, 4); /* mov PC(%rsp),%r11 */
	put32(e, PFT_SIGFRAME_PC);
	point(e, PFT_XP_ROLL, 0);
	gs_mov(e, 1, RDX, PFT_SLOT_RDX);
	pft_emit_probe(e, R11, &j_miss, &j_hit);
	e->buf[j_miss] = (uint8_t)(e->n - (j_miss + 1));
	gs_mov(e, 0, RDX, PFT_SLOT_RDX);
	put8(e, 0xe9); /* jmp 3f */
	j_slow = e->n;
	put32(e, 0);
	e->buf[j_hit] = (uint8_t)(e->n - (j_hit + 1));
	put(e, (uint8_t[]){ 0x48, 0x8b, 0x4a, 0x08 }, 4); /* mov 8(%rdx),%rcx */
	gs_mov(e, 0, RDX, PFT_SLOT_RDX);
	point(e, PFT_XP_SYS, idx);			  /* (a fault writing the frame: at the call) */
	put(e, (uint8_t[]){ 0x48, 0x89, 0x8c, 0x24 }, 4); /* mov %rcx,PC(%rsp) */
	put32(e, PFT_SIGFRAME_PC);
	point(e, PFT_XP_ROLL, 0);
	gs_mov(e, 0, RCX, PFT_SLOT_NSIGRET);
	put(e, (uint8_t[]){ 0x48, 0x8d, 0x49, 0x01 }, 4); /* lea 1(%rcx),%rcx */
	gs_mov(e, 1, RCX, PFT_SLOT_NSIGRET);
	put(e, (uint8_t[]){ 0x0f, 0x05 }, 2); /* syscall: into the copy */
	point(e, PFT_XP_DATA, 0);
	if (!e->bad) {
		int32_t rel = (int32_t)(e->n - (tf_rel + 4));
		memcpy(e->buf + tf_rel, &rel, 4);
	}
	for (int i = 0; i < 256; i++)
		put8(e, (uint8_t)(i & 1));
	point(e, PFT_XP_SYS, idx);
	if (!e->bad) {
		int32_t rel = (int32_t)(e->n - (j_tf + 4)), rel2 = (int32_t)(e->n - (j_slow + 4));
		memcpy(e->buf + j_tf, &rel, 4);
		memcpy(e->buf + j_slow, &rel2, 4);
	}
}

/*
 * A block's `syscall` when system calls run from the cache (trace_sys.c):
 *
 *	mov %rcx, %gs:RCX; mov %r11, %gs:R11	the program's (signals)
 *	movzwl %ax, %ecx
 *	mov %gs:SYSMAP, %r11
 *	movzbl (%r11,%rcx), %ecx		watched?
 *	jrcxz 1f
 *	int3					yes: the tracer does the
 *	syscall					entry's work, the call
 *	int3					runs, then the exit's
 *  2:	mov $next, %rcx				as the program sees it
 *	jmp <exit>
 *  1:	mov %gs:NSYS, %rcx; lea 1(%rcx), %rcx; mov %rcx, %gs:NSYS
 *	syscall					no: at once
 *	jmp 2b
 *
 * No flag changes (the kernel saves them in %r11).  %rcx and %r11 are
 * the kernel's to overwrite, but a signal before the `syscall` sees the
 * program's, from the slot (PFT_XP_SYS).  A restarted call (the kernel
 * backs rip up by 2) runs the same `syscall` again; a watched one then
 * meets the second int3 as the first run would have.
 */
static void emit_fast_syscall(struct emit *e, struct pft_gen *g, uint32_t idx, struct exit_fix *fix, int *nf)
{
	size_t j_native, after;

	gs_mov(e, 1, RCX, PFT_SLOT_RCX);
	gs_mov(e, 1, R11, PFT_SLOT_R11);
	point(e, PFT_XP_SYS, idx);
	if (sets_sigreturn(g))
		emit_sigreturn(e, g, idx);
	put(e, (uint8_t[]){ 0x0f, 0xb7, 0xc8 }, 3); /* movzwl %ax,%ecx */
	gs_mov(e, 0, R11, PFT_SLOT_SYSMAP);
	put(e, (uint8_t[]){ 0x41, 0x0f, 0xb6, 0x0c, 0x0b }, 5); /* movzbl (%r11,%rcx),%ecx */
	put(e, (uint8_t[]){ 0xe3, 0x00 }, 2);			/* jrcxz 1f */
	j_native = e->n - 1;
	g->sys_trap = (uint32_t)e->n;
	put(e, (uint8_t[]){ 0xcc, 0x0f, 0x05 }, 3); /* int3; syscall */
	point(e, PFT_XP_DONE, 0);
	g->sys_trap2 = (uint32_t)e->n;
	put8(e, 0xcc);
	after = e->n;
	put(e, (uint8_t[]){ 0x48, 0xb9 }, 2); /* mov $next, %rcx */
	put64(e, g->next);
	emit_exit_jmp(e, fix, nf, 0);
	point(e, PFT_XP_SYS, idx);
	if (e->n - (j_native + 1) > 127 || e->bad) {
		e->bad = 1;
		return;
	}
	e->buf[j_native] = (uint8_t)(e->n - (j_native + 1));
	gs_mov(e, 0, RCX, PFT_SLOT_NSYS);
	put(e, (uint8_t[]){ 0x48, 0x8d, 0x49, 0x01 }, 4); /* lea 1(%rcx),%rcx */
	gs_mov(e, 1, RCX, PFT_SLOT_NSYS);
	put(e, (uint8_t[]){ 0x0f, 0x05 }, 2);
	point(e, PFT_XP_DONE, 0);
	put8(e, 0xeb); /* jmp 2b */
	put8(e, (uint8_t)(int8_t)((int64_t)after - (int64_t)(e->n + 1)));
}

/* The count through the register r (number) instruction i overwrites,
 * changing no flags: mov %gs:CNT, %r; lea 1(%r), %r; mov %r, %gs:CNT.
 * From the load until i has run, r holds no value of the program's: a
 * signal there is held until i is done (PFT_XP_ROLL; i cannot fault),
 * so no handler sees r's old value replaced, nor changes it in vain. */
static void emit_count_reg(struct emit *e, const struct pft_gen *g, uint32_t i, uint8_t step)
{
	int r = g->inc_reg - 1;
	uint8_t rex = (uint8_t)(0x48 | (r >= 8 ? 5 : 0)), rm = (uint8_t)(0x40 | ((r & 7) << 3) | (r & 7));

	point(e, PFT_XP_INC, i);
	if (g->cnt_base) { /* the load through r zeroed (a loop's copy) */
		zero_reg(e, r);
		point(e, PFT_XP_ROLL, i);
		gs_mov_b(e, 0, r, r, g->cnt);
	} else {
		gs_mov(e, 0, r, g->cnt);
		point(e, PFT_XP_ROLL, i);
	}
	put(e, (uint8_t[]){ rex, 0x8d, rm }, 3); /* lea 1(%r),%r */
	if ((r & 7) == 4)
		put8(e, 0x24); /* %r12: a SIB byte */
	put8(e, step);
	gs_mov(e, 1, r, g->cnt);
}

/* the count (step runs: 1, or 2 in an unrolled loop's second half,
 * where `addq $2` replaces `incq` only before an instruction that
 * rewrites CF too), and the overflow check before it, ahead of
 * instruction i */
static void emit_count(struct emit *e, const struct pft_gen *g, uint32_t i, size_t *ovf_site, uint8_t step)
{
	uint8_t op = step == 1 ? 0xff : 0x83; /* incq, or addq $imm8 */

	if (g->inc_reg) {
		emit_count_reg(e, g, i, step);
		return;
	}
	point(e, PFT_XP_INC, i);
	if (g->ovf_w) {
		/* [setc %gs:CF] subq $W, %gs:OVF; jbe stub
		 * (taken when OVF <= W: near a crossing)
		 * [bt $0, %gs:CF] */
		if (g->ovf_cf) {
			put(e, (uint8_t[]){ 0x65, 0x0f, 0x92, 0x04, 0x25 }, 5);
			put32(e, PFT_SLOT_CF);
		}
		put(e, (uint8_t[]){ 0x65, 0x48, 0x81, 0x2c, 0x25 }, 5);
		put32(e, PFT_SLOT_OVF);
		put32(e, g->ovf_w);
		point(e, PFT_XP_OVF, i);
		put(e, (uint8_t[]){ 0x0f, 0x86 }, 2);
		*ovf_site = e->n;
		put32(e, 0);
		if (g->ovf_cf) {
			put(e, (uint8_t[]){ 0x65, 0x0f, 0xba, 0x24, 0x25 }, 5);
			put32(e, PFT_SLOT_CF);
			put8(e, 0);
		}
	}
	if (g->cnt_base) {
		/* mov %r, %gs:SCR; mov $0, %r; incq %gs:CNT(%r);
		 * mov %gs:SCR(%r), %r: both loads through a base register
		 * the block leaves alone (the program's %r held by a signal
		 * that comes before it is back: rolled forward) */
		int r = g->cnt_base - 1;
		gs_mov(e, 1, r, PFT_SLOT_SCR);
		point(e, PFT_XP_ROLL, i);
		zero_reg(e, r);
		put(e, (uint8_t[]){ 0x65, (uint8_t)(0x48 | (r >= 8 ? 1 : 0)), op, (uint8_t)(0x80 | (r & 7)) }, 4);
		if ((r & 7) == 4)
			put8(e, 0x24); /* %r12: a SIB byte */
		put32(e, g->cnt);
		if (step != 1)
			put8(e, step);
		gs_mov_b(e, 0, r, r, PFT_SLOT_SCR);
		return;
	}
	put(e, (uint8_t[]){ 0x65, 0x48, op, 0x04, 0x25 }, 5);
	put32(e, g->cnt);
	if (step != 1)
		put8(e, step);
}

/* The target in %rcx, the program's %rcx in the slot: on to its copy
 * through the lookup table, probed here as the lookup routine does (one
 * indirect jump per branch of the program, not one for all: the
 * predictor tells them apart, as it does the program's own; recursive
 * calls took 22% less CPU, python3's and node's loops 10 to 12%), on
 * to the routine's miss if it is not there.  Under --region (no
 * g->ibl_miss) to the routine itself, which checks the stack first.
 * With ind_trap (a masked copy) a trap in the routine's miss state
 * instead, so the engine resolves it as a miss. */
static void emit_ind_exit(struct emit *e, struct pft_gen *g)
{
	size_t j_miss, j_hit;

	if (!g->ind_trap && !g->ibl_miss) {
		put8(e, 0xe9);
		ext_rel(e, e->n);
		put32(e, (uint32_t)(int32_t)(g->ibl - (here(e) + 4)));
		return;
	}
	if (!g->ind_trap)
		g->lookup = (uint32_t)e->n;
	pft_emit_miss_state(e);
	if (g->ind_trap) {
		g->ind_trap_at = (uint32_t)e->n;
		put8(e, 0xcc);
		return;
	}
	pft_emit_probe(e, RAX, &j_miss, &j_hit);
	e->buf[j_hit] = (uint8_t)(e->n - (j_hit + 1));
	pft_emit_hit(e);
	e->buf[j_miss] = (uint8_t)(e->n - (j_miss + 1));
	put8(e, 0xe9);
	ext_rel(e, e->n);
	put32(e, (uint32_t)(int32_t)(g->ibl_miss - (here(e) + 4)));
}

/*
 * ovf_near (a masked copy under overflow, counted at its end): a trap
 * first when the slot's overflow word is at most W, lowering nothing and
 * leaving the flags alone: OVF - W - 1 has the top byte 0xff just then
 * (the word is at most 2^62), and only that byte + 1 has a zero low byte.
 *
 *	mov %rcx, %gs:RCX
 *	mov %gs:OVF, %rcx; lea -(W+1)(%rcx), %rcx
 *	bswap %rcx; movzbl %cl, %ecx; lea 1(%rcx), %ecx; movzbl %cl, %ecx
 *	jrcxz 1f
 *	mov %gs:RCX, %rcx; jmp 2f
 *  1:	mov %gs:RCX, %rcx; int3		(PFT_XP_OVFSTUB, the block not begun)
 *  2:	the block
 */
static void emit_near_check(struct emit *e, struct pft_gen *g)
{
	size_t j_near, j_on;

	point(e, PFT_XP_BODY, 0);
	gs_mov(e, 1, RCX, PFT_SLOT_RCX);
	point(e, PFT_XP_ROLL, 0);
	gs_mov(e, 0, RCX, PFT_SLOT_OVF);
	put(e, (uint8_t[]){ 0x48, 0x8d, 0x89 }, 3);
	put32(e, (uint32_t)(-(int64_t)g->ovf_near - 1));
	put(e, (uint8_t[]){ 0x48, 0x0f, 0xc9 }, 3); /* bswap %rcx */
	put(e, (uint8_t[]){ 0x0f, 0xb6, 0xc9 }, 3); /* movzbl %cl,%ecx */
	put(e, (uint8_t[]){ 0x8d, 0x49, 0x01 }, 3); /* lea 1(%rcx),%ecx */
	put(e, (uint8_t[]){ 0x0f, 0xb6, 0xc9 }, 3);
	put(e, (uint8_t[]){ 0xe3, 0x00 }, 2); /* jrcxz near */
	j_near = e->n - 1;
	gs_mov(e, 0, RCX, PFT_SLOT_RCX);
	put(e, (uint8_t[]){ 0xeb, 0x00 }, 2);
	j_on = e->n - 1;
	e->buf[j_near] = (uint8_t)(e->n - (j_near + 1));
	gs_mov(e, 0, RCX, PFT_SLOT_RCX);
	point(e, PFT_XP_OVFSTUB, 0);
	g->ovf_stub = (uint32_t)e->n;
	put8(e, 0xcc);
	e->buf[j_on] = (uint8_t)(e->n - (j_on + 1));
}

/* the block's branch; PFT_GEN_MODE where the copy cannot take it */
static int emit_term(struct emit *e, struct pft_gen *g, struct exit_fix *fix, int *nf, size_t *lit_fix)
{
	const struct pft_insn *t = g->term;
	const struct pft_gen_insn *ti = &g->ii[g->n - 1];

	switch (t->term) {
	case PFT_T_JCC:
		align_rel(e, 2);
		put8(e, 0x0f);
		put8(e, (uint8_t)(0x80 | t->cc));
		fix[(*nf)++] = (struct exit_fix){ e->n, 0 };
		put32(e, 0);
		point(e, PFT_XP_DONE, 1);
		emit_exit_jmp(e, fix, nf, 1);
		return 0;
	case PFT_T_LOOP:
	case PFT_T_JRCXZ: {
		size_t loop_rel;
		put(e, ti->bytes, t->len - 1u); /* prefixes + opcode */
		loop_rel = e->n;
		put8(e, 0);
		point(e, PFT_XP_DONE, 1);
		emit_exit_jmp(e, fix, nf, 1);
		e->buf[loop_rel] = (uint8_t)(e->n - (loop_rel + 1));
		point(e, PFT_XP_DONE, 0);
		emit_exit_jmp(e, fix, nf, 0);
		return 0;
	}
	case PFT_T_SYSCALL:
		/* syscall or int 0x80 as they are (the kernel returns to the
		 * next instruction); sysenter returns elsewhere */
		if (ti->bytes[0] == 0x0f && ti->bytes[1] == 0x34)
			return PFT_GEN_MODE;
		if (g->sysfast && ti->bytes[0] == 0x0f && ti->bytes[1] == 0x05) {
			emit_fast_syscall(e, g, g->n - 1, fix, nf);
			return 0;
		}
		if (g->sysfast) { /* int 0x80: always seen (int3 first) */
			g->sys_trap = (uint32_t)e->n;
			put8(e, 0xcc);
		}
		put(e, ti->bytes, 2);
		point(e, PFT_XP_DONE, 0);
		if (ti->bytes[0] == 0x0f && ti->bytes[1] == 0x05) {
			/* `syscall` left its return address in %rcx: the
			 * program's, not the copy's (a signal before this
			 * mov: trace_signal.c) */
			put(e, (uint8_t[]){ 0x48, 0xb9 }, 2); /* mov $next, %rcx */
			put64(e, g->next);
		}
		emit_exit_jmp(e, fix, nf, 0);
		return 0;
	case PFT_T_JMP:
	case PFT_T_CALL:
		if (t->ind == 0) {
			if (t->term == PFT_T_CALL) {
				put(e, (uint8_t[]){ 0xff, 0x35 }, 2); /* push lit(%rip) */
				*lit_fix = e->n;
				put32(e, 0);
				point(e, PFT_XP_DONE, 0);
			}
			emit_exit_jmp(e, fix, nf, 0);
			return 0;
		}
		if (!ti->r.ind_modrm)
			return PFT_GEN_MODE;
		gs_mov(e, 1, RCX, PFT_SLOT_RCX);
		emit_ind_operand(e, ti);
		if (t->term == PFT_T_CALL) {
			point(e, PFT_XP_RCX, g->n - 1);
			put(e, (uint8_t[]){ 0xff, 0x35 }, 2);
			*lit_fix = e->n;
			put32(e, 0);
		}
		point(e, PFT_XP_ROLL, 0);
		emit_ind_exit(e, g);
		return 0;
	case PFT_T_RET:
		gs_mov(e, 1, RCX, PFT_SLOT_RCX);
		put(e, (uint8_t[]){ 0x48, 0x8b, 0x0c, 0x24 }, 4); /* mov (%rsp),%rcx */
		point(e, PFT_XP_ROLL, 0);
		put(e, (uint8_t[]){ 0x48, 0x8d, 0xa4, 0x24 }, 4); /* lea N(%rsp),%rsp */
		put32(e, 8u + t->ret_imm);
		emit_ind_exit(e, g);
		return 0;
	default:
		return PFT_GEN_MODE;
	}
}

/* a point of the copy's cold part, at tracee address at */
static void cold_point(struct emit *e, uint64_t at, int kind, uint32_t arg)
{
	point(e, kind, arg);
	if (!e->bad)
		e->pt[e->npt - 1].off = (uint32_t)(at - e->base);
}

/* the rel32 at e->buf[site] aimed at `to` */
static void put_rel(struct emit *e, size_t site, uint64_t to)
{
	int64_t d = (int64_t)(to - (e->base + site + 4));
	int32_t rel = (int32_t)d;

	if (!fits32(d))
		e->bad = 1;
	memcpy(e->buf + site, &rel, 4);
	ext_rel(e, site);
}

/* The block's instructions but its branch, counted step times (0: not
 * counted, no point past a count). */
static void emit_insns(struct emit *e, const struct pft_gen *g, uint8_t step, size_t *ovf_site)
{
	uint32_t n = g->n;

	if (g->inc_first && step) { /* no flag writer in the block: leave the flags alone */
		point(e, PFT_XP_INC, 0);
		gs_mov(e, 1, RAX, PFT_SLOT_RAX);
		point(e, PFT_XP_ROLL, 0);
		if (g->cnt_base) { /* the loads through a zeroed %rax */
			zero_reg(e, RAX);
			gs_mov_b(e, 0, RAX, RAX, g->cnt);
		} else
			gs_mov(e, 0, RAX, g->cnt);
		put(e, (uint8_t[]){ 0x48, 0x8d, 0x40, step }, 4); /* lea step(%rax),%rax */
		gs_mov(e, 1, RAX, g->cnt);
		if (g->cnt_base) {
			zero_reg(e, RAX);
			gs_mov_b(e, 0, RAX, RAX, PFT_SLOT_RAX);
		} else
			gs_mov(e, 0, RAX, PFT_SLOT_RAX);
	}
	for (uint32_t i = 0; i + 1 < n; i++) {
		int counted_here = !g->inc_first && step && i == g->inc_at;
		if (counted_here)
			emit_count(e, g, i, ovf_site, step);
		if (!counted_here || !g->inc_reg) /* else still rolled over */
			point(e, PFT_XP_BODY, i);
		emit_body(e, &g->ii[i]);
	}
}

/* points [from, npt) that say "not yet counted" become `kind`, up to
 * the first that says the count is done */
static void mark_uncounted(struct emit *e, int from, int kind, uint32_t inc_at)
{
	for (int p = from; p < e->npt && !e->bad; p++) {
		struct pft_xpoint *pt = &e->pt[p];
		if (pt->kind == PFT_XP_INC) {
			pt->kind = (uint32_t)kind & 0xffu;
			if (kind == PFT_XP_INC2) /* the count's own point */
				return;
		} else if (pt->kind == PFT_XP_BODY) {
			if (kind == PFT_XP_INC2 && pt->arg >= inc_at)
				return;
			pt->kind = (uint32_t)kind & 0xffu;
		}
	}
}

/*
 * A one-block jcc loop (unroll): its counter's increment waits for the
 * previous one's store, a chain through memory of about 2.3 ns a run
 * on an Intel Xeon; emitted twice, one count per two runs halves it.
 *
 *  A:	the block's instructions, no count
 *	j<not cc> out			(the loop left from A)
 *  B:	the block's instructions, the count adding 2 (A's run and B's)
 *	jcc exit 0			(linked to A: the copy's entry)
 *  t:	jmp exit 1
 *  out: mov %rax, %gs:RAX; mov %gs:CNT, %rax; lea 1(%rax), %rax
 *	mov %rax, %gs:CNT; mov %gs:RAX, %rax	(A's run, flags kept)
 *	jmp t
 *
 * The exits are B's, so links and unlinking are a plain copy's: with
 * exit 0 unlinked a thread leaves at B's end, its runs counted.  A's
 * points are INC (nothing counted of this run), B's before its count
 * INC2 (A's run not counted either), out's first OWED (as DONE, one
 * run owed); trace_signal.c corrects each.
 */
static int emit_unrolled(struct emit *e, const struct pft_gen *g, struct exit_fix *fix, int *nf)
{
	size_t ovf_site = 0, j_out, tail;
	uint32_t n = g->n;
	int p0 = e->npt;

	emit_insns(e, g, 0, &ovf_site);
	point(e, PFT_XP_BODY, n - 1);
	mark_uncounted(e, p0, PFT_XP_INC, 0);
	put8(e, 0x0f);
	put8(e, (uint8_t)(0x80 | (g->term->cc ^ 1)));
	j_out = e->n;
	put32(e, 0);
	p0 = e->npt;
	emit_insns(e, g, 2, &ovf_site);
	point(e, PFT_XP_BODY, n - 1);
	mark_uncounted(e, p0, PFT_XP_INC2, g->inc_first ? 0 : g->inc_at);
	if (emit_term(e, (struct pft_gen *)g, fix, nf, NULL) || *nf != 2 || fix[1].exit != 1)
		return PFT_GEN_MODE;
	tail = fix[1].site - 1; /* the e9 of exit 1's jmp */
	if (!e->bad) {
		int32_t rel = (int32_t)(e->n - (j_out + 4));
		memcpy(e->buf + j_out, &rel, 4);
	}
	point(e, PFT_XP_OWED, 1);
	gs_mov(e, 1, RAX, PFT_SLOT_RAX);
	point(e, PFT_XP_ROLL, 0);
	gs_mov(e, 0, RAX, g->cnt);
	put(e, (uint8_t[]){ 0x48, 0x8d, 0x40, 0x01 }, 4); /* lea 1(%rax),%rax */
	gs_mov(e, 1, RAX, g->cnt);
	gs_mov(e, 0, RAX, PFT_SLOT_RAX);
	point(e, PFT_XP_DONE, 1);
	put8(e, 0xe9);
	put32(e, (uint32_t)(int32_t)((int64_t)tail - (int64_t)(e->n + 4)));
	return 0;
}

/* The copy with its entry at `entry`: the hot part there, the cold part
 * (exit stubs, the overflow trap, the return-address literal) in g->cbuf
 * for g->cold_top - g->clen. */
static int gen_at(struct pft_gen *g, uint64_t entry, int no_pad)
{
	struct emit e = { .buf = g->buf,
			  .cap = g->cap,
			  .base = entry,
			  .pt = g->pt,
			  .pt_cap = g->pt_cap,
			  .no_pad = no_pad,
			  .ext = g->ext,
			  .ext_cap = PFT_GEN_EXT };
	struct emit c = { .buf = g->cbuf, .cap = g->ccap };
	uint32_t n = g->n;
	struct exit_fix fix[2];
	int nf = 0, rc;
	size_t lit_fix = 0, ovf_site = 0, clen;

	g->len = g->clen = 0;
	g->npt = 0;
	g->ovf_stub = g->sys_trap = g->sys_trap2 = g->ind_trap_at = g->lookup = 0;
	if (g->no_count && g->ovf_near)
		emit_near_check(&e, g);
	if (g->unroll) {
		if ((rc = emit_unrolled(&e, g, fix, &nf))) {
			g->pt = e.pt, g->pt_cap = e.pt_cap;
			return rc;
		}
	} else {
		emit_insns(&e, g, g->no_count ? 0 : 1, &ovf_site);
		/* the terminator */
		point(&e, PFT_XP_BODY, n - 1);
		if ((rc = emit_term(&e, g, fix, &nf, &lit_fix))) {
			g->pt = e.pt, g->pt_cap = e.pt_cap;
			return rc;
		}
	}

	/* the cold part, 8-byte words below cold_top: exit stubs (int3,
	 * then a far jump through the qword after it), the overflow
	 * check's trap, the literal */
	clen = (g->freq ? PFT_FSTUB_BYTES : PFT_STUB_BYTES) * (unsigned)g->nex + (g->ovf_w && !g->no_count ? 8 : 0) +
	       (lit_fix ? 8 : 0);
	c.base = g->cold_top - clen;
	g->cold_pt = e.npt; /* (points from here on are in the cold part) */
	for (int k = 0; k < g->nex; k++) {
		uint64_t stub = here(&c);
		g->stub[k] = (uint32_t)(stub - entry);
		cold_point(&e, stub, PFT_XP_DONE, (uint32_t)k);
		if (!g->freq) {
			put(&c, (uint8_t[]){ 0xcc, 0xcc, 0xff, 0x25, 0, 0, 0, 0 }, 8);
			put64(&c, 0);
			continue;
		}
		/* jmp to the request; the far jump (links beyond a rel32);
		 * movl $stub-chunk, %gs:Q_ID; jmp req; int3 (the old way) */
		put(&c, (uint8_t[]){ 0xeb, PFT_FSTUB_REQ - 2, 0xff, 0x25, 0, 0, 0, 0 }, 8);
		put64(&c, 0);
		put(&c, (uint8_t[]){ 0x65, 0xc7, 0x04, 0x25 }, 4);
		put32(&c, PFT_SLOT_Q_ID);
		put32(&c, (uint32_t)(stub - g->chunk));
		put8(&c, 0xe9);
		put32(&c, (uint32_t)(int32_t)((int64_t)g->req - (int64_t)(here(&c) + 4)));
		if (!fits32((int64_t)g->req - (int64_t)here(&c)))
			c.bad = 1;
		while (here(&c) - stub < PFT_FSTUB_BYTES) /* PFT_FSTUB_TRAP first */
			put8(&c, 0xcc);
	}
	if (g->ovf_w && !g->no_count) {
		g->ovf_stub = (uint32_t)(here(&c) - entry);
		cold_point(&e, here(&c), PFT_XP_OVFSTUB, g->inc_at);
		put64(&c, 0xccccccccccccccccULL);
		put_rel(&e, ovf_site, entry + g->ovf_stub);
	}
	for (int i = 0; i < nf; i++) {
		int k = fix[i].exit;
		g->site[k] = (uint32_t)fix[i].site;
		put_rel(&e, fix[i].site, entry + g->stub[k]);
	}
	if (lit_fix) {
		cold_point(&e, here(&c), PFT_XP_DATA, 0);
		put_rel(&e, lit_fix, here(&c));
		put64(&c, g->next);
	}
	g->len = e.n;
	g->clen = c.n;
	g->pt = e.pt;
	g->pt_cap = e.pt_cap;
	g->npt = e.npt;
	g->n_ext = e.n_ext;
	return e.bad || c.bad || c.n != clen ? PFT_GEN_REACH : 0;
}

/* The copy just made (without padding) moved d bytes on, where only
 * its rel32s to code outside it (g->ext) and its offsets to its cold
 * part change: what making it again there gives (half the copies move,
 * and the making was a fifth of a cold run's tracer).  -1: one of them
 * would no longer reach, or too many to know (make it again then). */
static int move_by(struct pft_gen *g, int d)
{
	if (g->n_ext < 0)
		return -1;
	for (int i = 0; i < g->n_ext; i++) {
		int32_t v;
		memcpy(&v, g->buf + g->ext[i], 4);
		if (!fits32((int64_t)v - d))
			return -1;
	}
	for (int i = 0; i < g->n_ext; i++) {
		int32_t v;
		memcpy(&v, g->buf + g->ext[i], 4);
		v -= d;
		memcpy(g->buf + g->ext[i], &v, 4);
	}
	for (int k = 0; k < g->nex; k++)
		g->stub[k] -= (uint32_t)d;
	if (g->ovf_w && !g->no_count) /* (else a trap in the hot part, or none) */
		g->ovf_stub -= (uint32_t)d;
	for (int i = g->cold_pt; i < g->npt; i++)
		g->pt[i].off -= (uint32_t)d;
	return 0;
}

/* PFLOPS_TRACE_CHECK_MOVE=1 (the test suite): every moved copy made
 * again at its place too, and any difference fatal */
static void check_move(struct pft_gen *g, uint64_t entry)
{
	struct pft_gen m = *g;
	uint8_t *buf = malloc(g->len + g->clen + 1);

	m.pt = malloc((size_t)(g->npt ? g->npt : 1) * sizeof *m.pt);
	if (!buf || !m.pt) {
		free(buf);
		free(m.pt);
		return;
	}
	memcpy(buf, g->buf, g->len);
	memcpy(buf + g->len, g->cbuf, g->clen);
	memcpy(m.pt, g->pt, (size_t)g->npt * sizeof *m.pt);
	if (gen_at(g, entry, 1) || g->len != m.len || g->clen != m.clen || g->npt != m.npt ||
	    memcmp(buf, g->buf, g->len) || memcmp(buf + g->len, g->cbuf, g->clen) ||
	    memcmp(g->pt, m.pt, (size_t)g->npt * sizeof *g->pt) || memcmp(g->stub, m.stub, sizeof g->stub) ||
	    memcmp(g->site, m.site, sizeof g->site) || g->ovf_stub != m.ovf_stub || g->lookup != m.lookup ||
	    g->ind_trap_at != m.ind_trap_at || g->sys_trap != m.sys_trap || g->sys_trap2 != m.sys_trap2) {
		fprintf(stderr,
			"papi_flops: PFLOPS_TRACE_CHECK_MOVE: a code-cache copy moved by %u bytes differs from "
			"one made there (a bug in trace_gen.c's move_by: please report it with the program traced)\n",
			g->lead);
		abort();
	}
	free(m.pt);
	free(buf);
}

/* the copy's patched rel32s, made with its entry at `entry`, each
 * within an 8-byte word (pft_arch_link) when it starts d bytes later */
static int sites_ok(const struct pft_gen *g, uint64_t entry, int d)
{
	for (int k = 0; k < g->nex; k++)
		if (!rel_ok(entry + (uint64_t)d + g->site[k]))
			return 0;
	return 1;
}

/* Where the copy's last jump's opcode falls in its 8-byte word when the
 * entry is at `entry` (8: no such jump): at 0 to 3 its link to a copy
 * right after can be a nop (pft_arch_link); rel_ok leaves 7 to 3 */
static unsigned tail_word(const struct pft_gen *g, uint64_t entry)
{
	for (int k = 0; k < g->nex; k++)
		if (g->site[k] + 4 == g->len && g->buf[g->site[k] - 1] == 0xe9)
			return (unsigned)((entry + g->site[k] - 1) & 7);
	return 8;
}

/* How far past g->base the entry goes (0-7) for every patched rel32 of
 * a copy made at g->base without padding to be patchable; -1: none.
 * Of those: within the previous copy's room (g->room: its jump to this
 * one then becomes a nop), then with this copy's own last jump where it
 * can become one, then the least (a lead but 0 moves the copy: move_by). */
static int lead_for(const struct pft_gen *g)
{
	unsigned o = tail_word(g, g->base), bs = ~0u;
	int best = -1;

	for (int d = 0; d < 8; d++) {
		unsigned sc;
		if (!sites_ok(g, g->base, d))
			continue;
		sc = (g->room && d >= g->room ? 1000u : 0u) + (o < 8 && ((o + (unsigned)d) & 7) > 3 ? 100u : 0u) +
		     (unsigned)d;
		if (sc < 8)
			return d; /* (the least lead of all the best) */
		if (sc < bs) {
			bs = sc;
			best = d;
		}
	}
	return best;
}

int pft_arch_gen_block(struct pft_gen *g)
{
	int rc, d;

	/* Unpadded first; if a patch site falls across an 8-byte word, the
	 * whole copy moves up by a few bytes (dead bytes before its entry,
	 * after the previous copy's last jump) rather than taking nops
	 * that would run at every pass and split a cmp/jcc pair. */
	g->lead = 0;
	if ((rc = gen_at(g, g->base, 1)) || (d = lead_for(g)) == 0)
		return rc;
	if (d > 0 && !move_by(g, d)) {
		static int check = -1;
		const char *e = check < 0 ? getenv("PFLOPS_TRACE_CHECK_MOVE") : NULL;
		if (check < 0)
			check = e && !strcmp(e, "1");
		g->lead = (uint32_t)d;
		if (check)
			check_move(g, g->base + (uint64_t)d);
		return 0;
	}
	if (d < 0) /* (no such shift: nops before the jumps) */
		return gen_at(g, g->base, 0);
	g->lead = (uint32_t)d;
	if ((rc = gen_at(g, g->base + (uint64_t)d, 1)) || sites_ok(g, g->base + (uint64_t)d, 0))
		return rc;
	g->lead = 0; /* (never: the same bytes, moved) */
	return gen_at(g, g->base, 0);
}

size_t pft_arch_gen_tramp(uint8_t *buf, size_t cap, uint64_t base, const struct pft_gen_insn *in, uint64_t *back)
{
	struct emit e = { .buf = buf, .cap = cap, .base = base };
	uint64_t to = in->addr + in->r.len;

	emit_body(&e, in);
	*back = here(&e);
	put8(&e, 0xe9);
	put32(&e, (uint32_t)(int32_t)(to - (here(&e) + 4)));
	free(e.pt);
	if (e.bad || !fits32((int64_t)(to - here(&e))))
		return 0;
	return e.n;
}
