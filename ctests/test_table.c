/*
 * The presets table: it parses, every event encodes, golden encodings,
 * the counter economy, formula evaluation on hand-computed counts, CPU
 * mapping, and broken fixtures rejected with file:line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>
#include <unistd.h>

/* cmocka 1.1 has no floating-point assertion */
#define assert_near(a, b, eps)                                                                         \
	do {                                                                                           \
		double a_ = (a), b_ = (b);                                                             \
		if (fabs(a_ - b_) > (eps))                                                             \
			fail_msg("%s:%d: %s = %.17g, expected %.17g", __FILE__, __LINE__, #a, a_, b_); \
	} while (0)
#include <perfmon/pfmlib.h>
#include "papi_flops.h"

#include "builtin_table.h"
#include "odd_files.h"

static void test_every_event_encodes(void **state)
{
	struct pflops_error err = { 0 };
	int rc = pflops_table_check_encodings(&T, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_true(T.npmus >= 40);
}

/* Every CPU the issue names has a block. */
static void test_coverage(void **state)
{
	static const char *const names[] = {
		"core",
		"knl",
		"nhm",
		"wsm",
		"snb",
		"snb_ep",
		"ivb",
		"ivb_ep",
		"hsw",
		"hsw_ep",
		"bdw",
		"bdw_ep",
		"skl",
		"skx",
		"clx",
		"icl",
		"icx",
		"spr",
		"gnr",
		"adl_glc",
		"adl_grt",
		"mtl_rwc",
		"cmt",
		"lnc",
		"skt",
		"srf",
		"amd64_fam17h_zen1",
		"zen2",
		"zen3",
		"zen4",
		"zen5",
		"hygon",
		"arm_n1",
		"arm_v1",
		"arm_n2",
		"arm_v2",
		"arm_n3",
		"arm_v3",
		"a64fx",
		/* issue 10: Cooper Lake, Arrow Lake-H low-power E-cores, Bartlett
		 * Lake, Nova Lake P and E, FUJITSU-MONAKA */
		"cpx",
		"cmt_lp",
		"btl_rpc",
		"nvl_cyc",
		"nvl_awf",
		"arm_monaka",
		/* issue 21: the E-core-only parts, apart from the hybrid E-cores */
		"srf_cmt",
		"grr",
		"cwf_dkt",
		"cwf",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		pmu(names[i]);
}

/* Golden encodings: full event-select codes, user+kernel, as `perf stat
 * -e rNNNNNN` takes them.  SRC_LINE is this file's line for the report;
 * src names the public document the number comes from. */
struct golden {
	int line;
	const char *pmu, *alias;
	uint64_t code;
	const char *src;
};
#define SRC_LINE __LINE__
#define INTEL(f) "Intel perfmon " f
static const struct golden goldens[] = {
	/* Sandy Bridge FP_COMP_OPS_EXE, five separate codes */
	{ SRC_LINE, "snb", "X87", 0x530110, "seed 001; " INTEL("SNB/events/sandybridge_core.json") },
	{ SRC_LINE, "snb", "PD128", 0x531010, "seed 001" },
	{ SRC_LINE, "snb", "SS", 0x532010, "seed 001" },
	{ SRC_LINE, "snb", "PS128", 0x534010, "seed 001" },
	{ SRC_LINE, "snb", "SD", 0x538010, "seed 001" },
	{ SRC_LINE, "snb", "PS256", 0x530111, INTEL("SNB/events/sandybridge_core.json SIMD_FP_256") },
	{ SRC_LINE, "snb", "PD256", 0x530211, INTEL("SNB/events/sandybridge_core.json SIMD_FP_256") },
	/* Haswell AVX_INSTS.CALC, event 0xC6 umask 0x04: not Intel's (it
	 * lists ALL 0x07 only) but LIKWID's */
	{ SRC_LINE, "hsw", "CALC", 0x5304c6,
	  "seed 004; LIKWID src/includes/perfmon_haswell_events.txt UMASK_AVX_INSTS_CALC" },
	{ SRC_LINE, "skx", "D512", 0x5340c7, INTEL("SKX/events/skylakex_core.json") },
	{ SRC_LINE, "skx", "S512", 0x5380c7, INTEL("SKX/events/skylakex_core.json") },
	/* Sapphire Rapids FP_ARITH_INST_RETIRED2 (0xCF) */
	{ SRC_LINE, "spr", "H1", 0x5301cf, INTEL("SPR/events/sapphirerapids_core.json") },
	{ SRC_LINE, "spr", "HC", 0x5302cf, INTEL("SPR/events/sapphirerapids_core.json") },
	{ SRC_LINE, "spr", "H128", 0x5304cf, INTEL("SPR/events/sapphirerapids_core.json") },
	{ SRC_LINE, "spr", "H256", 0x5308cf, INTEL("SPR/events/sapphirerapids_core.json") },
	{ SRC_LINE, "spr", "H512", 0x5310cf, INTEL("SPR/events/sapphirerapids_core.json") },
	/* Cooper Lake BF16: FP_ARITH_INST_RETIRED2 0x20/0x40/0x80 "only
	 * supported on products formerly named Cooper Lake" */
	{ SRC_LINE, "cpx", "B128", 0x5320cf, INTEL("CLX/events/cascadelakex_core.json 128BIT_PACKED_BF16") },
	{ SRC_LINE, "cpx", "B256", 0x5340cf, INTEL("CLX/events/cascadelakex_core.json 256BIT_PACKED_BF16") },
	{ SRC_LINE, "cpx", "B512", 0x5380cf, INTEL("CLX/events/cascadelakex_core.json 512BIT_PACKED_BF16") },
	/* Core 2 SIMD_COMP_INST_RETIRED (0xCA) */
	{ SRC_LINE, "core", "PS", 0x5301ca,
	  "libpfm4 lib/events/intel_core_events.h; LIKWID groups/core2/FLOPS_SP.txt" },
	{ SRC_LINE, "core", "SS", 0x5302ca, "libpfm4 lib/events/intel_core_events.h" },
	{ SRC_LINE, "core", "PD", 0x5304ca,
	  "libpfm4 lib/events/intel_core_events.h; LIKWID groups/core2/FLOPS_DP.txt" },
	{ SRC_LINE, "core", "SD", 0x5308ca, "libpfm4 lib/events/intel_core_events.h" },
	{ SRC_LINE, "adl_glc", "S256", 0x5320c7, INTEL("ADL/events/alderlake_goldencove_core.json") },
	/* Nova Lake Coyote Cove: FP_ARITH_OPS_RETIRED stays at 0xC7 */
	{ SRC_LINE, "nvl_cyc", "SD", 0x5301c7, INTEL("NVL/events/novalake_coyotecove_core.json") },
	{ SRC_LINE, "nvl_cyc", "D512", 0x5340c7, INTEL("NVL/events/novalake_coyotecove_core.json") },
	{ SRC_LINE, "nvl_cyc", "S512", 0x5380c7, INTEL("NVL/events/novalake_coyotecove_core.json") },
	{ SRC_LINE, "srf_cmt", "F64", 0x5301c8, INTEL("SRF/events/sierraforest_core.json FP_FLOPS_RETIRED") },
	{ SRC_LINE, "cmt", "VD128", 0x5308c7,
	  INTEL("MTL/events/meteorlake_crestmont_core.json FP_INST_RETIRED.128B_DP") },
	{ SRC_LINE, "cwf_dkt", "VS256", 0x5310c7,
	  INTEL("CWF/events/clearwaterforest_core.json FP_INST_RETIRED.256B_SP") },
	{ SRC_LINE, "cmt_lp", "F32", 0x5302c8,
	  INTEL("ARL/events/arrowlake_crestmont_core.json FP_FLOPS_RETIRED.FP32") },
	{ SRC_LINE, "amd64_fam19h_zen4", "ALL", 0x531f03, "libpfm4 lib/events/amd64_events_fam19h_zen4.h" },
	{ SRC_LINE, "amd64_fam19h_zen4", "BF16", 0x531003,
	  "libpfm4 lib/events/amd64_events_fam19h_zen4.h BFLOAT_MAC_FLOPS" },
	{ SRC_LINE, "zen5", "PD", 0x53af03, "LIKWID src/includes/perfmon_zen5_events.txt ALL_DP_PACKED 0xAF" },
	{ SRC_LINE, "arm_v1", "SCALE", 0x80c0, "ARM-software/data pmu/neoverse-v1.json FP_SCALE_OPS_SPEC" },
	{ SRC_LINE, "arm_v3", "FIXED", 0x80c1, "ARM-software/data pmu/neoverse-v3ae.json FP_FIXED_OPS_SPEC" },
	{ SRC_LINE, "arm_monaka", "DSCALE", 0x80c6,
	  "PAPI src/libpfm4/lib/events/arm_fujitsu_monaka_events.h FP_DP_SCALE_OPS_SPEC" },
	{ SRC_LINE, "arm_monaka", "HFIXED", 0x80c3, "ARM-software/data pmu/common_armv9.json FP_HP_FIXED_OPS_SPEC" },
	/* MONAKA's vector instructions by precision (PAPI papi_events.csv
	 * CPU,arm_monaka PAPI_VEC_DP, PAPI_VEC_SP) */
	{ SRC_LINE, "arm_monaka", "VDP", 0x801f,
	  "PAPI src/libpfm4/lib/events/arm_fujitsu_monaka_events.h ASE_SVE_FP_DP_SPEC" },
	{ SRC_LINE, "arm_monaka", "VSP", 0x801b,
	  "PAPI src/libpfm4/lib/events/arm_fujitsu_monaka_events.h ASE_SVE_FP_SP_SPEC" },
};

static void test_golden_encodings(void **state)
{
	for (size_t i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++) {
		const struct golden *g = &goldens[i];
		const struct pflops_pmu *p = pmu(g->pmu);
		int ev = -1;
		for (int e = 0; e < p->nevents; e++)
			if (!strcmp(p->events[e].alias, g->alias))
				ev = e;
		if (ev < 0)
			fail_msg("test_table.c:%d: %s has no event %s", g->line, g->pmu, g->alias);
		uint64_t code = 0;
		struct pflops_error err = { 0 };
		if (pflops_encode(p, p->events[ev].spec, &code, NULL, 0, &err))
			fail_msg("test_table.c:%d: %s", g->line, err.msg);
		if (code != g->code)
			fail_msg("test_table.c:%d: %s %s (%s:%d, %s) = 0x%llx, expected 0x%llx (%s)", g->line, g->pmu,
				 g->alias, p->file, p->events[ev].line, p->events[ev].spec, (unsigned long long)code,
				 (unsigned long long)g->code, g->src);
	}
}

/* The merged counters carry the right umask: 8_FLOPS is 0x60 (Intel's
 * Skylake-X list, and perf's skylakex JSON generated from it, say 0x18,
 * which is 4_FLOPS; Intel's ICX/SPR lists say 0x60). */
static void test_merged_umasks(void **state)
{
	static const struct {
		int line;
		const char *pmu;
		uint64_t codes[5];
	} fp[] = {
		{ SRC_LINE, "skx", { 0x5303c7, 0x5304c7, 0x5318c7, 0x5360c7, 0x5380c7 } },
		{ SRC_LINE, "icx", { 0x5303c7, 0x5304c7, 0x5318c7, 0x5360c7, 0x5380c7 } },
		{ SRC_LINE, "bdw", { 0x5303c7, 0x5304c7, 0x5318c7, 0x5320c7, 0 } },
		{ SRC_LINE, "adl_glc", { 0x5303c7, 0x5304c7, 0x5318c7, 0x5320c7, 0 } },
	};
	for (size_t i = 0; i < sizeof(fp) / sizeof(fp[0]); i++) {
		struct pflops_plan plan;
		struct pflops_error err = { 0 };
		assert_int_equal(pflops_plan_make(&plan, pmu(fp[i].pmu), 1u << PFLOPS_FP_OPS, 0, &err), 0);
		for (int c = 0; c < plan.ncounters; c++)
			if (plan.counter[c].config != fp[i].codes[c])
				fail_msg("test_table.c:%d: %s FP_OPS counter %d (%s) = 0x%llx, expected 0x%llx",
					 fp[i].line, fp[i].pmu, c, plan.counter[c].spec,
					 (unsigned long long)plan.counter[c].config,
					 (unsigned long long)fp[i].codes[c]);
		assert_int_equal(plan.ncounters, fp[i].codes[4] ? 5 : 4);
	}
	/* VEC_DP / VEC_SP in one counter each: the umask bits OR (Intel's
	 * VECTOR 0xFC = 0x54 | 0xA8, ICX/SPR *_core.json); libpfm4 4.13 refuses
	 * 128B|256B|512B_PACKED_DOUBLE on icx and spr, so the counter is the
	 * raw code; on skx libpfm4 accepts the named umasks together */
	static const struct {
		int line;
		const char *pmu;
		int metric;
		uint64_t code;
		int raw;
	} vec[] = {
		{ SRC_LINE, "skx", PFLOPS_VEC_DP, 0x5354c7, 0 },
		{ SRC_LINE, "icx", PFLOPS_VEC_DP, 0x5354c7, 1 },
		{ SRC_LINE, "icx", PFLOPS_VEC_SP, 0x53a8c7, 1 },
		{ SRC_LINE, "spr", PFLOPS_VEC_DP, 0x5354c7, 1 },
		{ SRC_LINE, "gnr", PFLOPS_VEC_SP, 0x53a8c7, 1 },
		{ SRC_LINE, "icl", PFLOPS_VEC_SP, 0x53a8c7, 1 },
		{ SRC_LINE, "bdw", PFLOPS_VEC_DP, 0x5314c7, 0 },
		{ SRC_LINE, "nvl_cyc", PFLOPS_VEC_DP, 0x5314c7, 1 }, /* 0x40 not OR-ed: see nvl_cyc */
	};
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		struct pflops_plan plan;
		struct pflops_error err = { 0 };
		if (pflops_plan_make(&plan, pmu(vec[i].pmu), 1u << vec[i].metric, 0, &err))
			fail_msg("test_table.c:%d: %s", vec[i].line, err.msg);
		if (plan.counter[0].config != vec[i].code || (!strncmp(plan.counter[0].spec, "raw:", 4)) != vec[i].raw)
			fail_msg("test_table.c:%d: %s %s counter 0 = %s 0x%llx, expected 0x%llx (%s)", vec[i].line,
				 vec[i].pmu, pflops_metric_name(vec[i].metric), plan.counter[0].spec,
				 (unsigned long long)plan.counter[0].config, (unsigned long long)vec[i].code,
				 vec[i].raw ? "raw" : "libpfm4-named");
	}
}

/* ---- counter economy ---------------------------------------------- */

/* Independent oracle: does libpfm4 accept these umasks of one event as
 * one counter, either listed together or through a umask naming their
 * union?  Written against libpfm4 directly, not the planner. */
static int pfm_umask_code(int idx, const char *name, uint64_t *code)
{
	pfm_event_info_t info = { .size = sizeof(info) };
	if (pfm_get_event_info(idx, PFM_OS_NONE, &info) != PFM_SUCCESS)
		return -1;
	for (int i = 0; i < info.nattrs; i++) {
		pfm_event_attr_info_t a = { .size = sizeof(a) };
		if (pfm_get_event_attr_info(idx, i, PFM_OS_NONE, &a) == PFM_SUCCESS && a.type == PFM_ATTR_UMASK &&
		    (name ? !strcmp(a.name, name) : a.code == *code)) {
			*code = a.code;
			return 0;
		}
	}
	return -1;
}

static int libpfm_combinable(const struct pflops_pmu *p, const int *evs, int n)
{
	char joined[1024], base[256];
	const char *s0 = p->events[evs[0]].spec;
	size_t bl = strcspn(s0, ":");
	snprintf(base, sizeof(base), "%.*s", (int)bl, s0);
	snprintf(joined, sizeof(joined), "%s::%s", p->libpfm, base);
	uint64_t all = 0;
	char ev[512];
	snprintf(ev, sizeof(ev), "%s::%s", p->libpfm, base);
	int idx = pfm_find_event(ev);
	if (idx < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		const char *u = p->events[evs[i]].spec + bl;
		strncat(joined, u, sizeof(joined) - strlen(joined) - 1);
		uint64_t c;
		if (pfm_umask_code(idx, u + 1, &c))
			return 0;
		all |= c;
	}
	pfm_pmu_encode_arg_t arg = { .size = sizeof(arg) };
	if (pfm_get_os_event_encoding(joined, PFM_PLM3, PFM_OS_NONE, &arg) == PFM_SUCCESS) {
		free(arg.codes);
		return 1;
	}
	return pfm_umask_code(idx, NULL, &all) == 0;
}

static int oracle_counters(const struct pflops_pmu *p, const struct pflops_metric_def *d)
{
	int done[64] = { 0 }, total = 0;
	for (int i = 0; i < d->nterms; i++) {
		if (done[i])
			continue;
		const struct pflops_event *e = &p->events[d->terms[i].event];
		int group[64] = { 0 }, n = 0;
		size_t bl = strcspn(e->spec, ":");
		for (int j = i; j < d->nterms; j++) {
			const struct pflops_event *f = &p->events[d->terms[j].event];
			int raw = !strncmp(e->spec, "raw:", 4);
			int same_event = raw ? (!strncmp(f->spec, "raw:", 4) &&
						((strtoull(e->spec + 4, 0, 16) ^ strtoull(f->spec + 4, 0, 16)) &
						 ~0xff00ULL) == 0)
					     : !strncmp(e->spec, f->spec, bl) && f->spec[bl] == ':';
			if (!done[j] && same_event && d->terms[j].w0 == d->terms[i].w0 &&
			    d->terms[j].wvl == d->terms[i].wvl && f->pair == e->pair) {
				group[n++] = d->terms[j].event;
				done[j] = 1;
			}
		}
		/* one counter when libpfm4 accepts the umasks together or names
		 * their union; else the members flagged `combine` (the hardware
		 * ORs their bits) share one and every other member takes its own */
		int need, flagged = 0;
		for (int k = 0; k < n; k++)
			flagged += p->events[group[k]].combine;
		if (n > 1 && strncmp(e->spec, "raw:", 4) && libpfm_combinable(p, group, n))
			need = 1;
		else
			need = (flagged ? 1 : 0) + n - flagged;
		total += need * (e->pair ? 2 : 1);
	}
	return total;
}

static void test_counter_economy(void **state)
{
	int checked = 0;
	for (int i = 0; i < T.npmus; i++) {
		const struct pflops_pmu *p = &T.pmus[i];
		for (int m = 0; m < PFLOPS_NMETRIC; m++) {
			const struct pflops_metric_def *d = &p->metrics[m];
			if (d->klass == PFLOPS_UNAVAILABLE)
				continue;
#if !defined(__x86_64__)
			/* the oracle asks libpfm4's x86 tables, which this one lacks
			 * (the plans themselves: scripts/test-aarch64.sh's listings) */
			if (p->arch == PFLOPS_ARCH_X86)
				continue;
#endif
			struct pflops_plan plan;
			struct pflops_error err = { 0 };
			if (pflops_plan_make(&plan, p, 1u << m, 0, &err))
				fail_msg("%s %s: %s", p->name, pflops_metric_name(m), err.msg);
			int want = oracle_counters(p, d);
			if (plan.cost != want)
				fail_msg("%s %s (%s:%d): planned %d counters, distinct (event, weight) pairs need %d",
					 p->name, pflops_metric_name(m), p->file, d->line, plan.cost, want);
			checked++;
		}
	}
#if defined(__x86_64__)
	assert_true(checked > 80);
#else
	assert_true(checked > 10); /* the Arm PMUs' */
#endif
}

/* The numbers DESIGN.md promises. */
static void test_counter_anchors(void **state)
{
	static const struct {
		int line;
		const char *pmu;
		int metric, cost;
	} a[] = {
		{ SRC_LINE, "skx", PFLOPS_FP_OPS, 5 },	   /* AVX-512 Intel: 5 (PAPI: 8) */
		{ SRC_LINE, "icx", PFLOPS_FP_OPS, 5 },	   /* via named unions */
		{ SRC_LINE, "bdw", PFLOPS_FP_OPS, 4 },	   /* AVX2 Intel: 4 */
		{ SRC_LINE, "adl_glc", PFLOPS_FP_OPS, 4 }, /* raw, umask bits OR-ed */
		{ SRC_LINE, "spr", PFLOPS_FP_OPS, 10 },	   /* with FP16: over 8 */
		{ SRC_LINE, "spr", PFLOPS_HP_OPS, 5 },
		{ SRC_LINE, "snb", PFLOPS_FP_OPS, 6 }, /* FP_COMP_OPS_EXE umasks do not combine; x87 out */
		{ SRC_LINE, "snb", PFLOPS_DP_OPS, 3 },
		{ SRC_LINE, "amd64_fam17h_zen1", PFLOPS_FP_OPS, 2 }, /* one event, a merged pair */
		{ SRC_LINE, "zen5", PFLOPS_DP_OPS, 4 },		     /* two field values, two pairs */
		{ SRC_LINE, "cmt", PFLOPS_FP_OPS, 1 },
		{ SRC_LINE, "a64fx", PFLOPS_DP_OPS, 2 },
		{ SRC_LINE, "icx", PFLOPS_VEC_DP, 1 }, /* raw 0x54 where libpfm4 refuses */
		{ SRC_LINE, "spr", PFLOPS_VEC_SP, 1 },
		{ SRC_LINE, "core", PFLOPS_FP_OPS, 3 }, /* of 2: multiplexed (its caveat) */
		{ SRC_LINE, "core", PFLOPS_DP_OPS, 2 },
		{ SRC_LINE, "cpx", PFLOPS_FP_OPS, 8 }, /* 5 FP_ARITH + 3 BF16 */
		{ SRC_LINE, "cpx", PFLOPS_BF16_OPS, 3 },
		{ SRC_LINE, "nvl_cyc", PFLOPS_FP_OPS, 6 }, /* 512-bit umasks not OR-ed */
		{ SRC_LINE, "cmt_lp", PFLOPS_FP_OPS, 1 },
	};
	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
		struct pflops_plan plan;
		struct pflops_error err = { 0 };
		if (pflops_plan_make(&plan, pmu(a[i].pmu), 1u << a[i].metric, 0, &err))
			fail_msg("test_table.c:%d: %s", a[i].line, err.msg);
		if (plan.cost != a[i].cost)
			fail_msg("test_table.c:%d: %s %s needs %d counters, expected %d", a[i].line, a[i].pmu,
				 pflops_metric_name(a[i].metric), plan.cost, a[i].cost);
	}
	/* FP_OPS + DP_OPS + SP_OPS in one event set on skx: scalar double and
	 * single now differ (DP weight 1 vs 0), 128-bit single and 256-bit
	 * double too: 8 counters, each native opened once. */
	struct pflops_plan plan;
	assert_int_equal(pflops_plan_make(&plan, pmu("skx"),
					  1u << PFLOPS_FP_OPS | 1u << PFLOPS_DP_OPS | 1u << PFLOPS_SP_OPS, 0, NULL),
			 0);
	assert_int_equal(plan.cost, 8);
}

/* ---- evaluation on hand-computed counts --------------------------- */

struct evcount {
	const char *alias;
	double count;
};

/* Metric value for per-event counts: a merged counter reads the sum of
 * its events, as the hardware does for OR-ed umasks. */
static double eval(const char *pmuname, int metric, int sve_bits, const struct evcount *c, int n)
{
	const struct pflops_pmu *p = pmu(pmuname);
	struct pflops_plan plan;
	struct pflops_error err = { 0 };
	if (pflops_plan_make(&plan, p, 1u << metric, sve_bits, &err))
		fail_msg("%s: %s", pmuname, err.msg);
	double counts[PFLOPS_MAX_COUNTERS] = { 0 };
	for (int k = 0; k < plan.ncounters; k++)
		for (int e = 0; e < plan.counter[k].nevents; e++)
			for (int i = 0; i < n; i++)
				if (!strcmp(p->events[plan.counter[k].events[e]].alias, c[i].alias))
					counts[k] += c[i].count;
	return pflops_plan_eval(&plan, metric, counts);
}

#define EVAL(pmu, m, vl, ...)                                     \
	({                                                        \
		const struct evcount c_[] = { __VA_ARGS__ };      \
		eval(pmu, m, vl, c_, sizeof(c_) / sizeof(c_[0])); \
	})

static void test_eval_intel(void **state)
{
	/* snb: X87 10, SS 20, SD 30, PD128 40, PS128 50, PS256 60, PD256 70
	 * FP_OPS = 20 + 30 + 2*40 + 4*(50+70) + 8*60 = 1090 (X87 out: Intel's
	 * SNB event list says it also counts integer MUL/DIV; TMA #FLOP_Count
	 * leaves it out)
	 * DP_OPS = 30 + 80 + 280 = 390; SP_OPS = 20 + 200 + 480 = 700; VEC_DP = 110 */
#define SNB \
	{ "X87", 10 }, { "SS", 20 }, { "SD", 30 }, { "PD128", 40 }, { "PS128", 50 }, { "PS256", 60 }, { "PD256", 70 }
	assert_near(EVAL("snb", PFLOPS_FP_OPS, 0, SNB), 1090, 0);
	assert_near(EVAL("snb", PFLOPS_DP_OPS, 0, SNB), 390, 0);
	assert_near(EVAL("snb", PFLOPS_SP_OPS, 0, SNB), 700, 0);
	assert_near(EVAL("ivb_ep", PFLOPS_VEC_DP, 0, SNB), 110, 0);
	/* hsw: CALC 1000 -> DP 4000, SP 8000 */
	assert_near(EVAL("hsw", PFLOPS_DP_OPS, 0, { "CALC", 1000 }), 4000, 0);
	assert_near(EVAL("hsw_ep", PFLOPS_SP_OPS, 0, { "CALC", 1000 }), 8000, 0);
	/* skx: SD 1, SS 2, D128 3, S128 4, D256 5, S256 6, D512 7, S512 8
	 * FP_OPS = 1 + 2 + 6 + 4*(4+5) + 8*(6+7) + 16*8 = 9 + 36 + 104 + 128 = 277
	 * DP_OPS = 1 + 6 + 20 + 56 = 83; SP_OPS = 2 + 16 + 48 + 128 = 194 */
#define SKX                                                                                                  \
	{ "SD", 1 }, { "SS", 2 }, { "D128", 3 }, { "S128", 4 }, { "D256", 5 }, { "S256", 6 }, { "D512", 7 }, \
		{ "S512", 8 }
	assert_near(EVAL("skx", PFLOPS_FP_OPS, 0, SKX), 277, 0);
	assert_near(EVAL("clx", PFLOPS_DP_OPS, 0, SKX), 83, 0);
	assert_near(EVAL("icx", PFLOPS_SP_OPS, 0, SKX), 194, 0);
	assert_near(EVAL("icl", PFLOPS_VEC_SP, 0, SKX), 18, 0);
	/* spr adds H1 10, HC 20, H128 30, H256 40, H512 50:
	 * HP_OPS = 10 + 40 + 240 + 640 + 1600 = 2530; FP_OPS = 277 + 2530 = 2807 */
	assert_near(EVAL("spr", PFLOPS_HP_OPS, 0, { "H1", 10 }, { "HC", 20 }, { "H128", 30 }, { "H256", 40 },
			 { "H512", 50 }),
		    2530, 0);
	assert_near(EVAL("gnr", PFLOPS_FP_OPS, 0, SKX, { "H1", 10 }, { "HC", 20 }, { "H128", 30 }, { "H256", 40 },
			 { "H512", 50 }),
		    2807, 0);
	/* adl_glc (AVX2, raw): SD 1, SS 2, D128 3, S128 4, D256 5, S256 6
	 * FP_OPS = 3 + 6 + 4*9 + 8*6 = 93 */
	assert_near(EVAL("adl_glc", PFLOPS_FP_OPS, 0, SKX), 93, 0);
	assert_near(EVAL("bdw", PFLOPS_FP_OPS, 0, SKX), 93, 0);
	/* core (LIKWID core2 FLOPS_DP/SP): PS 1, SS 2, PD 3, SD 4
	 * FP_OPS = 2 + 4 + 2*3 + 4*1 = 16; DP_OPS = 4 + 6 = 10; SP_OPS = 2 + 4 = 6 */
#define CORE2 { "PS", 1 }, { "SS", 2 }, { "PD", 3 }, { "SD", 4 }
	assert_near(EVAL("core", PFLOPS_FP_OPS, 0, CORE2), 16, 0);
	assert_near(EVAL("core", PFLOPS_DP_OPS, 0, CORE2), 10, 0);
	assert_near(EVAL("core", PFLOPS_SP_OPS, 0, CORE2), 6, 0);
	assert_near(EVAL("core", PFLOPS_VEC_SP, 0, CORE2), 1, 0);
	/* cpx: SKX plus B128 1, B256 2, B512 3 at 16/32/64 (Intel CLX event
	 * list): BF16_OPS = 16 + 64 + 192 = 272; FP_OPS = 277 + 272 = 549 */
	assert_near(EVAL("cpx", PFLOPS_BF16_OPS, 0, SKX, { "B128", 1 }, { "B256", 2 }, { "B512", 3 }), 272, 0);
	assert_near(EVAL("cpx", PFLOPS_FP_OPS, 0, SKX, { "B128", 1 }, { "B256", 2 }, { "B512", 3 }), 549, 0);
	/* nvl_cyc: the SKX weights on 0xC7 */
	assert_near(EVAL("nvl_cyc", PFLOPS_FP_OPS, 0, SKX), 277, 0);
	assert_near(EVAL("nvl_cyc", PFLOPS_VEC_DP, 0, SKX), 15, 0);
	/* E-cores count FLOPs: F64 100 + F32 50 */
	assert_near(EVAL("cmt", PFLOPS_FP_OPS, 0, { "F64", 100 }, { "F32", 50 }), 150, 0);
	assert_near(EVAL("skt", PFLOPS_DP_OPS, 0, { "F64", 100 }, { "F32", 50 }), 100, 0);
	/* nhm estimate: X87 5 + SCALAR 7 + 2*PACKED 11 = 34 */
	assert_near(EVAL("nhm", PFLOPS_FP_OPS, 0, { "X87", 5 }, { "SCALAR", 7 }, { "PACKED", 11 }), 34, 0);
}

static void test_eval_amd_arm(void **state)
{
	/* zen1: DP umasks 1,2,3,4, SP umasks 10,20,30,40 */
#define ZEN1                                                                                                    \
	{ "DP_ADD", 1 }, { "DP_MUL", 2 }, { "DP_DIV", 3 }, { "DP_FMA", 4 }, { "SP_ADD", 10 }, { "SP_MUL", 20 }, \
		{ "SP_DIV", 30 }, { "SP_FMA", 40 }
	assert_near(EVAL("zen1", PFLOPS_FP_OPS, 0, ZEN1), 110, 0);
	assert_near(EVAL("zen1", PFLOPS_DP_OPS, 0, ZEN1), 10, 0);
	assert_near(EVAL("zen1", PFLOPS_SP_OPS, 0, ZEN1), 100, 0);
	assert_near(EVAL("zen4", PFLOPS_FP_OPS, 0, { "ALL", 1234 }, { "BF16", 34 }), 1234, 0);
	assert_near(EVAL("zen4", PFLOPS_BF16_OPS, 0, { "ALL", 1234 }, { "BF16", 34 }), 34, 0);
	/* zen5: SD 1, PD 20, SS 300, PS 4000 */
	assert_near(EVAL("zen5", PFLOPS_DP_OPS, 0, { "SD", 1 }, { "PD", 20 }, { "SS", 300 }, { "PS", 4000 }), 21, 0);
	assert_near(EVAL("zen5", PFLOPS_SP_OPS, 0, { "SD", 1 }, { "PD", 20 }, { "SS", 300 }, { "PS", 4000 }), 4300, 0);
	/* Arm: SCALE 100, FIXED 7.  V1 (SVE 256): 100*2 + 7 = 207; V2 (128): 107;
	 * A64FX (512): 407, and 207 when the process runs with VL 256 */
	assert_near(EVAL("arm_v1", PFLOPS_FP_OPS, 0, { "SCALE", 100 }, { "FIXED", 7 }), 207, 0);
	assert_near(EVAL("arm_v2", PFLOPS_FP_OPS, 0, { "SCALE", 100 }, { "FIXED", 7 }), 107, 0);
	assert_near(EVAL("a64fx", PFLOPS_FP_OPS, 0, { "SCALE", 100 }, { "FIXED", 7 }), 407, 0);
	assert_near(EVAL("a64fx", PFLOPS_FP_OPS, 256, { "SCALE", 100 }, { "FIXED", 7 }), 207, 0);
	assert_near(EVAL("a64fx", PFLOPS_DP_OPS, 0, { "DSCALE", 3 }, { "DFIXED", 1 }, { "SCALE", 100 }), 13, 0);
}

static void test_unavailable_says_why(void **state)
{
	struct pflops_plan plan;
	struct pflops_error err = { 0 };
	assert_int_equal(pflops_plan_make(&plan, pmu("adl_grt"), 1u << PFLOPS_DP_OPS, 0, &err), PFLOPS_EUNAVAIL);
	assert_non_null(strstr(err.msg, "Gracemont E-cores have no floating-point event"));
	assert_int_equal(pflops_plan_make(&plan, pmu("hsw"), 1u << PFLOPS_FP_OPS, 0, &err), PFLOPS_EUNAVAIL);
	assert_non_null(strstr(err.msg, "cannot tell single from double"));
	assert_int_equal(pflops_plan_make(&plan, pmu("knl"), 1u << PFLOPS_FP_OPS, 0, &err), PFLOPS_EUNAVAIL);
	assert_int_equal(pflops_plan_make(&plan, pmu("nvl_awf"), 1u << PFLOPS_SP_OPS, 0, &err), PFLOPS_EUNAVAIL);
	assert_non_null(strstr(err.msg, "Arctic Wolf event list has no FLOP"));
	assert_int_equal(pflops_plan_make(&plan, pmu("core"), 1u << PFLOPS_HP_OPS, 0, &err), PFLOPS_EUNAVAIL);
	assert_int_equal(pflops_plan_make(&plan, pmu("arm_n1"), 1u << PFLOPS_FP_OPS, 0, &err), PFLOPS_EUNAVAIL);
	assert_int_equal(pflops_plan_make(&plan, pmu("zen3"), 1u << PFLOPS_DP_OPS, 0, &err), PFLOPS_EUNAVAIL);
	/* every metric of every PMU has its class, and non-exact ones a caveat */
	for (int i = 0; i < T.npmus; i++)
		for (int m = 0; m < PFLOPS_NMETRIC; m++) {
			const struct pflops_metric_def *d = &T.pmus[i].metrics[m];
			assert_true(d->klass >= 0 && d->klass < PFLOPS_NCLASS);
			if (d->klass != PFLOPS_EXACT && !(d->caveat && strlen(d->caveat) > 10))
				fail_msg("%s %s has no caveat", T.pmus[i].name, pflops_metric_name(m));
		}
}

/* The kernel's perf PMU of each E-core kind: `cpu` where the part has one
 * core kind (arch/x86/events/core.c registers "cpu" when !is_hybrid();
 * Intel mapfile.csv lists SRF, GRR and CWF as "core"), cpu_atom or
 * cpu_lowpower on hybrid parts (mapfile "hybridcore"; perf's JSON Unit) */
static void test_e_core_pmus(void **state)
{
	static const struct {
		int line;
		const char *pmu, *sysfs;
	} s[] = {
		{ SRC_LINE, "srf", "cpu" },	     { SRC_LINE, "grr", "cpu" },
		{ SRC_LINE, "cwf", "cpu" },	     { SRC_LINE, "cmt", "cpu_atom" },
		{ SRC_LINE, "skt", "cpu_atom" },     { SRC_LINE, "cmt_lp", "cpu_lowpower" },
		{ SRC_LINE, "adl_grt", "cpu_atom" },
	};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (strcmp(pmu(s[i].pmu)->sysfs, s[i].sysfs))
			fail_msg("test_table.c:%d: %s is on the PMU %s, expected %s", s[i].line, s[i].pmu,
				 pmu(s[i].pmu)->sysfs, s[i].sysfs);
	/* Crestmont's event lists describe umask 0x08 as all FP retired
	 * instructions (SRF/GRR/MTL/ARL *_core.json) and name no union:
	 * VEC_DP an estimate; Skymont/Darkmont lists give 0x08 the packed-double
	 * text and ALL 0x3F (ARL/LNL skymont, CWF): exact */
	static const struct {
		int line;
		const char *pmu;
		enum pflops_class klass;
	} v[] = {
		{ SRC_LINE, "cmt", PFLOPS_ESTIMATE },	 { SRC_LINE, "srf_cmt", PFLOPS_ESTIMATE },
		{ SRC_LINE, "cmt_lp", PFLOPS_ESTIMATE }, { SRC_LINE, "skt", PFLOPS_EXACT },
		{ SRC_LINE, "cwf_dkt", PFLOPS_EXACT },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const struct pflops_metric_def *d = &pmu(v[i].pmu)->metrics[PFLOPS_VEC_DP];
		if (d->klass != v[i].klass)
			fail_msg("test_table.c:%d: %s VEC_DP is %s, expected %s", v[i].line, v[i].pmu,
				 pflops_class_name(d->klass), pflops_class_name(v[i].klass));
	}
	assert_non_null(
		strstr(pmu("srf")->metrics[PFLOPS_VEC_DP].caveat, "0x08 (128B_DP) as all FP retired instructions"));
	assert_null(strstr(pmu("srf")->metrics[PFLOPS_FP_OPS].caveat, "hybrid"));
}

static void test_cpu_mapping(void **state)
{
	static const struct {
		int line;
		const char *vendor;
		unsigned fam, model, step;
		const char *core, *want;
	} c[] = {
		{ SRC_LINE, "GenuineIntel", 6, 45, 7, NULL, "snb_ep" },
		{ SRC_LINE, "GenuineIntel", 6, 63, 2, NULL, "hsw_ep" },
		{ SRC_LINE, "GenuineIntel", 6, 85, 4, NULL, "skx" },  /* Skylake-SP */
		{ SRC_LINE, "GenuineIntel", 6, 85, 7, NULL, "clx" },  /* Cascade Lake: stepping 5-9 */
		{ SRC_LINE, "GenuineIntel", 6, 85, 11, NULL, "cpx" }, /* Cooper Lake: 10-11 (BF16) */
		{ SRC_LINE, "GenuineIntel", 6, 85, 10, NULL, "cpx" },
		{ SRC_LINE, "GenuineIntel", 6, 143, 8, NULL, "spr" },
		{ SRC_LINE, "GenuineIntel", 6, 207, 2, NULL, "spr" }, /* Emerald Rapids: SPR formulas */
		{ SRC_LINE, "GenuineIntel", 6, 186, 2, "IntelCore", "adl_glc" },
		{ SRC_LINE, "GenuineIntel", 6, 186, 2, "IntelAtom", "adl_grt" },
		{ SRC_LINE, "GenuineIntel", 6, 170, 4, "IntelAtom", "cmt" },
		{ SRC_LINE, "GenuineIntel", 6, 197, 2, "IntelCore", "lnc" },
		{ SRC_LINE, "GenuineIntel", 6, 197, 2, "IntelAtom", "skt" },
		/* Arrow Lake-H low-power E-cores: Intel mapfile 6-C5 LowPower_Atom, PMU cpu_lowpower */
		{ SRC_LINE, "GenuineIntel", 6, 197, 2, "IntelLowPower", "cmt_lp" },
		{ SRC_LINE, "GenuineIntel", 6, 170, 4, "IntelLowPower", "cmt" }, /* Meteor Lake: cpu_atom */
		/* Intel mapfile 6-E5 and 6-D5 (Wildcat Lake): Panther Lake event lists */
		{ SRC_LINE, "GenuineIntel", 6, 0xe5, 0, "IntelCore", "lnc" },
		{ SRC_LINE, "GenuineIntel", 6, 0xe5, 0, "IntelAtom", "skt" },
		{ SRC_LINE, "GenuineIntel", 6, 0xd5, 0, "IntelAtom", "skt" },
		/* Nova Lake: Intel mapfile GenuineIntel-18-1, -18-3 */
		{ SRC_LINE, "GenuineIntel", 18, 1, 0, "IntelCore", "nvl_cyc" },
		{ SRC_LINE, "GenuineIntel", 18, 1, 0, "IntelAtom", "nvl_awf" },
		{ SRC_LINE, "GenuineIntel", 18, 3, 0, "IntelAtom", "nvl_awf" },
		{ SRC_LINE, "GenuineIntel", 18, 2, 0, "IntelCore", NULL }, /* no such model */
		/* Bartlett Lake: kernel intel-family.h INTEL_BARTLETTLAKE IFM(6, 0xD7) */
		{ SRC_LINE, "GenuineIntel", 6, 0xd7, 0, NULL, "btl_rpc" },
		/* E-core-only parts (Intel mapfile.csv type "core", not
		 * "hybridcore"): Sierra Forest 6-AF, Grand Ridge 6-B6,
		 * Clearwater Forest 6-DD */
		{ SRC_LINE, "GenuineIntel", 6, 175, 3, NULL, "srf_cmt" },
		{ SRC_LINE, "GenuineIntel", 6, 0xb6, 0, NULL, "srf_cmt" },
		{ SRC_LINE, "GenuineIntel", 6, 0xdd, 0, NULL, "cwf_dkt" },
		{ SRC_LINE, "GenuineIntel", 6, 15, 11, NULL, "core" },
		{ SRC_LINE, "AuthenticAMD", 23, 1, 2, NULL, "amd64_fam17h_zen1" },
		{ SRC_LINE, "AuthenticAMD", 23, 49, 0, NULL, "amd64_fam17h_zen2" },
		{ SRC_LINE, "AuthenticAMD", 25, 1, 1, NULL, "amd64_fam19h_zen3" },
		{ SRC_LINE, "AuthenticAMD", 25, 17, 1, NULL, "amd64_fam19h_zen4" },
		{ SRC_LINE, "AuthenticAMD", 26, 2, 0, NULL, "amd64_fam1ah_zen5" },
		{ SRC_LINE, "HygonGenuine", 24, 0, 1, NULL, "hygon_dhyana" },
		{ SRC_LINE, "arm", 0x41, 0xd40, 1, NULL, "arm_v1" },
		{ SRC_LINE, "arm", 0x46, 0x001, 0, NULL, "arm_a64fx" },
		{ SRC_LINE, "arm", 0x41, 0xd83, 0, NULL, "arm_v3" },	 /* V3AE: Arm data neoverse-v3ae.json */
		{ SRC_LINE, "arm", 0x46, 0x003, 0, NULL, "arm_monaka" }, /* libpfm4 arm_monaka detect */
		{ SRC_LINE, "GenuineIntel", 6, 250, 0, NULL, NULL },	 /* unknown */
		{ SRC_LINE, "CentaurHauls", 6, 15, 0, NULL, NULL },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const struct pflops_pmu *p = pflops_table_match(&T, c[i].vendor, c[i].fam, c[i].model, c[i].step,
								c[i].core);
		const char *got = p ? p->name : "(none)";
		if (c[i].want ? !p || strcmp(p->name, c[i].want) : p != NULL)
			fail_msg("test_table.c:%d: %s %u/%u/%u %s -> %s, expected %s", c[i].line, c[i].vendor, c[i].fam,
				 c[i].model, c[i].step, c[i].core ? c[i].core : "", got,
				 c[i].want ? c[i].want : "(none)");
	}
}

/* ---- broken tables ------------------------------------------------- */

static void test_broken_fixtures(void **state)
{
	static const struct {
		const char *file;
		int line;
		const char *says;
	} b[] = {
		{ "unknown_alias.pft", 6, "unknown event alias 'D128'" },
		{ "product.pft", 7, "product of two events" },
		{ "constant.pft", 6, "constant term" },
		{ "missing_metric.pft", 1, "metric BF16_OPS not declared" },
		{ "no_caveat.pft", 1, "FP_OPS (estimate) has no caveat" },
		{ "unknown_directive.pft", 4, "unknown directive 'countres'" },
		{ "self_reference.pft", 2, "no such pmu defined above" },
		{ "like_late.pft", 3, "'like' must be the first line" },
#if defined(__x86_64__)
		{ "bad_event.pft", 5, "libpfm4 cannot encode 'skx::FP_ARITH_INST_RETIRED:1024B_PACKED_DOUBLE'" },
#else /* a libpfm4 without x86 PMUs: presets/x86-libpfm.enc lacks it */
		{ "bad_event.pft", 5,
		  "'FP_ARITH_INST_RETIRED:1024B_PACKED_DOUBLE' is named for libpfm4, whose aarch64 build has no x86 PMU" },
#endif
		{ "unused_event.pft", 6, "event B is used by no metric" },
		{ "bad_raw.pft", 6, "bad event 'raw:0x01cg'" },
		{ "no_match.pft", 1, "no 'match' line" },
		/* issue 13: a stack overflow, uninitialised memory, an infinite weight */
		{ "deep_formula.pft", 6, "nested more than 64 levels deep" },
		{ "empty_stepping.pft", 3, "bad stepping range ''; write stepping=N or stepping=LO-HI" },
		{ "weight_overflow.pft", 6, "a weight overflows" },
	};
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		char path[256], prefix[300];
		snprintf(path, sizeof(path), "ctests/fixtures/broken/%s", b[i].file);
		snprintf(prefix, sizeof(prefix), "%s:%d: ", path, b[i].line);
		struct pflops_table t = { 0 };
		struct pflops_error err = { 0 };
		int rc = pflops_table_load_file(&t, path, &err);
		if (!rc)
			rc = pflops_table_check_encodings(&t, &err);
		pflops_table_free(&t);
		if (!rc)
			fail_msg("%s was accepted", path);
		if (strncmp(err.msg, prefix, strlen(prefix)) || !strstr(err.msg, b[i].says))
			fail_msg("%s: got \"%s\", expected \"%s...%s\"", path, err.msg, prefix, b[i].says);
	}
	/* and the build tool refuses them the same way */
	assert_int_not_equal(
		system("B=${B:-build}; $B/pflops_gen check ctests/fixtures/broken/product.pft 2>/dev/null"), 0);
	assert_int_equal(system("B=${B:-build}; $B/pflops_gen --replay presets/x86-libpfm.enc check presets/*.pft"), 0);
}

