/*
 * trace_ids.c: block ids.  A copy in the code cache counts its runs in
 * one 64-bit counter per thread slot, at its block's id (PFT_MAX_IDS a
 * process).  A JIT drops and rewrites its code all the time; without
 * reuse its ids ran out (javac's C2 after half a minute) and all new
 * code went to the stopping path.
 *
 * A dropped copy's id goes to limbo (pft_id_retire): it is unlinked and
 * out of the lookup table, so no thread can enter it any more, but a
 * thread may still be inside it (preempted, stopped, blocked in a
 * system call it makes) and count into its id, and a signal there
 * reads the copy's records to put the thread back.
 *
 * Reclaiming (pft_id_reclaim) freezes limbo as a grace set, with a
 * generation number; a thread seen since then outside every dropped
 * copy and outside the lookup routines' probe (which may hold an entry
 * read before it was removed) can never reach those copies again.  A
 * thread is seen at each of its ptrace stops (pft_ids_observe, by its
 * registers), or at a reclaim: in a ptrace stop by its registers,
 * blocked in the kernel by /proc/TID/syscall (its user pc).  One that
 * runs (not in the kernel: compute in the cache) is interrupted
 * (PTRACE_INTERRUPT) when the ids are nearly used up, and seen at that
 * stop, waited for there and then (the main loop gets its status later).
 * Once every thread of the address space was seen, the grace set's
 * counts are harvested from every slot (into the run's mix and the
 * blocks' records, or dropped outside a --region window, and folded
 * into the published records of an attached process) and zeroed, the
 * copies leave their chunk's address list, and the ids are free.
 * Their code stays in the chunk (never reached again).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "trace_internal.h"
#include "pflops_pub.h"

/* a grace set still waited for is looked at again after this many stops,
 * or once another of its threads was seen at its own stop */
#define RECLAIM_EVERY 64
/* limbo this big (a 16th of the ids) is reclaimed before the ids run
 * out: harvests look at ids [0, nids), translation ahead slows down as
 * they fill */
#define LIMBO_SOON(a) ((a)->max_ids / 16)

uint32_t pft_ids_used(const struct pft_arena *a)
{
	return a->nids - a->nfree;
}

int64_t pft_id_alloc(struct pft_tracer *T, struct pft_space *sp)
{
	struct pft_arena *a = sp->arena;
	int out = !a->nfree && a->nids == a->max_ids;

	if (a->ngrace || a->nlimbo >= LIMBO_SOON(a) || (out && a->nlimbo))
		pft_id_reclaim(T, sp, pft_ids_used(a) >= a->max_ids - a->max_ids / 8);
	if (a->nfree)
		return a->free_ids[--a->nfree];
	if (a->nids < a->max_ids) {
		a->ids[a->nids] = NULL;
		return a->nids++;
	}
	return -1;
}

void pft_id_free(struct pft_arena *a, uint32_t id)
{
	a->ids[id] = NULL;
	a->free_ids[a->nfree++] = id;
}

void pft_id_retire(struct pft_arena *a, uint32_t id)
{
	if (a->nlimbo == a->limbo_cap) {
		uint32_t nc = a->limbo_cap ? 2 * a->limbo_cap : 1024;
		uint32_t *n = realloc(a->limbo, nc * sizeof *n);
		if (!n)
			return; /* the id stays taken: only fewer ids */
		a->limbo = n;
		a->limbo_cap = nc;
	}
	a->limbo[a->nlimbo++] = id;
}

/* The user pc of a thread blocked in the kernel (a system call, a page
 * fault); -1: it is running (it could be anywhere), 1: it is gone. */
static int blocked_pc(pid_t tid, uint64_t *pc)
{
	char path[64], buf[256];
	unsigned long long v[9];
	long nr;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/syscall", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* "nr a0 .. a5 sp pc", or "-1 sp pc" outside a system call */
	if (sscanf(buf, "%ld", &nr) != 1)
		return -1;
	if (nr < 0 ? sscanf(buf, "%ld %llx %llx", &nr, &v[0], &v[1]) != 3
		   : sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &v[0], &v[1], &v[2], &v[3], &v[4],
			    &v[5], &v[6], &v[7]) != 9)
		return -1;
	*pc = nr < 0 ? v[1] : v[7];
	return 0;
}

