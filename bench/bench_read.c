/*
 * bench_read: user-space instructions of one read of a flops event set,
 * counted by callgrind (stable on any machine, counters or not).
 *
 *   engine: what the flops component's read does after PAPI's framework
 *           hands it over: pfc_perf_read (one read() per group),
 *           pfc_perf_sum (scaling, kinds) and the plan's weighted sum,
 *           for skx's FP_OPS plan (5 counters, one group).
 *   floor:  one read() of the same group and a copy of the values: the
 *           least any perf_event-based component (PAPI's perf_event
 *           included, on its non-rdpmc path) must do for the same natives.
 *
 * The events opened are software events (task-clock, page-faults ...),
 * because this project's machines expose no hardware counters; the
 * user-space path is the same for hardware events (rdpmc aside).
 * Only the functions bench_engine_read / bench_floor_read are counted
 * (callgrind --toggle-collect); the script divides by the number of reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "papi_flops.h"
#include "pflops_perf.h"

#define NC 5
static struct pfc_perf_set *set;
static struct pfc_perf_value vals[NC];
static double slots[NC];
static double weight[NC] = { 1, 2, 4, 8, 16 };
static long long out[2];

__attribute__((noinline)) void bench_engine_read(void)
{
	struct pfc_perf_status st;
	if (pfc_perf_read(set, vals, NULL))
		abort();
	pfc_perf_sum(set, vals, slots, NC, &st);
	double v = 0;
	for (int c = 0; c < NC; c++)
		v += weight[c] * slots[c];
	out[0] = (long long)(v + 0.5);
	out[1] = st.estimated;
}

static int leader_fd = -1;
__attribute__((noinline)) void bench_floor_read(void)
{
	uint64_t buf[3 + NC];
	if (read(leader_fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		abort();
	for (int c = 0; c < NC; c++)
		out[c & 1] = (long long)buf[3 + c];
}

int main(int argc, char **argv)
{
	int floor_mode = argc > 1 && !strcmp(argv[1], "floor");
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	static const uint64_t cfg[NC] = { PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
					  PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CPU_MIGRATIONS,
					  PERF_COUNT_SW_PAGE_FAULTS_MIN };
	struct pfc_perf_event ev[NC];
	memset(ev, 0, sizeof(ev));
	for (int c = 0; c < NC; c++) {
		ev[c].type = PERF_TYPE_SOFTWARE;
		ev[c].config = cfg[c];
		ev[c].slot = c;
		ev[c].cpu = -1;
	}
	struct pfc_perf_attr a = { .exclude_kernel = 1 };
	struct pflops_error err = { 0 };
	if (pfc_perf_open(&set, ev, NC, &a, &err) || pfc_perf_start(set, &err)) {
		fprintf(stderr, "bench_read: %s\n", err.msg);
		return 1;
	}
	/* the floor reads the engine's group leader directly: same kernel work */
	for (int fd = 3; fd < 64 && leader_fd < 0; fd++) {
		uint64_t buf[3 + NC];
		if (read(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf) && buf[0] == NC)
			leader_fd = fd;
	}
	if (leader_fd < 0) {
		fprintf(stderr, "bench_read: group leader not found\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (floor_mode)
			bench_floor_read();
		else
			bench_engine_read();
	}
	printf("%s: %d reads, last value %lld\n", floor_mode ? "floor" : "engine", n, out[0]);
	pfc_perf_close(set);
	return 0;
}
