/*
 * test_records.c: perf records in the layout of the opmask-sampling
 * series (v5: after a register block's general registers, u16
 * nr_vectors, vector_qwords, nr_pred, pred_qwords, then the vectors and
 * the predicates), built here byte by byte, and the ring walk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pflops_simd.h"

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}
static void p64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}
static void p32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}
static void p16(struct buf *b, uint16_t v)
{
	put(b, &v, 2);
}

/* header with the size patched in at the end */
static void begin(struct buf *b, uint32_t type)
{
	b->n = 0;
	p32(b, type);
	p16(b, 0); /* misc */
	p16(b, 0); /* size */
}
static void end(struct buf *b)
{
	uint16_t sz = (uint16_t)b->n;
	memcpy(b->b + 6, &sz, 2);
}

#define IPREG PFC_PERF_REG_X86_IP
static const struct pfc_sample_format FMT = {
	.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER,
	.regs_user = 1ULL << IPREG,
	.pred_user = PFC_X86_OPMASK_REGS,
};

/* k_i = 0x100 + i: recognisable */
static void simd_block(struct buf *b, uint16_t nvec, uint16_t vq, uint16_t npred, uint16_t pq)
{
	p16(b, nvec);
	p16(b, vq);
	p16(b, npred);
	p16(b, pq);
	for (unsigned i = 0; i < (unsigned)nvec * vq; i++)
		p64(b, 0xdead000000000000ULL | i); /* vectors first */
	for (unsigned i = 0; i < npred; i++)
		for (unsigned q = 0; q < pq; q++)
			p64(b, q ? 0xbeef : 0x100 + i);
}

static void sample(struct buf *b, uint64_t abi, uint16_t nvec, uint16_t vq, uint16_t npred, uint16_t pq)
{
	begin(b, PERF_RECORD_SAMPLE);
	p64(b, 0x401234); /* ip */
	p32(b, 77);	  /* pid */
	p32(b, 78);	  /* tid */
	p64(b, 7);	  /* period */
	p64(b, abi);
	if (abi) {
		p64(b, 0x401234); /* the IP register */
		if (abi & PFC_SAMPLE_REGS_ABI_SIMD)
			simd_block(b, nvec, vq, npred, pq);
	}
	end(b);
}

static void test_opmasks_after_vectors(void **state)
{
	(void)state;
	struct buf b;
	struct pfc_sample_rec r;
	struct pflops_error err = { 0 };
	/* 32 ZMM registers of 8 qwords, then OPMASK0-7: the seed's example */
	sample(&b, PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD, 32, 8, 8, 1);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n, &r, &err), 0);
	assert_int_equal(r.ip, 0x401234);
	assert_int_equal(r.pid, 77);
	assert_int_equal(r.tid, 78);
	assert_int_equal(r.period, 7);
	assert_true(r.user.valid == 1ULL << IPREG && r.user.regs[IPREG] == 0x401234);
	assert_true(r.user.simd);
	assert_int_equal(r.user.nr_vectors, 32);
	assert_int_equal(r.user.nr_pred, 8);
	assert_int_equal(r.user.kvalid, 0xff);
	for (int i = 0; i < 8; i++)
		assert_int_equal(r.user.k[i], 0x100 + i);
	/* predicates alone, and predicates of two qwords (first one is k) */
	sample(&b, PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD, 0, 0, 8, 1);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n, &r, &err), 0);
	assert_true(r.user.kvalid == 0xff && r.user.k[7] == 0x107);
	sample(&b, PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD, 16, 2, 8, 2);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n, &r, &err), 0);
	assert_true(r.user.kvalid == 0xff && r.user.k[3] == 0x103);
}

static void test_no_opmasks(void **state)
{
	(void)state;
	struct buf b;
	struct pfc_sample_rec r;
	struct pflops_error err = { 0 };
	/* nr_pred = 0: vectors only, no mask register known */
	sample(&b, PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD, 16, 4, 0, 1);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n, &r, &err), 0);
	assert_true(r.user.simd && r.user.kvalid == 0 && r.user.nr_vectors == 16);
	/* a subset of the asked predicates: which ones is not said, none used */
	sample(&b, PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD, 0, 0, 4, 1);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n, &r, &err), 0);
	assert_true(r.user.simd && r.user.nr_pred == 4 && r.user.kvalid == 0);
	/* pred_qwords 0 */
	sample(&b, PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD, 0, 0, 8, 0);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n, &r, &err), 0);
	assert_int_equal(r.user.kvalid, 0);
	/* a kernel without the series: ABI 64, no SIMD block */
	sample(&b, PERF_SAMPLE_REGS_ABI_64, 0, 0, 0, 0);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n, &r, &err), 0);
	assert_true(!r.user.simd && r.user.kvalid == 0 && r.user.regs[IPREG] == 0x401234);
	/* no user registers at all (abi NONE): nothing follows */
	sample(&b, 0, 0, 0, 0, 0);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n, &r, &err), 0);
	assert_true(r.user.abi == 0 && r.user.valid == 0);
}

