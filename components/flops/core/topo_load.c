/*
 * Loading a topology with hwloc: this machine in-process; a recorded one
 * (an hwloc XML file or a CPUID dump directory, both untrusted input) in a
 * child process.  hwloc 2.9 crashes on some malformed XML (lstopo does
 * too), and a crash there must become an error, not take the caller with
 * it.  The child hands back hwloc's own XML export of what it read, which
 * the parent loads: the parent never parses the user's file with hwloc.
 *
 * A CPUID dump is checked before and after: hwloc silently replays this
 * machine's CPUID when it does not like a dump, so the directory must be
 * one hwloc accepts (its own rules), and the topology hwloc built must
 * describe the CPU and the number of PUs the dump holds.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <hwloc.h>
#include "pflops_internal.h"

#define PF_HWLOC_TIMEOUT 10 /* seconds the child may take; a 224-PU machine takes 0.05 */

#define XML_FIX "make one with 'lstopo-no-graphics --of xml'"
#define DUMP_FIX "make the directory with hwloc-gather-cpuid"

/* ---- CPUID dumps ---- */

struct dump_id {
	char vendor[13];
	unsigned family, model, stepping;
	unsigned npus;
};

/* hwloc's lookup: the first entry whose masked inputs match */
static int dump_leaf(FILE *f, unsigned leaf, unsigned out[4])
{
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	rewind(f);
	while (!found && getline(&line, &cap, f) >= 0) {
		unsigned mask, in[4], o[4];
		if (line[0] == '#' || sscanf(line, "%x %x %x %x %x => %x %x %x %x", &mask, &in[0], &in[1], &in[2],
					     &in[3], &o[0], &o[1], &o[2], &o[3]) != 9)
			continue;
		const unsigned want[4] = { leaf, 0, 0, 0 };
		int match = 1;
		for (int r = 0; r < 4; r++)
			if ((mask >> r & 1) && in[r] != want[r])
				match = 0;
		if (match) {
			memcpy(out, o, sizeof(o));
			found = 1;
		}
	}
	free(line);
	return found;
}

/* Family, model and stepping from leaf 1 as hwloc's x86 backend derives them. */
static void dump_fms(const char *vendor, unsigned eax, struct dump_id *id)
{
	int intel = !strcmp(vendor, "GenuineIntel");
	int amd = !strcmp(vendor, "AuthenticAMD") || !strcmp(vendor, "HygonGenuine");
	int zhaoxin = !strcmp(vendor, "CentaurHauls") || !strcmp(vendor, "  Shanghai  ");
	unsigned model = eax >> 4 & 0xf, xmodel = eax >> 16 & 0xf, family = eax >> 8 & 0xf, xfamily = eax >> 20 & 0xff;
	id->family = (intel || amd) && family == 0xf ? family + xfamily : family;
	id->model = (intel && (family == 6 || family == 0xf)) || (amd && family == 0xf) ||
				    (zhaoxin && (family == 6 || family == 7))
			    ? model + (xmodel << 4)
			    : model;
	id->stepping = eax & 0xf;
}

/* What hwloc's x86 backend requires of a dump (else it replays this
 * machine), and the CPU the dump describes. */
static int dump_check(const char *dir, struct dump_id *id, struct pflops_error *err)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/hwloc-cpuid-info", dir);
	if (access(path, F_OK))
		return pfc_err(
			err, PFLOPS_EINVAL,
			"%s: not a CPUID dump (no hwloc-cpuid-info); give an hwloc XML file or a directory made by hwloc-gather-cpuid",
			dir);
	FILE *f = pfc_input_open(path, "CPUID dump files", PF_MAX_CPUID_MIB, err);
	if (!f)
		return err ? err->code : PFLOPS_EINVAL;
	char first[32];
	int ok = fgets(first, sizeof(first), f) && !strcmp(first, "Architecture: x86\n");
	fclose(f);
	if (!ok)
		return pfc_err(err, PFLOPS_EINVAL,
			       "%s: not an x86 CPUID dump (its first line is not 'Architecture: x86'); " DUMP_FIX,
			       path);

	/* pu0 .. puN-1, no gaps: hwloc ignores the dump otherwise */
	DIR *d = opendir(dir);
	if (!d)
		return pfc_err(err, PFLOPS_ESYS, "%s: cannot list: %s", dir, strerror(errno));
	unsigned long n = 0, max = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, "pu", 2))
			continue;
		char *end;
		unsigned long idx = strtoul(e->d_name + 2, &end, 10);
		if (*end || !e->d_name[2] || !isdigit((unsigned char)e->d_name[2]))
			continue; /* hwloc skips these too */
		/* hwloc reads every pu file in the child: no FIFO for it to wait on */
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		int rc = pfc_input_check(path, "CPUID dump files", PF_MAX_CPUID_MIB, err);
		if (rc) {
			closedir(d);
			return rc;
		}
		n++;
		if (idx > max)
			max = idx;
	}
	closedir(d);
	if (!n || max != n - 1)
		return pfc_err(err, PFLOPS_EINVAL,
			       "%s: %s; a CPUID dump has files pu0 to puN-1, one per logical processor; " DUMP_FIX, dir,
			       n ? "the pu files are not numbered 0 to N-1 without gaps" : "no pu0 file");
	id->npus = n;

	snprintf(path, sizeof(path), "%s/pu0", dir);
	if (!(f = pfc_input_open(path, "CPUID dump files", PF_MAX_CPUID_MIB, err)))
		return err ? err->code : PFLOPS_EINVAL;
	unsigned l0[4], l1[4];
	ok = dump_leaf(f, 0, l0) && dump_leaf(f, 1, l1);
	fclose(f);
	if (!ok)
		return pfc_err(err, PFLOPS_EINVAL, "%s: no CPUID leaf 0 or 1 (vendor, family, model); " DUMP_FIX, path);
	memcpy(id->vendor, &l0[1], 4); /* ebx, edx, ecx */
	memcpy(id->vendor + 4, &l0[3], 4);
	memcpy(id->vendor + 8, &l0[2], 4);
	id->vendor[12] = 0;
	for (int i = 0; i < 12; i++)
		if (!isprint((unsigned char)id->vendor[i]))
			id->vendor[i] = '?';
	dump_fms(id->vendor, l1[0], id);
