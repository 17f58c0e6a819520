/*
 * trace_zydis.h: what the x86_64 files share about an instruction
 * Zydis has decoded: one decode serves both the block's FLOP class
 * (trace_decode.c) and its relocation (trace_reloc.c).
 */
#ifndef PFT_TRACE_ZYDIS_H
#define PFT_TRACE_ZYDIS_H

#include <Zydis/Zydis.h>

#include "../pft_arch.h"

/* r from the decoded instruction in at addr (ops: its operands, or NULL
 * when not decoded: no dead_reg then): 0 or PFLOPS_EINVAL */
int pft_reloc_fill(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops, uint64_t addr,
		   struct pft_reloc *r);
/* the mnemonics pft_reloc_fill may find a dead_reg in (worth decoding
 * the operands of) */
int pft_reloc_dead_candidate(const ZydisDecodedInstruction *in);
/* in's operands say something pft_arch_decode needs: a branch's target,
 * an opmask it writes (EVEX and the k-register instructions: no other
 * instruction writes an opmask, nor rip outside the branch categories,
 * as test_trace_reloc checks against Zydis's full decode), a dead_reg */
int pft_arch_decode_ops(const ZydisDecodedInstruction *in);
/* pft_arch_decode's two ways: the common integer forms without Zydis
 * (trace_fastdec.c; -1: not one of them, nothing written), and Zydis */
int pft_arch_decode_fast(const uint8_t *buf, size_t len, uint64_t addr, struct pft_insn *out, struct pft_reloc *r);
int pft_arch_decode_zydis(const uint8_t *buf, size_t len, uint64_t addr, struct pft_insn *out, struct pft_reloc *r);

#endif