/* Can a thread at pc still run a dropped copy (or count into its id)? */
static int near_dead(const struct pft_arena *a, uint64_t pc)
{
	const struct pft_xpoint *pt;
	struct pft_xblock *x;

	if ((x = pft_xlate_find(a, pc, &pt)) && x->dead)
		return 1;
	/* in a copy's look-up (rt_sigreturn's, an indirect branch's:
	 * trace_gen.c): it may hold an entry read, or have written its
	 * copy's address in the frame or the slot */
	if (x && x->lookup && pc >= x->addr + x->lookup)
		return 1;
	for (size_t i = 0; i < a->nchunks; i++) { /* its traps hold no entry */
		const struct pft_chunk *c = a->chunks[i];
		if (pc >= c->ibl.entry && pc < c->ibl.miss)
			return 1;
		/* in a request (trace_freq.c): its stub must stay findable */
		if (c->ibl.req && pc >= c->ibl.req && pc < c->ibl.req_end)
			return 1;
	}
	return 0;
}

/* u seen now? -1: it runs, 0: not yet (in or near a dropped copy), 1: seen */
static int see(const struct pft_arena *a, struct pft_thr *u)
{
	struct user_regs_struct r;
	uint64_t pc;

	if (u->ids_seen == a->gen)
		return 1;
	if (ptrace(PTRACE_GETREGS, u->tid, NULL, &r) == 0) {
		pc = PFT_PC(&r);
	} else {
		int rc = blocked_pc(u->tid, &pc);
		if (rc < 0)
			return -1;
		if (rc > 0) { /* gone: it runs nothing */
			u->ids_seen = a->gen;
			return 1;
		}
	}
	if (near_dead(a, pc))
		return 0;
	u->ids_seen = a->gen;
	return 1;
}

void pft_ids_observe(struct pft_thr *t)
{
	struct pft_arena *a = t->sp ? t->sp->arena : NULL;

	if (a && a->ngrace && t->ids_seen != a->gen && see(a, t) > 0)
		a->seen_new = 1; /* the grace set may be over: look again */
}

/* Stop u, which runs program code, to look at it: PTRACE_INTERRUPT, then
 * its stop waited for here (the main loop handles that stop later,
 * pft_defer: the interrupt's stop carries on).  1: stopped now, 0: gone,
 * -1: not interrupted (once per stop; not running, detaching, or no
 * longer there). */
static int stop_now(struct pft_tracer *T, struct pft_thr *u)
{
	int st;
	pid_t p;

	if (u->ids_intr || u->state != PFT_TH_RUN || u->detach_sig || ptrace(PTRACE_INTERRUPT, u->tid, NULL, NULL))
		return -1;
	u->ids_intr = 1;
	T->st.ids_interrupts++;
	while ((p = waitpid(u->tid, &st, __WALL)) < 0 && errno == EINTR)
		;
	if (p != u->tid)
		return -1;
	pft_defer(T, p, st);
	return WIFSTOPPED(st) ? 1 : 0;
}

/* Is a thread at pc inside a lookup of the table (the routine's probe,
 * a copy's look-up)? */
static int in_lookup(const struct pft_arena *a, uint64_t pc)
{
	const struct pft_xpoint *pt;
	struct pft_xblock *x = pft_xlate_find(a, pc, &pt);

	if (x && x->lookup && pc >= x->addr + x->lookup)
		return 1;
	for (size_t i = 0; i < a->nchunks; i++)
		if (pc >= a->chunks[i]->ibl.entry && pc < a->chunks[i]->ibl.miss)
			return 1;
	return 0;
}

/* Does a thread with registers r hold an address in the spare table (a
 * lookup that began before the last renewal)?  Before its probe loads
 * the table's address off the slot it holds none, and it reads the slot
 * afresh; a thread stopped in a probe on the table in use is no matter:
 * that one is not written. */
static int holds_spare(const struct pft_arena *a, const struct user_regs_struct *r)
{
	uint64_t lo;

	if (!in_lookup(a, PFT_PC(r)))
		return 0;
	pft_arena_table_spare(a, &lo);
	return pft_arch_probe_holds(r, lo, lo + (PFT_TABLE_N + PFT_TABLE_OVER) * 16);
}