static void test_formula_language(void **state)
{
	const char *text = "pmu f\n title t\n libpfm none\n match intel 6 1\n counters 4\n"
			   " event A raw:0x01c7\n event B raw:0x02c7\n"
			   " metric FP_OPS estimate = 2*(A + 3*B) - A/2 + VL*B/128\n"
			   " metric DP_OPS unavailable\n metric SP_OPS unavailable\n metric HP_OPS unavailable\n"
			   " metric BF16_OPS unavailable\n metric VEC_DP unavailable\n metric VEC_SP unavailable\n"
			   " caveat * c\n";
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	if (pflops_table_parse(&t, text, "inline", &err))
		fail_msg("%s", err.msg);
	const struct pflops_metric_def *d = &t.pmus[0].metrics[PFLOPS_FP_OPS];
	/* A: 2 - 1/2 = 1.5; B: 6 + VL/128 */
	assert_int_equal(d->nterms, 2);
	assert_near(d->terms[0].w0, 1.5, 1e-12);
	assert_near(d->terms[0].wvl, 0, 0);
	assert_near(d->terms[1].w0, 6, 1e-12);
	assert_near(d->terms[1].wvl, 1.0 / 128 * 128 / 128, 1e-12);
	pflops_table_free(&t);
}

/* Parse FP_OPS = formula in a two-event block; the error message, or "" */
static void formula_result(const char *formula, char *msg, size_t len)
{
	char *text = malloc(strlen(formula) + 512);
	assert_non_null(text);
	sprintf(text,
		"pmu f\n libpfm none\n match intel 6 1\n counters 4\n event A raw:0x01c7\n event B raw:0x02c7\n"
		" metric FP_OPS estimate = %s\n metric DP_OPS unavailable\n metric SP_OPS unavailable\n"
		" metric HP_OPS unavailable\n metric BF16_OPS unavailable\n metric VEC_DP unavailable\n"
		" metric VEC_SP estimate = A + B\n caveat * c\n",
		formula);
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	int rc = pflops_table_parse(&t, text, "inline", &err);
	snprintf(msg, len, "%s", rc ? err.msg : "");
	pflops_table_free(&t);
	free(text);
}

