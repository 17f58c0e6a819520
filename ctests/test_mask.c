/*
 * test_mask.c: the masked-lane estimator (pflops_mask.h) on hand-built
 * sample sets whose answer is known: instructions given as their bytes
 * (assembled with GNU as, listed below), opmask values chosen, and the
 * active-lane share worked out from the lanes each mask lets through.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pflops_mask.h"

/* GNU as, objdump -d */
static const uint8_t FMA_K1[] = { 0x62, 0xf2, 0xed, 0x49, 0xb8, 0xc1 };	     /* vfmadd231pd %zmm1,%zmm2,%zmm0{%k1} */
static const uint8_t FMA[] = { 0x62, 0xf2, 0xed, 0x48, 0xb8, 0xc1 };	     /* vfmadd231pd %zmm1,%zmm2,%zmm0 */
static const uint8_t ADDPD_K2[] = { 0x62, 0xf1, 0xed, 0x4a, 0x58, 0xc1 };    /* vaddpd %zmm1,%zmm2,%zmm0{%k2} */
static const uint8_t ADDPS_K1[] = { 0x62, 0xf1, 0x6c, 0x49, 0x58, 0xc1 };    /* vaddps %zmm1,%zmm2,%zmm0{%k1} */
static const uint8_t ADD_RAX[] = { 0x48, 0x83, 0xc0, 0x01 };		     /* add $0x1,%rax */
static const uint8_t KMOVW_K1[] = { 0xc5, 0xf8, 0x92, 0xc8 };		     /* kmovw %eax,%k1 */
static const uint8_t VMULPD_Y_K3[] = { 0x62, 0xf1, 0xed, 0x2b, 0x59, 0xc1 }; /* vmulpd %ymm1,%ymm2,%ymm0{%k3} */
static const uint8_t JNE[] = { 0x75, 0xfe };				     /* jne . */
static const uint8_t VFMULCPH_K1[] = { 0x62, 0xf6, 0x6e, 0x49, 0xd6, 0xc1 }; /* vfmulcph %zmm1,%zmm2,%zmm0{%k1} */
static const uint8_t VADDSD_K1[] = { 0x62, 0xf1, 0xef, 0x09, 0x58, 0xc1 };   /* vaddsd %xmm1,%xmm2,%xmm0{%k1} */

#define D512_MODEL "inst prec=dp width=512 fma=2 dpp=2"

static struct pfc_mask_sample smp(const uint8_t *b, size_t len, int kreg, uint64_t kval)
{
	struct pfc_mask_sample s;
	memset(&s, 0, sizeof(s));
	s.ip = 0x401000;
	s.pid = 1;
	memcpy(s.insn, b, len);
	s.insn_len = (uint8_t)len;
	if (kreg >= 0) {
		s.have_k = 1;
		s.k[kreg] = kval;
	}
	return s;
}
#define SMP(b, kreg, kval) smp(b, sizeof(b), kreg, kval)

static struct pfc_mask_event d512(void)
{
	struct pfc_mask_event ev;
	assert_int_equal(pfc_mask_event_from_model(D512_MODEL, &ev, NULL), 0);
	ev.weight = 8;
	return ev;
}

/* one accumulator at a time; large (the decode cache) */
static struct pfc_mask_acc acc;
static struct pfc_mask_acc *fresh(const struct pfc_mask_event *ev)
{
	memset(&acc, 0, sizeof(acc));
	acc.ev = ev;
	return &acc;
}

