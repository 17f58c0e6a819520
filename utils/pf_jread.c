/*
 * The strict JSON reader of pf_jread.h: recursive descent over a byte
 * range, nothing past it read, errors with line and column.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pf_jread.h"
#include "pflops_internal.h"

struct jp {
	const char *s, *end;
	const char *p;
	struct pflops_error *err;
};

static int fail(struct jp *j, const char *what)
{
	int line = 1, col = 1;
	for (const char *q = j->s; q < j->p; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	if (j->p >= j->end)
		return pfc_err(j->err, PFLOPS_EINVAL, "line %d, column %d: the text ends where %s", line, col, what);
	unsigned char c = (unsigned char)*j->p;
	if (c >= 0x20 && c < 0x7f)
		return pfc_err(j->err, PFLOPS_EINVAL, "line %d, column %d: '%c' where %s", line, col, c, what);
	return pfc_err(j->err, PFLOPS_EINVAL, "line %d, column %d: byte 0x%02x where %s", line, col, c, what);
}

static int nomem(struct jp *j)
{
	return pfc_err(j->err, PFLOPS_ENOMEM, "out of memory reading JSON");
}

static void skip_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int lit(struct jp *j, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n))
		return fail(j, "a value was expected (a JSON literal is true, false or null)");
	j->p += n;
	return 0;
}

static int hex4(struct jp *j, unsigned *u)
{
	*u = 0;
	for (int i = 0; i < 4; i++, j->p++) {
		char c = j->p < j->end ? *j->p : 0;
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0)
			return fail(j, "\\u needs four hex digits");
		*u = *u << 4 | (unsigned)d;
	}
	return 0;
}

/* one UTF-8 sequence, checked (no overlong form, no surrogate, <= U+10FFFF) */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	int n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (!n || end - p < n)
		return 0;
	unsigned cp = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	static const unsigned min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* a string at j->p (the opening quote); *out malloc'ed, NUL-terminated */