static void test_bad_records(void **state)
{
	(void)state;
	struct buf b;
	struct pfc_sample_rec r;
	struct pflops_error err = { 0 };
	/* unknown ABI bits: the size of what follows is unknown */
	sample(&b, PERF_SAMPLE_REGS_ABI_64 | 0x10, 0, 0, 8, 1);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n, &r, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "0x12"));
	assert_non_null(strstr(err.msg, "does not know"));
	/* truncated: the buffer shorter than the header says */
	sample(&b, PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD, 0, 0, 8, 1);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n - 8, &r, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "not a whole"));
	/* truncated: the header's size itself cuts the SIMD data */
	uint16_t sz = (uint16_t)(b.n - 16);
	memcpy(b.b + 6, &sz, 2);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n, &r, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "SIMD data"));
	/* ... or the SIMD header */
	sample(&b, PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD, 0, 0, 8, 1);
	sz = 8 + 8 + 8 + 8 + 8 + 8 + 4; /* ip tid period abi reg, half a header */
	memcpy(b.b + 6, &sz, 2);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, sz, &r, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "SIMD header"));
	/* ... or the ip */
	sz = 12;
	memcpy(b.b + 6, &sz, 2);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, sz, &r, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "PERF_SAMPLE_IP"));
	/* a sample_type the parser cannot skip */
	struct pfc_sample_format f = FMT;
	f.sample_type |= PERF_SAMPLE_READ;
	sample(&b, PERF_SAMPLE_REGS_ABI_64, 0, 0, 0, 0);
	assert_int_equal(pfc_sample_parse(&f, b.b, b.n, &r, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "cannot skip"));
	/* not a sample */
	begin(&b, PERF_RECORD_LOST);
	p64(&b, 1);
	p64(&b, 5);
	end(&b);
	assert_int_equal(pfc_sample_parse(&FMT, b.b, b.n, &r, &err), PFLOPS_EINVAL);
}

/* Every field before and between the blocks, and both blocks with SIMD
 * data: each lands where the layout puts it. */
static void test_all_fields(void **state)
{
	(void)state;
	struct buf b;
	struct pfc_sample_rec r;
	struct pflops_error err = { 0 };
	struct pfc_sample_format f = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_ADDR | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |
			       PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR,
		.regs_user = 1ULL << IPREG | 1, /* AX, IP */
		.regs_intr = 1ULL << IPREG,
		.pred_user = 0xff,
		.pred_intr = 0x0f, /* k0-k3 asked in the interrupt block */
	};
	begin(&b, PERF_RECORD_SAMPLE);
	p64(&b, 42);	 /* identifier */
	p64(&b, 0x1000); /* ip */
	p32(&b, 5);
	p32(&b, 6);
	p64(&b, 123456); /* time */
	p64(&b, 0xa0);	 /* addr */
	p64(&b, 9);	 /* stream id */
	p32(&b, 3);	 /* cpu */
	p32(&b, 0);
	p64(&b, 1000); /* period */
	p64(&b, 2);    /* callchain: 2 entries */
	p64(&b, 0xc1);
	p64(&b, 0xc2);
	p32(&b, 12); /* raw: size 12 (with the u32, 16 bytes) */
	for (int i = 0; i < 3; i++)
		p32(&b, 0xaaaaaaaa);
	p64(&b, PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD);
	p64(&b, 0xa);	 /* AX */
	p64(&b, 0x1000); /* IP */
	simd_block(&b, 2, 8, 8, 1);
	p64(&b, 16); /* user stack: 16 bytes, then dyn_size */
	p64(&b, 0);
	p64(&b, 0);
	p64(&b, 16);
	p64(&b, 77); /* weight */
	p64(&b, 88); /* data_src */
	p64(&b, 99); /* transaction */
	p64(&b, PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD);
	p64(&b, 0xffffffff81000000ULL); /* kernel IP */
	simd_block(&b, 1, 2, 4, 1);
	p64(&b, 0x5000); /* phys addr */
	end(&b);
	assert_int_equal(pfc_sample_parse(&f, b.b, b.n, &r, &err), 0);
	assert_int_equal(r.id, 42);
	assert_int_equal(r.ip, 0x1000);
	assert_int_equal(r.time, 123456);
	assert_int_equal(r.addr, 0xa0);
	assert_int_equal(r.stream_id, 9);
	assert_int_equal(r.cpu, 3);
	assert_int_equal(r.period, 1000);
	assert_int_equal(r.user.regs[0], 0xa);
	assert_int_equal(r.user.kvalid, 0xff);
	assert_int_equal(r.user.k[5], 0x105);
	assert_int_equal(r.intr.regs[IPREG], 0xffffffff81000000ULL);
	assert_int_equal(r.intr.kvalid, 0x0f);
	assert_int_equal(r.intr.k[3], 0x103);
	assert_int_equal(r.phys_addr, 0x5000);
}

