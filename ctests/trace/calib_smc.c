/*
 * calib_smc.c: code that changes while it stays executable, as JITs and
 * self-modifying programs change it (the tracer write-protects pages it
 * holds decoded code of, trace_wprot.c).  Every mode prints what it did
 * on stdout and exits 0 when the program saw what it would see natively.
 *
 *   inplace N   an RWX page: a loop of K vaddpd ymm per iteration, run N
 *               times, K = 1..5 rewritten in place at the same address
 *               (no system call between): 15 N vaddpd ymm in all (5 N
 *               of them with K = 5: the classic 1.0M-instead-of-5.0M case)
 *   wx N        mmap RW, write, mprotect RX, run; mprotect RW, rewrite
 *               the loop in place into vmulpd, mprotect RX, run: N vaddpd
 *               and N vmulpd ymm
 *   threads N   an RWX page; a second thread runs the loop (N runs of one
 *               vaddpd) while the first rewrites it, alternately vaddpd
 *               and vmulpd, 6 rounds: 3 N vaddpd and 3 N vmulpd ymm
 *   writers N   an RWX page of code run, then written by two threads at
 *               once (their faults come together), 40 rounds: 40 N vaddpd
 *   fork N      an RWX page run, then a forked child rewrites it in place
 *               and runs it; the parent runs its own (unchanged) copy
 *               again: 2 N vaddpd, N vmulpd ymm
 *   detach N F  an RWX page run, then a forked child outlives the
 *               program (the tracer lets it go); a second later it
 *               rewrites the page in place, runs it and writes "ok" to F
 *               (its sleep was whole)
 *   selfpage N  code and data on one RWX page: the loop stores to the
 *               page each iteration (the tracer leaves such a page
 *               writable): N vaddpd ymm
 *   segv N      the program's own SIGSEGV handler catches a write to a
 *               read-only page of its own, while an RWX page of code is
 *               write-protected by the tracer and rewritten; then the
 *               program makes that code page read-only itself and writes
 *               it: its handler runs for both of its faults, at the right
 *               addresses; 2 N vaddpd, N vmulpd ymm
 *   text N      code of the program file itself (a loop on a page of
 *               its own in .text): run, made writable, rewritten in
 *               place into vmulpd, made executable again, run: N vaddpd
 *               and N vmulpd ymm (the file's bytes differ from the
 *               code run: the tracer's hint store must not matter)
 *   filemap N   code in a file of its own (in $TMPDIR), mapped private
 *               and read-only: run (vaddpd ymm); made writable, rewritten
 *               (vaddsd), made executable, run; mapped writable afresh,
 *               rewritten (vaddsd), made executable, run; mapped
 *               read-only afresh, run (vaddpd ymm, the file's); rewritten
 *               through /proc/self/mem (vaddsd), run: 2 N vaddpd ymm and
 *               3 N vaddsd (the tracer reads code from its own mapping of
 *               a file only where the program's bytes are the file's:
 *               trace_codemap.c)
 *   trunc N     code in a file of two pages, mapped private read-only:
 *               a loop run, the file truncated to one page (its second
 *               page would raise SIGBUS), a second loop that may branch
 *               to the second page (never taken) run: 2 N vaddpd ymm
 *   truncrun N  code in a file of two pages, a loop on each, mapped
 *               private read-only: the first page's loop run, the file
 *               cut to one page, the second page's loop called (a SIGBUS
 *               natively, caught: its address printed), the first's run
 *               again: 2 N vaddpd ymm (the tracer decodes that second
 *               page in place from its own view of the file, cut under
 *               it since: its SIGBUS guarded, trace_codemap.c)
 *   truncrerun N  the same, the second page's loop also run N times
 *               before the cut (its copies in the tracer's cache must
 *               not run after): 3 N vaddpd ymm
 *   truncdie N  as truncrun, no handler: the program dies of the SIGBUS
 *               after N vaddpd ymm
 *   truncpath N, truncopen N, truncfork N  as truncrerun, the file cut
 *               by truncate (a path relative to the working directory),
 *               by an open with O_TRUNC and its first page written back,
 *               or by a forked child's ftruncate (the tracer drops the
 *               parent's copies too): 3 N vaddpd ymm
 *   trunchole N  as truncrerun, the second page punched out
 *               (fallocate) and written back as a vaddsd loop, run
 *               (no SIGBUS), then the first: 3 N vaddpd ymm, N vaddsd
 *   trunccreat N, truncopenat2 N  as truncopen, the file cut by creat,
 *               or by openat2 with O_TRUNC (exit 77 without openat2):
 *               3 N vaddpd ymm
 *   trunczero N  as trunchole, the second page zeroed (fallocate
 *               FALLOC_FL_ZERO_RANGE; exit 77 where the file system
 *               cannot): 3 N vaddpd ymm, N vaddsd
 *   trunccollapse N  the second page's loop a vaddsd one, each page's
 *               loop run, the first page collapsed away (fallocate: the
 *               second moves to offset 0), the second page called
 *               (SIGBUS), the first run (now vaddsd): N vaddpd ymm, 2 N
 *               vaddsd (exit 77 where the file system cannot collapse)
 *   truncinsert N  the second page's loop a vaddsd one, each page's loop
 *               run, a page inserted at offset 0 (fallocate
 *               FALLOC_FL_INSERT_RANGE: the first page's vaddpd loop
 *               moves to the second page, a hole before it), the second
 *               page run (now vaddpd), the first page written as a loop
 *               of two vaddpd and run: 4 N vaddpd ymm, N vaddsd (exit
 *               77 where the file system cannot insert)
 * (after the cut or change the tracer's copies of that code must not
 * run: trace_sys.c drops them)
 *   hotdata N   code and data on one RWX page, the data written from
 *               elsewhere 100 times with the code run between writes (the
 *               tracer leaves such a page writable after 64 faults), then
 *               the code called N times: 100 + N vaddpd ymm (the page is
 *               guarded again once its code has run stepped a while)
 *   churn N     a JIT that drops its code all the time: 16384 functions
 *               of one vaddpd (odd rounds: vmulpd) ymm on 64 pages made
 *               executable, each called twice through a pointer, the
 *               pages made writable again (their copies and lookup
 *               entries dropped), N rounds; a second thread calls an
 *               integer function through a pointer all the while and
 *               checks its results (lookups while the table is built
 *               anew): 32768 vaddpd and vmulpd ymm a round
 *   sigremap N  two files of code, a loop of one vaddpd ymm and one of
 *               two, mapped read-only in turn (the kernel gives the
 *               same address back), run 4 times and unmapped, N rounds,
 *               with SIGALRM every 100 us: a signal that comes as the
 *               munmap returns must not lose its exit's work (the old
 *               code's copies dropped): 12 N vaddpd ymm
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <stdint.h>

enum { ADD = 0x58, MUL = 0x59 };
enum { SD = 0xeb }; /* the VEX byte that makes vaddpd ymm a vaddsd xmm */
typedef void (*fn)(long);

