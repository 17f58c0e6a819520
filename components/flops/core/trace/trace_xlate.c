/*
 * trace_xlate.c: a basic block's copy in the code cache.
 *
 * The copy runs the block's own instructions (RIP-relative operands
 * re-aimed at the same data) and adds one to the block's counter in the
 * thread's slot: `incq %gs:CNT+8*id`, placed right before an instruction
 * that rewrites the flags it changes, or, when the block has none, a
 * flag-free load/lea/store through the slot's scratch word.  The branch
 * at its end becomes:
 *
 *   jcc/jmp/call rel   jumps to 16-byte exit stubs (int3: "not yet
 *                      translated"); once the target is translated the
 *                      jump is aimed at its copy (linked), directly when
 *                      within a rel32, else through the stub's far jump.
 *                      A call pushes the original return address.
 *   jmp/call/ret ind   the target goes to %rcx and the chunk's lookup
 *                      routine finds its copy in a hash table (crc32 of
 *                      the address), or traps.  Nothing there changes
 *                      the flags: compares are `not; lea; jrcxz`.
 *   loop, jrcxz        the same rel8 instruction over two exit jumps.
 *   syscall            itself, then an exit to the next instruction;
 *                      with fast system calls (trace_sys.c) a look-up
 *                      first: run at once, or trap to the tracer.
 *
 * Every byte range of a copy is described (struct pft_xpoint) so that
 * a thread stopped anywhere in it by a signal can be put back where it
 * is in the original program, its count corrected to what really ran.
 * Links, the lookup routine and table, and the counters: trace_link.c.
 */
#include <stdlib.h>
#include <string.h>

#include "trace_cache.h"
#include "trace_thread.h"
#include "trace_count.h"
#include "trace_engine.h"
#include "trace_wprot.h"
#include "trace_elf.h"
#include "x86_64/trace_emit.h"

/* ------------------------------------------------------------------ */
/* Which blocks can be copied.                                         */

static int term_ok(const struct pft_block *b)
{
	if (pft_branch_emulable(b->term.term))
		return b->mode == PFT_BLK_BP;
	return b->term.term == PFT_T_SYSCALL && b->mode == PFT_BLK_SYSCALL && b->term.len == 2;
}

int pft_xlate_check(struct pft_space *sp, pid_t tid, struct pft_block *b)
{
	if (b->nocache)
		return b->nocache;
	if (b->has_mask)
		return b->nocache = PFT_NC_MASK;
	if (!term_ok(b))
		return b->nocache = PFT_NC_MODE;
	if (sp->region && pft_region_is_hook(sp->region, b->start))
		return b->nocache = PFT_NC_NOTIFY;
	if (b->region_entry) /* a call from the cache must stop there */
		return b->nocache = PFT_NC_REGION;
	/* writable pages: cached once write-protected (trace_wprot.c) */
	return pft_wprot_check(sp, tid, b);
}

/* ------------------------------------------------------------------ */
/* Translation.                                                        */

struct insn_info {
	struct pft_reloc r;
	const uint8_t *bytes;
	uint64_t addr;
};

static void emit_body(struct emit *e, const struct insn_info *ii)
{
	size_t at = e->n;

	put(e, ii->bytes, ii->r.len);
	if (ii->r.rip_rel && !e->bad) {
		int64_t d = (int64_t)(ii->r.rip_target - (e->base + at + ii->r.len));
		int32_t d32 = (int32_t)d;
		if (!fits32(d))
			e->bad = 1;
		memcpy(e->buf + at + ii->r.disp_off, &d32, 4);
	}
}

/* mov <the indirect branch's operand>, %rcx */
static void emit_ind_operand(struct emit *e, const struct insn_info *ii)
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