static void mmap2(struct buf *b, const char *name, uint16_t pad)
{
	begin(b, PERF_RECORD_MMAP2);
	p32(b, 100);
	p32(b, 101);
	p64(b, 0x400000);
	p64(b, 0x2000);
	p64(b, 0x1000); /* pgoff */
	for (int i = 0; i < 3; i++)
		p64(b, 0); /* maj min ino generation */
	p32(b, 5);	   /* prot */
	p32(b, 2);	   /* flags */
	put(b, name, strlen(name));
	for (uint16_t i = 0; i < pad; i++)
		put(b, "", 1);
	end(b);
}

static void test_mmap2(void **state)
{
	(void)state;
	struct buf b;
	static struct pfc_mmap_rec m;
	struct pflops_error err = { 0 };
	mmap2(&b, "/usr/bin/true", 3);
	assert_int_equal(pfc_mmap2_parse(b.b, b.n, &m, &err), 0);
	assert_int_equal(m.pid, 100);
	assert_int_equal(m.addr, 0x400000);
	assert_int_equal(m.len, 0x2000);
	assert_int_equal(m.pgoff, 0x1000);
	assert_string_equal(m.filename, "/usr/bin/true");
	mmap2(&b, "/no/terminator", 0);
	assert_int_equal(pfc_mmap2_parse(b.b, b.n, &m, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "not terminated"));
}

struct walk {
	int n;
	uint64_t ips[8];
};

static int on_rec(void *arg, const struct perf_event_header *h, const void *rec)
{
	struct walk *w = arg;
	struct pfc_sample_rec r;
	if (h->type != PERF_RECORD_SAMPLE)
		return 0;
	if (pfc_sample_parse(&FMT, rec, h->size, &r, NULL))
		return -100;
	w->ips[w->n++] = r.ip;
	return 0;
}

/* A ring of 256 bytes; three samples of 104 bytes written from offset
 * 200 on (free-running offsets 1000..), so the first wraps. */
static void test_ring(void **state)
{
	(void)state;
	static uint8_t ring[256];
	struct buf b;
	struct walk w = { 0 };
	struct pflops_error err = { 0 };
	uint64_t tail = 256 * 3 + 200, head = tail;
	for (int i = 0; i < 2; i++) {
		sample(&b, PERF_SAMPLE_REGS_ABI_64 | PFC_SAMPLE_REGS_ABI_SIMD, 0, 0, 8, 1);
		uint64_t ip = 0x5000 + i;
		memcpy(b.b + 8, &ip, 8);
		for (size_t k = 0; k < b.n; k++)
			ring[(head + k) & 255] = b.b[k];
		head += b.n;
	}
	assert_int_equal(pfc_ring_walk(ring, 256, tail, head, on_rec, &w, &err), 2);
	assert_int_equal(w.ips[0], 0x5000);
	assert_int_equal(w.ips[1], 0x5001);
	/* a ring that ends inside a record */
	w.n = 0;
	assert_int_equal(pfc_ring_walk(ring, 256, tail, head - 5, on_rec, &w, &err), PFLOPS_EINVAL);
	assert_non_null(strstr(err.msg, "claims"));
	assert_int_equal(w.n, 1);
	/* a header of size 0 would loop forever */
	uint8_t zero[64] = { 0 };
	assert_int_equal(pfc_ring_walk(zero, 64, 0, 32, on_rec, &w, &err), PFLOPS_EINVAL);
	assert_int_equal(pfc_ring_walk(zero, 48, 0, 32, on_rec, &w, &err), PFLOPS_EINVAL);
	assert_int_equal(pfc_ring_walk(ring, 256, 0, 512, on_rec, &w, &err), PFLOPS_EINVAL);
	/* fn's error stops the walk */
	sample(&b, PERF_SAMPLE_REGS_ABI_64 | 0x10, 0, 0, 0, 0);
	memset(ring, 0, sizeof(ring));
	memcpy(ring, b.b, b.n);
	assert_int_equal(pfc_ring_walk(ring, 256, 0, b.n, on_rec, &w, &err), -100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opmasks_after_vectors),
		cmocka_unit_test(test_no_opmasks),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_all_fields),
		cmocka_unit_test(test_mmap2),
		cmocka_unit_test(test_ring),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
