/*
 * calib_list.h: the kernels of calib_fp and the CPU feature each needs
 * (a pflops_cpufeat.h name; "" runs on any x86-64).  The one place that
 * says so: calib_fp refuses a kernel this CPU lacks (exit 77, a skip to
 * the tests), the tests and papi_flops_check ask it before they expect.
 */
#ifndef CALIB_LIST_H
#define CALIB_LIST_H

/* One row a line, kept by hand: */
/* clang-format off */
#define CALIB_FP_KERNELS(X)						\
	/* SSE (legacy encoding) */					\
	X(addss, "") X(addsd, "") X(subps, "") X(addpd, "")		\
	X(mulsd, "") X(mulps, "") X(divss, "") X(divpd, "")		\
	X(sqrtsd, "") X(sqrtps, "") X(rcpps, "") X(rsqrtss, "")	\
	X(dpps, "sse4_1") X(maxpd, "") X(minss, "") X(haddpd, "")	\
	X(addsubps, "")							\
	/* AVX / FMA3 (VEX) */						\
	X(vaddps_x, "avx") X(vaddpd_y, "avx") X(vsubps_y, "avx")	\
	X(vmulpd_y, "avx") X(vdivps_y, "avx") X(vsqrtpd_y, "avx")	\
	X(vfmadd231sd, "fma") X(vfmadd231ss, "fma")			\
	X(vfmadd213pd_x, "fma") X(vfnmsub231ps_y, "fma")		\
	X(vfmaddsub132pd_y, "fma") X(vaddsd, "avx")			\
	/* AVX-512 (EVEX) */						\
	X(vaddpd_z, "avx512f") X(vaddps_z, "avx512f")			\
	X(vmulps_z, "avx512f") X(vdivpd_z, "avx512f")			\
	X(vsqrtps_z, "avx512f") X(vfmadd231pd_z, "avx512f")		\
	X(vfmadd231ps_z, "avx512f") X(vrcp14pd_z, "avx512f")		\
	X(vmaxps_z, "avx512f") X(vaddpd_z_er, "avx512f")		\
	X(vaddps_y_evex, "avx512vl")					\
	X(vaddpd_z_k1, "avx512f") X(vfmadd231ps_z_k2z, "avx512f")	\
	X(vmulpd_y_k3, "avx512vl") X(vaddsd_k4, "avx512f")		\
	X(vaddsd_k1, "avx512f") X(vdivps_x_k1z, "avx512vl")		\
	/* AVX-512 FP16 */						\
	X(vaddph_x, "avx512_fp16") X(vaddph_y, "avx512_fp16")		\
	X(vaddph_z, "avx512_fp16") X(vaddsh, "avx512_fp16")		\
	X(vmulph_z, "avx512_fp16") X(vdivph_y, "avx512_fp16")		\
	X(vsqrtph_z, "avx512_fp16") X(vfmadd231ph_z, "avx512_fp16")	\
	X(vfmadd231sh, "avx512_fp16") X(vfmulcph_z, "avx512_fp16")	\
	X(vfcmaddcph_y, "avx512_fp16") X(vfmaddcsh, "avx512_fp16")	\
	X(vfmulcph_z_k1, "avx512_fp16") X(vaddph_z_k2, "avx512_fp16")	\
	/* AVX-512 BF16 */						\
	X(vdpbf16ps_z, "avx512_bf16") X(vdpbf16ps_x, "avx512_bf16")	\
	X(vdpbf16ps_y_k5, "avx512_bf16")				\
	/* no FLOPs (intloop has zmm integer work), extras, the bench loop */ \
	X(intloop, "avx512f") X(vinsertf128, "avx") X(vandpd_y, "avx")	\
	X(bench16, "avx512f")						\
	/* x87 */							\
	X(fadd, "") X(fmul, "") X(fdiv, "") X(fsqrt, "")		\
	/* the tracer's traps: masks written in a block, calls, flags */ \
	X(kmask_in_block, "avx512f") X(calls, "avx")			\
	X(flags_live, "avx") X(flags_rep, "avx") X(indirect, "avx")	\
	/* masked AVX-512 work with known lanes */			\
	X(daxpy_masked, "avx512f") X(fma_kmix, "avx512f")
/* clang-format on */

