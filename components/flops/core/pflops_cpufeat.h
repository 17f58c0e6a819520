/*
 * pflops_cpufeat.h: does this CPU (and its OS) run an instruction set
 * extension?  From CPUID and XCR0, so the answer holds in containers
 * where /proc/cpuinfo is the host's, and without libc: the freestanding
 * calibration programs use it too (ctests/trace/calib.h).
 *
 * Names are Linux's /proc/cpuinfo flags.  `hide` is a comma-separated
 * list of names to treat as absent (PFLOPS_CPU_HIDE, for testing what a
 * smaller CPU would do); hiding a feature hides what is built on it
 * (avx512f hides every AVX-512 extension, avx hides AVX2, FMA and
 * AVX-512).  On another architecture (aarch64) the names are known and
 * none is present: pfc_cpu_has answers 0, "" included.
 */
#ifndef PFC_CPUFEAT_H
#define PFC_CPUFEAT_H

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define PFC_CPU_HIDE_ENV "PFLOPS_CPU_HIDE"

/* XCR0 state components an extension needs the OS to save */
#define PFC_XCR0_AVX 0x06u    /* SSE, YMM upper halves */
#define PFC_XCR0_AVX512 0xe6u /* + opmask, ZMM_Hi256, Hi16_ZMM */
#define PFC_XCR0_AMX 0x60000u /* TILECFG, TILEDATA */

enum { PFC_CPUID_EAX, PFC_CPUID_EBX, PFC_CPUID_ECX, PFC_CPUID_EDX };

struct pfc_cpufeat {
	const char *name;
	const char *parent; /* needs this one too; NULL: none */
	unsigned leaf, subleaf, reg, bit;
	unsigned xcr0; /* state the OS must enable */
};

static const struct pfc_cpufeat pfc_cpufeats[] = {
	{ "sse4_1", 0, 1, 0, PFC_CPUID_ECX, 19, 0 },
	{ "avx", 0, 1, 0, PFC_CPUID_ECX, 28, PFC_XCR0_AVX },
	{ "fma", "avx", 1, 0, PFC_CPUID_ECX, 12, PFC_XCR0_AVX },
	{ "f16c", "avx", 1, 0, PFC_CPUID_ECX, 29, PFC_XCR0_AVX },
	{ "avx2", "avx", 7, 0, PFC_CPUID_EBX, 5, PFC_XCR0_AVX },
	{ "avx512f", "avx2", 7, 0, PFC_CPUID_EBX, 16, PFC_XCR0_AVX512 },
	{ "avx512dq", "avx512f", 7, 0, PFC_CPUID_EBX, 17, PFC_XCR0_AVX512 },
	{ "avx512bw", "avx512f", 7, 0, PFC_CPUID_EBX, 30, PFC_XCR0_AVX512 },
	{ "avx512vl", "avx512f", 7, 0, PFC_CPUID_EBX, 31, PFC_XCR0_AVX512 },
	{ "avx512_fp16", "avx512bw", 7, 0, PFC_CPUID_EDX, 23, PFC_XCR0_AVX512 },
	{ "avx512_bf16", "avx512bw", 7, 1, PFC_CPUID_EAX, 5, PFC_XCR0_AVX512 },
	{ "amx_tile", 0, 7, 0, PFC_CPUID_EDX, 24, PFC_XCR0_AMX },
	{ "amx_bf16", "amx_tile", 7, 0, PFC_CPUID_EDX, 22, PFC_XCR0_AMX },
	{ "amx_fp16", "amx_tile", 7, 1, PFC_CPUID_EAX, 21, PFC_XCR0_AMX },
};

static inline int pfc_cpufeat_eq(const char *a, const char *b, unsigned blen)
{
	unsigned i = 0;

	while (i < blen && a[i] && a[i] == b[i])
		i++;
	return i == blen && !a[i];
}

/* Is `name` in the comma-separated list `hide`? */
static inline int pfc_cpufeat_hidden(const char *name, const char *hide)
{
	while (hide && *hide) {
		unsigned n = 0;

		while (hide[n] && hide[n] != ',')
			n++;
		if (n && pfc_cpufeat_eq(name, hide, n))
			return 1;
		hide += n + (hide[n] == ',');
	}
	return 0;
}

#if defined(__x86_64__)
static inline unsigned long long pfc_cpufeat_xcr0(void)
{
	unsigned a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE */
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((unsigned long long)hi << 32) | lo;
}
#endif

static inline const struct pfc_cpufeat *pfc_cpufeat_find(const char *name)
{
	for (unsigned i = 0; i < sizeof pfc_cpufeats / sizeof pfc_cpufeats[0]; i++) {
		const char *n = pfc_cpufeats[i].name;
		unsigned len = 0;

		while (n[len])
			len++;
		if (pfc_cpufeat_eq(name, n, len))
			return &pfc_cpufeats[i];
	}
	return 0;
}

/*
 * 1 if the CPU has `name` and the OS enabled its state, 0 if not (or
 * hidden, or not an x86-64 CPU), -1 for a name this table does not know.
 * "" is any x86-64.
 */
static inline int pfc_cpu_has(const char *name, const char *hide)
{
	const struct pfc_cpufeat *f;
	unsigned r[4];

	f = pfc_cpufeat_find(name);
	if (*name && !f)
		return -1;
#if !defined(__x86_64__)
	(void)r;
	(void)hide;
	return 0;
#else
	if (!*name)
		return 1;
	if (pfc_cpufeat_hidden(f->name, hide))
		return 0;
	if (f->parent && pfc_cpu_has(f->parent, hide) != 1)
		return 0;
	if (!__get_cpuid_count(f->leaf, f->subleaf, &r[0], &r[1], &r[2], &r[3]) || !(r[f->reg] & (1u << f->bit)))
		return 0;
	return (pfc_cpufeat_xcr0() & f->xcr0) == f->xcr0;
#endif
}

#endif
