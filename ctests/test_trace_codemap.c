/*
 * test_trace_codemap.c: the program's code read from the tracer's own
 * mapping of its files (trace_codemap.c) gives process_vm_readv's bytes,
 * page for page, for a real process's libraries (libc's code among
 * them); and no page through it where the program's bytes may not be
 * the file's: a range made writable, written, mapped afresh writable,
 * anonymous memory, the stack, [vdso]; a forked child's space keeps
 * those marks; a file truncated under a view: the read that meets the
 * SIGBUS is done as before, any other SIGBUS goes to the handler that
 * was there, which is back once the views are gone; and read in place
 * (pft_mem_view, the decoder's way), a guard nested inside (the
 * decoder's refill): the read past the end is void, not a SIGBUS.
 * (The traced runs: test_trace_smc.sh's filemap, trunc and truncrun.)
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "trace/trace_space.h"

#define PG 4096

static pid_t child;

static int start(void **state)
{
	(void)state;
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	return child > 0 ? 0 : -1;
}

static int stop(void **state)
{
	(void)state;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}

static int vm_page(pid_t pid, uint64_t pg, uint8_t *buf)
{
	struct iovec l = { buf, PG }, r = { (void *)pg, PG };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == PG ? 0 : -1;
}

/* the page at pg through a view, or NULL */
static const uint8_t *fview_page(struct pft_space *sp, uint64_t pg, unsigned gen)
{
	static uint8_t b[PG];

	return pft_fview_read(sp, pg, b, PG, gen) == PG ? b : NULL;
}

/* the code mappings of sp's maps compared page by page; returns the
 * pages read through a view (*libc: libc's among them) */
static size_t compare_all(struct pft_space *sp, unsigned gen, int *libc)
{
	static uint8_t buf[PG];
	size_t n = 0;

	*libc = 0;
	assert_int_equal(pft_maps_load(&sp->maps, sp->pid), 0);
	for (size_t i = 0; i < sp->maps.n; i++) {
		const struct pft_map m = sp->maps.v[i];
		for (uint64_t pg = m.lo; pg < m.hi; pg += PG) {
			const uint8_t *v = fview_page(sp, pg, gen);
			if (!v)
				continue;
			/* only code of files, never writable */
			assert_true(m.x && !m.w && !m.s && m.ino && m.path && m.path[0] == '/');
			assert_int_equal(vm_page(sp->pid, pg, buf), 0);
			if (memcmp(v, buf, PG)) {
				fail_msg("%s page %#llx: the view differs from process_vm_readv", m.path,
					 (unsigned long long)pg);
			}
			n++;
			if (strstr(m.path, "/libc.so"))
				*libc = 1;
		}
	}
	return n;
}

/* the first page of libc's code in sp's maps */
static const struct pft_map *libc_code(struct pft_space *sp)
{
	for (size_t i = 0; i < sp->maps.n; i++)
		if (sp->maps.v[i].x && sp->maps.v[i].path && strstr(sp->maps.v[i].path, "/libc.so"))
			return &sp->maps.v[i];
	return NULL;
}

static void test_same_bytes(void **state)
{
	struct pft_space *sp = pft_space_new(child, NULL);
	uint8_t a[3 * PG], b[3 * PG];
	const struct pft_map *m;
	int libc;
	size_t n;

	(void)state;
	assert_non_null(sp);
	/* off until the space is started (an attached one never is) */
	assert_int_equal(pft_maps_load(&sp->maps, child), 0);
	assert_null(fview_page(sp, libc_code(sp)->lo, 1));
	assert_int_equal(pft_fview_start(sp), 0);
	n = compare_all(sp, 1, &libc);
	print_message("pages read through views: %zu\n", n);
	assert_true(n > 16);
	assert_true(libc);
	assert_int_equal(sp->fv_pages, n);
	/* a read across the end of libc's code into what follows, as
	 * pft_mem_read gives it */
	m = libc_code(sp);
	{
		uint64_t at = m->hi - PG - 100;
		struct iovec l = { b, sizeof b }, r = { (void *)at, sizeof b };
		size_t got = pft_mem_read(sp, child, at, a, sizeof a);
		ssize_t want = process_vm_readv(child, &l, 1, &r, 1, 0);
		assert_true(want > 0);
		assert_int_equal(got, (size_t)want);
		assert_memory_equal(a, b, got);
	}
	pft_space_put(sp);
}

