/*
 * papi_flops_run --sample P --source trace: the tracer's exact overflow
 * (pflops_trace_opts.overflow) every P FLOPs of the metric; at each, the
 * stopped thread's stack is unwound from the registers the tracer gives
 * (rip the FP instruction's original address) with each file's DWARF
 * call-frame information (libunwind's remote unwinder: the ptrace
 * accessors find the tables, memory is read from the process, registers
 * come from the overflow), and every frame is named by the --by-function
 * symbolizer, so that the rows compare with --by-function's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <libunwind-ptrace.h>
#include "pf_sample_trace.h"
#include "trace/trace_internal.h" /* pft_maps: /proc/PID/maps, reloaded on a miss */

#define MAX_PROCS 64

struct proc {
	pid_t pid;
	void *upt; /* libunwind's per-process state: its unwind tables */
	struct pft_maps maps;
};

struct pf_sample_trace {
	struct pf_sample *prof;
	struct pft_funcs *names;
	int prec; /* enum pflops_prec counted; -1: all (FP_OPS) */
	unw_addr_space_t as;
	struct proc procs[MAX_PROCS];
	int nprocs;
	pid_t last_pid; /* whose unwind information libunwind caches */
	/* the overflow being unwound (the accessors' context) */
	const struct user_regs_struct *regs;
	pid_t tid;
};

/* libunwind hands its accessors the per-process argument of
 * _UPT_create; the overflow being unwound is this one (one at a time) */
static struct pf_sample_trace *cur;

