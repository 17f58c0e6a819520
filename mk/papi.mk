# libpapi with the flops component: a copy of a PAPI 7.x source tree
# ($(PAPI_SRC) from ./configure --with-papi-src, or Debian's source package
# fetched by scripts/get-papi-src.sh) with components/flops/ and the
# generated formula table added, configured with PAPI's default perf_event
# and perf_event_uncore components plus flops and sde, built without
# PAPI's tests.
# Its built-in preset table is that tree's papi_events.csv with our FLOP
# presets (pflops_gen papi-csv --component flops): PAPI_FP_OPS, PAPI_DP_OPS,
# PAPI_SP_OPS, PAPI_HP_OPS, PAPI_VEC_DP, PAPI_VEC_SP are each one flops
# component event (flops:::FP_OPS ...), need no environment, and are
# planned, refused and multiplexed as the component's events are.  PAPI
# 7.0 takes presets from component 0 only: patches/papi-*.patch (applied
# to the copy) lets a preset name one other component's events, and the
# flops component load its own under PAPI_FLOPS_SOURCE=trace|model:PMU;
# another serializes PAPI_shutdown (threads calling it at once crashed).
# `make` builds it (target `papi`); `make install` installs libpapi, papi.h
# and PAPI's utilities into $(prefix), their run paths relative to the
# install ($ORIGIN), never into the build tree.
PAPI_BUILD   = $(B)/papi
PAPI_LIBSO   = $(PAPI_BUILD)/src/libpapi.so
PAPI_STAMP   = $(PAPI_BUILD)/.built
FLOPS_TOP_FILES  = components/flops/Rules.flops $(wildcard components/flops/*.c components/flops/*.h)
FLOPS_COMP_FILES = $(FLOPS_TOP_FILES) $(wildcard components/flops/core/*.c components/flops/core/*.h)
PAPI_PATCHES = $(sort $(wildcard patches/papi-*.patch))

ifneq ($(PAPI_SRC),no)
GEN_FILES += $(PAPI_STAMP)
endif

# The sanitizer variant (make check-asan: B=build-asan) builds libpapi and
# PAPI's utilities with SAN_CFLAGS too, so the component's code runs under
# ASan+UBSan inside PAPI.  A change of flags reconfigures PAPI.
PAPI_SAN_ENV = $(if $(SAN_CFLAGS),CFLAGS="$(SAN_CFLAGS)" LDFLAGS="$(SAN_CFLAGS)")
$(B)/papi.sanflags: FORCE
	@mkdir -p $(B); echo '$(SAN_CFLAGS)' | cmp -s - $@ || echo '$(SAN_CFLAGS)' > $@
# Debian's libpapi has the sde component (and rocm_smi, which needs ROCm's
# headers): ours has sde too, so that it is a drop-in replacement (the
# same components' events, the same exported symbols).  A change of the
# list reconfigures PAPI.
PAPI_COMPONENTS = flops sde
$(B)/papi.components: FORCE
	@mkdir -p $(B); echo '$(PAPI_COMPONENTS)' | cmp -s - $@ || echo '$(PAPI_COMPONENTS)' > $@
FORCE:

papi: $(if $(filter no,$(PAPI_SRC)),,$(PAPI_STAMP))

$(B)/papi-src.path:
	@mkdir -p $(B)
	@if [ "$(PAPI_SRC)" = apt ]; then scripts/get-papi-src.sh $(B)/papi-dl > $@.tmp; \
	 else echo "$(PAPI_SRC)" > $@.tmp; fi && mv $@.tmp $@

# Configure once per source tree; the component's files are refreshed on
# every change and PAPI's make rebuilds what depends on them.
$(PAPI_BUILD)/src/Makefile: $(B)/papi-src.path $(B)/papi.sanflags $(PAPI_PATCHES) $(B)/papi.components
	rm -rf $(PAPI_BUILD) && mkdir -p $(PAPI_BUILD)
	src=$$(cat $(B)/papi-src.path) && cp -a "$$src/src" "$$src/man" $(PAPI_BUILD)/ && chmod -R u+w $(PAPI_BUILD)
	for p in $(PAPI_PATCHES); do patch -s -p1 -d $(PAPI_BUILD) < $$p || { echo "$$p does not apply to $$(cat $(B)/papi-src.path)"; exit 1; }; done
	mkdir -p $(PAPI_BUILD)/src/components/flops/core
	cp $(FLOPS_TOP_FILES) $(PAPI_BUILD)/src/components/flops/
	cd $(PAPI_BUILD)/src && $(PAPI_SAN_ENV) ./configure --prefix="$(prefix)" --libdir="$(libdir)" --bindir="$(bindir)" \
	  --includedir="$(includedir)" --mandir="$(mandir)" \
	  --with-perf-events --with-pfm-incdir=/usr/include --with-pfm-libdir="$(PFM_LIBDIR)" \
	  --with-shared-lib=yes --with-static-lib=no --with-shlib-tools --with-tests=no \
	  --with-components="$(PAPI_COMPONENTS)" $(PAPI_CROSS) > ../configure.log 2>&1 || { tail -30 ../configure.log; exit 1; }

# PAPI's table with ours, built into libpapi (papi_events_table.h is made
# from src/papi_events.csv by PAPI's own rule when the file changes).
$(PAPI_BUILD)/papi_events.csv: $(PFLOPS_GEN) $(PRESET_FILES) $(X86_ENC) $(PAPI_BUILD)/src/Makefile
	src=$$(cat $(B)/papi-src.path)/src && \
	$(PFLOPS_GEN_RUN) papi-csv $$(grep -q PAPI_HP_OPS $$src/papiStdEventDefs.h && echo --have-hp) --component flops $$src/papi_events.csv $@ $(PRESET_FILES)

$(PAPI_STAMP): $(PAPI_BUILD)/src/Makefile $(FLOPS_COMP_FILES) $(TABLE_C) $(PAPI_BUILD)/papi_events.csv
	@d=$(PAPI_BUILD)/src/components/flops; \
	 for f in $(FLOPS_TOP_FILES); do cmp -s $$f $$d/$$(basename $$f) || cp $$f $$d/; done; \
	 cmp -s components/flops/Rules.flops $(PAPI_BUILD)/src/.Rules.flops.built || rm -f $(PAPI_BUILD)/src/libpapi.so*; \
	 for f in $(filter components/flops/core/%,$(FLOPS_COMP_FILES)) $(TABLE_C); do cmp -s $$f $$d/core/$$(basename $$f) || cp $$f $$d/core/; done; \
	 cmp -s $(PAPI_BUILD)/papi_events.csv $(PAPI_BUILD)/src/papi_events.csv || cp $(PAPI_BUILD)/papi_events.csv $(PAPI_BUILD)/src/papi_events.csv
	$(MAKE) -C $(PAPI_BUILD)/src shared utils > $(PAPI_BUILD)/make.log 2>&1 || { grep -E -B2 -A3 'error|Error' $(PAPI_BUILD)/make.log | tail -40; exit 1; }
	cp components/flops/Rules.flops $(PAPI_BUILD)/src/.Rules.flops.built	# libpapi's link lists the files it names
	touch $@

# PAPI links its utilities with run paths into its build tree: the
# installed ones get $ORIGIN-relative paths instead (relocatable, and
# they keep working when the build tree is gone).
PAPI_RPATH_BIN = $$ORIGIN/$(shell realpath -m --relative-to="$(bindir)" "$(libdir)")
INSTALL_EXTRA += install-papi
install-papi: papi
ifeq ($(PAPI_SRC),no)
	@echo "install: libpapi not built (--without-papi-src)"
else
	@$(MAKE) -s -C $(PAPI_BUILD)/src DESTDIR="$(DESTDIR)" install-lib install-utils install-pkgconf install-man >$(PAPI_BUILD)/install.log 2>&1 || \
	  { tail -20 $(PAPI_BUILD)/install.log; exit 1; }
	@for f in $(DESTDIR)$(bindir)/papi_* $(DESTDIR)$(libdir)/libpapi.so*; do \
	  [ -f "$$f" ] && [ ! -L "$$f" ] && patchelf --print-rpath "$$f" >/dev/null 2>&1 || continue; \
	  case "$$f" in *.so*) r='$$ORIGIN';; *) r='$(PAPI_RPATH_BIN)';; esac; \
	  patchelf --set-rpath "$$r" "$$f" || exit 1; done
	@echo "install: libpapi with the flops component, PAPI's utilities and man pages in $(DESTDIR)$(prefix) (log: $(PAPI_BUILD)/install.log)"
endif

.PHONY: papi install-papi FORCE
CHECK_SCRIPTS += ctests/test_install.sh
