/*
 * trace_link.c: what joins the code cache's copies.
 *
 *   links    a copy's exit jumps straight to the copy of its target once
 *            that is translated: its rel32 is rewritten by one aligned
 *            4-byte store in the tracer's mapping (threads running the
 *            copy see the old or the new jump, both valid); beyond a
 *            rel32, through the exit stub's far jump.  Undone when the
 *            target's code changes (pft_xlate_detach).
 *   lookup   indirect branches (ret, jmp/call through a register or
 *            memory) look their target up in a hash table the tracer
 *            fills at each miss, in code that leaves the flags alone.
 * What the copies count: trace_harvest.c; a forked child's copies:
 * trace_space.c.
 */
#include <stdlib.h>
#include <string.h>

#include "trace_emit.h"

/* ------------------------------------------------------------------ */
/* The lookup routine (one per chunk).                                 */

static uint32_t crc32c_u64(uint64_t v)
{
	uint32_t c = 0;

	for (int i = 0; i < 8; i++) {
		c ^= (uint8_t)(v >> (8 * i));
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & -(c & 1));
	}
	return c;
}

/* In: %rcx = target, the program's %rcx in the slot.  Hit: registers
 * back, jump to the copy.  Miss: int3 with the target in %rax and %rax,
 * %rcx, %rdx in the slot. */
size_t pft_ibl_emit(struct pft_chunk *ch, int region)
{
	uint8_t buf[256];
	struct emit e = { buf, 0, ch->addr, NULL, 0, 0, 0 };
	size_t j_exit = 0, j_miss, j_hit, probe;

	put(&e, (uint8_t[]){ 0x0f, 0x05 }, 2); /* syscall: for injection */
	while (e.n < 16)
		put8(&e, 0xcc);
	ch->ibl = here(&e);
	gs_mov(&e, 1, RDX, PFT_SLOT_RDX);
	gs_mov(&e, 1, RAX, PFT_SLOT_RAX);
	put(&e, (uint8_t[]){ 0x48, 0x89, 0xc8 }, 3); /* mov %rcx,%rax */
	if (region) {
		/* leave when %rsp > rsp0: the top byte of rsp - rsp0 - 1 is 0 */
		gs_mov(&e, 0, RDX, PFT_SLOT_RSP0);
		put(&e, (uint8_t[]){ 0x48, 0xf7, 0xd2 }, 3);	   /* not %rdx */
		put(&e, (uint8_t[]){ 0x48, 0x8d, 0x14, 0x14 }, 4); /* lea (%rsp,%rdx),%rdx */
		put(&e, (uint8_t[]){ 0x48, 0x0f, 0xca }, 3);	   /* bswap %rdx */
		put(&e, (uint8_t[]){ 0x0f, 0xb6, 0xca }, 3);	   /* movzbl %dl,%ecx */
		put(&e, (uint8_t[]){ 0xe3, 0x00 }, 2);		   /* jrcxz exit */
		j_exit = e.n - 1;
	}
	put(&e, (uint8_t[]){ 0xba, 0, 0, 0, 0 }, 5);		       /* mov $0,%edx */
	put(&e, (uint8_t[]){ 0xf2, 0x48, 0x0f, 0x38, 0xf1, 0xd0 }, 6); /* crc32q %rax,%rdx */
	put(&e, (uint8_t[]){ 0x0f, 0xb7, 0xd2 }, 3);		       /* movzwl %dx,%edx */
	put(&e, (uint8_t[]){ 0x48, 0x8d, 0x14, 0x12 }, 4);	       /* lea (%rdx,%rdx),%rdx */
	gs_mov(&e, 0, RCX, PFT_SLOT_TABLE);
	put(&e, (uint8_t[]){ 0x48, 0x8d, 0x14, 0xd1 }, 4); /* lea (%rcx,%rdx,8),%rdx */
	probe = e.n;
	put(&e, (uint8_t[]){ 0x48, 0x8b, 0x0a }, 3); /* mov (%rdx),%rcx */
	put(&e, (uint8_t[]){ 0xe3, 0x00 }, 2);	     /* jrcxz miss */
	j_miss = e.n - 1;
	put(&e, (uint8_t[]){ 0x48, 0xf7, 0xd1 }, 3);		 /* not %rcx */
	put(&e, (uint8_t[]){ 0x48, 0x8d, 0x4c, 0x01, 0x01 }, 5); /* lea 1(%rcx,%rax),%rcx */
	put(&e, (uint8_t[]){ 0xe3, 0x00 }, 2);			 /* jrcxz hit */
	j_hit = e.n - 1;
	put(&e, (uint8_t[]){ 0x48, 0x8d, 0x52, 0x10 }, 4); /* lea 16(%rdx),%rdx */
	put8(&e, 0xeb);					   /* jmp probe */
	put8(&e, (uint8_t)(probe - (e.n + 1)));
	buf[j_hit] = (uint8_t)(e.n - (j_hit + 1));
	put(&e, (uint8_t[]){ 0x48, 0x8b, 0x4a, 0x08 }, 4); /* mov 8(%rdx),%rcx */
	gs_mov(&e, 1, RCX, PFT_SLOT_TGT);
	gs_mov(&e, 0, RAX, PFT_SLOT_RAX);
	gs_mov(&e, 0, RCX, PFT_SLOT_RCX);
	gs_mov(&e, 0, RDX, PFT_SLOT_RDX);
	put(&e, (uint8_t[]){ 0x65, 0xff, 0x24, 0x25 }, 4); /* jmp *%gs:TGT */
	put32(&e, PFT_SLOT_TGT);
	buf[j_miss] = (uint8_t)(e.n - (j_miss + 1));
	ch->ibl_miss = here(&e);
	put8(&e, 0xcc);
	ch->ibl_exit = here(&e);
	if (region)
		buf[j_exit] = (uint8_t)(e.n - (j_exit + 1));
	put8(&e, 0xcc);
	ch->ibl_end = here(&e);
	while (e.n & 15)
		put8(&e, 0xcc);
	memcpy(ch->mem, buf, e.n);
	return e.n;
}

