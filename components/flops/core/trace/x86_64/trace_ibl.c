/*
 * trace_ibl.c: the x86-64 code the cache's chunks start with (a
 * `syscall` for injection, the indirect-branch lookup routine, which
 * leaves the flags alone) and the rel32 patches that link a copy's exit
 * to another copy: one aligned 8-byte store in the tracer's mapping of
 * the word that holds the rel32 (trace_gen.c places every patched rel32
 * within one: rel_ok), so threads running the copy see the old or the
 * new jump, both valid; beyond a rel32, through the exit stub's far jump;
 * to the copy right after, a nop in place of the jump.
 */
#include <stdint.h>
#include <string.h>

#include "trace_emit.h"

_Static_assert(PFT_TABLE_N == PFT_TABLE_GROUP << 16 && PFT_TABLE_GROUP == 4,
	       "the lookup routine picks a group of 4 buckets with a 16-bit hash (movzwl, times 64 bytes)");

/* ------------------------------------------------------------------ */
/* The lookup routine (one per chunk).                                 */

/* CRC-32C, the crc32q instruction the lookup routine hashes with: the
 * tracer hashes each entry it inserts and each prefetch, and the
 * bitwise loop (64 steps) was 1.3% of a cold run's tracer.  The arena
 * is only made where the CPU has SSE4.2 (cpu_ok), and nothing hashes
 * without one. */
__attribute__((target("sse4.2"))) uint32_t pft_table_hash(uint64_t v)
{
	return (uint32_t)__builtin_ia32_crc32di(0, v);
}

size_t pft_table_bucket(uint64_t orig)
{
	return (size_t)(pft_table_hash(orig) & 0xffff) * PFT_TABLE_GROUP;
}

/* The lookup table's probe for the target in register key (RAX or R11):
 * hash it (%rdx, zeroed first), then walk the buckets from its group's
 * first (16 bits of hash times 64 bytes: no flag-free way masks 18) on (%rcx:
 * a bucket's key, 0: empty; compared without flags, ~k + key + 1 is 0
 * when k is key).  Clobbers %rcx and %rdx, leaves the flags alone; at a
 * hit %rdx points at the bucket.
 * *j_miss, *j_hit: the rel8 bytes of the jrcxz to an empty bucket and
 * of the one to the hit, for the caller to aim. */
void pft_emit_probe(struct emit *e, int key, size_t *j_miss, size_t *j_hit)
{
	uint8_t hi = key >= 8, lo = (uint8_t)(key & 7);
	size_t probe;

	put(e, (uint8_t[]){ 0xba, 0, 0, 0, 0 }, 5); /* mov $0,%edx */
	put(e, (uint8_t[]){ 0xf2, (uint8_t)(0x48 | hi), 0x0f, 0x38, 0xf1, (uint8_t)(0xd0 | lo) },
	    6);							      /* crc32q %key,%rdx */
	put(e, (uint8_t[]){ 0x0f, 0xb7, 0xd2 }, 3);		      /* movzwl %dx,%edx */
	put(e, (uint8_t[]){ 0x48, 0x8d, 0x14, 0xd5, 0, 0, 0, 0 }, 8); /* lea 0(,%rdx,8),%rdx */
	gs_mov(e, 0, RCX, PFT_SLOT_TABLE);
	put(e, (uint8_t[]){ 0x48, 0x8d, 0x14, 0xd1 }, 4); /* lea (%rcx,%rdx,8),%rdx */
	probe = e->n;
	put(e, (uint8_t[]){ 0x48, 0x8b, 0x0a }, 3); /* mov (%rdx),%rcx */
	put(e, (uint8_t[]){ 0xe3, 0x00 }, 2);	    /* jrcxz miss */
	*j_miss = e->n - 1;
	put(e, (uint8_t[]){ 0x48, 0xf7, 0xd1 }, 3); /* not %rcx */
	put(e, (uint8_t[]){ (uint8_t)(0x48 | hi << 1), 0x8d, 0x4c, (uint8_t)(lo << 3 | 1), 0x01 },
	    5);				      /* lea 1(%rcx,%key),%rcx */
	put(e, (uint8_t[]){ 0xe3, 0x00 }, 2); /* jrcxz hit */
	*j_hit = e->n - 1;
	put(e, (uint8_t[]){ 0x48, 0x8d, 0x52, 0x10 }, 4); /* lea 16(%rdx),%rdx */
	put8(e, 0xeb);					  /* jmp probe */
	put8(e, (uint8_t)(int8_t)((int64_t)probe - (int64_t)(e->n + 1)));
}

