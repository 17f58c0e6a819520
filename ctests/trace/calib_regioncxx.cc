// calib_regioncxx.cc: --region left by a C++ exception.
//
//   calib_regioncxx N   3 times: ekern(N) runs N vaddpd ymm and throws;
//                       main catches it and runs outside(N) [N vdivpd
//                       xmm].  Region ekern: 3 calls, 3N vaddpd, no vdivpd.
#include <cstdlib>

__attribute__((noinline)) static void outside(long n)
{
	__asm__ volatile("1: vdivpd %%xmm1, %%xmm2, %%xmm0\n dec %0\n jnz 1b"
			 : "+r"(n) : : "xmm0", "cc");
}

extern "C" __attribute__((noinline)) void ekern(long n);
extern "C" __attribute__((noinline)) void ekern(long n)
{
	long m = n;

	__asm__ volatile("1: vaddpd %%ymm1, %%ymm2, %%ymm0\n dec %0\n jnz 1b"
			 : "+r"(m) : : "xmm0", "cc");
	if (n > 0)
		throw n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 1000;
	int caught = 0;

	for (int i = 0; i < 3; i++) {
		try {
			ekern(n);
		} catch (long) {
			caught++;
		}
		outside(n);
	}
	return caught == 3 ? 0 : 1;
}
