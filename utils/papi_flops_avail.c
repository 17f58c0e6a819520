/*
 * papi_flops_avail: what FLOP metrics this machine (or any PMU in the
 * table, or a recorded topology) can count, with which native events,
 * how many counters, how accurately, and why not when it cannot.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "papi_flops.h"
#include "pflops_simd.h"
#include "pf_json.h"
#include "pf_output.h"
#include "pf_version.h"

static void usage(FILE *o)
{
	fprintf(o,
		"usage: papi_flops_avail [--arch PMU|all] [--topology FILE|DIR] [--json]\n"
		"                        [--perf [METRIC]] [--save-topology FILE]\n"
		"List the FLOP metrics (%s) a CPU\n"
		"can count: formula, native events and codes, counters needed, accuracy, caveat.\n"
		"\n"
		"  (no option)             this machine: counter access, each kind of core, every metric\n"
		"  -a, --arch PMU          one PMU of the table (libpfm4 name or alias: snb, skx, zen4 ...);\n"
		"                          'all' for every one\n"
		"  -t, --topology PATH     a recorded machine: hwloc XML file or CPUID-dump directory\n"
		"  -j, --json              the same as one JSON object\n"
		"  -p, --perf [METRIC]     'perf stat' event arguments for METRIC, or for every available\n"
		"                          metric: raw codes, PMU-qualified on hybrid PMUs; the formula\n"
		"                          over them goes to stderr\n"
		"  -s, --save-topology F   write this machine's hwloc XML to F (attach it to bug reports)\n"
		"  -h, --help              this text\n"
		"  -V, --version           the version\n"
		"\n"
		"Exit status: 0, 1 on an error (said on stderr), 2 on bad usage.  papi_flops_avail(1).\n",
		PFLOPS_METRIC_NAMES);
}

/* Opmask sampling is an x86 question (AVX-512 masks); the trace is x86-64 only. */
static int x86_host(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return 1;
#else
	return 0;
#endif
}

static void print_metric_text(const struct pflops_pmu *p, int m, int budget, int sve_bits)
{
	const struct pflops_metric_def *d = &p->metrics[m];
	if (d->klass == PFLOPS_UNAVAILABLE) {
		printf("  %-9s No   %-12s %s\n", pflops_metric_name(m), "unavailable", d->caveat);
		return;
	}
	struct pflops_plan plan;
	struct pflops_error err = { 0 };
	if (pflops_plan_fit(&plan, p, 1u << m, sve_bits, budget > 0 ? budget : p->counters_smt, NULL, &err)) {
		printf("  %-9s No   %-12s %s\n", pflops_metric_name(m), "error", err.msg);
		return;
	}
	char fit[96] = "";
	if (budget > 0)
		snprintf(fit, sizeof(fit),
			 plan.cost > budget ? " (of %d: refused by the PAPI component unless PAPI_FLOPS_MULTIPLEX=1)"
					    : " (of %d)",
			 budget);
	printf("  %-9s Yes  %-12s %s\n", pflops_metric_name(m), pflops_class_name(d->klass), d->formula);
	printf("            counters: %d%s\n", plan.cost, fit);
	for (int c = 0; c < plan.ncounters; c++) {
		char w[32];
		snprintf(w, sizeof(w), "%g", plan.counter[c].weight[m]);
		if (plan.counter[c].detects)
			snprintf(w, sizeof(w), "detect");
		printf("            %5s x %-58s 0x%llx%s\n", w, plan.counter[c].spec,
		       (unsigned long long)plan.counter[c].config, plan.counter[c].cost == 2 ? " (pair)" : "");
	}
	if (plan.reduced)
		printf("            %s left out to fit: its instructions are counted unweighted (%s), 0 proves the count exact\n",
		       pflops_metric_name(p->detect.part), p->detect.status);
	if (d->caveat)
		printf("            caveat: %s\n", d->caveat);
}

