/*
 * trace_cfi.c: function starts from a file's .eh_frame (the unwind
 * tables the compiler writes for every function), independent of its
 * symbol tables: --region decodes from the start of the frame that covers
 * a symbol's address to check that the address is an instruction start
 * (trace_elf.c), which catches a wrong symbol that no other symbol
 * covers.  The section is untrusted input: every read is bounded.
 */
#include <stdint.h>
#include <string.h>

#include "trace_elf.h"

/* DWARF pointer encodings (DW_EH_PE_*) */
#define PE_OMIT 0xff
#define PE_PCREL 0x10

struct cur {
	const uint8_t *p;
	uint64_t at, end; /* offsets in the section */
	uint64_t addr;	  /* the section's link-time address */
};

static int get(struct cur *c, void *out, uint64_t n)
{
	if (c->at > c->end || n > c->end - c->at)
		return -1;
	memcpy(out, c->p + c->at, n);
	c->at += n;
	return 0;
}

static int leb(struct cur *c, uint64_t *v, int sgn)
{
	uint64_t r = 0;
	unsigned sh = 0;
	uint8_t b;

	do {
		if (get(c, &b, 1))
			return -1;
		if (sh < 64)
			r |= (uint64_t)(b & 0x7f) << sh;
		sh += 7;
	} while (b & 0x80);
	if (sgn && sh < 64 && (b & 0x40))
		r |= ~(uint64_t)0 << sh;
	*v = r;
	return 0;
}

/* An encoded pointer; pcrel applied when `rel` (not for a range). */
static int ptr(struct cur *c, uint8_t enc, int rel, uint64_t *v)
{
	/* bytes of each format (low nibble; 0: LEB128 or none) */
	static const uint8_t size[16] = { [0x0] = 8, [0x2] = 2, [0x3] = 4, [0x4] = 8, [0xa] = 2, [0xb] = 4, [0xc] = 8 };
	uint64_t at = c->addr + c->at, x = 0;
	unsigned f = enc & 0x0f, n = size[f];

	if (f == 0x01 || f == 0x09) {
		if (leb(c, &x, f == 0x09))
			return -1;
	} else if (!n || get(c, &x, n)) { /* little-endian */
		return -1;
	} else if ((f & 0x08) && n < 8 && (x >> (8 * n - 1)) & 1) {
		x |= ~(uint64_t)0 << (8 * n); /* signed: extend */
	}
	*v = x;
	if (rel && (enc & 0x70) == PE_PCREL)
		*v += at;
	else if (rel && (enc & 0x70))
		return -1; /* textrel, datarel, funcrel: not in .eh_frame */
	return 0;
}

/* The FDE pointer encoding of the CIE at offset `at` (PE_OMIT: none). */
static uint8_t cie_enc(const struct cur *sec, uint64_t at)
{
	struct cur c = *sec;
	uint32_t len, id;
	uint8_t ver, b, enc = 0; /* absptr without an 'R' */
	char aug[16];
	size_t n = 0;
	uint64_t u;

	c.at = at;
	if (get(&c, &len, 4) || len == 0xffffffffu || len < 4)
		return PE_OMIT;
	c.end = c.at + len < c.end ? c.at + len : c.end;
	if (get(&c, &id, 4) || id != 0 || get(&c, &ver, 1))
		return PE_OMIT;
	do {
		if (get(&c, &b, 1) || n == sizeof aug)
			return PE_OMIT;
		aug[n++] = (char)b;
	} while (b);
	if (leb(&c, &u, 0) || leb(&c, &u, 1))
		return PE_OMIT;
	if (ver == 1 ? get(&c, &b, 1) : leb(&c, &u, 0))
		return PE_OMIT;
	if (aug[0] != 'z')
		return aug[0] ? PE_OMIT : enc;
	if (leb(&c, &u, 0))
		return PE_OMIT;
	for (const char *a = aug + 1; *a; a++) {
		uint8_t pe;
		switch (*a) {
		case 'R':
			return get(&c, &enc, 1) ? PE_OMIT : enc;
		case 'L':
			if (get(&c, &pe, 1))
				return PE_OMIT;
			break;
		case 'P':
			if (get(&c, &pe, 1) || ptr(&c, pe & 0x7f, 0, &u))
				return PE_OMIT;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return PE_OMIT;
		}
	}
	return enc;
}

int pft_cfi_enclosing(const struct pft_elf *e, uint64_t v, uint64_t *start)
{
	struct cur sec;
	uint64_t off, size, best = 0;
	int found = 0;

	if (pft_elf_section(e, ".eh_frame", &off, &size, &sec.addr))
		return -1;
	sec.p = e->p + off;
	sec.at = 0;
	sec.end = size;
	/* at most 2^20 entries: the walk stays linear in a bounded file */
	for (unsigned n = 0; n < (1u << 20) && sec.at + 8 <= sec.end; n++) {
		struct cur c = sec;
		uint32_t len, id;
		uint64_t body, b, r;
		if (get(&c, &len, 4) || !len || len == 0xffffffffu)
			break;
		body = c.at;
		if (len > c.end - body)
			break;
		c.end = body + len;
		sec.at = body + len;
		if (get(&c, &id, 4) || !id)
			continue; /* a CIE */
		if (id > body)
			continue;
		uint8_t enc = cie_enc(&sec, body - id);
		if (enc == PE_OMIT || ptr(&c, enc, 1, &b) || ptr(&c, enc & 0x0f, 0, &r))
			continue;
		if (b < v && r > v - b && (!found || b > best)) {
			best = b;
			found = 1;
		}
	}
	if (!found)
		return -1;
	*start = best;
	return 0;
}
