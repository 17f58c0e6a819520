/*
 * trace_internal.h: all of the engine's private headers at once (not
 * installed); each one has one job, a file may include only those.
 *
 * The engine (trace_ptrace.c) runs every thread of the traced program in
 * one of three modes:
 *   STOP    the stopping engine: an int3 at the end of each basic block
 *           (trace_blocks.c, trace_emul.c), a ptrace stop per block;
 *   CACHE   the code cache: the thread runs relocated copies of the
 *           program's blocks that count their own executions
 *           (trace_xlate.c, trace_arena.c); it stops only at blocks not
 *           yet translated, system calls the tracer watches (trace_sys.c)
 *           and signals;
 *   NATIVE  --region outside the region: the program's own code, no
 *           stops except our int3s (region entries, shared code).
 */
#ifndef PFT_TRACE_INTERNAL_H
#define PFT_TRACE_INTERNAL_H

#include "pft_arch.h"
#include "trace_block.h"
#include "trace_space.h"
#include "trace_elf.h"
#include "trace_prof.h"
#include "trace_cache.h"
#include "trace_thread.h"
#include "trace_engine.h"
#include "trace_count.h"
#include "trace_wprot.h"
#include "trace_hints.h"

#endif
