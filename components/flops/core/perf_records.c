/*
 * perf_records.c: perf ring-buffer records as papi-flops samples them
 * (pflops_simd.h): PERF_RECORD_SAMPLE with the register blocks in the
 * SIMD layout of the opmask-sampling series, MMAP2, and the ring walk.
 * Pure byte parsing: tested on records built by hand.
 */
#include <string.h>
#include "pflops_internal.h"
#include "pflops_simd.h"

struct cur {
	const uint8_t *p, *end;
};

static int take(struct cur *c, void *dst, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -1;
	if (dst)
		memcpy(dst, c->p, n);
	c->p += n;
	return 0;
}

static int u64(struct cur *c, uint64_t *v)
{
	return take(c, v, sizeof(*v));
}

#define KNOWN_ABI (PERF_SAMPLE_REGS_ABI_32 | PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD)

/* One register block: abi, the masked registers, and the SIMD part. */
static int regs_block(struct cur *c, uint64_t mask, uint32_t pred_asked, struct pfc_sample_regs *r, const char *which,
		      struct pflops_error *err)
{
	if (u64(c, &r->abi))
		return pfc_err(err, PFLOPS_EINVAL, "sample record truncated in its %s register block", which);
	if (!r->abi) /* no registers for this sample (a kernel thread) */
		return 0;
	if (r->abi & ~(uint64_t)KNOWN_ABI)
		return pfc_err(err, PFLOPS_EINVAL,
			       "sample record: %s register ABI 0x%llx has bits this parser does not know (a newer "
			       "kernel layout): the record cannot be read past them",
			       which, (unsigned long long)r->abi);
	for (int i = 0; i < 64; i++)
		if (mask >> i & 1) {
			if (u64(c, &r->regs[i]))
				return pfc_err(err, PFLOPS_EINVAL, "sample record truncated in its %s registers",
					       which);
			r->valid |= 1ULL << i;
		}
	if (!(r->abi & PFC_SAMPLE_REGS_ABI_SIMD))
		return 0;
	uint16_t h[4];
	if (take(c, h, sizeof(h)))
		return pfc_err(err, PFLOPS_EINVAL, "sample record truncated in its %s SIMD header", which);
	r->simd = 1;
	r->nr_vectors = h[0];
	r->vector_qwords = h[1];
	r->nr_pred = h[2];
	r->pred_qwords = h[3];
	uint64_t nvec = (uint64_t)h[0] * h[1], npred = (uint64_t)h[2] * h[3];
	if ((uint64_t)(c->end - c->p) / 8 < nvec + npred)
		return pfc_err(
			err, PFLOPS_EINVAL,
			"sample record truncated in its %s SIMD data (%u vectors x %u qwords, %u predicates x %u "
			"qwords)",
			which, h[0], h[1], h[2], h[3]);
	c->p += nvec * 8; /* the vector registers come first: not needed */
	/* predicates in the order of the bit map asked; a partial set cannot
	 * be assigned to registers */
	int asked = __builtin_popcount(pred_asked), idx = 0;
	for (unsigned i = 0; i < h[2]; i++) {
		uint64_t q0;
		if (!h[3] || h[2] != asked) {
			c->p += (size_t)h[3] * 8;
			continue;
		}
		memcpy(&q0, c->p, 8);
		c->p += (size_t)h[3] * 8;
		while (idx < 32 && !(pred_asked >> idx & 1))
			idx++;
		if (idx < 8) {
			r->k[idx] = q0;
			r->kvalid |= (uint8_t)(1u << idx);
		}
		idx++;
	}
	return 0;
}

#define KNOWN_SAMPLE                                                                                             \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |       \
	 PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | \
	 PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT |                 \
	 PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR)

int pfc_sample_parse(const struct pfc_sample_format *f, const void *rec, size_t len, struct pfc_sample_rec *out,
		     struct pflops_error *err)
{
	struct cur c = { (const uint8_t *)rec, (const uint8_t *)rec + len };
	struct perf_event_header h;
	uint64_t t = f->sample_type, skip;
	uint32_t u32s[2];

