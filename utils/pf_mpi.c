/*
 * The rank of this process in an MPI job, read from the launcher's
 * variables.  Open MPI's mpirun sets OMPI_COMM_WORLD_* (and PMIX_RANK),
 * MPICH's Hydra PMI_RANK/PMI_SIZE, PMIx launchers PMIX_RANK, Slurm's
 * srun SLURM_PROCID and SLURM_STEP_NUM_TASKS.  The launcher's own
 * variables come first: mpirun inside a Slurm allocation leaves the batch
 * shell's SLURM_PROCID=0 in every rank's environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pf_mpi.h"
#include "pflops_internal.h"

static const struct {
	const char *rank, *launcher;
	const char *size[3]; /* the first set one gives the size */
} launchers[] = {
	{ "OMPI_COMM_WORLD_RANK", "openmpi", { "OMPI_COMM_WORLD_SIZE" } },
	{ "PMI_RANK", "mpich/hydra", { "PMI_SIZE" } },
	{ "PMIX_RANK", "pmix", { "OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS" } },
	{ "SLURM_PROCID", "slurm", { "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS" } },
};

/* a variable holding a count: digits only, below 2^31 */
static int env_int(const char *var, int *v, struct pflops_error *err)
{
	const char *s = getenv(var);
	char *end;
	if (!s)
		return 1;
	long n = strtol(s, &end, 10);
	if (!*s || *end || s[0] == '-' || s[0] == '+' || s[0] == ' ' || n < 0 || n > 0x7fffffff)
		return pfc_err(err, PFLOPS_EINVAL,
			       "%s='%s' in the environment is no rank or job size (a number from 0): "
			       "fix or unset it",
			       var, s);
	*v = (int)n;
	return 0;
}

int pf_mpi_detect(struct pf_mpi *j, struct pflops_error *err)
{
	memset(j, 0, sizeof(*j));
	j->rank = j->size = -1;
	if (gethostname(j->host, sizeof(j->host) - 1))
		snprintf(j->host, sizeof(j->host), "unknown");
	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
		int rc = env_int(launchers[i].rank, &j->rank, err);
		if (rc < 0)
			return rc;
		if (rc)
			continue;
		j->launcher = launchers[i].launcher;
		j->rank_var = launchers[i].rank;
		for (int k = 0; k < 3 && launchers[i].size[k]; k++)
			if ((rc = env_int(launchers[i].size[k], &j->size, err)) <= 0)
				break;
		if (rc < 0)
			return rc;
		if (j->size >= 0 && j->rank >= j->size)
			return pfc_err(err, PFLOPS_EINVAL,
				       "%s=%d is not below the job size %d the launcher set: the environment "
				       "is not that of one MPI job",
				       j->rank_var, j->rank, j->size);
		return 0;
	}
	return 0;
}

int pf_mpi_expand(const char *pattern, const struct pf_mpi *j, char *out, size_t len, struct pflops_error *err)
{
	size_t o = 0;
	int has_rank = 0;
	for (const char *p = pattern; *p; p++) {
		char buf[300];
		const char *add = buf;
		if (*p != '%') {
			buf[0] = *p;
			buf[1] = 0;
		} else {
			switch (*++p) {
			case 'r':
				snprintf(buf, sizeof(buf), "%d", j->rank < 0 ? 0 : j->rank);
				has_rank = 1;
				break;
			case 's':
				if (j->rank >= 0 && j->size < 0)
					snprintf(buf, sizeof(buf), "x");
				else
					snprintf(buf, sizeof(buf), "%d", j->rank < 0 ? 1 : j->size);
				break;
			case 'h':
				add = j->host;
				break;
			case 'p':
				snprintf(buf, sizeof(buf), "%ld", (long)getpid());
				break;
			case '%':
				snprintf(buf, sizeof(buf), "%%");
				break;
			default:
				return pfc_err(err, PFLOPS_EINVAL,
					       "-o %s: '%%%.1s' is no file name pattern; use %%r (rank), %%s (job "
					       "size), %%h (host), %%p (pid) or %%%% (a percent sign)",
					       pattern, *p ? p : "");
			}
		}
		size_t n = strlen(add);
		if (o + n >= len)
			return pfc_err(err, PFLOPS_EINVAL, "-o %s: the file name is longer than %zu bytes", pattern,
				       len - 1);
		memcpy(out + o, add, n + 1);
		o += n;
	}
	out[o] = 0;
	if (j->rank >= 0 && j->size != 1 && !has_rank)
		return pfc_err(err, PFLOPS_EINVAL,
			       "-o %s: this is rank %d of an MPI job (%s is set) and every rank would write "
			       "this one file; put %%r (the rank) in the name, as in -o r.%%r.json",
			       pattern, j->rank, j->rank_var);
	return 0;
}
