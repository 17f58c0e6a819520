/*
 * trace_emul.c: execute a block's terminating branch in the tracer.
 *
 * The terminator carries our int3, so the thread cannot run it; setting
 * rip (and rsp, and the return address for calls) ourselves costs no
 * second stop, where restoring the byte and single-stepping would cost
 * one and open a window in which other threads pass the branch unseen.
 * (With CET shadow stacks enabled this would break call/ret; Debian's
 * glibc does not enable them.)
 */
#include <Zydis/Zydis.h>

#include "../pft_arch.h"

static uint64_t reg64(const struct user_regs_struct *r, ZydisRegister reg)
{
	switch (reg) {
	case ZYDIS_REGISTER_RAX:
		return r->rax;
	case ZYDIS_REGISTER_RBX:
		return r->rbx;
	case ZYDIS_REGISTER_RCX:
		return r->rcx;
	case ZYDIS_REGISTER_RDX:
		return r->rdx;
	case ZYDIS_REGISTER_RSI:
		return r->rsi;
	case ZYDIS_REGISTER_RDI:
		return r->rdi;
	case ZYDIS_REGISTER_RBP:
		return r->rbp;
	case ZYDIS_REGISTER_RSP:
		return r->rsp;
	case ZYDIS_REGISTER_R8:
		return r->r8;
	case ZYDIS_REGISTER_R9:
		return r->r9;
	case ZYDIS_REGISTER_R10:
		return r->r10;
	case ZYDIS_REGISTER_R11:
		return r->r11;
	case ZYDIS_REGISTER_R12:
		return r->r12;
	case ZYDIS_REGISTER_R13:
		return r->r13;
	case ZYDIS_REGISTER_R14:
		return r->r14;
	case ZYDIS_REGISTER_R15:
		return r->r15;
	default:
		return 0;
	}
}

/* value of a general register of any width; rip reads as next_ip */
static int reg_value(const struct user_regs_struct *r, int reg, uint64_t next_ip, uint64_t *v)
{
	ZydisRegister big;
	unsigned w;

	if (reg == ZYDIS_REGISTER_NONE) {
		*v = 0;
		return 0;
	}
	if (reg == ZYDIS_REGISTER_RIP || reg == ZYDIS_REGISTER_EIP) {
		*v = reg == ZYDIS_REGISTER_EIP ? (uint32_t)next_ip : next_ip;
		return 0;
	}
	big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, (ZydisRegister)reg);
	w = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, (ZydisRegister)reg);
	if (ZydisRegisterGetClass(big) != ZYDIS_REGCLASS_GPR64)
		return PFLOPS_EINVAL;
	*v = reg64(r, big);
	if (w < 64)
		*v &= (1ULL << w) - 1;
	return 0;
}

static int cond(unsigned cc, uint64_t fl)
{
	int cf = fl & 1, pf = (fl >> 2) & 1, zf = (fl >> 6) & 1, sf = (fl >> 7) & 1, of = (fl >> 11) & 1, c;

	switch (cc >> 1) {
	case 0:
		c = of;
		break;
	case 1:
		c = cf;
		break;
	case 2:
		c = zf;
		break;
	case 3:
		c = cf | zf;
		break;
	case 4:
		c = sf;
		break;
	case 5:
		c = pf;
		break;
	case 6:
		c = sf != of;
		break;
	default:
		c = zf | (sf != of);
		break;
	}
	return (cc & 1) ? !c : c;
}

static int target(const struct pft_insn *t, const struct pft_arch_mem *m, const struct user_regs_struct *r,
		  uint64_t next_ip, uint64_t *dst)
{
	uint64_t base, index, ea;

	switch (t->ind) {
	case 0:
		*dst = t->target;
		return 0;
	case 1:
		return reg_value(r, t->reg, next_ip, dst);
	default:
		if (reg_value(r, t->mbase, next_ip, &base) || reg_value(r, t->mindex, next_ip, &index))
			return PFLOPS_EINVAL;
		ea = base + index * (t->mindex ? t->mscale : 0) + (uint64_t)t->mdisp;
		if (t->mseg == ZYDIS_REGISTER_FS)
			ea += r->fs_base;
		else if (t->mseg == ZYDIS_REGISTER_GS)
			ea += r->gs_base;
		return m->read64(m->ctx, ea, dst);
	}
}

int pft_arch_emulate(const struct pft_insn *t, uint64_t at, const struct pft_arch_mem *m, struct user_regs_struct *regs)
{
	uint64_t next = at + t->len, dst, cnt;
	int rc;

	switch (t->term) {
	case PFT_T_JCC:
		regs->rip = cond(t->cc, regs->eflags) ? t->target : next;
		return 0;
	case PFT_T_JRCXZ:
		cnt = t->addr32 ? (uint32_t)regs->rcx : regs->rcx;
		regs->rip = cnt == 0 ? t->target : next;
		return 0;
	case PFT_T_LOOP: {
		int take;
		if (t->addr32) {
			cnt = (uint32_t)(regs->rcx - 1);
			regs->rcx = (regs->rcx & ~0xffffffffULL) | cnt;
		} else {
			cnt = --regs->rcx;
		}
		take = cnt != 0;
		if (t->cc == 0) /* loopne */
			take = take && !((regs->eflags >> 6) & 1);
		else if (t->cc == 1) /* loope */
			take = take && ((regs->eflags >> 6) & 1);
		regs->rip = take ? t->target : next;
		return 0;
	}
	case PFT_T_JMP:
		rc = target(t, m, regs, next, &dst);
		if (rc)
			return rc;
		regs->rip = dst;
		return 0;
	case PFT_T_CALL:
		/* the target may read rsp: evaluate it before the push */
		rc = target(t, m, regs, next, &dst);
		if (rc)
			return rc;
		rc = m->write64(m->ctx, regs->rsp - 8, next);
		if (rc)
			return rc;
		regs->rsp -= 8;
		regs->rip = dst;
		return 0;
	case PFT_T_RET:
		rc = m->read64(m->ctx, regs->rsp, &dst);
		if (rc)
			return rc;
		regs->rsp += 8 + t->ret_imm;
		regs->rip = dst;
		return 0;
	default:
		return PFLOPS_EINVAL;
	}
}

/* pushf (9c) or popf (9d), perhaps with an operand-size prefix */
int pft_arch_flagsop(const uint8_t *p, size_t len)
{
	if (len >= 2 && p[0] == 0x66)
		p++;
	return len >= 1 && (p[0] | 1) == 0x9d;
}

void pft_arch_step_flags(const uint8_t *op, size_t len, const struct user_regs_struct *r, const struct pft_arch_mem *m,
			 uint64_t *tf)
{
	int wide = !(len >= 2 && op[0] == 0x66);
	uint8_t o = wide ? op[0] : op[1];
	uint64_t at, w;

	if (!pft_arch_flagsop(op, len))
		return;
	/* pushf: the flags at the stack top; popf: just above it */
	at = o == 0x9c ? r->rsp : r->rsp - (wide ? 8 : 2);
	if (m->read64(m->ctx, at, &w))
		return;
	if (o == 0x9d)
		*tf = w & PFT_TF; /* what it loaded */
	else if ((w & PFT_TF) != *tf)
		m->write64(m->ctx, at, (w & ~PFT_TF) | *tf);
}
