/*
 * tp_regs.c MODE: registers a program may look at after its own
 * instructions; prints what it saw, exit 0 when it is what the CPU
 * defines.  DP_OPS 4000 * rounds (tp_work(1000) each round).
 *
 *   rcx  `syscall` leaves the address of the next instruction in %rcx
 *        (and rflags in %r11): 1000 getpid calls compared with it.
 *   gs   wrgsbase then ARCH_GET_GS, rdgsbase and a %gs: load give back
 *        the base written (10 rounds, a new base each); prints a SKIP
 *        line where the CPU or kernel lacks FSGSBASE.
 *   tf   the program single-steps 2 loops of its own with EFLAGS.TF and
 *        a SIGTRAP handler, and prints how many traps it saw.
 *   flags  code on an RWX page (JIT stubs do this: HotSpot's CPUID
 *        check) saves EFLAGS with pushf, flips EFLAGS.ID with popf and
 *        puts them back, 10 times; prints how often the flags it
 *        pushed showed TF (0: the tracer's single-steps stay hidden; a
 *        leaked TF ended the program with SIGTRAP at the last popf).
 *   dead   a loop of 2 blocks, 10,000,000 turns (80,000,000 DP_OPS, no
 *        tp_work), under ITIMER_REAL signals 100 us apart (the wait
 *        doubled while the loop does not move on): its first block has no
 *        flag writer and overwrites %r10 (`mov %r12, %r10`), so the
 *        tracer's count borrows %r10 right before that mov.  The
 *        SIGALRM handler checks %r10 in the ucontext against where the
 *        program is (0x7777 everywhere but between that mov and the
 *        next, 0x1111 there) and, before %r10 is read, sets it to
 *        0x2222, which the loop's sum must show.  ITIMER_REAL: a
 *        process CPU timer fires at most once a tick.  Prints "dead: ok";
 *        what it saw goes to stderr.
 *   loop   two one-block loops, 5,000,000 turns each (40,000,000 DP_OPS),
 *        under the same signals as dead: a loop's copy loads its counter
 *        through a register set to 0.  The first (vaddpd; add %rdx,
 *        %rax; dec %rcx; jnz) leaves %rbx alone, which its count
 *        borrows (the first register in the tracer's order that the
 *        block does not use), kept in the slot: the handler checks %rbx
 *        and adds 1 to it each time, which the loop's last %rbx must
 *        show.  The second
 *        (vaddpd; mov %r12, %r10; lea (%r13,%r10), %r13; loop) has no
 *        flag writer and borrows %r10 before the mov, checked and set
 *        as in dead.  Prints "loop: ok".
 *   ind  10,000,000 turns (40,000,000 DP_OPS) of an indirect call to a
 *        function that runs one vaddpd and returns, %rax, %rdx and CF
 *        set before the call and checked after the return, under the
 *        same signals as dead: the code cache looks both branches up in
 *        its table with %rax, %rcx (the turns left) and %rdx borrowed,
 *        so a signal in a look-up is held while the thread steps out of
 *        it.  The handler checks the three registers and CF wherever the
 *        program is between the sets and the checks (at the function,
 *        at the return site).  Prints "ind: ok".
 *   fault  1000 turns of a block with no flag writer: vaddpd, a load
 *        from address 0, vaddpd, `mov %r12, %r10` (the count, borrowing
 *        %r10, goes before it), vaddpd; the SIGSEGV handler skips the
 *        load.  12,000 DP_OPS: the block's count stays exact with the
 *        fault between its start and its count.  Prints "fault: 1000".
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>
#include "tp.h"

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

static int rcx(void)
{
	int bad = 0;

	for (int i = 0; i < 1000; i++) {
		unsigned long c, next, r11;
		__asm__ volatile("mov $39, %%eax\n syscall\n 1: lea 1b(%%rip), %1"
				 : "=c"(c), "=r"(next), "=&r"(r11)
				 :
				 : "rax", "r11", "memory");
		(void)r11;
		bad += c != next;
		if (i % 100 == 0)
			tp_work(1000);
	}
	printf("rcx: %d of 1000 wrong\n", bad);
	return bad != 0;
}

static int gs(void)
{
	static unsigned long buf[10][2];
	int bad = 0;

	if (!(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE)) {
		printf("SKIP: tp_regs gs: no FSGSBASE (CPU or kernel)\n");
		return 0;
	}
	for (int i = 0; i < 10; i++) {
		unsigned long g = 0, rd = 0, v = 0;
		buf[i][1] = 100 + (unsigned long)i;
		__asm__ volatile("wrgsbase %0" : : "r"(buf[i]) : "memory");
		tp_work(1000);
		if (syscall(SYS_arch_prctl, ARCH_GET_GS, &g))
			return 2;
		__asm__ volatile("rdgsbase %0" : "=r"(rd));
		__asm__ volatile("mov %%gs:8, %0" : "=r"(v));
		bad += (g != (unsigned long)buf[i]) + (rd != (unsigned long)buf[i]) + (v != 100 + (unsigned long)i);
	}
	printf("gs: %d of 30 wrong\n", bad);
	return bad != 0;
}

static volatile long traps;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	traps++;
}

static int tf(void)
{
	struct sigaction sa;
	long n = 5;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGTRAP, &sa, NULL))
		return 2;
	for (int round = 0; round < 2; round++) {
		n = 5;
		__asm__ volatile("pushfq\n orq $0x100, (%%rsp)\n popfq\n"
				 "1: vaddpd %%ymm1, %%ymm2, %%ymm0\n"
				 "dec %0\n jnz 1b\n"
				 "pushfq\n andq $~0x100, (%%rsp)\n popfq\n"
				 : "+r"(n)
				 :
				 : "xmm0", "cc", "memory");
		tp_work(1000);
	}
	printf("tf: %ld traps\n", traps);
	return 0;
}

static int flags(void)
{
	/* pushf; pop rax; mov rcx,rax; xor eax,0x200000; push rax; popf;
	 * pushf; pop rax; push rcx; popf; ret: the flags popf loaded */
	static const unsigned char code[] = { 0x9c, 0x58, 0x48, 0x89, 0xc1, 0x35, 0x00, 0x00, 0x20,
					      0x00, 0x50, 0x9d, 0x9c, 0x58, 0x51, 0x9d, 0xc3 };
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int tfs = 0;

	if (p == MAP_FAILED)
		return 2;
	memcpy(p, code, sizeof code);
	for (int i = 0; i < 10; i++) {
		tfs += !!(((unsigned long (*)(void))(void *)p)() & 0x100);
		tp_work(1000);
	}
	printf("flags: TF pushed %d of 10 times\n", tfs);
	return tfs != 0;
}

