# libpapi with the flops component: a copy of a PAPI 7.x source tree
# ($(PAPI_SRC) from ./configure --with-papi-src, or Debian's source package
# fetched by scripts/get-papi-src.sh) with components/flops/ and the
# generated formula table added, configured with PAPI's default perf_event
# and perf_event_uncore components plus flops, built without PAPI's tests.
# `make` builds it (target `papi`); `make install` installs libpapi, papi.h
# and PAPI's utilities into $(prefix).
PAPI_BUILD   = $(B)/papi
PAPI_LIBSO   = $(PAPI_BUILD)/src/libpapi.so
PAPI_STAMP   = $(PAPI_BUILD)/.built
FLOPS_COMP_FILES = components/flops/flops.c components/flops/Rules.flops \
                   $(wildcard components/flops/core/*.c components/flops/core/*.h)

ifneq ($(PAPI_SRC),no)
GEN_FILES += $(PAPI_STAMP)
endif

# The sanitizer variant (make check-asan: B=build-asan) builds libpapi and
# PAPI's utilities with SAN_CFLAGS too, so the component's code runs under
# ASan+UBSan inside PAPI.  A change of flags reconfigures PAPI.
PAPI_SAN_ENV = $(if $(SAN_CFLAGS),CFLAGS="$(SAN_CFLAGS)" LDFLAGS="$(SAN_CFLAGS)")
$(B)/papi.sanflags: FORCE
	@mkdir -p $(B); echo '$(SAN_CFLAGS)' | cmp -s - $@ || echo '$(SAN_CFLAGS)' > $@
FORCE:

papi: $(if $(filter no,$(PAPI_SRC)),,$(PAPI_STAMP))

$(B)/papi-src.path:
	@mkdir -p $(B)
	@if [ "$(PAPI_SRC)" = apt ]; then scripts/get-papi-src.sh $(B)/papi-dl > $@.tmp; \
	 else echo "$(PAPI_SRC)" > $@.tmp; fi && mv $@.tmp $@

# Configure once per source tree; the component's files are refreshed on
# every change and PAPI's make rebuilds what depends on them.
$(PAPI_BUILD)/src/Makefile: $(B)/papi-src.path $(B)/papi.sanflags
	rm -rf $(PAPI_BUILD) && mkdir -p $(PAPI_BUILD)
	src=$$(cat $(B)/papi-src.path) && cp -a "$$src/src" "$$src/man" $(PAPI_BUILD)/
	mkdir -p $(PAPI_BUILD)/src/components/flops/core
	cp components/flops/flops.c components/flops/Rules.flops $(PAPI_BUILD)/src/components/flops/
	cd $(PAPI_BUILD)/src && $(PAPI_SAN_ENV) ./configure --prefix="$(prefix)" --libdir="$(libdir)" --bindir="$(bindir)" \
	  --includedir="$(includedir)" --mandir="$(mandir)" \
	  --with-perf-events --with-pfm-incdir=/usr/include --with-pfm-libdir="$(PFM_LIBDIR)" \
	  --with-shared-lib=yes --with-static-lib=no --with-shlib-tools --with-tests=no \
	  --with-components="flops" > ../configure.log 2>&1 || { tail -30 ../configure.log; exit 1; }

$(PAPI_STAMP): $(PAPI_BUILD)/src/Makefile $(FLOPS_COMP_FILES) $(TABLE_C)
	@d=$(PAPI_BUILD)/src/components/flops; \
	 for f in components/flops/flops.c components/flops/Rules.flops; do cmp -s $$f $$d/$$(basename $$f) || cp $$f $$d/; done; \
	 for f in $(filter components/flops/core/%,$(FLOPS_COMP_FILES)) $(TABLE_C); do cmp -s $$f $$d/core/$$(basename $$f) || cp $$f $$d/core/; done
	$(MAKE) -C $(PAPI_BUILD)/src shared utils > $(PAPI_BUILD)/make.log 2>&1 || { grep -E -B2 -A3 'error|Error' $(PAPI_BUILD)/make.log | tail -40; exit 1; }
	touch $@

INSTALL_EXTRA += install-papi
install-papi: papi
	$(if $(filter no,$(PAPI_SRC)),@echo "libpapi not built (--without-papi-src)",$(MAKE) -C $(PAPI_BUILD)/src DESTDIR="$(DESTDIR)" install-lib install-utils install-pkgconf install-man)

.PHONY: papi install-papi FORCE
