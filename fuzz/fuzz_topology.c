/*
 * Fuzz topology loading (components/flops/core/topo_load.c, probe.c):
 * untrusted hwloc XML files and CPUID dump directories.  hwloc reads them
 * in a child process, so a crash inside hwloc must come back as an error
 * naming the file, never take this process down.
 * Input: hwloc XML; or, when it starts with "Architecture:", a CPUID dump:
 * hwloc-cpuid-info, then pu0, pu1 ... each after a line "====".
 * Invariants: an error names the file or directory; an accepted topology
 * has 1..PFLOPS_MAX_KINDS core kinds, each with a PMU or the reason why
 * not.
 */
#include "fuzz.h"
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <sanitizer/common_interface_defs.h>
#include "papi_flops.h"

#define SEP "\n====\n"

static struct pflops_table T;
static char dir[64], xml[80];

static void clear_dir(void);

/* hwloc's own crashes happen in the library's child process, where ASan
 * (it intercepts hwloc's malloc) reports them: the child must die without
 * libFuzzer's death callback, which would record the input as a crash of
 * this process.  The parent's error for it is what is checked. */
static void in_child(void)
{
	__sanitizer_set_death_callback(NULL);
}

static void cleanup(void)
{
	clear_dir();
	rmdir(dir);
	unlink(xml);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct pflops_error err = { 0 };
	if (pflops_table_builtin(&T, &err))
		FUZZ_CHECK(0, "builtin table: %s", err.msg);
	snprintf(dir, sizeof(dir), "%s/pflops_fuzz_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	FUZZ_CHECK(mkdtemp(dir), "mkdtemp %s", dir);
	snprintf(xml, sizeof(xml), "%s.xml", dir);
	atexit(cleanup);
	pthread_atfork(NULL, NULL, in_child);
	return 0;
}

static void put(const char *name, const char *data, size_t len)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	FUZZ_CHECK(fd >= 0 && write(fd, data, len) == (ssize_t)len && close(fd) == 0, "write %s", path);
}

static void clear_dir(void)
{
	DIR *d = opendir(dir);
	FUZZ_CHECK(d, "opendir %s", dir);
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const char *path = xml;
	if (size >= 13 && !memcmp(data, "Architecture:", 13)) {
		clear_dir();
		const char *p = (const char *)data, *end = p + size;
		for (int part = 0; p <= end && part < 65; part++) {
			const char *sep = memmem(p, end - p, SEP, strlen(SEP));
			size_t len = sep ? (size_t)(sep - p) : (size_t)(end - p);
			char name[32];
			if (part == 0)
				snprintf(name, sizeof(name), "hwloc-cpuid-info");
			else
				snprintf(name, sizeof(name), "pu%d", part - 1);
			put(name, p, len);
			if (!sep)
				break;
			p = sep + strlen(SEP);
		}
		path = dir;
	} else {
		int fd = open(xml, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		FUZZ_CHECK(fd >= 0 && write(fd, data, size) == (ssize_t)size && close(fd) == 0, "write %s", xml);
	}
	struct pflops_probe pr;
	struct pflops_error err = { 0 };
	int rc = pflops_probe_run(&pr, &T, path, &err);
	if (rc) {
		FUZZ_CHECK(strstr(err.msg, path) || rc == PFLOPS_ENOMEM, "rc %d: '%s'", rc, err.msg);
		return 0;
	}
	FUZZ_CHECK(pr.nkinds >= 1 && pr.nkinds <= PFLOPS_MAX_KINDS, "%d kinds", pr.nkinds);
	for (int k = 0; k < pr.nkinds; k++)
		FUZZ_CHECK(pr.kinds[k].pmu || pr.kinds[k].why[0], "kind %d: a PMU or why not", k);
	return 0;
}
