/*
 * trace_decode.c: decode one x86-64 instruction with Zydis and classify
 * it: FLOP class (precision, width, operation, lanes, opmask), opmask
 * registers it writes, and how it ends a basic block (for emulation).
 *
 * The FLOP classes follow Intel SDE's list (ADD SUB MUL DIV SQRT RCP FMA
 * FMS DPP MAX MIN) plus x87 and the AVX-512 FP16 / BF16 forms.  The
 * classification works on the mnemonic text: every such instruction is
 * <op><suffix> with suffix ps/pd/ph (packed) or ss/sd/sh (scalar), once
 * the VEX/EVEX 'v' is dropped, which keeps the table short and complete.
 */
#include <string.h>
#include <ctype.h>
#include <Zydis/Zydis.h>

#include "pflops_trace.h"
#include "trace_zydis.h"

static ZydisDecoder decoder;
static int decoder_ready;

struct opname {
	const char *name;
	enum pflops_op op;
};

/* Longest names first so that "addsub" is not taken for "add". */
static const struct opname vec_ops[] = {
	{ "addsub", PFLOPS_OP_ADD }, { "rsqrt14", PFLOPS_OP_RCP }, { "rsqrt28", PFLOPS_OP_RCP },
	{ "rcp14", PFLOPS_OP_RCP },  { "rcp28", PFLOPS_OP_RCP },   { "rsqrt", PFLOPS_OP_RCP },
	{ "sqrt", PFLOPS_OP_SQRT },  { "hadd", PFLOPS_OP_ADD },	   { "hsub", PFLOPS_OP_ADD },
	{ "add", PFLOPS_OP_ADD },    { "sub", PFLOPS_OP_ADD },	   { "mul", PFLOPS_OP_MUL },
	{ "div", PFLOPS_OP_DIV },    { "rcp", PFLOPS_OP_RCP },	   { "min", PFLOPS_OP_MINMAX },
	{ "max", PFLOPS_OP_MINMAX }, { "dp", PFLOPS_OP_DPP },
};

static const struct opname x87_ops[] = {
	{ "fadd", PFLOPS_OP_ADD },   { "faddp", PFLOPS_OP_ADD }, { "fiadd", PFLOPS_OP_ADD },
	{ "fsub", PFLOPS_OP_ADD },   { "fsubp", PFLOPS_OP_ADD }, { "fsubr", PFLOPS_OP_ADD },
	{ "fsubrp", PFLOPS_OP_ADD }, { "fisub", PFLOPS_OP_ADD }, { "fisubr", PFLOPS_OP_ADD },
	{ "fmul", PFLOPS_OP_MUL },   { "fmulp", PFLOPS_OP_MUL }, { "fimul", PFLOPS_OP_MUL },
	{ "fdiv", PFLOPS_OP_DIV },   { "fdivp", PFLOPS_OP_DIV }, { "fdivr", PFLOPS_OP_DIV },
	{ "fdivrp", PFLOPS_OP_DIV }, { "fidiv", PFLOPS_OP_DIV }, { "fidivr", PFLOPS_OP_DIV },
	{ "fsqrt", PFLOPS_OP_SQRT },
};

/* Element suffix: precision, element bits, packed? */
static int suffix(const char *s, int *prec, int *bits, int *packed)
{
	static const struct {
		const char *s;
		int prec, bits, packed;
	} t[] = {
		{ "ps", PFLOPS_SP, 32, 1 }, { "pd", PFLOPS_DP, 64, 1 }, { "ph", PFLOPS_HP, 16, 1 },
		{ "ss", PFLOPS_SP, 32, 0 }, { "sd", PFLOPS_DP, 64, 0 }, { "sh", PFLOPS_HP, 16, 0 },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(s, t[i].s)) {
			*prec = t[i].prec;
			*bits = t[i].bits;
			*packed = t[i].packed;
			return 1;
		}
	return 0;
}

/* fmadd/fmsub/fnmadd/fnmsub/fmaddsub/fmsubadd [132|213|231] <suffix> */
static const char *fma_rest(const char *m)
{
	static const char *const forms[] = { "fmaddsub", "fmsubadd", "fnmadd", "fnmsub", "fmadd", "fmsub" };
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		size_t n = strlen(forms[i]);
		if (strncmp(m, forms[i], n))
			continue;
		m += n;
		if (!strncmp(m, "132", 3) || !strncmp(m, "213", 3) || !strncmp(m, "231", 3))
			m += 3;
		return m;
	}
	return NULL;
}

