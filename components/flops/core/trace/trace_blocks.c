/*
 * trace_blocks.c: the basic-block cache.  A block is decoded once, from
 * its first address up to the first instruction that changes rip, and
 * remembers its FP instructions so that an execution of it is counted by
 * a table walk instead of a decode.  Self-modifying code is not noticed.
 */
#include <stdlib.h>
#include <string.h>

#include "trace_internal.h"

#define MAX_INSTS 4096		/* longer straight-line code is stepped */
#define CHUNK 256

static size_t slot(uint64_t a, size_t cap)
{
	a ^= a >> 29;
	a *= 0xbf58476d1ce4e5b9ULL;
	a ^= a >> 32;
	return (size_t)a & (cap - 1);
}

static void block_free(struct pflops_block *b)
{
	free(b->offs);
	free(b->fp);
	free(b);
}

void pflops_block_free_all(struct pflops_space *sp)
{
	for (size_t i = 0; sp->blk_tab && i < sp->blk_cap; i++)
		for (struct pflops_block *b = sp->blk_tab[i], *n; b; b = n) {
			n = b->next;
			block_free(b);
		}
	sp->blk_n = 0;
}

static int grow(struct pflops_space *sp)
{
	size_t nc = sp->blk_cap * 2;
	struct pflops_block **nt = calloc(nc, sizeof *nt);

	if (!nt)
		return PFLOPS_ENOMEM;
	for (size_t i = 0; i < sp->blk_cap; i++)
		for (struct pflops_block *b = sp->blk_tab[i], *n; b; b = n) {
			size_t s = slot(b->start, nc);
			n = b->next;
			b->next = nt[s];
			nt[s] = b;
		}
	free(sp->blk_tab);
	sp->blk_tab = nt;
	sp->blk_cap = nc;
	return 0;
}

/* Decode the block at pc.  Never fails except for memory: unreadable or
 * undecodable bytes give a one-instruction block that is single-stepped
 * (the program will fault there, as it would untraced). */
static struct pflops_block *decode(struct pflops_space *sp, pid_t tid,
				   uint64_t pc, int force_step)
{
	struct pflops_block *b = calloc(1, sizeof *b);
	uint8_t buf[CHUNK];
	size_t have = 0, pos = 0;	/* buf holds [pc+base, pc+base+have) */
	uint64_t base = 0, off = 0;
	size_t cap_i = 16, cap_f = 4;
	uint8_t kw = 0, ku = 0;

	if (!b)
		return NULL;
	b->start = pc;
	b->offs = malloc(cap_i * sizeof *b->offs);
	b->fp = malloc(cap_f * sizeof *b->fp);
	if (!b->offs || !b->fp)
		goto oom;

	for (;;) {
		struct pflops_insn in;

		if (have - pos < 16) {	/* refill so one insn always fits */
			memmove(buf, buf + pos, have - pos);
			base += pos;
			have -= pos;
			pos = 0;
			have += pflops_mem_read(sp, tid, pc + base + have,
						buf + have, CHUNK - have);
		}
		if (have == pos || pflops_decode(buf + pos, have - pos, pc + off, &in)) {
			break;
		}
		if (b->ninsts == cap_i) {
			uint32_t *n = realloc(b->offs, 2 * cap_i * sizeof *n);
			if (!n)
				goto oom;
			b->offs = n;
			cap_i *= 2;
		}
		b->offs[b->ninsts++] = (uint32_t)off;
		if (in.fp) {
			if (b->nfp == cap_f) {
				struct pflops_fpent *n =
					realloc(b->fp, 2 * cap_f * sizeof *n);
				if (!n)
					goto oom;
				b->fp = n;
				cap_f *= 2;
			}
			b->fp[b->nfp++] = (struct pflops_fpent){
				.idx = b->ninsts - 1, .prec = in.prec,
				.width = in.width, .op = in.op,
				.lanes = in.lanes, .mask_reg = in.mask_reg,
				.lanes_per_bit = in.lanes_per_bit };
			if (in.mask_reg) {
				b->has_mask = 1;
				ku |= (uint8_t)(1u << in.mask_reg);
			}
		}
		if (in.extra >= 0)
			b->extra[in.extra]++;
		kw |= in.kwrites;
		b->last = pc + off;
		pos += in.len;
		off += in.len;
		if (in.term != PFLOPS_T_NONE) {
			b->term = in;
			break;
		}
		if (b->ninsts == MAX_INSTS)
			break;
	}

	if (b->ninsts == 0) {	/* nothing decodable at pc */
		b->ninsts = 1;
		b->offs[0] = 0;
		b->last = pc;
		b->mode = PFLOPS_BLK_STEP;
		return b;
	}
	switch (b->term.term) {
	case PFLOPS_T_JCC: case PFLOPS_T_JMP: case PFLOPS_T_CALL:
	case PFLOPS_T_RET: case PFLOPS_T_LOOP: case PFLOPS_T_JRCXZ:
		b->mode = PFLOPS_BLK_BP;
		break;
	case PFLOPS_T_SYSCALL:
		b->mode = PFLOPS_BLK_SYSCALL;
		break;
	default:		/* OTHER, cap reached, bad bytes ahead */
		b->mode = PFLOPS_BLK_STEP;
		break;
	}
	/* A mask register written inside the block has another value at the
	 * masked instruction than at the block's end, where we read it. */
	if ((kw & ku) || (force_step && b->mode == PFLOPS_BLK_BP))
		b->mode = PFLOPS_BLK_STEP;
	return b;
oom:
	block_free(b);
	return NULL;
}

