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
	PFT_TRACE_ARCH_ONLY "; on this machine count with --source hw (hardware counters) or --source perf-stat:FILE"

int pft_run(char *const argv[], const struct pflops_trace_opts *opts, struct pflops_mix *mix, int *exit_status,
	    struct pflops_error *err)
{
	return pfc_err(err, PFLOPS_EUNAVAIL, X86_ONLY);
}

int pft_attach(pid_t pid, const struct pflops_trace_opts *opts, const struct pft_attach_opts *a, struct pflops_mix *mix,
	       int *exit_status, int *detached, struct pflops_error *err)
{
	/* the flops component's helper waits for a byte: say it failed */
	if (a && a->ready_fd >= 0 && write(a->ready_fd, "e", 1) < 0)
		(void)0;
	return pfc_err(err, PFLOPS_EUNAVAIL, X86_ONLY);
}

/* --by-function groups traced blocks: nothing to group without the trace. */
struct pft_funcs *pft_funcs_new(struct pflops_error *err)
{
	pfc_err(err, PFLOPS_EUNAVAIL, "--by-function: " X86_ONLY);
	return NULL;
}

void pft_funcs_add(void *funcs, const struct pft_trace_block *b)
{
}

int pft_funcs_list(struct pft_funcs *f, const struct pft_func *const **v, size_t *n, struct pflops_error *err)
{
	*v = NULL;
	*n = 0;
	return pfc_err(err, PFLOPS_EUNAVAIL, "--by-function: " X86_ONLY);
}

void pft_funcs_free(struct pft_funcs *f)
{
}

int pft_funcs_name(struct pft_funcs *f, const char *path, uint64_t map_start, uint64_t offset, char *buf, size_t len,
		   const char **object)
{
	return PFLOPS_EUNAVAIL;
}

/* The masked-lane estimator decodes sampled x86 code (AVX-512 opmasks). */
int pfc_decode(const uint8_t *buf, size_t len, uint64_t addr, struct pft_insn *out)
{
	return PFLOPS_EINVAL;
}