/* K x vOPpd %ymm1,%ymm2,%ymm0; sub $1, %rdi; jnz top; ret (sub, which
 * sets CF: the tracer's copy is unrolled, trace_gen.c; selfpage's loop
 * keeps a dec) */
static size_t emit(unsigned char *p, int k, int op)
{
	size_t n = 0;

	for (int i = 0; i < k; i++) {
		const unsigned char v[] = { 0xc5, 0xed, (unsigned char)op, 0xc1 };
		memcpy(p + n, v, 4);
		n += 4;
	}
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xef, p[n++] = 1; /* sub $1,%rdi */
	p[n++] = 0x75, p[n] = (unsigned char)-(int)(n + 1);	 /* jnz top */
	n++;
	p[n++] = 0xc3;
	return n;
}

static unsigned char *rwx(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(3);
	}
	return p;
}

static int inplace(long n)
{
	unsigned char *p = rwx();

	for (int k = 1; k <= 5; k++) {
		emit(p, k, ADD);
		((fn)p)(n);
	}
	printf("inplace: 5 versions\n");
	return 0;
}

/* the code page at p made writable, byte `at` rewritten, made
 * executable again (W^X) */
static int rewrite(unsigned char *p, size_t at, unsigned char v)
{
	if (mprotect(p, 4096, PROT_READ | PROT_WRITE))
		return -1;
	p[at] = v;
	return mprotect(p, 4096, PROT_READ | PROT_EXEC);
}

