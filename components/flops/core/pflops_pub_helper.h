/* pub_helper.c: the trace helper of the flops component (pflops_pub.h). */
#ifndef PFC_PUB_HELPER_H
#define PFC_PUB_HELPER_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pfc_pub;
/* Start the helper tracing this process (once per process; later calls
 * return the same memory).  0 with *pub, or -1 with why filled. */
int pfc_pub_helper_start(struct pfc_pub **pub, char *why, size_t len);
/* Detach the helper (every thread back untraced) and wait for its end. */
void pfc_pub_helper_stop(void);

#ifdef __cplusplus
}
#endif
#endif