static void test_not_the_file(void **state)
{
	struct pft_space *sp = pft_space_new(child, NULL), *fk;
	const struct pft_map *m;
	uint64_t lo, stack = 0, vdso = 0, heap = 0;
	int libc;

	(void)state;
	assert_non_null(sp);
	assert_int_equal(pft_fview_start(sp), 0);
	m = libc_code(sp);
	assert_non_null(m);
	lo = m->lo;
	assert_non_null(fview_page(sp, lo, 1));
	assert_non_null(fview_page(sp, lo + PG, 1));
	assert_non_null(fview_page(sp, lo + 2 * PG, 1));
	/* made writable (a text relocation), even if read-only again */
	pft_fview_protect(sp, lo, lo + PG, PROT_READ | PROT_WRITE);
	pft_fview_protect(sp, lo, lo + PG, PROT_READ | PROT_EXEC);
	/* written through /proc/PID/mem */
	pft_fview_written(sp, lo + PG + 10, lo + PG + 11);
	/* changed mappings: not before the maps are read again */
	assert_null(fview_page(sp, lo + 2 * PG, 2));
	assert_int_equal(pft_maps_load(&sp->maps, child), 0);
	assert_null(fview_page(sp, lo, 3));
	assert_null(fview_page(sp, lo + PG, 3));
	assert_non_null(fview_page(sp, lo + 2 * PG, 3));
	/* a forked child's space keeps the marks */
	fk = pft_space_fork(sp, child, NULL);
	assert_non_null(fk);
	assert_int_equal(pft_maps_load(&fk->maps, child), 0);
	assert_null(fview_page(fk, lo, 4));
	assert_null(fview_page(fk, lo + PG, 4));
	assert_non_null(fview_page(fk, lo + 2 * PG, 4));
	compare_all(fk, 4, &libc);
	assert_true(libc);
	pft_space_put(fk);
	/* mapped afresh writable: not; unmapped and mapped read-only: the
	 * file's again */
	pft_fview_mapped(sp, lo + 2 * PG, lo + 3 * PG, PROT_READ | PROT_WRITE | PROT_EXEC);
	assert_int_equal(pft_maps_load(&sp->maps, child), 0);
	assert_null(fview_page(sp, lo + 2 * PG, 5));
	pft_fview_mapped(sp, lo, lo + 3 * PG, -1);
	pft_fview_mapped(sp, lo, lo + 3 * PG, PROT_READ | PROT_EXEC);
	assert_int_equal(pft_maps_load(&sp->maps, child), 0);
	assert_non_null(fview_page(sp, lo, 6));
	assert_non_null(fview_page(sp, lo + 2 * PG, 6));
	/* anonymous memory, the stack, [vdso] */
	for (size_t i = 0; i < sp->maps.n; i++) {
		const struct pft_map *e = &sp->maps.v[i];
		if (e->path && !strcmp(e->path, "[stack]"))
			stack = e->lo;
		else if (e->path && !strcmp(e->path, "[vdso]"))
			vdso = e->lo;
		else if (e->path && !strcmp(e->path, "[heap]"))
			heap = e->lo;
	}
	assert_true(stack);
	assert_null(fview_page(sp, stack, 6));
	if (vdso) /* (none under valgrind) */
		assert_null(fview_page(sp, vdso, 6));
	if (heap)
		assert_null(fview_page(sp, heap, 6));
	/* once off, never again */
	pft_fview_off(sp);
	assert_null(fview_page(sp, lo + 2 * PG, 7));
	pft_space_put(sp);
}

static sigjmp_buf bus_jmp;
static volatile sig_atomic_t bus_seen;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	bus_seen++;
	siglongjmp(bus_jmp, 1);
}

/* Two pages of a temporary file (the bytes in `file`), mapped as code
 * in a child that holds them until the test ends; the test's SIGBUS
 * handler (on_bus) installed.  Returns the child, the mapping's start
 * in *lo; end_mapped() ends both. */
struct mapped {
	char fn[64];
	int fd, ready[2], hold[2];
	pid_t c;
};

static uint64_t map_in_child(struct mapped *mp, uint8_t *file)
{
	struct sigaction sa;
	void *p;

	snprintf(mp->fn, sizeof mp->fn, "/tmp/test_trace_codemap.XXXXXX");
	mp->fd = mkstemp(mp->fn);
	assert_true(mp->fd >= 0);
	for (size_t i = 0; i < 2 * PG; i++)
		file[i] = (uint8_t)(i * 7 + i / PG);
	assert_int_equal(write(mp->fd, file, 2 * PG), 2 * PG);
	assert_int_equal(pipe(mp->ready), 0);
	assert_int_equal(pipe(mp->hold), 0);
	/* until we end (a failed check included) */
	if ((mp->c = fork()) == 0) {
		char x;
		p = mmap(NULL, 2 * PG, PROT_READ | PROT_EXEC, MAP_PRIVATE, mp->fd, 0);
		close(mp->hold[1]);
		if (p == MAP_FAILED || write(mp->ready[1], &p, sizeof p) != sizeof p)
			_exit(1);
		_exit(read(mp->hold[0], &x, 1) < 0);
	}
	close(mp->hold[0]);
	assert_true(mp->c > 0);
	assert_int_equal(read(mp->ready[0], &p, sizeof p), sizeof p);
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_bus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGBUS, &sa, NULL), 0);
	bus_seen = 0;
	return (uint64_t)(uintptr_t)p;
}

