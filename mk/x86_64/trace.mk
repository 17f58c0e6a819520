# The tracer (exact FLOPs by ptrace + Zydis, no hardware counters, x86-64
# only for now), its tests and benchmark, the x86 calibration kernels
# they trace and papi_flops_check runs.  The PMU models it feeds:
# mk/model.mk.
TRACE_CORE = components/flops/core
# the engine (core/trace/: blocks, cache, linking, signals, threads,
# processes, the ptrace loop) ...
CORE_SRCS += $(TRACE_CORE)/trace/trace_blocks.c \
             $(TRACE_CORE)/trace/trace_mem.c $(TRACE_CORE)/trace/trace_space.c \
             $(TRACE_CORE)/trace/trace_region.c $(TRACE_CORE)/trace/trace_window.c \
             $(TRACE_CORE)/trace/trace_ptrace.c $(TRACE_CORE)/trace/trace_thread.c \
             $(TRACE_CORE)/trace/trace_signal.c \
             $(TRACE_CORE)/trace/trace_maps.c $(TRACE_CORE)/trace/trace_codemap.c \
             $(TRACE_CORE)/trace/trace_inject.c \
             $(TRACE_CORE)/trace/trace_arena.c \
             $(TRACE_CORE)/trace/trace_xlate.c $(TRACE_CORE)/trace/trace_link.c \
             $(TRACE_CORE)/trace/trace_harvest.c $(TRACE_CORE)/trace/trace_ids.c \
             $(TRACE_CORE)/trace/trace_enter.c $(TRACE_CORE)/trace/trace_detach.c \
             $(TRACE_CORE)/trace/trace_elf.c $(TRACE_CORE)/trace/trace_cfi.c \
             $(TRACE_CORE)/trace/trace_prof.c $(TRACE_CORE)/trace/trace_funcs.c \
             $(TRACE_CORE)/trace/trace_ovf.c \
             $(TRACE_CORE)/trace/trace_wprot.c $(TRACE_CORE)/trace/trace_forkwant.c $(TRACE_CORE)/trace/trace_hints.c \
             $(TRACE_CORE)/trace/trace_pin.c $(TRACE_CORE)/trace/trace_wait.c \
             $(TRACE_CORE)/trace/trace_freq.c
# ... and the instruction set behind core/trace/pft_arch.h (Zydis)
CORE_SRCS += $(TRACE_CORE)/trace/x86_64/trace_decode.c $(TRACE_CORE)/trace/x86_64/trace_fastdec.c \
             $(TRACE_CORE)/trace/x86_64/trace_emul.c \
             $(TRACE_CORE)/trace/x86_64/trace_reloc.c $(TRACE_CORE)/trace/x86_64/trace_xstate.c \
             $(TRACE_CORE)/trace/x86_64/trace_ibl.c $(TRACE_CORE)/trace/x86_64/trace_gen.c \
             $(TRACE_CORE)/trace/x86_64/trace_trap.c $(TRACE_CORE)/trace/x86_64/trace_wait.c
CORE_LIBS += $(ZYDIS_LIBS)

CHECK_PROGS += $(B)/ctests/test_trace $(B)/ctests/test_funcs
# overflow every P FLOPs (pflops_trace_opts.overflow)
CHECK_PROGS += $(B)/ctests/test_trace_ovf
# what an instruction allows the count placed before it (trace_reloc.c)
CHECK_PROGS += $(B)/ctests/test_trace_reloc
$(B)/ctests/test_trace_reloc: ctests/test_trace_reloc.c $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)

# code read from the tracer's own mappings of the program's files
# (trace_codemap.c): the same bytes as process_vm_readv, and where not
CHECK_PROGS += $(B)/ctests/test_trace_codemap
$(B)/ctests/test_trace_codemap: ctests/test_trace_codemap.c $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)

# the hint store (trace_hints.c): cold and warm runs, bad hint files
CHECK_PROGS += $(B)/ctests/test_trace_hints
$(B)/ctests/test_trace_hints: ctests/test_trace_hints.c ctests/calib_prog.h $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)

$(B)/ctests/test_trace_ovf: ctests/test_trace_ovf.c ctests/calib_prog.h $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)

$(B)/ctests/test_trace: ctests/test_trace.c ctests/calib_prog.h $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)

$(B)/ctests/test_funcs: ctests/test_funcs.c ctests/calib_prog.h $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) $< -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS) $(CMOCKA_LIBS)

