/*
 * pflops_simd.h: sampling the AVX-512 opmask registers with perf_event.
 *
 * The interface is the one of the Linux patch series "Support
 * SIMD/eGPRs/SSP registers sampling for perf" (Kan Liang, Dapeng Mi),
 * as posted in its v5 (December 2025), which is not in mainline Linux:
 *
 *   perf_event_attr, after config3 (PERF_ATTR_SIZE_VER8, 136 bytes):
 *     union { u16 sample_simd_regs_enabled; u16 sample_simd_pred_reg_qwords; }
 *     u32 sample_simd_pred_reg_intr, sample_simd_pred_reg_user;
 *     u16 sample_simd_vec_reg_qwords;
 *     u64 sample_simd_vec_reg_intr, sample_simd_vec_reg_user;
 *     u32 __reserved_4;                        (176 bytes: "VER9")
 *   PERF_SAMPLE_REGS_ABI_SIMD = 0x04 in the register block's abi (now a
 *   bit map), and after the block's general registers:
 *     u16 nr_vectors, vector_qwords, nr_pred, pred_qwords;
 *     u64 data[nr_vectors * vector_qwords + nr_pred * pred_qwords];
 *   vectors first, then predicates, each register's qwords in order.
 *   On x86 the predicates are OPMASK0-7 (k0-k7), one qword each.
 *
 * Later revisions of the series move the attr fields (v6: "adjust newly
 * added fields in perf_event_attr to avoid holes") and the sample data
 * layout (v8): this file is the one place to change when it is merged.
 * Debian's <linux/perf_event.h> has none of it (nor config3), hence our
 * own layout-compatible extension with static offset checks.
 *
 * Also here: the record parser (PERF_RECORD_SAMPLE with IP, TID and the
 * register blocks; MMAP2) over the bytes of a perf mmap ring, and
 * whether this kernel takes the new fields (simd_caps.c).
 * Errors: papi_flops.h.
 */
#ifndef PFC_SIMD_H
#define PFC_SIMD_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "papi_flops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PFC_ATTR_SIZE_VER8 136 /* + config3 */
#define PFC_ATTR_SIZE_VER9 176 /* + the SIMD register fields (v5 layout) */
#define PFC_SAMPLE_REGS_ABI_SIMD 0x04
#define PFC_X86_OPMASK_REGS 0xffu /* OPMASK0-7 in sample_simd_pred_reg_* */
#define PFC_PERF_REG_X86_IP 8	  /* enum perf_event_x86_regs */

/* perf_event_attr with config3 and the v5 SIMD fields. */
struct pfc_perf_attr_simd {
	union {
		struct perf_event_attr attr; /* the installed header's fields */
		struct {
			uint8_t ver7[128];
			uint64_t config3;
		} v8;
	} u;
	union {
		uint16_t sample_simd_regs_enabled;
		uint16_t sample_simd_pred_reg_qwords;
	};
	uint32_t sample_simd_pred_reg_intr;
	uint32_t sample_simd_pred_reg_user;
	uint16_t sample_simd_vec_reg_qwords;
	uint64_t sample_simd_vec_reg_intr;
	uint64_t sample_simd_vec_reg_user;
	uint32_t reserved_4;
};

_Static_assert(sizeof(struct perf_event_attr) <= PFC_ATTR_SIZE_VER8,
	       "<linux/perf_event.h> has fields past config3: use its own SIMD fields");
_Static_assert(offsetof(struct pfc_perf_attr_simd, u.v8.config3) == 128, "config3 at 128");
_Static_assert(offsetof(struct pfc_perf_attr_simd, sample_simd_pred_reg_qwords) == 136, "v5 layout");
_Static_assert(offsetof(struct pfc_perf_attr_simd, sample_simd_pred_reg_intr) == 140, "v5 layout");
_Static_assert(offsetof(struct pfc_perf_attr_simd, sample_simd_pred_reg_user) == 144, "v5 layout");
_Static_assert(offsetof(struct pfc_perf_attr_simd, sample_simd_vec_reg_qwords) == 148, "v5 layout");
_Static_assert(offsetof(struct pfc_perf_attr_simd, sample_simd_vec_reg_intr) == 152, "v5 layout");
_Static_assert(offsetof(struct pfc_perf_attr_simd, sample_simd_vec_reg_user) == 160, "v5 layout");
_Static_assert(offsetof(struct pfc_perf_attr_simd, reserved_4) == 168, "v5 layout");
_Static_assert(sizeof(struct pfc_perf_attr_simd) == PFC_ATTR_SIZE_VER9, "v5 size");

/* ---------------------------------------------------------------------
 * Records.
 */

/* How the sampling events were opened: what a sample record holds. */
struct pfc_sample_format {
	uint64_t sample_type; /* PERF_SAMPLE_* */
	uint64_t regs_user;   /* sample_regs_user */
	uint64_t regs_intr;   /* sample_regs_intr */
	uint32_t pred_user;   /* sample_simd_pred_reg_user asked (OPMASK0-7: 0xff) */
	uint32_t pred_intr;
};

