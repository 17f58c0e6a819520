# make check-papi-suite: PAPI's own ctests and validation_tests, built
# from the PAPI source our libpapi comes from, run against Debian's
# libpapi and ours (PAPI_FLOPS_SOURCE=trace); fails where ours does worse.
# The table goes to $(B)/papi-suite.md (docs/papi-suite.md is one run).
check-papi-suite: all
	B=$(B) scripts/papi-suite.sh
.PHONY: check-papi-suite
