/* papi_flops_run --papi-fd: the flops component's trace helper. */
#ifndef PF_PAPI_HELPER_H
#define PF_PAPI_HELPER_H
#include <sys/types.h>

/* "SOCK,MEMFD": trace process pid publishing its per-thread counts in
 * MEMFD (pflops_pub.h) and talking to the component on SOCK; returns
 * the exit status of the helper. */
int pf_papi_helper(const char *fds, pid_t pid);

#endif
