/*
 * trace_xlate.c: a basic block's copy in the code cache, as the engine
 * decides it; the instruction set writes it (pft_arch_gen_block,
 * x86_64/trace_gen.c has the x86-64 form).
 *
 * The copy runs the block's own instructions (relocated: struct
 * pft_reloc) and adds one to the block's counter in the thread's slot
 * (PFT_SLOT_CNT + 8 * id), where that changes nothing the program sees:
 * right before an instruction that overwrites the flags the count
 * changes, or, when the block has none, first, through the slot's
 * scratch word.  With overflow asked (trace_ovf.c) a check of the slot's
 * overflow word goes before the count.  A block with nothing for the
 * mix but its instructions (no FP instruction, no extra) has no count
 * unless every instruction is to be counted (T->count_all): its runs
 * are not known then (nocnt; the hint store keeps it as translated).
 * Its branch leaves through exits
 * (0: taken, 1: falls through) that trap until their target has a copy,
 * then are linked to it (trace_link.c); indirect branches and returns go
 * to the chunk's lookup routine.  A system call runs from the copy, with
 * fast system calls (trace_sys.c) after a look-up of the slot's map.
 *
 * A block with masked AVX-512 FP (opmasks k1..k7) counts its active
 * lanes, which only the opmask registers say: its copy has no count and
 * its exits are never linked; each run ends at a trap in the cache (an
 * exit's stub, or, for an indirect branch or return, a trap in the
 * lookup routine's miss state instead of the routine), where the tracer
 * counts it as the stopping path did (pft_count_block, the opmasks read
 * then: a block that writes an opmask it uses is stepped, so they are
 * the ones its instructions used).  No int3 goes into the program's
 * code for it.  With overflow asked its copy checks first, lowering
 * nothing, that the next crossing is beyond its weight with every lane
 * active (pft_gen.ovf_near).
 *
 * Blocks that cannot be copied stay on the stopping path (PFT_NC_*):
 * masked FP ending at a system call, a branch the engine does not
 * emulate, the base register the cache borrows used by the block
 * (uses_gs), the flags popped, an operand out of reach.  Links, the lookup table and the counters:
 * trace_link.c, trace_harvest.c.
 */
#include <stdlib.h>
#include <string.h>

#include "trace_cache.h"
#include "trace_thread.h"
#include "trace_count.h"
#include "trace_engine.h"
#include "trace_wprot.h"
#include "trace_elf.h"

/* ------------------------------------------------------------------ */
/* Which blocks can be copied.                                         */

static int term_ok(const struct pft_block *b)
{
	if (pft_branch_emulable(b->term.term))
		return b->mode == PFT_BLK_BP || b->mask_step;
	return b->term.term == PFT_T_SYSCALL && b->mode == PFT_BLK_SYSCALL && b->term.len == 2;
}

