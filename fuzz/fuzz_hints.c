/*
 * Fuzz the tracer's hint-file parser (core/trace/trace_hints.c), which
 * reads files of the hint store (PFLOPS_TRACE_HINTS_DIR): outside input,
 * written by earlier runs, other tracers, or anything else.  Input: a
 * hint file's bytes, parsed for the key it names itself (so the key
 * check can pass), then again with its checksum made right (so the
 * entries are reached).  Invariants: a file accepted is exactly its
 * header, count and checksum long, holds at most PFT_HINT_MAX entries,
 * their offsets strictly ascending; a file refused says why and hands
 * back no entries.
 */
#include "fuzz.h"
#include <stdint.h>
#include "trace/trace_hints.h"

static void parse(const uint8_t *p, size_t len, const char *key)
{
	uint64_t *ent = (uint64_t *)1;
	size_t n = 1;
	char why[160] = "";

	if (pft_hints_parse(p, len, key, &ent, &n, why, sizeof why)) {
		FUZZ_CHECK(why[0] != 0, "refused without a reason");
		FUZZ_CHECK(ent == NULL && n == 0, "refused, yet %zu entries", n);
		return;
	}
	FUZZ_CHECK(n <= PFT_HINT_MAX, "%zu entries", n);
	FUZZ_CHECK(len == ((16 + strlen(key) + 7) & ~(size_t)7) + 8 + 8 * n + 8, "%zu bytes for %zu entries", len, n);
	for (size_t i = 1; i < n; i++)
		FUZZ_CHECK(PFT_HINT_OFF(ent[i]) > PFT_HINT_OFF(ent[i - 1]), "entry %zu not above the one before", i);
	free(ent);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char key[PFT_HINT_KEY + 1] = "none";
	uint8_t *copy;
	uint32_t kl;

	if (size >= 16) {
		memcpy(&kl, data + 12, 4);
		if (kl >= 1 && kl <= PFT_HINT_KEY && 16 + (size_t)kl <= size) {
			memcpy(key, data + 16, kl);
			key[kl] = 0;
		}
	}
	copy = malloc(size + 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	parse(copy, size, key);
	if (size >= 8) {
		uint64_t sum = pft_hints_sum(copy, size - 8);
		memcpy(copy + size - 8, &sum, 8);
		parse(copy, size, key);
	}
	free(copy);
	return 0;
}
