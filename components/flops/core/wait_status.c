/*
 * wait_status.c: a program's wait status in words, for every source's
 * report (the tracer, the counters, the helper of the component).
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include "pflops_trace.h"

void pft_status_str(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
			 WCOREDUMP(status) ? ", core dumped" : "");
	else
		snprintf(buf, len, "wait status 0x%x", (unsigned)status);
}