static uint64_t weight(void *arg, const struct pft_insn *in, unsigned active_lanes)
{
	const struct pf_sample_trace *t = arg;
	if (!in->fp || (t->prec >= 0 && in->prec != t->prec))
		return 0;
	return (uint64_t)active_lanes * pflops_op_flops((enum pflops_op)in->op);
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	if (write)
		return -UNW_EREADONLYREG;
	struct iovec l = { val, sizeof(*val) }, r = { (void *)(uintptr_t)addr, sizeof(*val) };
	if (process_vm_readv(cur->tid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(*val))
		return 0;
	errno = 0; /* the thread is ptrace-stopped: its tracer may peek */
	long v = ptrace(PTRACE_PEEKDATA, cur->tid, (void *)(uintptr_t)addr, NULL);
	if (errno)
		return -UNW_EINVAL;
	*val = (unw_word_t)v;
	return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	const struct user_regs_struct *g = cur->regs;
	if (write)
		return -UNW_EREADONLYREG;
	switch (reg) {
	case UNW_X86_64_RAX:
		*val = g->rax;
		break;
	case UNW_X86_64_RDX:
		*val = g->rdx;
		break;
	case UNW_X86_64_RCX:
		*val = g->rcx;
		break;
	case UNW_X86_64_RBX:
		*val = g->rbx;
		break;
	case UNW_X86_64_RSI:
		*val = g->rsi;
		break;
	case UNW_X86_64_RDI:
		*val = g->rdi;
		break;
	case UNW_X86_64_RBP:
		*val = g->rbp;
		break;
	case UNW_X86_64_RSP:
		*val = g->rsp;
		break;
	case UNW_X86_64_R8:
		*val = g->r8;
		break;
	case UNW_X86_64_R9:
		*val = g->r9;
		break;
	case UNW_X86_64_R10:
		*val = g->r10;
		break;
	case UNW_X86_64_R11:
		*val = g->r11;
		break;
	case UNW_X86_64_R12:
		*val = g->r12;
		break;
	case UNW_X86_64_R13:
		*val = g->r13;
		break;
	case UNW_X86_64_R14:
		*val = g->r14;
		break;
	case UNW_X86_64_R15:
		*val = g->r15;
		break;
	case UNW_X86_64_RIP:
		*val = g->rip;
		break;
	default:
		return -UNW_EBADREG;
	}
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EBADREG; /* no frame restores FP registers to be unwound */
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

struct pf_sample_trace *pf_sample_trace_new(int metric, uint64_t period)
{
	static const int prec[PFLOPS_NMETRIC] = { [PFLOPS_FP_OPS] = -1,
						  [PFLOPS_DP_OPS] = PFLOPS_DP,
						  [PFLOPS_SP_OPS] = PFLOPS_SP,
						  [PFLOPS_HP_OPS] = PFLOPS_HP,
						  [PFLOPS_BF16_OPS] = PFLOPS_BF16 };
	struct pflops_error err = { 0 };
	struct pf_sample_trace *t = calloc(1, sizeof(*t));
	unw_accessors_t acc = _UPT_accessors;
	acc.access_mem = access_mem;
	acc.access_reg = access_reg;
	acc.access_fpreg = access_fpreg;
	acc.resume = resume;
	if (!t || !(t->prof = pf_sample_new(period, metric, 1)) || !(t->names = pft_funcs_new(&err)) ||
	    !(t->as = unw_create_addr_space(&acc, 0))) {
		fprintf(stderr, "papi_flops_run: --sample: %s\n",
			t && t->prof && !t->names ? err.msg : "out of memory");
		if (t) {
			pf_sample_free(t->prof);
			pft_funcs_free(t->names);
			free(t);
		}
		return NULL;
	}
	unw_set_caching_policy(t->as, UNW_CACHE_GLOBAL);
	t->prec = prec[metric];
	return t;
}

static struct proc *proc_of(struct pf_sample_trace *t, pid_t pid)
{
	for (int i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	struct proc *p = &t->procs[t->nprocs < MAX_PROCS ? t->nprocs++ : MAX_PROCS - 1];
	if (p->upt) { /* the table is full: the last slot is reused */
		_UPT_destroy(p->upt);
		pft_maps_free(&p->maps);
		unw_flush_cache(t->as, 0, 0);
	}
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->upt = _UPT_create(pid);
	p->maps.stale = 1;
	return p;
}

/* one frame's id: the function holding addr in p */
static int frame(struct pf_sample_trace *t, struct proc *p, uint64_t addr)
{
	const struct pft_map *m = pft_maps_find(&p->maps, p->pid, addr);
	const char *object = NULL;
	char name[512];
	if (pft_funcs_name(t->names, m ? m->path : NULL, m ? m->lo : 0, m ? m->off + (addr - m->lo) : addr, name,
			   sizeof(name), &object) < 0)
		return -1;
	return pf_sample_frame_id(t->prof, name, object);
}

static void on_overflow(void *arg, const struct pft_overflow *o)
{
	struct pf_sample_trace *t = arg;
	struct proc *p = proc_of(t, o->pid);
	int ids[PF_SAMPLE_MAX_FRAMES], n = 0;
	unw_cursor_t c;
	cur = t;
	if (o->pid != t->last_pid) /* its cache is by address: another process, other code */
		unw_flush_cache(t->as, 0, 0);
	t->last_pid = o->pid;
	t->regs = o->regs;
	t->tid = o->tid;
	if (p->upt && unw_init_remote(&c, t->as, p->upt) == 0) {
		int more = 1;
		while (more > 0 && n < PF_SAMPLE_MAX_FRAMES) {
			unw_word_t ip;
			if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
				break;
			/* a caller's frame: the call is the byte before its return address */
			int id = frame(t, p, n && !unw_is_signal_frame(&c) ? ip - 1 : ip);
			if (id < 0)
				return;
			ids[n++] = id;
			more = unw_step(&c);
		}
		unw_proc_info_t pi;
		/* cut: too deep, or ended at a function without call-frame
		 * information (hand-written assembly: OpenBLAS's kernels) */
		if ((n == PF_SAMPLE_MAX_FRAMES && more > 0) || (n && unw_get_proc_info(&c, &pi) < 0))
			t->prof->unwound_short++;
	}
	if (!n) { /* no unwind information at all: the address alone */
		int id = frame(t, p, o->addr);
		if (id < 0)
			return;
		ids[n++] = id;
	}
	pf_sample_add(t->prof, ids, n, o->crossings);
}

void pf_sample_trace_opts(struct pf_sample_trace *t, struct pflops_trace_opts *o)
{
	o->overflow_weight = weight;
	o->overflow_period = t->prof->period;
	o->overflow = on_overflow;
	o->overflow_arg = t;
}

struct pf_sample *pf_sample_trace_end(struct pf_sample_trace *t, double counted)
{
	struct pf_sample *s = t->prof;
	s->counted = counted;
	if (!s->samples && counted >= (double)s->period) {
		/* a tracer without the overflow would leave the profile empty */
		fprintf(stderr,
			"papi_flops_run: --sample: the tracer made no overflow in %.0f %s at a period of %llu: "
			"this build's tracer does not deliver them; --by-function gives exact FLOPs per function\n",
			counted, pflops_metric_name(s->metric), (unsigned long long)s->period);
		pf_sample_free(s);
		s = NULL;
	}
	for (int i = 0; i < t->nprocs; i++) {
		if (t->procs[i].upt)
			_UPT_destroy(t->procs[i].upt);
		pft_maps_free(&t->procs[i].maps);
	}
	unw_destroy_addr_space(t->as);
	pft_funcs_free(t->names);
	free(t);
	return s;
}
