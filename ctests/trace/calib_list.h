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
