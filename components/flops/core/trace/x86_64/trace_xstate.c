/*
 * trace_xstate.c: the AVX-512 opmask registers k0..k7 of a stopped
 * thread, from its XSAVE image (PTRACE_GETREGSET NT_X86_XSTATE).
 *
 * ptrace hands out the standard (non-compacted) XSAVE layout, where
 * component 5 (opmask) lies at the offset CPUID.(EAX=0xD,ECX=5):EBX.
 * A component whose XSTATE_BV bit is clear is in its init state (zero).
 */
#include <cpuid.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "../pft_arch.h"

#define XSTATE_BV_OFF 512
#define OPMASK_BIT 5

static unsigned k_off, xs_size;
static uint8_t *xs_buf;

static int setup(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid_count(0xd, 0, &a, &b, &c, &d) || !(a & (1u << OPMASK_BIT)))
		return PFLOPS_EUNAVAIL; /* no AVX-512 state */
	xs_size = c > b ? c : b;	/* enabled (ebx) / all supported (ecx) */
	__get_cpuid_count(0xd, OPMASK_BIT, &a, &b, &c, &d);
	k_off = b;
	if (a != 64 || k_off + 64 > xs_size)
		return PFLOPS_EUNAVAIL;
	xs_buf = malloc(xs_size);
	return xs_buf ? 0 : PFLOPS_ENOMEM;
}

int pft_read_kregs(pid_t tid, uint64_t k[8])
{
	struct iovec iov;
	uint64_t bv;

	if (!xs_buf) {
		int rc = setup();
		if (rc)
			return rc;
	}
	iov.iov_base = xs_buf;
	iov.iov_len = xs_size;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov))
		return PFLOPS_ESYS;
	memcpy(&bv, xs_buf + XSTATE_BV_OFF, sizeof bv);
	if (!(bv & (1u << OPMASK_BIT)) || iov.iov_len < k_off + 64)
		memset(k, 0, 8 * sizeof *k);
	else
		memcpy(k, xs_buf + k_off, 8 * sizeof *k);
	return 0;
}
