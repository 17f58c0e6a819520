/*
 * calib_daemon.c: a program that leaves a daemon behind.
 *
 *   calib_daemon FIFO OUT [spin]
 *
 * does 1000 multiplies (1000 FLOPs), forks a child that leaves the
 * session (setsid), and exits.  The child waits for a line on FIFO, then
 * computes 1,000,000 multiply-adds and writes the result to OUT: a tracer
 * must not wait for it, and must leave it able to run on its own.
 * spin: the child first runs a loop on a writable and executable page
 * for 0.3 s (a tracer stops it at every block there: it is most likely
 * at an int3 when the tracer lets it go).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void spin(double secs)
{
	/* dec %rdi; jnz .-3; ret */
	static const unsigned char code[] = { 0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3 };
	struct timespec t0, t;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	memcpy(p, code, sizeof code);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		((void (*)(long))p)(3);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < secs);
}

int main(int argc, char **argv)
{
	volatile double a = 1;
	if (argc != 3 && argc != 4)
		return 2;
	for (int i = 0; i < 1000; i++)
		a = a * 1.5;
	if (fork() == 0) {
		char c;
		setsid();
		if (argc == 4)
			spin(0.3);
		int fd = open(argv[1], O_RDONLY);
		if (fd < 0 || read(fd, &c, 1) != 1)
			return 1;
		volatile double x = 1;
		for (int i = 0; i < 1000000; i++)
			x = x * 1.0000001 + 1e-9;
		FILE *f = fopen(argv[2], "w");
		if (!f)
			return 1;
		fprintf(f, "%.6f\n", (double)x);
		return fclose(f) != 0;
	}
	return 0;
}