/* One register block (REGS_USER or REGS_INTR) of a sample. */
struct pfc_sample_regs {
	uint64_t abi;	   /* 0: none (e.g. no user state) */
	uint64_t valid;	   /* bit r: regs[r] was in the record */
	uint64_t regs[64]; /* by perf register number */
	int simd;	   /* the SIMD block was present */
	uint16_t nr_vectors, vector_qwords, nr_pred, pred_qwords;
	uint8_t kvalid; /* bit i: k[i] read (OPMASKi) */
	uint64_t k[8];
};

struct pfc_sample_rec {
	uint64_t id, ip, time, addr, period, stream_id, phys_addr;
	uint32_t pid, tid, cpu;
	struct pfc_sample_regs user, intr;
	/* PERF_SAMPLE_CALLCHAIN: nr_callchain addresses (PERF_CONTEXT_*
	 * markers among them) at callchain, inside the record: valid while
	 * the record is, maybe unaligned (pfc_sample_frame reads one) */
	const uint8_t *callchain;
	uint64_t nr_callchain;
};

static inline uint64_t pfc_sample_frame(const struct pfc_sample_rec *r, uint64_t i)
{
	uint64_t v;
	__builtin_memcpy(&v, r->callchain + 8 * i, 8);
	return v;
}

/* Parse a PERF_RECORD_SAMPLE: rec points at its header, len is the
 * header's size.  Fails with PFLOPS_EINVAL naming the cause: a record
 * shorter than its fields (truncated), a sample_type bit this parser does
 * not know how to skip (READ, BRANCH_STACK, ...), a register ABI with
 * bits other than 32/64/SIMD (a newer layout whose size is unknown).
 * The opmasks: the block's predicates are k[i] for the set bits i of the
 * bit map asked (pred_user / pred_intr), in order; when the kernel gave
 * another number of predicates than asked, none is assigned (which ones
 * it dropped is not recorded), and a predicate's first qword is taken. */
int pfc_sample_parse(const struct pfc_sample_format *f, const void *rec, size_t len, struct pfc_sample_rec *out,
		     struct pflops_error *err);

/* PERF_RECORD_MMAP2: where a file is mapped. */
struct pfc_mmap_rec {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t prot, flags;
	char filename[4096];
};
int pfc_mmap2_parse(const void *rec, size_t len, struct pfc_mmap_rec *out, struct pflops_error *err);

/* Walk the records of a perf ring: data is the ring (size bytes, a power
 * of two), [tail, head) the unread part (free-running offsets, as
 * perf_event_mmap_page's data_tail/data_head).  A record that wraps past
 * the end is copied whole before fn sees it.  fn returns 0 to go on.
 * Returns the number of records walked, or PFLOPS_EINVAL for a header
 * whose size is below 8 or past head (a truncated ring), or fn's
 * negative value. */
typedef int (*pfc_ring_fn)(void *arg, const struct perf_event_header *h, const void *rec);
int pfc_ring_walk(const uint8_t *data, uint64_t size, uint64_t tail, uint64_t head, pfc_ring_fn fn, void *arg,
		  struct pflops_error *err);

/* ---------------------------------------------------------------------
 * Does this kernel take opmask sampling? (simd_caps.c)
 */
enum pfc_simd_verdict {
	PFC_SIMD_SUPPORTED,
	PFC_SIMD_OLD_KERNEL, /* E2BIG: the attr fields are unknown to it */
	PFC_SIMD_NO_PMU_CAP, /* EOPNOTSUPP on cycles: it has them, the PMU cannot */
	PFC_SIMD_NO_PMU,     /* no hardware PMU to sample (ENOENT, ENODEV) */
	PFC_SIMD_DENIED,     /* EACCES / EPERM: perf_event_paranoid */
	PFC_SIMD_INVALID,    /* EINVAL: it knows fields there, not ours (another revision) */
	PFC_SIMD_UNKNOWN,    /* anything else */
};

struct pfc_simd_caps {
	enum pfc_simd_verdict verdict;
	int sw_errno;  /* the software event's open: 0 or errno */
	int hw_errno;  /* the cycles event's: 0, errno, or -1 not tried */
	char msg[320]; /* one sentence: supported, or why not */
	char fix[320]; /* what brings it ("" when supported) */
};

/* Judge from what the two opens returned (sw_errno for a software event,
 * hw_errno for cycles, -1 when cycles was not tried); kernel: the
 * running kernel's release, for the message. */
void pfc_simd_judge(int sw_errno, int hw_errno, const char *kernel, struct pfc_simd_caps *c);

/* Open, on this thread, a sampling task-clock event and then a sampling
 * cycles event, each asking REGS_USER with the opmask registers, and
 * judge.  Never fails: the verdict says what happened. */
void pfc_simd_probe(struct pfc_simd_caps *c);

/* Fill a for a sampling event asking IP, TID, PERIOD and REGS_USER (IP
 * register) with the opmask registers k0-k7 (opmask != 0), or without
 * (opmask == 0: a plain sampling event in the same layout). */
void pfc_simd_attr(struct pfc_perf_attr_simd *a, uint32_t type, uint64_t config, uint64_t period, int opmask);
/* The sample format a pfc_simd_attr event produces. */
void pfc_simd_format(const struct pfc_perf_attr_simd *a, struct pfc_sample_format *f);

#ifdef __cplusplus
}
#endif
#endif
