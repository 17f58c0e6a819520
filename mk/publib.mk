# The installed libpflops.a: the core partially linked into one object in
# which only the functions papi_flops.h declares stay global.  The core's
# own helpers (pf_*, the tracer's pflops_* internals) cannot then clash
# with a client's symbols, nor be called by one as if they were API; the
# tests and tools link $(CORE_LIB), which keeps them.  The list is read
# from the header, so declaring a function there is all it takes.
PUB_LIB  = $(B)/pub/libpflops.a
PUB_SYMS = $(B)/pub/libpflops.syms
PUB_OBJ  = $(B)/pub/libpflops.o
default-target: $(PUB_LIB)

$(PUB_SYMS): components/flops/core/papi_flops.h
	@mkdir -p $(dir $@)
	sed -n 's/^[a-z].*[ *]\(pflops_[a-z0-9_]*\)(.*/\1/p' $< | sort -u > $@
	@test -s $@ || { echo "$@: no function found in $<"; rm -f $@; exit 1; }

$(PUB_LIB): $(CORE_LIB) $(PUB_SYMS)
	$(CC) $(LDFLAGS) -r -nostdlib -Wl,--whole-archive $(CORE_LIB) -Wl,--no-whole-archive -o $(PUB_OBJ)
	$(OBJCOPY) --keep-global-symbols=$(PUB_SYMS) $(PUB_OBJ)
	rm -f $@ && ar rcs $@ $(PUB_OBJ)