static int wx(long n)
{
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 3;
	emit(p, 1, ADD);
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 3;
	((fn)p)(n);
	if (rewrite(p, 2, MUL))
		return 3;
	((fn)p)(n);
	printf("wx: 2 versions\n");
	return 0;
}

static unsigned char *tpage;
static long tn;
static atomic_int turn; /* even: the runner runs; odd: the writer writes */

static void *runner(void *arg)
{
	(void)arg;
	for (int round = 0; round < 6; round++) {
		while (atomic_load(&turn) != 2 * round)
			;
		((fn)tpage)(tn);
		atomic_store(&turn, 2 * round + 1);
	}
	return NULL;
}

static int threads(long n)
{
	pthread_t th;

	tpage = rwx();
	tn = n;
	emit(tpage, 1, ADD);
	if (pthread_create(&th, NULL, runner, NULL))
		return 3;
	for (int round = 0; round < 6; round++) {
		while (atomic_load(&turn) != 2 * round + 1)
			;
		/* the runner spins meanwhile, on another page */
		tpage[2] = round % 2 ? ADD : MUL;
		atomic_store(&turn, 2 * round + 2);
	}
	pthread_join(th, NULL);
	printf("threads: 6 rounds\n");
	return 0;
}

static int forked(long n, const char *file)
{
	unsigned char *p = rwx();
	pid_t pid;
	int st;

	emit(p, 1, ADD);
	((fn)p)(n); /* guarded by the tracer from here on */
	fflush(stdout);
	if ((pid = fork()) < 0)
		return 3;
	if (pid == 0) {
		/* the program ends meanwhile; the sleep is not cut short */
		unsigned left = file ? sleep(1) : 0;
		p[2] = MUL;
		((fn)p)(n);
		if (file) {
			FILE *f = fopen(file, "w");
			if (f) {
				fputs(left ? "sleep cut short\n" : "ok\n", f);
				fclose(f);
			}
		}
		_exit(0);
	}
	if (file)
		return 0;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	((fn)p)(n);
	printf("fork: child rewrote its copy\n");
	return p[2] == ADD ? 0 : 1;
}

static pthread_barrier_t bar;

static void *writer(void *arg)
{
	for (int round = 0; round < 40; round++) {
		pthread_barrier_wait(&bar);
		((volatile unsigned char *)arg)[2056] = (unsigned char)round;
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

static int writers(long n)
{
	unsigned char *p = rwx();
	pthread_t th;

	emit(p, 1, ADD);
	if (pthread_barrier_init(&bar, NULL, 2) || pthread_create(&th, NULL, writer, p))
		return 3;
	for (int round = 0; round < 40; round++) {
		((fn)p)(n); /* the page is guarded again */
		pthread_barrier_wait(&bar);
		((volatile unsigned char *)p)[2048] = (unsigned char)round;
		pthread_barrier_wait(&bar);
	}
	pthread_join(th, NULL);
	printf("writers: 40 rounds\n");
	return 0;
}

static int selfpage(long n)
{
	unsigned char *p = rwx();
	/* top: vaddpd; incq 2048(%rip-relative data); dec %rdi; jnz top; ret */
	size_t at = 0;
	const unsigned char v[] = { 0xc5, 0xed, ADD, 0xc1 };
	int32_t d;

	memcpy(p, v, 4);
	at = 4;
	p[at++] = 0x48, p[at++] = 0xff, p[at++] = 0x05; /* incq disp32(%rip) */
	d = (int32_t)(2048 - (int32_t)(at + 4));
	memcpy(p + at, &d, 4);
	at += 4;
	p[at++] = 0x48, p[at++] = 0xff, p[at++] = 0xcf;
	p[at++] = 0x75, p[at] = (unsigned char)-(int)(at + 1);
	at++;
	p[at++] = 0xc3;
	((fn)p)(n);
	long got;
	memcpy(&got, p + 2048, sizeof got);
	printf("selfpage: %ld stores\n", got);
	return got == n ? 0 : 1;
}

static volatile void *fault_addr[2];
static volatile int nfaults;
static char *ro;

/* the program's own handler: records the fault, makes the page writable */
static void on_segv(int sig, siginfo_t *si, void *uc)
{
	char *pg = (char *)((unsigned long)si->si_addr & ~4095UL);

	(void)sig;
	(void)uc;
	if (nfaults < 2)
		fault_addr[nfaults] = si->si_addr;
	nfaults++;
	if (mprotect(pg, 4096, PROT_READ | PROT_WRITE | (pg == ro ? 0 : PROT_EXEC)))
		_exit(4);
}

static int segv(long n)
{
	struct sigaction sa;
	unsigned char *p = rwx();

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSEGV, &sa, NULL))
		return 3;
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		return 3;
	emit(p, 1, ADD);
	((fn)p)(n);  /* the code page is guarded now */
	ro[100] = 1; /* the program's own fault */
	p[2] = MUL;  /* the tracer's fault */
	((fn)p)(n);
	/* the program makes its code page read-only itself, then writes */
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 3;
	p[2] = ADD; /* the program's own fault again */
	((fn)p)(n);
	int good = nfaults == 2 && fault_addr[0] == ro + 100 && fault_addr[1] == p + 2;
	printf("segv: handler %s\n", good ? "ran twice at the right addresses" : "did not see its faults");
	return good && ro[100] == 1 ? 0 : 1;
}