struct pflops_block *pflops_block_get(struct pflops_space *sp, pid_t tid,
				      uint64_t pc, int force_step,
				      uint64_t *decoded)
{
	size_t s = slot(pc, sp->blk_cap);
	struct pflops_block *b;

	for (b = sp->blk_tab[s]; b; b = b->next)
		if (b->start == pc)
			return b;
	b = decode(sp, tid, pc, force_step);
	if (!b)
		return NULL;
	if (sp->region)
		b->region_entry = (uint8_t)pflops_region_is_entry(sp->region,
								  sp->pid, pc);
	if (decoded)
		(*decoded)++;
	if (2 * (sp->blk_n + 1) > sp->blk_cap && grow(sp) == 0)
		s = slot(pc, sp->blk_cap);
	b->next = sp->blk_tab[s];
	sp->blk_tab[s] = b;
	sp->blk_n++;
	return b;
}

int pflops_block_index(const struct pflops_block *blk, uint64_t pc)
{
	uint64_t off;
	uint32_t lo = 0, hi = blk->ninsts;

	if (pc < blk->start)
		return -1;
	off = pc - blk->start;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (blk->offs[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < blk->ninsts && blk->offs[lo] == off ? (int)lo : -1;
}

static void count_fp(struct pflops_mix *m, const struct pflops_fpent *e,
		     const uint64_t *k)
{
	uint64_t act = e->lanes;

	m->insts[e->prec][e->width][e->op]++;
	m->lanes_full[e->prec][e->width][e->op] += e->lanes;
	if (e->mask_reg) {
		/* zeroing and merging alike: only active lanes compute */
		unsigned bits = e->lanes / e->lanes_per_bit;
		uint64_t sel = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
		m->masked[e->prec][e->width][e->op]++;
		act = k ? (uint64_t)__builtin_popcountll(k[e->mask_reg] & sel) *
			  e->lanes_per_bit : e->lanes;
	}
	m->lanes_active[e->prec][e->width][e->op] += act;
}

void pflops_block_count(struct pflops_mix *m, const struct pflops_block *blk,
			uint32_t n, const uint64_t *k)
{
	if (n > blk->ninsts)
		n = blk->ninsts;
	m->total_insts += n;
	for (uint32_t i = 0; i < blk->nfp && blk->fp[i].idx < n; i++)
		count_fp(m, &blk->fp[i], k);
	if (n == blk->ninsts)
		for (int x = 0; x < PFLOPS_NEXTRA; x++)
			m->extra[x] += blk->extra[x];
	/* a partial block's extras are dropped: they are rare and the
	 * partial case only arises when a signal interrupts a block */
}

void pflops_block_count_one(struct pflops_mix *m,
			    const struct pflops_block *blk, uint32_t idx,
			    const uint64_t *k)
{
	m->total_insts++;
	for (uint32_t i = 0; i < blk->nfp; i++)
		if (blk->fp[i].idx == idx)
			count_fp(m, &blk->fp[i], k);
	/* extras are per block; a stepped block adds them when it ends */
}
