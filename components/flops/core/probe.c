/*
 * The probe: which PMU formula applies to each kind of core, how many
 * counters each logical thread leaves us, and whether counting is allowed
 * at all.  CPU identity and core kinds come from hwloc (its x86 backend
 * reads CPUID, including the hybrid core type); only what hwloc does not
 * know (perf_event_paranoid, capabilities, the NMI watchdog, the perf
 * PMUs the kernel exposes) is read from /proc and /sys.
 */
#include <dirent.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <hwloc.h>
#include "pflops_count.h"
#include "pflops_internal.h"

static unsigned num(const char *s)
{
	return s ? (unsigned)strtoul(s, NULL, 0) : 0;
}

static int read_int(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int rc = fscanf(f, "%d", v) == 1 ? 0 : -1;
	fclose(f);
	return rc;
}

/* Identity of the CPU a kind's first PU belongs to. */
static void identify(hwloc_topology_t topo, hwloc_const_bitmap_t set, struct pflops_kind *k)
{
	hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(topo, set, HWLOC_OBJ_PU, 0);
	const char *vendor = pfc_obj_info(pu, "CPUVendor");
	if (vendor) {
		snprintf(k->vendor, sizeof(k->vendor), "%s", pflops_vendor_word(vendor));
		k->family = num(pfc_obj_info(pu, "CPUFamilyNumber"));
		k->model = num(pfc_obj_info(pu, "CPUModelNumber"));
		k->stepping = num(pfc_obj_info(pu, "CPUStepping"));
	} else if (pfc_obj_info(pu, "CPUImplementer")) { /* Linux on Arm: /proc/cpuinfo fields */
		snprintf(k->vendor, sizeof(k->vendor), "arm");
		k->family = num(pfc_obj_info(pu, "CPUImplementer"));
		k->model = num(pfc_obj_info(pu, "CPUPart"));
		k->stepping = num(pfc_obj_info(pu, "CPUVariant"));
	}
	const char *mn = pfc_obj_info(pu, "CPUModel");
	snprintf(k->model_name, sizeof(k->model_name), "%s", mn ? mn : "");
	/* SMT: some core of the kind holds more than one PU */
	hwloc_obj_t core = NULL;
	while ((core = hwloc_get_next_obj_inside_cpuset_by_type(topo, set, HWLOC_OBJ_CORE, core)))
		if (hwloc_bitmap_weight(core->cpuset) > 1)
			k->smt = 1;
}

static void choose_pmu(const struct pflops_table *t, struct pflops_kind *k, int nmi)
{
	k->pmu = k->vendor[0] ? pflops_table_match(t, k->vendor, k->family, k->model, k->stepping, k->coretype) : NULL;
	/* the vector length in effect: on a live machine this process's
	 * (whether or not the table knows the part), else the part's */
	k->sve_bits = nmi >= 0 && pfc_sve_vl_bits() > 0 ? pfc_sve_vl_bits() : k->pmu ? k->pmu->sve_bits : 0;
	if (!k->pmu) {
		if (!k->vendor[0])
			snprintf(k->why, sizeof(k->why),
				 "unknown CPU: the topology names no CPU vendor; no FLOP formula");
		else {
			char why[sizeof(k->why)];
			snprintf(
				why, sizeof(why),
				"unknown CPU: vendor %s family %u model %u stepping %u%s%s; no FLOP formula (add a block to presets/, see presets/README.md)",
				k->vendor, k->family, k->model, k->stepping, k->coretype[0] ? " core " : "",
				k->coretype);
			memcpy(k->why, why, sizeof(why));
		}
		return;
	}
	k->budget = pflops_budget(k->pmu, k->smt, nmi > 0, 0);
	k->budget_cycles = pflops_budget(k->pmu, k->smt, nmi > 0, 1);
}

int pflops_budget(const struct pflops_pmu *pmu, int smt, int nmi_watchdog, int needs_cycles)
{
	int n = smt ? pmu->counters_smt : pmu->counters_nosmt;
	if (pmu->cycles_general)
		n -= !!nmi_watchdog + !!needs_cycles;
	else if (nmi_watchdog && needs_cycles)
		n--; /* the watchdog has the fixed cycles counter: ours goes general */
	return n > 0 ? n : 0;
}

static int has_cap(int bit)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long cap = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7))
			cap = strtoull(line + 7, NULL, 16);
	fclose(f);
	return (cap >> bit) & 1;
}

/* Which hardware PMUs the kernel exposes to perf_event_open. */
/* A core PMU's perf name: one the table names (`sysfs`: cpu, cpu_core,
 * cpu_atom, cpu_lowpower ...), or Arm's, which the kernel names per
 * system: armv8_pmuv3_0 with ACPI, after the core from a device tree
 * (arm_pmuv3.c: armv8_neoverse_v1/v2/v3, armv9_neoverse_n2/n3). */