	memset(out, 0, sizeof(*out));
	if (t & ~(uint64_t)KNOWN_SAMPLE)
		return pfc_err(
			err, PFLOPS_EINVAL,
			"sample_type 0x%llx has fields this parser cannot skip (0x%llx): open the event without them",
			(unsigned long long)t, (unsigned long long)(t & ~(uint64_t)KNOWN_SAMPLE));
	if (take(&c, &h, sizeof(h)) || h.type != PERF_RECORD_SAMPLE || h.size > len)
		return pfc_err(err, PFLOPS_EINVAL, "not a whole PERF_RECORD_SAMPLE (%zu bytes)", len);
	c.end = (const uint8_t *)rec + h.size;
#define F(bit, dst)                      \
	if ((t & (bit)) && u64(&c, dst)) \
		return pfc_err(err, PFLOPS_EINVAL, "sample record truncated at %s (%u bytes)", #bit, h.size);
	F(PERF_SAMPLE_IDENTIFIER, &out->id)
	F(PERF_SAMPLE_IP, &out->ip)
	if (t & PERF_SAMPLE_TID) {
		if (take(&c, u32s, 8))
			return pfc_err(err, PFLOPS_EINVAL, "sample record truncated at PERF_SAMPLE_TID (%u bytes)",
				       h.size);
		out->pid = u32s[0];
		out->tid = u32s[1];
	}
	F(PERF_SAMPLE_TIME, &out->time)
	F(PERF_SAMPLE_ADDR, &out->addr)
	F(PERF_SAMPLE_ID, &out->id)
	F(PERF_SAMPLE_STREAM_ID, &out->stream_id)
	if (t & PERF_SAMPLE_CPU) {
		if (take(&c, u32s, 8))
			return pfc_err(err, PFLOPS_EINVAL, "sample record truncated at PERF_SAMPLE_CPU (%u bytes)",
				       h.size);
		out->cpu = u32s[0];
	}
	F(PERF_SAMPLE_PERIOD, &out->period)
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (u64(&c, &skip) || skip > (uint64_t)(c.end - c.p) / 8)
			return pfc_err(err, PFLOPS_EINVAL, "sample record truncated in its callchain (%u bytes)",
				       h.size);
		out->callchain = c.p;
		out->nr_callchain = skip;
		c.p += skip * 8;
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t sz;
		if (take(&c, &sz, 4) || take(&c, NULL, sz))
			return pfc_err(err, PFLOPS_EINVAL, "sample record truncated in its raw data (%u bytes)",
				       h.size);
	}
	if ((t & PERF_SAMPLE_REGS_USER) && regs_block(&c, f->regs_user, f->pred_user, &out->user, "user", err))
		return err ? err->code : PFLOPS_EINVAL;
	if (t & PERF_SAMPLE_STACK_USER) {
		if (u64(&c, &skip) || take(&c, NULL, skip) || (skip && u64(&c, &skip)))
			return pfc_err(err, PFLOPS_EINVAL, "sample record truncated in its user stack (%u bytes)",
				       h.size);
	}
	F(PERF_SAMPLE_WEIGHT, &skip)
	F(PERF_SAMPLE_DATA_SRC, &skip)
	F(PERF_SAMPLE_TRANSACTION, &skip)
	if ((t & PERF_SAMPLE_REGS_INTR) && regs_block(&c, f->regs_intr, f->pred_intr, &out->intr, "interrupt", err))
		return err ? err->code : PFLOPS_EINVAL;
	F(PERF_SAMPLE_PHYS_ADDR, &out->phys_addr)
#undef F
	return 0;
}

int pfc_mmap2_parse(const void *rec, size_t len, struct pfc_mmap_rec *out, struct pflops_error *err)
{
	struct cur c = { (const uint8_t *)rec, (const uint8_t *)rec + len };
	struct perf_event_header h;
	uint32_t u32s[2];

	memset(out, 0, sizeof(*out));
	if (take(&c, &h, sizeof(h)) || h.type != PERF_RECORD_MMAP2 || h.size > len)
		return pfc_err(err, PFLOPS_EINVAL, "not a whole PERF_RECORD_MMAP2 (%zu bytes)", len);
	c.end = (const uint8_t *)rec + h.size;
	/* pid tid addr len pgoff, then maj/min/ino/ino_generation or a build
	 * id (24 bytes either way), prot flags, filename */
	if (take(&c, u32s, 8) || u64(&c, &out->addr) || u64(&c, &out->len) || u64(&c, &out->pgoff) ||
	    take(&c, NULL, 24) || take(&c, &out->prot, 4) || take(&c, &out->flags, 4))
		return pfc_err(err, PFLOPS_EINVAL, "PERF_RECORD_MMAP2 truncated (%u bytes)", h.size);
	out->pid = u32s[0];
	out->tid = u32s[1];
	size_t n = (size_t)(c.end - c.p), l = strnlen((const char *)c.p, n);
	if (l == n || l >= sizeof(out->filename))
		return pfc_err(err, PFLOPS_EINVAL, "PERF_RECORD_MMAP2 file name not terminated within the record");
	memcpy(out->filename, c.p, l + 1);
	return 0;
}

int pfc_ring_walk(const uint8_t *data, uint64_t size, uint64_t tail, uint64_t head, pfc_ring_fn fn, void *arg,
		  struct pflops_error *err)
{
	uint8_t copy[65536]; /* a record is at most 64 KiB (u16 size) */
	int n = 0;

	if (!size || (size & (size - 1)))
		return pfc_err(err, PFLOPS_EINVAL, "ring size %llu is not a power of two", (unsigned long long)size);
	if (head - tail > size)
		return pfc_err(err, PFLOPS_EINVAL, "ring range [%llu, %llu) is larger than the ring (%llu bytes)",
			       (unsigned long long)tail, (unsigned long long)head, (unsigned long long)size);
	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail & (size - 1), left = head - tail;
		if (left < sizeof(h))
			return pfc_err(err, PFLOPS_EINVAL, "ring ends inside a record header (%llu bytes left)",
				       (unsigned long long)left);
		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(off + i) & (size - 1)];
		if (h.size < sizeof(h) || h.size > left)
			return pfc_err(err, PFLOPS_EINVAL, "ring record of type %u claims %u bytes, %llu are left",
				       h.type, h.size, (unsigned long long)left);
		const void *rec = data + off;
		if (off + h.size > size) { /* wraps: copy it whole */
			size_t first = (size_t)(size - off);
			memcpy(copy, data + off, first);
			memcpy(copy + first, data, h.size - first);
			rec = copy;
		}
		int rc = fn(arg, &h, rec);
		if (rc)
			return rc < 0 ? rc : n + 1;
		n++;
		tail += h.size;
	}
	return n;
}