/* sum of the loop's %r11 (the %r10 it copied) over rdi turns */
long tp_dead_loop(long n);
extern const char tp_dead_top[], tp_dead_mov[], tp_dead_live[], tp_dead_set[], tp_dead_end[];
__asm__(".text\n.globl tp_dead_loop\n.type tp_dead_loop,@function\n"
	"tp_dead_loop:\n push %r12\n push %r13\n"
	" mov $0x1111, %r12\n mov $0x7777, %r10\n xor %r13d, %r13d\n mov %rdi, %rcx\n"
	".globl tp_dead_top\ntp_dead_top:\n"
	" vaddpd %ymm1, %ymm2, %ymm0\n"
	".globl tp_dead_mov\ntp_dead_mov:\n mov %r12, %r10\n"
	".globl tp_dead_live\ntp_dead_live:\n"
	" vaddpd %ymm1, %ymm2, %ymm0\n mov %r10, %r11\n"
	".globl tp_dead_set\ntp_dead_set:\n mov $0x7777, %r10\n jmp 1f\n"
	"1: add %r11, %r13\n dec %rcx\n jnz tp_dead_top\n"
	" mov %r13, %rax\n pop %r13\n pop %r12\n vzeroupper\n ret\n"
	".globl tp_dead_end\ntp_dead_end:\n"
	".size tp_dead_loop, .-tp_dead_loop\n");

static volatile long dead_bad, dead_set, dead_at_mov, dead_live, dead_in;
static long dead_rcx = -1, dead_us = 100;

