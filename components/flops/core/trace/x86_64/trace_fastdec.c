/*
 * trace_fastdec.c: the common integer instructions decoded without
 * Zydis.  A warm run translates every block of its hint store at start
 * (numpy: 77,000 blocks), and Zydis's decode of each instruction was a
 * third of that work.  Most instructions are a few plain forms (mov,
 * lea, push, pop, the ALU group, test, movzx, cmovcc, setcc, jcc, jmp,
 * call, ret) with at most a REX prefix: their length and what the
 * tracer asks of them (struct pft_insn, struct pft_reloc) follow from
 * the opcode, the ModRM byte and a small table.  Anything else (another
 * prefix, SSE, VEX, x87, a form not listed) goes to Zydis
 * (pft_arch_decode_zydis).  test_trace_reloc checks that both give the
 * same facts for every opcode of the maps this handles, under every
 * ModRM byte and REX prefix, and for random bytes.
 */
#include <string.h>

#include "../pft_arch.h"
#include "trace_zydis.h"

/* what an opcode is here */
enum {
	F_NONE,	 /* not handled: Zydis */
	F_PLAIN, /* no ModRM */
	F_MODRM, /* ModRM */
};

/* per opcode: form, immediate bytes (8: 4, or 8 with REX.W), flags
 * written (kills: OF SF ZF AF PF written and none read; cf: CF too) */
struct op {
	uint8_t form, imm, kills, cf;
};

#define ALU(k, c)                                                                                                     \
	{ F_MODRM, 0, k, c }, { F_MODRM, 0, k, c }, { F_MODRM, 0, k, c }, { F_MODRM, 0, k, c }, { F_PLAIN, 1, k, c }, \
		{ F_PLAIN, 4, k, c }, { F_NONE, 0, 0, 0 },                                                            \
	{                                                                                                             \
		F_NONE, 0, 0, 0                                                                                       \
	}

static const struct op map0[256] = {
	ALU(1, 1),				/* 00 add */
	ALU(1, 1),				/* 08 or */
	ALU(1, 0),				/* 10 adc: reads CF */
	ALU(1, 0),				/* 18 sbb */
	ALU(1, 1),				/* 20 and */
	ALU(1, 1),				/* 28 sub */
	ALU(1, 1),				/* 30 xor */
	ALU(1, 1),				/* 38 cmp */
	[0x50 ... 0x5f] = { F_PLAIN, 0, 0, 0 }, /* push, pop */
	[0x63] = { F_MODRM, 0, 0, 0 },		/* movsxd */
	[0x69] = { F_MODRM, 4, 1, 1 },		/* imul imm32 */
	[0x6b] = { F_MODRM, 1, 1, 1 },		/* imul imm8 */
	[0x70 ... 0x7f] = { F_PLAIN, 1, 0, 0 }, /* jcc rel8 */
	[0x80] = { F_MODRM, 1, 0, 0 },		/* group 1: by ModRM.reg */
	[0x81] = { F_MODRM, 4, 0, 0 },
	[0x83] = { F_MODRM, 1, 0, 0 },
	[0x84] = { F_MODRM, 0, 1, 1 }, /* test */
	[0x85] = { F_MODRM, 0, 1, 1 },
	[0x88 ... 0x8b] = { F_MODRM, 0, 0, 0 }, /* mov */
	[0x8d] = { F_MODRM, 0, 0, 0 },		/* lea */
	[0x98] = { F_PLAIN, 0, 0, 0 },		/* cwde, cdqe */
	[0x99] = { F_PLAIN, 0, 0, 0 },		/* cdq, cqo */
	[0xa8] = { F_PLAIN, 1, 1, 1 },		/* test al */
	[0xa9] = { F_PLAIN, 4, 1, 1 },		/* test eax */
	[0xb0 ... 0xb7] = { F_PLAIN, 1, 0, 0 }, /* mov r8, imm8 */
	[0xb8 ... 0xbf] = { F_PLAIN, 8, 0, 0 }, /* mov r, imm */
	[0xc0] = { F_MODRM, 1, 0, 0 },		/* shifts: count-dependent */
	[0xc1] = { F_MODRM, 1, 0, 0 },
	[0xc3] = { F_PLAIN, 0, 0, 0 }, /* ret */
	[0xc6] = { F_MODRM, 1, 0, 0 }, /* mov r/m8, imm8 (/0) */
	[0xc7] = { F_MODRM, 4, 0, 0 }, /* mov r/m, imm32 (/0) */
	[0xd0 ... 0xd3] = { F_MODRM, 0, 0, 0 },
	[0xe8] = { F_PLAIN, 4, 0, 0 }, /* call rel32 */
	[0xe9] = { F_PLAIN, 4, 0, 0 }, /* jmp rel32 */
	[0xeb] = { F_PLAIN, 1, 0, 0 }, /* jmp rel8 */
	[0xf6] = { F_MODRM, 0, 0, 0 }, /* group 3: by ModRM.reg */
	[0xf7] = { F_MODRM, 0, 0, 0 },
	[0xfe] = { F_MODRM, 0, 1, 0 }, /* inc, dec (/0, /1): CF kept */
	[0xff] = { F_MODRM, 0, 1, 0 },
};