/* the loop emit(p, 1, ADD) writes, in the file's .text on a page of its
 * own (nothing else runs there while it is rewritten) */
__asm__(".text\n.p2align 12\n.globl smc_text\nsmc_text:\n"
	"1: vaddpd %ymm1, %ymm2, %ymm0\n dec %rdi\n jnz 1b\n ret\n.p2align 12\n");
void smc_text(long n);

static int text(long n)
{
	unsigned char *f = (unsigned char *)smc_text;
	void *pg = (void *)((unsigned long)f & ~4095UL);

	smc_text(n);
	if (mprotect(pg, 4096, PROT_READ | PROT_WRITE))
		return 3;
	f[2] = MUL;
	if (mprotect(pg, 4096, PROT_READ | PROT_EXEC))
		return 3;
	smc_text(n);
	printf("text: 2 versions\n");
	return 0;
}

static char code_fn[4096];

static void code_unlink(void)
{
	unlink(code_fn);
}

/* a new file in $TMPDIR (its name in fn) holding the n bytes of buf */
static int tmp_code(char *fn, size_t size, const void *buf, size_t n)
{
	const char *d = getenv("TMPDIR");
	int fd;

	snprintf(fn, size, "%s/calib_smc.XXXXXX", d && *d ? d : "/tmp");
	if ((fd = mkstemp(fn)) < 0) {
		perror("mkstemp");
		exit(3);
	}
	if (write(fd, buf, n) != (ssize_t)n) {
		perror("write");
		exit(3);
	}
	return fd;
}

/* a file of two pages in $TMPDIR (removed at exit: a file still there,
 * as a library's, not a deleted one): the loop at offset 0; at
 * 2048 `test %rsi,%rsi; jnz` to the second page (int3s), then the loop */
static int code_file(void)
{
	unsigned char buf[8192];
	int fd;

	memset(buf, 0xcc, sizeof buf);
	emit(buf, 1, ADD);
	{
		int32_t rel = 4096 + 16 - (2048 + 9);
		unsigned char *q = buf + 2048;
		q[0] = 0x48, q[1] = 0x85, q[2] = 0xf6; /* test %rsi,%rsi */
		q[3] = 0x0f, q[4] = 0x85;	       /* jnz rel32 */
		memcpy(q + 5, &rel, 4);
		emit(q + 9, 1, ADD);
	}
	fd = tmp_code(code_fn, sizeof code_fn, buf, sizeof buf);
	atexit(code_unlink);
	return fd;
}

static unsigned char *map_code(int fd, int prot)
{
	void *p = mmap(NULL, 8192, prot, MAP_PRIVATE, fd, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(3);
	}
	return p;
}

