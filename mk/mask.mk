# Masked AVX-512 lanes: the sampled-opmask estimator (docs/masked-lanes.md).
# Its tests that run the x86 calibration kernels: mk/x86_64/trace.mk.
MASK_CORE = components/flops/core
CORE_SRCS += $(MASK_CORE)/maskest.c
CORE_SRCS += $(MASK_CORE)/perf_records.c
CHECK_PROGS += $(B)/ctests/test_records
CORE_SRCS += $(MASK_CORE)/simd_caps.c
CHECK_PROGS += $(B)/ctests/test_simd_caps
CORE_SRCS += $(MASK_CORE)/simd_sample.c
CORE_SRCS += $(MASK_CORE)/mask_trace.c
