/*
 * trace_zydis.h: what the x86_64 files share about an instruction
 * Zydis has decoded: one decode serves both the block's FLOP class
 * (trace_decode.c) and its relocation (trace_reloc.c).
 */
#ifndef PFT_TRACE_ZYDIS_H
#define PFT_TRACE_ZYDIS_H

#include <Zydis/Zydis.h>

#include "../pft_arch.h"

/* r from the decoded instruction in at addr: 0 or PFLOPS_EINVAL */
int pft_reloc_fill(const ZydisDecodedInstruction *in, uint64_t addr, struct pft_reloc *r);

#endif
