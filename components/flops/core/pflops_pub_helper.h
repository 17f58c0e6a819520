/* pub_helper.c: the trace helper of the flops component (pflops_pub.h). */
#ifndef PFLOPS_PUB_HELPER_H
#define PFLOPS_PUB_HELPER_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pflops_pub;
/* Start the helper tracing this process (once per process; later calls
 * return the same memory).  0 with *pub, or -1 with why filled. */
int pflops_pub_helper_start(struct pflops_pub **pub, char *why, size_t len);
/* Detach the helper (every thread back untraced) and wait for its end. */
void pflops_pub_helper_stop(void);

#ifdef __cplusplus
}
#endif
#endif
