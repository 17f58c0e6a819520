# Fuzz harnesses (fuzz/, fuzz/README.md): libFuzzer with ASan+UBSan, built
# with clang under build-fuzz/.  `make fuzz` runs each harness for
# FUZZ_TIME seconds, `make fuzz-smoke` (scripts/test-all.sh) for
# FUZZ_SMOKE_TIME; both first run every regression input once.
FUZZ_B          = build-fuzz
FUZZ_CC        ?= clang
FUZZ_TIME      ?= 300
FUZZ_SMOKE_TIME ?= 10
FUZZ_SAN        = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_NAMES      = table formula perfstat topology event_name elf hints

fuzz-build:
	$(MAKE) B=$(FUZZ_B) CC=$(FUZZ_CC) CFLAGS="-g -O1" SAN_CFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" \
	  fuzz-harnesses

fuzz-harnesses: $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_NAMES))

$(B)/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) -fsanitize=fuzzer $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS)

fuzz: fuzz-build
	@f=0; for h in $(FUZZ_NAMES); do B=$(FUZZ_B) fuzz/run.sh $$h $(FUZZ_TIME) || f=$$((f+1)); done; \
	  echo "make fuzz: $$(($(words $(FUZZ_NAMES)) - f)) passed, $$f failed"; [ $$f = 0 ]
fuzz-smoke: fuzz-build
	@f=0; for h in $(FUZZ_NAMES); do B=$(FUZZ_B) fuzz/run.sh $$h $(FUZZ_SMOKE_TIME) || f=$$((f+1)); done; \
	  echo "make fuzz-smoke: $$(($(words $(FUZZ_NAMES)) - f)) passed, $$f failed"; [ $$f = 0 ]

# The bad inputs the fuzzing found, through the tools (exit status, cause, fix).
CHECK_SCRIPTS += ctests/test_bad_input.sh

.PHONY: fuzz fuzz-smoke fuzz-build fuzz-harnesses
