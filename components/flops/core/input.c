/*
 * Opening a file the user named (a formula table, a perf-stat file, a
 * topology): a regular file of bounded size, or an error naming it.
 *
 * The open never waits: the name is checked before it is opened, and
 * O_NONBLOCK makes open(2) return at once should it have become a FIFO
 * nobody writes (which would block every program in PAPI_library_init);
 * fstat on the descriptor decides what was opened.  The size cap turns
 * a sparse 2 GB file into one sentence instead of "out of memory".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pflops_internal.h"

static const char *kind_of(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO (named pipe)";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

static int check_stat(const char *path, const struct stat *st, const char *what, unsigned max_mib,
		      struct pflops_error *err)
{
	if (!S_ISREG(st->st_mode))
		return pfc_err(err, PFLOPS_EINVAL, "%s: %s, not a regular file; %s are read from regular files only%s",
			       path, kind_of(st->st_mode), what,
			       S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode)
				       ? " (save what the pipe carries to a file first)"
				       : "");
	if ((unsigned long long)st->st_size > (unsigned long long)max_mib << 20)
		return pfc_err(err, PFLOPS_EINVAL,
			       "%s: %lld bytes, over the %u MiB limit for %s; is this the right file?", path,
			       (long long)st->st_size, max_mib, what);
	return 0;
}

int pfc_input_check(const char *path, const char *what, unsigned max_mib, struct pflops_error *err)
{
	struct stat st;
	if (stat(path, &st))
		return pfc_err(err, PFLOPS_ESYS, "%s: cannot open: %s", path, strerror(errno));
	return check_stat(path, &st, what, max_mib, err);
}

FILE *pfc_input_open(const char *path, const char *what, unsigned max_mib, struct pflops_error *err)
{
	/* by name first: a device is never opened (opening some acts: a tape
	 * rewinds); then on the descriptor, in case the name changed between */
	if (pfc_input_check(path, what, max_mib, err))
		return NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		pfc_err(err, PFLOPS_ESYS, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	FILE *f = NULL;
	if (fstat(fd, &st))
		pfc_err(err, PFLOPS_ESYS, "%s: cannot open: %s", path, strerror(errno));
	else if (!check_stat(path, &st, what, max_mib, err) &&
		 /* a regular file never blocks, but reads stay plain ones */
		 (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) || !(f = fdopen(fd, "r"))))
		pfc_err(err, PFLOPS_ESYS, "%s: cannot open: %s", path, strerror(errno));
	if (!f)
		close(fd);
	return f;
}

int pfc_input_too_big(const char *path, const char *what, unsigned max_mib, unsigned long long bytes,
		      struct pflops_error *err)
{
	if (bytes <= (unsigned long long)max_mib << 20)
		return 0;
	return pfc_err(err, PFLOPS_EINVAL,
		       "%s: over the %u MiB limit for %s (it grew while read); is this the right file?", path, max_mib,
		       what);
}
