/*
 * calib_fp.c: known floating-point instruction mixes.
 *
 *   calib_fp KERNEL N [EXIT]
 *
 * runs KERNEL's loop N times and exits with EXIT (default 0).  Every loop
 * body is one instruction of the class under test plus "dec; jnz", so a
 * trace must find exactly N instructions of that class and no other FP
 * instruction (the program is freestanding: no libc, no loader).  The
 * expected classes are written down in ctests/test_trace.c.
 */
#include "calib.h"
#include "calib_list.h"
#include "pflops_cpufeat.h"

/* Set the opmask registers the masked kernels use. */
#define KSET                                     \
	"mov $0x0f, %%eax\n kmovw %%eax, %%k1\n" \
	"mov $0xff, %%eax\n kmovw %%eax, %%k2\n" \
	"mov $0x05, %%eax\n kmovw %%eax, %%k3\n" \
	"xor %%eax, %%eax\n kmovw %%eax, %%k4\n" \
	"mov $0x0003, %%eax\n kmovw %%eax, %%k5\n"

#define KERNEL(name, pre, insn)                                                            \
	static void name(long n)                                                           \
	{                                                                                  \
		__asm__ volatile(pre "1:\n" insn "\n dec %0\n jnz 1b"                      \
				 : "+r"(n)                                                 \
				 :                                                         \
				 : "eax", "xmm0", "xmm1", "xmm2", "xmm3", "memory", "cc"); \
	}

