/*
 * papi_flops.h: the PAPI-independent core of papi-flops.
 *
 * Error convention (the one rule every function here follows):
 *   Functions that can fail return int: PFLOPS_OK (0) on success or a
 *   negative PFLOPS_E* code.  Most take a `struct pflops_error *err` as
 *   last argument; when it is non-NULL and the call fails, err->msg holds
 *   one sentence naming the cause and, where there is one, the fix
 *   ("preset.pft:12: unknown event alias 'SD2'; declare it with 'event'").
 *   pflops_strerror(code) gives the generic text for a code.
 *   Functions returning pointers return NULL on failure and fill err.
 */
#ifndef PAPI_FLOPS_H
#define PAPI_FLOPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	PFLOPS_OK = 0,
	PFLOPS_EINVAL = -1,	/* bad argument or malformed input */
	PFLOPS_ENOMEM = -2,
	PFLOPS_ESYS = -3,	/* a system call failed (errno in the message) */
	PFLOPS_ENOENT = -4,	/* no such PMU, metric, event or file */
	PFLOPS_ENOCPU = -5,	/* unknown CPU: no formula for it */
	PFLOPS_EUNAVAIL = -6,	/* the metric cannot be counted on this PMU */
	PFLOPS_EPERM = -7,	/* perf_event_paranoid or capabilities forbid */
	PFLOPS_ENOPMU = -8,	/* no hardware PMU exposed (e.g. a VM) */
	PFLOPS_ECNFLCT = -9,	/* more counters than the core has */
	PFLOPS_EENCODE = -10,	/* libpfm4 cannot encode an event */
	PFLOPS_ECHILD = -11,	/* traced/run program failed to start */
};

#define PFLOPS_ERRMSG_MAX 512
struct pflops_error {
	int code;
	char msg[PFLOPS_ERRMSG_MAX];
};

const char *pflops_strerror(int code);

/* ---------------------------------------------------------------------
 * Instruction classes: what the tracer counts and what the per-PMU
 * models read.  One cell per (precision, width, operation).
 */
enum pflops_prec { PFLOPS_X87, PFLOPS_HP, PFLOPS_BF16, PFLOPS_SP, PFLOPS_DP,
		   PFLOPS_NPREC };
enum pflops_width { PFLOPS_SCALAR, PFLOPS_W128, PFLOPS_W256, PFLOPS_W512,
		    PFLOPS_NWIDTH };
enum pflops_op {
	PFLOPS_OP_ADD,		/* add, sub, addsub, hadd, hsub */
	PFLOPS_OP_MUL,
	PFLOPS_OP_DIV,
	PFLOPS_OP_SQRT,
	PFLOPS_OP_RCP,		/* rcp, rsqrt (and their 14/28-bit forms) */
	PFLOPS_OP_FMA,		/* fmadd, fmsub, fnmadd, fnmsub, fmaddsub ... */
	PFLOPS_OP_DPP,		/* dpps, dppd */
	PFLOPS_OP_MINMAX,
	PFLOPS_OP_CMPLX,	/* FP16 complex multiply (-add): vf[c]mulc*, vf[c]maddc* */
	PFLOPS_NOP
};

/* Extra instruction counts some PMU models need (not FLOPs). */
enum pflops_extra { PFLOPS_X_VINSERTF128, PFLOPS_X_256_NONFP, PFLOPS_NEXTRA };

struct pflops_mix {
	/* retired instructions per class */
	uint64_t insts[PFLOPS_NPREC][PFLOPS_NWIDTH][PFLOPS_NOP];
	/* of which executed under an AVX-512 opmask other than k0 */
	uint64_t masked[PFLOPS_NPREC][PFLOPS_NWIDTH][PFLOPS_NOP];
	/* elements operated on: all lanes of the width */
	uint64_t lanes_full[PFLOPS_NPREC][PFLOPS_NWIDTH][PFLOPS_NOP];
	/* elements operated on: active lanes only (mask applied) */
	uint64_t lanes_active[PFLOPS_NPREC][PFLOPS_NWIDTH][PFLOPS_NOP];
	uint64_t extra[PFLOPS_NEXTRA];
	uint64_t total_insts;	/* all retired instructions traced */
};

/* FLOPs per element for an operation: FMA 2, complex FP16 see DESIGN. */
unsigned pflops_op_flops(enum pflops_op op);
/* Exact FLOPs of a mix (active lanes x FLOPs per element), optionally
 * restricted to one precision (prec < 0: all). */
uint64_t pflops_mix_flops(const struct pflops_mix *m, int prec);

const char *pflops_prec_name(enum pflops_prec p);
const char *pflops_width_name(enum pflops_width w);
const char *pflops_op_name(enum pflops_op o);

#ifdef __cplusplus
}
#endif
#endif
