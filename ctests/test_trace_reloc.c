/*
 * test_trace_reloc.c: the register a block's flag-free count may borrow
 * (struct pft_reloc.dead_reg, x86_64/trace_reloc.c): only where the
 * instruction overwrites all of it without reading it and cannot fault,
 * from both decode paths (a block's decode, and decoding again); and
 * the general registers an instruction uses and whether it stores
 * (pft_reloc_gprs: a one-block loop's count borrows a register its block
 * leaves alone, and none where the block stores).  And the decode's
 * shortcuts: operands are decoded only for the
 * instructions whose operands can write rip or an opmask, as Zydis's
 * full decode says of every opcode of every map (pft_arch_decode_ops),
 * and the common integer forms decoded without Zydis give what Zydis
 * gives (pft_arch_decode_fast).  And the lookup table's hash: the
 * crc32q the lookup routine runs, as the tracer computes it to insert.
 * And links (pft_arch_link): a jump to a copy right after it made one
 * nop, only within one aligned word, undone back to the jump.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trace/pft_arch.h"
#include "trace/x86_64/trace_zydis.h"

struct enc {
	const char *text;
	uint8_t b[16];
	uint8_t len;
	uint8_t dead; /* register number + 1, 0: none */
};

static const struct enc encs[] = {
	{ "mov %rbx,%rax", { 0x48, 0x89, 0xd8 }, 3, 1 },
	{ "mov %r12,%r10", { 0x4d, 0x89, 0xe2 }, 3, 11 },
	{ "mov $5,%r12d", { 0x41, 0xbc, 5, 0, 0, 0 }, 6, 13 },
	{ "mov $1,%rax", { 0x48, 0xc7, 0xc0, 1, 0, 0, 0 }, 7, 1 },
	{ "lea 0(%rip),%rdi", { 0x48, 0x8d, 0x3d, 0, 0, 0, 0 }, 7, 8 },
	{ "lea 1(%rdi,%rdi,2),%rax", { 0x48, 0x8d, 0x44, 0x7f, 0x01 }, 5, 1 },
	{ "movzbl %al,%ecx", { 0x0f, 0xb6, 0xc8 }, 3, 2 },
	{ "movslq %edi,%rax", { 0x48, 0x63, 0xc7 }, 3, 1 },
	/* none: a load (it may fault), reads of the register itself, a
	 * part of it, %rsp, a conditional write, control and segment
	 * registers, flag writers */
	{ "mov (%rdi),%rax", { 0x48, 0x8b, 0x07 }, 3, 0 },
	{ "movabs 0x0,%rax", { 0x48, 0xa1, 0, 0, 0, 0, 0, 0, 0, 0 }, 10, 0 },
	{ "pop %rbx", { 0x5b }, 1, 0 },
	{ "movzbl (%rsi),%eax", { 0x0f, 0xb6, 0x06 }, 3, 0 },
	{ "lea 1(%rax),%rax", { 0x48, 0x8d, 0x40, 0x01 }, 4, 0 },
	{ "lea 0(,%rax,8),%rax", { 0x48, 0x8d, 0x04, 0xc5, 0, 0, 0, 0 }, 8, 0 },
	{ "mov %eax,%eax", { 0x89, 0xc0 }, 2, 0 },
	{ "movzbl %ah,%eax", { 0x0f, 0xb6, 0xc4 }, 3, 0 },
	{ "mov %bx,%ax", { 0x66, 0x89, 0xd8 }, 3, 0 },
	{ "mov %bl,%al", { 0x88, 0xd8 }, 2, 0 },
	{ "mov %rax,%rsp", { 0x48, 0x89, 0xc4 }, 3, 0 },
	{ "cmove %rbx,%rax", { 0x48, 0x0f, 0x44, 0xc3 }, 4, 0 },
	{ "mov %cr0,%rax", { 0x0f, 0x20, 0xc0 }, 3, 0 },
	{ "mov %ds,%eax", { 0x8c, 0xd8 }, 2, 0 },
	{ "xor %eax,%eax", { 0x31, 0xc0 }, 2, 0 },
	{ "add %rbx,%rax", { 0x48, 0x01, 0xd8 }, 3, 0 },
};

static void t_dead_reg(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof encs / sizeof encs[0]; i++) {
		const struct enc *e = &encs[i];
		struct pft_reloc r, r2;
		struct pft_insn in;

		assert_int_equal(pft_reloc_decode(e->b, e->len, 0x400000, &r), 0);
		assert_int_equal(pft_arch_decode(e->b, e->len, 0x400000, &in, &r2), 0);
		if (r.len != e->len || r.dead_reg != e->dead || r2.dead_reg != e->dead)
			fail_msg("%s: length %u, dead register %u and %u, expected %u", e->text, r.len, r.dead_reg,
				 r2.dead_reg, e->dead);
	}
}