/* The target from %rcx into %rax, the program's %rax, %rdx into the slot
 * beside its %rcx: the state a probe starts in, and its miss's trap. */
void pft_emit_miss_state(struct emit *e)
{
	gs_mov(e, 1, RDX, PFT_SLOT_RDX);
	gs_mov(e, 1, RAX, PFT_SLOT_RAX);
	put(e, (uint8_t[]){ 0x48, 0x89, 0xc8 }, 3); /* mov %rcx,%rax */
}

/* A probe's hit (%rdx at the bucket): on to the copy, the program's
 * %rax, %rcx, %rdx back from the slot. */
void pft_emit_hit(struct emit *e)
{
	put(e, (uint8_t[]){ 0x48, 0x8b, 0x4a, 0x08 }, 4); /* mov 8(%rdx),%rcx */
	gs_mov(e, 1, RCX, PFT_SLOT_TGT);
	/* the program's registers back through a zeroed base: a load
	 * from %gs:disp32 right after a store there waits for it (about
	 * 1.6 ns on Zen 5), through a base register it does not */
	zero_reg(e, RAX);
	gs_mov_b(e, 0, RCX, RAX, PFT_SLOT_RCX);
	gs_mov_b(e, 0, RDX, RAX, PFT_SLOT_RDX);
	gs_mov_b(e, 0, RAX, RAX, PFT_SLOT_RAX);
	put(e, (uint8_t[]){ 0x65, 0xff, 0x24, 0x25 }, 4); /* jmp *%gs:TGT */
	put32(e, PFT_SLOT_TGT);
}

int pft_arch_probe_holds(const struct user_regs_struct *r, uint64_t lo, uint64_t hi)
{
	/* %rcx: the table from its load off the slot; %rdx: a bucket */
	return (r->rcx >= lo && r->rcx < hi) || (r->rdx >= lo && r->rdx < hi);
}

/* In: %rcx = target, the program's %rcx in the slot.  Hit: registers
 * back, jump to the copy.  Miss: int3 with the target in %rax and %rax,
 * %rcx, %rdx in the slot. */
/* The registers a futex call clobbers (and the routine uses), in the
 * order of their words at PFT_SLOT_Q_REGS. */
static const int q_regs[7] = { RAX, RCX, RDX, 6 /* rsi */, 7 /* rdi */, 10, R11 };

static void mov_imm32(struct emit *e, int reg, uint32_t v)
{
	if (reg >= 8)
		put8(e, 0x41);
	put8(e, (uint8_t)(0xb8 | (reg & 7)));
	put32(e, v);
}

/* Ask and wait (both request routines): Q_STATE = 1, the process's bell
 * rung (xchg; FUTEX_WAKE only when it was 0: else the tracer has not
 * looked yet), FUTEX_WAIT while Q_STATE is 1.  Clobbers rax rcx rdx rsi
 * rdi r10 r11; no flags. */
