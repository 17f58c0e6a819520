# Masked AVX-512 lanes: the sampled-opmask estimator (docs/masked-lanes.md).
MASK_CORE = components/flops/core
CORE_SRCS += $(MASK_CORE)/maskest.c
CHECK_PROGS += $(B)/ctests/test_mask
CORE_SRCS += $(MASK_CORE)/perf_records.c
CHECK_PROGS += $(B)/ctests/test_records
CORE_SRCS += $(MASK_CORE)/simd_caps.c
CHECK_PROGS += $(B)/ctests/test_simd_caps
CORE_SRCS += $(MASK_CORE)/simd_sample.c
CHECK_PROGS += $(B)/ctests/test_sampler
CORE_SRCS += $(MASK_CORE)/mask_trace.c
CHECK_PROGS += $(B)/ctests/test_mask_trace
