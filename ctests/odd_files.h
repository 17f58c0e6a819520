/* The files every input reader must refuse (components/flops/core/input.c),
 * for a test's fails(PATH, SAYS): a FIFO nobody writes (under an alarm: an
 * open that waits fails the test instead of hanging it), a directory,
 * /dev/zero, and a sparse file one byte over the reader's cap.  `what`
 * names the kind as the error does ("formula tables"). */
#ifndef ODD_FILES_H
#define ODD_FILES_H
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static void odd_files_refused(void (*fails)(const char *path, const char *says), const char *what, unsigned cap_mib)
{
	char dir[] = "/tmp/pflops_oddXXXXXX", path[64], says[200];
	long long big = ((long long)cap_mib << 20) + 1;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(says, sizeof(says),
		 "/fifo: a FIFO (named pipe), not a regular file; %s are read from regular files only", what);
	alarm(20);
	fails(path, says);
	alarm(0);
	unlink(path);
	fails(dir, ": a directory, not a regular file");
	fails("/dev/zero", "/dev/zero: a character device, not a regular file");
	snprintf(path, sizeof(path), "%s/big", dir);
	int fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0 && ftruncate(fd, big) == 0);
	close(fd);
	snprintf(says, sizeof(says), "/big: %lld bytes, over the %u MiB limit for %s", big, cap_mib, what);
	fails(path, says);
	unlink(path);
	rmdir(dir);
}
#endif
