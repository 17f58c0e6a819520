# The core library, the table generator and the generated files.
PRESET_FILES = $(sort $(wildcard presets/*.pft))
GEN_CORE_SRCS = components/flops/core/error.c components/flops/core/metric.c \
                components/flops/core/formula.c components/flops/core/input.c \
                components/flops/core/table.c components/flops/core/encode.c \
                components/flops/core/plan.c
CORE_SRCS += $(GEN_CORE_SRCS) components/flops/core/table_builtin.c \
             components/flops/core/probe.c components/flops/core/topo_load.c \
             components/flops/core/perfstat.c \
             components/flops/core/sources.c components/flops/core/count_child.c \
             components/flops/core/wait_status.c

PFLOPS_GEN   = $(B)/pflops_gen
# libpfm4's answers for the x86 PMUs, for a libpfm4 without them (aarch64):
# mk/x86_64/libpfm-enc.mk keeps the file current
X86_ENC      = presets/x86-libpfm.enc
PFLOPS_GEN_RUN = $(CROSS_EXEC) $(PFLOPS_GEN) --replay $(X86_ENC)
TABLE_C      = $(B)/gen/pflops_table_data.c
PAPI_CSV_OUT = $(B)/share/papi-flops/papi_events.csv
HAVE_HP     := $(shell grep -q PAPI_HP_OPS $(firstword $(wildcard /usr/include/papiStdEventDefs.h) /dev/null) && echo --have-hp)

GEN_FILES    += $(TABLE_C) $(PAPI_CSV_OUT)
INSTALL_DATA += $(PAPI_CSV_OUT) $(PRESET_FILES)

$(PFLOPS_GEN): presets/pflops_gen.c $(patsubst %.c,$(B)/obj/%.o,$(GEN_CORE_SRCS))
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $^ -o $@ $(LDFLAGS) $(PFM_LIBS) -lm

# Validated first: a bad row stops here with file:line.
$(TABLE_C): $(PFLOPS_GEN) $(PRESET_FILES) $(X86_ENC)
	@mkdir -p $(dir $@)
	$(PFLOPS_GEN_RUN) c $@ $(PRESET_FILES)

$(PAPI_CSV_OUT): $(PFLOPS_GEN) $(PRESET_FILES) $(X86_ENC) $(PAPI_CSV)
	@mkdir -p $(dir $@)
	$(PFLOPS_GEN_RUN) papi-csv $(HAVE_HP) $(PAPI_CSV) $@ $(PRESET_FILES)

$(B)/obj/gen/pflops_table_data.o: $(TABLE_C)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) -c $< -o $@

$(CORE_LIB): $(B)/obj/gen/pflops_table_data.o

# Tests of the table, planner and encoder.
CHECK_PROGS += $(B)/ctests/test_table $(B)/ctests/test_perfstat $(B)/ctests/test_count_child \
               $(B)/ctests/test_plan_fit
$(B)/ctests/%: ctests/%.c ctests/builtin_table.h ctests/odd_files.h $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)
CHECK_SCRIPTS += ctests/test_papi_csv.sh
CHECK_DEPS += $(B)/ctests/probe_summary
# Every consumer of the metric registry agrees with it (papi_flops.h).
CHECK_DEPS += $(B)/ctests/registry_list
CHECK_SCRIPTS += ctests/test_registry.sh
CHECK_SCRIPTS += ctests/test_probe.sh
# The shared memory a traced process reads its own counts from, and the
# component's helper (libpapi has them too: components/flops/Rules.flops).
CORE_SRCS += components/flops/core/pub.c components/flops/core/pub_helper.c