static void end_mapped(struct mapped *mp)
{
	signal(SIGBUS, SIG_DFL);
	kill(mp->c, SIGKILL);
	waitpid(mp->c, NULL, 0);
	close(mp->fd);
	unlink(mp->fn); /* (not before: a deleted file gets no view) */
	close(mp->ready[0]);
	close(mp->ready[1]);
	close(mp->hold[1]);
}

static void test_truncated(void **state)
{
	uint8_t file[2 * PG], got[PG];
	struct sigaction now;
	struct pft_space *sp;
	volatile uint8_t *own;
	struct mapped mp;
	uint64_t lo = map_in_child(&mp, file);
	int fd = mp.fd;
	pid_t c = mp.c;

	(void)state;
	sp = pft_space_new(c, NULL);
	assert_non_null(sp);
	assert_int_equal(pft_fview_start(sp), 0);
	assert_non_null(fview_page(sp, lo + PG, 1));
	assert_memory_equal(fview_page(sp, lo + PG, 1), file + PG, PG);
	/* the guard is there while a view is open */
	assert_int_equal(sigaction(SIGBUS, NULL, &now), 0);
	assert_true(now.sa_sigaction != on_bus);

	/* cut to one page under the view (the same event: no check of the
	 * file would see it) */
	assert_int_equal(ftruncate(fd, PG), 0);
	assert_null(fview_page(sp, lo + PG, 1));
	assert_int_equal(sp->fv_bus, 1);
	assert_null(fview_page(sp, lo, 1)); /* that view no more */
	assert_int_equal(pft_mem_read(sp, c, lo, got, PG), PG);
	assert_memory_equal(got, file, PG);
	assert_int_equal(pft_mem_read(sp, c, lo + PG, got, PG), 0);
	assert_int_equal(bus_seen, 0);

	/* a SIGBUS of ours elsewhere: our handler gets it */
	own = mmap(NULL, 2 * PG, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(own != MAP_FAILED);
	if (!sigsetjmp(bus_jmp, 1))
		(void)own[PG];
	assert_int_equal(bus_seen, 1);

	/* the views gone: our handler is back */
	pft_space_put(sp);
	assert_int_equal(sigaction(SIGBUS, NULL, &now), 0);
	assert_true(now.sa_sigaction == on_bus);
	if (!sigsetjmp(bus_jmp, 1))
		(void)own[PG];
	assert_int_equal(bus_seen, 2);

	munmap((void *)own, 2 * PG);
	end_mapped(&mp);
}

/* a read in place under the guard (pft_mem_view, as the decoder reads):
 * the file cut to one page by fn itself, fn then reads the first page
 * (a guard of its own inside this one) and its own bytes, past the end */
struct inplace {
	struct pft_space *sp;
	pid_t pid;
	int fd;
	uint64_t lo;
	const uint8_t *file;
	int cut, inner_ok, done;
	unsigned sum;
};

static void read_in_place(void *arg, const uint8_t *p, size_t n)
{
	struct inplace *a = arg;
	uint8_t first[16];

	assert_int_equal(n, PG);
	assert_memory_equal(p, a->file + PG, PG);
	if (a->cut) {
		assert_int_equal(ftruncate(a->fd, PG), 0);
		a->inner_ok = pft_mem_read(a->sp, a->pid, a->lo, first, sizeof first) == sizeof first &&
			      !memcmp(first, a->file, sizeof first);
	}
	for (size_t i = 0; i < n; i++)
		a->sum += p[i];
	a->done = 1;
}

static void test_truncated_in_place(void **state)
{
	uint8_t file[2 * PG];
	struct inplace a = { 0 };
	struct mapped mp;
	pid_t c;

	(void)state;
	/* a SIGBUS the guard misses: the test's handler, the test fails */
	a.lo = map_in_child(&mp, file);
	c = mp.c;
	a.fd = mp.fd;
	a.sp = pft_space_new(c, NULL);
	assert_non_null(a.sp);
	assert_int_equal(pft_fview_start(a.sp), 0);
	a.pid = c;
	a.file = file;
	/* whole: fn runs on the view */
	assert_int_equal(pft_mem_view(a.sp, a.lo + PG, read_in_place, &a), 1);
	assert_true(a.done);
	/* cut inside fn: its read past the end is void, not a crash */
	a.cut = 1;
	a.done = 0;
	if (!sigsetjmp(bus_jmp, 1))
		assert_int_equal(pft_mem_view(a.sp, a.lo + PG, read_in_place, &a), 0);
	assert_int_equal(bus_seen, 0);
	assert_true(a.inner_ok);
	assert_false(a.done);
	assert_int_equal(a.sp->fv_bus, 1);
	/* the view not used again */
	a.cut = 0;
	assert_int_equal(pft_mem_view(a.sp, a.lo, read_in_place, &a), 0);
	assert_false(a.done);

	pft_space_put(a.sp);
	end_mapped(&mp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bytes),
		cmocka_unit_test(test_not_the_file),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_truncated_in_place),
	};
	return cmocka_run_group_tests(tests, start, stop);
}
