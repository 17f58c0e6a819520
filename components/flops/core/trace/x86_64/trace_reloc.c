/*
 * trace_reloc.c: what it takes to run one instruction at another
 * address (the code cache, displaced region entries): its RIP-relative
 * operand, whether it touches %gs (which the cache owns), whether the
 * counter increment may go right before it (it overwrites the flags an
 * increment changes without reading them) or borrow the register it
 * overwrites, and for an indirect jmp/call the parts of its memory or
 * register operand.
 */
#include <string.h>
#include <Zydis/Zydis.h>

#include "../pft_arch.h"
#include "trace_zydis.h"

#define KFLAGS (ZYDIS_CPUFLAG_OF | ZYDIS_CPUFLAG_SF | ZYDIS_CPUFLAG_ZF | ZYDIS_CPUFLAG_AF | ZYDIS_CPUFLAG_PF)

static ZydisDecoder dec;
static int dec_ready;

static int touches_gs(const ZydisDecodedInstruction *in)
{
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_RDGSBASE:
	case ZYDIS_MNEMONIC_WRGSBASE:
	case ZYDIS_MNEMONIC_SWAPGS:
	case ZYDIS_MNEMONIC_LGS:
		return 1;
	case ZYDIS_MNEMONIC_MOV: /* mov to %gs: 8e /5 */
		if (in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && in->opcode == 0x8e && in->raw.modrm.reg == 5)
			return 1;
		break;
	case ZYDIS_MNEMONIC_POP: /* pop %gs: 0f a9 */
		if (in->opcode_map == ZYDIS_OPCODE_MAP_0F && in->opcode == 0xa9)
			return 1;
		break;
	default:
		break;
	}
	if (in->attributes & ZYDIS_ATTRIB_HAS_SEGMENT_GS)
		return 1;
	for (unsigned i = 0; i < in->raw.prefix_count; i++)
		if (in->raw.prefixes[i].value == 0x65)
			return 1;
	return 0;
}

/* Shifts and rotates leave the flags alone when the count is 0: they
 * are no place for an increment that relies on them being rewritten
 * (nor are rep string instructions, see pft_reloc_decode). */
static int count_dependent(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_SHL:
	case ZYDIS_MNEMONIC_SHR:
	case ZYDIS_MNEMONIC_SAR:
	case ZYDIS_MNEMONIC_ROL:
	case ZYDIS_MNEMONIC_ROR:
	case ZYDIS_MNEMONIC_RCL:
	case ZYDIS_MNEMONIC_RCR:
	case ZYDIS_MNEMONIC_SHLD:
	case ZYDIS_MNEMONIC_SHRD:
		return 1;
	default:
		return 0;
	}
}

int pft_reloc_dead_candidate(const ZydisDecodedInstruction *in)
{
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_MOV:
	case ZYDIS_MNEMONIC_LEA:
	case ZYDIS_MNEMONIC_MOVZX:
	case ZYDIS_MNEMONIC_MOVSX:
	case ZYDIS_MNEMONIC_MOVSXD:
		return in->encoding == ZYDIS_INSTRUCTION_ENCODING_LEGACY;
	default:
		return 0;
	}
}

static int is_gpr(ZydisRegister g)
{
	ZydisRegisterClass c = ZydisRegisterGetClass(g);

	return c == ZYDIS_REGCLASS_GPR8 || c == ZYDIS_REGCLASS_GPR16 || c == ZYDIS_REGCLASS_GPR32 ||
	       c == ZYDIS_REGCLASS_GPR64;
}

static ZydisRegister whole(ZydisRegister g)
{
	return g == ZYDIS_REGISTER_NONE ? g : ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, g);
}

/* The register a counter increment may borrow right before in
 * (trace_gen.c): in writes all 64 bits of it (a 32-bit write clears the
 * upper half), reads it in no operand, and can neither fault nor trap,
 * touching no memory (lea only computes an address) and reading only
 * general registers or an immediate.  So its old value is dead there,
 * and a signal that comes while the count holds it can be delivered once
 * in has run.  Not %rsp: signals and the kernel use the stack. */
static uint8_t dead_reg(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	ZydisRegister d;
	ZydisRegisterClass c;

	if (!ops || !pft_reloc_dead_candidate(in) || in->operand_count < 2 ||
	    ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER || ops[0].actions != ZYDIS_OPERAND_ACTION_WRITE)
		return 0;
	c = ZydisRegisterGetClass(ops[0].reg.value);
	if (c != ZYDIS_REGCLASS_GPR32 && c != ZYDIS_REGCLASS_GPR64)
		return 0;
	d = whole(ops[0].reg.value);
	if (d == ZYDIS_REGISTER_RSP)
		return 0;
	for (unsigned i = 1; i < in->operand_count; i++) {
		const ZydisDecodedOperand *o = &ops[i];
		switch (o->type) {
		case ZYDIS_OPERAND_TYPE_REGISTER:
			if (!is_gpr(o->reg.value) || whole(o->reg.value) == d)
				return 0;
			break;
		case ZYDIS_OPERAND_TYPE_MEMORY:
			if (o->mem.type != ZYDIS_MEMOP_TYPE_AGEN || whole(o->mem.base) == d || whole(o->mem.index) == d)
				return 0;
			break;
		case ZYDIS_OPERAND_TYPE_IMMEDIATE:
			break;
		default:
			return 0;
		}
	}
	return (uint8_t)(ZydisRegisterGetId(d) + 1);
}

