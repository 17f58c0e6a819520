/*
 * calib_daemon.c: a program that leaves a daemon behind.
 *
 *   calib_daemon FIFO OUT
 *
 * does 1000 multiplies (1000 FLOPs), forks a child that leaves the
 * session (setsid), and exits.  The child waits for a line on FIFO, then
 * computes 1,000,000 multiply-adds and writes the result to OUT: a tracer
 * must not wait for it, and must leave it able to run on its own.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	volatile double a = 1;
	if (argc != 3)
		return 2;
	for (int i = 0; i < 1000; i++)
		a = a * 1.5;
	if (fork() == 0) {
		char c;
		setsid();
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