/* SSE (legacy encoding) */
KERNEL(addss, "", "addss %%xmm1, %%xmm0")
KERNEL(addsd, "", "addsd %%xmm1, %%xmm0")
KERNEL(subps, "", "subps %%xmm1, %%xmm0")
KERNEL(addpd, "", "addpd %%xmm1, %%xmm0")
KERNEL(mulsd, "", "mulsd %%xmm1, %%xmm0")
KERNEL(mulps, "", "mulps %%xmm1, %%xmm0")
KERNEL(divss, "", "divss %%xmm1, %%xmm0")
KERNEL(divpd, "", "divpd %%xmm1, %%xmm0")
KERNEL(sqrtsd, "", "sqrtsd %%xmm1, %%xmm0")
KERNEL(sqrtps, "", "sqrtps %%xmm1, %%xmm0")
KERNEL(rcpps, "", "rcpps %%xmm1, %%xmm0")
KERNEL(rsqrtss, "", "rsqrtss %%xmm1, %%xmm0")
KERNEL(dpps, "", "dpps $0xff, %%xmm1, %%xmm0")
KERNEL(maxpd, "", "maxpd %%xmm1, %%xmm0")
KERNEL(minss, "", "minss %%xmm1, %%xmm0")
KERNEL(haddpd, "", "haddpd %%xmm1, %%xmm0")
KERNEL(addsubps, "", "addsubps %%xmm1, %%xmm0")
/* AVX / FMA3 (VEX) */
KERNEL(vaddps_x, "", "vaddps %%xmm1, %%xmm2, %%xmm0")
KERNEL(vaddpd_y, "", "vaddpd %%ymm1, %%ymm2, %%ymm0")
KERNEL(vsubps_y, "", "vsubps %%ymm1, %%ymm2, %%ymm0")
KERNEL(vmulpd_y, "", "vmulpd %%ymm1, %%ymm2, %%ymm0")
KERNEL(vdivps_y, "", "vdivps %%ymm1, %%ymm2, %%ymm0")
KERNEL(vsqrtpd_y, "", "vsqrtpd %%ymm1, %%ymm0")
KERNEL(vfmadd231sd, "", "vfmadd231sd %%xmm1, %%xmm2, %%xmm0")
KERNEL(vfmadd231ss, "", "vfmadd231ss %%xmm1, %%xmm2, %%xmm0")
KERNEL(vfmadd213pd_x, "", "vfmadd213pd %%xmm1, %%xmm2, %%xmm0")
KERNEL(vfnmsub231ps_y, "", "vfnmsub231ps %%ymm1, %%ymm2, %%ymm0")
KERNEL(vfmaddsub132pd_y, "", "vfmaddsub132pd %%ymm1, %%ymm2, %%ymm0")
KERNEL(vaddsd, "", "vaddsd %%xmm1, %%xmm2, %%xmm0")
/* AVX-512 (EVEX) */
KERNEL(vaddpd_z, "", "vaddpd %%zmm1, %%zmm2, %%zmm0")
KERNEL(vaddps_z, "", "vaddps %%zmm1, %%zmm2, %%zmm0")
KERNEL(vmulps_z, "", "vmulps %%zmm1, %%zmm2, %%zmm0")
KERNEL(vdivpd_z, "", "vdivpd %%zmm1, %%zmm2, %%zmm0")
KERNEL(vsqrtps_z, "", "vsqrtps %%zmm1, %%zmm0")
KERNEL(vfmadd231pd_z, "", "vfmadd231pd %%zmm1, %%zmm2, %%zmm0")
KERNEL(vfmadd231ps_z, "", "vfmadd231ps %%zmm1, %%zmm2, %%zmm0")
KERNEL(vrcp14pd_z, "", "vrcp14pd %%zmm1, %%zmm0")
KERNEL(vmaxps_z, "", "vmaxps %%zmm1, %%zmm2, %%zmm0")
KERNEL(vaddpd_z_er, "", "vaddpd %{rn-sae%}, %%zmm1, %%zmm2, %%zmm0")
KERNEL(vaddps_y_evex, "", "vaddps %%ymm17, %%ymm18, %%ymm16")
/* AVX-512 masked: k1=0x0f k2=0xff k3=0x05 k4=0 k5=0x3 */
KERNEL(vaddpd_z_k1, KSET, "vaddpd %%zmm1, %%zmm2, %%zmm0%{%%k1%}")
KERNEL(vfmadd231ps_z_k2z, KSET, "vfmadd231ps %%zmm1, %%zmm2, %%zmm0%{%%k2%}%{z%}")
KERNEL(vmulpd_y_k3, KSET, "vmulpd %%ymm1, %%ymm2, %%ymm0%{%%k3%}")
KERNEL(vaddsd_k4, KSET, "vaddsd %%xmm1, %%xmm2, %%xmm0%{%%k4%}")
KERNEL(vaddsd_k1, KSET, "vaddsd %%xmm1, %%xmm2, %%xmm0%{%%k1%}")
KERNEL(vdivps_x_k1z, KSET, "vdivps %%xmm1, %%xmm2, %%xmm0%{%%k1%}%{z%}")
/* AVX-512 FP16 */
KERNEL(vaddph_x, "", "vaddph %%xmm1, %%xmm2, %%xmm0")
KERNEL(vaddph_y, "", "vaddph %%ymm1, %%ymm2, %%ymm0")
KERNEL(vaddph_z, "", "vaddph %%zmm1, %%zmm2, %%zmm0")
KERNEL(vaddsh, "", "vaddsh %%xmm1, %%xmm2, %%xmm0")
KERNEL(vmulph_z, "", "vmulph %%zmm1, %%zmm2, %%zmm0")
KERNEL(vdivph_y, "", "vdivph %%ymm1, %%ymm2, %%ymm0")
KERNEL(vsqrtph_z, "", "vsqrtph %%zmm1, %%zmm0")
KERNEL(vfmadd231ph_z, "", "vfmadd231ph %%zmm1, %%zmm2, %%zmm0")
KERNEL(vfmadd231sh, "", "vfmadd231sh %%xmm1, %%xmm2, %%xmm0")
KERNEL(vfmulcph_z, "", "vfmulcph %%zmm1, %%zmm2, %%zmm0")
KERNEL(vfcmaddcph_y, "", "vfcmaddcph %%ymm1, %%ymm2, %%ymm0")
KERNEL(vfmaddcsh, "", "vfmaddcsh %%xmm1, %%xmm2, %%xmm0")
KERNEL(vfmulcph_z_k1, KSET, "vfmulcph %%zmm1, %%zmm2, %%zmm0%{%%k1%}")
KERNEL(vaddph_z_k2, KSET, "vaddph %%zmm1, %%zmm2, %%zmm0%{%%k2%}")
/* AVX-512 BF16 */
KERNEL(vdpbf16ps_z, "", "vdpbf16ps %%zmm1, %%zmm2, %%zmm0")
KERNEL(vdpbf16ps_x, "", "vdpbf16ps %%xmm1, %%xmm2, %%xmm0")
KERNEL(vdpbf16ps_y_k5, KSET, "vdpbf16ps %%ymm1, %%ymm2, %%ymm0%{%%k5%}")
/* no FLOPs: integer SIMD, moves, logic, conversions */
KERNEL(intloop, "",
       "add $3, %%eax\n imul %%eax, %%eax\n paddd %%xmm1, %%xmm0\n"
       "vpmulld %%zmm1, %%zmm2, %%zmm0\n vxorps %%xmm1, %%xmm1, %%xmm1\n"
       "cvtsi2sd %%eax, %%xmm2\n vmovapd %%zmm1, %%zmm0\n vcmppd $1, %%zmm1, %%zmm2, %%k1")