/* Bounds: nesting depth (the parser recurses), weights (finite, at most
 * 1e6 FLOPs per count), numbers that under- or overflow. */
static void test_formula_bounds(void **state)
{
	char nest[400], msg[512];
	int n = 0;
	for (int i = 0; i < 63; i++)
		nest[n++] = '(';
	nest[n++] = 'A';
	for (int i = 0; i < 63; i++)
		nest[n++] = ')';
	nest[n] = 0;
	formula_result(nest, msg, sizeof(msg));
	assert_string_equal(msg, ""); /* 63 parentheses are fine */
	memmove(nest + 1, nest, strlen(nest) + 1);
	nest[0] = '-';
	formula_result(nest, msg, sizeof(msg));
	assert_non_null(strstr(msg, "inline:7: metric FP_OPS: nested more than 64 levels deep"));
	static const struct {
		const char *formula, *says;
	} c[] = {
		{ "1e7*A", "the weight of A is out of range (at most 1e6 FLOPs per count)" },
		{ "A + 2e3*VL*B", "the weight of B is out of range" },
		{ "1e300*1e300*A", "a weight overflows" },
		{ "A*1e300*1e300", "a weight overflows" },
		{ "A/1e-300/1e-300", "a weight overflows" },
		{ "A*1e-400", "bad number at '1e-400'" },
		{ "A*1e400", "bad number at '1e400'" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		formula_result(c[i].formula, msg, sizeof(msg));
		if (!strstr(msg, c[i].says))
			fail_msg("%s: got \"%s\", expected \"%s\"", c[i].formula, msg, c[i].says);
	}
}

/* A NUL byte would end the parse early and drop the rest of the file. */
static void test_table_file_nul(void **state)
{
	char path[] = "/tmp/pflops_nulXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static const char text[] = "pmu f\n title t\n\0 match intel 6 1\n";
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	int rc = pflops_table_load_file(&t, path, &err);
	unlink(path);
	pflops_table_free(&t);
	assert_int_equal(rc, PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, ":3: a NUL byte; the table is text"));
}

