# papi-flops.pc: a PAPI client built with `pkg-config --cflags --libs
# papi-flops` loads this libpapi, not Debian's (same soname), with no
# LD_LIBRARY_PATH: its Libs carry a run path.  Paths are relative to the
# .pc file's place (${pcfiledir}), so a moved install stays right.
PC_INC_REL = $(shell realpath -m --relative-to="$(libdir)/pkgconfig" "$(includedir)")
ifneq ($(PAPI_SRC),no)
INSTALL_EXTRA += install-pc
endif
install-pc: install-papi
	@mkdir -p $(DESTDIR)$(libdir)/pkgconfig
	@printf '%s\n' 'libdir=$${pcfiledir}/..' 'includedir=$${pcfiledir}/$(PC_INC_REL)' '' \
	  'Name: papi-flops' \
	  'Description: PAPI with the flops component (papi-flops): FLOP events, PAPI_FLOPS_SOURCE=trace without counters' \
	  'Version: $(PACKAGE_VERSION)' \
	  'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lpapi' \
	  'Cflags: -I$${includedir}' > $(DESTDIR)$(libdir)/pkgconfig/papi-flops.pc
.PHONY: install-pc