# Calibration programs the tests trace.  Own flags, never sanitized: the
# freestanding ones (-nostdlib -static) have no libc for ASan to hook,
# and their instruction mix must not change with the build flavour.
TD = $(B)/ctests/trace
CALIB_CFLAGS = -g -Wall -Wextra
CALIB_FREE = -ffreestanding -fno-builtin -fno-stack-protector -fno-pie -no-pie \
             -nostdlib -static -Ictests/trace -Icomponents/flops/core
TRACE_CALIBS = $(TD)/calib_fp $(TD)/calib_daxpy_O2 $(TD)/calib_daxpy_O3 \
               $(TD)/calib_threads $(TD)/calib_fork $(TD)/calib_signal \
               $(TD)/libcalibk.so $(TD)/calib_region $(TD)/calib_regionx \
               $(TD)/calib_regioncxx $(TD)/calib_jit $(TD)/calib_gs $(TD)/calib_daemon \
               $(TD)/calib_fp_stripped $(TD)/libcalibe.so $(TD)/calib_entryp \
               $(TD)/calib_entryr $(TD)/calib_hook \
               $(TD)/calib_alloc $(TD)/calib_smc $(TD)/calib_far $(TD)/calib_freq \
               $(TD)/calib_loop
CHECK_DEPS += $(TRACE_CALIBS)
# --region at an address inside an instruction: refused, program untouched
CHECK_SCRIPTS += ctests/test_region_entry.sh
# daemons let go at the end of the run survive it (20 runs per engine)
CHECK_SCRIPTS += ctests/test_daemon_detach.sh
# the code cache under a ulimit -v: sized to it, said, or not used
CHECK_SCRIPTS += ctests/test_trace_aslimit.sh
# --region F with thread pools: OpenMP, pthreads, OpenBLAS if installed
CHECK_SCRIPTS += ctests/test_region_pool.sh
CHECK_DEPS += $(TD)/calib_pool $(BENCH_DGEMM)
# code rewritten while executable (JIT, self-modifying): native vs traced
CHECK_SCRIPTS += ctests/test_trace_smc.sh
# the trace tests again with translation requests through a futex
CHECK_SCRIPTS += ctests/test_trace_futex.sh

$(TD)/calib_fp: ctests/trace/calib_fp.c ctests/trace/calib.h ctests/trace/calib_list.h components/flops/core/pflops_cpufeat.h
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $(CALIB_FREE) $< -o $@
# the same program without symbols (--by-function: code no symbol covers)
$(TD)/calib_fp_stripped: $(TD)/calib_fp
	strip --strip-all -o $@ $<
# a branch far back to code that never runs (translation ahead skips it)
$(TD)/calib_far: ctests/trace/calib_far.c ctests/trace/calib.h
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $(CALIB_FREE) $< -o $@
$(TD)/calib_daxpy_O2: ctests/trace/calib_daxpy.c ctests/trace/calib.h
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $(CALIB_FREE) $< -o $@
$(TD)/calib_daxpy_O3: ctests/trace/calib_daxpy.c ctests/trace/calib.h
	@mkdir -p $(dir $@)
	$(CC) -O3 -march=native $(CALIB_CFLAGS) $(CALIB_FREE) $< -o $@
$(TD)/calib_threads: ctests/trace/calib_threads.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@ $(PTHREAD_LIBS)
# OpenMP where the compiler has it (gcc: libgomp; clang: libomp-dev)
OPENMP_CFLAGS := $(shell echo 'int main(void){return 0;}' | $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo -fopenmp)
$(TD)/calib_pool: ctests/trace/calib_pool.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -ffp-contract=off $(OPENMP_CFLAGS) $(CALIB_CFLAGS) $< -o $@ $(PTHREAD_LIBS)
$(TD)/calib_daemon: ctests/trace/calib_daemon.c
	@mkdir -p $(dir $@)
	$(CC) -O1 $(CALIB_CFLAGS) $< -o $@
$(TD)/calib_alloc: ctests/trace/calib_alloc.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@
$(TD)/calib_gs: ctests/trace/calib_gs.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@
$(TD)/calib_jit: ctests/trace/calib_jit.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@
$(TD)/calib_freq: ctests/trace/calib_freq.c
	@mkdir -p $(dir $@)
	$(CC) -O1 $(CALIB_CFLAGS) $< -o $@ $(PTHREAD_LIBS)
