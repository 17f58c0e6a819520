/*
 * model.c: what one hardware event would count for a traced instruction
 * mix, from the event's model spec in the presets table:
 *
 *   UNIT [prec=LIST] [width=LIST] [ops=LIST] [fma=N] [dpp=N] [plus=EXTRA,...]
 *
 *   inst          one per matching instruction; FMA-family ones count N
 *                 (fma=N, default 1), as FP_ARITH counts an FMA twice;
 *                 DPPS/DPPD count dpp=N (default 1): Intel's FP_ARITH
 *                 descriptions say "DPP and FM(N)ADD/SUB instructions
 *                 count twice" (perfmon SKX..SPR *_core.json)
 *   flops         elements x FLOPs per element over all lanes (masked
 *                 lanes included, as FP_ARITH and Zen count them)
 *   flops_active  the same over active lanes only
 *   none          not modelled on x86 (Arm events): PFLOPS_EUNAVAIL
 *
 * For flops units, fma=N and dpp=N (when given) replace the FLOPs per
 * FMA lane (2) and per DPP lane (1).
 * plus= adds extra[] counts (vinsertf128, 256_nonfp), for PMUs whose
 * event counts such instructions too (Haswell AVX_INSTS.CALC).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pflops_model.h"
#include "pflops_trace.h"

static int fail(struct pflops_error *err, int code, const char *spec, const char *what, const char *tok, size_t len)
{
	if (err) {
		err->code = code;
		snprintf(err->msg, sizeof err->msg,
			 "model '%s': %s '%.*s'; valid: UNIT (inst, flops, "
			 "flops_active, none) then prec=, width=, ops=, fma=N, dpp=N, plus=",
			 spec, what, (int)len, tok);
	}
	return code;
}

/* Parse "a,b,c" against names(i) for i < n into a bit mask. */
static int list(const char *s, size_t len, const char *(*name)(int), int n, unsigned *mask, const char **bad,
		size_t *badlen)
{
	*mask = 0;
	while (len) {
		const char *comma = memchr(s, ',', len);
		size_t l = comma ? (size_t)(comma - s) : len;
		int i;

		for (i = 0; i < n; i++)
			if (strlen(name(i)) == l && !strncmp(name(i), s, l))
				break;
		if (i == n || l == 0) {
			*bad = s;
			*badlen = l;
			return -1;
		}
		*mask |= 1u << i;
		if (!comma)
			break;
		len -= l + 1;
		s += l + 1;
		if (!len) { /* trailing comma */
			*bad = s - 1;
			*badlen = 1;
			return -1;
		}
	}
	return 0;
}

static const char *prec_n(int i)
{
	return pflops_prec_name((enum pflops_prec)i);
}
static const char *width_n(int i)
{
	return pflops_width_name((enum pflops_width)i);
}
static const char *op_n(int i)
{
	return pflops_op_name((enum pflops_op)i);
}
static const char *extra_n(int i)
{
	static const char *const n[] = { "vinsertf128", "256_nonfp" };
	return i < PFLOPS_NEXTRA ? n[i] : "?";
}