struct use {
	const char *text;
	uint8_t b[16];
	uint8_t len;
	uint32_t gprs; /* bit = register number */
	int stores;
};

/* rax 0, rcx 1, rdx 2, rbx 3, rsp 4, rbp 5, rsi 6, rdi 7, r8 8 ... */
static const struct use uses[] = {
	{ "add %rdx,%rax", { 0x48, 0x01, 0xd0 }, 3, 1u << 0 | 1u << 2, 0 },
	{ "loop .", { 0xe2, 0xfe }, 2, 1u << 1, 0 }, /* %rcx, not written */
	{ "vaddpd %ymm1,%ymm2,%ymm0", { 0xc5, 0xed, 0x58, 0xc1 }, 4, 0, 0 },
	{ "lea (%r13,%r10),%r13", { 0x4f, 0x8d, 0x6c, 0x15, 0x00 }, 5, 1u << 13 | 1u << 10, 0 },
	{ "movsd %xmm1,0x0(,%rax,8)", { 0xf2, 0x0f, 0x11, 0x0c, 0xc5, 0, 0, 0, 0 }, 9, 1u << 0, 1 },
	{ "push %rbx", { 0x53 }, 1, 1u << 3 | 1u << 4, 1 },			 /* the stack: written */
	{ "mul %rcx", { 0x48, 0xf7, 0xe1 }, 3, 1u << 0 | 1u << 1 | 1u << 2, 0 }, /* %rdx:%rax */
	{ "movsb", { 0xa4 }, 1, 1u << 6 | 1u << 7, 1 },
	{ "cmp 0x0(%rip),%eax", { 0x3b, 0x05, 0, 0, 0, 0 }, 6, 1u << 0, 0 },
};

static void t_gprs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++) {
		const struct use *u = &uses[i];
		int st = 0;
		uint32_t m = pft_reloc_gprs(u->b, u->len, &st);

		if (m != u->gprs || st != u->stores)
			fail_msg("%s: registers 0x%x, stores %d; expected 0x%x, %d", u->text, m, st, u->gprs,
				 u->stores);
	}
}

static void random_bytes(uint8_t *b, size_t n, uint64_t *x)
{
	for (size_t j = 0; j < n; j++) {
		*x ^= *x << 13;
		*x ^= *x >> 7;
		*x ^= *x << 17;
		b[j] = (uint8_t)*x;
	}
}

static ZydisDecoder zd;
static long n_checked, n_writers;