void pft_table_insert(struct pft_arena *a, uint64_t orig, uint64_t entry)
{
	uint64_t *t = (uint64_t *)a->table_mem;
	size_t h = crc32c_u64(orig) & 0xffff;

	/* the last slot always stays empty: the routine's probe ends */
	for (size_t i = h; i < PFT_TABLE_N + PFT_TABLE_OVER - 1; i++) {
		uint64_t o = __atomic_load_n(&t[2 * i], __ATOMIC_ACQUIRE);
		if (o == orig) {
			__atomic_store_n(&t[2 * i + 1], entry, __ATOMIC_RELEASE);
			return;
		}
		if (o == 0) {
			/* the copy's address first: a reader that sees the
			 * key sees its value */
			__atomic_store_n(&t[2 * i + 1], entry, __ATOMIC_RELEASE);
			__atomic_store_n(&t[2 * i], orig, __ATOMIC_RELEASE);
			return;
		}
	}
	/* full run: not inserted, the lookup traps, which is only slower */
}

static void table_remove(struct pft_arena *a, uint64_t entry)
{
	uint64_t *t = (uint64_t *)a->table_mem;

	for (size_t i = 0; i < PFT_TABLE_N + PFT_TABLE_OVER; i++)
		if (t[2 * i] && t[2 * i] != PFT_TOMB && t[2 * i + 1] == entry)
			__atomic_store_n(&t[2 * i], PFT_TOMB, __ATOMIC_RELEASE);
}

static uint8_t *tracer_addr(const struct pft_xblock *x, uint32_t off)
{
	return x->ch->mem + (x->addr - x->ch->addr) + off;
}

void pft_xlate_link(struct pft_xblock *from, int k, struct pft_xblock *to)
{
	struct pft_xexit *xe = &from->ex[k];
	uint64_t site = from->addr + xe->site;
	int64_t rel = (int64_t)(to->addr - (site + 4));

	if (xe->to || from->dead || to->dead)
		return;
	if (to->nin == to->in_cap) {
		int nc = to->in_cap ? 2 * to->in_cap : 4;
		void *n = realloc(to->in, (size_t)nc * sizeof *to->in);
		if (!n)
			return;
		to->in = n;
		to->in_cap = nc;
	}
	to->in[to->nin].from = from;
	to->in[to->nin].exit = k;
	to->nin++;
	if (!fits32(rel)) { /* through the stub's far jump */
		__atomic_store_n((uint64_t *)tracer_addr(from, xe->stub + 8), to->addr, __ATOMIC_RELEASE);
		rel = (int64_t)(from->addr + xe->stub + 2 - (site + 4));
	}
	__atomic_store_n((int32_t *)tracer_addr(from, xe->site), (int32_t)rel, __ATOMIC_RELEASE);
	xe->to = to;
}

static void unlink_exit(struct pft_xblock *from, int k)
{
	struct pft_xexit *xe = &from->ex[k];
	int32_t rel = (int32_t)(xe->stub - (xe->site + 4));

	__atomic_store_n((int32_t *)tracer_addr(from, xe->site), rel, __ATOMIC_RELEASE);
	xe->to = NULL;
}

void pft_xlate_detach(struct pft_space *sp, struct pft_xblock *x)
{
	if (x->dead)
		return;
	x->dead = 1;
	for (int i = 0; i < x->nin; i++)
		if (x->in[i].from->ex[x->in[i].exit].to == x)
			unlink_exit(x->in[i].from, x->in[i].exit);
	x->nin = 0;
	for (int k = 0; k < x->nex; k++)
		if (x->ex[k].to)
			unlink_exit(x, k);
	table_remove(sp->arena, x->addr);
}