static int string(struct jp *j, char **out)
{
	const char *q = ++j->p;
	while (q < j->end && *q != '"')
		q += *q == '\\' && q + 1 < j->end ? 2 : 1;
	char *o = malloc((size_t)(q - j->p) + 1); /* escapes never grow */
	size_t n = 0;
	if (!o)
		return nomem(j);
	for (;;) {
		if (j->p >= j->end) {
			free(o);
			return fail(j, "a string was not closed");
		}
		unsigned char c = (unsigned char)*j->p;
		if (c == '"')
			break;
		if (c < 0x20) {
			free(o);
			return fail(j, "a control character must be escaped in a string");
		}
		if (c != '\\') {
			int len = utf8_len((const unsigned char *)j->p, (const unsigned char *)j->end);
			if (!len) {
				free(o);
				return fail(j, "a string holds a byte that is not UTF-8");
			}
			memcpy(o + n, j->p, (size_t)len);
			n += (size_t)len;
			j->p += len;
			continue;
		}
		j->p++;
		char e = j->p < j->end ? *j->p : 0;
		const char *esc = strchr("\"\\/bfnrt", e);
		if (e && esc) {
			o[n++] = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
			j->p++;
			continue;
		}
		if (e != 'u') {
			free(o);
			return fail(j, "a string escape is one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
		}
		j->p++;
		unsigned cp, lo;
		if (hex4(j, &cp)) {
			free(o);
			return PFLOPS_EINVAL;
		}
		if (cp >= 0xd800 && cp <= 0xdbff) { /* a surrogate pair: \uD8xx\uDCxx */
			if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u') {
				free(o);
				return fail(j, "a high surrogate \\uD800-\\uDBFF needs a low one after it");
			}
			j->p += 2;
			if (hex4(j, &lo)) {
				free(o);
				return PFLOPS_EINVAL;
			}
			if (lo < 0xdc00 || lo > 0xdfff) {
				free(o);
				return fail(j, "a high surrogate \\uD800-\\uDBFF needs a low one after it");
			}
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		} else if (cp >= 0xdc00 && cp <= 0xdfff) {
			free(o);
			return fail(j, "a low surrogate \\uDC00-\\uDFFF comes only after a high one");
		}
		if (!cp) {
			free(o);
			return fail(j, "a string holds \\u0000, which no report writes");
		}
		n += put_utf8(o + n, cp);
	}
	j->p++;
	o[n] = 0;
	*out = o;
	return 0;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int number(struct jp *j, double *v)
{
	const char *a = j->p;
#define DIGITS(need)                                                          \
	do {                                                                  \
		if ((need) && (j->p >= j->end || *j->p < '0' || *j->p > '9')) \
			return fail(j, "a digit was expected in a number");   \
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')         \
			j->p++;                                               \
	} while (0)
	if (*j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else
		DIGITS(1);
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		DIGITS(1);
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		DIGITS(1);
	}
#undef DIGITS
	char buf[64];
	if (j->p - a >= (long)sizeof(buf)) {
		j->p = a;
		return fail(j, "a number of at most 63 characters was expected");
	}
	memcpy(buf, a, (size_t)(j->p - a));
	buf[j->p - a] = 0;
	*v = strtod(buf, NULL);
	if (!isfinite(*v)) {
		j->p = a;
		return fail(j, "a number that fits a double was expected");
	}
	return 0;
}

static int value(struct jp *j, struct pf_jval *v, int depth);

/* grow a's items (and keys) to hold one more */
static int push(struct jp *j, struct pf_jval *a, size_t *cap)
{
	if (a->n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 8;
	struct pf_jval *it = realloc(a->items, nc * sizeof(*it));
	if (!it)
		return nomem(j);
	a->items = it;
	if (a->type == PF_JOBJ) {
		char **k = realloc(a->keys, nc * sizeof(*k));
		if (!k)
			return nomem(j);
		a->keys = k;
	}
	*cap = nc;
	return 0;
}

static int container(struct jp *j, struct pf_jval *v, int depth)
{
	int obj = *j->p == '{';
	char close = obj ? '}' : ']';
	size_t cap = 0;
	int rc;
	v->type = obj ? PF_JOBJ : PF_JARR;
	if (depth >= PF_JSON_DEPTH)
		return fail(j, "JSON nested deeper than a report is");
	j->p++;
	skip_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		if (obj && v->n >= PF_JSON_MEMBERS)
			return fail(j, "an object has more members than a report's objects have");
		if ((rc = push(j, v, &cap)))
			return rc;
		/* counted at once, so that pf_json_free frees it on any error */
		struct pf_jval *item = &v->items[v->n];
		memset(item, 0, sizeof(*item));
		if (obj)
			v->keys[v->n] = NULL;
		v->n++;
		if (obj) {
			skip_ws(j);
			if (j->p >= j->end || *j->p != '"')
				return fail(j, "a member name (a string) was expected");
			const char *at = j->p;
			if ((rc = string(j, &v->keys[v->n - 1])))
				return rc;
			for (size_t i = 0; i + 1 < v->n; i++)
				if (!strcmp(v->keys[i], v->keys[v->n - 1])) {
					j->p = at;
					return fail(j, "a member name that is not a repeat was expected");
				}
			skip_ws(j);
			if (j->p >= j->end || *j->p != ':')
				return fail(j, "':' was expected after a member name");
			j->p++;
		}
		if ((rc = value(j, item, depth + 1)))
			return rc;
		skip_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return 0;
		}
		return fail(j, obj ? "',' or '}' was expected" : "',' or ']' was expected");
	}
}

static int value(struct jp *j, struct pf_jval *v, int depth)
{
	memset(v, 0, sizeof(*v));
	skip_ws(j);
	if (j->p >= j->end)
		return fail(j, "a value was expected");
	switch (*j->p) {
	case '{':
	case '[':
		return container(j, v, depth);
	case '"':
		v->type = PF_JSTR;
		return string(j, &v->str);
	case 't':
		v->type = PF_JBOOL;
		v->b = 1;
		return lit(j, "true");
	case 'f':
		v->type = PF_JBOOL;
		return lit(j, "false");
	case 'n':
		return lit(j, "null");
	default:
		if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) {
			v->type = PF_JNUM;
			return number(j, &v->num);
		}
		return fail(j, "a value was expected");
	}
}

int pf_json_parse(const char *text, size_t len, struct pf_jval *v, struct pflops_error *err)
{
	struct jp j = { .s = text, .end = text + len, .p = text, .err = err };
	int rc = value(&j, v, 0);
	if (!rc) {
		skip_ws(&j);
		if (j.p < j.end)
			rc = fail(&j, "the text should end after the value");
	}
	if (rc) {
		pf_json_free(v);
		memset(v, 0, sizeof(*v));
	}
	return rc;
}

void pf_json_free(struct pf_jval *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		pf_json_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	v->items = NULL;
	v->keys = NULL;
	v->str = NULL;
	v->n = 0;
}

const struct pf_jval *pf_json_get(const struct pf_jval *o, const char *key)
{
	if (!o || o->type != PF_JOBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->items[i];
	return NULL;
}
