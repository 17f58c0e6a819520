/* Minimal JSON output for the utilities: strings escaped, the rest
 * written by the caller.  Enough for stable machine-readable listings. */
#ifndef PF_JSON_H
#define PF_JSON_H
#include <stdio.h>

static inline void pf_json_str(FILE *o, const char *s)
{
	fputc('"', o);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(o, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", o);
		else if (c < 0x20)
			fprintf(o, "\\u%04x", c);
		else
			fputc(c, o);
	}
	fputc('"', o);
}

/* a string, or null for NULL */
static inline void pf_json_str_or_null(FILE *o, const char *s)
{
	if (s)
		pf_json_str(o, s);
	else
		fputs("null", o);
}

/* "key": "value" */
static inline void pf_json_kv(FILE *o, const char *k, const char *v, int comma)
{
	pf_json_str(o, k);
	fputs(": ", o);
	pf_json_str(o, v);
	if (comma)
		fputs(", ", o);
}
#endif