static int core_pmu(const struct pflops_table *t, const char *name)
{
	if (!strncmp(name, "armv8_", 6) || !strncmp(name, "armv9_", 6))
		return 1;
	for (int i = 0; i < t->npmus; i++)
		if (!strcmp(t->pmus[i].sysfs, name))
			return 1;
	return 0;
}

static const char *sysfs_base(void)
{
	return getenv("PAPI_FLOPS_SYSFS") ? getenv("PAPI_FLOPS_SYSFS") : "/sys/bus/event_source/devices";
}

static int hw_pmus(const struct pflops_table *t, char *list, size_t len)
{
	DIR *d = opendir(sysfs_base());
	int n = 0;
	list[0] = 0;
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));)
		if (core_pmu(t, e->d_name)) {
			size_t l = strlen(list);
			snprintf(list + l, len - l, "%s%.32s", n ? ", " : "", e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

/* The Arm PMU whose sysfs `cpus` file lists exactly the kind's CPUs
 * (the kernel gives each kind of a big.LITTLE system its own). */
static int arm_pmu_of(const struct pflops_kind *k, char *name, size_t len)
{
	DIR *d = opendir(sysfs_base());
	int found = 0;
	if (!d)
		return 0;
	for (struct dirent *e; !found && (e = readdir(d));) {
		char path[512], cpus[sizeof(k->cpus)];
		if (strncmp(e->d_name, "armv8_", 6) && strncmp(e->d_name, "armv9_", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%.200s/cpus", sysfs_base(), e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(cpus, sizeof(cpus), f)) {
			cpus[strcspn(cpus, "\n")] = 0;
			if (!strcmp(cpus, k->cpus))
				found = snprintf(name, len, "%s", e->d_name) < (int)len;
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

/* The perf PMU that counts on kind k, whether or not the table knows it:
 * a kind without a formula still needs one to time it on a hybrid
 * machine.  x86: the hybrid core type's (cpu_core, cpu_atom,
 * cpu_lowpower), else cpu; Arm: its own PMU from sysfs, else the
 * table's; "" when none is known. */
static void perf_pmu_of(struct pflops_kind *k, int hybrid)
{
	static const char *const x86[][2] = { { "IntelCore", "cpu_core" },
					      { "IntelAtom", "cpu_atom" },
					      { "IntelLowPower", "cpu_lowpower" } };
	k->perf_pmu[0] = 0;
	if (!strcmp(k->vendor, "arm")) {
		if (!arm_pmu_of(k, k->perf_pmu, sizeof(k->perf_pmu)) && k->pmu)
			snprintf(k->perf_pmu, sizeof(k->perf_pmu), "%s", k->pmu->sysfs);
		return;
	}
	if (!hybrid) {
		snprintf(k->perf_pmu, sizeof(k->perf_pmu), "%s", k->pmu ? k->pmu->sysfs : "cpu");
		return;
	}
	for (size_t i = 0; i < sizeof(x86) / sizeof(x86[0]); i++)
		if (!strcmp(k->coretype, x86[i][0]))
			snprintf(k->perf_pmu, sizeof(k->perf_pmu), "%s", x86[i][1]);
	if (!k->perf_pmu[0] && k->pmu)
		snprintf(k->perf_pmu, sizeof(k->perf_pmu), "%s", k->pmu->sysfs);
}

static void access_verdict(struct pflops_probe *pr, const struct pflops_table *t)
{
	struct pflops_access *a = &pr->access;
	char pmus[256];
	int root = has_cap(21) /* CAP_SYS_ADMIN */, perfmon = has_cap(38) /* CAP_PERFMON */;
	if (read_int("/proc/sys/kernel/perf_event_paranoid", &pr->paranoid))
		pr->paranoid = -99;
	if (!hw_pmus(t, pmus, sizeof(pmus))) {
		a->code = PFLOPS_ENOPMU;
		snprintf(
			a->msg, sizeof(a->msg),
			"no hardware PMU is exposed: /sys/bus/event_source/devices has no core PMU (cpu, cpu_core, cpu_atom, cpu_lowpower, armv8_*, armv9_*): a virtual machine whose hypervisor hides the counters");
		snprintf(
			a->fix, sizeof(a->fix),
			"enable the guest PMU (KVM/QEMU: -cpu host,pmu=on; VMware: virtualize CPU performance counters; cloud: a bare-metal or PMU-enabled instance)");
		return;
	}
	if (pr->paranoid > 2 && !root && !perfmon) {
		a->code = PFLOPS_EPERM;
		snprintf(
			a->msg, sizeof(a->msg),
			"perf_event_paranoid is %d, which forbids unprivileged counting (Debian's default), and this process has neither CAP_PERFMON nor CAP_SYS_ADMIN",
			pr->paranoid);
		snprintf(
			a->fix, sizeof(a->fix),
			"sudo sysctl kernel.perf_event_paranoid=2 (user-space counting of your own processes), or grant CAP_PERFMON to the program");
		return;
	}
	a->code = PFLOPS_OK;
	snprintf(a->msg, sizeof(a->msg), "hardware counters available (%.160s; perf_event_paranoid %d%s)", pmus,
		 pr->paranoid,
		 root	   ? ", CAP_SYS_ADMIN"
		 : perfmon ? ", CAP_PERFMON"
			   : "");
	if (pr->paranoid > 1 && !root && !perfmon)
		snprintf(a->fix, sizeof(a->fix),
			 "user-space only: kernel FLOPs need perf_event_paranoid <= 1 or CAP_PERFMON");
	else
		a->fix[0] = 0;
}

int pflops_probe_run(struct pflops_probe *pr, const struct pflops_table *t, const char *topology,
		     struct pflops_error *err)
{
	memset(pr, 0, sizeof(*pr));
	pr->live = topology == NULL;
	snprintf(pr->source, sizeof(pr->source), "%s", topology ? topology : "this machine");
	hwloc_topology_t topo;
	int rc = pfc_topology_load(&topo, topology, err);
	if (rc)
		return rc;
	if (pr->live && read_int("/proc/sys/kernel/nmi_watchdog", &pr->nmi_watchdog))
		pr->nmi_watchdog = 0;
	int nk = hwloc_cpukinds_get_nr(topo, 0);
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	for (int i = 0; i < (nk > 0 ? nk : 1) && pr->nkinds < PFLOPS_MAX_KINDS; i++) {
		struct pflops_kind *k = &pr->kinds[pr->nkinds];
		unsigned ninfos = 0;
		struct hwloc_info_s *infos = NULL;
		if (nk > 0) {
			if (hwloc_cpukinds_get_info(topo, i, set, NULL, &ninfos, &infos, 0))
				continue;
			for (unsigned j = 0; j < ninfos; j++)
				if (!strcmp(infos[j].name, "CoreType"))
					snprintf(k->coretype, sizeof(k->coretype), "%s", infos[j].value);
		} else {
			hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(topo));
		}
		k->ncpus = hwloc_bitmap_weight(set);
		hwloc_bitmap_list_snprintf(k->cpus, sizeof(k->cpus), set);
		identify(topo, set, k);
		choose_pmu(t, k, pr->live ? pr->nmi_watchdog : -1);
		pr->nkinds++;
	}
	hwloc_bitmap_free(set);
	hwloc_topology_destroy(topo);
	for (int i = 0; i < pr->nkinds; i++)
		perf_pmu_of(&pr->kinds[i], pr->nkinds > 1);
	if (pr->live) {
		access_verdict(pr, t);
	} else {
		pr->paranoid = -99;
		pr->access.code = PFLOPS_OK;
		snprintf(pr->access.msg, sizeof(pr->access.msg), "replayed topology: counter access not checked");
	}
	return 0;
}

int pflops_probe_save_xml(const char *path, struct pflops_error *err)
{
	hwloc_topology_t topo;
	int rc = pfc_topology_load(&topo, NULL, err);
	if (rc)
		return rc;
	if (hwloc_topology_export_xml(topo, path, 0))
		rc = pfc_err(err, PFLOPS_ESYS, "%s: cannot write topology XML: %s", path, strerror(errno));
	hwloc_topology_destroy(topo);
	return rc;
}

int pflops_probe_fit(const struct pflops_kind *k, unsigned metrics, struct pflops_plan *plan, char *msg, size_t msglen)
{
	if (!k->pmu) {
		snprintf(msg, msglen, "%s", k->why);
		return PFLOPS_ENOCPU;
	}
	struct pflops_error err = { 0 };
	int rc = pflops_plan_make(plan, k->pmu, metrics, k->sve_bits, &err);
	if (rc) {
		snprintf(msg, msglen, "%s", err.msg);
		return rc;
	}
	if (plan->cost > k->budget) {
		snprintf(msg, msglen, "needs %d counters, %d per thread here: multiplexed (scaled estimate)",
			 plan->cost, k->budget);
		return 1;
	}
	snprintf(msg, msglen, "fits: %d of %d counters", plan->cost, k->budget);
	return 0;
}
