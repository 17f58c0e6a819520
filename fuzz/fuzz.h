/* Shared by the fuzz harnesses: an invariant that fails is a crash for
 * libFuzzer (abort), with the reason printed first. */
#ifndef PF_FUZZ_H
#define PF_FUZZ_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, memmem */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                  \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz invariant failed: %s: ", #cond); \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

/* The input as a C string; NULL when it holds a NUL byte (text inputs
 * with a NUL are refused whole elsewhere, or cannot be given at all). */
static inline char *fuzz_text(const unsigned char *data, size_t size)
{
	if (memchr(data, 0, size))
		return NULL;
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}
#endif
