/*
 * calib_far.c: translation ahead and code split off as unlikely
 * (test_trace.c: test_cache_far).  `hot_far` and `hot_near` each branch
 * backwards to a chain of 16 blocks that never runs (the argument is 0);
 * hot_far's chain lies 64 KiB and more before it, as a compiler lays out
 * its `.text.unlikely` and `foo.cold` parts, hot_near's right before it.
 * argv[1]: "far" or "near", which one runs, 1,000 times.
 */
#include "calib.h"

int hot_far(int x);
int hot_near(int x);

#define CHAIN_BLOCK "	add $1, %eax\n	cmp $7, %eax\n	je 9f\n"
#define CHAIN4 CHAIN_BLOCK CHAIN_BLOCK CHAIN_BLOCK CHAIN_BLOCK
#define CHAIN CHAIN4 CHAIN4 CHAIN4 CHAIN4 "9:	ret\n"

/* (the ret first: _start's last block, the exit_group call, falls
 * through to here, and translation ahead follows that) */
__asm__(".text\n"
	"	ret\n"
	".p2align 4\n"
	"chain_far:\n" CHAIN ".skip 70000, 0xcc\n"
	".p2align 4\n"
	".globl hot_far\n"
	"hot_far:\n"
	"	xor %eax, %eax\n"
	"	test %edi, %edi\n"
	"	jnz chain_far\n"
	"	ret\n"
	".p2align 4\n"
	"chain_near:\n" CHAIN ".p2align 4\n"
	".globl hot_near\n"
	"hot_near:\n"
	"	xor %eax, %eax\n"
	"	test %edi, %edi\n"
	"	jnz chain_near\n"
	"	ret\n");

/* called through a table: translation ahead does not follow an indexed
 * indirect call, so the function that does not run is not met either */
static int (*volatile pick[2])(int) = { hot_near, hot_far };

int calib_main(int argc, char **argv)
{
	int far = argc > 1 && calib_streq(argv[1], "far"), s = 0;

	if (argc < 2 || (!far && !calib_streq(argv[1], "near")))
		return 2;
	for (volatile int i = 0; i < 1000; i++)
		s += pick[far](0);
	return s;
}