/* the next signal, one-shot: 100 us after one that found the loop moved
 * on, twice the wait after one that did not.  A periodic 100 us timer
 * livelocked the traced program on a loaded machine: when the tracer's
 * stops for one signal take longer than the period, the next is pending
 * at the handler's return and not one instruction of the loop runs. */
static void dead_rearm(long rcx)
{
	struct itimerval it = { { 0, 0 }, { 0, 0 } };

	dead_us = rcx != dead_rcx ? 100 : dead_us < 20000 ? 2 * dead_us : dead_us;
	dead_rcx = rcx;
	it.it_value.tv_usec = dead_us;
	setitimer(ITIMER_REAL, &it, NULL);
}

/* the handler, and the first signal 100 us on; 0 or -1 */
static int alrm_start(void (*h)(int, siginfo_t *, void *))
{
	struct sigaction sa;
	struct itimerval it = { { 0, 0 }, { 0, 100 } };

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = h;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	return sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL) ? -1 : 0;
}

static void alrm_stop(void)
{
	struct sigaction sa;
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN; /* a last re-arm may be under way */
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &off, NULL);
}

static void on_alrm(int sig, siginfo_t *si, void *uc)
{
	greg_t *g = ((ucontext_t *)uc)->uc_mcontext.gregs;
	unsigned long pc = (unsigned long)g[REG_RIP], r10 = (unsigned long)g[REG_R10];

	(void)sig;
	(void)si;
	dead_rearm((long)g[REG_RCX]);
	if (pc < (unsigned long)tp_dead_top || pc >= (unsigned long)tp_dead_end)
		return;
	dead_in++;
	if (pc >= (unsigned long)tp_dead_live && pc <= (unsigned long)tp_dead_set) {
		/* 0x2222: set by the signal before, which came back here
		 * before the program ran on (signals queue up traced) */
		dead_live++;
		dead_bad += r10 != 0x1111 && r10 != 0x2222;
		if (r10 == 0x1111 && pc < (unsigned long)tp_dead_set - 3) { /* before mov %r10, %r11 */
			g[REG_R10] = 0x2222;
			dead_set++;
		}
		return;
	}
	dead_at_mov += pc == (unsigned long)tp_dead_mov;
	dead_bad += r10 != 0x7777;
}

static int dead(void)
{
	long n = 10000000, sum;

	if (alrm_start(on_alrm))
		return 2;
	sum = tp_dead_loop(n);
	alrm_stop();
	fprintf(stderr, "dead: %ld signals in the loop, %ld at the mov, %ld with %%r10 live (%ld set), %ld wrong\n",
		dead_in, dead_at_mov, dead_live, dead_set, dead_bad);
	if (sum != n * 0x1111 + dead_set * (0x2222 - 0x1111) || dead_bad) {
		printf("dead: %ld of %ld signals saw a wrong %%r10, the sum is off by %ld\n", dead_bad, dead_in,
		       sum - (n * 0x1111 + dead_set * (0x2222 - 0x1111)));
		return 1;
	}
	printf("dead: ok\n");
	return 0;
}

/* %rbx at the end: 0x3333 + what the handler added */
long tp_lpa(long n);
long tp_lpb(long n);
extern const char tp_lpa_top[], tp_lpa_end[], tp_lpb_top[], tp_lpb_live[], tp_lpb_loop[], tp_lpb_end[];
__asm__(".text\n.globl tp_lpa\n.type tp_lpa,@function\n"
	"tp_lpa:\n push %rbx\n mov %rdi, %rcx\n mov $0x3333, %ebx\n mov $1, %edx\n xor %eax, %eax\n"
	".globl tp_lpa_top\ntp_lpa_top:\n"
	" vaddpd %ymm1, %ymm2, %ymm0\n add %rdx, %rax\n dec %rcx\n jnz tp_lpa_top\n"
	".globl tp_lpa_end\ntp_lpa_end:\n"
	" mov %rbx, %rax\n pop %rbx\n vzeroupper\n ret\n"
	".size tp_lpa, .-tp_lpa\n"
	".globl tp_lpb\n.type tp_lpb,@function\n"
	"tp_lpb:\n push %r12\n push %r13\n"
	" mov $0x1111, %r12\n mov $0x7777, %r10\n xor %r13d, %r13d\n mov %rdi, %rcx\n"
	".globl tp_lpb_top\ntp_lpb_top:\n"
	" vaddpd %ymm1, %ymm2, %ymm0\n mov %r12, %r10\n"
	".globl tp_lpb_live\ntp_lpb_live:\n lea (%r13,%r10), %r13\n"
	".globl tp_lpb_loop\ntp_lpb_loop:\n loop tp_lpb_top\n"
	".globl tp_lpb_end\ntp_lpb_end:\n"
	" mov %r13, %rax\n pop %r13\n pop %r12\n vzeroupper\n ret\n"
	".size tp_lpb, .-tp_lpb\n");

