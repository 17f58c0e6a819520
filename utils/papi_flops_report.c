/*
 * papi_flops_report: the FLOPs of an MPI job from its ranks' reports
 * (papi_flops_run --json -o r.%r.json under mpirun, mpiexec or srun):
 * totals, each metric's spread over the ranks and the imbalance, the
 * job's rate over its wall time, the functions summed over the ranks;
 * and what is missing (ranks without a report, ranks cut short).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "pf_job.h"
#include "pf_version.h"

#define EXIT_INCOMPLETE 3 /* the report is written; ranks are missing or partial */

static void usage(FILE *o)
{
	fprintf(o,
		"usage: papi_flops_report [OPTIONS] REPORT|DIR|'GLOB'...\n"
		"Merge the per-rank reports of an MPI job into the job's: the reports\n"
		"papi_flops_run --json wrote, one per rank, as in\n"
		"  mpirun -np 4 papi_flops_run --source trace --json -o r.%%r.json -- ./app\n"
		"  papi_flops_report r.*.json\n"
		"A directory stands for the *.json files in it; a quoted glob is expanded.\n"
		"\n"
		"The job report: per metric the total, the min, median and max over the ranks\n"
		"(with the rank), the imbalance (max/mean), GFLOP/s over the job's wall time\n"
		"(first start to last end; native runs only); each rank's values; the\n"
		"--by-function lists summed over the ranks; the ranks' caveats.\n"
		"\n"
		"  -o, --output FILE         write it to FILE instead of stdout\n"
		"  -j, --json                as one JSON object\n"
		"      --csv                 as CSV: metric,statistic,rank,value,unit,accuracy,function,object,comment\n"
		"  -x, --field-separator C   as CSV with separator C\n"
		"  -h, --help                this text\n"
		"  -V, --version             the version\n"
		"\n"
		"Reports of different sources, PMUs, metric sets or jobs are refused.\n"
		"Exit status: 0; 3 when the report is written but ranks are missing or\n"
		"partial (it says which); 1 when the reports cannot be merged (it says\n"
		"why); 2 on bad usage.  papi_flops_report(1), docs/mpi.md.\n");
}

struct files {
	char **v;
	size_t n, cap;
};

static int add_file(struct files *f, const char *path)
{
	if (f->n == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 64;
		char **v = realloc(f->v, nc * sizeof(*v));
		if (!v)
			return -1;
		f->v = v;
		f->cap = nc;
	}
	if (!(f->v[f->n] = strdup(path)))
		return -1;
	f->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* DIR: its *.json files, sorted */
static int add_dir(struct files *f, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t first = f->n;
	char path[4096];
	if (!d) {
		fprintf(stderr, "papi_flops_report: cannot read the directory %s: %s\n", dir, strerror(errno));
		return 1;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".json") || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (add_file(f, path)) {
			closedir(d);
			fprintf(stderr, "papi_flops_report: out of memory\n");
			return 1;
		}
	}
	closedir(d);
	if (f->n == first) {
		fprintf(stderr,
			"papi_flops_report: %s holds no *.json file: give the directory papi_flops_run -o wrote the "
			"reports to\n",
			dir);
		return 1;
	}
	qsort(f->v + first, f->n - first, sizeof(*f->v), cmp_str);
	return 0;
}

