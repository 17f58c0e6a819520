# Transparency of the tracer (docs/trace-engine.md#transparency): the
# system calls it answers or changes (rseq, clone, seccomp), and the
# native-vs-traced programs that check it (ctests/test_transp.sh).
CORE_SRCS += $(TRACE_CORE)/trace/trace_sys.c

TPD = $(B)/ctests/transp
TP_CFLAGS = -O2 -g -Wall -Wextra
TRANSP_PROGS = $(TPD)/tp_rseq $(TPD)/tp_clone $(TPD)/tp_regs $(TPD)/tp_seccomp $(TPD)/tp_threads $(TPD)/tp_alias \
               $(TPD)/tp_jit $(TPD)/tp_mask $(TPD)/tp_ret $(TPD)/tp_restart $(TPD)/tp_fork
# AddressSanitizer's run-time (libasan) is in gcc's package; without it
# the test says SKIP for that program
TP_ASAN := $(shell printf 'int main(void){return 0;}' | $(CC) -fsanitize=address -x c - -o /dev/null 2>/dev/null && echo $(TPD)/tp_asan)
TRANSP_PROGS += $(TP_ASAN)
CHECK_DEPS += $(TRANSP_PROGS)
CHECK_SCRIPTS += ctests/test_transp.sh

$(TPD)/tp_%: ctests/transp/tp_%.c ctests/transp/tp.h
	@mkdir -p $(dir $@)
	$(CC) $(TP_CFLAGS) $< -o $@ $(PTHREAD_LIBS)
$(TPD)/tp_asan: ctests/transp/tp_asan.c ctests/transp/tp.h
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fsanitize=address -Wall -Wextra $< -o $@ $(PTHREAD_LIBS)