static void print_metric_json(const struct pflops_pmu *p, int m, int budget, int sve_bits)
{
	const struct pflops_metric_def *d = &p->metrics[m];
	struct pflops_plan plan;
	struct pflops_error err = { 0 };
	int ok = d->klass != PFLOPS_UNAVAILABLE &&
		 !pflops_plan_fit(&plan, p, 1u << m, sve_bits, budget > 0 ? budget : p->counters_smt, NULL, &err);
	pf_json_str(stdout, pflops_metric_name(m));
	printf(": {\"available\": %s, ", ok ? "true" : "false");
	pf_json_kv(stdout, "accuracy", pflops_class_name(d->klass), 1);
	pf_json_kv(stdout, "formula", d->formula ? d->formula : "", 1);
	pf_json_kv(stdout, "caveat", d->caveat ? d->caveat : "", 1);
	printf("\"counters\": %d, ", ok ? plan.cost : 0);
	if (budget > 0)
		printf("\"multiplexed\": %s, ", ok && plan.cost > budget ? "true" : "false");
	printf("\"events\": [");
	for (int c = 0; ok && c < plan.ncounters; c++) {
		char code[32];
		printf("%s{", c ? ", " : "");
		pf_json_kv(stdout, "name", plan.counter[c].spec, 1);
		snprintf(code, sizeof(code), "0x%llx", (unsigned long long)plan.counter[c].config);
		pf_json_kv(stdout, "code", code, 1);
		printf("\"weight\": %g, \"cost\": %d", plan.counter[c].weight[m], plan.counter[c].cost);
		if (plan.counter[c].detects)
			printf(", \"detects\": \"%s\"", p->detect.status);
		printf("}");
	}
	printf("]");
	if (ok && plan.reduced) {
		printf(", ");
		pf_json_kv(stdout, "left_out", pflops_metric_name(p->detect.part), 0);
	}
	printf("}");
}

static void print_pmu(const struct pflops_pmu *p, int json, int budget, int sve_bits)
{
	if (json) {
		printf("{");
		pf_json_kv(stdout, "pmu", p->name, 1);
		pf_json_kv(stdout, "title", p->title, 1);
		printf("\"counters_per_thread\": {\"smt\": %d, \"nosmt\": %d}, \"metrics\": {", p->counters_smt,
		       p->counters_nosmt);
		for (int m = 0; m < PFLOPS_NMETRIC; m++) {
			if (m)
				printf(", ");
			print_metric_json(p, m, budget, sve_bits);
		}
		printf("}}");
		return;
	}
	printf("PMU %s: %s\n", p->name, p->title);
	printf("  general counters per thread: %d with SMT, %d without%s%s\n", p->counters_smt, p->counters_nosmt,
	       p->libpfm[0] ? "; libpfm4 PMU " : "; raw encodings (libpfm4 4.13 lacks it)", p->libpfm);
	printf("  Metric    Avl  Class        Formula\n");
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		print_metric_text(p, m, budget, sve_bits);
}

/* One `perf stat -e` argument for the full event-select code cfg.  x86
 * "rNNNNNN" (as seed 001); a block whose kernel PMU is not `cpu` (hybrid:
 * cpu_core, cpu_atom, cpu_lowpower) names it, because perf applies a bare
 * raw code to every core PMU and on the E-cores the same code is another
 * event.  Arm keeps "rNNNN": its PMU's name differs between ACPI and
 * device-tree systems, and those parts have one core kind. */
static void perf_arg(const struct pflops_pmu *p, uint64_t cfg)
{
	const uint64_t flags = 0x530000ULL; /* USR OS INT EN: perf sets its own */
	if (p->arch != PFLOPS_ARCH_X86 || !strcmp(p->sysfs, "cpu"))
		printf("-e r%llx", (unsigned long long)cfg);
	else if (!(cfg & ~(flags | 0xffffULL)))
		printf("-e %s/event=0x%llx,umask=0x%llx/", p->sysfs, (unsigned long long)(cfg & 0xff),
		       (unsigned long long)((cfg >> 8) & 0xff));
	else
		printf("-e %s/config=0x%llx/", p->sysfs, (unsigned long long)(cfg & ~flags));
}

/* perf stat -e arguments for the metrics; with every metric (no METRIC
 * given), also the table's noted events (in no formula, kept so that
 * recordings made with them, such as seed 001's x87 code, can be redone). */