/* Fill the FLOP class from the mnemonic; out->width must hold the vector
 * width of the instruction (PFLOPS_W128.. or SCALAR for legacy x87). */
static void classify_fp(const char *mn, int vex, int vlen, struct pft_insn *out)
{
	char m[32];
	const char *r;
	int prec, bits, packed, op = -1, per_bit = 1;
	size_t i;

	for (i = 0; mn[i] && i < sizeof m - 1; i++)
		m[i] = (char)tolower((unsigned char)mn[i]);
	m[i] = 0;

	for (i = 0; i < sizeof x87_ops / sizeof x87_ops[0]; i++)
		if (!strcmp(m, x87_ops[i].name)) {
			out->fp = 1;
			out->prec = PFLOPS_X87;
			out->width = PFLOPS_SCALAR;
			out->op = x87_ops[i].op;
			out->lanes = 1;
			out->lanes_per_bit = 1;
			return;
		}

	r = m;
	if (vex && r[0] == 'v')
		r++;
	if (!strcmp(r, "dpbf16ps")) {
		/* 2 bf16 products summed into each fp32 lane: count the bf16
		 * elements as FMA lanes (2 FLOPs each); one mask bit per
		 * fp32 lane = 2 elements. */
		prec = PFLOPS_BF16;
		bits = 16;
		packed = 1;
		op = PFLOPS_OP_FMA;
		per_bit = 2;
	} else if (!strncmp(r, "fmulc", 5) || !strncmp(r, "fcmulc", 6) || !strncmp(r, "fmaddc", 6) ||
		   !strncmp(r, "fcmaddc", 7)) {
		/* FP16 complex: each mask bit covers one complex number */
		const char *s = r + strlen(r) - 2;
		if (!suffix(s, &prec, &bits, &packed) || prec != PFLOPS_HP)
			return;
		op = PFLOPS_OP_CMPLX;
		per_bit = 2;
	} else if ((r = fma_rest(m + (vex && m[0] == 'v'))) != NULL) {
		if (!suffix(r, &prec, &bits, &packed))
			return;
		op = PFLOPS_OP_FMA;
	} else {
		r = m + (vex && m[0] == 'v');
		for (i = 0; i < sizeof vec_ops / sizeof vec_ops[0]; i++) {
			size_t n = strlen(vec_ops[i].name);
			if (!strncmp(r, vec_ops[i].name, n) && suffix(r + n, &prec, &bits, &packed)) {
				op = vec_ops[i].op;
				break;
			}
		}
		if (op < 0)
			return;
	}
	out->fp = 1;
	out->prec = (uint8_t)prec;
	out->op = (uint8_t)op;
	out->lanes_per_bit = (uint8_t)per_bit;
	if (!packed) {
		out->width = PFLOPS_SCALAR;
		out->lanes = (uint8_t)per_bit; /* complex scalar: 2 FP16 */
	} else {
		out->width = vlen == 512 ? PFLOPS_W512 : vlen == 256 ? PFLOPS_W256 : PFLOPS_W128;
		out->lanes = (uint8_t)(vlen / bits);
	}
}

/* The class depends on the mnemonic, VEX/EVEX and the vector length
 * only: computed once per triple (the decoder runs for every block the
 * tracer meets; string matching per instruction showed in profiles). */
struct fpclass {
	uint8_t valid, fp, prec, width, op, lanes, per_bit;
};
static struct fpclass fp_memo[ZYDIS_MNEMONIC_MAX_VALUE + 1][2][3];
static uint8_t pspd_memo[ZYDIS_MNEMONIC_MAX_VALUE + 1]; /* 0 ?, 1 no, 2 yes */

static void classify_fp_memo(ZydisMnemonic mn, int vex, int vlen, struct pft_insn *out)
{
	struct fpclass *c = &fp_memo[mn][vex != 0][vlen == 512 ? 2 : vlen == 256];

	if (!c->valid) {
		struct pft_insn t;
		memset(&t, 0, sizeof t);
		classify_fp(ZydisMnemonicGetString(mn), vex, vlen, &t);
		*c = (struct fpclass){ 1, t.fp, t.prec, t.width, t.op, t.lanes, t.lanes_per_bit };
	}
	if (!c->fp)
		return;
	out->fp = 1;
	out->prec = c->prec;
	out->width = c->width;
	out->op = c->op;
	out->lanes = c->lanes;
	out->lanes_per_bit = c->per_bit;
}