static int filemap(long n)
{
	int fd = code_file(), mem;
	unsigned char *p = map_code(fd, PROT_READ | PROT_EXEC), sd = SD;

	((fn)p)(n);
	if (rewrite(p, 1, SD))
		return 3;
	((fn)p)(n);
	munmap(p, 8192);
	p = map_code(fd, PROT_READ | PROT_WRITE);
	p[1] = SD;
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 3;
	((fn)p)(n);
	munmap(p, 8192);
	p = map_code(fd, PROT_READ | PROT_EXEC);
	((fn)p)(n);
	if ((mem = open("/proc/self/mem", O_RDWR)) < 0 || pwrite(mem, &sd, 1, (off_t)(uintptr_t)(p + 1)) != 1) {
		perror("/proc/self/mem");
		return 3;
	}
	close(mem);
	((fn)p)(n);
	printf("filemap: 5 runs\n");
	return 0;
}

static int trunc_run(long n)
{
	int fd = code_file();
	unsigned char *p = map_code(fd, PROT_READ | PROT_EXEC);

	((fn)p)(n);
	if (ftruncate(fd, 4096))
		return 3;
	((void (*)(long, long))(p + 2048))(n, 0);
	printf("trunc: 2 runs\n");
	return 0;
}

static sigjmp_buf cut_jmp;
static void *volatile cut_addr;

static void on_cut(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	cut_addr = si->si_addr;
	siglongjmp(cut_jmp, 1);
}