/* b (16 bytes): Zydis's full decode against pft_arch_decode's */
static void check_ops(const uint8_t *b)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct pft_insn out;
	struct pft_reloc r;
	uint8_t kw = 0;
	int rip = 0;

	if (ZYAN_FAILED(ZydisDecoderDecodeFull(&zd, b, 16, &in, ops)))
		return;
	for (unsigned i = 0; i < in.operand_count; i++) {
		if (ops[i].type != ZYDIS_OPERAND_TYPE_REGISTER || !(ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		if (ops[i].reg.value >= ZYDIS_REGISTER_K0 && ops[i].reg.value <= ZYDIS_REGISTER_K7)
			kw |= (uint8_t)(1u << (ops[i].reg.value - ZYDIS_REGISTER_K0));
		rip |= ops[i].reg.value == ZYDIS_REGISTER_RIP;
	}
	n_checked++;
	if ((kw || rip) && !pft_arch_decode_ops(&in))
		fail_msg("%s (%02x %02x %02x %02x %02x %02x): writes %s, operands not decoded",
			 ZydisMnemonicGetString(in.mnemonic), b[0], b[1], b[2], b[3], b[4], b[5],
			 rip ? "rip" : "an opmask");
	n_writers += kw || rip;
	assert_int_equal(pft_arch_decode_zydis(b, 16, 0x400000, &out, &r), 0);
	if (out.len != in.length || out.kwrites != kw || (rip && out.term == PFT_T_NONE))
		fail_msg("%s (%02x %02x %02x %02x %02x %02x): length %u, opmasks written %#x, ends a block %d; "
			 "Zydis: %u, %#x, writes rip %d",
			 ZydisMnemonicGetString(in.mnemonic), b[0], b[1], b[2], b[3], b[4], b[5], out.len, out.kwrites,
			 out.term != PFT_T_NONE, in.length, kw, rip);
}

/* Every opcode of the legacy maps (with operand-size and repeat
 * prefixes, REX), of VEX, EVEX and XOP maps 1 to 7 (pp, L, W, vvvv),
 * under a set of ModRM bytes (each reg field, register and memory
 * forms), then random bytes. */
static void t_operands(void **state)
{
	static const int pfx[] = { -1, 0x66, 0xf2, 0xf3 }, rex[] = { -1, 0x48, 0x41 };
	static const uint8_t modrm[] = { 0x00, 0x05, 0x08, 0x10, 0x18, 0x20, 0x28, 0x30, 0x38, 0xc0,
					 0xc8, 0xd0, 0xd8, 0xe0, 0xe8, 0xf0, 0xf8, 0x44, 0x84, 0xc9 };
	uint8_t b[16];
	uint64_t x = 88172645463325252ULL;

	(void)state;
	ZydisDecoderInit(&zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (int p = 0; p < 4; p++)
		for (int q = 0; q < 3; q++)
			for (int map = 0; map < 4; map++)
				for (int op = 0; op < 256; op++)
					for (size_t m = 0; m < sizeof modrm; m++) {
						int n = 0;
						if (pfx[p] >= 0)
							b[n++] = (uint8_t)pfx[p];
						if (rex[q] >= 0)
							b[n++] = (uint8_t)rex[q];
						if (map)
							b[n++] = 0x0f;
						if (map == 2 || map == 3)
							b[n++] = map == 2 ? 0x38 : 0x3a;
						b[n++] = (uint8_t)op;
						b[n++] = modrm[m];
						memset(b + n, 1, sizeof b - (size_t)n);
						check_ops(b);
					}
	for (int map = 1; map <= 7; map++)
		for (int pp = 0; pp < 4; pp++)
			for (int l = 0; l < 4; l++)
				for (int w = 0; w < 2; w++)
					for (int op = 0; op < 256; op++)
						for (size_t m = 0; m < sizeof modrm; m++)
							for (int v = 0; v < 2; v++) {
								uint8_t vvvv = v ? 0x00 : 0x78;
								memset(b, 1, sizeof b);
								b[0] = 0xc4; /* VEX */
								b[1] = (uint8_t)(0xe0 | map);
								b[2] = (uint8_t)(w << 7 | vvvv | (l & 1) << 2 | pp);
								b[3] = (uint8_t)op;
								b[4] = modrm[m];
								check_ops(b);
								b[0] = 0x62; /* EVEX */
								b[1] = (uint8_t)(0xf0 | map);
								b[2] = (uint8_t)(w << 7 | vvvv | 0x04 | pp);
								b[3] = (uint8_t)(l << 5 | 0x08 | v);
								b[4] = (uint8_t)op;
								b[5] = modrm[m];
								check_ops(b);
								b[0] = 0x8f; /* XOP */
								b[1] = (uint8_t)(0xe0 | (map + 7));
								b[2] = (uint8_t)(w << 7 | vvvv | (l & 1) << 2 | pp);
								b[3] = (uint8_t)op;
								b[4] = modrm[m];
								check_ops(b);
							}
	for (int i = 0; i < 2000000; i++) {
		random_bytes(b, sizeof b, &x);
		check_ops(b);
	}
	/* the enumeration reached the branches and the opmask writers */
	if (n_checked < 200000 || n_writers < 10000)
		fail_msg("%ld instructions decoded, %ld writing rip or an opmask: too few", n_checked, n_writers);
}

static long n_fast;

/* b (16 bytes) decoded without Zydis, where it is: as with Zydis */
static void check_fast(const uint8_t *b)
{
	struct pft_insn f, z;
	struct pft_reloc rf, rz, rd;

	memset(&f, 0x55, sizeof f);
	memset(&rf, 0x55, sizeof rf);
	if (pft_arch_decode_fast(b, 16, 0x7f0000001000ULL, &f, &rf))
		return;
	n_fast++;
	if (pft_arch_decode_zydis(b, 16, 0x7f0000001000ULL, &z, &rz))
		fail_msg("%02x %02x %02x %02x %02x %02x: decoded without Zydis, not with it", b[0], b[1], b[2], b[3],
			 b[4], b[5]);
	if (memcmp(&f, &z, sizeof f) || memcmp(&rf, &rz, sizeof rf))
		fail_msg("%02x %02x %02x %02x %02x %02x: without Zydis length %u term %u target %#llx, flags %u/%u, "
			 "dead %u, rip %u+%u; with: %u %u %#llx, %u/%u, %u, %u+%u",
			 b[0], b[1], b[2], b[3], b[4], b[5], f.len, f.term, (unsigned long long)f.target,
			 rf.kills_flags, rf.kills_cf, rf.dead_reg, rf.rip_rel, rf.disp_off, z.len, z.term,
			 (unsigned long long)z.target, rz.kills_flags, rz.kills_cf, rz.dead_reg, rz.rip_rel,
			 rz.disp_off);
	/* and decoding again for a translation (trace_xlate.c) */
	if (pft_reloc_decode(b, 16, 0x7f0000001000ULL, &rd) || memcmp(&rd, &rz, sizeof rd))
		fail_msg("%02x %02x %02x %02x %02x %02x: pft_reloc_decode differs", b[0], b[1], b[2], b[3], b[4], b[5]);
	/* a buffer cut short is not read past (a heap copy of that size:
	 * make check-asan and check-valgrind see a read beyond it) */
	for (size_t n = 1; n < z.len; n++) {
		uint8_t *cut = malloc(n);
		assert_non_null(cut);
		memcpy(cut, b, n);
		if (!pft_arch_decode_fast(cut, n, 0x7f0000001000ULL, &f, NULL))
			fail_msg("%02x %02x %02x: decoded from %zu of its %u bytes", b[0], b[1], b[2], n, z.len);
		free(cut);
	}
}

/* Every opcode of the one- and two-byte maps under every ModRM byte,
 * SIB bytes of each kind, with and without each REX prefix, trailing
 * bytes of both signs; then random bytes. */
static void t_fast(void **state)
{
	static const uint8_t sib[] = { 0x00, 0x24, 0x25, 0x65, 0xe5, 0x8d, 0x3c };
	uint8_t b[16];
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int q = -1; q < 16; q++)
		for (int map = 0; map < 2; map++)
			for (int op = 0; op < 256; op++)
				for (int m = 0; m < 256; m++)
					for (size_t k = 0; k < sizeof sib; k++) {
						int n = 0;
						if (q >= 0)
							b[n++] = (uint8_t)(0x40 | q);
						if (map)
							b[n++] = 0x0f;
						b[n++] = (uint8_t)op;
						b[n++] = (uint8_t)m;
						b[n++] = sib[k];
						for (; n < 16; n++)
							b[n] = (uint8_t)(k & 1 ? 0x80 + n : n);
						check_fast(b);
						if (n_fast == 0 && op > 0x10)
							fail_msg("nothing decoded without Zydis");
					}
	for (int i = 0; i < 2000000; i++) {
		random_bytes(b, sizeof b, &x);
		if (i & 1)
			b[0] = (uint8_t)(0x40 | (b[0] & 15));
		check_fast(b);
	}
	if (n_fast < 1000000)
		fail_msg("%ld instructions decoded without Zydis: too few", n_fast);
}

/* CRC-32C bit by bit (initial 0, no final xor), as crc32q computes it */
static uint32_t crc32c_ref(uint64_t v)
{
	uint32_t c = 0;

	for (int i = 0; i < 8; i++) {
		c ^= (uint8_t)(v >> (8 * i));
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & -(c & 1));
	}
	return c;
}