int pft_ids_spare_free(struct pft_tracer *T, struct pft_space *sp)
{
	const struct pft_arena *a = sp->arena;
	struct user_regs_struct r;
	uint64_t pc;

	for (struct pft_thr *u = T->threads; u; u = u->next) {
		int rc;

		if (!u->sp || u->sp->arena != a)
			continue;
		if (ptrace(PTRACE_GETREGS, u->tid, NULL, &r) == 0) {
			if (holds_spare(a, &r))
				return 0;
			continue;
		}
		if ((rc = blocked_pc(u->tid, &pc)) > 0)
			continue; /* gone */
		if (rc == 0) {	  /* in the kernel: its registers unknown */
			if (in_lookup(a, pc))
				return 0;
			continue;
		}
		/* it runs: looked at in a stop of its own */
		if ((rc = stop_now(T, u)) < 0)
			return 0;
		if (rc > 0 && (ptrace(PTRACE_GETREGS, u->tid, NULL, &r) || holds_spare(a, &r)))
			return 0;
	}
	return 1;
}

/* u's counts of the grace set: into the run's mix (and u's published
 * record), or dropped where u does not count (--region outside a
 * window); zeroed */
static void harvest(struct pft_tracer *T, struct pft_thr *u, struct pft_arena *a)
{
	struct pflops_mix d;
	struct pfc_pub_thr *r;
	uint8_t *m;
	uint64_t f0;

	if (u->slot < 0 || !(m = pft_slot_mem(a, u->slot)))
		return;
	if (T->o->region && !pft_counting(T, u)) {
		for (uint32_t i = 0; i < a->ngrace; i++)
			((uint64_t *)(m + PFT_SLOT_CNT))[a->grace[i]] = 0;
		return;
	}
	memset(&d, 0, sizeof d);
	r = pft_pub_hold(T, u);
	T->st.cache_runs += pft_harvest_ids(a, u->slot, &d, a->grace, a->ngrace);
	pft_pub_release(r, &d);
	f0 = pflops_mix_flops(T->mix, -1);
	pfc_mix_add(T->mix, &d);
	if (T->o->region)
		pft_win_flops(T, u, f0);
}

int pft_id_reclaim(struct pft_tracer *T, struct pft_space *sp, int urgent)
{
	struct pft_arena *a = sp->arena;
	uint32_t n, *tmp;
	int wait = 0;

	if (a->ngrace && !a->seen_new && T->st.stops - a->reclaim_stop < RECLAIM_EVERY && !(urgent && !a->urged))
		return 0;
	a->seen_new = 0;
	a->reclaim_stop = T->st.stops;
	if (!a->ngrace) { /* freeze limbo */
		if (!a->nlimbo)
			return 0;
		tmp = a->grace;
		a->grace = a->limbo;
		a->ngrace = a->nlimbo;
		a->limbo = tmp;
		n = a->limbo_cap;
		a->limbo_cap = a->grace_cap;
		a->grace_cap = n;
		a->nlimbo = 0;
		a->gen = ++T->ids_gen;
		a->urged = 0;
	}
	for (struct pft_thr *u = T->threads; u; u = u->next) {
		int s;
		if (!u->sp || u->sp->arena != a || (s = see(a, u)) > 0)
			continue;
		if (s < 0 && urgent) {
			int k = stop_now(T, u);
			if (k == 0) /* gone: it runs nothing */
				u->ids_seen = a->gen;
			if (k == 0 || (k > 0 && see(a, u) > 0))
				continue;
		}
		wait = 1;
	}
	if (urgent)
		a->urged = 1;
	if (wait)
		return 0;
	n = a->ngrace;
	for (struct pft_thr *u = T->threads; u; u = u->next)
		if (u->sp && u->sp->arena == a)
			harvest(T, u, a);
	/* the copies leave their chunks' address lists (pft_xlate_find) */
	for (uint32_t i = 0; i < n; i++)
		a->ids[a->grace[i]]->x->gone = 1;
	for (size_t c = 0; c < a->nchunks; c++) {
		struct pft_chunk *ch = a->chunks[c];
		size_t k = 0;
		for (size_t j = 0; j < ch->nxb; j++)
			if (!ch->xb[j]->gone) {
				ch->xk[k][0] = ch->xk[j][0];
				ch->xk[k][1] = ch->xk[j][1];
				ch->xb[k++] = ch->xb[j];
			}
		ch->nxb = k;
	}
	for (uint32_t i = 0; i < n; i++)
		pft_id_free(a, a->grace[i]);
	a->ngrace = 0;
	T->st.ids_reused += n;
	return (int)n;
}