$(TD)/calib_smc: ctests/trace/calib_smc.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@ $(PTHREAD_LIBS)
$(TD)/calib_fork: ctests/trace/calib_fork.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@
$(TD)/calib_loop: ctests/trace/calib_loop.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@
$(TD)/calib_signal: ctests/trace/calib_signal.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@ $(PTHREAD_LIBS)
$(TD)/libcalibk.so: ctests/trace/calib_kernel.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) -fPIC -shared $< -o $@
$(TD)/calib_region: ctests/trace/calib_region.c $(TD)/libcalibk.so
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@ -L$(TD) -lcalibk -Wl,-rpath,'$$ORIGIN'

$(TD)/libcalibe.so: ctests/trace/calib_entry.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) -fPIC -shared $< -o $@
$(TD)/calib_entryp: ctests/trace/calib_entryp.c $(TD)/libcalibe.so
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@ -L$(TD) -lcalibe -Wl,-rpath,'$$ORIGIN'
$(TD)/calib_hook: ctests/trace/calib_hook.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@

$(TD)/calib_entryr: ctests/trace/calib_entryr.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@ -ldl

$(TD)/calib_regionx: ctests/trace/calib_regionx.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(CALIB_CFLAGS) $< -o $@ $(PTHREAD_LIBS)
$(TD)/calib_regioncxx: ctests/trace/calib_regioncxx.cc
	@mkdir -p $(dir $@)
	$(CXX) -O2 $(CALIB_CFLAGS) $< -o $@

# `make bench`: wall time native / stopping engine / code cache per
# kernel, OpenBLAS dgemm (Debian's libopenblas-dev) when it is installed,
# then real programs (bench/bench_progs.c: numpy, hpcc, python3, gcc on a
# generated 2,050-line file, node, luajit, pypy3; scripts/install-deps.sh
# --bench installs them; a missing one is skipped).  BENCH_PROGS=word,...
# runs only those programs' rows (and not the kernels); BENCH_LIMIT=s
# (default 60) bounds each traced run.
OPENBLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null)
OPENBLAS_LIBS := $(shell pkg-config --libs openblas 2>/dev/null)
BENCH_TARGETS += bench-trace
$(B)/bench_trace: bench/bench_trace.c bench/bench_progs.c bench/bench_progs.h $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PF_CFLAGS) bench/bench_trace.c bench/bench_progs.c -o $@ $(LDFLAGS) $(CORE_LIB) $(CORE_LIBS)
$(B)/bench_dgemm: bench/bench_dgemm.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra $(OPENBLAS_CFLAGS) $< -o $@ $(OPENBLAS_LIBS)
$(B)/bench_big.c: bench/gen_big_c.sh
	@mkdir -p $(dir $@)
	sh bench/gen_big_c.sh > $@
ifneq ($(OPENBLAS_LIBS),)
BENCH_DGEMM = $(B)/bench_dgemm
endif
bench-trace: $(B)/bench_trace $(TD)/calib_fp $(TD)/calib_daxpy_O2 $(TD)/calib_regioncxx $(BENCH_DGEMM) $(B)/bench_big.c
	$(B)/bench_trace $(TD) $(or $(BENCH_DGEMM),-) $(B)/bench_big.c

.PHONY: bench-trace

# Tests that trace, or run the calibration kernels: the tools' trace and
# model: sources, signals, papi_flops_check, the masked-lane estimator on
# traced and sampled kernels and on decoded x86 code.
CHECK_SCRIPTS += ctests/test_run.sh ctests/test_signals.sh ctests/test_check.sh
CHECK_PROGS += $(B)/ctests/test_sampler $(B)/ctests/test_mask_trace $(B)/ctests/test_mask

# The kernels papi_flops_check runs (installed as papi_flops_kernels).
PF_KERNELS_BIN = $(TD)/calib_fp
default-target: $(PF_KERNELS_BIN)
install: install-kernels
install-kernels: $(PF_KERNELS_BIN)
	@$(INSTALL) -d $(DESTDIR)$(libexecdir)/papi-flops
	@$(INSTALL) -m 755 $(PF_KERNELS_BIN) $(DESTDIR)$(libexecdir)/papi-flops/papi_flops_kernels
	@echo "install: the calibration kernels in $(DESTDIR)$(libexecdir)/papi-flops"
.PHONY: install-kernels
