/* papi_flops_run's SIGINT/SIGTERM: a flag for the counting engines
 * (PFLOPS_INTERRUPT_* in papi_flops.h), as perf stat stops the program
 * and still prints what it counted. */
#ifndef PF_SIGNAL_H
#define PF_SIGNAL_H
#include <signal.h>

extern volatile sig_atomic_t pf_interrupt;

/* Catch SIGINT and SIGTERM into pf_interrupt (no SA_RESTART: waits end). */
void pf_signal_install(void);
/* The signal number seen, 0 if none. */
int pf_signal_seen(void);
#endif