#if !defined(__x86_64__)
	/* hwloc builds its x86 backend, the one that replays, on x86 only */
	return pfc_err(err, PFLOPS_EINVAL,
		       "%s: a CPUID dump of %s family %u model %u, which only an x86-64 hwloc replays; "
		       "give an hwloc XML file of that machine instead (lstopo-no-graphics --of xml there)",
		       dir, id->vendor, id->family, id->model);
#endif
	return 0;
}

const char *pfc_obj_info(hwloc_obj_t o, const char *name)
{
	for (; o; o = o->parent) {
		const char *v = hwloc_obj_get_info_by_name(o, name);
		if (v)
			return v;
	}
	return NULL;
}

/* Did hwloc build the topology from the dump, not from this machine? */
static int dump_replayed(hwloc_topology_t topo, const char *dir, const struct dump_id *id, struct pflops_error *err)
{
	hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, 0);
	const char *v = pfc_obj_info(pu, "CPUVendor"), *fa = pfc_obj_info(pu, "CPUFamilyNumber"),
		   *mo = pfc_obj_info(pu, "CPUModelNumber"), *st = pfc_obj_info(pu, "CPUStepping");
	int npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	if (v && fa && mo && st && !strcmp(v, id->vendor) && strtoul(fa, NULL, 0) == id->family &&
	    strtoul(mo, NULL, 0) == id->model && strtoul(st, NULL, 0) == id->stepping && npus == (int)id->npus)
		return 0;
	return pfc_err(
		err, PFLOPS_EINVAL,
		"%s: hwloc did not replay this CPUID dump: it describes %s family %u model %u stepping %u on %u PUs, hwloc built %s %s/%s/%s on %d PUs; the dump is damaged or incomplete: " DUMP_FIX
		" again",
		dir, id->vendor, id->family, id->model, id->stepping, id->npus, v ? v : "no CPU", fa ? fa : "-",
		mo ? mo : "-", st ? st : "-", npus);
}

/* ---- the child ---- */

struct reply {
	int code; /* PFLOPS_OK: len bytes of hwloc XML follow */
	char msg[PFLOPS_ERRMSG_MAX];
	uint64_t len;
};