int pfc_model_parse(const char *spec, struct pfc_model *out, struct pflops_error *err)
{
	unsigned precs = (1u << PFLOPS_NPREC) - 1, widths = (1u << PFLOPS_NWIDTH) - 1, ops = (1u << PFLOPS_NOP) - 1,
		 plus = 0;
	int unit = -1;
	double fma = -1, dpp = -1;
	const char *p = spec;

	if (!spec || !out)
		return fail(err, PFLOPS_EINVAL, spec ? spec : "(null)", "missing argument", "", 0);
	for (;;) {
		const char *tok, *eq, *bad;
		size_t len, badlen;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		tok = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		len = (size_t)(p - tok);
		eq = memchr(tok, '=', len);
		if (unit < 0) { /* the first token is the unit */
			static const char *const units[] = { "inst", "flops", "flops_active", "none" };
			for (int i = 0; i < 4; i++)
				if (strlen(units[i]) == len && !strncmp(units[i], tok, len))
					unit = i;
			if (unit < 0)
				return fail(err, PFLOPS_EINVAL, spec, "unknown unit", tok, len);
			continue;
		}
		if (!eq)
			return fail(err, PFLOPS_EINVAL, spec, "expected key=value, got", tok, len);
		size_t klen = (size_t)(eq - tok), vlen = len - klen - 1;
		const char *v = eq + 1;
		int rc = 0;

		if (klen == 4 && !strncmp(tok, "prec", 4))
			rc = list(v, vlen, prec_n, PFLOPS_NPREC, &precs, &bad, &badlen);
		else if (klen == 5 && !strncmp(tok, "width", 5))
			rc = list(v, vlen, width_n, PFLOPS_NWIDTH, &widths, &bad, &badlen);
		else if (klen == 3 && !strncmp(tok, "ops", 3))
			rc = list(v, vlen, op_n, PFLOPS_NOP, &ops, &bad, &badlen);
		else if (klen == 4 && !strncmp(tok, "plus", 4))
			rc = list(v, vlen, extra_n, PFLOPS_NEXTRA, &plus, &bad, &badlen);
		else if (klen == 3 && (!strncmp(tok, "fma", 3) || !strncmp(tok, "dpp", 3))) {
			char num[16], *end;
			if (vlen == 0 || vlen >= sizeof num)
				return fail(err, PFLOPS_EINVAL, spec, "bad count in", tok, len);
			memcpy(num, v, vlen);
			num[vlen] = 0;
			long n = strtol(num, &end, 10);
			if (*end || n < 0 || n > 64)
				return fail(err, PFLOPS_EINVAL, spec, "bad count in", tok, len);
			*(tok[0] == 'f' ? &fma : &dpp) = (double)n;
		} else
			return fail(err, PFLOPS_EINVAL, spec, "unknown key in", tok, len);
		if (rc) {
			if (vlen == 0) {
				bad = tok;
				badlen = len;
			}
			return fail(err, PFLOPS_EINVAL, spec, "unknown value", bad, badlen);
		}
	}
	if (unit < 0)
		return fail(err, PFLOPS_EINVAL, spec, "empty model, expected a unit", "", 0);
	*out = (struct pfc_model){ (enum pfc_model_unit)unit, precs, widths, ops, plus, fma, dpp };
	return 0;
}

int pfc_model_single(unsigned mask, int n)
{
	for (int i = 0; i < n; i++)
		if (mask == 1u << i)
			return i;
	return -1;
}

int pfc_model_eval(const char *spec, const struct pflops_mix *m, double *count, struct pflops_error *err)
{
	struct pfc_model md;
	double sum = 0;
	if (!m || !count)
		return fail(err, PFLOPS_EINVAL, spec ? spec : "(null)", "missing argument", "", 0);
	int rc = pfc_model_parse(spec, &md, err);
	if (rc)
		return rc;
	unsigned precs = md.precs, widths = md.widths, ops = md.ops, plus = md.plus;
	double fma = md.fma, dpp = md.dpp;
	int unit = md.unit;
	if (unit == PFC_MODEL_NONE) {
		if (err) {
			err->code = PFLOPS_EUNAVAIL;
			snprintf(err->msg, sizeof err->msg,
				 "model '%s': this event "
				 "cannot be modelled from an x86 trace",
				 spec);
		}
		return PFLOPS_EUNAVAIL;
	}

	for (int pr = 0; pr < PFLOPS_NPREC; pr++)
		for (int w = 0; w < PFLOPS_NWIDTH; w++)
			for (int o = 0; o < PFLOPS_NOP; o++) {
				double per;
				if (!((precs >> pr) & 1) || !((widths >> w) & 1) || !((ops >> o) & 1))
					continue;
				if (unit == PFC_MODEL_INST) {
					per = o == PFLOPS_OP_FMA   ? (fma < 0 ? 1 : fma)
					      : o == PFLOPS_OP_DPP ? (dpp < 0 ? 1 : dpp)
								   : 1;
					sum += per * (double)m->insts[pr][w][o];
					continue;
				}
				per = o == PFLOPS_OP_FMA && fma >= 0   ? fma
				      : o == PFLOPS_OP_DPP && dpp >= 0 ? dpp
								       : pflops_op_flops((enum pflops_op)o);
				sum += per * (double)(unit == PFC_MODEL_FLOPS ? m->lanes_full[pr][w][o]
									      : m->lanes_active[pr][w][o]);
			}
	for (int x = 0; x < PFLOPS_NEXTRA; x++)
		if ((plus >> x) & 1)
			sum += (double)m->extra[x];
	*count = sum;
	return 0;
}