/* Issue 20: what pflops_table_load_file opens is a regular file of at
 * most 16 MiB (a FIFO nobody writes returns at once), and a table with
 * no PMU block names its file instead of reading every CPU as unknown. */
static void load_fails(const char *path, const char *says)
{
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	int rc = pflops_table_load_file(&t, path, &err);
	pflops_table_free(&t);
	assert_int_not_equal(rc, 0);
	if (!strstr(err.msg, says))
		fail_msg("%s: \"%s\" does not say \"%s\"", path, err.msg, says);
}

static void test_table_file_kinds(void **state)
{
	odd_files_refused(load_fails, "formula tables", 16);
	char path[] = "/tmp/pflops_commentsXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0 && write(fd, "# a comment\n\n", 13) == 13);
	close(fd);
	load_fails(path, ": no PMU block in it (only comments or blank lines)");
	unlink(path);
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	assert_int_equal(pflops_table_parse(&t, "", "inline", &err), PFLOPS_EINVAL);
	assert_string_equal(
		err.msg,
		"inline: no PMU block in it (only comments or blank lines); a formula table holds 'pmu' blocks (presets/README.md)");
	pflops_table_free(&t);
}

/* `note`: an event in no formula is allowed when it says why it is kept
 * (snb's x87 code); `combine` is allowed on a libpfm4-named event. */
