/*
 * mix.c: FLOPs of an instruction mix, and the names of its operations
 * (precisions and widths: metric.c).
 */
#include "papi_flops.h"

/*
 * FLOPs per element.  FMA does a multiply and an add per lane.  For the
 * FP16 complex instructions (vf[c]mulc{ph,sh}, vf[c]maddc{ph,sh}) a lane is
 * one FP16 element (a complex number is two), and each lane counts 1:
 * 2 per complex number, which is the weight Intel's TMA metrics give
 * FP_ARITH_INST_RETIRED2.COMPLEX_* (the arithmetic is really 6-8 real
 * operations per complex number; the convention is the PMU's, not ours).
 */
unsigned pflops_op_flops(enum pflops_op op)
{
	switch (op) {
	case PFLOPS_OP_FMA:
		return 2;
	case PFLOPS_OP_ADD:
	case PFLOPS_OP_MUL:
	case PFLOPS_OP_DIV:
	case PFLOPS_OP_SQRT:
	case PFLOPS_OP_RCP:
	case PFLOPS_OP_DPP:
	case PFLOPS_OP_MINMAX:
	case PFLOPS_OP_CMPLX:
		return 1;
	default:
		return 0;
	}
}

uint64_t pflops_mix_flops(const struct pflops_mix *m, int prec)
{
	uint64_t sum = 0;

	for (int p = 0; p < PFLOPS_NPREC; p++) {
		if (prec >= 0 && p != prec)
			continue;
		for (int w = 0; w < PFLOPS_NWIDTH; w++)
			for (int o = 0; o < PFLOPS_NOP; o++)
				sum += m->lanes_active[p][w][o] * pflops_op_flops((enum pflops_op)o);
	}
	return sum;
}

const char *pflops_op_name(enum pflops_op o)
{
	static const char *const n[] = { "add", "mul", "div", "sqrt", "rcp", "fma", "dpp", "minmax", "cmplx" };
	return (unsigned)o < PFLOPS_NOP ? n[o] : "?";
}
