/*
 * tp_alias.c MODE: code changed other than by a store to the page it
 * runs from, as JITs do; prints what ran, exit 0 when it was the new
 * code each time.  A function is called 3 times as v1 (one vaddpd a
 * turn, returns 1), rewritten to v2 (two vaddpd a turn, returns 2) and
 * called 3 times again: DP_OPS 3 * 4000 + 3 * 8000 = 36000.
 *
 *   memfd    a memfd mapped read-write at one address and read-execute
 *            at another (W^X double mapping): rewritten through the
 *            writable view
 *   late     the same, the writable view mapped only after v1 ran
 *   pwrite   an anonymous read-execute page rewritten with pwrite on
 *            /proc/self/mem
 *   write    the same with lseek and write
 *   vmwrite  an RWX page rewritten with process_vm_writev on itself
 *   read     an RWX page whose code ran reads back as written (no int3
 *            of the tracer's: JITs read their call instructions to
 *            patch them), then is rewritten in place
 *   maps     an RWX page whose code ran: /proc/self/maps shows it
 *            read-write-execute, in one mapping with its neighbours
 *            (prints its line's permissions and size in pages), then
 *            rewritten in place
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define PG 4096
#define N 1000

static const unsigned char v1[] = { 0x48, 0x89, 0xf9, 0xc5, 0xed, 0x58, 0xc1, 0x48, 0xff,
				    0xc9, 0x75, 0xf7, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3 };
static const unsigned char v2[] = { 0x48, 0x89, 0xf9, 0xc5, 0xed, 0x58, 0xc1, 0xc5, 0xed, 0x58, 0xc1,
				    0x48, 0xff, 0xc9, 0x75, 0xf3, 0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3 };

typedef int (*fn_t)(long);

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* calls f 3 times; prints and returns the sum of what it returned */
static int run3(fn_t f)
{
	int s = 0;

	for (int i = 0; i < 3; i++) {
		int v = f(N);
		printf(" %d", v);
		s += v;
	}
	return s;
}

/* the line of /proc/self/maps holding addr: its permissions and pages */
static void maps_line(void *addr)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	char line[512], perm[8];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		die("/proc/self/maps");
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 && a >= lo && a < hi)
			printf(" maps %s %lu pages", perm, (hi - lo) / PG);
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "memfd";
	unsigned char *x, *w = NULL;
	int fd = -1, s;

	printf("%s:", mode);
	if (!strcmp(mode, "memfd") || !strcmp(mode, "late")) {
		if ((fd = memfd_create("tp_alias", MFD_CLOEXEC)) < 0 || ftruncate(fd, 2 * PG))
			die("memfd_create");
		if (pwrite(fd, v1, sizeof v1, PG) != (ssize_t)sizeof v1)
			die("pwrite");
		if ((x = mmap(NULL, 2 * PG, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0)) == MAP_FAILED)
			die("mmap rx");
		x += PG;
		if (!strcmp(mode, "memfd") &&
		    (w = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
			die("mmap rw");
		s = run3((fn_t)x);
		if (!w && (w = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
			die("mmap rw");
		memcpy(w + PG, v2, sizeof v2);
	} else if (!strcmp(mode, "pwrite") || !strcmp(mode, "write")) {
		if ((x = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
			die("mmap");
		x += PG;
		memcpy(x, v1, sizeof v1);
		if (mprotect(x - PG, 3 * PG, PROT_READ | PROT_EXEC))
			die("mprotect");
		s = run3((fn_t)x);
		if ((fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC)) < 0)
			die("/proc/self/mem");
		if (mode[0] == 'p') {
			if (pwrite(fd, v2, sizeof v2, (off_t)(unsigned long)x) != (ssize_t)sizeof v2)
				die("pwrite /proc/self/mem");
		} else if (lseek(fd, (off_t)(unsigned long)x, SEEK_SET) < 0 ||
			   write(fd, v2, sizeof v2) != (ssize_t)sizeof v2) {
			die("write /proc/self/mem");
		}
	} else if (!strcmp(mode, "vmwrite") || !strcmp(mode, "maps") || !strcmp(mode, "read")) {
		x = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (x == MAP_FAILED)
			die("mmap rwx");
		x += PG;
		memcpy(x, v1, sizeof v1);
		s = run3((fn_t)x);
		if (mode[0] == 'm') {
			maps_line(x);
			memcpy(x, v2, sizeof v2);
		} else if (mode[0] == 'r') {
			printf(" code reads back %s", memcmp(x, v1, sizeof v1) ? "changed" : "as written");
			memcpy(x, v2, sizeof v2);
		} else {
			struct iovec l = { (void *)v2, sizeof v2 }, r = { x, sizeof v2 };
			if (process_vm_writev(getpid(), &l, 1, &r, 1, 0) != (ssize_t)sizeof v2)
				die("process_vm_writev");
		}
	} else {
		fprintf(stderr, "tp_alias: unknown mode %s\n", mode);
		return 2;
	}
	s += run3((fn_t)x);
	printf("\n");
	return s == 9 ? 0 : 1;
}