int pft_reloc_fill(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops, uint64_t addr,
		   struct pft_reloc *r)
{
	int modrm;

	memset(r, 0, sizeof *r);
	r->len = in->length;
	r->uses_gs = (uint8_t)touches_gs(in);
	r->pops_flags = in->mnemonic == ZYDIS_MNEMONIC_POPF || in->mnemonic == ZYDIS_MNEMONIC_POPFD ||
			in->mnemonic == ZYDIS_MNEMONIC_POPFQ;
	modrm = (in->attributes & ZYDIS_ATTRIB_HAS_MODRM) != 0;
	if (modrm && (in->attributes & ZYDIS_ATTRIB_IS_RELATIVE) && in->raw.modrm.mod == 0 && in->raw.modrm.rm == 5) {
		/* [rip + disp32] */
		if (in->raw.disp.size != 32)
			return PFLOPS_EINVAL;
		r->rip_rel = 1;
		r->disp_off = in->raw.disp.offset;
		r->rip_target = addr + in->length + (uint64_t)in->raw.disp.value;
	}
	/* a rep string instruction with %rcx = 0 writes no flags either */
	if (in->cpu_flags && !count_dependent(in->mnemonic) &&
	    !(in->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE))) {
		const ZydisAccessedFlags *f = in->cpu_flags;
		uint32_t w = f->modified | f->set_0 | f->set_1 | f->undefined;
		r->kills_flags = (w & KFLAGS) == KFLAGS && !(f->tested & KFLAGS);
		r->kills_cf = r->kills_flags && (w & ZYDIS_CPUFLAG_CF) && !(f->tested & ZYDIS_CPUFLAG_CF);
	}
	r->dead_reg = dead_reg(in, ops);
	if (modrm && in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && in->opcode == 0xff &&
	    (in->raw.modrm.reg == 2 || in->raw.modrm.reg == 4)) {
		/* call/jmp near through r/m64: keep segment and address-size
		 * prefixes (F2 bnd, F3, 3E notrack mean nothing to a mov) */
		r->ind_modrm = in->raw.modrm.offset;
		for (unsigned i = 0; i < in->raw.prefix_count; i++) {
			uint8_t v = in->raw.prefixes[i].value;
			if ((v & 0xf0) == 0x40)
				r->ind_rex = v;
			else if ((v == 0x26 || v == 0x2e || v == 0x36 || v == 0x64 || v == 0x65 || v == 0x67) &&
				 r->ind_npfx < sizeof r->ind_pfx)
				r->ind_pfx[r->ind_npfx++] = v;
		}
	}
	return 0;
}

int pft_reloc_decode(const uint8_t *buf, size_t len, uint64_t addr, struct pft_reloc *r)
{
	ZydisDecodedInstruction in;
	ZydisDecoderContext ctx;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct pft_insn fast;
	int have_ops;

	if (!pft_arch_decode_fast(buf, len, addr, &fast, r))
		return 0;
	if (!dec_ready) {
		ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
		dec_ready = 1;
	}
	memset(r, 0, sizeof *r);
	/* the instruction alone: what is needed here is in its raw fields,
	 * but for the few whose operands may give a dead register */
	if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&dec, &ctx, buf, len, &in)))
		return PFLOPS_EINVAL;
	have_ops = pft_reloc_dead_candidate(&in) &&
		   ZYAN_SUCCESS(ZydisDecoderDecodeOperands(&dec, &ctx, &in, ops, ZYDIS_MAX_OPERAND_COUNT));
	return pft_reloc_fill(&in, have_ops ? ops : NULL, addr, r);
}

/* The general registers (bit = number) the instruction at buf reads or
 * writes, explicitly or not, addresses included; all of them when it
 * does not decode.  For a loop's count, which borrows one it leaves
 * alone (trace_gen.c): one the loop uses would go through the slot at
 * every turn, on the loop's chain.  *stores: set when it writes memory. */
uint32_t pft_reloc_gprs(const uint8_t *buf, size_t len, int *stores)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint32_t m = 0;

	if (!dec_ready) {
		ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
		dec_ready = 1;
	}
	if (ZYAN_FAILED(ZydisDecoderDecodeFull(&dec, buf, len, &in, ops)))
		return *stores = 1, 0xffff;
	for (unsigned i = 0; i < in.operand_count; i++) {
		ZydisRegister g[3] = { ZYDIS_REGISTER_NONE, ZYDIS_REGISTER_NONE, ZYDIS_REGISTER_NONE };
		if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER)
			g[0] = ops[i].reg.value;
		else if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY) {
			g[1] = ops[i].mem.base;
			g[2] = ops[i].mem.index;
			if (ops[i].mem.type != ZYDIS_MEMOP_TYPE_AGEN &&
			    (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
				*stores = 1;
		}
		for (int k = 0; k < 3; k++)
			if (g[k] != ZYDIS_REGISTER_NONE && is_gpr(g[k]))
				m |= 1u << ZydisRegisterGetId(whole(g[k]));
	}
	return m;
}