static const struct op map0f[256] = {
	[0x1f] = { F_MODRM, 0, 0, 0 },		/* nop r/m (/0) */
	[0x40 ... 0x4f] = { F_MODRM, 0, 0, 0 }, /* cmovcc */
	[0x80 ... 0x8f] = { F_PLAIN, 4, 0, 0 }, /* jcc rel32 */
	[0x90 ... 0x9f] = { F_MODRM, 0, 0, 0 }, /* setcc */
	[0xaf] = { F_MODRM, 0, 1, 1 },		/* imul */
	[0xb6] = { F_MODRM, 0, 0, 0 },		/* movzx, movsx */
	[0xb7] = { F_MODRM, 0, 0, 0 },		[0xbe] = { F_MODRM, 0, 0, 0 }, [0xbf] = { F_MODRM, 0, 0, 0 },
};

/* the register a count may borrow before a mov, lea, movzx, movsx or
 * movsxd (pft_reloc.dead_reg, trace_reloc.c's rule): dst is written
 * whole (32 or 64 bits, not %rsp) and src (a register's number, -1:
 * none) is not it; 0: none */
static uint8_t dead(int dst, int src)
{
	return dst == 4 || dst == src ? 0 : (uint8_t)(dst + 1);
}

int pft_arch_decode_fast(const uint8_t *buf, size_t len, uint64_t addr, struct pft_insn *out, struct pft_reloc *r)
{
	size_t p = 0, modrm_at = 0;
	uint8_t rex = 0, op, modrm = 0, mod = 0, reg = 0, rm = 0;
	const struct op *d;
	int map = 0, imm, kills, cf, w, rip = 0;
	int64_t rel = 0;
	uint8_t dr = 0;

	if (len < 1)
		return -1;
	if ((buf[0] & 0xf0) == 0x40)
		rex = buf[p++];
	if (p >= len)
		return -1;
	op = buf[p++];
	if (op == 0x0f) {
		if (p >= len)
			return -1;
		op = buf[p++];
		map = 1;
	}
	d = map ? &map0f[op] : &map0[op];
	if (d->form == F_NONE)
		return -1;
	w = (rex & 8) != 0;
	imm = d->imm == 8 ? (w ? 8 : 4) : d->imm;
	kills = d->kills;
	cf = d->cf;
	if (d->form == F_MODRM) {
		if (p >= len)
			return -1;
		modrm_at = p;
		modrm = buf[p++];
		mod = modrm >> 6;
		reg = (uint8_t)((modrm >> 3) & 7);
		rm = modrm & 7;
		if (mod != 3 && rm == 4) { /* SIB */
			if (p >= len)
				return -1;
			if (mod == 0 && (buf[p] & 7) == 5)
				p += 4;
			p++;
		} else if (mod == 0 && rm == 5) {
			rip = 1;
			p += 4;
		}
		p += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	}
	/* the opcodes whose ModRM.reg picks the instruction */
	if (!map)
		switch (op) {
		case 0x80:
		case 0x81:
		case 0x83: /* add or adc sbb and sub xor cmp */
			kills = 1;
			cf = reg != 2 && reg != 3;
			break;
		case 0xc0:
		case 0xc1:
		case 0xd0:
		case 0xd1:
		case 0xd2:
		case 0xd3:
			if (reg == 6) /* sal: not the shifts' table here */
				return -1;
			break;
		case 0xc6:
		case 0xc7:
			if (reg != 0)
				return -1;
			break;
		case 0xf6:
		case 0xf7: /* test, not, neg, mul, imul, div, idiv */
			if (reg == 1)
				return -1;
			if (reg == 0)
				imm = op == 0xf6 ? 1 : 4;
			kills = cf = reg != 2;
			break;
		case 0xfe:
		case 0xff:
			if (reg > 1)
				return -1;
			break;
		case 0x8d:
			if (mod == 3)
				return -1;
			break;
		default:
			break;
		}
	else if ((op == 0x1f && reg != 0) || (op >= 0x90 && op <= 0x9f && reg != 0))
		return -1;
	p += (size_t)imm;
	if (p > len || p > PFT_INSN_MAX)
		return -1;

	memset(out, 0, sizeof *out);
	out->len = (uint8_t)p;
	out->extra = -1;
	if (imm == 1)
		rel = (int8_t)buf[p - 1];
	else if (imm == 4) {
		int32_t v;
		memcpy(&v, buf + p - 4, 4);
		rel = v;
	}
	if ((!map && ((op >= 0x70 && op <= 0x7f) || op == 0xe8 || op == 0xe9 || op == 0xeb)) ||
	    (map && op >= 0x80 && op <= 0x8f)) {
		out->term = op == 0xe8 ? PFT_T_CALL : op == 0xe9 || op == 0xeb ? PFT_T_JMP : PFT_T_JCC;
		if (out->term == PFT_T_JCC)
			out->cc = op & 0x0f;
		out->target = addr + p + (uint64_t)rel;
		kills = cf = 0;
	} else if (!map && op == 0xc3) {
		out->term = PFT_T_RET;
	}

	/* dead_reg: mov, lea, movzx, movsx, movsxd writing 32 or 64 bits */
	{
		int rr = reg | (rex & 4 ? 8 : 0), rb = rm | (rex & 1 ? 8 : 0);
		if (!map)
			switch (op) {
			case 0x89: /* mov r/m, r */
				if (mod == 3)
					dr = dead(rb, rr);
				break;
			case 0x8b: /* mov r, r/m */
			case 0x63: /* movsxd */
				if (mod == 3)
					dr = dead(rr, rb);
				break;
			case 0xc7:
				if (mod == 3)
					dr = dead(rb, -1);
				break;
			case 0xb8:
			case 0xb9:
			case 0xba:
			case 0xbb:
			case 0xbc:
			case 0xbd:
			case 0xbe:
			case 0xbf:
				dr = dead((op & 7) | (rex & 1 ? 8 : 0), -1);
				break;
			case 0x8d: { /* lea: the address's registers */
				int base = -1, index = -1;
				if (rm == 4) {
					uint8_t sib = buf[modrm_at + 1];
					int sb = sib & 7, si = (sib >> 3) & 7;
					if (!(mod == 0 && sb == 5))
						base = sb | (rex & 1 ? 8 : 0);
					if (si != 4 || (rex & 2))
						index = si | (rex & 2 ? 8 : 0);
				} else if (!rip) {
					base = rb;
				}
				dr = dead(rr, base);
				if (dr && index == rr)
					dr = 0;
				break;
			}
			default:
				break;
			}
		else if (mod == 3 && (op == 0xb6 || op == 0xb7 || op == 0xbe || op == 0xbf)) {
			int src = rb;
			if ((op == 0xb6 || op == 0xbe) && !rex && rm >= 4)
				src = rm - 4; /* %ah %ch %dh %bh */
			dr = dead(rr, src);
		}
	}

	if (r) {
		memset(r, 0, sizeof *r);
		r->len = (uint8_t)p;
		if (rip) {
			int32_t disp;
			memcpy(&disp, buf + modrm_at + 1, 4);
			r->rip_rel = 1;
			r->disp_off = (uint8_t)(modrm_at + 1);
			r->rip_target = addr + p + (uint64_t)(int64_t)disp;
		}
		r->kills_flags = (uint8_t)kills;
		r->kills_cf = (uint8_t)(kills && cf);
		r->dead_reg = dr;
	}
	return 0;
}
