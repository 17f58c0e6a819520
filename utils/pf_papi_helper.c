/*
 * papi_flops_run --pid PID --papi-fd SOCK,MEMFD: the helper the flops
 * component starts for PAPI_FLOPS_SOURCE=trace (components/flops/flops.c).
 * It traces every thread of PID, publishing per-thread counts in the
 * shared memory MEMFD, writes 'r' (or 'e') on SOCK once counting runs,
 * and detaches when SOCK gives a byte or ends (PAPI_shutdown, exec, the
 * process gone) or when the process ends.  No report: the process reads
 * its counts itself.  Not for people: the option is not in --help.
 */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "papi_flops.h"
#include "pflops_trace.h"
#include "pflops_pub.h"
#include "pf_papi_helper.h"
#include "pf_signal.h"
#include "pf_version.h"

/* tell the component it failed (it reads the reason from the memory) */
static int refuse(int sock)
{
	ssize_t n = write(sock, "e", 1);
	(void)n;	/* the component sees the socket close anyway */
	return 125;
}

int pf_papi_helper(const char *fds, pid_t pid)
{
	int sock = -1, memfd = -1;
	char c;
	if (sscanf(fds, "%d,%d%c", &sock, &memfd, &c) != 2 || sock < 0 || memfd < 0 || pid <= 0) {
		fprintf(stderr, "papi_flops_run: --papi-fd SOCK,MEMFD is for the flops PAPI component, with --pid\n");
		return 2;
	}
	struct stat sb;
	if (fstat(memfd, &sb) || sb.st_size != (off_t)sizeof(struct pflops_pub)) {
		/* another papi-flops version's libpapi: say so where every
		 * version has its message, and refuse */
		char msg[512];
		int n = snprintf(msg, sizeof(msg), "the trace helper papi_flops_run (papi-flops %s) does not match this libpapi "
				 "(shared memory of %lld bytes, not %zu): install both from the same papi-flops, or name the right "
				 "one in PAPI_FLOPS_TRACER", PF_VERSION, (long long)sb.st_size, sizeof(struct pflops_pub));
		uint32_t failed = PFLOPS_PUB_FAILED;
		if (sb.st_size >= (off_t)offsetof(struct pflops_pub, pid) &&
		    (pwrite(memfd, msg, (size_t)n + 1, offsetof(struct pflops_pub, msg)) < 0 ||
		     pwrite(memfd, &failed, sizeof(failed), offsetof(struct pflops_pub, state)) < 0))
			perror("papi_flops_run: the flops component's shared memory");
		fprintf(stderr, "papi_flops_run: %s\n", msg);
		close(memfd);
		return refuse(sock);
	}
	struct pflops_pub *pub = mmap(NULL, sizeof(*pub), PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	close(memfd);
	if (pub == MAP_FAILED) {
		perror("papi_flops_run: the flops component's shared memory");
		return refuse(sock);
	}
	/* the component waits for 'r' before it counts; SIGINT/SIGTERM to
	 * the helper detach it (pf_interrupt), leaving the process unharmed */
	pf_signal_install();
	signal(SIGPIPE, SIG_IGN);
	struct pflops_mix mix;
	memset(&mix, 0, sizeof(mix));
	struct pflops_error err = { 0 };
	struct pflops_trace_opts o = { .interrupt = &pf_interrupt };
	struct pflops_attach_opts a = { .ready_fd = sock, .ctl_fd = sock, .pub = pub };
	int status = 0, detached = 0;
	int rc = pflops_trace_attach(pid, &o, &a, &mix, &status, &detached, &err);
	if (rc)
		fprintf(stderr, "papi_flops_run: PAPI_FLOPS_SOURCE=trace: %s\n", err.msg);
	return rc ? 125 : 0;
}