/*
 * What one iteration of each FP kernel executes, written by hand from the
 * instruction set manuals (the decoder is checked against it, never the
 * other way): precision, width, operation, lanes of the width, lanes the
 * mask lets through (k1=0x0f k2=0xff k3=0x05 k4=0 k5=0x3), masked,
 * FLOPs per instruction (FMA 2 a lane; DPP 1 an element, as SDE), and
 * whether papi_flops_check runs it (a smaller set, one per class).
 * The test (ctests/test_trace.c) and papi_flops_check (utils/pf_kernels.h)
 * both read this one table.
 */
/* clang-format off */
#define CALIB_FP_TRUTH(X) \
	/* SSE: 4 sp or 2 dp lanes per xmm; scalar 1 lane */ \
	X(addss, SP, SCALAR, ADD, 1, 1, 0, 1, 1) \
	X(addsd, DP, SCALAR, ADD, 1, 1, 0, 1, 1) \
	X(subps, SP, W128, ADD, 4, 4, 0, 4, 0) \
	X(addpd, DP, W128, ADD, 2, 2, 0, 2, 1) \
	X(mulsd, DP, SCALAR, MUL, 1, 1, 0, 1, 0) \
	X(mulps, SP, W128, MUL, 4, 4, 0, 4, 1) \
	X(divss, SP, SCALAR, DIV, 1, 1, 0, 1, 0) \
	X(divpd, DP, W128, DIV, 2, 2, 0, 2, 1) \
	X(sqrtsd, DP, SCALAR, SQRT, 1, 1, 0, 1, 1) \
	X(sqrtps, SP, W128, SQRT, 4, 4, 0, 4, 0) \
	X(rcpps, SP, W128, RCP, 4, 4, 0, 4, 1) \
	X(rsqrtss, SP, SCALAR, RCP, 1, 1, 0, 1, 0) \
	X(dpps, SP, W128, DPP, 4, 4, 0, 4, 1) /* SDE: 1 per element */ \
	X(maxpd, DP, W128, MINMAX, 2, 2, 0, 2, 1) \
	X(minss, SP, SCALAR, MINMAX, 1, 1, 0, 1, 0) \
	X(haddpd, DP, W128, ADD, 2, 2, 0, 2, 0) \
	X(addsubps, SP, W128, ADD, 4, 4, 0, 4, 0) \
	/* AVX/FMA3: ymm = 8 sp / 4 dp; FMA 2 FLOPs per lane */ \
	X(vaddps_x, SP, W128, ADD, 4, 4, 0, 4, 0) \
	X(vaddpd_y, DP, W256, ADD, 4, 4, 0, 4, 1) \
	X(vsubps_y, SP, W256, ADD, 8, 8, 0, 8, 1) \
	X(vmulpd_y, DP, W256, MUL, 4, 4, 0, 4, 0) \
	X(vdivps_y, SP, W256, DIV, 8, 8, 0, 8, 1) \
	X(vsqrtpd_y, DP, W256, SQRT, 4, 4, 0, 4, 0) \
	X(vfmadd231sd, DP, SCALAR, FMA, 1, 1, 0, 2, 1) \
	X(vfmadd231ss, SP, SCALAR, FMA, 1, 1, 0, 2, 0) \
	X(vfmadd213pd_x, DP, W128, FMA, 2, 2, 0, 4, 1) \
	X(vfnmsub231ps_y, SP, W256, FMA, 8, 8, 0, 16, 1) \
	X(vfmaddsub132pd_y, DP, W256, FMA, 4, 4, 0, 8, 0) \
	X(vaddsd, DP, SCALAR, ADD, 1, 1, 0, 1, 0) \
	/* AVX-512: zmm = 16 sp / 8 dp */ \
	X(vaddpd_z, DP, W512, ADD, 8, 8, 0, 8, 1) \
	X(vaddps_z, SP, W512, ADD, 16, 16, 0, 16, 1) \
	X(vmulps_z, SP, W512, MUL, 16, 16, 0, 16, 0) \
	X(vdivpd_z, DP, W512, DIV, 8, 8, 0, 8, 0) \
	X(vsqrtps_z, SP, W512, SQRT, 16, 16, 0, 16, 0) \
	X(vfmadd231pd_z, DP, W512, FMA, 8, 8, 0, 16, 1) \
	X(vfmadd231ps_z, SP, W512, FMA, 16, 16, 0, 32, 1) \
	X(vrcp14pd_z, DP, W512, RCP, 8, 8, 0, 8, 1) \
	X(vmaxps_z, SP, W512, MINMAX, 16, 16, 0, 16, 0) \
	X(vaddpd_z_er, DP, W512, ADD, 8, 8, 0, 8, 0) /* {rn-sae}: still zmm */ \
	X(vaddps_y_evex, SP, W256, ADD, 8, 8, 0, 8, 0) /* EVEX ymm16-18 */ \
	/* masked: k1=0x0f k2=0xff k3=0x05 k4=0 k5=0x3 */ \
	X(vaddpd_z_k1, DP, W512, ADD, 8, 4, 1, 4, 1) /* 4 of 8 */ \
	X(vfmadd231ps_z_k2z, SP, W512, FMA, 16, 8, 1, 16, 1) /* 8 of 16, x2 */ \
	X(vmulpd_y_k3, DP, W256, MUL, 4, 2, 1, 2, 1) /* 0b0101: 2 of 4 */ \
	X(vaddsd_k4, DP, SCALAR, ADD, 1, 0, 1, 0, 1) /* k4=0: none */ \
	X(vaddsd_k1, DP, SCALAR, ADD, 1, 1, 1, 1, 0) /* bit 0 set */ \
	X(vdivps_x_k1z, SP, W128, DIV, 4, 4, 1, 4, 0) /* 0x0f covers all 4 */ \
	/* FP16: xmm 8, ymm 16, zmm 32 halves */ \
	X(vaddph_x, HP, W128, ADD, 8, 8, 0, 8, 1) \
	X(vaddph_y, HP, W256, ADD, 16, 16, 0, 16, 0) \
	X(vaddph_z, HP, W512, ADD, 32, 32, 0, 32, 1) \
	X(vaddsh, HP, SCALAR, ADD, 1, 1, 0, 1, 1) \
	X(vmulph_z, HP, W512, MUL, 32, 32, 0, 32, 0) \
	X(vdivph_y, HP, W256, DIV, 16, 16, 0, 16, 0) \
	X(vsqrtph_z, HP, W512, SQRT, 32, 32, 0, 32, 0) \
	X(vfmadd231ph_z, HP, W512, FMA, 32, 32, 0, 64, 1) \
	X(vfmadd231sh, HP, SCALAR, FMA, 1, 1, 0, 2, 0) \
	/* complex FP16: a lane is one FP16 element, 1 FLOP each */ \
	X(vfmulcph_z, HP, W512, CMPLX, 32, 32, 0, 32, 1) \
	X(vfcmaddcph_y, HP, W256, CMPLX, 16, 16, 0, 16, 0) \
	X(vfmaddcsh, HP, SCALAR, CMPLX, 2, 2, 0, 2, 1) /* one complex */ \
	X(vfmulcph_z_k1, HP, W512, CMPLX, 32, 8, 1, 8, 0) /* 4 complex of 16 */ \
	X(vaddph_z_k2, HP, W512, ADD, 32, 8, 1, 8, 0) /* 8 halves of 32 */ \
	/* BF16 dot product: bf16 elements as FMA lanes */ \
	X(vdpbf16ps_z, BF16, W512, FMA, 32, 32, 0, 64, 1) \
	X(vdpbf16ps_x, BF16, W128, FMA, 8, 8, 0, 16, 0) \
	X(vdpbf16ps_y_k5, BF16, W256, FMA, 16, 4, 1, 8, 0) /* 2 fp32 lanes x 2 */ \
	/* x87 */ \
	X(fadd, X87, SCALAR, ADD, 1, 1, 0, 1, 1) \
	X(fmul, X87, SCALAR, MUL, 1, 1, 0, 1, 1) \
	X(fdiv, X87, SCALAR, DIV, 1, 1, 0, 1, 0) \
	X(fsqrt, X87, SCALAR, SQRT, 1, 1, 0, 1, 0)
/* clang-format on */

struct calib_need {
	const char *kernel, *feature;
};
#define CALIB_NEED_(k, f) { #k, f },
static const struct calib_need calib_needs[] = { CALIB_FP_KERNELS(CALIB_NEED_) };
#undef CALIB_NEED_

/* The feature KERNEL needs; NULL for a kernel calib_fp does not have. */
static inline const char *calib_feature(const char *kernel)
{
	for (unsigned i = 0; i < sizeof calib_needs / sizeof calib_needs[0]; i++) {
		const char *a = kernel, *b = calib_needs[i].kernel;

		while (*a && *a == *b)
			a++, b++;
		if (*a == *b)
			return calib_needs[i].feature;
	}
	return 0;
}

#endif
