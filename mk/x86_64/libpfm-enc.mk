# presets/x86-libpfm.enc: libpfm4's encodings and umask merges for the
# table's x86 PMUs, which a libpfm4 built for aarch64 lacks; an aarch64
# build replays them (pflops_gen --replay), so it lists and plans x86 PMUs
# as this build does.  `make x86-libpfm-enc` rewrites it after a change
# of the table or of libpfm4; the test fails while it is stale.
X86_ENC_NEW = $(B)/x86-libpfm.enc
$(X86_ENC_NEW): $(PFLOPS_GEN) $(PRESET_FILES)
	$(PFLOPS_GEN) x86-enc $(PRESET_FILES) | LC_ALL=C sort -u > $@.tmp && mv $@.tmp $@
x86-libpfm-enc: $(X86_ENC_NEW)
	cp $(X86_ENC_NEW) $(X86_ENC)
CHECK_DEPS += $(X86_ENC_NEW)
CHECK_SCRIPTS += ctests/test_x86_enc.sh
.PHONY: x86-libpfm-enc