static int read_insns(struct pft_space *sp, pid_t tid, const struct pft_block *b, uint8_t *code, struct insn_info *ii)
{
	size_t len = (size_t)(b->end - b->start);
	const struct pft_reloc *kept;

	if (pft_mem_read(sp, tid, b->start, code, len) != len)
		return -1;
	kept = pft_block_relocs(sp, b, code); /* its decode's, or decode again */
	for (uint32_t i = 0; i < b->ninsts; i++) {
		size_t o = b->offs[i], l = (i + 1 < b->ninsts ? b->offs[i + 1] : len) - o;
		ii[i].bytes = code + o;
		ii[i].addr = b->start + o;
		if (kept)
			ii[i].r = kept[i];
		else if (pft_reloc_decode(code + o, l, ii[i].addr, &ii[i].r))
			return -1;
		if (ii[i].r.len != l)
			return -1;
	}
	return 0;
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
static void emit_fast_syscall(struct emit *e, struct pft_xblock *x, uint64_t next, uint32_t idx, struct exit_fix *fix,
			      int *nf)
{
	size_t j_native, after;

	gs_mov(e, 1, RCX, PFT_SLOT_RCX);
	gs_mov(e, 1, R11, PFT_SLOT_R11);
	point(e, PFT_XP_SYS, idx);
	put(e, (uint8_t[]){ 0x0f, 0xb7, 0xc8 }, 3); /* movzwl %ax,%ecx */
	gs_mov(e, 0, R11, PFT_SLOT_SYSMAP);
	put(e, (uint8_t[]){ 0x41, 0x0f, 0xb6, 0x0c, 0x0b }, 5); /* movzbl (%r11,%rcx),%ecx */
	put(e, (uint8_t[]){ 0xe3, 0x00 }, 2);			/* jrcxz 1f */
	j_native = e->n - 1;
	x->sys_trap = (uint32_t)e->n;
	put(e, (uint8_t[]){ 0xcc, 0x0f, 0x05 }, 3); /* int3; syscall */
	point(e, PFT_XP_DONE, 0);
	x->sys_trap2 = (uint32_t)e->n;
	put8(e, 0xcc);
	after = e->n;
	put(e, (uint8_t[]){ 0x48, 0xb9 }, 2); /* mov $next, %rcx */
	put64(e, next);
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

/* The copy of b at `base` into e; 0 or an PFLOPS_NC_* reason. */
static int generate(struct emit *e, const struct pft_block *b, const struct insn_info *ii, uint32_t id,
		    struct pft_xblock *x, int ovf, int sysfast)
{
	const struct pft_insn *t = &b->term;
	const struct insn_info *ti = &ii[b->ninsts - 1];
	uint32_t n = b->ninsts, cnt = PFT_SLOT_CNT + 8 * id;
	uint64_t next = b->last + t->len;
	struct exit_fix fix[2];
	int nf = 0, seq = 1;
	size_t push_at = 0, loop_rel = 0, lit_fix = 0, ovf_site = 0;

	x->inc_at = 0;
	x->ovf_w = 0;
	if (ovf && b->ovf_sum) {
		/* overflow: `sub $W, %gs:OVF; jbe stub` before the counter's
		 * increment, before an instruction that sets the flags the
		 * increment does (CF is saved around it unless that one
		 * sets CF too: dec; jnz loops), with at most the guard's
		 * weight before it */
		uint64_t pre = 0;
		uint32_t f = 0;
		for (uint32_t i = 0; i + 1 < n; i++) {
			for (; f < b->nfp && b->fp[f].idx < i; f++)
				pre += b->ovf_w[f];
			if (pre > PFT_OVF_GUARD)
				break;
			if (ii[i].r.kills_flags) {
				x->inc_at = i;
				x->ovf_w = (uint32_t)b->ovf_sum;
				x->ovf_cf = !ii[i].r.kills_cf;
				x->ovf_pre = (uint32_t)pre;
				seq = 0;
				break;
			}
		}
		if (!x->ovf_w || b->ovf_sum > INT32_MAX)
			return PFT_NC_OVF;
	} else {
		for (uint32_t i = 0; i + 1 < n; i++)
			if (ii[i].r.kills_flags) {
				x->inc_at = i;
				seq = 0;
				break;
			}
	}
	if (seq) { /* no flag writer in the block: leave the flags alone */
		point(e, PFT_XP_INC, 0);
		gs_mov(e, 1, RAX, PFT_SLOT_RAX);
		point(e, PFT_XP_ROLL, 0);
		gs_mov(e, 0, RAX, cnt);
		put(e, (uint8_t[]){ 0x48, 0x8d, 0x40, 0x01 }, 4); /* lea 1(%rax),%rax */
		gs_mov(e, 1, RAX, cnt);
		gs_mov(e, 0, RAX, PFT_SLOT_RAX);
	}
	for (uint32_t i = 0; i + 1 < n; i++) {
		if (ii[i].r.uses_gs)
			return PFT_NC_GS;
		if (ii[i].r.pops_flags) /* EFLAGS.TF: stepped at the original */
			return PFT_NC_MODE;
		if (!seq && i == x->inc_at) {
			point(e, PFT_XP_INC, i);
			if (x->ovf_w) {
				/* [setc %gs:CF] subq $W, %gs:OVF; jbe stub
				 * (taken when OVF <= W: near a crossing)
				 * [bt $0, %gs:CF] */
				if (x->ovf_cf) {
					put(e, (uint8_t[]){ 0x65, 0x0f, 0x92, 0x04, 0x25 }, 5);
					put32(e, PFT_SLOT_CF);
				}
				put(e, (uint8_t[]){ 0x65, 0x48, 0x81, 0x2c, 0x25 }, 5);
				put32(e, PFT_SLOT_OVF);
				put32(e, x->ovf_w);
				point(e, PFT_XP_OVF, i);
				put(e, (uint8_t[]){ 0x0f, 0x86 }, 2);
				ovf_site = e->n;
				put32(e, 0);
				if (x->ovf_cf) {
					put(e, (uint8_t[]){ 0x65, 0x0f, 0xba, 0x24, 0x25 }, 5);
					put32(e, PFT_SLOT_CF);
					put8(e, 0);
				}
			}
			put(e, (uint8_t[]){ 0x65, 0x48, 0xff, 0x04, 0x25 }, 5);
			put32(e, cnt);
		}
		point(e, PFT_XP_BODY, i);
		emit_body(e, &ii[i]);
	}
	if (ti->r.uses_gs)
		return PFT_NC_GS;

	/* the terminator */
	x->nex = 0;
	point(e, PFT_XP_BODY, n - 1);
	switch (t->term) {
	case PFT_T_JCC:
		x->ex[0].target = t->target;
		x->ex[1].target = next;
		x->nex = 2;
		align_rel(e, 2);
		put8(e, 0x0f);
		put8(e, (uint8_t)(0x80 | t->cc));
		fix[nf++] = (struct exit_fix){ e->n, 0 };
		put32(e, 0);
		point(e, PFT_XP_DONE, 1);
		emit_exit_jmp(e, fix, &nf, 1);
		break;
	case PFT_T_LOOP:
	case PFT_T_JRCXZ:
		x->ex[0].target = t->target;
		x->ex[1].target = next;
		x->nex = 2;
		put(e, ti->bytes, t->len - 1u); /* prefixes + opcode */
		loop_rel = e->n;
		put8(e, 0);
		point(e, PFT_XP_DONE, 1);
		emit_exit_jmp(e, fix, &nf, 1);
		e->buf[loop_rel] = (uint8_t)(e->n - (loop_rel + 1));
		point(e, PFT_XP_DONE, 0);
		emit_exit_jmp(e, fix, &nf, 0);
		break;
	case PFT_T_SYSCALL:
		/* syscall or int 0x80 as they are (the kernel returns to the
		 * next instruction); sysenter returns elsewhere */
		if (ti->bytes[0] == 0x0f && ti->bytes[1] == 0x34)
			return PFT_NC_MODE;
		x->ex[0].target = next;
		x->nex = 1;
		if (sysfast && ti->bytes[0] == 0x0f && ti->bytes[1] == 0x05) {
			emit_fast_syscall(e, x, next, n - 1, fix, &nf);
			break;
		}
		if (sysfast) { /* int 0x80: always seen (int3 first) */
			x->sys_trap = (uint32_t)e->n;
			put8(e, 0xcc);
		}
		put(e, ti->bytes, 2);
		point(e, PFT_XP_DONE, 0);
		if (ti->bytes[0] == 0x0f && ti->bytes[1] == 0x05) {
			/* `syscall` left its return address in %rcx: the
			 * program's, not the copy's (a signal before this
			 * mov: trace_signal.c) */
			put(e, (uint8_t[]){ 0x48, 0xb9 }, 2); /* mov $next, %rcx */
			put64(e, next);
		}
		emit_exit_jmp(e, fix, &nf, 0);
		break;
	case PFT_T_JMP:
	case PFT_T_CALL:
		if (t->ind == 0) {
			x->ex[0].target = t->target;
			x->nex = 1;
			if (t->term == PFT_T_CALL) {
				put(e, (uint8_t[]){ 0xff, 0x35 }, 2); /* push lit(%rip) */
				lit_fix = e->n;
				put32(e, 0);
				point(e, PFT_XP_DONE, 0);
			}
			emit_exit_jmp(e, fix, &nf, 0);
			break;
		}
		if (!ti->r.ind_modrm)
			return PFT_NC_MODE;
		gs_mov(e, 1, RCX, PFT_SLOT_RCX);
		emit_ind_operand(e, ti);
		if (t->term == PFT_T_CALL) {
			point(e, PFT_XP_RCX, n - 1);
			push_at = e->n;
			put(e, (uint8_t[]){ 0xff, 0x35 }, 2);
			lit_fix = e->n;
			put32(e, 0);
		}
		point(e, PFT_XP_ROLL, 0);
		put8(e, 0xe9);
		put32(e, (uint32_t)(int32_t)(x->ch->ibl - (here(e) + 4)));
		break;
	case PFT_T_RET:
		gs_mov(e, 1, RCX, PFT_SLOT_RCX);
		put(e, (uint8_t[]){ 0x48, 0x8b, 0x0c, 0x24 }, 4); /* mov (%rsp),%rcx */
		point(e, PFT_XP_ROLL, 0);
		put(e, (uint8_t[]){ 0x48, 0x8d, 0xa4, 0x24 }, 4); /* lea N(%rsp),%rsp */
		put32(e, 8u + t->ret_imm);
		put8(e, 0xe9);
		put32(e, (uint32_t)(int32_t)(x->ch->ibl - (here(e) + 4)));
		break;
	default:
		return PFT_NC_MODE;
	}
	(void)push_at;

	/* exit stubs: int3, then a far jump through the qword after it */
	while (e->n & 15)
		put8(e, 0xcc);
	for (int k = 0; k < x->nex; k++) {
		x->ex[k].stub = (uint32_t)e->n;
		point(e, PFT_XP_DONE, (uint32_t)k);
		put(e, (uint8_t[]){ 0xcc, 0xcc, 0xff, 0x25, 0, 0, 0, 0 }, 8);
		put64(e, 0);
	}
	if (x->ovf_w) {
		int32_t rel;
		x->ovf_stub = (uint32_t)e->n;
		point(e, PFT_XP_OVFSTUB, x->inc_at);
		put(e, (uint8_t[]){ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc }, 8);
		rel = (int32_t)((e->base + x->ovf_stub) - (e->base + ovf_site + 4));
		memcpy(e->buf + ovf_site, &rel, 4);
	}
	for (int i = 0; i < nf; i++) {
		struct pft_xexit *xe = &x->ex[fix[i].exit];
		int32_t rel = (int32_t)((e->base + xe->stub) - (e->base + fix[i].site + 4));
		xe->site = (uint32_t)fix[i].site;
		memcpy(e->buf + fix[i].site, &rel, 4);
	}
	if (lit_fix) {
		int32_t rel;
		point(e, PFT_XP_DATA, 0);
		rel = (int32_t)(here(e) - (e->base + lit_fix + 4));
		memcpy(e->buf + lit_fix, &rel, 4);
		put64(e, next);
	}
	return e->bad ? PFT_NC_REACH : 0;
}

static int add_xb(struct pft_chunk *ch, struct pft_xblock *x)
{
	if (ch->nxb == ch->xb_cap) {
		size_t nc = ch->xb_cap ? 2 * ch->xb_cap : 64;
		struct pft_xblock **n = realloc(ch->xb, nc * sizeof *n);
		if (!n)
			return -1;
		ch->xb = n;
		ch->xb_cap = nc;
	}
	ch->xb[ch->nxb++] = x;
	return 0;
}

uint64_t pft_xlate(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b)
{
	struct pft_space *sp = t->sp;
	struct pft_arena *a = sp->arena;
	size_t len = (size_t)(b->end - b->start);
	uint8_t *code = NULL;
	struct insn_info *ii = NULL;
	struct pft_xblock *x = NULL, *px;
	struct pft_xpoint *pt;
	struct pft_chunk *ch;
	struct emit e = { 0 };
	uint64_t lo = b->start, hi = b->end;
	int why;

	if (b->x)
		return b->x->addr;
	if (!a || pft_xlate_check(sp, t->tid, b))
		return 0;
	if (a->nids == PFT_MAX_IDS) {
		b->nocache = PFT_NC_FULL;
		return 0;
	}
	if (!T->xbuf && !(T->xbuf = malloc(MAXCODE)))
		return 0;
	code = malloc(len + 16);
	ii = malloc(b->ninsts * sizeof *ii);
	x = calloc(1, sizeof *x);
	e.buf = T->xbuf; /* kept: a copy is made per block */
	if (!code || !ii || !x)
		goto out;
	if (read_insns(sp, t->tid, b, code, ii)) {
		b->nocache = PFT_NC_MODE;
		goto out;
	}
	for (uint32_t i = 0; i < b->ninsts; i++)
		if (ii[i].r.rip_rel) {
			if (ii[i].r.rip_target < lo)
				lo = ii[i].r.rip_target;
			if (ii[i].r.rip_target + 64 > hi)
				hi = ii[i].r.rip_target + 64;
		}
	ch = pft_arena_chunk(T, t, lo, hi, len * 2 + 256);
	if (!ch) {
		b->nocache = hi - lo > (1u << 30) ? PFT_NC_REACH : PFT_NC_FULL;
		goto out;
	}
	x->ch = ch;
	x->b = b;
	x->id = a->nids;
	e.base = ch->addr + ch->used;
	why = generate(&e, b, ii, x->id, x, pft_ovf_on(T) && pft_ovf_block(T, b), T->sysfast);
	if (why || e.n > ch->size - ch->used) {
		b->nocache = why ? why : PFT_NC_FULL;
		goto out;
	}
	x->addr = e.base;
	x->size = (uint32_t)e.n;
	x->npt = e.npt;
	/* into the space's pool with the block, its points to their size */
	px = pft_pool_alloc(sp, sizeof *px);
	pt = px ? pft_pool_alloc(sp, (size_t)(e.npt ? e.npt : 1) * sizeof *pt) : NULL;
	if (pt) {
		*px = *x;
		memcpy(pt, e.pt, (size_t)e.npt * sizeof *pt);
		px->pt = pt;
		px->pooled = 1;
		free(x);
		x = px;
	} else {
		x->pt = e.pt;
		e.pt = NULL;
	}
	if (add_xb(ch, x)) {
		b->nocache = PFT_NC_FULL;
		if (x->pooled) /* pool memory: nothing to free */
			x = NULL;
		else
			e.pt = x->pt;
		goto out;
	}
	memcpy(ch->mem + ch->used, e.buf, e.n);
	ch->used = (ch->used + e.n + 15) & ~(size_t)15;
	if (x->ovf_w && x->ovf_pre > sp->ovf_maxpre)
		sp->ovf_maxpre = x->ovf_pre;
	pft_pub_block(T, sp, x->id, b);
	a->ids[a->nids++] = b;
	b->x = x;
	pft_link_new(sp, x, &T->st.cache_links);
	x = NULL;
	T->st.cache_blocks++;
	T->st.cache_bytes += e.n;
out:
	free(code);
	free(ii);
	free(e.pt);
	free(x);
	return b->x ? b->x->addr : 0;
}

uint64_t pft_xlate_tramp(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, uint64_t *back)
{
	uint8_t code[16], buf[64];
	struct pft_reloc r;
	struct pft_chunk *ch;
	struct emit e = { buf, 0, 0, NULL, 0, 0, 0 };
	struct insn_info ii;
	uint64_t lo = b->start, hi = b->start + 16;
	size_t n;

	if (b->tramp) {
		*back = b->tramp_back;
		return b->tramp;
	}
	if (!t->sp->arena)
		return 0;
	n = pft_mem_read(t->sp, t->tid, b->start, code, sizeof code);
	if (!n || pft_reloc_decode(code, n, b->start, &r))
		return 0;
	if (r.rip_rel) {
		lo = r.rip_target < lo ? r.rip_target : lo;
		hi = r.rip_target + 64 > hi ? r.rip_target + 64 : hi;
	}
	ch = pft_arena_chunk(T, t, lo, hi, sizeof buf);
	if (!ch)
		return 0;
	e.base = ch->addr + ch->used;
	ii.r = r;
	ii.bytes = code;
	ii.addr = b->start;
	emit_body(&e, &ii);
	*back = here(&e);
	put8(&e, 0xe9);
	put32(&e, (uint32_t)(int32_t)(b->start + r.len - (here(&e) + 4)));
	if (e.bad || !fits32((int64_t)(b->start + r.len - here(&e))))
		return 0;
	memcpy(ch->mem + ch->used, buf, e.n);
	ch->used = (ch->used + e.n + 15) & ~(size_t)15;
	b->tramp = e.base;
	b->tramp_back = *back;
	return b->tramp;
}

struct pft_xblock *pft_xlate_find(const struct pft_arena *a, uint64_t addr, const struct pft_xpoint **pt)
{
	struct pft_chunk *ch = pft_arena_chunk_of(a, addr);
	size_t lo = 0, hi;
	struct pft_xblock *x;
	uint32_t off;
	int l = 0, h;

	*pt = NULL;
	if (!ch)
		return NULL;
	hi = ch->nxb;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ch->xb[mid]->addr + ch->xb[mid]->size <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ch->nxb || ch->xb[lo]->addr > addr)
		return NULL;
	x = ch->xb[lo];
	off = (uint32_t)(addr - x->addr);
	h = x->npt;
	while (l < h) { /* last point at or before off */
		int mid = (l + h) / 2;
		if (x->pt[mid].off <= off)
			l = mid + 1;
		else
			h = mid;
	}
	*pt = l ? &x->pt[l - 1] : NULL;
	return x;
}

/* one more block for pft_xlate_ahead: translated now, or 0 */
static struct pft_xblock *ahead_one(struct pft_tracer *T, struct pft_thr *t, uint64_t pc, int *budget,
				    struct pft_block **q, int *qt, int qmax)
{
	struct pft_block *d = pft_block_get(t->sp, t->tid, pc, 0, &T->st.blocks_decoded);
	int was;

	if (!d)
		return NULL;
	if (d->x)
		return d->x->dead ? NULL : d->x;
	was = d->nocache;
	if (!pft_xlate(T, t, d)) {
		if (!was && d->nocache)
			T->st.nocache[d->nocache]++;
		return NULL;
	}
	T->st.ahead_blocks++;
	(*budget)--;
	if (*qt < qmax)
		q[(*qt)++] = d;
	return d->x;
}

/* Where an indirect branch through a slot at a fixed address (a PLT
 * entry, a call through the GOT: pft_arch_branch_slot) goes now: the
 * slot's value when that is code on a read-only executable mapping,
 * else 0.  A guess only: the lookup table is keyed by the
 * target actually taken, so a slot rewritten later costs a miss, never
 * a wrong jump. */
static uint64_t slot_target(struct pft_thr *t, const struct pft_block *c)
{
	uint64_t slot = pft_arch_branch_slot(&c->term, c->last), v;
	const struct pft_map *m;

	if (!slot || pft_mem_read(t->sp, t->tid, slot, &v, 8) != 8)
		return 0;
	m = pft_maps_find(&t->sp->maps, t->tid, v);
	return m && m->x && !m->w ? v : 0;
}

#define AHEAD_IDS (PFT_MAX_IDS - PFT_MAX_IDS / 8)

void pft_xlate_ahead(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, int budget)
{
	struct pft_block *q[PFT_AHEAD_MAX + 1];
	uint32_t nids = t->sp->arena->nids;
	int qh = 0, qt = 0;

	/* fewer as the ids fill, none in their last eighth: those stay
	 * for blocks that run (a full cache sends the rest to the stopping
	 * path).  gcc's cc1 decodes about 230,000 blocks: with 32 ahead it
	 * stays clear of the end, with 128 it ran out; stopping at 3/4
	 * instead cost it 60% more stops. */
	if (nids >= AHEAD_IDS)
		return;
	budget = (int)((int64_t)budget * (AHEAD_IDS - nids) / AHEAD_IDS);
	q[qt++] = b;
	while (qh < qt && budget > 0) {
		struct pft_block *c = q[qh++];
		struct pft_xblock *x = c->x, *to;
		uint64_t tgt;

		if (!x || x->dead)
			continue;
		for (int k = 0; k < x->nex && budget > 0; k++) {
			if (x->ex[k].to)
				continue;
			to = ahead_one(T, t, x->ex[k].target, &budget, q, &qt, PFT_AHEAD_MAX + 1);
			if (to) {
				pft_xlate_link(x, k, to);
				T->st.cache_links++;
			}
		}
		if (c->term.term == PFT_T_CALL && budget > 0) {
			/* where the callee's ret will look */
			uint64_t ret = c->last + c->term.len;
			to = ahead_one(T, t, ret, &budget, q, &qt, PFT_AHEAD_MAX + 1);
			if (to)
				pft_table_insert(t->sp->arena, ret, to->addr);
		}
		if (budget > 0 && (tgt = slot_target(t, c))) {
			/* where the lookup routine will look */
			to = ahead_one(T, t, tgt, &budget, q, &qt, PFT_AHEAD_MAX + 1);
			if (to)
				pft_table_insert(t->sp->arena, tgt, to->addr);
		}
	}
}