/* f(n) with a SIGBUS handler: where it met one, in cut_addr */
static void run_cut(fn f, long n)
{
	struct sigaction sa = { .sa_sigaction = on_cut, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	if (!sigsetjmp(cut_jmp, 1))
		f(n);
}

/* a loop on each of a file's two pages; the file cut to one page between
 * runs (rerun: the second page's loop run before too; die: no handler) */
static int trunc_code(long n, int rerun, int die)
{
	unsigned char buf[8192];
	unsigned char *p;
	int fd;

	memset(buf, 0xcc, sizeof buf);
	emit(buf, 1, ADD);
	emit(buf + 4096, 1, ADD);
	fd = tmp_code(code_fn, sizeof code_fn, buf, sizeof buf);
	atexit(code_unlink);
	p = map_code(fd, PROT_READ | PROT_EXEC);
	((fn)p)(n);
	if (rerun)
		((fn)(p + 4096))(n);
	if (ftruncate(fd, 4096))
		return 3;
	if (die) {
		printf("truncdie: cut\n");
		fflush(stdout);
		((fn)(p + 4096))(n);
		printf("truncdie: no SIGBUS\n");
		return 1;
	}
	run_cut((fn)(p + 4096), n);
	if (!cut_addr) {
		printf("trunc%srun: no SIGBUS\n", rerun ? "re" : "");
		return 1;
	}
	printf("trunc%srun: SIGBUS at +%ld\n", rerun ? "re" : "", (long)((unsigned char *)cut_addr - p));
	((fn)p)(n);
	return 0;
}

/* a loop on each of a file's two pages, both run, then the file cut or
 * changed by `how` (truncate by a relative path, O_TRUNC, a hole
 * punched, a range collapsed), the second page called under a SIGBUS
 * handler, then the first */
static int trunc_how(const char *mode, long n)
{
	unsigned char buf[8192], *p;
	char dir[4096], *base;
	int fd, fd2, rc = 0;

	memset(buf, 0xcc, sizeof buf);
	emit(buf, 1, ADD);
	emit(buf + 4096, 1, ADD);
	if (!strcmp(mode, "trunccollapse") || !strcmp(mode, "truncinsert"))
		buf[4096 + 1] = SD;
	fd = tmp_code(code_fn, sizeof code_fn, buf, sizeof buf);
	atexit(code_unlink);
	p = map_code(fd, PROT_READ | PROT_EXEC);
	((fn)p)(n);
	((fn)(p + 4096))(n);
	if (!strcmp(mode, "truncpath")) {
		snprintf(dir, sizeof dir, "%s", code_fn);
		base = strrchr(dir, '/');
		*base++ = 0;
		rc = chdir(dir) || truncate(base, 4096);
	} else if (!strcmp(mode, "truncfork")) { /* a child cuts it */
		pid_t c = fork();
		int st;
		if (c == 0)
			_exit(ftruncate(fd, 4096) ? 1 : 0);
		rc = c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st);
	} else if (!strcmp(mode, "truncopen")) {
		rc = (fd2 = open(code_fn, O_WRONLY | O_TRUNC)) < 0 || pwrite(fd2, buf, 4096, 0) != 4096;
	} else if (!strcmp(mode, "trunccreat")) {
		rc = (fd2 = creat(code_fn, 0600)) < 0 || pwrite(fd2, buf, 4096, 0) != 4096;
	} else if (!strcmp(mode, "truncopenat2")) {
		struct open_how how = { .flags = O_WRONLY | O_TRUNC };
		fd2 = (int)syscall(SYS_openat2, AT_FDCWD, code_fn, &how, sizeof how);
		if (fd2 < 0 && errno == ENOSYS) { /* Linux < 5.6, or refused */
			printf("%s: %s\n", mode, strerror(errno));
			return 77;
		}
		rc = fd2 < 0 || pwrite(fd2, buf, 4096, 0) != 4096;
	} else if (!strcmp(mode, "trunchole") || !strcmp(mode, "trunczero")) {
		int zero = !strcmp(mode, "trunczero");
		buf[4096 + 1] = SD;
		if (fallocate(fd, zero ? FALLOC_FL_ZERO_RANGE : FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096,
			      4096)) {
			printf("%s: %s\n", mode, strerror(errno));
			return errno == EOPNOTSUPP ? 77 : 3;
		}
		rc = pwrite(fd, buf + 4096, 4096, 4096) != 4096;
	} else if (fallocate(fd, !strcmp(mode, "truncinsert") ? FALLOC_FL_INSERT_RANGE : FALLOC_FL_COLLAPSE_RANGE, 0,
			     4096)) {
		printf("%s: %s\n", mode, strerror(errno));
		return errno == EOPNOTSUPP || errno == EINVAL ? 77 : 3;
	}
	if (rc) {
		perror(mode);
		return 3;
	}
	if (!strcmp(mode, "truncinsert")) { /* no SIGBUS: the code moved on */
		((fn)(p + 4096))(n);
		memset(buf, 0xcc, 4096); /* unlike any loop run before */
		emit(buf, 2, ADD);
		if (pwrite(fd, buf, 4096, 0) != 4096) {
			perror(mode);
			return 3;
		}
		((fn)p)(n);
		printf("%s: moved\n", mode);
		return 0;
	}
	run_cut((fn)(p + 4096), n);
	if (cut_addr)
		printf("%s: SIGBUS at +%ld\n", mode, (long)((unsigned char *)cut_addr - p));
	else
		printf("%s: no SIGBUS\n", mode);
	((fn)p)(n);
	return 0;
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* a file of one page holding emit(k, ADD), mapped and closed; its name gone */
static int loop_file(int k)
{
	char fn[4096];
	unsigned char buf[4096];
	int fd;

	memset(buf, 0xcc, sizeof buf);
	emit(buf, k, ADD);
	fd = tmp_code(fn, sizeof fn, buf, sizeof buf);
	unlink(fn);
	return fd;
}

static int sigremap(long n)
{
	int fd[2] = { loop_file(1), loop_file(2) };
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	long same = 0;
	void *last = NULL;

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (long i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd[k], 0);
			if (p == MAP_FAILED) {
				perror("mmap");
				return 3;
			}
			same += p == last;
			last = p;
			((fn)p)(4);
			munmap(p, 4096);
		}
	it = (struct itimerval){ 0 };
	setitimer(ITIMER_REAL, &it, NULL);
	/* (alarms and reuse vary from run to run: not printed) */
	fprintf(stderr, "sigremap: %ld alarms, %ld of %ld maps at the last one's address\n", (long)alarms, same, 2 * n);
	printf("sigremap: %ld rounds\n", n);
	return 0;
}

static int hotdata(long n)
{
	unsigned char *p = rwx();
	volatile unsigned char *data = p + 2048;

	emit(p, 1, ADD);
	for (int i = 0; i < 100; i++) {
		data[i] = (unsigned char)i;
		((fn)p)(1);
	}
	for (long i = 0; i < n; i++)
		((fn)p)(1);
	printf("hotdata: 100 writes, %ld calls\n", n);
	return 0;
}

enum { CH_PAGES = 64, CH_FN = 16 /* bytes a function */ };
static atomic_int churn_done;

