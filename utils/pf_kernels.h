/*
 * The calibration kernels papi_flops_check runs (the program
 * ctests/trace/calib_fp.c, installed as papi_flops_kernels): one
 * instruction class per kernel and its lanes; the CPU feature each needs
 * is calib_fp's (ctests/trace/calib_list.h).
 * Per loop iteration: one instruction.  FLOPs per iteration follow from
 * pflops_op_flops (FMA 2).
 */
#ifndef PF_KERNELS_H
#define PF_KERNELS_H
#include "papi_flops.h"
#include "../ctests/trace/calib_list.h"

struct pf_kernel {
	const char *name;
	int prec, width, op;
	unsigned full, active; /* lanes of the width, lanes the mask lets through */
	int extra;	       /* -1 or enum pflops_extra */
};

/* the rows of calib_list.h's truth table marked for the check, then the
 * kernels without FLOPs */
#define K_(k, p, w, o, full, act, masked, flops, chk) K_##chk(k, p, w, o, full, act)
#define K_0(k, p, w, o, full, act)
#define K_1(k, p, w, o, full, act) { #k, PFLOPS_##p, PFLOPS_##w, PFLOPS_OP_##o, full, act, -1 },
/* clang-format off */
static const struct pf_kernel pf_kernels[] = {
	CALIB_FP_TRUTH(K_)
	{ "intloop", -1, 0, 0, 0, 0, -1 }, /* integer SIMD, moves, logic: no FLOPs */
	{ "vinsertf128", -1, 0, 0, 0, 0, PFLOPS_X_VINSERTF128 },
};
/* clang-format on */
#undef K_
#undef K_0
#undef K_1
#define PF_NKERNELS (int)(sizeof(pf_kernels) / sizeof(pf_kernels[0]))

/* the pflops_cpufeat.h name of the feature kernel k needs ("" any x86-64) */
static inline const char *pf_kernel_feature(const struct pf_kernel *k)
{
	const char *f = calib_feature(k->name);
	return f ? f : "";
}

/* Masked AVX-512 kernels of calib_fp for the masked-lane sampling check:
 * a fixed run each, its exact FLOPs of one metric from the masks, and
 * what FP_ARITH counts (every lane). */
struct pf_mask_kernel {
	const char *name, *iterations, *region;
	int metric;
	double exact, full;
};
static const struct pf_mask_kernel pf_mask_kernels[] = {
	/* 2000 calls of daxpy(11): a full FMA and one under k1 = 0x07 */
	{ "daxpy_masked", "2000", "daxpy", PFLOPS_DP_OPS, 44000, 64000 },
	/* 8 FMAs per iteration under k1..k7 = 0x01..0x7f and none: 36 of 64 lanes */
	{ "fma_kmix", "1000", NULL, PFLOPS_DP_OPS, 72000, 128000 },
	{ "vaddpd_z_k1", "1000", NULL, PFLOPS_DP_OPS, 4000, 8000 },	    /* k1 = 0x0f: 4 of 8 */
	{ "vmulpd_y_k3", "1000", NULL, PFLOPS_DP_OPS, 2000, 4000 },	    /* k3 = 0x05: 2 of 4 */
	{ "vfmadd231ps_z_k2z", "1000", NULL, PFLOPS_SP_OPS, 16000, 32000 }, /* k2 = 0xff: 8 of 16 */
	/* k1 = i & 0xff before each vaddpd zmm{k1}, i = 1000..1: sum of popcounts 3960 */
	{ "kmask_in_block", "1000", NULL, PFLOPS_DP_OPS, 3960, 8000 },
	/* unmasked (k0): the correction must be zero */
	{ "vfmadd231pd_z", "1000", NULL, PFLOPS_DP_OPS, 16000, 16000 },
};
#define PF_NMASK_KERNELS (int)(sizeof(pf_mask_kernels) / sizeof(pf_mask_kernels[0]))

/* The mix n iterations of kernel k execute (the loop's dec/jnz are not FP). */
static inline void pf_kernel_mix(const struct pf_kernel *k, unsigned long n, struct pflops_mix *m)
{
	__builtin_memset(m, 0, sizeof(*m));
	if (k->prec >= 0) {
		m->insts[k->prec][k->width][k->op] = n;
		m->masked[k->prec][k->width][k->op] = k->active != k->full ? n : 0;
		m->lanes_full[k->prec][k->width][k->op] = (uint64_t)n * k->full;
		m->lanes_active[k->prec][k->width][k->op] = (uint64_t)n * k->active;
	}
	if (k->extra >= 0)
		m->extra[k->extra] = n;
}
#endif