static void emit_ask(struct emit *e)
{
	size_t j_wait, wait;

	put(e, (uint8_t[]){ 0x65, 0xc7, 0x04, 0x25 }, 4); /* movl $1,%gs:Q_STATE */
	put32(e, PFT_SLOT_Q_STATE);
	put32(e, 1);
	gs_mov(e, 0, 7, PFT_SLOT_Q_BELL);
	mov_imm32(e, RAX, 1);
	put(e, (uint8_t[]){ 0x87, 0x07 }, 2); /* xchg %eax,(%rdi) */
	put(e, (uint8_t[]){ 0x89, 0xc1 }, 2); /* mov %eax,%ecx */
	put(e, (uint8_t[]){ 0xe3, 0x02 }, 2); /* jrcxz wake */
	put(e, (uint8_t[]){ 0xeb, 0x00 }, 2); /* jmp wait */
	j_wait = e->n - 1;
	mov_imm32(e, RAX, 202); /* wake: SYS_futex */
	mov_imm32(e, 6, 1);	/* FUTEX_WAKE (shared: the tracer maps it too) */
	mov_imm32(e, RDX, 1);
	put(e, (uint8_t[]){ 0x0f, 0x05 }, 2);
	e->buf[j_wait] = (uint8_t)(e->n - (j_wait + 1));
	wait = e->n;
	gs_mov(e, 0, 7, PFT_SLOT_Q_SELF);
	mov_imm32(e, RAX, 202);
	mov_imm32(e, 6, 0); /* FUTEX_WAIT while it is 1 */
	mov_imm32(e, RDX, 1);
	mov_imm32(e, 10, 0); /* no timeout */
	put(e, (uint8_t[]){ 0x0f, 0x05 }, 2);
	put(e, (uint8_t[]){ 0x65, 0x8b, 0x0c, 0x25 }, 4); /* mov %gs:Q_STATE,%ecx */
	put32(e, PFT_SLOT_Q_STATE);
	put(e, (uint8_t[]){ 0x48, 0x8d, 0x49, 0xff }, 4); /* lea -1(%rcx),%rcx */
	put8(e, 0xe3);					  /* jrcxz wait */
	put8(e, (uint8_t)(int8_t)((int64_t)wait - (int64_t)(e->n + 1)));
}

static void jmp_q_to(struct emit *e)
{
	put(e, (uint8_t[]){ 0x65, 0xff, 0x24, 0x25 }, 4); /* jmp *%gs:Q_TO */
	put32(e, PFT_SLOT_Q_TO);
}

/* The request routines (trace_freq.c).  No flag is changed (tests by
 * jrcxz, the bell rung by xchg), nothing goes below %rsp (the program's
 * red zone).
 *
 * An exit's (req), from its stub, which stored its offset in Q_ID:
 *	mov %rax..%r11, %gs:Q_REGS	 (req_saved: all in the slot)
 *	lea chunk(%rip), %rax; mov %rax, %gs:Q_CHUNK
 *	ask (emit_ask)
 *	mov %gs:Q_REGS, %rax..%r11; jmp *%gs:Q_TO
 * A lookup miss's (mreq), from the lookup routine's miss, which stored 1
 * in Q_ID; the target in %rax, the program's rax rcx rdx in the slot:
 *	mov %rax, %gs:Q_TGT
 *	mov %rsi %rdi %r10 %r11, %gs:Q_REGS+24..  (mreq_saved)
 *	ask
 *	those back, rax rcx rdx from the lookup's words; jmp *%gs:Q_TO
 *  mtrap_pre: mov %gs:Q_TGT, %rax; int3 (mtrap: the old miss, for
 *	an answer "the old way")
 * A thread stopped anywhere in them has its registers in them or in the
 * slot (pft_arch_req_restore), so the tracer can always send it back to
 * the int3 of the old way instead. */
static void emit_req(struct emit *e, uint64_t chunk, struct pft_ibl *out)
{
	out->req = here(e);
	for (int i = 0; i < 7; i++)
		gs_mov(e, 1, q_regs[i], PFT_SLOT_Q_REGS + 8 * (uint32_t)i);
	out->req_saved = here(e);
	put(e, (uint8_t[]){ 0x48, 0x8d, 0x05 }, 3); /* lea chunk(%rip),%rax */
	put32(e, (uint32_t)(int32_t)((int64_t)chunk - (int64_t)(here(e) + 4)));
	gs_mov(e, 1, RAX, PFT_SLOT_Q_CHUNK);
	emit_ask(e);
	for (int i = 0; i < 7; i++)
		gs_mov(e, 0, q_regs[i], PFT_SLOT_Q_REGS + 8 * (uint32_t)i);
	jmp_q_to(e);

	out->mreq = here(e);
	gs_mov(e, 1, RAX, PFT_SLOT_Q_TGT);
	for (int i = 3; i < 7; i++)
		gs_mov(e, 1, q_regs[i], PFT_SLOT_Q_REGS + 8 * (uint32_t)i);
	out->mreq_saved = here(e);
	emit_ask(e);
	for (int i = 3; i < 7; i++)
		gs_mov(e, 0, q_regs[i], PFT_SLOT_Q_REGS + 8 * (uint32_t)i);
	zero_reg(e, RAX);
	gs_mov_b(e, 0, RCX, RAX, PFT_SLOT_RCX);
	gs_mov_b(e, 0, RDX, RAX, PFT_SLOT_RDX);
	gs_mov_b(e, 0, RAX, RAX, PFT_SLOT_RAX);
	jmp_q_to(e);
	out->mtrap_pre = here(e);
	gs_mov(e, 0, RAX, PFT_SLOT_Q_TGT);
	out->mtrap = here(e);
	put8(e, 0xcc);
	out->req_end = here(e);
}

