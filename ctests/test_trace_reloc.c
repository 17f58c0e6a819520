/*
 * test_trace_reloc.c: the register a block's flag-free count may borrow
 * (struct pft_reloc.dead_reg, x86_64/trace_reloc.c): only where the
 * instruction overwrites all of it without reading it and cannot fault,
 * from both decode paths (a block's decode, and decoding again); and
 * the general registers an instruction uses and whether it stores
 * (pft_reloc_gprs: a one-block loop's count borrows a register its block
 * leaves alone, and none where the block stores).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include "trace/pft_arch.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_dead_reg),
		cmocka_unit_test(t_gprs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
