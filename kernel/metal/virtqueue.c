/* The split virtqueue's driver side: the descriptor free list, publishing
 * chains in the available ring and taking them back from the used ring.
 * The indexes are free-running 16-bit counters (the ring slot is the index
 * modulo the size), so wrap-around at 65536 needs no special case. */
#include "kernel/metal/virtqueue.h"

/* The device runs concurrently (another host thread, or the test's
 * simulation): the shared indexes are read and written exactly once each,
 * and the fences order the ring entries against them. On x86 the release
 * and acquire fences cost nothing but the compiler's freedom. */
#define VQ_READ_ONCE(x) (*(volatile const __typeof__(x) *)&(x))
#define VQ_WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

static size_t align_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

size_t ig_vq_desc_bytes(uint16_t size)
{
	return sizeof(struct ig_vq_desc) * size;
}

size_t ig_vq_avail_bytes(uint16_t size)
{
	return sizeof(struct ig_vq_avail) + sizeof(uint16_t) * (size + 1u);
}

size_t ig_vq_used_bytes(uint16_t size)
{
	return sizeof(struct ig_vq_used) + sizeof(struct ig_vq_used_elem) * size + sizeof(uint16_t);
}

static size_t legacy_used_offset(uint16_t size)
{
	return align_up(ig_vq_desc_bytes(size) + ig_vq_avail_bytes(size), IG_VQ_LEGACY_ALIGN);
}

size_t ig_vq_legacy_bytes(uint16_t size)
{
	return legacy_used_offset(size) + align_up(ig_vq_used_bytes(size), IG_VQ_LEGACY_ALIGN);
}
_Static_assert(IG_VQ_LEGACY_BYTES(256) == 12288 && IG_VQ_LEGACY_BYTES(8) == 8192,
	       "the macro is the spec's formula");

static bool valid_size(uint16_t size)
{
	return size != 0 && size <= IG_VQ_MAX_SIZE && (size & (size - 1)) == 0;
}

bool ig_vq_init_legacy(struct ig_virtqueue *vq, void *area, uint16_t size)
{
	if (!valid_size(size) || (uintptr_t)area % IG_VQ_LEGACY_ALIGN != 0)
		return false;
	char *base = area;
	return ig_vq_init(vq, size, (struct ig_vq_desc *)base,
			  (struct ig_vq_avail *)(base + ig_vq_desc_bytes(size)),
			  (struct ig_vq_used *)(base + legacy_used_offset(size)));
}

bool ig_vq_init(struct ig_virtqueue *vq, uint16_t size, struct ig_vq_desc *desc,
		struct ig_vq_avail *avail, struct ig_vq_used *used)
{
	if (!valid_size(size) || (uintptr_t)desc % 16 != 0 || (uintptr_t)avail % 2 != 0 ||
	    (uintptr_t)used % 4 != 0)
		return false;
	*vq = (struct ig_virtqueue){ .desc = desc, .avail = avail, .used = used, .size = size,
				     .num_free = size };
	for (uint16_t i = 0; i < size; i++)
		desc[i].next = (uint16_t)(i + 1); /* the last one's next is never followed */
	return true;
}

int ig_vq_add(struct ig_virtqueue *vq, const struct ig_vq_buf *bufs, unsigned n, void *cookie)
{
	if (n == 0 || n > vq->num_free)
		return -1;
	uint16_t head = vq->free_head, i = head, last = head;
	for (unsigned k = 0; k < n; k++) {
		struct ig_vq_desc *d = &vq->desc[i];
		d->addr = (uint64_t)(uintptr_t)bufs[k].addr;
		d->len = bufs[k].len;
		d->flags = (uint16_t)((bufs[k].device_writes ? IG_VQ_DESC_F_WRITE : 0) |
				      (k + 1 < n ? IG_VQ_DESC_F_NEXT : 0));
		last = i;
		i = d->next;
	}
	vq->free_head = vq->desc[last].next;
	vq->num_free = (uint16_t)(vq->num_free - n);
	vq->cookie[head] = cookie;

	vq->avail->ring[vq->avail_idx & (vq->size - 1)] = head;
	vq->avail_idx++;
	__atomic_thread_fence(__ATOMIC_RELEASE); /* the chain and its slot before the index */
	VQ_WRITE_ONCE(vq->avail->idx, vq->avail_idx);
	return head;
}

bool ig_vq_should_notify(const struct ig_virtqueue *vq)
{
	/* A store followed by a load of another location: only a full fence
	 * keeps the device from having read the flags before seeing the index. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return (VQ_READ_ONCE(vq->used->flags) & IG_VQ_USED_F_NO_NOTIFY) == 0;
}

bool ig_vq_has_used(const struct ig_virtqueue *vq)
{
	return VQ_READ_ONCE(vq->used->idx) != vq->last_used;
}

void *ig_vq_take_used(struct ig_virtqueue *vq, uint32_t *len)
{
	if (!ig_vq_has_used(vq))
		return NULL;
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the entry after the index that covers it */
	struct ig_vq_used_elem e = vq->used->ring[vq->last_used & (vq->size - 1)];
	vq->last_used++;
	if (e.id >= vq->size)
		return NULL; /* a device bug; losing the chain beats corrupting the list */

	uint16_t head = (uint16_t)e.id, i = head, n = 1;
	while (vq->desc[i].flags & IG_VQ_DESC_F_NEXT) {
		i = vq->desc[i].next;
		n++;
	}
	vq->desc[i].next = vq->free_head; /* the whole chain goes back in front */
	vq->free_head = head;
	vq->num_free = (uint16_t)(vq->num_free + n);
	void *cookie = vq->cookie[head];
	vq->cookie[head] = NULL;
	*len = e.len;
	return cookie;
}

void ig_vq_set_interrupts(struct ig_virtqueue *vq, bool wanted)
{
	VQ_WRITE_ONCE(vq->avail->flags, (uint16_t)(wanted ? 0 : IG_VQ_AVAIL_F_NO_INTERRUPT));
}
