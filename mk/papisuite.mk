# make check-papi-suite: PAPI's own ctests, validation_tests and component
# tests, built from the PAPI source our libpapi comes from, run against
# Debian's libpapi and ours (PAPI_FLOPS_SOURCE=trace); fails where ours
# does worse.  The table goes to $(B)/papi-suite.md (docs/papi-suite.md is
# one run).  FORCE_PMU=skx runs both with LIBPFM_FORCE_PMU=skx, so that
# PAPI loads its presets on a machine without a PMU (PAPI_FP_OPS ... are
# then the flops component's events in ours).
check-papi-suite: all
	B=$(B) FORCE_PMU=$(FORCE_PMU) scripts/papi-suite.sh
.PHONY: check-papi-suite