static void test_event_from_model(void **state)
{
	(void)state;
	struct pfc_mask_event ev;
	struct pflops_error err = { 0 };
	assert_int_equal(pfc_mask_event_from_model(D512_MODEL, &ev, &err), 0);
	/* FP_ARITH counts an FMA twice, an add once, nothing of other classes */
	assert_true(ev.inc[PFLOPS_DP][PFLOPS_W512][PFLOPS_OP_FMA] == 2);
	assert_true(ev.inc[PFLOPS_DP][PFLOPS_W512][PFLOPS_OP_ADD] == 1);
	assert_true(ev.inc[PFLOPS_SP][PFLOPS_W512][PFLOPS_OP_FMA] == 0);
	assert_true(ev.inc[PFLOPS_DP][PFLOPS_W256][PFLOPS_OP_FMA] == 0);
	/* a FLOP-counting event: 8 lanes x 2 per 512-bit DP FMA */
	assert_int_equal(pfc_mask_event_from_model("flops prec=dp", &ev, &err), 0);
	assert_true(ev.inc[PFLOPS_DP][PFLOPS_W512][PFLOPS_OP_FMA] == 16);
	assert_true(ev.inc[PFLOPS_DP][PFLOPS_SCALAR][PFLOPS_OP_ADD] == 1);
	assert_int_equal(pfc_mask_event_from_model("none", &ev, &err), PFLOPS_EUNAVAIL);
	assert_int_equal(pfc_mask_event_from_model("inst width=1024", &ev, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "1024"));
}

/* A masked daxpy step: each call one full FMA and one FMA under k1 = 0x07
 * (3 of 8 lanes).  Every count is one of 2 per FMA: half the counts are
 * full, half 3/8: share 11/16, FLOPs 8 x count x 11/16. */
static void test_daxpy_shape(void **state)
{
	(void)state;
	struct pfc_mask_event ev = d512();
	struct pfc_mask_acc *a = fresh(&ev);
	for (int i = 0; i < 50; i++) {
		struct pfc_mask_sample f = SMP(FMA, 1, 0xff), m = SMP(FMA_K1, 1, 0x07);
		assert_int_equal(pfc_mask_add(a, &f, NULL, NULL, NULL), PFC_MS_USED);
		double sh = -1;
		assert_int_equal(pfc_mask_add(a, &m, NULL, NULL, &sh), PFC_MS_USED);
		assert_true(sh == 3.0 / 8);
	}
	struct pfc_mask_result r;
	pfc_mask_result(a, 400, &r); /* 200 FMAs: 400 counts, 100 sampled */
	assert_int_equal(r.used, 100);
	assert_int_equal(r.masked, 50);
	assert_true(r.share == 11.0 / 16);
	assert_true(r.full == 3200);
	assert_true(r.flops == 2200); /* 100 FMAs x 16 + 100 x 6 */
	assert_true(r.lo < 2200 && r.hi > 2200 && r.lo > 0 && r.hi < 3200);
}

/* Samples that cannot be used are counted apart and change nothing. */
static void test_unusable_samples(void **state)
{
	(void)state;
	struct pfc_mask_event ev = d512();
	struct pfc_mask_acc *a = fresh(&ev);
	for (int i = 0; i < 10; i++) {
		struct pfc_mask_sample m = SMP(FMA_K1, 1, 0x0f); /* 4 of 8 */
		pfc_mask_add(a, &m, NULL, NULL, NULL);
	}
	struct pfc_mask_sample junk[] = {
		SMP(ADD_RAX, 1, 0xff),	   /* not FP: skid */
		SMP(ADDPS_K1, 1, 0xff),	   /* single precision: not this event */
		SMP(VMULPD_Y_K3, 3, 0xff), /* 256-bit: not this event */
		SMP(KMOVW_K1, 1, 0xff),	   /* writes a mask, no FLOP */
	};
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		assert_int_equal(pfc_mask_add(a, &junk[i], NULL, NULL, NULL), PFC_MS_SKID);
	struct pfc_mask_sample nok = SMP(FMA_K1, -1, 0); /* masked, record without opmasks */
	assert_int_equal(pfc_mask_add(a, &nok, NULL, NULL, NULL), PFC_MS_NOMASK);
	struct pfc_mask_sample cut = smp(FMA_K1, 3, 1, 0xff); /* truncated EVEX */
	assert_int_equal(pfc_mask_add(a, &cut, NULL, NULL, NULL), PFC_MS_UNREADABLE);
	struct pfc_mask_sample none = SMP(FMA_K1, 1, 0xff);
	none.insn_len = 0; /* no bytes and no reader */
	assert_int_equal(pfc_mask_add(a, &none, NULL, NULL, NULL), PFC_MS_UNREADABLE);
	struct pfc_mask_result r;
	pfc_mask_result(a, 100, &r);
	assert_int_equal(r.samples, 17);
	assert_int_equal(r.used, 10);
	assert_int_equal(r.skid, 4);
	assert_int_equal(r.nomask, 1);
	assert_int_equal(r.unreadable, 2);
	assert_true(r.share == 0.5);
	/* an unmasked instruction needs no opmask registers */
	struct pfc_mask_sample f = SMP(FMA, -1, 0);
	assert_int_equal(pfc_mask_add(a, &f, NULL, NULL, NULL), PFC_MS_USED);
}