static void t_table_hash(void **state)
{
	unsigned a, b, c, d;
	uint64_t x = 88172645463325252ull;

	(void)state;
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	if (!((c >> 20) & 1)) { /* the trace source refuses to run then */
		print_message("SKIP: t_table_hash: this CPU lacks SSE4.2 (crc32q)\n");
		skip();
	}
	assert_int_equal(pft_table_hash(0x123456789abcdef0ull), 0xaa8c2b3eu);
	assert_int_equal(pft_table_hash(0x7f0000401000ull), 0x887dfda6u);
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		assert_int_equal(pft_table_hash(x), crc32c_ref(x));
		assert_int_equal(pft_table_hash(x & 0x7fffffffffffull), crc32c_ref(x & 0x7fffffffffffull));
	}
}

/* A copy's last jump, `jmp rel32` (its opcode at byte `at` of a 32-byte
 * buffer whose address is 8-aligned as a chunk's is), linked to a copy
 * d bytes after it (int3s between, as a lead leaves them): one nop over
 * the jump and those bytes when they lie in one aligned 8-byte word, a
 * jump there otherwise; unlinked, the jump to its stub and the int3s
 * back; no byte outside them touched. */
static void t_link_nop(void **state)
{
	(void)state;
	ZydisDecoderInit(&zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (int at = 0; at < 16; at++)
		for (int d = 0; d < 8; d++) {
			_Alignas(8) uint8_t m[32], was[32];
			uint64_t base = 0x7f0000010000ull, site = base + (uint64_t)at + 1, stub = base + 0x1000;
			uint64_t to = site + 4 + (uint64_t)d;
			int32_t rel = (int32_t)(stub - (site + 4));
			int fits = (at & 7) + 5 + d <= 8 && d <= 3, r;
			ZydisDecodedInstruction in;
			ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

			memset(m, 0xcc, sizeof m);
			m[at] = 0xe9;
			memcpy(m + at + 1, &rel, 4);
			memcpy(was, m, sizeof m);
			r = pft_arch_link(m + at + 1, site, m, stub, to);
			assert_int_equal(r, fits);
			assert_true(ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zd, m + at, 16, &in, ops)));
			if (fits) {
				if (in.mnemonic != ZYDIS_MNEMONIC_NOP || in.length != 5 + d)
					fail_msg("at %d, %d after: %s of %u bytes, not one nop of %d", at, d,
						 ZydisMnemonicGetString(in.mnemonic), in.length, 5 + d);
			} else {
				int32_t v;
				assert_int_equal(in.mnemonic, ZYDIS_MNEMONIC_JMP);
				assert_int_equal(in.length, 5);
				memcpy(&v, m + at + 1, 4);
				assert_int_equal((int64_t)v, (int64_t)d);
			}
			assert_memory_equal(m, was, (size_t)at);
			assert_memory_equal(m + at + 5 + d, was + at + 5 + d, sizeof m - (size_t)(at + 5 + d));
			pft_arch_unlink(m + at + 1, site, stub);
			assert_memory_equal(m, was, sizeof m);
		}
	/* a jcc (0f 8x rel32) is never made a nop, nor a jump further on */
	{
		_Alignas(8) uint8_t m[16];
		int32_t v;
		memset(m, 0xcc, sizeof m);
		m[0] = 0x0f, m[1] = 0x84;
		assert_int_equal(pft_arch_link(m + 2, 0x1002, m, 0x2000, 0x1006), 0);
		assert_int_equal(m[1], 0x84);
		memcpy(&v, m + 2, 4);
		assert_int_equal(v, 0);
		m[1] = 0xe9;
		assert_int_equal(pft_arch_link(m + 2, 0x1002, m, 0x2000, 0x100a), 0);
		memcpy(&v, m + 2, 4);
		assert_int_equal(v, 4);
	}
}