static int write_all(int fd, const void *buf, size_t len)
{
	for (const char *p = buf; len;) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static size_t read_all(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/* hwloc reads the file; its XML export goes to fd.  Never returns. */
static void child(int fd, const char *path, int isdir)
{
	/* die by the signal, not in a handler the caller (or ASan) set */
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGALRM };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	alarm(PF_HWLOC_TIMEOUT);
	struct pflops_error err = { 0 };
	struct reply r = { 0 };
	hwloc_topology_t topo, again;
	char *xml = NULL;
	int len = 0;
	if (hwloc_topology_init(&topo)) {
		r.code = pfc_err(&err, PFLOPS_ENOMEM, "hwloc_topology_init failed");
	} else if (isdir) {
		/* only the x86 backend: this machine's sysfs must not mix in */
		if (setenv("HWLOC_CPUID_PATH", path, 1) ||
		    hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "linux") ||
		    hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "linuxio"))
			r.code = pfc_err(&err, PFLOPS_ESYS, "cannot configure hwloc for %s", path);
	} else if (hwloc_topology_set_xml(topo, path)) {
		r.code = pfc_err(&err, PFLOPS_EINVAL, "%s: hwloc cannot read it as topology XML (%s); " XML_FIX, path,
				 strerror(errno));
	}
	if (!r.code && hwloc_topology_load(topo))
		r.code = pfc_err(&err, PFLOPS_EINVAL, "%s: hwloc failed to load the topology (%s); %s", path,
				 strerror(errno), isdir ? DUMP_FIX : XML_FIX);
	if (!r.code && hwloc_topology_export_xmlbuffer(topo, &xml, &len, 0))
		r.code = pfc_err(&err, PFLOPS_EINVAL, "%s: hwloc cannot export what it read (%s)", path,
				 strerror(errno));
	/* the parent will load this export: load it here first, so that a
	 * crash on it (hwloc's own XML) happens in this process too */
	if (!r.code) {
		if (hwloc_topology_init(&again) || hwloc_topology_set_xmlbuffer(again, xml, len) ||
		    hwloc_topology_load(again))
			r.code = pfc_err(&err, PFLOPS_EINVAL, "%s: hwloc cannot load its own export of it", path);
		else
			hwloc_topology_destroy(again);
	}
	if (r.code)
		snprintf(r.msg, sizeof(r.msg), "%s", err.msg);
	else
		r.len = (uint64_t)len;
	int bad = write_all(fd, &r, sizeof(r)) || (r.len && write_all(fd, xml, len));
	_exit(bad ? 3 : 0); /* no atexit handlers of the caller's process */
}

static int load_in_child(hwloc_topology_t *topo, const char *path, int isdir, struct pflops_error *err)
{
	int fds[2];
	if (pipe(fds))
		return pfc_err(err, PFLOPS_ESYS, "pipe: %s", strerror(errno));
	pid_t pid = fork(); /* the child ends in _exit: the caller's stdio buffers stay unwritten there */
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return pfc_err(err, PFLOPS_ESYS, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], path, isdir);
	}
	close(fds[1]);
	struct reply r;
	char *xml = NULL;
	int complete = read_all(fds[0], &r, sizeof(r)) == sizeof(r) && r.msg[sizeof(r.msg) - 1] == 0;
	if (complete && !r.code) {
		xml = r.len < (1u << 30) ? malloc(r.len + 1) : NULL;
		complete = xml && read_all(fds[0], xml, r.len) == r.len;
	}
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	int rc;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		rc = pfc_err(err, PFLOPS_EINVAL, "hwloc could not read %s (it did not finish in %d s); %s", path,
			     PF_HWLOC_TIMEOUT, isdir ? DUMP_FIX : XML_FIX);
	else if (!complete || WIFSIGNALED(status) || WEXITSTATUS(status))
		rc = pfc_err(err, PFLOPS_EINVAL,
			     "hwloc could not read %s (it crashed on it%s%s); the file is damaged: %s", path,
			     WIFSIGNALED(status) ? ": " : "", WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "",
			     isdir ? DUMP_FIX " again" : XML_FIX " again");
	else if (r.code)
		rc = pfc_err(err, r.code, "%s", r.msg);
	else if (hwloc_topology_init(topo))
		rc = pfc_err(err, PFLOPS_ENOMEM, "hwloc_topology_init failed");
	else if (hwloc_topology_set_xmlbuffer(*topo, xml, (int)r.len) || hwloc_topology_load(*topo)) {
		hwloc_topology_destroy(*topo);
		rc = pfc_err(err, PFLOPS_EINVAL, "%s: hwloc cannot load its own export of it", path);
	} else {
		rc = 0;
	}
	free(xml);
	return rc;
}

int pfc_topology_load(hwloc_topology_t *topo, const char *path, struct pflops_error *err)
{
	if (!path) { /* this machine */
		if (hwloc_topology_init(topo))
			return pfc_err(err, PFLOPS_ENOMEM, "hwloc_topology_init failed");
		if (hwloc_topology_load(*topo)) {
			int rc = pfc_err(err, PFLOPS_ESYS, "this machine: hwloc failed to load the topology (%s)",
					 strerror(errno));
			hwloc_topology_destroy(*topo);
			return rc;
		}
		return 0;
	}
	struct stat st;
	if (stat(path, &st))
		return pfc_err(err, PFLOPS_ENOENT, "%s: cannot read topology: %s", path, strerror(errno));
	int isdir = S_ISDIR(st.st_mode);
	struct dump_id id;
	int rc = isdir ? dump_check(path, &id, err)
		       : pfc_input_check(path, "topology XML files", PF_MAX_TOPOLOGY_MIB, err);
	if (!rc)
		rc = load_in_child(topo, path, isdir, err);
	if (!rc && isdir && (rc = dump_replayed(*topo, path, &id, err)))
		hwloc_topology_destroy(*topo);
	return rc;
}
