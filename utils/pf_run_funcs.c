/*
 * papi_flops_run --by-function: the traced blocks grouped by function
 * (pft_funcs_*, the core's symbolizer), and per function the same
 * metrics as the whole report: exact for the trace source; for
 * model:PMU, what the PMU's formulas read for that function's own mix.
 * Both are sums over blocks (the model's formulas are linear in the
 * mix), so the rows and the "rest" row add up to the report's totals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pf_run_funcs.h"

#define EXIT_TOOL 125

#define is_flop pflops_metric_is_flop

static int key_metric; /* for the sort below */

static int row_cmp(const void *pa, const void *pb)
{
	const struct pf_func_row *a = pa, *b = pb;
	int c;

	if (a->v[key_metric] != b->v[key_metric])
		return a->v[key_metric] > b->v[key_metric] ? -1 : 1;
	if ((c = strcmp(a->name, b->name)))
		return c;
	return strcmp(a->object ? a->object : "", b->object ? b->object : "");
}

void pf_byfunc_free(struct pf_byfunc *b)
{
	for (size_t i = 0; i < b->nrows; i++) {
		free(b->rows[i].name);
		free(b->rows[i].object);
	}
	free(b->rows);
	memset(b, 0, sizeof(*b));
}

int pf_byfunc_fill(struct pf_report *r, struct pft_funcs *f, const struct pflops_pmu *pmu, unsigned top)
{
	struct pf_byfunc *b = &r->byfunc;
	const struct pft_func *const *v;
	struct pflops_error err = { 0 };
	size_t n, k = 0;

	memset(b, 0, sizeof(*b));
	for (int m = 0; m < PFLOPS_NMETRIC; m++)
		if (is_flop(m) && (r->asked & r->got) >> m & 1)
			b->metrics |= 1u << m;
	if (!b->metrics)
		return 0; /* refused with --metrics earlier; nothing measured */
	b->key = b->metrics & 1u << PFLOPS_FP_OPS ? PFLOPS_FP_OPS : __builtin_ctz(b->metrics);
	b->values = pmu ? "model" : "exact";
	if (pft_funcs_list(f, &v, &n, &err)) {
		fprintf(stderr, "papi_flops_run: --by-function: %s\n", err.msg);
		return EXIT_TOOL;
	}
	if (!(b->rows = calloc(n ? n : 1, sizeof(*b->rows)))) {
		fprintf(stderr, "papi_flops_run: --by-function: out of memory\n");
		return EXIT_TOOL;
	}
	for (size_t i = 0; i < n; i++) {
		struct pf_func_row *row = &b->rows[k];
		double val[PFLOPS_NMETRIC] = { 0 };
		unsigned got = b->metrics;
		int any = 0;
		if (!pmu)
			pflops_mix_metrics(&v[i]->mix, val);
		else if (pflops_model_metrics(pmu, &v[i]->mix, b->metrics, 0, val, &got, &err)) {
			fprintf(stderr, "papi_flops_run: --by-function: %s\n", err.msg);
			b->nrows = k;
			return EXIT_TOOL;
		}
		for (int m = 0; m < PFLOPS_NMETRIC; m++)
			if (b->metrics >> m & 1) {
				row->v[m] = val[m];
				any |= val[m] != 0;
			}
		if (!any)
			continue; /* ran, but did no FLOP (as this source counts them) */
		row->name = strdup(v[i]->name);
		row->object = v[i]->object ? strdup(v[i]->object) : NULL;
		row->has_symbol = v[i]->has_symbol;
		row->addr = v[i]->addr;
		b->nrows = ++k;
		if (!row->name || (v[i]->object && !row->object)) {
			fprintf(stderr, "papi_flops_run: --by-function: out of memory\n");
			return EXIT_TOOL;
		}
	}
	key_metric = b->key;
	qsort(b->rows, k, sizeof(*b->rows), row_cmp);
	b->nfuncs = k;
	if (top && k > top) { /* the rest summed into one row */
		for (size_t i = top; i < k; i++) {
			for (int m = 0; m < PFLOPS_NMETRIC; m++)
				b->rest[m] += b->rows[i].v[m];
			free(b->rows[i].name);
			free(b->rows[i].object);
		}
		b->nrows = top;
	}
	return 0;
}