static volatile long lp_in, lp_bumps, lp_set, lp_bad;

static void on_alrm_loop(int sig, siginfo_t *si, void *uc)
{
	greg_t *g = ((ucontext_t *)uc)->uc_mcontext.gregs;
	unsigned long pc = (unsigned long)g[REG_RIP], r10 = (unsigned long)g[REG_R10];

	(void)sig;
	(void)si;
	dead_rearm((long)g[REG_RCX]);
	if (pc >= (unsigned long)tp_lpa_top && pc < (unsigned long)tp_lpa_end) {
		lp_in++;
		lp_bad += (unsigned long)g[REG_RBX] != 0x3333 + (unsigned long)lp_bumps;
		g[REG_RBX]++;
		lp_bumps++;
		return;
	}
	if (pc < (unsigned long)tp_lpb_top || pc >= (unsigned long)tp_lpb_end)
		return;
	lp_in++;
	if (pc == (unsigned long)tp_lpb_live) { /* after the mov, before the lea */
		lp_bad += r10 != 0x1111 && r10 != 0x2222;
		if (r10 == 0x1111) {
			g[REG_R10] = 0x2222;
			lp_set++;
		}
		return;
	}
	lp_bad += r10 != 0x7777 && r10 != 0x1111 && r10 != 0x2222;
}

static int loop(void)
{
	long n = 5000000, rbx, sum;

	if (alrm_start(on_alrm_loop))
		return 2;
	rbx = tp_lpa(n);
	dead_rcx = -1;
	dead_rearm(0);
	sum = tp_lpb(n);
	alrm_stop();
	fprintf(stderr, "loop: %ld signals in the loops, %ld %%rbx added, %ld %%r10 set, %ld wrong\n", lp_in, lp_bumps,
		lp_set, lp_bad);
	if (rbx != 0x3333 + lp_bumps || sum != n * 0x1111 + lp_set * (0x2222 - 0x1111) || lp_bad) {
		printf("loop: %ld signals saw a wrong register, %%rbx off by %ld, the sum by %ld\n", lp_bad,
		       rbx - (0x3333 + lp_bumps), sum - (n * 0x1111 + lp_set * (0x2222 - 0x1111)));
		return 1;
	}
	printf("loop: ok\n");
	return 0;
}

/* the turns whose registers or CF were wrong after the return */
long tp_ind_loop(long n);
extern const char tp_ind_live[], tp_ind_cmp[], tp_ind_f[], tp_ind_f_end[];
__asm__(".text\n.globl tp_ind_loop\n.type tp_ind_loop,@function\n"
	"tp_ind_loop:\n push %r12\n push %r13\n lea tp_ind_f(%rip), %r12\n xor %r13d, %r13d\n mov %rdi, %rcx\n"
	"2: mov $0x1111, %eax\n mov $0x2222, %edx\n stc\n"
	".globl tp_ind_live\ntp_ind_live:\n call *%r12\n jnc 1f\n"
	".globl tp_ind_cmp\ntp_ind_cmp:\n cmp $0x1111, %rax\n jne 1f\n cmp $0x2222, %rdx\n je 3f\n"
	"1: inc %r13\n3: dec %rcx\n jnz 2b\n"
	" mov %r13, %rax\n pop %r13\n pop %r12\n vzeroupper\n ret\n"
	".size tp_ind_loop, .-tp_ind_loop\n"
	".globl tp_ind_f\n.type tp_ind_f,@function\n"
	"tp_ind_f:\n vaddpd %ymm1, %ymm2, %ymm0\n ret\n"
	".globl tp_ind_f_end\ntp_ind_f_end:\n"
	".size tp_ind_f, .-tp_ind_f\n");

