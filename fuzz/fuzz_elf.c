/*
 * Fuzz the tracer's ELF reader (core/trace/trace_elf.c), which reads
 * whatever files a traced program maps (--region, --by-function).
 * Input: a file's bytes, placed at an odd address (the reader gives no
 * alignment to what it reads).  Walked as the tracer does: the header
 * check, the PT_LOAD segments, both symbol tables, a --region lookup of
 * the first function found (its entry check decodes instructions).
 * Invariants: a refused file is refused by the header check; every
 * symbol name lies inside the file and ends there; segments are PT_LOAD
 * entries of the header's table; a lookup's why[] is a sentence when
 * set and its copied code lies inside the file.
 */
#include "fuzz.h"
#include <elf.h>
#include "trace/trace_elf.h"

struct walk {
	const uint8_t *lo, *hi;
	char first[64];
	size_t n;
};

static int one_sym(void *arg, const struct pft_elf_sym *s)
{
	struct walk *w = arg;
	const uint8_t *p = (const uint8_t *)s->name;

	FUZZ_CHECK(p >= w->lo && p < w->hi, "symbol name outside the file");
	FUZZ_CHECK(memchr(p, 0, (size_t)(w->hi - p)) != NULL, "symbol name not terminated in the file");
	if (!w->n++)
		snprintf(w->first, sizeof w->first, "%s", s->name);
	return w->n > 100000; /* stop: the walk's cost is linear anyway */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + 1);
	struct pft_elf e;
	struct pft_elf_seg *segs;
	size_t nsegs;

	if (!buf)
		abort();
	memcpy(buf + 1, data, size);
	e.p = buf + 1;
	e.size = size;
	if (pft_elf_check(&e)) {
		free(buf);
		return 0;
	}
	Elf64_Ehdr eh;
	memcpy(&eh, e.p, sizeof eh);
	if (!pft_elf_loads(&e, &segs, &nsegs)) {
		FUZZ_CHECK(nsegs <= eh.e_phnum, "%zu segments from %u headers", nsegs, eh.e_phnum);
		free(segs);
	}
	uint64_t va, off;
	pft_elf_first_load(&e, &va, &off);
	struct walk w = { e.p, e.p + e.size, "", 0 };
	pft_elf_funcs(&e, 0, one_sym, &w);
	pft_elf_funcs(&e, 1, one_sym, &w);
	struct pft_elf_hit h;
	if (w.n && !pft_elf_lookup_e(&e, "fuzz.so", w.first, &h)) {
		FUZZ_CHECK(h.ncode <= sizeof h.code, "%zu code bytes", h.ncode);
		FUZZ_CHECK(memchr(h.why, 0, sizeof h.why) != NULL, "why[] not terminated");
		FUZZ_CHECK(!h.why[0] || strstr(h.why, "fuzz.so"), "the refusal names no file: %s", h.why);
	}
	free(buf);
	return 0;
}