static void test_note_and_combine(void **state)
{
	const char *head =
		"pmu f\n title t\n libpfm skx\n match intel 6 1\n counters 4\n"
		" event A FP_ARITH_INST_RETIRED:SCALAR_DOUBLE combine\n event B FP_ARITH_INST_RETIRED:SCALAR_SINGLE\n"
		" metric FP_OPS exact = A\n metric DP_OPS unavailable\n metric SP_OPS unavailable\n"
		" metric HP_OPS unavailable\n metric BF16_OPS unavailable\n metric VEC_DP unavailable\n"
		" metric VEC_SP unavailable\n caveat * c\n";
	char text[1024];
	struct pflops_table t = { 0 };
	struct pflops_error err = { 0 };
	snprintf(text, sizeof(text), "%s note B kept for comparison\n", head);
	if (pflops_table_parse(&t, text, "inline", &err))
		fail_msg("%s", err.msg);
	assert_string_equal(t.pmus[0].events[1].note, "kept for comparison");
	assert_int_equal(t.pmus[0].events[0].combine, 1);
	assert_null(t.pmus[0].events[0].note);
	pflops_table_free(&t);
	snprintf(text, sizeof(text), "%s", head); /* B unused, no note */
	assert_int_equal(pflops_table_parse(&t, text, "inline", &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "say why it is kept with 'note B TEXT'"));
	pflops_table_free(&t);
	snprintf(text, sizeof(text), "%s note C what\n", head);
	assert_int_equal(pflops_table_parse(&t, text, "inline", &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "inline:16: note for unknown event alias 'C'"));
	pflops_table_free(&t);
	/* the noted event is in no plan: snb FP_OPS has no x87 code */
	struct pflops_plan plan;
	assert_int_equal(pflops_plan_make(&plan, pmu("snb"), 1u << PFLOPS_FP_OPS, 0, NULL), 0);
	for (int c = 0; c < plan.ncounters; c++)
		assert_true(plan.counter[c].config != 0x530110);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_event_encodes), cmocka_unit_test(test_coverage),
		cmocka_unit_test(test_golden_encodings),    cmocka_unit_test(test_e_core_pmus),
		cmocka_unit_test(test_merged_umasks),	    cmocka_unit_test(test_counter_economy),
		cmocka_unit_test(test_counter_anchors),	    cmocka_unit_test(test_eval_intel),
		cmocka_unit_test(test_eval_amd_arm),	    cmocka_unit_test(test_unavailable_says_why),
		cmocka_unit_test(test_cpu_mapping),	    cmocka_unit_test(test_broken_fixtures),
		cmocka_unit_test(test_formula_language),    cmocka_unit_test(test_note_and_combine),
		cmocka_unit_test(test_formula_bounds),	    cmocka_unit_test(test_table_file_nul),
		cmocka_unit_test(test_table_file_kinds),
	};
	return cmocka_run_group_tests_name("table", tests, setup, teardown);
}