/* Other classes: FP16 complex (a mask bit per complex pair), scalar. */
static void test_lane_rules(void **state)
{
	(void)state;
	struct pfc_mask_event h, sd;
	double sh = -1;
	assert_int_equal(pfc_mask_event_from_model("inst prec=hp width=512 fma=2", &h, NULL), 0);
	struct pfc_mask_acc *a = fresh(&h);
	struct pfc_mask_sample c = SMP(VFMULCPH_K1, 1, 0x3); /* 2 pairs of 16: 4 of 32 lanes */
	assert_int_equal(pfc_mask_add(a, &c, NULL, NULL, &sh), PFC_MS_USED);
	assert_true(sh == 4.0 / 32);
	assert_int_equal(pfc_mask_event_from_model("inst prec=dp width=scalar fma=2", &sd, NULL), 0);
	a = fresh(&sd);
	struct pfc_mask_sample off = SMP(VADDSD_K1, 1, 0x2), on = SMP(VADDSD_K1, 1, 0x3);
	assert_int_equal(pfc_mask_add(a, &off, NULL, NULL, &sh), PFC_MS_USED);
	assert_true(sh == 0); /* bit 0 clear: the scalar lane is off */
	assert_int_equal(pfc_mask_add(a, &on, NULL, NULL, &sh), PFC_MS_USED);
	assert_true(sh == 1);
	/* 256-bit DP under k3 = 0xf7: only the low 4 bits apply */
	struct pfc_mask_event y;
	assert_int_equal(pfc_mask_event_from_model("inst prec=dp width=256", &y, NULL), 0);
	a = fresh(&y);
	struct pfc_mask_sample ym = SMP(VMULPD_Y_K3, 3, 0xf7);
	assert_int_equal(pfc_mask_add(a, &ym, NULL, NULL, &sh), PFC_MS_USED);
	assert_true(sh == 3.0 / 4);
	/* 512-bit DP: bits above the 8th select nothing */
	struct pfc_mask_event ev = d512();
	a = fresh(&ev);
	struct pfc_mask_sample hi = SMP(ADDPD_K2, 2, 0xff00);
	assert_int_equal(pfc_mask_add(a, &hi, NULL, NULL, &sh), PFC_MS_USED);
	assert_true(sh == 0);
}

/* The interval: never empty when all samples agree, exact when every
 * count was sampled, [0, full] without a sample. */
