/*
 * test_trace_hints.c: the hint store (trace_hints.c,
 * docs/trace-engine.md#the-hint-store).  A program traced twice with a
 * fresh store counts the same both times, as the stopping engine and the
 * program's own loop counts say, and stops far less the second time;
 * bad hint files (truncated, another file's, offsets into the middle of
 * instructions) and code that differs from its file change no count.
 *
 * Every run here uses a store of its own under /tmp (never ~/.cache);
 * the programs run with address randomization off so that the loader's
 * work, and so the instruction totals, are the same run to run.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "pflops_trace.h"
#include "trace/trace_hints.h"
#include "calib_prog.h"

#define N 1000
enum {
	DP = PFLOPS_DP,
	X = PFLOPS_W128,
	Y = PFLOPS_W256,
	ADD = PFLOPS_OP_ADD,
	MUL = PFLOPS_OP_MUL,
	DIV = PFLOPS_OP_DIV
};

static char store[64];

static int count_all; /* pflops_trace_opts.count_all of the next runs */

static void trace_e(int engine, struct pflops_mix *m, struct pft_stats *st, char *const argv[])
{
	struct pflops_trace_opts o = { .engine = engine, .stats = st, .count_all = count_all };
	struct pflops_error err = { 0 };
	int status = -1, rc;

	memset(m, 0, sizeof *m);
	rc = pft_run(argv, &o, m, &status, &err);
	if (rc)
		print_error("trace %s: %s\n", argv[0], err.msg);
	assert_int_equal(rc, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void trace(struct pflops_mix *m, struct pft_stats *st, char *const argv[])
{
	trace_e(PFT_ENGINE_CACHE, m, st, argv);
}

/* the files of the store, by name (n of them, at most max) */
static int listing(char names[][256], int max)
{
	DIR *d = opendir(store);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && n < max)
			snprintf(names[n++], 256, "%s", e->d_name);
	closedir(d);
	return n;
}

static void clear_store(void)
{
	char names[512][256], f[400];
	int n = listing(names, 512);

	for (int i = 0; i < n; i++) {
		snprintf(f, sizeof f, "%s/%.255s", store, names[i]);
		unlink(f);
	}
}

static uint8_t *slurp(const char *name, size_t *len)
{
	char f[400];
	FILE *fp;
	uint8_t *buf = malloc(4 << 20);

	snprintf(f, sizeof f, "%s/%.255s", store, name);
	fp = fopen(f, "rb");
	assert_non_null(fp);
	assert_non_null(buf);
	*len = fread(buf, 1, 4 << 20, fp);
	fclose(fp);
	return buf;
}

static void spill(const char *name, const uint8_t *p, size_t len)
{
	char f[400];
	FILE *fp;

	snprintf(f, sizeof f, "%s/%.255s", store, name);
	fp = fopen(f, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(p, 1, len, fp), len);
	fclose(fp);
}

/* A hint file as the format says (trace_hints.h): written here from the
 * description, read back by the tracer's parser. */
static size_t make_hints(uint8_t *p, const char *key, const uint64_t *ent, uint64_t n)
{
	uint32_t ver = PFT_HINT_VERSION, kl = (uint32_t)strlen(key);
	size_t h = (16 + kl + 7) & ~(size_t)7, len = h + 8 + 8 * n + 8;
	uint64_t sum;

	memset(p, 0, len);
	memcpy(p, "PFTHINT\n", 8);
	memcpy(p + 8, &ver, 4);
	memcpy(p + 12, &kl, 4);
	memcpy(p + 16, key, kl);
	memcpy(p + h, &n, 8);
	memcpy(p + h + 8, ent, 8 * n);
	sum = pft_hints_sum(p, len - 8);
	memcpy(p + len - 8, &sum, 8);
	return len;
}

static void same_mix(const char *what, const struct pflops_mix *a, const struct pflops_mix *b, int totals)
{
	struct pflops_mix x = *a, y = *b;

	if (!totals) /* the engines' instruction totals on a dynamically
		      * linked program differ by a few (test_trace.c), and
		      * so do a program's with another environment size */
		x.total_insts = y.total_insts = 0;
	if (memcmp(&x, &y, sizeof x))
		fail_msg("%s: the counts differ (instructions %llu and %llu, DP FLOPs %llu and %llu)", what,
			 (unsigned long long)a->total_insts, (unsigned long long)b->total_insts,
			 (unsigned long long)pflops_mix_flops(a, DP), (unsigned long long)pflops_mix_flops(b, DP));
}

/* (1) cold and warm: the same counts, the true ones, fewer stops; by
 * default (copies without FP uncounted: their hints' runs unknown,
 * counted in the warm run to learn them, and the third run's hints only
 * those that ran, uncounted), then every copy counted (count_all: the
 * instruction totals too) */
/* Each entry's heat is the bit length of its block's run count (the
 * lookup table is filled hottest first): at least 1 (it ran), and the
 * loops' blocks, run N times, at least N's. */
static void heat_check(void)
{
	char names[512][256], why[160];
	unsigned top = 0, nbits = 64 - __builtin_clzll(N);
	int n = listing(names, 512);

	for (int i = 0; i < n; i++) {
		size_t len, ne;
		uint8_t *a = slurp(names[i], &len);
		uint64_t *ent;

		assert_int_equal(pft_hints_parse(a, len, names[i], &ent, &ne, why, sizeof why), 0);
		for (size_t k = 0; k < ne; k++) {
			assert_true(PFT_HINT_HEAT(ent[k]) >= 1 && PFT_HINT_HEAT(ent[k]) <= 64);
			if (PFT_HINT_HEAT(ent[k]) > top)
				top = PFT_HINT_HEAT(ent[k]);
		}
		free(ent);
		free(a);
	}
	assert_true(top >= nbits);
}

static void test_hints_warm(void **state)
{
	char *region[] = { (char *)prog("calib_region"), "1000", NULL };
	char *cxx[] = { (char *)prog("calib_regioncxx"), "1000", NULL };
	char *const *progs[] = { region, cxx };
	struct pflops_mix cold, warm, stop, third;
	struct pft_stats sc, sw, ss, s3;

	(void)state;
	for (int i = 0; i < 4; i++) {
		count_all = i >= 2;
		clear_store();
		trace(&cold, &sc, progs[i % 2]);
		trace(&warm, &sw, progs[i % 2]);
		trace_e(PFT_ENGINE_STOP, &stop, &ss, progs[i % 2]);
		print_message("%s: stops %llu cold, %llu warm; %llu blocks from %llu hint files\n", progs[i % 2][0],
			      (unsigned long long)sc.stops, (unsigned long long)sw.stops,
			      (unsigned long long)sw.hint_blocks, (unsigned long long)sw.hint_files);
		assert_int_equal(sc.hint_blocks, 0);
		assert_true(sc.hint_saved >= 2); /* the program and its libraries */
		assert_true(sw.hint_files >= 2);
		assert_true(sw.hint_blocks > 100);
		assert_int_equal(sw.hint_bad, 0);
		assert_string_equal(sw.hint_note, "");
		same_mix("cold vs warm", &cold, &warm, count_all);
		same_mix("warm vs the stopping engine", &warm, &stop, 0);
		/* (first runs served by request, PFLOPS_TRACE_FUTEX=1, count
		 * as the stops they replace) */
		assert_true(2 * (sw.stops + sw.freq_served) < sc.stops + sc.freq_served);
		if (count_all) {
			assert_int_equal(sc.cache_nocount + sw.cache_nocount, 0);
			continue;
		}
		/* the hints of uncounted copies counted in the warm run,
		 * those that did not run dropped from the store */
		trace(&third, &s3, progs[i % 2]);
		print_message("  uncounted copies: %llu cold, %llu warm, %llu third; hinted %llu warm, %llu third\n",
			      (unsigned long long)sc.cache_nocount, (unsigned long long)sw.cache_nocount,
			      (unsigned long long)s3.cache_nocount, (unsigned long long)sw.hint_blocks,
			      (unsigned long long)s3.hint_blocks);
		same_mix("third vs warm", &third, &warm, 0);
		assert_true(sc.cache_nocount > 100);
		assert_true(10 * sw.cache_nocount < sc.cache_nocount);
		assert_true(s3.cache_nocount > 100);
		assert_true(s3.hint_blocks < sw.hint_blocks);
		assert_true(2 * (s3.stops + s3.freq_served) < sc.stops + sc.freq_served);
	}
	/* (count_all still: the rest checks what the store says of runs) */
	/* the loop counts: libcalibk.so's 2N vaddpd ymm + 2N vmulpd xmm,
	 * main_kernel's 2N vsubpd ymm, outside()'s N vdivpd xmm (7N in
	 * all: test_trace's test_region); calib_regioncxx: 3 calls of N */
	trace(&warm, &sw, region);
	assert_int_equal(warm.insts[DP][Y][ADD], 4 * N);
	assert_int_equal(warm.insts[DP][X][MUL], 2 * N);
	assert_int_equal(warm.insts[DP][X][DIV], N);
	trace(&warm, &sw, cxx); /* its third run */
	assert_int_equal(warm.insts[DP][Y][ADD], 3 * N);
	assert_int_equal(sw.hint_saved, 0); /* nothing new: no file rewritten */
	heat_check();
	count_all = 0;
}

/* (2) bad hint files: ignored with a note naming the file, removed and
 * rewritten; counts as without hints */
static void test_hints_bad(void **state)
{
	char *cxx[] = { (char *)prog("calib_regioncxx"), "1000", NULL };
	char names[512][256];
	struct pflops_mix cold, m;
	struct pft_stats st;
	uint8_t *a, *b, *buf;
	size_t la, lb;
	int n, big = 0;

	(void)state;
	count_all = 1; /* (instruction totals compared) */
	clear_store();
	trace(&cold, &st, cxx);
	n = listing(names, 512);
	assert_true(n >= 2);

	/* truncated: every file cut in half */
	for (int i = 0; i < n; i++) {
		a = slurp(names[i], &la);
		spill(names[i], a, la / 2);
		free(a);
	}
	trace(&m, &st, cxx);
	same_mix("truncated hints", &cold, &m, 1);
	assert_true(st.hint_bad >= 1);
	assert_int_equal(st.hint_blocks, 0);
	assert_non_null(strstr(st.hint_note, store));
	assert_non_null(strstr(st.hint_note, "removed, rewritten"));
	/* rewritten whole by that run */
	trace(&m, &st, cxx);
	same_mix("rewritten hints", &cold, &m, 1);
	assert_int_equal(st.hint_bad, 0);
	assert_true(st.hint_blocks > 100);

	/* another build's hints under this file's name: the largest file's
	 * bytes as every other one */
	n = listing(names, 512);
	for (int i = 1; i < n; i++) {
		struct stat s1, s2;
		char f1[400], f2[400];
		snprintf(f1, sizeof f1, "%s/%.255s", store, names[i]);
		snprintf(f2, sizeof f2, "%s/%.255s", store, names[big]);
		if (!stat(f1, &s1) && !stat(f2, &s2) && s1.st_size > s2.st_size)
			big = i;
	}
	a = slurp(names[big], &la);
	for (int i = 0; i < n; i++)
		if (i != big)
			spill(names[i], a, la);
	free(a);
	trace(&m, &st, cxx);
	same_mix("another file's hints", &cold, &m, 1);
	assert_true(st.hint_bad >= 1);
	assert_non_null(strstr(st.hint_note, "another file"));

	/* well-formed, but pointing into instructions: each offset and the
	 * three bytes after it, all as indirect-branch targets */
	trace(&m, &st, cxx); /* every file good again */
	n = listing(names, 512);
	for (int i = 0; i < n; i++) {
		uint64_t *ent, *bad;
		size_t ne;
		char why[160];

		a = slurp(names[i], &la);
		assert_int_equal(pft_hints_parse(a, la, names[i], &ent, &ne, why, sizeof why), 0);
		bad = malloc(4 * ne * sizeof *bad + 8);
		assert_non_null(bad);
		lb = 0;
		for (size_t k = 0; k < ne; k++)
			for (uint64_t d = 0; d < 4; d++)
				if (!lb || PFT_HINT_OFF(ent[k]) + d > PFT_HINT_OFF(bad[lb - 1]))
					bad[lb++] = PFT_HINT_ENT(PFT_HINT_OFF(ent[k]) + d, 1, PFT_HINT_IND);
		buf = malloc(64 + strlen(names[i]) + 8 * lb + 16);
		assert_non_null(buf);
		lb = make_hints(buf, names[i], bad, lb);
		spill(names[i], buf, lb);
		b = slurp(names[i], &lb);
		free(ent);
		assert_int_equal(pft_hints_parse(b, lb, names[i], &ent, &ne, why, sizeof why), 0);
		free(ent);
		free(a);
		free(b);
		free(bad);
		free(buf);
	}
	trace(&m, &st, cxx);
	same_mix("hints into instructions", &cold, &m, 1);
	assert_int_equal(st.hint_bad, 0);
	assert_true(st.hint_blocks > 100);
	count_all = 0;
}

/* A full entry (PFT_HINT_MAX offsets, none in the file's mapping) and a
 * run's new ones: the file stays at the bound, the run's all kept. */
static void test_hints_bound(void **state)
{
	char *region[] = { (char *)prog("calib_region"), "1000", NULL };
	char names[64][256], why[160];
	struct pflops_mix m;
	struct pft_stats st;
	uint64_t *full = malloc(PFT_HINT_MAX * sizeof *full), *ent, *run[64];
	size_t nrun[64], ne, len;
	uint8_t *buf = malloc(PFT_HINT_MAX * 8 + 4096), *b;
	int n;

	(void)state;
	assert_non_null(full);
	assert_non_null(buf);
	clear_store();
	/* every copy counted: the entries are then the blocks that ran, the
	 * same in both runs (else copies without a count are kept as
	 * translated, which depends on the hints) */
	count_all = 1;
	trace(&m, &st, region);
	n = listing(names, 64);
	for (int i = 0; i < n; i++) {
		b = slurp(names[i], &len);
		assert_int_equal(pft_hints_parse(b, len, names[i], &run[i], &nrun[i], why, sizeof why), 0);
		free(b);
		for (size_t k = 0; k < PFT_HINT_MAX; k++)
			full[k] = PFT_HINT_ENT((1ULL << 40) + 16 * k, 1, 0);
		spill(names[i], buf, make_hints(buf, names[i], full, PFT_HINT_MAX));
	}
	trace(&m, &st, region);
	assert_int_equal(st.hint_bad, 0);
	for (int i = 0; i < n; i++) {
		size_t k = 0;
		b = slurp(names[i], &len);
		assert_int_equal(pft_hints_parse(b, len, names[i], &ent, &ne, why, sizeof why), 0);
		assert_int_equal(ne, PFT_HINT_MAX);
		for (size_t j = 0; j < nrun[i]; j++) { /* ascending both */
			while (k < ne && PFT_HINT_OFF(ent[k]) < PFT_HINT_OFF(run[i][j]))
				k++;
			assert_true(k < ne && PFT_HINT_OFF(ent[k]) == PFT_HINT_OFF(run[i][j]));
		}
		free(ent);
		free(run[i]);
		free(b);
	}
	count_all = 0;
	free(full);
	free(buf);
}

/* (3) code that differs from its file (rewritten in place at run time):
 * the hints of the other version's run change nothing */
static void test_hints_smc(void **state)
{
	char *smc[] = { (char *)prog("calib_smc"), "text", "3000", NULL };
	struct pflops_mix m;
	struct pft_stats st;

	(void)state;
	clear_store();
	for (int run = 0; run < 3; run++) {
		trace(&m, &st, smc);
		assert_int_equal(m.insts[DP][Y][ADD], 3000);
		assert_int_equal(m.insts[DP][Y][MUL], 3000);
		assert_true(run == 0 || st.hint_blocks > 0);
	}
}

/* PFLOPS_TRACE_HINTS=0: no store read or written; a store that cannot
 * be made: a note, the run as without; a bad value: an error */
static void test_hints_settings(void **state)
{
	char *region[] = { (char *)prog("calib_region"), "1000", NULL };
	char names[4][256], dir[128];
	struct pflops_mix m, cold;
	struct pft_stats st;
	struct pflops_trace_opts o = { .engine = PFT_ENGINE_CACHE };
	struct pflops_error err = { 0 };
	int status;
	FILE *fp;

	(void)state;
	clear_store();
	trace(&cold, &st, region);
	clear_store();
	setenv("PFLOPS_TRACE_HINTS", "0", 1);
	trace(&m, &st, region);
	assert_int_equal(listing(names, 4), 0);
	assert_int_equal(st.hint_saved, 0);
	assert_string_equal(st.hint_note, "");
	same_mix("hints off", &cold, &m, 1);

	setenv("PFLOPS_TRACE_HINTS", "yes", 1);
	memset(&m, 0, sizeof m);
	assert_int_equal(pft_run(region, &o, &m, &status, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "PFLOPS_TRACE_HINTS='yes'"));
	setenv("PFLOPS_TRACE_HINTS", "1", 1);

	/* a directory under a regular file cannot be made (root too) */
	snprintf(dir, sizeof dir, "%s/plain", store);
	fp = fopen(dir, "w");
	assert_non_null(fp);
	fclose(fp);
	snprintf(dir, sizeof dir, "%s/plain/hints", store);
	setenv("PFLOPS_TRACE_HINTS_DIR", dir, 1);
	trace(&m, &st, region);
	setenv("PFLOPS_TRACE_HINTS_DIR", store, 1);
	assert_non_null(strstr(st.hint_note, "trace hints off"));
	assert_non_null(strstr(st.hint_note, dir));
	assert_int_equal(st.hint_saved, 0);
	/* (the environment is longer: the loader's instructions differ) */
	same_mix("no store", &cold, &m, 0);
	snprintf(dir, sizeof dir, "%s/plain", store);
	unlink(dir);
}

/* The parser on what can go wrong with a file (fuzz/fuzz_hints.c tries
 * the rest). */
static void test_hints_parse(void **state)
{
	uint64_t ent[3] = { PFT_HINT_ENT(0x2000, 1, 0), PFT_HINT_ENT(0x2010, 3, 1), PFT_HINT_ENT(0x2400, 64, 0) }, *got;
	uint8_t p[256], q[256];
	size_t len, n;
	char why[160];

	(void)state;
	len = make_hints(p, "k-1", ent, 3);
	assert_int_equal(pft_hints_parse(p, len, "k-1", &got, &n, why, sizeof why), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(got, ent, sizeof ent);
	free(got);
	assert_int_equal(pft_hints_parse(p, len, "k-2", &got, &n, why, sizeof why), -1);
	assert_non_null(strstr(why, "another file"));
	for (size_t cut = 0; cut < len; cut++)
		assert_int_equal(pft_hints_parse(p, cut, "k-1", &got, &n, why, sizeof why), -1);
	memcpy(q, p, len);
	q[len - 12] ^= 1; /* an entry changed: the checksum says so */
	assert_int_equal(pft_hints_parse(q, len, "k-1", &got, &n, why, sizeof why), -1);
	assert_non_null(strstr(why, "checksum"));
	memcpy(q, p, len);
	q[8] = PFT_HINT_VERSION + 1; /* a later version */
	assert_int_equal(pft_hints_parse(q, len, "k-1", &got, &n, why, sizeof why), -1);
	assert_non_null(strstr(why, "version"));
	ent[2] = PFT_HINT_ENT(0x2010, 5, 0); /* not ascending */
	len = make_hints(p, "k-1", ent, 3);
	assert_int_equal(pft_hints_parse(p, len, "k-1", &got, &n, why, sizeof why), -1);
	assert_non_null(strstr(why, "order"));
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The save's sort (trace_hints.c): one descending run found and merged
 * with the rest, or a radix sort, or qsort, by shape and size; each
 * shape against qsort, at the sizes around where the rules change. */
static void test_hints_sort(void **state)
{
	static const size_t sizes[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 256, 257, 4096, 4097, 20000 };
	uint64_t seed = 12345;

	(void)state;
	for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
		for (int shape = 0; shape < 8; shape++) {
			size_t n = sizes[si], cut = n / 3;
			uint64_t *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w);
			assert_non_null(v);
			assert_non_null(w);
			for (size_t i = 0; i < n; i++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				switch (shape) {
				case 0: /* random, repeats among them */
					v[i] = (seed >> 33) % (n + 1) << 8;
					break;
				case 1: /* descending: a warm run's file */
					v[i] = (uint64_t)(n - i) << 8 | (seed >> 60);
					break;
				case 2: /* ascending */
					v[i] = (uint64_t)i << 8;
					break;
				case 3: /* the touching block first, then the run */
					v[i] = i ? (uint64_t)(n - i) << 8 : (uint64_t)cut << 8 | 3;
					break;
				case 4: /* a run with a few new ones after it */
					v[i] = i < n - n / 16 ? (uint64_t)(2 * (n - i)) << 8
							      : (seed >> 20) & 0xffffff00;
					break;
				case 5: /* two runs of a third and two thirds */
					v[i] = i < cut ? (uint64_t)(cut - i) << 9 : (uint64_t)(n - i) << 8 | 1;
					break;
				case 6: /* random, high in a big file: the top digits
					 * all the same (a radix pass with nothing to move) */
					v[i] = (1ULL << 40 | (seed >> 40)) << 8 | (seed >> 62);
					break;
				default: /* any 64 bits: the last pass's digit (bits 55
					  * to 63) short of 11 bits */
					v[i] = seed ^ (seed << 17);
					break;
				}
			}
			memcpy(w, v, n * sizeof *v);
			qsort(w, n, sizeof *w, cmp64);
			assert_int_equal(pft_hints_sort(v, n), 0);
			assert_memory_equal(v, w, n * sizeof *v);
			free(v);
			free(w);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hints_parse),    cmocka_unit_test(test_hints_sort),
		cmocka_unit_test(test_hints_warm),     cmocka_unit_test(test_hints_bad),
		cmocka_unit_test(test_hints_bound),    cmocka_unit_test(test_hints_smc),
		cmocka_unit_test(test_hints_settings),
	};
	int pers = personality(0xffffffff), rc;

	calib_prog_init();
	snprintf(store, sizeof store, "/tmp/pflops-hints-test.XXXXXX");
	if (!mkdtemp(store)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("PFLOPS_TRACE_HINTS", "1", 1);
	setenv("PFLOPS_TRACE_HINTS_DIR", store, 1);
	/* the same addresses in every run (inherited by the programs) */
	if (pers == -1 || personality((unsigned long)pers | ADDR_NO_RANDOMIZE) == -1) {
		perror("personality");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	clear_store();
	rmdir(store);
	return rc;
}