/* extras */
KERNEL(vinsertf128, "", "vinsertf128 $1, %%xmm1, %%ymm0, %%ymm0")
KERNEL(vandpd_y, "", "vandpd %%ymm1, %%ymm2, %%ymm0")

/* the benchmark's loop: 14 FP instructions + dec + jnz, like an unrolled
 * inner loop (bench/bench_trace.c) */
KERNEL(bench16, "",
       "vfmadd231pd %%zmm1, %%zmm2, %%zmm0\n vfmadd231pd %%zmm1, %%zmm2, %%zmm3\n"
       "vfmadd231pd %%zmm1, %%zmm2, %%zmm0\n vfmadd231pd %%zmm1, %%zmm2, %%zmm3\n"
       "vfmadd231pd %%zmm1, %%zmm2, %%zmm0\n vfmadd231pd %%zmm1, %%zmm2, %%zmm3\n"
       "vfmadd231pd %%zmm1, %%zmm2, %%zmm0\n vfmadd231pd %%zmm1, %%zmm2, %%zmm3\n"
       "vaddpd %%zmm1, %%zmm2, %%zmm0\n vaddpd %%zmm1, %%zmm2, %%zmm3\n"
       "vmulpd %%zmm1, %%zmm2, %%zmm0\n vmulpd %%zmm1, %%zmm2, %%zmm3\n"
       "vaddpd %%zmm1, %%zmm2, %%zmm0\n vaddpd %%zmm1, %%zmm2, %%zmm3")

/* x87: the loop keeps one value on the stack */
#define X87(name, insn)                                                           \
	static void name(long n)                                                  \
	{                                                                         \
		__asm__ volatile("fld1\n fld1\n 1:\n" insn "\n dec %0\n jnz 1b\n" \
				 "fstp %%st(0)\n fstp %%st(0)"                    \
				 : "+r"(n)                                        \
				 :                                                \
				 : "st", "st(1)", "cc");                          \
	}
X87(fadd, "fadd %%st(1), %%st")
X87(fmul, "fmul %%st(1), %%st")
X87(fdiv, "fdiv %%st(1), %%st")
X87(fsqrt, "fsqrt")

/*
 * The mask is written inside the loop body: k1 = i & 0xff before each
 * vaddpd zmm{k1} (i = N..1), so the tracer must read k1 per instruction.
 * Active lanes: sum over i of popcount(i & 0xff).
 */
static void kmask_in_block(long n)
{
	__asm__ volatile("1:\n mov %0, %%rax\n and $0xff, %%eax\n"
			 " kmovw %%eax, %%k1\n"
			 " vaddpd %%zmm1, %%zmm2, %%zmm0%{%%k1%}\n"
			 " dec %0\n jnz 1b"
			 : "+r"(n)
			 :
			 : "rax", "xmm0", "cc");
}

/*
 * Flags live from one block into the next: the block holding `jnp` has
 * no instruction of its own that sets the flags, so the tracer's count
 * of it must leave them alone.  vmulpd runs when the low byte of the
 * counter, after the decrement, has even parity: i = N-1..1.
 */
static void flags_live(long n)
{
	__asm__ volatile("1: vaddpd %%xmm1, %%xmm2, %%xmm0\n"
			 " sub $1, %0\n"
			 " jz 3f\n"
			 " jnp 2f\n"
			 " vmulpd %%xmm1, %%xmm2, %%xmm0\n"
			 "2: jmp 1b\n"
			 "3:"
			 : "+r"(n)
			 :
			 : "xmm0", "cc");
}

/*
 * Indirect calls in each operand form the code cache rewrites: through
 * %r11 (REX.B), through memory RIP-relative, with an index register, and
 * at the top of the stack (read before the call pushes).  Each target
 * runs one vmulpd xmm: per loop 1 vaddpd xmm + 4 vmulpd xmm.
 */
