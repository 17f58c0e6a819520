/*
 * simd_caps.c: does this kernel sample the opmask registers?
 *
 * A kernel without the series copies perf_event_attr up to its own size
 * and refuses a larger one whose tail is not zero with E2BIG; a kernel
 * with it refuses the fields on a PMU without the SIMD-register
 * capability with EOPNOTSUPP (software events are such PMUs).  So: a
 * software event first (the kernel's age, on any machine), then the
 * cycles event (the PMU), both sampling user registers with k0-k7.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "pflops_simd.h"

#define SERIES                                                                                           \
	"the perf series \"Support SIMD/eGPRs/SSP registers sampling for perf\" (Kan Liang, Dapeng Mi; " \
	"posted v1-v8, June 2025 to May 2026, not in mainline Linux; papi-flops writes its v5 layout)"

void pfc_simd_attr(struct pfc_perf_attr_simd *a, uint32_t type, uint64_t config, uint64_t period, int opmask)
{
	memset(a, 0, sizeof(*a));
	struct perf_event_attr *p = &a->u.attr;
	p->size = opmask ? PFC_ATTR_SIZE_VER9 : sizeof(*p);
	p->type = type;
	p->config = config;
	p->sample_period = period;
	p->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER;
	p->sample_regs_user = 1ULL << PFC_PERF_REG_X86_IP;
	p->disabled = 1;
	p->exclude_kernel = 1;
	p->exclude_hv = 1;
	if (opmask) {
		/* OPMASK0-7, one qword each; no vector registers */
		a->sample_simd_pred_reg_qwords = 1;
		a->sample_simd_pred_reg_user = PFC_X86_OPMASK_REGS;
	}
}

void pfc_simd_format(const struct pfc_perf_attr_simd *a, struct pfc_sample_format *f)
{
	memset(f, 0, sizeof(*f));
	f->sample_type = a->u.attr.sample_type;
	f->regs_user = a->u.attr.sample_regs_user;
	f->regs_intr = a->u.attr.sample_regs_intr;
	if (a->u.attr.size >= PFC_ATTR_SIZE_VER9) {
		f->pred_user = a->sample_simd_pred_reg_user;
		f->pred_intr = a->sample_simd_pred_reg_intr;
	}
}

static void set(struct pfc_simd_caps *c, enum pfc_simd_verdict v, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set(struct pfc_simd_caps *c, enum pfc_simd_verdict v, const char *fix, const char *fmt, ...)
{
	va_list ap;
	c->verdict = v;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	snprintf(c->fix, sizeof(c->fix), "%s", fix);
}

void pfc_simd_judge(int sw_errno, int hw_errno, const char *kernel, struct pfc_simd_caps *c)
{
	const char *k = kernel && *kernel ? kernel : "this kernel";

	memset(c, 0, sizeof(*c));
	c->sw_errno = sw_errno;
	c->hw_errno = hw_errno;
	switch (sw_errno) {
	case E2BIG:
		set(c, PFC_SIMD_OLD_KERNEL, "a kernel with " SERIES,
		    "not supported by this kernel: Linux %s refuses perf_event_attr's SIMD register fields (E2BIG: it "
		    "predates them)",
		    k);
		return;
	case EACCES:
	case EPERM:
		set(c, PFC_SIMD_DENIED,
		    "sudo sysctl kernel.perf_event_paranoid=2 (user-space sampling of your own processes), or CAP_PERFMON",
		    "not known: perf_event_paranoid forbids even a software sampling event here (%s)",
		    strerror(sw_errno));
		return;
	case EINVAL:
		set(c, PFC_SIMD_INVALID, "a kernel with the v5 layout of " SERIES,
		    "not supported by this kernel: Linux %s takes a larger perf_event_attr but rejects the SIMD fields "
		    "as papi-flops lays them out (EINVAL): it may carry another revision of the series",
		    k);
		return;
	case 0:
	case EOPNOTSUPP: /* the series, refusing a PMU without the capability */
		break;
	default:
		set(c, PFC_SIMD_UNKNOWN, "", "not known: a software sampling event with the SIMD fields failed: %s",
		    strerror(sw_errno));
		return;
	}
	switch (hw_errno) {
	case 0:
		set(c, PFC_SIMD_SUPPORTED, "",
		    "supported: Linux %s samples the opmask registers k0-k7 at counter overflow", k);
		return;
	case EOPNOTSUPP:
		set(c, PFC_SIMD_NO_PMU_CAP,
		    "a CPU the series enables: Intel Sapphire Rapids or later servers, Sierra Forest or later, Arrow "
		    "Lake, Panther Lake, Nova Lake",
		    "not supported on this CPU: Linux %s has the SIMD register fields, but its PMU driver cannot sample "
		    "them here (EOPNOTSUPP)",
		    k);
		return;
	case ENOENT:
	case ENODEV:
		set(c, PFC_SIMD_NO_PMU, "enable the guest PMU (KVM/QEMU: -cpu host,pmu=on), or run on bare metal",
		    "not usable here: Linux %s has the SIMD register fields, but no hardware PMU is exposed (%s)", k,
		    strerror(hw_errno));
		return;
	case EACCES:
	case EPERM:
		set(c, PFC_SIMD_DENIED,
		    "sudo sysctl kernel.perf_event_paranoid=2 (user-space sampling of your own processes), or CAP_PERFMON",
		    "not known: perf_event_paranoid forbids sampling the cycles event (%s)", strerror(hw_errno));
		return;
	case EINVAL:
		set(c, PFC_SIMD_INVALID, "a kernel with the v5 layout of " SERIES,
		    "not supported by this kernel: Linux %s rejects the SIMD fields as papi-flops lays them out on the "
		    "cycles event (EINVAL): it may carry another revision of the series",
		    k);
		return;
	case -1:
		set(c, PFC_SIMD_UNKNOWN, "", "not known: the cycles event was not tried");
		return;
	default:
		set(c, PFC_SIMD_UNKNOWN, "", "not known: sampling the cycles event with the SIMD fields failed: %s",
		    strerror(hw_errno));
		return;
	}
}

static int try_open(uint32_t type, uint64_t config)
{
	struct pfc_perf_attr_simd a;
	pfc_simd_attr(&a, type, config, 1000003, 1);
	long fd = syscall(SYS_perf_event_open, &a.u.attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

void pfc_simd_probe(struct pfc_simd_caps *c)
{
	struct utsname u;
	int sw = try_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK), hw = -1;

	if (uname(&u))
		u.release[0] = 0;
	if (sw == 0 || sw == EOPNOTSUPP)
		hw = try_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	pfc_simd_judge(sw, hw, u.release, c);
}