static volatile long ind_in, ind_bad;

static void on_alrm_ind(int sig, siginfo_t *si, void *uc)
{
	greg_t *g = ((ucontext_t *)uc)->uc_mcontext.gregs;
	unsigned long pc = (unsigned long)g[REG_RIP];

	(void)sig;
	(void)si;
	dead_rearm((long)g[REG_RCX]);
	/* from the call to the first compare: the three as set (the jnc
	 * reads only CF) */
	if ((pc >= (unsigned long)tp_ind_live && pc < (unsigned long)tp_ind_cmp) ||
	    (pc >= (unsigned long)tp_ind_f && pc < (unsigned long)tp_ind_f_end)) {
		ind_in++;
		ind_bad += g[REG_RAX] != 0x1111 || g[REG_RDX] != 0x2222 || !(g[REG_EFL] & 1);
	}
}

static int ind(void)
{
	long n = 10000000, wrong;

	if (alrm_start(on_alrm_ind))
		return 2;
	wrong = tp_ind_loop(n);
	alrm_stop();
	fprintf(stderr, "ind: %ld signals in the calls, %ld saw a wrong register, %ld turns wrong\n", ind_in, ind_bad,
		wrong);
	if (wrong || ind_bad) {
		printf("ind: %ld turns came back with a wrong %%rax, %%rdx or CF, %ld of %ld signals saw one\n", wrong,
		       ind_bad, ind_in);
		return 1;
	}
	printf("ind: ok\n");
	return 0;
}

long tp_fault_loop(long n);
extern const char tp_fault_load[];
__asm__(".text\n.globl tp_fault_loop\n.type tp_fault_loop,@function\n"
	"tp_fault_loop:\n push %r12\n mov %rdi, %rcx\n xor %edx, %edx\n mov $0x1111, %r12\n"
	"2: vaddpd %ymm1, %ymm2, %ymm0\n"
	".globl tp_fault_load\ntp_fault_load:\n mov (%rdx), %rax\n"
	" vaddpd %ymm1, %ymm2, %ymm0\n mov %r12, %r10\n vaddpd %ymm1, %ymm2, %ymm0\n jmp 1f\n"
	"1: dec %rcx\n jnz 2b\n pop %r12\n vzeroupper\n ret\n"
	".size tp_fault_loop, .-tp_fault_loop\n");

static volatile long faults;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	greg_t *g = ((ucontext_t *)uc)->uc_mcontext.gregs;

	(void)sig;
	(void)si;
	if ((unsigned long)g[REG_RIP] != (unsigned long)tp_fault_load)
		_exit(3);
	g[REG_RIP] += 3; /* mov (%rdx), %rax */
	faults++;
}

static int fault(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSEGV, &sa, NULL))
		return 2;
	tp_fault_loop(1000);
	printf("fault: %ld\n", faults);
	return faults != 1000;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "rcx";

	/* these run vaddpd ymm */
	if ((!strcmp(m, "tf") || !strcmp(m, "dead") || !strcmp(m, "loop") || !strcmp(m, "ind") ||
	     !strcmp(m, "fault")) &&
	    !__builtin_cpu_supports("avx")) {
		printf("SKIP: tp_regs %s: this CPU lacks AVX\n", m);
		return 0;
	}

	if (!strcmp(m, "rcx"))
		return rcx();
	if (!strcmp(m, "gs"))
		return gs();
	if (!strcmp(m, "tf"))
		return tf();
	if (!strcmp(m, "flags"))
		return flags();
	if (!strcmp(m, "dead"))
		return dead();
	if (!strcmp(m, "loop"))
		return loop();
	if (!strcmp(m, "ind"))
		return ind();
	if (!strcmp(m, "fault"))
		return fault();
	return 2;
}
