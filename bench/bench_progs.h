/* bench_progs.h: make bench on real programs (bench_progs.c) */
#ifndef BENCH_PROGS_H
#define BENCH_PROGS_H

/* dgemm: bench_dgemm (NULL: not built); cfile: the C file gcc compiles
 * (NULL: none).  Prints two tables on stdout. */
void bench_programs(const char *dgemm, const char *cfile);

#endif
