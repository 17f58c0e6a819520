/*
 * trace_none.c: the tracer's entry points on an architecture it does not
 * support yet (aarch64): core/trace/ decodes and rewrites x86-64 code
 * only.  Each refuses with one sentence naming the sources that do work
 * there, so the tools build unchanged and say why; mk/aarch64/trace.mk
 * builds this file instead of core/trace/.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pflops_internal.h"
#include "pflops_trace.h"

#define X86_ONLY \
	PFLOPS_TRACE_ARCH_ONLY "; on this machine count with --source hw (hardware counters) or --source perf-stat:FILE"

int pflops_trace_run(char *const argv[], const struct pflops_trace_opts *opts, struct pflops_mix *mix, int *exit_status,
		     struct pflops_error *err)
{
	return pf_err(err, PFLOPS_EUNAVAIL, X86_ONLY);
}

int pflops_trace_attach(pid_t pid, const struct pflops_trace_opts *opts, const struct pflops_attach_opts *a,
			struct pflops_mix *mix, int *exit_status, int *detached, struct pflops_error *err)
{
	/* the flops component's helper waits for a byte: say it failed */
	if (a && a->ready_fd >= 0 && write(a->ready_fd, "e", 1) < 0)
		(void)0;
	return pf_err(err, PFLOPS_EUNAVAIL, X86_ONLY);
}

/* --by-function groups traced blocks: nothing to group without the trace. */
struct pflops_funcs *pflops_funcs_new(struct pflops_error *err)
{
	pf_err(err, PFLOPS_EUNAVAIL, "--by-function: " X86_ONLY);
	return NULL;
}

void pflops_funcs_add(void *funcs, const struct pflops_trace_block *b)
{
}

int pflops_funcs_list(struct pflops_funcs *f, const struct pflops_func *const **v, size_t *n, struct pflops_error *err)
{
	*v = NULL;
	*n = 0;
	return pf_err(err, PFLOPS_EUNAVAIL, "--by-function: " X86_ONLY);
}

void pflops_funcs_free(struct pflops_funcs *f)
{
}

int pflops_funcs_name(struct pflops_funcs *f, const char *path, uint64_t map_start, uint64_t offset, char *buf,
		      size_t len, const char **object)
{
	return PFLOPS_EUNAVAIL;
}

/* The masked-lane estimator decodes sampled x86 code (AVX-512 opmasks). */
int pflops_decode(const uint8_t *buf, size_t len, uint64_t addr, struct pflops_insn *out)
{
	return PFLOPS_EINVAL;
}
