/* The split virtqueue of virtio 1.x (section 2.7) as the driver side sees it:
 * a descriptor table with a free list, the available ring the driver fills
 * and the used ring the device fills. Knows nothing of the transport or the
 * device: the caller notifies the device and owns the buffers. Runs against
 * real hardware and against the simulated device of tests/unit. */
#ifndef KERNEL_METAL_VIRTQUEUE_H
#define KERNEL_METAL_VIRTQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IG_VQ_MAX_SIZE 256   /* the most descriptors a queue is set up with */
#define IG_VQ_LEGACY_ALIGN 4096 /* legacy QueueAlign, and the used ring's place */

#define IG_VQ_DESC_F_NEXT 1u  /* the chain continues at .next */
#define IG_VQ_DESC_F_WRITE 2u /* the device writes the buffer (else it reads it) */
#define IG_VQ_AVAIL_F_NO_INTERRUPT 1u /* driver: do not interrupt on used entries */
#define IG_VQ_USED_F_NO_NOTIFY 1u     /* device: do not notify on avail entries */

/* The layout the device reads: little-endian, which x86 is natively. */
struct ig_vq_desc {
	uint64_t addr; /* guest-physical; identity-mapped here */
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct ig_vq_avail {
	uint16_t flags;
	uint16_t idx;    /* free-running: where the driver puts its next entry */
	uint16_t ring[]; /* size entries, then used_event (unused: no EVENT_IDX) */
};

struct ig_vq_used_elem {
	uint32_t id;  /* head of the chain the device is done with */
	uint32_t len; /* bytes the device wrote into it */
};

struct ig_vq_used {
	uint16_t flags;
	uint16_t idx; /* free-running: where the device puts its next entry */
	struct ig_vq_used_elem ring[]; /* size entries, then avail_event */
};

/* One buffer of a chain handed to the device. */
struct ig_vq_buf {
	const void *addr;
	uint32_t len;
	bool device_writes;
};

struct ig_virtqueue {
	struct ig_vq_desc *desc;
	struct ig_vq_avail *avail;
	struct ig_vq_used *used;
	uint16_t size;      /* a power of two, <= IG_VQ_MAX_SIZE */
	uint16_t free_head; /* first free descriptor; chained through .next */
	uint16_t num_free;
	uint16_t avail_idx; /* the driver's copy of avail->idx */
	uint16_t last_used; /* used entries before this one have been taken */
	void *cookie[IG_VQ_MAX_SIZE]; /* per chain head: what the caller gave add */
};

/* Bytes of the three parts with their required alignments (desc 16, avail 2,
 * used 4); every part starts at the alignment the spec asks of it. */
size_t ig_vq_desc_bytes(uint16_t size);
size_t ig_vq_avail_bytes(uint16_t size);
size_t ig_vq_used_bytes(uint16_t size);

/* The legacy single area (virtio 1.x section 2.7.2 "Legacy Interfaces"):
 * descriptors (16 each), then the available ring (2 * (3 + size)), then the
 * used ring (2 * 3 + 8 * size) at the next multiple of IG_VQ_LEGACY_ALIGN;
 * the total is a multiple of it too. The macro is for static arrays. */
#define IG_VQ_ALIGN_UP_(n) (((n) + IG_VQ_LEGACY_ALIGN - 1) / IG_VQ_LEGACY_ALIGN * IG_VQ_LEGACY_ALIGN)
#define IG_VQ_LEGACY_BYTES(size) \
	(IG_VQ_ALIGN_UP_(16u * (size) + 2u * (3u + (size))) + IG_VQ_ALIGN_UP_(6u + 8u * (size)))
size_t ig_vq_legacy_bytes(uint16_t size);

/* Sets vq up over zeroed memory of the legacy layout: `area` aligned to
 * IG_VQ_LEGACY_ALIGN, ig_vq_legacy_bytes(size) long. size: a power of two
 * in 1..IG_VQ_MAX_SIZE. Returns false (vq untouched) on a bad argument. */
bool ig_vq_init_legacy(struct ig_virtqueue *vq, void *area, uint16_t size);

/* The same over three separate zeroed areas (the modern transport's
 * QueueDesc, QueueDriver and QueueDevice addresses), each aligned and sized
 * as above. */
bool ig_vq_init(struct ig_virtqueue *vq, uint16_t size, struct ig_vq_desc *desc,
		struct ig_vq_avail *avail, struct ig_vq_used *used);

/* Chains n buffers (n >= 1) into free descriptors and publishes the chain in
 * the available ring; `cookie` comes back from ig_vq_take_used. Returns the
 * head's index, or -1 when fewer than n descriptors are free (nothing is
 * changed then). The caller then notifies, if ig_vq_should_notify. */
int ig_vq_add(struct ig_virtqueue *vq, const struct ig_vq_buf *bufs, unsigned n, void *cookie);

/* True unless the device asked not to be notified (USED_F_NO_NOTIFY). Call
 * it after ig_vq_add; it orders the read after the published index. */
bool ig_vq_should_notify(const struct ig_virtqueue *vq);

/* True when the device has returned a chain that ig_vq_take_used has not. */
bool ig_vq_has_used(const struct ig_virtqueue *vq);

/* Takes the oldest returned chain: frees its descriptors, stores the bytes
 * the device wrote in *len and returns the cookie given to ig_vq_add; NULL
 * when none is waiting (so cookies must not be NULL). */
void *ig_vq_take_used(struct ig_virtqueue *vq, uint32_t *len);

/* Asks the device not to interrupt when it returns chains of this queue (a
 * hint the device may ignore), or to interrupt again. */
void ig_vq_set_interrupts(struct ig_virtqueue *vq, bool wanted);

#endif