static void test_interval_edges(void **state)
{
	(void)state;
	struct pfc_mask_event ev = d512();
	struct pfc_mask_result r;
	struct pfc_mask_acc *a = fresh(&ev);
	for (int i = 0; i < 100; i++) {
		struct pfc_mask_sample f = SMP(FMA, -1, 0);
		pfc_mask_add(a, &f, NULL, NULL, NULL);
	}
	pfc_mask_result(a, 10000, &r);
	assert_true(r.share == 1 && r.flops == r.full && r.hi == r.full);
	assert_true(r.share_lo < 1 && r.share_lo > 0.9); /* 100 samples of 10000 */
	double lo100 = r.share_lo;
	pfc_mask_result(a, 100, &r); /* every count sampled */
	assert_true(r.share_lo == 1 && r.lo == r.flops && r.hi == r.flops);
	pfc_mask_result(a, 1000, &r); /* a tenth sampled: narrower than a hundredth */
	assert_true(r.share_lo > lo100 && r.share_lo < 1);

	a = fresh(&ev);
	pfc_mask_result(a, 500, &r); /* no sample: only the bound is known */
	assert_true(r.flops == r.full && r.lo == 0 && r.hi == r.full && r.full == 4000);
	pfc_mask_result(a, 0, &r); /* nothing counted: nothing to estimate */
	assert_true(r.flops == 0 && r.lo == 0 && r.hi == 0);
	/* samples known to be full (the tracer's unmasked blocks) count as share 1 */
	a = fresh(&ev);
	pfc_mask_add_full(a, 30);
	struct pfc_mask_sample z = SMP(FMA_K1, 1, 0);
	for (int i = 0; i < 10; i++)
		pfc_mask_add(a, &z, NULL, NULL, NULL);
	pfc_mask_result(a, 4000, &r);
	assert_int_equal(r.known_full, 30);
	assert_true(r.share == 0.75);
}

/* Bytes through a reader: a tiny memory image per pid, decoded once per
 * (pid, ip). */
struct image {
	uint64_t base;
	uint8_t bytes[2][64]; /* pid 1, pid 2 */
	int reads;
};

static size_t read_image(void *arg, uint32_t pid, uint64_t addr, uint8_t *buf, size_t len)
{
	struct image *im = arg;
	im->reads++;
	if (pid < 1 || pid > 2 || addr < im->base || addr >= im->base + 64)
		return 0;
	size_t off = addr - im->base, n = 64 - off < len ? 64 - off : len;
	memcpy(buf, im->bytes[pid - 1] + off, n);
	return n;
}

static void test_reader(void **state)
{
	(void)state;
	static struct image im;
	struct pfc_mask_event ev = d512();
	memset(&im, 0, sizeof(im));
	im.base = 0x7000;
	memcpy(im.bytes[0], FMA_K1, sizeof(FMA_K1));	 /* pid 1: masked DP FMA */
	memcpy(im.bytes[1], ADDPS_K1, sizeof(ADDPS_K1)); /* pid 2, same address: SP add */
	struct pfc_mask_acc *a = fresh(&ev);
	for (int i = 0; i < 1000; i++) {
		struct pfc_mask_sample s = { .ip = 0x7000, .pid = 1 + (i & 1), .have_k = 1 };
		s.k[1] = 0x01;
		pfc_mask_add(a, &s, read_image, &im, NULL);
	}
	struct pfc_mask_sample out = { .ip = 0x9000, .pid = 1, .have_k = 1 };
	assert_int_equal(pfc_mask_add(a, &out, read_image, &im, NULL), PFC_MS_UNREADABLE);
	struct pfc_mask_result r;
	pfc_mask_result(a, 1e6, &r);
	assert_int_equal(r.used, 500);
	assert_int_equal(r.skid, 500);
	assert_true(r.share == 1.0 / 8);
	assert_true(im.reads == 3); /* once per (pid, ip), and the unreadable one */
	/* an unreadable address is tried again (its mapping may come later) */
	assert_int_equal(pfc_mask_add(a, &out, read_image, &im, NULL), PFC_MS_UNREADABLE);
	assert_int_equal(im.reads, 4);
}

/* A capture that may trail the sampled instruction: a write of its mask
 * register in the straight-line code after it makes the sample unusable;
 * past a branch the path is unknown and nothing is judged. */
