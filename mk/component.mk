# The flops PAPI component: its counting engine (in the core library), the
# engine's tests, and (mk/papi.mk) the libpapi built with the component.
CORE_SRCS += components/flops/core/count_perf.c components/flops/core/evname.c components/flops/core/perf_plans.c \
             components/flops/core/count.c

CHECK_PROGS += $(B)/test_count_perf $(B)/ctests/test_count_plan
# The component's planning (flops_plan.c, PAPI-free) linked in: the test
# plans through the component's own code, as libpapi runs it.
$(B)/ctests/test_count_plan: ctests/test_count_plan.c components/flops/flops_plan.c components/flops/flops_plan.h \
                             ctests/builtin_table.h $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< components/flops/flops_plan.c -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)

$(B)/test_count_perf: ctests/test_count_perf.c $(CORE_LIB)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)

# The component in the built libpapi, through PAPI's public API and utilities.
CHECK_SCRIPTS += components/flops/tests/papi_component.sh
ifneq ($(PAPI_SRC),no)
CHECK_DEPS += $(B)/flops_papi_test $(B)/flops_threads64 $(B)/flops_overflow_test
endif
# -rdynamic: the test names the function of an overflow address (dladdr)
$(B)/flops_overflow_test: components/flops/tests/flops_overflow_test.c $(PAPI_STAMP)
	$(CC) -I$(PAPI_BUILD)/src $(PF_CFLAGS) -rdynamic $< -o $@ $(LDFLAGS) -L$(PAPI_BUILD)/src -lpapi -lpthread -ldl -Wl,-rpath,$(abspath $(PAPI_BUILD)/src)
$(B)/flops_threads64: components/flops/tests/flops_threads64.c $(PAPI_STAMP)
	$(CC) -I$(PAPI_BUILD)/src $(PF_CFLAGS) $< -o $@ $(LDFLAGS) -L$(PAPI_BUILD)/src -lpapi -lpthread -Wl,-rpath,$(abspath $(PAPI_BUILD)/src)
$(B)/flops_papi_test: components/flops/tests/flops_papi_test.c components/flops/tests/check.h $(PAPI_STAMP)
	$(CC) -I$(PAPI_BUILD)/src $(PF_CFLAGS) $< -o $@ $(LDFLAGS) -L$(PAPI_BUILD)/src -lpapi -Wl,-rpath,$(abspath $(PAPI_BUILD)/src)

# make bench: instructions per read of the counting engine vs the floor.
BENCH_TARGETS += bench-read
$(B)/bench_read: bench/bench_read.c $(CORE_LIB)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS)
bench-read: $(B)/bench_read
	B=$(B) bench/bench_read.sh
.PHONY: bench-read