__asm__(".pushsection .text\n"
	"ind_target:\n vmulpd %xmm1, %xmm2, %xmm0\n ret\n"
	".popsection\n"
	".pushsection .data\n .balign 8\n"
	"ind_ptr: .quad ind_target\n"
	"ind_tab: .quad 0, ind_target\n"
	".popsection\n");

static void indirect(long n)
{
	__asm__ volatile("sub $128, %%rsp\n" /* calls below: skip the red zone */
			 "1: vaddpd %%xmm1, %%xmm2, %%xmm0\n"
			 " lea ind_target(%%rip), %%r11\n call *%%r11\n"
			 " call *ind_ptr(%%rip)\n"
			 " lea ind_tab(%%rip), %%rax\n mov $1, %%ecx\n"
			 " call *(%%rax,%%rcx,8)\n"
			 " push %%r11\n call *(%%rsp)\n pop %%r11\n"
			 " dec %0\n jnz 1b\n"
			 "add $128, %%rsp"
			 : "+r"(n)
			 :
			 : "rax", "rcx", "r11", "xmm0", "memory", "cc");
}

/* Flags from `add $5, %rdx` (j-th loop: rdx = 5j) read by a block whose
 * only flag writer is `repe cmpsb` at %rcx = 0, which changes none: the
 * count's increment cannot lean on it.  vmulpd runs when the low byte of
 * 5j has even parity, j = 1..N-1. */
static void flags_rep(long n)
{
	__asm__ volatile("xor %%edx, %%edx\n"
			 "1: vaddpd %%xmm1, %%xmm2, %%xmm0\n"
			 " dec %0\n"
			 " jz 3f\n"
			 " add $5, %%rdx\n"
			 " jnz 4f\n"
			 "4: mov $0, %%ecx\n lea ind_ptr(%%rip), %%rsi\n"
			 " mov %%rsi, %%rdi\n repe cmpsb\n"
			 " jnp 2f\n"
			 " vmulpd %%xmm1, %%xmm2, %%xmm0\n"
			 "2: jmp 1b\n"
			 "3:"
			 : "+r"(n)
			 :
			 : "rcx", "rdx", "rsi", "rdi", "xmm0", "memory", "cc");
}

/* Two FP instructions per iteration in a call/ret chain: exercises the
 * emulation of call, ret and an indirect jump through a table. */
__attribute__((noinline)) static void callee(void)
{
	__asm__ volatile("vaddpd %%ymm1, %%ymm2, %%ymm0" ::: "xmm0");
}
static void (*volatile callee_ptr)(void) = callee;
static void calls(long n)
{
	for (long i = 0; i < n; i++) {
		callee();
		callee_ptr();
	}
}

/*
 * Masked AVX-512 work whose lanes are known (the masked-lane sampling
 * checks, docs/masked-lanes.md).
 *
 * daxpy_masked N: N calls of daxpy(11): y = a*x + y over 11 doubles, one
 * 512-bit FMA over 8 and one under k1 = 0x07 over the last 3, as an
 * AVX-512 compiler writes a masked remainder.  22 FLOPs per call, 32 if
 * every lane counted.  The mask is set in its own block (kmovw; jmp) so
 * the masked block is not single-stepped.
 */
static double dx[16] __attribute__((aligned(64))), dy[16] __attribute__((aligned(64)));

__attribute__((noipa)) static void daxpy(long n, double *y, const double *x)
{
	__asm__ volatile("vpxord %%zmm2, %%zmm2, %%zmm2\n"
			 " mov %[n], %%rcx\n shr $3, %%rcx\n jz 2f\n"
			 "1: vmovupd (%[x]), %%zmm0\n"
			 " vfmadd213pd (%[y]), %%zmm2, %%zmm0\n"
			 " vmovupd %%zmm0, (%[y])\n"
			 " add $64, %[x]\n add $64, %[y]\n"
			 " dec %%rcx\n jnz 1b\n"
			 "2: mov %[n], %%rcx\n and $7, %%ecx\n jz 4f\n"
			 " mov $1, %%eax\n shl %%cl, %%eax\n dec %%eax\n"
			 " kmovw %%eax, %%k1\n jmp 3f\n"
			 "3: vmovupd (%[x]), %%zmm0%{%%k1%}%{z%}\n"
			 " vfmadd213pd (%[y]), %%zmm2, %%zmm0%{%%k1%}\n"
			 " vmovupd %%zmm0, (%[y])%{%%k1%}\n"
			 "4:\n"
			 : [x] "+r"(x), [y] "+r"(y)
			 : [n] "r"(n)
			 : "rax", "rcx", "xmm0", "xmm2", "memory", "cc");
}