static void test_capture_lag(void **state)
{
	(void)state;
	static struct image im;
	struct pfc_mask_event ev = d512();
	memset(&im, 0, sizeof(im));
	im.base = 0x7000;
	uint8_t *p = im.bytes[0];
	memcpy(p, FMA_K1, 6);	     /* 0x7000 */
	memcpy(p + 6, ADD_RAX, 4);   /* 0x7006 */
	memcpy(p + 10, KMOVW_K1, 4); /* 0x700a: rewrites k1 */
	memcpy(p + 14, FMA_K1, 6);   /* 0x700e */
	memcpy(p + 20, JNE, 2);	     /* 0x7014 */
	memcpy(p + 22, KMOVW_K1, 4); /* 0x7016: after the branch */
	struct pfc_mask_sample s1 = { .ip = 0x7000, .pid = 1, .have_k = 1 }, s2 = s1;
	s2.ip = 0x700e;
	s1.k[1] = s2.k[1] = 0xff;

	ev.capture_lag = 0; /* registers captured at the instruction */
	struct pfc_mask_acc *a = fresh(&ev);
	assert_int_equal(pfc_mask_add(a, &s1, read_image, &im, NULL), PFC_MS_USED);
	ev.capture_lag = 1; /* the kmovw is 2 instructions on */
	a = fresh(&ev);
	assert_int_equal(pfc_mask_add(a, &s1, read_image, &im, NULL), PFC_MS_USED);
	ev.capture_lag = 2;
	a = fresh(&ev);
	assert_int_equal(pfc_mask_add(a, &s1, read_image, &im, NULL), PFC_MS_CHANGED);
	assert_int_equal(pfc_mask_add(a, &s2, read_image, &im, NULL), PFC_MS_USED);
	ev.capture_lag = 16;
	a = fresh(&ev);
	assert_int_equal(pfc_mask_add(a, &s2, read_image, &im, NULL), PFC_MS_USED);
	struct pfc_mask_result r;
	pfc_mask_result(a, 10, &r);
	assert_int_equal(r.changed, 0);
	assert_int_equal(r.used, 1);
}

/* Coverage: a population of 4000 counts with known shares, sampled at
 * random (without replacement) 400 times per trial; the 95% interval
 * must hold the true total in at least 93% of 300 trials, and the
 * estimate must be unbiased (mean error under 0.5%). */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_coverage(void **state)
{
	(void)state;
	enum { POP = 4000, N = 400, TRIALS = 300 };
	static uint8_t mask[POP];
	static int idx[POP];
	struct pfc_mask_event ev = d512();
	double truth = 0;
	for (int i = 0; i < POP; i++) {
		/* 60% unmasked, the rest tails of 1..7 lanes */
		mask[i] = i % 5 < 3 ? 0xff : (uint8_t)((1u << (1 + next() % 7)) - 1);
		truth += 8.0 * __builtin_popcount(mask[i]) / 8;
	}
	int covered = 0;
	double err = 0;
	for (int t = 0; t < TRIALS; t++) {
		for (int i = 0; i < POP; i++)
			idx[i] = i;
		struct pfc_mask_acc *a = fresh(&ev);
		for (int i = 0; i < N; i++) { /* partial Fisher-Yates */
			int j = i + (int)(next() % (POP - i)), x = idx[i];
			idx[i] = idx[j];
			idx[j] = x;
			struct pfc_mask_sample s = SMP(FMA_K1, 1, mask[idx[i]]);
			pfc_mask_add(a, &s, NULL, NULL, NULL);
		}
		struct pfc_mask_result r;
		pfc_mask_result(a, POP, &r);
		covered += r.lo <= truth && truth <= r.hi;
		err += (r.flops - truth) / truth;
	}
	print_message("coverage %d/%d, mean error %.4f%%\n", covered, TRIALS, 100 * err / TRIALS);
	assert_true(covered >= TRIALS * 93 / 100);
	assert_true(err / TRIALS < 0.005 && err / TRIALS > -0.005);
}