void pft_arch_req_restore(struct user_regs_struct *r, const uint8_t *slot, int miss)
{
	unsigned long long *reg[7] = { &r->rax, &r->rcx, &r->rdx, &r->rsi, &r->rdi, &r->r10, &r->r11 };

	for (int i = miss ? 3 : 0; i < 7; i++)
		memcpy(reg[i], slot + PFT_SLOT_Q_REGS + 8 * i, 8);
}

void pft_arch_req_target(struct user_regs_struct *r, const uint8_t *slot)
{
	memcpy(&r->rax, slot + PFT_SLOT_Q_TGT, 8);
}

size_t pft_ibl_emit(uint8_t *mem, uint64_t addr, int region, int req, struct pft_ibl *out)
{
	uint8_t buf[1024];
	struct emit e = { .buf = buf, .cap = sizeof buf, .base = addr };
	size_t j_exit = 0, j_miss, j_hit, j_mreq = 0;

	put(&e, (uint8_t[]){ 0x0f, 0x05 }, 2); /* syscall: for injection */
	while (e.n < 16)
		put8(&e, 0xcc);
	out->entry = here(&e);
	pft_emit_miss_state(&e);
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
	pft_emit_probe(&e, RAX, &j_miss, &j_hit);
	buf[j_hit] = (uint8_t)(e.n - (j_hit + 1));
	pft_emit_hit(&e);
	buf[j_miss] = (uint8_t)(e.n - (j_miss + 1));
	out->miss = here(&e);
	if (req) { /* movl $1, %gs:Q_ID; jmp mreq (below) */
		put(&e, (uint8_t[]){ 0x65, 0xc7, 0x04, 0x25 }, 4);
		put32(&e, PFT_SLOT_Q_ID);
		put32(&e, 1);
		put8(&e, 0xe9);
		j_mreq = e.n;
		put32(&e, 0);
	} else {
		put8(&e, 0xcc);
	}
	out->exit = here(&e);
	if (region)
		buf[j_exit] = (uint8_t)(e.n - (j_exit + 1));
	put8(&e, 0xcc);
	out->end = here(&e);
	out->req = out->req_saved = out->req_end = out->mreq = out->mreq_saved = out->mtrap_pre = out->mtrap = 0;
	if (req) {
		while (e.n & 15)
			put8(&e, 0xcc);
		emit_req(&e, addr, out);
		int32_t rel = (int32_t)((int64_t)out->mreq - (int64_t)(addr + j_mreq + 4));
		memcpy(buf + j_mreq, &rel, 4);
	}
	while (e.n & 15)
		put8(&e, 0xcc);
	memcpy(mem, buf, e.n);
	return e.n;
}

/* The rel32 at site_mem (the tracer's mapping, aligned as the tracee's)
 * set to rel with one store of the aligned 8-byte word around it: the
 * tracer is the only writer of the cache, so the other 4 bytes are as
 * read. */
static void store_rel(uint8_t *site_mem, int32_t rel)
{
	uint64_t *w = (uint64_t *)((uintptr_t)site_mem & ~(uintptr_t)7), v;
	size_t at = (size_t)(site_mem - (uint8_t *)w);

	if (at > 4) { /* (never: rel_ok) */
		memcpy(site_mem, &rel, 4);
		return;
	}
	v = __atomic_load_n(w, __ATOMIC_RELAXED);
	memcpy((uint8_t *)&v + at, &rel, 4);
	__atomic_store_n(w, v, __ATOMIC_RELEASE);
}