static int print_perf(const struct pflops_pmu *p, unsigned metrics, int sve_bits, int with_notes)
{
	struct pflops_plan plan;
	struct pflops_error err = { 0 };
	if (pflops_plan_make(&plan, p, metrics, sve_bits, &err)) {
		fprintf(stderr, "papi_flops_avail: %s\n", err.msg);
		return 1;
	}
	fprintf(stderr, "# %s (%s): ", p->title, p->name);
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (metrics & (1u << m)) {
			fprintf(stderr, "%s = ", pflops_metric_name(m));
			int first = 1;
			for (int c = 0; c < plan.ncounters; c++)
				if (plan.counter[c].weight[m] != 0) {
					fprintf(stderr, "%s%g*[%d]", first ? "" : " + ", plan.counter[c].weight[m], c);
					first = 0;
				}
			fprintf(stderr, "; ");
		}
	fprintf(stderr, "[i] = i-th event below\n");
	int n = 0;
	for (int c = 0; c < plan.ncounters; c++, n++) {
		printf("%s", n ? " " : "");
		perf_arg(p, plan.counter[c].config);
	}
	for (int e = 0; with_notes && e < p->nevents; e++) {
		uint64_t cfg;
		if (!p->events[e].note || pflops_encode(p, p->events[e].spec, &cfg, NULL, 0, &err))
			continue;
		fprintf(stderr, "# [%d] %s, in no formula: %s\n", n, p->events[e].spec, p->events[e].note);
		printf("%s", n++ ? " " : "");
		perf_arg(p, cfg);
	}
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "arch", required_argument, 0, 'a' },
		{ "topology", required_argument, 0, 't' },
		{ "json", no_argument, 0, 'j' },
		{ "perf", optional_argument, 0, 'p' },
		{ "save-topology", required_argument, 0, 's' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ 0, 0, 0, 0 },
	};
	const char *arch = NULL, *topo = NULL, *save = NULL, *perf_metric = NULL;
	int json = 0, perf = 0, c;
	pf_output_init("papi_flops_avail", 1);
	while ((c = getopt_long(argc, argv, "a:t:jp::s:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			arch = optarg;
			break;
		case 't':
			topo = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'p':
			perf = 1;
			perf_metric = optarg ? optarg
					     : (optind < argc && argv[optind][0] != '-' ? argv[optind++] : NULL);
			break;
		case 's':
			save = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("papi_flops_avail (papi-flops) %s\n", PF_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "papi_flops_avail: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	struct pflops_error err = { 0 };
	if (save) {
		if (pflops_probe_save_xml(save, &err)) {
			fprintf(stderr, "papi_flops_avail: %s\n", err.msg);
			return 1;
		}
		printf("wrote %s\n", save);
		return 0;
	}
	struct pflops_table t = { 0 };
	if (pflops_table_builtin(&t, &err)) {
		fprintf(stderr, "papi_flops_avail: %s\n", err.msg);
		return 1;
	}
	unsigned perf_metrics = 0;
	if (perf && perf_metric) {
		int m = pflops_metric_from_name(perf_metric);
		if (m < 0) {
			fprintf(stderr, "papi_flops_avail: unknown metric '%s'; use %s\n", perf_metric,
				PFLOPS_METRIC_NAMES);
			pflops_table_free(&t);
			return 2;
		}
		perf_metrics = 1u << m;
	}
	int rc = 0;
	if (arch) {
		int all = !strcasecmp(arch, "all");
		const struct pflops_pmu *one = all ? NULL : pflops_table_find(&t, arch);
		if (!all && !one) {
			fprintf(stderr,
				"papi_flops_avail: no PMU '%s' in the table; 'papi_flops_avail --arch all' lists them\n",
				arch);
			pflops_table_free(&t);
			return 2;
		}
		if (json)
			printf("{\"pmus\": [");
		for (int i = 0, n = 0; i < t.npmus; i++) {
			const struct pflops_pmu *p = &t.pmus[i];
			if (!all && p != one)
				continue;
			if (perf) {
				rc |= print_perf(p, perf_metrics ? perf_metrics : pflops_pmu_available(p), 0,
						 !perf_metrics);
				continue;
			}
			if (json)
				printf("%s", n ? ",\n " : "");
			else if (n)
				printf("\n");
			print_pmu(p, json, 0, 0);
			n++;
		}
		if (json)
			printf("]}\n");
		pflops_table_free(&t);
		return rc;
	}

	struct pflops_probe pr;
	if (pflops_probe_run(&pr, &t, topo, &err)) {
		fprintf(stderr, "papi_flops_avail: %s\n", err.msg);
		pflops_table_free(&t);
		return 1;
	}
	if (perf) {
		if (pr.live && pr.access.code)
			fprintf(stderr, "# note: %s\n", pr.access.msg);
		for (int k = 0; k < pr.nkinds; k++) {
			if (!pr.kinds[k].pmu) {
				fprintf(stderr, "papi_flops_avail: %s\n", pr.kinds[k].why);
				rc = 1;
				continue;
			}
			const struct pflops_pmu *kp = pr.kinds[k].pmu;
			if (!perf_metrics && !pflops_pmu_available(kp)) { /* Gracemont: nothing to record */
				fprintf(stderr, "# %s (%s), CPUs %s: no FLOP metric: %s\n", kp->title, kp->name,
					pr.kinds[k].cpus, kp->metrics[PFLOPS_FP_OPS].caveat);
				continue;
			}
			rc |= print_perf(kp, perf_metrics ? perf_metrics : pflops_pmu_available(kp),
					 pr.kinds[k].sve_bits, !perf_metrics);
		}
		pflops_table_free(&t);
		return rc;
	}
	/* masked AVX-512 lanes: can this kernel sample the opmask registers? */
	struct pfc_simd_caps simd;
	int show_simd = pr.live && x86_host();
	if (show_simd)
		pfc_simd_probe(&simd);
	if (json) {
		printf("{");
		pf_json_kv(stdout, "version", PF_VERSION, 1);
		pf_json_kv(stdout, "source", pr.source, 1);
		printf("\"access\": {\"available\": %s, ", pr.access.code ? "false" : "true");
		pf_json_kv(stdout, "reason", pr.access.msg, 1);
		pf_json_kv(stdout, "fix", pr.access.fix, 0);
		if (show_simd) {
			printf(", \"opmask_sampling\": {\"supported\": %s, ",
			       simd.verdict == PFC_SIMD_SUPPORTED ? "true" : "false");
			pf_json_kv(stdout, "reason", simd.msg, 1);
			pf_json_kv(stdout, "fix", simd.fix, 0);
			printf("}");
		}
		printf("}, \"kinds\": [");
	} else {
		printf("papi-flops %s FLOP metrics: %s\n", PF_VERSION, pr.source);
		printf("--------------------------------------------------------------------------------\n");
		printf("Counter access : %s%s\n", pr.access.code ? "NO: " : "", pr.access.msg);
		if (pr.access.fix[0])
			printf("Fix            : %s\n", pr.access.fix);
		if (pr.access.code)
			printf("No counters    : %s\n",
			       x86_host() ? "papi_flops_run --source trace -- PROGRAM counts FLOPs exactly"
					  : "the trace source, which needs none, is x86-64 only for now");
		if (show_simd) {
			printf("Opmask sampling: %s\n", simd.msg);
			if (simd.fix[0])
				printf("Fix            : %s\n", simd.fix);
		}
		printf("Core kinds     : %d\n", pr.nkinds);
	}
	for (int k = 0; k < pr.nkinds; k++) {
		const struct pflops_kind *kd = &pr.kinds[k];
		if (json) {
			printf("%s{", k ? ", " : "");
			pf_json_kv(stdout, "coretype", kd->coretype, 1);
			pf_json_kv(stdout, "cpus", kd->cpus, 1);
			pf_json_kv(stdout, "vendor", kd->vendor, 1);
			printf("\"family\": %u, \"model\": %u, \"stepping\": %u, \"smt\": %s, \"counters_per_thread\": %d, ",
			       kd->family, kd->model, kd->stepping, kd->smt ? "true" : "false", kd->budget);
			pf_json_kv(stdout, "model_name", kd->model_name, 1);
			pf_json_kv(stdout, "pmu", kd->pmu ? kd->pmu->name : "", 1);
			pf_json_kv(stdout, "why", kd->pmu ? "" : kd->why, 0);
			if (kd->pmu) {
				printf(", \"table\": ");
				print_pmu(kd->pmu, 1, kd->budget, kd->sve_bits);
			}
			printf("}");
			continue;
		}
		printf("--------------------------------------------------------------------------------\n");
		printf("Kind %d%s%s: CPUs %s (%d), %s family %u model %u stepping %u%s%s\n", k + 1,
		       kd->coretype[0] ? " " : "", kd->coretype, kd->cpus, kd->ncpus, kd->vendor, kd->family, kd->model,
		       kd->stepping, kd->model_name[0] ? ", " : "", kd->model_name);
		if (!kd->pmu) {
			printf("  %s\n", kd->why);
			continue;
		}
		printf("  SMT %s; %d general counters per thread%s\n", kd->smt ? "on" : "off", kd->budget,
		       pr.nmi_watchdog && kd->pmu->cycles_general ? " (the NMI watchdog holds one)" : "");
		print_pmu(kd->pmu, 0, kd->budget, kd->sve_bits);
	}
	if (json)
		printf("]}\n");
	pflops_table_free(&t);
	return 0;
}
