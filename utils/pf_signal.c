/* papi_flops_run's interrupt flag (pf_signal.h). */
#include <string.h>
#include "papi_flops.h"
#include "pf_signal.h"

volatile sig_atomic_t pf_interrupt;

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (pf_interrupt) {
		pf_interrupt |= PFLOPS_INTERRUPT_NOW;
		return;
	}
	/* from the terminal (SI_KERNEL) the program got it too; from kill(1),
	 * timeout(1), a batch system (SI_USER ...) only we did */
	pf_interrupt = sig | (si && si->si_code <= 0 ? PFLOPS_INTERRUPT_FORWARD : 0);
}

void pf_signal_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int pf_signal_seen(void)
{
	return pf_interrupt & 0xff;
}
