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
 * none is present: pflops_cpu_has answers 0, "" included.
 */
#ifndef PFLOPS_CPUFEAT_H
#define PFLOPS_CPUFEAT_H

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define PFLOPS_CPU_HIDE_ENV "PFLOPS_CPU_HIDE"

/* XCR0 state components an extension needs the OS to save */
#define PFLOPS_XCR0_AVX 0x06u	 /* SSE, YMM upper halves */
#define PFLOPS_XCR0_AVX512 0xe6u /* + opmask, ZMM_Hi256, Hi16_ZMM */
#define PFLOPS_XCR0_AMX 0x60000u /* TILECFG, TILEDATA */

enum { PFLOPS_CPUID_EAX, PFLOPS_CPUID_EBX, PFLOPS_CPUID_ECX, PFLOPS_CPUID_EDX };

struct pflops_cpufeat {
	const char *name;
	const char *parent; /* needs this one too; NULL: none */
	unsigned leaf, subleaf, reg, bit;
	unsigned xcr0; /* state the OS must enable */
};

static const struct pflops_cpufeat pflops_cpufeats[] = {
	{ "sse4_1", 0, 1, 0, PFLOPS_CPUID_ECX, 19, 0 },
	{ "avx", 0, 1, 0, PFLOPS_CPUID_ECX, 28, PFLOPS_XCR0_AVX },
	{ "fma", "avx", 1, 0, PFLOPS_CPUID_ECX, 12, PFLOPS_XCR0_AVX },
	{ "f16c", "avx", 1, 0, PFLOPS_CPUID_ECX, 29, PFLOPS_XCR0_AVX },
	{ "avx2", "avx", 7, 0, PFLOPS_CPUID_EBX, 5, PFLOPS_XCR0_AVX },
	{ "avx512f", "avx2", 7, 0, PFLOPS_CPUID_EBX, 16, PFLOPS_XCR0_AVX512 },
	{ "avx512dq", "avx512f", 7, 0, PFLOPS_CPUID_EBX, 17, PFLOPS_XCR0_AVX512 },
	{ "avx512bw", "avx512f", 7, 0, PFLOPS_CPUID_EBX, 30, PFLOPS_XCR0_AVX512 },
	{ "avx512vl", "avx512f", 7, 0, PFLOPS_CPUID_EBX, 31, PFLOPS_XCR0_AVX512 },
	{ "avx512_fp16", "avx512bw", 7, 0, PFLOPS_CPUID_EDX, 23, PFLOPS_XCR0_AVX512 },
	{ "avx512_bf16", "avx512bw", 7, 1, PFLOPS_CPUID_EAX, 5, PFLOPS_XCR0_AVX512 },
	{ "amx_tile", 0, 7, 0, PFLOPS_CPUID_EDX, 24, PFLOPS_XCR0_AMX },
	{ "amx_bf16", "amx_tile", 7, 0, PFLOPS_CPUID_EDX, 22, PFLOPS_XCR0_AMX },
	{ "amx_fp16", "amx_tile", 7, 1, PFLOPS_CPUID_EAX, 21, PFLOPS_XCR0_AMX },
};

static inline int pflops_cpufeat_eq(const char *a, const char *b, unsigned blen)
{
	unsigned i = 0;

	while (i < blen && a[i] && a[i] == b[i])
		i++;
	return i == blen && !a[i];
}

/* Is `name` in the comma-separated list `hide`? */
static inline int pflops_cpufeat_hidden(const char *name, const char *hide)
{
	while (hide && *hide) {
		unsigned n = 0;

		while (hide[n] && hide[n] != ',')
			n++;
		if (n && pflops_cpufeat_eq(name, hide, n))
			return 1;
		hide += n + (hide[n] == ',');
	}
	return 0;
}

#if defined(__x86_64__)
static inline unsigned long long pflops_cpufeat_xcr0(void)
{
	unsigned a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE */
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((unsigned long long)hi << 32) | lo;
}
#endif

static inline const struct pflops_cpufeat *pflops_cpufeat_find(const char *name)
{
	for (unsigned i = 0; i < sizeof pflops_cpufeats / sizeof pflops_cpufeats[0]; i++) {
		const char *n = pflops_cpufeats[i].name;
		unsigned len = 0;

		while (n[len])
			len++;
		if (pflops_cpufeat_eq(name, n, len))
			return &pflops_cpufeats[i];
	}
	return 0;
}

/*
 * 1 if the CPU has `name` and the OS enabled its state, 0 if not (or
 * hidden, or not an x86-64 CPU), -1 for a name this table does not know.
 * "" is any x86-64.
 */
static inline int pflops_cpu_has(const char *name, const char *hide)
{
	const struct pflops_cpufeat *f;
	unsigned r[4];

	f = pflops_cpufeat_find(name);
	if (*name && !f)
		return -1;
#if !defined(__x86_64__)
	(void)r;
	(void)hide;
	return 0;
#else
	if (!*name)
		return 1;
	if (pflops_cpufeat_hidden(f->name, hide))
		return 0;
	if (f->parent && pflops_cpu_has(f->parent, hide) != 1)
		return 0;
	if (!__get_cpuid_count(f->leaf, f->subleaf, &r[0], &r[1], &r[2], &r[3]) || !(r[f->reg] & (1u << f->bit)))
		return 0;
	return (pflops_cpufeat_xcr0() & f->xcr0) == f->xcr0;
#endif
}

#endif