/* Plans from the built-in table: which events are sampled, with which
 * FLOP weights; metrics from counts and shares. */
static void test_plan(void **state)
{
	(void)state;
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	assert_int_equal(pflops_table_builtin(&t, &err), 0);
	const struct pflops_pmu *spr = pflops_table_find(&t, "spr");
	assert_non_null(spr);
	struct pfc_mask_plan mp;
	assert_int_equal(pfc_mask_plan_make(&mp, spr, 1u << PFLOPS_DP_OPS, &err), 0);
	assert_int_equal(mp.corrected, 1u << PFLOPS_DP_OPS);
	assert_int_equal(mp.nevents, 4); /* SD D128 D256 D512 */
	double counts[4] = { 0 };
	int d512i = -1;
	for (int i = 0; i < mp.nevents; i++) {
		const char *al = spr->events[mp.e[i].event].alias;
		assert_true(mp.e[i].sampled);
		double w = !strcmp(al, "SD") ? 1 : !strcmp(al, "D128") ? 2 : !strcmp(al, "D256") ? 4 : 8;
		assert_true(mp.e[i].ev.weight == w);
		if (!strcmp(al, "D512"))
			d512i = i;
		if (!strcmp(al, "SD"))
			counts[i] = 100;
	}
	assert_true(d512i >= 0);
	counts[d512i] = 400;
	struct pfc_mask_result res[4];
	memset(res, 0, sizeof(res));
	for (int i = 0; i < 4; i++) { /* no samples on the others: share 1 */
		struct pfc_mask_acc *a = fresh(&mp.e[i].ev);
		if (i == d512i)
			for (int k = 0; k < 100; k++) {
				struct pfc_mask_sample s = k & 1 ? SMP(FMA, 1, 0) : SMP(FMA_K1, 1, 0x07);
				pfc_mask_add(a, &s, NULL, NULL, NULL);
			}
		else
			pfc_mask_add_full(a, counts[i] > 0 ? 10 : 0);
		pfc_mask_result(a, counts[i], &res[i]);
	}
	double full, est, lo, hi;
	pfc_mask_metric(&mp, PFLOPS_DP_OPS, counts, res, &full, &est, &lo, &hi);
	assert_true(full == 100 + 8 * 400);
	assert_true(est == 100 + 8 * 400 * 11.0 / 16);
	assert_true(lo < est && est < hi && lo > 100);
	pfc_mask_metric(&mp, PFLOPS_DP_OPS, counts, NULL, &full, &est, NULL, NULL);
	assert_true(est == full); /* no results: the formula */

	/* VEC_DP (exact) rides on the same events, uncorrected */
	const struct pflops_pmu *skx = pflops_table_find(&t, "skx");
	assert_int_equal(pfc_mask_plan_make(&mp, skx, 1u << PFLOPS_DP_OPS | 1u << PFLOPS_VEC_DP, &err), 0);
	assert_int_equal(mp.corrected, 1u << PFLOPS_DP_OPS);
	assert_int_equal(mp.metrics, 1u << PFLOPS_DP_OPS | 1u << PFLOPS_VEC_DP);
	/* no AVX-512: nothing to correct, said so */
	assert_int_equal(pfc_mask_plan_make(&mp, pflops_table_find(&t, "bdw"), 1u << PFLOPS_DP_OPS, &err),
			 PFLOPS_EUNAVAIL);
	assert_non_null(strstr(err.msg, "nothing to correct"));
	pflops_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_from_model),
		cmocka_unit_test(test_daxpy_shape),
		cmocka_unit_test(test_unusable_samples),
		cmocka_unit_test(test_lane_rules),
		cmocka_unit_test(test_interval_edges),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_capture_lag),
		cmocka_unit_test(test_coverage),
		cmocka_unit_test(test_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
