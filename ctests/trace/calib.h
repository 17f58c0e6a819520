/*
 * calib.h: freestanding startup for the calibration programs.
 *
 * The calibration programs are linked with -nostdlib -static: no dynamic
 * loader and no libc start-up run before or after the kernel, so every
 * instruction the tracer sees is one the test can count by hand.
 * _start calls calib_main(argc, argv) and exits with its return value.
 */
#ifndef CALIB_H
#define CALIB_H

int calib_main(int argc, char **argv);

__asm__(".globl _start\n"
	"_start:\n"
	"	mov (%rsp), %rdi\n"  /* argc */
	"	lea 8(%rsp), %rsi\n" /* argv */
	"	and $-64, %rsp\n"
	"	call calib_main\n"
	"	mov %eax, %edi\n"
	"	mov $231, %eax\n" /* exit_group */
	"	syscall\n");

static inline long calib_atol(const char *s)
{
	long v = 0;

	while (s && *s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return v;
}

static inline int calib_streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

#endif