/* A linked `jmp rel32` whose target's copy starts at most 3 bytes after
 * it (dead bytes between: the target's lead) becomes one nop over the
 * jump and those bytes, so the path falls through instead of taking a
 * jump; one store of the aligned word that holds it all.  Unlike a
 * rel32's patch this changes an opcode and a length, so it assumes a
 * little more of a thread fetching the word meanwhile: that it sees the
 * whole old word or the whole new one, as it does the store's data (no
 * thread is ever inside the nop or the dead bytes: only at its start or
 * at the next copy).  Unlinking puts the jump back. */
static const uint8_t nops[4][8] = {
	{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

static void store_ins(uint8_t *op, const uint8_t *ins, size_t n)
{
	uint64_t *w = (uint64_t *)((uintptr_t)op & ~(uintptr_t)7), v;

	v = __atomic_load_n(w, __ATOMIC_RELAXED);
	memcpy((uint8_t *)&v + (op - (uint8_t *)w), ins, n);
	__atomic_store_n(w, v, __ATOMIC_RELEASE);
}

/* the nop's length at a linked jump's site (site_mem - 1), or 0 */
static size_t nop_len(const uint8_t *site_mem)
{
	if (site_mem[-1] == 0x66)
		return 6;
	if (site_mem[-1] != 0x0f || site_mem[0] != 0x1f) /* (a jcc's: 8x, a jmp's: e9) */
		return 0;
	return site_mem[1] == 0x44 ? 5 : site_mem[1] == 0x80 ? 7 : 8;
}

int pft_arch_link(uint8_t *site_mem, uint64_t site, uint8_t *stub_mem, uint64_t stub, uint64_t to)
{
	int64_t rel = (int64_t)(to - (site + 4));

	if (rel >= 0 && rel <= 3 && site_mem[-1] == 0xe9 && ((site - 1) & 7) + 5 + (uint64_t)rel <= 8) {
		int dead = 1;
		for (int i = 0; i < rel; i++)
			dead &= site_mem[4 + i] == 0xcc;
		if (dead) {
			store_ins(site_mem - 1, nops[rel], 5 + (size_t)rel);
			return 1;
		}
	}
	if (!fits32(rel)) { /* through the stub's far jump */
		__atomic_store_n((uint64_t *)(stub_mem + 8), to, __ATOMIC_RELEASE);
		rel = (int64_t)(stub + 2 - (site + 4));
	}
	store_rel(site_mem, (int32_t)rel);
	return 0;
}

void pft_arch_unlink(uint8_t *site_mem, uint64_t site, uint64_t stub)
{
	size_t n = nop_len(site_mem);
	int32_t rel = (int32_t)(stub - (site + 4));

	if (n) {
		uint8_t j[8] = { 0xe9, 0, 0, 0, 0, 0xcc, 0xcc, 0xcc };

		memcpy(j + 1, &rel, 4);
		store_ins(site_mem - 1, j, n);
		return;
	}
	store_rel(site_mem, rel);
}

/* the miss and exit traps: the target in %rax, %rax %rcx %rdx in the slot */
void pft_arch_ibl_restore(struct user_regs_struct *r, const uint8_t *slot)
{
	r->rip = r->rax;
	memcpy(&r->rax, slot + PFT_SLOT_RAX, 8);
	memcpy(&r->rcx, slot + PFT_SLOT_RCX, 8);
	memcpy(&r->rdx, slot + PFT_SLOT_RDX, 8);
}

void pft_arch_term_restore(struct user_regs_struct *r, const uint8_t *slot)
{
	memcpy(&r->rcx, slot + PFT_SLOT_RCX, 8);
}

/* before a copy's `syscall`: the look-up of the number used %rcx, %r11 */
void pft_arch_sys_restore(struct user_regs_struct *r, const uint8_t *slot)
{
	memcpy(&r->rcx, slot + PFT_SLOT_RCX, 8);
	memcpy(&r->r11, slot + PFT_SLOT_R11, 8);
}

/* after `syscall` (not int 0x80): %rcx holds the return address */
void pft_arch_syscall_done(const uint8_t *code, uint32_t off, struct user_regs_struct *r)
{
	if (off >= 2 && code[off - 2] == 0x0f && code[off - 1] == 0x05)
		r->rcx = r->rip;
}