/* one argument: a file, a directory, or a glob the shell did not expand */
static int add_arg(struct files *f, const char *arg)
{
	struct stat st;
	if (!stat(arg, &st) && S_ISDIR(st.st_mode))
		return add_dir(f, arg);
	if (errno == ENOENT && strpbrk(arg, "*?[")) {
		glob_t g;
		int rc = glob(arg, 0, NULL, &g);
		if (rc == GLOB_NOMATCH) {
			fprintf(stderr, "papi_flops_report: no file matches %s\n", arg);
			return 1;
		}
		for (size_t i = 0; !rc && i < g.gl_pathc; i++)
			rc = add_file(f, g.gl_pathv[i]);
		globfree(&g);
		if (rc)
			fprintf(stderr, "papi_flops_report: cannot expand %s\n", arg);
		return rc != 0;
	}
	if (add_file(f, arg)) {
		fprintf(stderr, "papi_flops_report: out of memory\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_CSV = 256 };
	static const struct option opts[] = {
		{ "output", required_argument, 0, 'o' },
		{ "json", no_argument, 0, 'j' },
		{ "csv", no_argument, 0, OPT_CSV },
		{ "field-separator", required_argument, 0, 'x' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ 0, 0, 0, 0 },
	};
	const char *output = NULL;
	enum pf_format format = PF_FORMAT_TEXT;
	char sep = ',';
	int c;
	while ((c = getopt_long(argc, argv, "o:jx:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'j':
			format = PF_FORMAT_JSON;
			break;
		case OPT_CSV:
			format = PF_FORMAT_CSV;
			break;
		case 'x':
			if (strlen(optarg) != 1 || strchr("\"\r\n", optarg[0])) {
				fprintf(stderr,
					"papi_flops_report: -x takes one character other than a quote or line break, as in -x, or -x';'\n");
				return 2;
			}
			format = PF_FORMAT_CSV;
			sep = optarg[0];
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("papi_flops_report (papi-flops) %s\n", PF_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr,
			"papi_flops_report: no report given: name the per-rank files papi_flops_run --json wrote (r.*.json)\n");
		usage(stderr);
		return 2;
	}
	struct files files = { 0 };
	int rc = 0;
	for (int i = optind; i < argc && !rc; i++)
		rc = add_arg(&files, argv[i]);
	struct pf_rankrep *reps = rc ? NULL : calloc(files.n, sizeof(*reps));
	struct pflops_error err = { 0 };
	size_t nreps = 0;
	if (!rc && !reps) {
		fprintf(stderr, "papi_flops_report: out of memory\n");
		rc = 1;
	}
	size_t nempty = 0;
	for (size_t i = 0; !rc && i < files.n; i++) {
		struct stat st;
		/* papi_flops_run creates its file before the program runs: an empty
		 * one is a rank killed (SIGKILL) before it could write */
		if (!stat(files.v[i], &st) && S_ISREG(st.st_mode) && st.st_size == 0) {
			fprintf(stderr,
				"papi_flops_report: %s is empty (its papi_flops_run was killed before it wrote the "
				"report, or still runs): left out, its rank counts as missing\n",
				files.v[i]);
			nempty++;
			continue;
		}
		if (pf_rankrep_load(files.v[i], &reps[nreps], &err)) {
			fprintf(stderr, "papi_flops_report: %s\n", err.msg);
			rc = 1;
		} else {
			nreps++;
		}
	}
	struct pf_job job = { 0 };
	if (!rc && !nreps) {
		fprintf(stderr, "papi_flops_report: every file given is empty: no rank wrote its report\n");
		rc = 1;
	}
	if (!rc && pf_job_merge(reps, nreps, &job, &err)) {
		fprintf(stderr, "papi_flops_report: %s\n", err.msg);
		rc = 1;
	}
	job.nempty = nempty;
	if (!rc) {
		FILE *o = output ? fopen(output, "w") : stdout;
		if (!o) {
			fprintf(stderr, "papi_flops_report: cannot write the report to %s: %s\n", output,
				strerror(errno));
			rc = 1;
		} else {
			pf_job_write(o, &job, format, sep);
			if (ferror(o) | (output ? fclose(o) : fflush(o))) {
				fprintf(stderr, "papi_flops_report: cannot write the report to %s: %s\n",
					output ? output : "stdout", strerror(errno));
				rc = 1;
			}
		}
	}
	if (!rc && (job.nmissing || job.npartial)) {
		fprintf(stderr,
			"papi_flops_report: the job is incomplete: %zu rank%s without a report, %zu partial (the report "
			"says which)\n",
			job.nmissing, job.nmissing == 1 ? "" : "s", job.npartial);
		rc = EXIT_INCOMPLETE;
	}
	pf_job_free(&job);
	for (size_t i = 0; i < nreps; i++)
		pf_rankrep_free(&reps[i]);
	free(reps);
	for (size_t i = 0; i < files.n; i++)
		free(files.v[i]);
	free(files.v);
	return rc;
}