/* A chunk's lookup routine (pft_ibl_emit), with and without the region
 * check and the request routines: every relative branch in it lands on
 * one of its instructions, and the region check's jrcxz on its exit.
 * Its rel8s are written without a range check: a routine grown past
 * 127 bytes between a jrcxz and its target would jump elsewhere (the
 * probe's 8-byte lea of 2026-11-28 left the exit's 4 bytes to spare). */
static void t_ibl_jumps(void **state)
{
	(void)state;
	ZydisDecoderInit(&zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (int region = 0; region < 2; region++)
		for (int req = 0; req < 2; req++) {
			static uint8_t m[4096];
			static char start[4096];
			uint64_t addr = 0x7f0000100000ull;
			struct pft_ibl out;
			size_t n, at = 0;
			int first_jrcxz = 1;

			memset(m, 0, sizeof m);
			memset(start, 0, sizeof start);
			n = pft_ibl_emit(m, addr, region, req, &out);
			assert_true(n > 16 && n < sizeof m);
			while (at < n) { /* int3 padding and code only */
				ZydisDecodedInstruction in;
				assert_true(
					ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&zd, NULL, m + at, n - at, &in)));
				start[at] = 1;
				at += in.length;
			}
			assert_int_equal(at, n);
			start[n] = 1; /* (the next copy) */
			for (at = 0; at < n;) {
				ZydisDecodedInstruction in;
				ZydisDecoderDecodeInstruction(&zd, NULL, m + at, n - at, &in);
				if (in.attributes & ZYDIS_ATTRIB_IS_RELATIVE && in.raw.imm[0].is_relative) {
					int64_t to = (int64_t)at + in.length + in.raw.imm[0].value.s;
					if (to >= 0 && to <= (int64_t)n) /* (a rel32 to a request routine's end) */
						assert_true(start[to]);
					if (in.mnemonic == ZYDIS_MNEMONIC_JRCXZ && addr + at >= out.entry &&
					    first_jrcxz) {
						first_jrcxz = 0;
						if (region) /* the region check's, first */
							assert_int_equal(addr + (uint64_t)to, out.exit);
					}
				}
				at += in.length;
			}
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_dead_reg),  cmocka_unit_test(t_gprs),       cmocka_unit_test(t_operands),
		cmocka_unit_test(t_fast),      cmocka_unit_test(t_table_hash), cmocka_unit_test(t_link_nop),
		cmocka_unit_test(t_ibl_jumps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
