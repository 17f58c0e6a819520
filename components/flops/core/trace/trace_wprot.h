/*
 * trace_wprot.h: code on writable pages (trace_wprot.c)
 */
#ifndef PFT_TRACE_WPROT_H
#define PFT_TRACE_WPROT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "pft_arch.h"
#include "trace_thread.h"

/* trace_wprot.c: code on writable pages, write-protected while cached
 * or decoded.  wprot_code guards the pages of a block just met (1: all
 * of its writable pages are guarded or it has none; | 2: a page was
 * guarded just now, so b and every block of its pages were dropped, to
 * be decoded again: b may predate the guard); wprot_check is
 * trace_xlate.c's test; wprot_fault takes a write fault on a guarded
 * page (1: it was ours and the thread goes on, 0: the program's, <0
 * error); forget/moved follow the program's own mprotect, munmap,
 * mmap(MAP_FIXED), mremap; restore puts the program's protections back
 * before a detach. */
struct pft_wpage;
int pft_wprot_code(struct pft_tracer *T, struct pft_thr *t, struct pft_block *b, const struct user_regs_struct *r);
int pft_wprot_check(struct pft_space *sp, pid_t tid, struct pft_block *b);
/* 1 when pft_wprot_code would change nothing for b (no page to guard:
 * read-only private code, or guarded already) */
int pft_wprot_quiet(struct pft_space *sp, pid_t tid, const struct pft_block *b);
int pft_wprot_fault(struct pft_tracer *T, struct pft_thr *t, const siginfo_t *si);
/* b, on a page left writable for its writes, runs stepped once more:
 * 1 when that page is to be guarded again (its blocks dropped) */
int pft_wprot_cool(struct pft_tracer *T, struct pft_thr *t, const struct pft_block *b);
void pft_wprot_forget(struct pft_space *sp, uint64_t lo, uint64_t hi, int prot);
void pft_wprot_moved(struct pft_tracer *T, struct pft_thr *t, uint64_t lo, uint64_t len, uint64_t dst);
void pft_wprot_restore(struct pft_tracer *T, struct pft_thr *t);
int pft_wprot_copy(struct pft_space *sp, const struct pft_space *parent);
void pft_wprot_free(struct pft_space *sp);
/* a page of b is one the program may write (its own protection) */
int pft_wprot_prog_writable(const struct pft_space *sp, const struct pft_block *b);
/* addr is on a page the program may write without our seeing it (left
 * writable, or not guarded yet) */
int pft_wprot_unseen(const struct pft_space *sp, uint64_t addr);
/* the guarded pages in [lo, hi) of t's space given the program's
 * protection back (their blocks, and those of other views of their
 * memory, dropped: guarded again when run); how many */
size_t pft_wprot_lift(struct pft_tracer *T, struct pft_thr *t, uint64_t lo, uint64_t hi);
/* some page of [lo, hi) is guarded now */
int pft_wprot_guarded(const struct pft_space *sp, uint64_t lo, uint64_t hi);
/* [lo, hi) was written, or may now be a writable view, of shared
 * memory: the code of the same memory's executable views dropped (and
 * its writable views guarded when decoded again) */
void pft_wprot_shared(struct pft_tracer *T, struct pft_space *sp, uint64_t lo, uint64_t hi);

#endif
