/*
 * calib_entryr.c: a library replaced on disk while the program runs.
 *
 *   calib_entryr LIB NEW
 *
 * maps LIB (as a loader would: read and execute, from offset 0), then
 * renames NEW over LIB, then dlopens libm (the loader reports the change:
 * a tracer looks at the mappings again and finds LIB's, whose file is
 * now another one).  Prints "done" and exits 0; calls nothing in LIB.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct stat st;
	int fd;

	if (argc != 3 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st))
		return 2;
	if (mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		return 2;
	close(fd);
	if (rename(argv[2], argv[1]) || !dlopen("libm.so.6", RTLD_NOW))
		return 2;
	printf("done\n");
	return 0;
}
