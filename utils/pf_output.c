/* Checked output for the tools (pf_output.h). */
#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pf_output.h"

static const char *tool = "papi-flops";
static int fail_status = 1;

/* errno of a write that failed before the close: stdio keeps none, so
 * errno as it stands is taken only when it is one a write sets */
static int write_errno(int e)
{
	return e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO || e == EPIPE || e == EROFS ? e : 0;
}

int pf_output_close(FILE *f, const char *name)
{
	int pending = __fpending(f) != 0, earlier = ferror(f) != 0, failed;
	int before = write_errno(errno);
	errno = 0;
	if (f == stderr)
		failed = fflush(f) != 0;
	else
		failed = fclose(f) != 0;
	/* nothing left to write to a descriptor that was never open: fine */
	if (!earlier && (!failed || (!pending && errno == EBADF)))
		return 0;
	int e = failed ? errno : before;
	fprintf(stderr, "%s: write error: %s%s%s\n", tool, name, e ? ": " : "", e ? strerror(e) : "");
	return -1;
}

static void check_stdout(void)
{
	if (pf_output_close(stdout, "standard output"))
		_exit(fail_status); /* from an atexit handler: no second exit */
}

void pf_output_init(const char *name, int status)
{
	tool = name;
	fail_status = status;
	atexit(check_stdout);
}