static int ends_ps_pd(ZydisMnemonic mn)
{
	if (!pspd_memo[mn]) {
		const char *m = ZydisMnemonicGetString(mn);
		size_t n = strlen(m);
		pspd_memo[mn] = n > 2 && (!strcmp(m + n - 2, "ps") || !strcmp(m + n - 2, "pd")) ? 2 : 1;
	}
	return pspd_memo[mn] == 2;
}

static int is_mask_reg(ZydisRegister r)
{
	return r >= ZYDIS_REGISTER_K0 && r <= ZYDIS_REGISTER_K7;
}

static void classify_branch(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops, uint64_t addr,
			    struct pft_insn *out)
{
	const ZydisDecodedOperand *o = &ops[0];

	switch (in->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		switch (in->mnemonic) {
		case ZYDIS_MNEMONIC_JRCXZ:
		case ZYDIS_MNEMONIC_JECXZ:
		case ZYDIS_MNEMONIC_JCXZ:
			out->term = PFT_T_JRCXZ;
			break;
		case ZYDIS_MNEMONIC_LOOP:
		case ZYDIS_MNEMONIC_LOOPE:
		case ZYDIS_MNEMONIC_LOOPNE:
			out->term = PFT_T_LOOP;
			break;
		default:
			out->term = PFT_T_JCC;
			break;
		}
		out->cc = in->opcode & 0x0f; /* 7x, 0f 8x, e0..e3 */
		out->addr32 = in->address_width == 32;
		break;
	case ZYDIS_CATEGORY_UNCOND_BR:
		out->term = PFT_T_JMP;
		break;
	case ZYDIS_CATEGORY_CALL:
		out->term = PFT_T_CALL;
		break;
	case ZYDIS_CATEGORY_RET:
		out->term = PFT_T_RET;
		if (o->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && o->visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT)
			out->ret_imm = (uint16_t)o->imm.value.u;
		break;
	case ZYDIS_CATEGORY_SYSCALL:
		out->term = in->mnemonic == ZYDIS_MNEMONIC_SYSCALL || in->mnemonic == ZYDIS_MNEMONIC_SYSENTER
				    ? PFT_T_SYSCALL
				    : PFT_T_OTHER;
		return;
	case ZYDIS_CATEGORY_INTERRUPT:
		out->term = in->mnemonic == ZYDIS_MNEMONIC_INT && o->imm.value.u == 0x80 ? PFT_T_SYSCALL : PFT_T_OTHER;
		return;
	default:
		out->term = PFT_T_OTHER;
		return;
	}

	/* far or 16/32-bit operand-size forms: rare, single-step them */
	if (in->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR || (out->term != PFT_T_JCC && out->term != PFT_T_LOOP &&
							      out->term != PFT_T_JRCXZ && in->operand_width != 64)) {
		out->term = PFT_T_OTHER;
		return;
	}
	if (out->term == PFT_T_RET)
		return;
	if (o->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && o->imm.is_relative) {
		out->ind = 0;
		out->target = addr + in->length + (uint64_t)o->imm.value.s;
	} else if (o->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		out->ind = 1;
		out->reg = (int16_t)o->reg.value;
	} else if (o->type == ZYDIS_OPERAND_TYPE_MEMORY) {
		out->ind = 2;
		out->mseg = (int16_t)o->mem.segment;
		out->mbase = (int16_t)o->mem.base;
		out->mindex = (int16_t)o->mem.index;
		out->mscale = o->mem.scale;
		out->mdisp = o->mem.disp.value;
	} else {
		out->term = PFT_T_OTHER;
	}
}

int pfc_decode(const uint8_t *buf, size_t len, uint64_t addr, struct pft_insn *out)
{
	return pft_arch_decode(buf, len, addr, out, NULL);
}

/* the categories classify_branch sorts (all that write rip) */
static int branch_category(int c)
{
	switch (c) {
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSRET:
		return 1;
	default:
		return 0;
	}
}

int pft_arch_decode_ops(const ZydisDecodedInstruction *in)
{
	int c = in->meta.category;

	return branch_category(c) || c == ZYDIS_CATEGORY_KMASK || c == ZYDIS_CATEGORY_KNC ||
	       c == ZYDIS_CATEGORY_KNCMASK || in->encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX ||
	       in->encoding == ZYDIS_INSTRUCTION_ENCODING_MVEX || pft_reloc_dead_candidate(in);
}

int pft_arch_decode(const uint8_t *buf, size_t len, uint64_t addr, struct pft_insn *out, struct pft_reloc *r)
{
	if (!pft_arch_decode_fast(buf, len, addr, out, r))
		return 0;
	return pft_arch_decode_zydis(buf, len, addr, out, r);
}