int pft_xlate_check(struct pft_space *sp, pid_t tid, struct pft_block *b)
{
	if (b->nocache)
		return b->nocache;
	/* masked, ending at a system call: it may not come back to the
	 * copy's exit (exit_group), where the count is taken; the stopping
	 * path stops at the call itself, no int3 */
	if (b->has_mask && b->mode == PFT_BLK_SYSCALL)
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

#define XLATE_MAX 65536 /* bytes of one block's copy at most */

static int read_insns(struct pft_space *sp, pid_t tid, const struct pft_block *b, uint8_t *code,
		      struct pft_gen_insn *ii)
{
	size_t len = (size_t)(b->end - b->start);
	const struct pft_reloc *kept;

	if (!pft_block_bytes(sp, b, code) && pft_mem_read(sp, tid, b->start, code, len) != len)
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

/* A one-block loop's count loads through a base register set to 0
 * (docs/trace-engine.md, "The counter's load"; in other blocks it was
 * slower, measured): the register the flag-free count borrows (or
 * %rax, the one it keeps in the slot), else one the block leaves alone
 * (kept in the slot meanwhile: one it uses would go through memory at
 * every turn), unless the block stores to memory (that register's
 * store and load made a daxpy loop slower: the store ports); its
 * number + 1, 0: none. */
static uint8_t loop_base(const struct pft_gen *g, const struct pft_block *b, const struct pft_xblock *x, int seq)
{
	static const uint8_t pick[] = { 2, 1, 0, 3, 6, 7, 5, 8, 9, 10, 11, 14, 15, 13, 12 };
	const struct pft_insn *t = &b->term;
	uint32_t used = 0;
	int stores = 0;

	if (x->masked || x->ovf_w || t->ind || t->target != b->start ||
	    (t->term != PFT_T_JCC && t->term != PFT_T_JMP && t->term != PFT_T_LOOP))
		return 0;
	if (g->inc_reg)
		return g->inc_reg;
	if (seq) /* through %rax, saved and loaded back either way */
		return 1;
	for (uint32_t i = 0; i < b->ninsts; i++)
		used |= pft_reloc_gprs(g->ii[i].bytes, g->ii[i].r.len, &stores);
	if (stores)
		return 0;
	for (size_t k = 0; k < sizeof pick; k++)
		if (!(used & (1u << pick[k])))
			return (uint8_t)(pick[k] + 1);
	return 0;
}

/* A one-block jcc loop's copy emitted twice, one count per two runs
 * (docs/trace-engine.md, "Cheaper counting"): not a masked block (no
 * count) nor under overflow (one check a run), and the second half's
 * `addq $2` only where the instruction after it rewrites CF as well
 * (the flag-free forms add 2 with `lea`). */
static uint8_t unroll_loop(const struct pft_gen *g, const struct pft_block *b, const struct pft_xblock *x, int seq)
{
	const struct pft_insn *t = &b->term;

	if (x->masked || x->ovf_w || t->ind || t->term != PFT_T_JCC || t->target != b->start || b->ninsts < 2)
		return 0;
	return (uint8_t)(seq || g->inc_reg || g->ii[x->inc_at].r.kills_cf);
}

static int has_extra(const struct pft_block *b)
{
	for (int k = 0; k < PFLOPS_NEXTRA; k++)
		if (b->extra[k])
			return 1;
	return 0;
}

/* What b's copy does (into g and x: the count's place, the overflow
 * check, the exits; the arch writes it); 0 or a PFT_NC_* reason. */
static int plan(struct pft_gen *g, const struct pft_block *b, uint32_t id, struct pft_xblock *x, int ovf, int all)
{
	const struct pft_insn *t = &b->term;
	const struct pft_gen_insn *ii = g->ii;
	uint32_t n = b->ninsts;
	uint64_t next = b->last + t->len;
	int seq = 1;

	x->inc_at = 0;
	x->ovf_w = 0;
	x->masked = b->has_mask;
	/* nothing of it in the mix but instructions: no count, unless all
	 * are asked for (the count's bytes cost the program more than its
	 * memory operation: docs/trace-engine.md, "Counting only what
	 * FLOPs need") */
	x->nocnt = !x->masked && !all && !b->nfp && !has_extra(b);
	g->no_count = x->masked || x->nocnt;
	g->ind_trap = x->masked;
	g->ovf_near = 0;
	g->inc_reg = 0;
	if (x->nocnt) {
		x->inc_at = n; /* (a signal's correction takes nothing back) */
		seq = 0;
	} else if (x->masked) { /* counted by the tracer at the end of each run */
		x->inc_at = n;
		seq = 0;
		if (ovf && b->ovf_sum >= INT32_MAX)
			return PFT_NC_OVF;
		if (ovf)
			g->ovf_near = (uint32_t)b->ovf_sum;
	} else if (ovf && b->ovf_sum) {
		/* overflow: the check before the counter's increment, before
		 * an instruction that sets the flags the increment does (CF
		 * is saved around it unless that one sets CF too: dec; jnz
		 * loops), with at most the guard's weight before it */
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
		/* no flag writer: a register an instruction overwrites
		 * serves the flag-free count, so %rax is not saved */
		for (uint32_t i = 0; seq && i + 1 < n; i++)
			if (ii[i].r.dead_reg) {
				x->inc_at = i;
				g->inc_reg = ii[i].r.dead_reg;
				seq = 0;
			}
	}
	for (uint32_t i = 0; i + 1 < n; i++) {
		if (ii[i].r.uses_gs)
			return PFT_NC_GS;
		if (ii[i].r.pops_flags) /* the step flag: stepped at the original */
			return PFT_NC_MODE;
	}
	if (ii[n - 1].r.uses_gs)
		return PFT_NC_GS;

	/* exit 0: where the branch goes, exit 1: where it falls through */
	x->nex = 0;
	switch (t->term) {
	case PFT_T_JCC:
	case PFT_T_LOOP:
	case PFT_T_JRCXZ:
		x->ex[0].target = t->target;
		x->ex[1].target = next;
		x->nex = 2;
		break;
	case PFT_T_SYSCALL:
		x->ex[0].target = next;
		x->nex = 1;
		break;
	case PFT_T_JMP:
	case PFT_T_CALL:
		if (t->ind == 0) {
			x->ex[0].target = t->target;
			x->nex = 1;
		}
		break;
	default:
		break;
	}
	g->n = n;
	g->term = t;
	g->next = next;
	g->cnt = PFT_SLOT_CNT + 8 * id;
	g->inc_first = (uint8_t)seq;
	g->cnt_base = x->nocnt ? 0 : loop_base(g, b, x, seq);
	g->unroll = (uint8_t)(g->unroll && !x->nocnt && unroll_loop(g, b, x, seq));
	g->inc_at = x->inc_at;
	g->ovf_w = x->ovf_w;
	g->ovf_cf = x->ovf_cf;
	g->nex = x->nex;
	return 0;
}

/* The exit whose jump ends copy x's hot part, not yet linked; -1: none
 * (its last jump is then linked, or not an exit's) */
static int last_jump(const struct pft_xblock *x)
{
	for (int k = 0; k < x->nex; k++)
		if (x->ex[k].site + 4 == x->size)
			return x->ex[k].to ? -1 : k;
	return -1;
}

/* a process's cache filled with n (ids, MiB): the report names the
 * fewest (st.full_ids, st.full_copy_mib) */
static void note_full(uint64_t *least, uint64_t n)
{
	if (!*least || n < *least)
		*least = n;
}

/* When the chunk's last copy ends in a jump to start, not yet linked:
 * 1 + the most dead bytes before start's copy that its link can turn
 * into one nop with the jump (pft_arch_link: the opcode at byte o of
 * its 8-byte word, the nop within it); else 0.  Translation ahead makes
 * a fall-through next (ahead_next), so this is the common case. */
static uint8_t falls_here(const struct pft_chunk *ch, uint64_t start)
{
	const struct pft_xblock *p = ch->nxb ? ch->xb[ch->nxb - 1] : NULL;
	int k = p ? last_jump(p) : -1;
	unsigned o;

	if (k < 0 || p->dead || p->masked || p->addr + p->size != ch->addr + ch->used || p->ex[k].target != start)
		return 0;
	o = (unsigned)((p->addr + p->ex[k].site - 1) & 7);
	return o <= 3 ? (uint8_t)(4 - o) : 0;
}

/* The copy of b at g->base into g->buf, its parts into x; 0 or a
 * PFT_NC_* reason. */
static int generate(struct pft_gen *g, const struct pft_block *b, uint32_t id, struct pft_xblock *x, int ovf,
		    int sysfast, int all)
{
	int why = plan(g, b, id, x, ovf, all);

	if (why)
		return why;
	g->sysfast = (uint8_t)sysfast;
	g->ibl = x->ch->ibl.entry;
	g->ibl_miss = x->ch->sp->arena->region ? 0 : x->ch->ibl.miss;
	/* masked copies keep their int3s: each run is counted there */
	g->freq = x->ch->ibl.req && !x->ch->sp->arena->freq_off && !x->masked;
	g->req = x->ch->ibl.req;
	g->chunk = x->ch->addr;
	switch (pft_arch_gen_block(g)) {
	case PFT_GEN_OK:
		break;
	case PFT_GEN_MODE:
		return PFT_NC_MODE;
	default:
		return PFT_NC_REACH;
	}
	for (int k = 0; k < x->nex; k++) {
		x->ex[k].site = g->site[k];
		x->ex[k].stub = g->stub[k];
	}
	x->ovf_stub = g->ovf_stub;
	x->mtrap = g->ind_trap_at;
	x->sys_trap = g->sys_trap;
	x->sys_trap2 = g->sys_trap2;
	x->lookup = g->lookup;
	x->fstub = g->freq;
	return 0;
}

static int add_xb(struct pft_chunk *ch, struct pft_xblock *x)
{
	if (ch->nxb == ch->xb_cap) {
		size_t nc = ch->xb_cap ? 2 * ch->xb_cap : 64;
		struct pft_xblock **n = realloc(ch->xb, nc * sizeof *n);
		uint32_t(*k)[2];
		if (!n)
			return -1;
		ch->xb = n;
		if (!(k = realloc(ch->xk, nc * sizeof *k)))
			return -1;
		ch->xk = k;
		ch->xb_cap = nc;
	}
	pft_chunk_xb_add(ch, x);
	return 0;
}

/* One translation's buffers, kept by the tracer (a malloc and a free
 * of each, per block, were 3% of a warm numpy run's hinted
 * translation): the copy, the block's bytes and their instructions,
 * for blocks up to XS_INSTS instructions (longer ones malloc theirs). */
#define XS_INSTS 512
struct xscratch {
	uint8_t out[XLATE_MAX];
	uint8_t code[XS_INSTS * PFT_INSN_MAX + 16];
	struct pft_gen_insn ii[XS_INSTS];
	/* the copy's points (pft_gen.pt): copied into the pool, the array
	 * kept (a malloc, a realloc and a free a copy were 3% of a cold
	 * run's tracer) */
	struct pft_xpoint *pt;
	int pt_cap;
};

void pft_xlate_free(struct pft_tracer *T)
{
	struct xscratch *xs = (struct xscratch *)(void *)T->xbuf;

	if (xs)
		free(xs->pt);
	free(xs);
	T->xbuf = NULL;
}

uint64_t pft_xlate(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b)
{
	struct pft_space *sp = t->sp;
	struct pft_arena *a = sp->arena;
	size_t len = (size_t)(b->end - b->start);
	struct xscratch *xs = NULL;
	uint8_t *code = NULL;
	struct pft_gen_insn *ii = NULL;
	struct pft_xblock xb = { 0 }, *x = &xb, *px;
	struct pft_xpoint *pt;
	struct pft_chunk *ch;
	struct pft_gen g = { 0 };
	uint8_t cold[256];
	uint64_t lo = b->start, hi = b->end;
	int why, big = 0;
	int64_t id = -1;

	if (b->x) /* a dropped block's copy is never run again */
		return b->x->dead ? 0 : b->x->addr;
	if (!a || pft_xlate_check(sp, t->tid, b))
		return 0;
	if ((id = pft_id_alloc(T, sp)) < 0) {
		b->nocache = PFT_NC_FULL;
		note_full(&T->st.full_ids, a->max_ids);
		return 0;
	}
	if (!T->xbuf && !(T->xbuf = calloc(1, sizeof *xs)))
		goto out;
	xs = (struct xscratch *)(void *)T->xbuf;
	g.pt = xs->pt;
	g.pt_cap = xs->pt_cap;
	big = b->ninsts > XS_INSTS || len > sizeof xs->code - 16;
	code = big ? malloc(len + 16) : xs->code;
	ii = big ? malloc(b->ninsts * sizeof *ii) : xs->ii;
	g.buf = xs->out; /* kept: a copy is made per block */
	g.cap = XLATE_MAX;
	g.cbuf = cold;
	g.ccap = sizeof cold;
	g.ii = ii;
	g.unroll = (uint8_t)T->unroll;
	if (!code || !ii)
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
	/* (an unrolled loop's copy: twice the block, twice the count) */
	ch = pft_arena_chunk(T, t, lo, hi, len * (b->term.target == b->start ? 4 : 2) + 256);
	if (!ch && T->noinject)
		goto out; /* a new chunk needs a stopped thread: later */
	if (!ch) {
		b->nocache = hi - lo > (1u << 30) ? PFT_NC_REACH : PFT_NC_FULL;
		/* a new chunk is injected: none after seccomp */
		if (b->nocache == PFT_NC_FULL && sp->no_inject && a->nchunks < a->max_chunks)
			b->nocache = PFT_NC_NOINJ;
		if (b->nocache == PFT_NC_FULL && a->nchunks >= a->max_chunks)
			note_full(&T->st.full_copy_mib, pft_arena_copy_bytes(a) >> 20);
		goto out;
	}
	x->ch = ch;
	x->b = b;
	x->id = (uint32_t)id;
	g.base = ch->addr + ch->used;
	g.room = falls_here(ch, b->start);
	g.cold_top = ch->addr + ch->cold;
	why = generate(&g, b, x->id, x, pft_ovf_on(T) && pft_ovf_block(T, sp, b), T->sysfast,
		       T->count_all || T->hint_learn);
	if (why || g.lead + g.len + g.clen > ch->cold - ch->used) {
		b->nocache = why ? why : PFT_NC_FULL;
		goto out;
	}
	x->addr = g.base + g.lead;
	x->size = (uint32_t)g.len;
	/* (no cold part: where it would be, for pft_xlate_find's order) */
	x->cold = (uint32_t)(g.cold_top - g.clen - x->addr);
	x->csize = (uint32_t)g.clen;
	x->npt = g.npt;
	x->learn = (uint8_t)T->hint_learn;
	/* into the space's pool with the block, its points to their size */
	px = pft_pool_alloc(sp, sizeof *px);
	pt = px ? pft_pool_alloc(sp, (size_t)(g.npt ? g.npt : 1) * sizeof *pt) : NULL;
	if (pt) {
		memcpy(pt, g.pt, (size_t)g.npt * sizeof *pt);
		x->pt = pt;
		x->pooled = 1;
	} else if ((px = malloc(sizeof *px))) {
		sp->blk_heap = 1;
		x->pt = g.pt;
		g.pt = NULL;
	} else {
		goto out;
	}
	*px = *x;
	x = px;
	if (add_xb(ch, x)) {
		b->nocache = PFT_NC_FULL;
		if (!x->pooled) {
			g.pt = x->pt;
			free(x);
		}
		goto out;
	}
	pft_chunk_ready(ch, ch->used + g.lead + g.len, ch->cold - g.clen);
	memset(ch->mem + ch->used, 0xcc, g.lead);
	memcpy(ch->mem + ch->used + g.lead, g.buf, g.len);
	memcpy(ch->mem + ch->cold - g.clen, g.cbuf, g.clen);
	ch->used += g.lead + g.len;
	ch->cold -= g.clen;
	if (x->ovf_w && x->ovf_pre > sp->ovf_maxpre)
		sp->ovf_maxpre = x->ovf_pre;
	pft_pub_block(T, sp, x->id, b);
	a->ids[x->id] = b;
	id = -1;
	b->x = x;
	pft_link_new(sp, x, &T->st);
	if (sp->want_out)
		pft_want_note(sp, t->tid, b->start);
	T->st.cache_blocks++;
	T->st.cache_unrolled += g.unroll;
	T->st.cache_nocount += x->nocnt;
	T->st.cache_bytes += g.lead + g.len + g.clen;
out:
	if (id >= 0) /* no copy counts with it */
		pft_id_free(a, (uint32_t)id);
	if (big) {
		free(code);
		free(ii);
	}
	if (xs) { /* (NULL: given to the copy) */
		xs->pt = g.pt;
		xs->pt_cap = g.pt ? g.pt_cap : 0;
	} else {
		free(g.pt);
	}
	return b->x ? b->x->addr : 0;
}

uint64_t pft_xlate_tramp(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, uint64_t *back)
{
	uint8_t code[16], buf[64];
	struct pft_gen_insn in;
	struct pft_chunk *ch;
	uint64_t lo = b->start, hi = b->start + 16, base;
	size_t n;

	if (b->tramp) {
		*back = b->tramp_back;
		return b->tramp;
	}
	if (!t->sp->arena)
		return 0;
	n = pft_mem_read(t->sp, t->tid, b->start, code, sizeof code);
	if (!n || pft_reloc_decode(code, n, b->start, &in.r))
		return 0;
	if (in.r.rip_rel) {
		lo = in.r.rip_target < lo ? in.r.rip_target : lo;
		hi = in.r.rip_target + 64 > hi ? in.r.rip_target + 64 : hi;
	}
	ch = pft_arena_chunk(T, t, lo, hi, sizeof buf);
	if (!ch)
		return 0;
	base = ch->addr + ch->used;
	in.bytes = code;
	in.addr = b->start;
	n = pft_arch_gen_tramp(buf, sizeof buf, base, &in, back);
	if (!n)
		return 0;
	memcpy(ch->mem + ch->used, buf, n);
	ch->used = (ch->used + n + 15) & ~(size_t)15;
	b->tramp = base;
	b->tramp_back = *back;
	return b->tramp;
}

/* The copy whose cold part holds addr: the cold parts go down as the
 * copies go up, so in ch->xb (copies in address order) they are in
 * falling order: the first one that starts at or below addr. */
static struct pft_xblock *find_cold(const struct pft_chunk *ch, uint64_t addr)
{
	size_t lo = 0, hi = ch->nxb;
	uint64_t off = addr - ch->addr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ch->xk[mid][1] > off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ch->nxb || addr - (ch->xb[lo]->addr + ch->xb[lo]->cold) >= ch->xb[lo]->csize)
		return NULL;
	return ch->xb[lo];
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
	if (addr >= ch->addr + ch->cold) {
		x = find_cold(ch, addr);
		if (!x)
			return NULL;
		goto points;
	}
	/* the last copy starting at or before addr, if addr is in it */
	hi = ch->nxb;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ch->xk[mid][0] <= addr - ch->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - ch->xb[lo - 1]->addr >= ch->xb[lo - 1]->size)
		return NULL;
	x = ch->xb[lo - 1];
points:
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

/* one more block for pft_xlate_ahead: its copy (new: *fresh), or NULL */
static struct pft_xblock *ahead_one(struct pft_tracer *T, struct pft_thr *t, uint64_t pc, int *fresh)
{
	struct pft_block *d = pft_block_get(t->sp, t->tid, pc, 0, &T->st.blocks_decoded);
	int was;

	*fresh = 0;
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
	*fresh = 1;
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

/* A block that may run soon: where `from` goes (its exit k, or
 * AHEAD_RET: the return site of its call, AHEAD_SLOT: the target in
 * its PLT slot), with the chance p (of AHEAD_ONE) that it runs once the
 * new block has: the product of its way's edges' chances. */
#define AHEAD_ONE 65536u
#define AHEAD_RET (-1)
#define AHEAD_SLOT (-2)
#define AHEAD_MIN (AHEAD_ONE / 8)
#define AHEAD_FAR_BACK 65536u /* bytes back: cold parts (edge_chance) */
#define AHEAD_COLD 8u	      /* their chance, of 256: under AHEAD_MIN */
struct ahead_cand {
	uint32_t p;
	int k;
	struct pft_block *from;
	uint64_t pc;
};

/* The chance (of 256) that a block's successor runs when the block has,
 * as measured cold (blocks translated ahead that then ran, by the edge
 * that reached them): a conditional branch falls through 89 to 91% of
 * the time on numpy solve and python3 imports, 78% in gcc's cc1, takes
 * a forward branch 48 to 50% (cc1 67%), a backward one 22 to 26% (cc1
 * 65%; a loop's head ran before its body: one that did not is mostly
 * code that does not run); direct jumps, calls, return sites, PLT
 * targets and the code after a system call run 94 to 100% (a little
 * below 1 here: nearer blocks first).  Between the two. */
static uint32_t edge_chance(const struct pft_block *c, int k, uint64_t to)
{
	int cond = c->term.term == PFT_T_JCC || c->term.term == PFT_T_LOOP || c->term.term == PFT_T_JRCXZ;

	if (k < 0) /* a return site, a PLT target */
		return 248;
	/* a jump (taken, not a call) that far back leaves its function for
	 * code the compiler split off as unlikely (gcc's .text.unlikely and
	 * `foo.cold` parts, laid out before the hot text): of those
	 * translated ahead 1 to 7% ran (numpy solve, python3 imports), none
	 * of cc1's */
	if (k == 0 && (cond || c->term.term == PFT_T_JMP) && to + AHEAD_FAR_BACK <= c->last)
		return AHEAD_COLD;
	if (cond)
		return k ? 225 : to > c->last ? 140 : 80;
	return 248;
}

static void heap_push(struct ahead_cand *h, int *n, int cap, struct ahead_cand c)
{
	int i = *n;

	if (i == cap) /* full: the least likely go */
		return;
	(*n)++;
	for (; i > 0 && h[(i - 1) / 2].p < c.p; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = c;
}

static struct ahead_cand heap_pop(struct ahead_cand *h, int *n)
{
	struct ahead_cand top = h[0], last = h[--*n];
	int i = 0;

	for (;;) {
		int c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1].p > h[c].p)
			c++;
		if (h[c].p <= last.p)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
	return top;
}

/* the candidates after c (run with chance p): its exits not yet linked,
 * the return site of a call, the target in a PLT slot */
static void ahead_push(struct pft_thr *t, struct pft_block *c, uint32_t p, struct ahead_cand *h, int *n, int cap)
{
	const struct pft_xblock *x = c->x;
	uint64_t tgt;

	for (int k = 0; k < x->nex; k++)
		if (!x->ex[k].to)
			heap_push(h, n, cap,
				  (struct ahead_cand){ p * edge_chance(c, k, x->ex[k].target) / 256, k, c,
						       x->ex[k].target });
	if (c->term.term == PFT_T_CALL) {
		tgt = c->last + c->term.len;
		heap_push(h, n, cap,
			  (struct ahead_cand){ p * edge_chance(c, AHEAD_RET, tgt) / 256, AHEAD_RET, c, tgt });
	}
	if ((tgt = slot_target(t, c)))
		heap_push(h, n, cap,
			  (struct ahead_cand){ p * edge_chance(c, AHEAD_SLOT, tgt) / 256, AHEAD_SLOT, c, tgt });
}

/* The target of c's last jump (mostly its fall-through), when not yet
 * translated and likely enough: made next, before the heap's best, its
 * copy lands right after c's and the link turns that jump into a nop
 * (pft_arch_link), so the copies fall through where the program does
 * (numpy solve cold: 49,000 of 103,000 such jumps, 7,500 before). */
static struct ahead_cand ahead_next(struct pft_block *c, uint32_t p)
{
	const struct pft_xblock *x = c->x;
	int k = last_jump(x);
	uint32_t q = k < 0 ? 0 : p * edge_chance(c, k, x->ex[k].target) / 256;

	return q >= AHEAD_MIN ? (struct ahead_cand){ q, k, c, x->ex[k].target } : (struct ahead_cand){ 0 };
}

void pft_xlate_ahead(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, int budget)
{
	struct ahead_cand h[4 * PFT_AHEAD_MAX + 8], nx;
	uint32_t nids = pft_ids_used(t->sp->arena);
	const uint32_t AHEAD_IDS = t->sp->arena->max_ids - t->sp->arena->max_ids / 8;
	int n = 0;

	/* fewer as the ids fill, none in their last eighth: those stay
	 * for blocks that run (a full cache sends the rest to the stopping
	 * path).  gcc's cc1 decodes about 250,000 blocks: with 32
	 * breadth-first it stays clear of the end, with 128 it ran out;
	 * stopping at 3/4 instead cost it 60% more stops; asking a higher
	 * chance as they fill (up to 1 at the end, quadratic) 7%. */
	if (nids >= AHEAD_IDS || !b->x || b->x->dead)
		return;
	budget = (int)((int64_t)budget * (AHEAD_IDS - nids) / AHEAD_IDS);
	/* most likely first: a block that runs saves a stop (about 14 us
	 * of the tracer's and the program's CPU), one that does not costs
	 * its decode and translation (about 2.4 us); below AHEAD_MIN the
	 * stop it may save is worth less than the work */
	ahead_push(t, b, AHEAD_ONE, h, &n, (int)(sizeof h / sizeof *h));
	nx = ahead_next(b, AHEAD_ONE);
	while ((n > 0 || nx.from) && budget > 0) {
		struct ahead_cand c = nx.from ? nx : heap_pop(h, &n);
		struct pft_xblock *x = c.from->x, *to;
		int fresh;

		nx.from = NULL;
		if (c.p < AHEAD_MIN)
			break;
		if (!x || x->dead)
			continue;
		if (c.k >= 0 && x->ex[c.k].to)
			continue; /* linked meanwhile (the target's copy came) */
		/* the waiting exits' slot and a return site's lookup-table
		 * bucket (a miss each: the 1 MiB table is probed at random),
		 * asked for before the decode and translation */
		pft_link_prefetch(t->sp->arena, c.pc, c.k < 0);
		if (!(to = ahead_one(T, t, c.pc, &fresh)))
			continue;
		if (c.k >= 0 && !x->masked) { /* (a masked copy's exits trap) */
			if (!x->ex[c.k].to) {
				pft_xlate_link(&T->st, x, c.k, to);
			}
		} else if (c.k < 0) { /* where the lookup routine will look */
			pft_table_insert(t->sp->arena, c.pc, to->addr);
		}
		if (fresh) {
			budget--;
			ahead_push(t, to->b, c.p, h, &n, (int)(sizeof h / sizeof *h));
			nx = ahead_next(to->b, c.p);
		}
	}
}