static void *churn_helper(void *arg)
{
	long (*inc)(long) = (long (*)(long))arg;
	long s = 0, k = 0;

	while (!atomic_load(&churn_done) || k < 1000)
		s = inc(s), k++;
	return (void *)(intptr_t)(s == k);
}

static int churn(long rounds)
{
	/* lea 1(%rdi),%rax; ret */
	static const unsigned char inc[] = { 0x48, 0x8d, 0x47, 0x01, 0xc3 };
	size_t sz = CH_PAGES * 4096, nf = sz / CH_FN;
	unsigned char *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t th;
	void *ok;

	if (p == MAP_FAILED || q == MAP_FAILED)
		return 3;
	memcpy(q, inc, sizeof inc);
	if (mprotect(q, 4096, PROT_READ | PROT_EXEC) || pthread_create(&th, NULL, churn_helper, q))
		return 3;
	for (long r = 0; r < rounds; r++) {
		for (size_t f = 0; f < nf; f++) {
			/* vOPpd %ymm1,%ymm2,%ymm0; ret */
			const unsigned char v[] = { 0xc5, 0xed, r & 1 ? MUL : ADD, 0xc1, 0xc3 };
			memcpy(p + f * CH_FN, v, sizeof v);
		}
		if (mprotect(p, sz, PROT_READ | PROT_EXEC))
			return 3;
		for (int twice = 0; twice < 2; twice++)
			for (size_t f = 0; f < nf; f++)
				((fn)(p + f * CH_FN))(0);
		if (mprotect(p, sz, PROT_READ | PROT_WRITE))
			return 3;
	}
	atomic_store(&churn_done, 1);
	if (pthread_join(th, &ok) || !ok) {
		fprintf(stderr, "churn: the helper's calls went wrong\n");
		return 4;
	}
	printf("churn: %ld rounds of %zu functions\n", rounds, nf);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000;

	if (argc < 2 || n < 1) {
		fprintf(stderr,
			"usage: calib_smc inplace|wx|threads|writers|fork|selfpage|segv|text|filemap|trunc|truncrun|truncrerun|truncdie|truncpath|truncopen|truncfork|trunccreat|truncopenat2|trunchole|trunczero|trunccollapse|truncinsert|sigremap|churn|hotdata N, detach N FILE\n");
		return 2;
	}
	if (!strcmp(argv[1], "inplace"))
		return inplace(n);
	if (!strcmp(argv[1], "wx"))
		return wx(n);
	if (!strcmp(argv[1], "threads"))
		return threads(n);
	if (!strcmp(argv[1], "fork"))
		return forked(n, NULL);
	if (!strcmp(argv[1], "detach") && argc > 3)
		return forked(n, argv[3]);
	if (!strcmp(argv[1], "writers"))
		return writers(n);
	if (!strcmp(argv[1], "selfpage"))
		return selfpage(n);
	if (!strcmp(argv[1], "segv"))
		return segv(n);
	if (!strcmp(argv[1], "text"))
		return text(n);
	if (!strcmp(argv[1], "filemap"))
		return filemap(n);
	if (!strcmp(argv[1], "sigremap"))
		return sigremap(n);
	if (!strcmp(argv[1], "churn"))
		return churn(n);
	if (!strcmp(argv[1], "hotdata"))
		return hotdata(n);
	if (!strcmp(argv[1], "trunc"))
		return trunc_run(n);
	if (!strcmp(argv[1], "truncrun"))
		return trunc_code(n, 0, 0);
	if (!strcmp(argv[1], "truncrerun"))
		return trunc_code(n, 1, 0);
	if (!strcmp(argv[1], "truncdie"))
		return trunc_code(n, 0, 1);
	if (!strcmp(argv[1], "truncpath") || !strcmp(argv[1], "truncopen") || !strcmp(argv[1], "truncfork") ||
	    !strcmp(argv[1], "trunccreat") || !strcmp(argv[1], "truncopenat2") || !strcmp(argv[1], "trunchole") ||
	    !strcmp(argv[1], "trunczero") || !strcmp(argv[1], "trunccollapse") || !strcmp(argv[1], "truncinsert"))
		return trunc_how(argv[1], n);
	return 2;
}