static void daxpy_masked(long n)
{
	for (long i = 0; i < n; i++)
		daxpy(11, dy, dx);
}

/* fma_kmix N: per iteration 8 FMAs on 512-bit doubles under k1..k7 =
 * 0x01, 0x03 .. 0x7f and none: 36 of 64 lanes, 72 FLOPs (128 in full). */
KERNEL(fma_kmix,
       "mov $0x01, %%eax\n kmovw %%eax, %%k1\n mov $0x03, %%eax\n kmovw %%eax, %%k2\n"
       "mov $0x07, %%eax\n kmovw %%eax, %%k3\n mov $0x0f, %%eax\n kmovw %%eax, %%k4\n"
       "mov $0x1f, %%eax\n kmovw %%eax, %%k5\n mov $0x3f, %%eax\n kmovw %%eax, %%k6\n"
       "mov $0x7f, %%eax\n kmovw %%eax, %%k7\n",
       "vfmadd231pd %%zmm1, %%zmm2, %%zmm0%{%%k1%}\n vfmadd231pd %%zmm1, %%zmm2, %%zmm3%{%%k2%}\n"
       "vfmadd231pd %%zmm1, %%zmm2, %%zmm0%{%%k3%}\n vfmadd231pd %%zmm1, %%zmm2, %%zmm3%{%%k4%}\n"
       "vfmadd231pd %%zmm1, %%zmm2, %%zmm0%{%%k5%}\n vfmadd231pd %%zmm1, %%zmm2, %%zmm3%{%%k6%}\n"
       "vfmadd231pd %%zmm1, %%zmm2, %%zmm0%{%%k7%}\n vfmadd231pd %%zmm1, %%zmm2, %%zmm3")

struct kernel {
	const char *name, *feature;
	void (*fn)(long);
};
#define E(k, f) { #k, f, k },
static const struct kernel kernels[] = { CALIB_FP_KERNELS(E) };

static void say(const char *s)
{
	long n = 0, r = 1; /* write(2, s, n) */

	while (s[n])
		n++;
	__asm__ volatile("syscall" : "+a"(r) : "D"(2L), "S"(s), "d"(n) : "rcx", "r11", "memory");
}

static const char *getenv_(char **envp, const char *name)
{
	for (; *envp; envp++) {
		const char *e = *envp, *n = name;

		while (*n && *e == *n)
			e++, n++;
		if (!*n && *e == '=')
			return e + 1;
	}
	return 0;
}

/* 77 (the tests' skip) with a sentence when this CPU lacks `f` */
static int lacks(const char *k, const char *f, char **envp)
{
	const char *hide = getenv_(envp, PFC_CPU_HIDE_ENV);

	if (pfc_cpu_has(f, hide) == 1)
		return 0;
	say("calib_fp: ");
	say(k);
	say(": this CPU lacks ");
	say(f);
	say(pfc_cpu_has(f, 0) == 1 ? " (hidden by " PFC_CPU_HIDE_ENV ")\n" : "\n");
	return 77;
}

/*
 * calib_fp --needs KERNEL: exit 0 if this CPU runs KERNEL, 77 (with the
 * sentence) if it lacks the feature, 101 for an unknown kernel.
 */
int calib_main(int argc, char **argv)
{
	char **envp = argv + argc + 1;
	int needs = argc == 3 && calib_streq(argv[1], "--needs");

	if (argc < 3)
		return 100;
	for (unsigned i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
		if (calib_streq(argv[1 + needs], kernels[i].name)) {
			long n = calib_atol(argv[2]);
			if (lacks(kernels[i].name, kernels[i].feature, envp))
				return 77;
			if (needs)
				return 0;
			if (n > 0)
				kernels[i].fn(n);
			return argc > 3 ? (int)calib_atol(argv[3]) : 0;
		}
	return 101; /* unknown kernel */
}
