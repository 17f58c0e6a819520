/*
 * papi_flops_run --pid PID --papi-fd SOCK,MEMFD: the helper the flops
 * component starts for PAPI_FLOPS_SOURCE=trace (components/flops/flops.c).
 * It traces every thread of PID, publishing per-thread counts in the
 * shared memory MEMFD, writes 'r' (or 'e') on SOCK once counting runs,
 * and detaches when SOCK gives a byte or ends (PAPI_shutdown, exec, the
 * process gone) or when the process ends.  No report: the process reads
 * its counts itself.  Not for people: the option is not in --help.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "papi_flops.h"
#include "pflops_trace.h"
#include "pflops_pub.h"
#include "pf_papi_helper.h"
#include "pf_signal.h"
#include "pf_version.h"

/* PAPI_overflow (pflops_pub.h): the weight the process chose, the
 * per-thread periods it sets, the crossings sent back as its signal */
struct ovf_helper {
	struct pfc_pub *pub;
	pid_t pid;
	uint32_t sel; /* the weight the code cache was made with */
};

/* metric (sel) of one instruction: the component's formula on a mix of
 * that instruction alone (the metrics are linear in the mix) */
static uint64_t ovf_weight(void *arg, const struct pft_insn *in, unsigned active)
{
	const struct ovf_helper *h = arg;
	static struct pflops_mix m;
	double v[PFLOPS_NMETRIC];
	unsigned e = (h->sel >> 4) & 0xff, w = (h->sel >> 12) & 0xff, p = (h->sel >> 20) & 0xff;

	if (!h->sel || e >= PFLOPS_NMETRIC || in->prec >= PFLOPS_NPREC || in->width >= PFLOPS_NWIDTH ||
	    in->op >= PFLOPS_NOP)
		return 0;
	memset(&m, 0, sizeof(m));
	m.insts[in->prec][in->width][in->op] = 1;
	m.masked[in->prec][in->width][in->op] = in->mask_reg != 0;
	m.lanes_full[in->prec][in->width][in->op] = in->lanes;
	m.lanes_active[in->prec][in->width][in->op] = active;
	pfc_mix_keep(&m, (int)w - 1, (int)p - 1);
	pflops_mix_metrics(&m, v);
	return v[e] > 0 ? (uint64_t)(v[e] + 0.5) : 0;
}

static int ovf_rearm(void *arg, pid_t tid, uint64_t *period)
{
	struct ovf_helper *h = arg;
	int hint = -1;
	struct pfc_pub_ovf *r = pfc_pub_ovf_find(h->pub, tid, 0, &hint);
	if (!r)
		return 0;
	uint32_t g = __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE);
	if (g == r->seen)
		return 0;
	r->seen = g;
	uint32_t sel = __atomic_load_n(&h->pub->ovf_sel, __ATOMIC_ACQUIRE);
	*period = sel ? r->period : 0;
	if (sel != h->sel) {
		h->sel = sel;
		return 2;
	}
	return 1;
}

static void ovf_cross(void *arg, const struct pft_overflow *o)
{
	struct ovf_helper *h = arg;
	int hint = -1;
	struct pfc_pub_ovf *r = pfc_pub_ovf_find(h->pub, o->tid, 0, &hint);
	if (!r || !h->pub->ovf_signal)
		return;
	/* one signal per call; the ring keeps the latest addresses */
	uint64_t n = r->head;
	r->addr[n % PFC_PUB_OVF_RING] = o->addr;
	__atomic_store_n(&r->head, n + 1, __ATOMIC_RELEASE);
	syscall(SYS_tgkill, (int)h->pid, (int)o->tid, h->pub->ovf_signal);
}

/* tell the component it failed (it reads the reason from the memory) */
static int refuse(int sock)
{
	ssize_t n = write(sock, "e", 1);
	(void)n; /* the component sees the socket close anyway */
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
	if (fstat(memfd, &sb) || sb.st_size != (off_t)sizeof(struct pfc_pub)) {
		/* another papi-flops version's libpapi: say so where every
		 * version has its message, and refuse */
		char msg[512];
		int n = snprintf(
			msg, sizeof(msg),
			"the trace helper papi_flops_run (papi-flops %s) does not match this libpapi "
			"(shared memory of %lld bytes, not %zu): install both from the same papi-flops, or name the right "
			"one in PAPI_FLOPS_TRACER",
			PF_VERSION, (long long)sb.st_size, sizeof(struct pfc_pub));
		uint32_t failed = PFC_PUB_FAILED;
		if (sb.st_size >= (off_t)offsetof(struct pfc_pub, pid) &&
		    (pwrite(memfd, msg, (size_t)n + 1, offsetof(struct pfc_pub, msg)) < 0 ||
		     pwrite(memfd, &failed, sizeof(failed), offsetof(struct pfc_pub, state)) < 0))
			perror("papi_flops_run: the flops component's shared memory");
		fprintf(stderr, "papi_flops_run: %s\n", msg);
		close(memfd);
		return refuse(sock);
	}
	struct pfc_pub *pub = mmap(NULL, sizeof(*pub), PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
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
	struct ovf_helper oh = { .pub = pub, .pid = pid };
	struct pflops_trace_opts o = { .interrupt = &pf_interrupt,
				       .overflow_weight = ovf_weight,
				       .overflow = ovf_cross,
				       .overflow_arg = &oh,
				       .overflow_rearm = ovf_rearm };
	struct pft_attach_opts a = { .ready_fd = sock, .ctl_fd = sock, .pub = pub };
	int status = 0, detached = 0;
	int rc = pft_attach(pid, &o, &a, &mix, &status, &detached, &err);
	if (rc)
		fprintf(stderr, "papi_flops_run: PAPI_FLOPS_SOURCE=trace: %s\n", err.msg);
	return rc ? 125 : 0;
}