int pft_arch_decode_zydis(const uint8_t *buf, size_t len, uint64_t addr, struct pft_insn *out, struct pft_reloc *r)
{
	ZydisDecodedInstruction in;
	ZydisDecoderContext ctx;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	int vex, have_ops;

	if (!decoder_ready) {
		ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
		decoder_ready = 1;
	}
	memset(out, 0, sizeof *out);
	out->extra = -1;
	/* the operands only where they say something (a third of Zydis's
	 * time went to decoding them for every instruction) */
	if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&decoder, &ctx, buf, len, &in)))
		return PFLOPS_EINVAL;
	have_ops = pft_arch_decode_ops(&in);
	if (have_ops) {
		/* zeros where it writes nothing, as ZydisDecoderDecodeFull
		 * leaves them (classify_branch reads the first operand) */
		memset(ops, 0, sizeof ops);
		if (ZYAN_FAILED(ZydisDecoderDecodeOperands(&decoder, &ctx, &in, ops, ZYDIS_MAX_OPERAND_COUNT)))
			return PFLOPS_EINVAL;
	}
	out->len = in.length;
	if (r && pft_reloc_fill(&in, have_ops ? ops : NULL, addr, r))
		r->len = 0; /* no copy can be made of it */
	vex = in.encoding == ZYDIS_INSTRUCTION_ENCODING_VEX || in.encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX;

	for (unsigned i = 0; have_ops && i < in.operand_count; i++) {
		if (ops[i].type != ZYDIS_OPERAND_TYPE_REGISTER)
			continue;
		if (is_mask_reg(ops[i].reg.value) && (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			out->kwrites |= (uint8_t)(1u << (ops[i].reg.value - ZYDIS_REGISTER_K0));
		if (ops[i].reg.value == ZYDIS_REGISTER_RIP && (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
		    out->term == PFT_T_NONE)
			out->term = PFT_T_OTHER;
	}
	if (branch_category(in.meta.category)) {
		out->term = PFT_T_NONE;
		classify_branch(&in, ops, addr, out);
		return 0;
	}
	/* ud2, hlt, int3 padding: decoding past them runs into data */
	switch (in.mnemonic) {
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_HLT:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_XBEGIN:
	case ZYDIS_MNEMONIC_XABORT:
	case ZYDIS_MNEMONIC_XEND:
		out->term = PFT_T_OTHER;
		return 0;
	default:
		break;
	}
	if (out->term != PFT_T_NONE)
		return 0;

	classify_fp_memo(in.mnemonic, vex, vex ? in.avx.vector_length : 128, out);
	if (out->fp && in.encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX && is_mask_reg(in.avx.mask.reg) &&
	    in.avx.mask.reg != ZYDIS_REGISTER_K0 &&
	    (in.avx.mask.mode == ZYDIS_MASK_MODE_MERGING || in.avx.mask.mode == ZYDIS_MASK_MODE_ZEROING))
		out->mask_reg = (uint8_t)(in.avx.mask.reg - ZYDIS_REGISTER_K0);

	if (in.mnemonic == ZYDIS_MNEMONIC_VINSERTF128) {
		out->extra = PFLOPS_X_VINSERTF128;
	} else if (!out->fp && vex && in.avx.vector_length == 256) {
		/* 256-bit ps/pd work that is no FLOP class and no plain data
		 * move (logic, blend, shuffle, compare, convert): what
		 * Haswell's AVX_INSTS.CALC counts besides arithmetic. */
		int cat = in.meta.category;
		if (ends_ps_pd(in.mnemonic) && cat != ZYDIS_CATEGORY_DATAXFER && cat != ZYDIS_CATEGORY_BROADCAST &&
		    cat != ZYDIS_CATEGORY_AVX2GATHER && cat != ZYDIS_CATEGORY_GATHER && cat != ZYDIS_CATEGORY_SCATTER)
			out->extra = PFLOPS_X_256_NONFP;
	}
	return 0;
}

uint64_t pft_arch_branch_slot(const struct pft_insn *in, uint64_t at)
{
	if ((in->term != PFT_T_JMP && in->term != PFT_T_CALL) || in->ind != 2 || in->mbase != ZYDIS_REGISTER_RIP ||
	    in->mindex != ZYDIS_REGISTER_NONE || (in->mseg != ZYDIS_REGISTER_NONE && in->mseg != ZYDIS_REGISTER_DS))
		return 0;
	return at + in->len + (uint64_t)in->mdisp;
}
