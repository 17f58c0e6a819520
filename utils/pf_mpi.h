/* papi_flops_run in an MPI job: which rank this process is, of how many,
 * under which launcher (from the variables the launchers set; no MPI
 * library is linked), and the -o pattern (%r %s %h %p %%) that gives each
 * rank its own report file.  utils/pf_mpi.c. */
#ifndef PF_MPI_H
#define PF_MPI_H
#include <stddef.h>
#include "papi_flops.h"

struct pf_mpi {
	int rank;	      /* -1: not in an MPI job */
	int size;	      /* ranks in the job; -1: unknown */
	const char *launcher; /* "openmpi", "mpich/hydra", "pmix", "slurm"; NULL: no job */
	const char *rank_var; /* the variable the rank came from */
	char host[256];
};

/* Fill j from the environment.  0, or PFLOPS_EINVAL naming a rank or
 * size variable that holds no number. */
int pf_mpi_detect(struct pf_mpi *j, struct pflops_error *err);

/* Expand the -o pattern into out: %r rank (0 outside a job), %s size
 * (1 outside a job, "x" when unknown), %h host, %p this process's id,
 * %% a percent sign.  0, or PFLOPS_EINVAL: an unknown %-sequence, a
 * result too long, or ranks that would share one file (an MPI job of
 * several ranks and no %r). */
int pf_mpi_expand(const char *pattern, const struct pf_mpi *j, char *out, size_t len, struct pflops_error *err);
#endif
