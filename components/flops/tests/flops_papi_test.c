/*
 * flops_papi_test: the flops component through PAPI's public API only,
 * against the libpapi built with it.  Run under LIBPFM_FORCE_PMU=<pmu> or
 * PAPI_FLOPS_PMU=<table pmu> (tests/papi_component.sh does, for several).
 *
 *   flops_papi_test EXPECT_PMU [counting|nocounting]
 *
 * Lists the component's events, round-trips every name and qualifier
 * through name -> code -> name and PAPI_get_event_info (value types:
 * SCALED absolute, counts running sums), adds FP_OPS,
 * DP_OPS and SP_OPS (those the PMU has) to one event set, and then either
 * counts (a machine with counters) or checks that PAPI_start fails with
 * the component's reason (this project's counter-less machines).  Prints
 * one line per check; exit 0 all passed, 1 a check failed, 77 skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "papi.h"

#include "check.h"

static volatile double sink;

static void dp_kernel(long n)
{
	double a = 1.0, b = 1.000001;
	for (long i = 0; i < n; i++)
		a = a * b + 1e-9;
	sink = a;
}

int main(int argc, char **argv)
{
	const char *expect_pmu = argc > 1 ? argv[1] : NULL;
	int counting = argc > 2 && !strcmp(argv[2], "counting");
	int rc = PAPI_library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT) {
		printf("FAIL: PAPI_library_init: %s\n", PAPI_strerror(rc));
		return 1;
	}
	int cid = PAPI_get_component_index("flops");
	if (cid < 0) {
		printf("skip: this libpapi has no flops component\n");
		return 77;
	}
	const PAPI_component_info_t *ci = PAPI_get_component_info(cid);
	CHECK(ci && (ci->disabled == 0 || ci->disabled == PAPI_EDELAY_INIT),
	      "component usable for listing (disabled=%d: %s)", ci ? ci->disabled : -999,
	      ci ? ci->disabled_reason : "");
	if (expect_pmu)
		CHECK(!strcmp(ci->support_version, expect_pmu), "formula table PMU '%s' (expected '%s')",
		      ci->support_version, expect_pmu);

	/* enumeration, names, qualifiers */
	int code = PAPI_NATIVE_MASK, nev = 0, nqual = 0, have[3] = { 0 };
	const char *want[3] = { "flops:::FP_OPS", "flops:::DP_OPS", "flops:::SP_OPS" };
	rc = PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cid);
	CHECK(rc == PAPI_OK, "PAPI_enum_cmp_event(FIRST): %s", PAPI_strerror(rc));
	while (rc == PAPI_OK) {
		char name[PAPI_MAX_STR_LEN];
		PAPI_event_info_t info;
		int back = 0;
		nev++;
		int r1 = PAPI_event_code_to_name(code, name);
		int r2 = PAPI_event_name_to_code(name, &back);
		int r3 = PAPI_get_event_info(code, &info);
		if (r1 || r2 || r3 || back != code || strcmp(info.symbol, name) || strncmp(name, "flops:::", 8))
			CHECK(0, "round trip of %#x: name '%s' (%d), code %#x (%d), info '%s' (%d)", code, name, r1,
			      back, r2, info.symbol, r3);
		for (int i = 0; i < 3; i++)
			if (!strcmp(name, want[i]))
				have[i] = 1;
		/* a flag is an absolute value of the moment, counts are running sums */
		int flag = !strcmp(name, "flops:::SCALED");
		if (!r3 && (info.value_type != (flag ? PAPI_VALUETYPE_ABSOLUTE : PAPI_VALUETYPE_RUNNING_SUM) ||
			    info.timescope != (flag ? PAPI_TIMESCOPE_POINT : PAPI_TIMESCOPE_SINCE_START)))
			CHECK(0, "%s: value type %d, time scope %d", name, info.value_type, info.timescope);
		if (flag || !strcmp(name, "flops:::UNCOVERED_NS"))
			CHECK(!r3 && info.value_type == (flag ? PAPI_VALUETYPE_ABSOLUTE : PAPI_VALUETYPE_RUNNING_SUM),
			      "%s value type %s", name,
			      info.value_type == PAPI_VALUETYPE_ABSOLUTE ? "absolute" : "running sum");
		if (!strcmp(name, "flops:::DP_OPS") || !strcmp(name, "flops:::FP_OPS"))
			CHECK(strstr(info.long_descr, "[") && strlen(info.long_descr) > 40,
			      "%s long description has formula and class: %.100s...", name, info.long_descr);
		int q = code;
		while (PAPI_enum_cmp_event(&q, PAPI_NTV_ENUM_UMASKS, cid) == PAPI_OK) {
			char qn[PAPI_MAX_STR_LEN];
			int qb = 0;
			nqual++;
			if (PAPI_event_code_to_name(q, qn) || PAPI_event_name_to_code(qn, &qb) || qb != q ||
			    strncmp(qn, name, strlen(name)) || qn[strlen(name)] != ':')
				CHECK(0, "qualifier %#x of %s: '%s' -> %#x", q, name, qn, qb);
		}
		rc = PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cid);
	}
	CHECK(nev >= 3, "%d events, %d qualifiers enumerated and round-tripped", nev, nqual);

	/* unknown events */
	int bogus;
	rc = PAPI_event_name_to_code("flops:::NO_SUCH_OPS", &bogus);
	CHECK(rc == PAPI_ENOEVNT, "unknown event -> PAPI_ENOEVNT (%s)", PAPI_strerror(rc));
	rc = PAPI_event_name_to_code("flops:::DP_OPS:W1024", &bogus);
	CHECK(rc == PAPI_ENOEVNT, "unknown qualifier -> PAPI_ENOEVNT (%s)", PAPI_strerror(rc));

	/* FP_OPS + DP_OPS + SP_OPS in one event set: planned together; when
	 * they need more counters than the core has, PAPI_ECNFLCT, and with
	 * PAPI_set_multiplex they fit (counted as scaled estimates) */
	int es = PAPI_NULL, added = 0, conflict = 0;
	CHECK(PAPI_create_eventset(&es) == PAPI_OK, "PAPI_create_eventset");
	for (int i = 0; i < 3; i++) {
		if (!have[i])
			continue;
		rc = PAPI_add_named_event(es, want[i]);
		if (rc == PAPI_ECNFLCT) {
			conflict = 1;
			break;
		}
		CHECK(rc == PAPI_OK, "PAPI_add_named_event(%s): %s", want[i], PAPI_strerror(rc));
		added += rc == PAPI_OK;
	}
	if (conflict) {
		printf("ok:   %s does not fit with the %d before it: PAPI_ECNFLCT (%s)\n", want[added], added,
		       PAPI_strerror(rc));
		PAPI_cleanup_eventset(es);
		PAPI_destroy_eventset(&es);
		es = PAPI_NULL;
		PAPI_create_eventset(&es);
		PAPI_assign_eventset_component(es, cid);
		rc = PAPI_set_multiplex(es);
		CHECK(rc == PAPI_OK, "PAPI_set_multiplex: %s", PAPI_strerror(rc));
		added = 0;
		for (int i = 0; i < 3; i++)
			if (have[i]) {
				rc = PAPI_add_named_event(es, want[i]);
				CHECK(rc == PAPI_OK, "multiplexed: PAPI_add_named_event(%s): %s", want[i],
				      PAPI_strerror(rc));
				added += rc == PAPI_OK;
			}
	}
	int navail = have[0] + have[1] + have[2];
	CHECK(added == navail, "%d of the %d FLOP events this PMU has in one event set", added, navail);
	rc = PAPI_add_named_event(es, "flops:::SCALED");
	CHECK(rc == PAPI_OK, "status event SCALED added too: %s", PAPI_strerror(rc));
	long long v[8] = { 0 };
	rc = PAPI_start(es);
	if (counting) {
		CHECK(rc == PAPI_OK, "PAPI_start: %s", PAPI_strerror(rc));
		dp_kernel(1000000);
		rc = PAPI_stop(es, v);
		CHECK(rc == PAPI_OK, "PAPI_stop: %s", PAPI_strerror(rc));
		printf("info: counts %lld %lld %lld %lld\n", v[0], v[1], v[2], v[3]);
	} else {
		CHECK(rc == PAPI_ENOSUPP || rc == PAPI_EPERM, "PAPI_start refused without counters: %s",
		      PAPI_strerror(rc));
		CHECK(strlen(ci->disabled_reason) > 20, "reason: %s", ci->disabled_reason);
		int state = 0;
		PAPI_state(es, &state);
		CHECK(!(state & PAPI_RUNNING), "the event set is not running");
	}
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	PAPI_shutdown();
	printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
	return failures ? 1 : 0;
}
