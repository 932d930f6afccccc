/* Unit tests of kernel/metal/virtqueue against a simulated device: the test
 * plays the device's side of the split ring (takes available entries, walks
 * their chains, reads or writes the buffers, publishes used entries, in
 * order or not), over the legacy single area and over three separate areas
 * allocated to their exact sizes so that ASan sees any overrun. Covers the
 * spec's layout, chains, a full ring, out-of-order completion, the 16-bit
 * indexes wrapping, notification and interrupt suppression. */
#include "kernel/metal/virtqueue.h"
#include "tests/unit/check.h"

#include <stdlib.h>

/* The device's view: its own shadow of avail->idx and of used->idx. */
struct sim_device {
	struct ig_virtqueue *vq; /* only its ring pointers and size: what a device knows */
	uint16_t last_avail;
	uint16_t used_idx;
	bool broken; /* set when the driver handed it something invalid */
};

struct sim_chain {
	uint16_t head;
	uint32_t read_bytes; /* sum of driver-written buffers */
	uint32_t wrote;      /* what the device put into device-writable ones */
	uint8_t read_sum;    /* a checksum of what it read */
};

/* Takes the next available chain, if any: reads the driver's buffers, fills
 * the device-writable ones with `fill` (up to `limit` bytes in all). */
static bool sim_take(struct sim_device *d, uint8_t fill, uint32_t limit, struct sim_chain *c)
{
	struct ig_vq_avail *avail = d->vq->avail;
	uint16_t size = d->vq->size;
	if (__atomic_load_n(&avail->idx, __ATOMIC_ACQUIRE) == d->last_avail)
		return false;
	uint16_t head = avail->ring[d->last_avail & (size - 1)];
	d->last_avail++;
	*c = (struct sim_chain){ .head = head };
	uint16_t i = head;
	for (unsigned hops = 0;; hops++) {
		if (i >= size || hops >= size) {
			d->broken = true;
			return false;
		}
		const struct ig_vq_desc *desc = &d->vq->desc[i];
		uint8_t *p = (uint8_t *)(uintptr_t)desc->addr;
		if (desc->flags & IG_VQ_DESC_F_WRITE) {
			for (uint32_t k = 0; k < desc->len && c->wrote < limit; k++, c->wrote++)
				p[k] = fill;
		} else {
			for (uint32_t k = 0; k < desc->len; k++)
				c->read_sum = (uint8_t)(c->read_sum + p[k]);
			c->read_bytes += desc->len;
		}
		if (!(desc->flags & IG_VQ_DESC_F_NEXT))
			return true;
		i = desc->next;
	}
}

static void sim_put_used(struct sim_device *d, uint16_t id, uint32_t len)
{
	struct ig_vq_used *used = d->vq->used;
	used->ring[d->used_idx & (d->vq->size - 1)] = (struct ig_vq_used_elem){ id, len };
	d->used_idx++;
	__atomic_store_n(&used->idx, d->used_idx, __ATOMIC_RELEASE);
}

/* Three areas of exactly the sizes the driver may touch. */
struct split_areas {
	struct ig_vq_desc *desc;
	struct ig_vq_avail *avail;
	struct ig_vq_used *used;
};

static bool split_init(struct ig_virtqueue *vq, struct split_areas *a, uint16_t size)
{
	a->desc = aligned_alloc(16, ig_vq_desc_bytes(size));
	a->avail = calloc(1, ig_vq_avail_bytes(size));
	a->used = calloc(1, ig_vq_used_bytes(size));
	memset(a->desc, 0, ig_vq_desc_bytes(size));
	return ig_vq_init(vq, size, a->desc, a->avail, a->used);
}

static void split_free(struct split_areas *a)
{
	free(a->desc);
	free(a->avail);
	free(a->used);
}

static void test_layout(void)
{
	/* Linux's vring_size() and the spec's legacy formula: desc 16*N, avail
	 * 2*(3+N), the used ring at the next 4096, then 2*3 + 8*N. */
	CHECK_INT(ig_vq_desc_bytes(256), 4096, "desc table of 256 is 4096 bytes");
	CHECK_INT(ig_vq_avail_bytes(256), 518, "avail ring of 256 is 518 bytes (with used_event)");
	CHECK_INT(ig_vq_used_bytes(256), 2054, "used ring of 256 is 2054 bytes (with avail_event)");
	CHECK_INT(ig_vq_legacy_bytes(256), 12288, "legacy area of 256 rounds to 3 pages");
	CHECK_INT(ig_vq_legacy_bytes(8), 8192, "legacy area of 8 is 2 pages");
	CHECK_INT(ig_vq_legacy_bytes(1), 8192, "legacy area of 1 is 2 pages");
	bool same = true;
	for (unsigned n = 1; n <= IG_VQ_MAX_SIZE; n *= 2)
		same &= ig_vq_legacy_bytes((uint16_t)n) == IG_VQ_LEGACY_BYTES(n);
	CHECK(same, "IG_VQ_LEGACY_BYTES agrees with ig_vq_legacy_bytes for every size");

	static struct ig_virtqueue vq;
	char *area = aligned_alloc(IG_VQ_LEGACY_ALIGN, ig_vq_legacy_bytes(256));
	memset(area, 0, ig_vq_legacy_bytes(256));
	CHECK(ig_vq_init_legacy(&vq, area, 256), "legacy init of 256");
	CHECK_INT((char *)vq.desc - area, 0, "legacy: descriptors first");
	CHECK_INT((char *)vq.avail - area, 4096, "legacy: avail ring right after them");
	CHECK_INT((char *)vq.used - area, 8192, "legacy: used ring at the next 4096");
	CHECK(ig_vq_init_legacy(&vq, area, 8) && (char *)vq.used - area == 4096,
	      "legacy of 8: used ring at 4096");
	CHECK(!ig_vq_init_legacy(&vq, area + 16, 8), "legacy area must be 4096-aligned");
	CHECK(!ig_vq_init_legacy(&vq, area, 0), "size 0 refused");
	CHECK(!ig_vq_init_legacy(&vq, area, 3), "size not a power of two refused");
	CHECK(!ig_vq_init_legacy(&vq, area, 512), "size above IG_VQ_MAX_SIZE refused");
	CHECK(!ig_vq_init(&vq, 8, (struct ig_vq_desc *)(area + 8), (void *)area, (void *)area),
	      "descriptor table must be 16-aligned");
	CHECK(!ig_vq_init(&vq, 8, (void *)area, (void *)(area + 1), (void *)area),
	      "avail ring must be 2-aligned");
	CHECK(!ig_vq_init(&vq, 8, (void *)area, (void *)area, (void *)(area + 2)),
	      "used ring must be 4-aligned");
	free(area);
}

/* Device-writable buffers (receive): the device fills them and says how much. */
static void test_receive_round_trip(void)
{
	static struct ig_virtqueue vq;
	char *area = aligned_alloc(IG_VQ_LEGACY_ALIGN, ig_vq_legacy_bytes(16));
	memset(area, 0, ig_vq_legacy_bytes(16));
	ig_vq_init_legacy(&vq, area, 16);
	struct sim_device dev = { .vq = &vq };
	static uint8_t bufs[16][64];

	bool added = true;
	for (int i = 0; i < 16; i++)
		added &= ig_vq_add(&vq, &(struct ig_vq_buf){ bufs[i], sizeof bufs[i], true }, 1,
				   bufs[i]) >= 0;
	CHECK(added, "16 receive buffers posted");
	CHECK_INT(vq.num_free, 0, "no descriptor left");
	CHECK_INT(vq.avail->idx, 16, "avail index published");
	CHECK(!ig_vq_has_used(&vq), "nothing used before the device acts");
	uint32_t len = 99;
	CHECK(ig_vq_take_used(&vq, &len) == NULL && len == 99, "take_used: NULL when none");

	struct sim_chain c;
	bool ok = true;
	for (int i = 0; i < 3; i++) {
		ok &= sim_take(&dev, (uint8_t)(0xa0 + i), 10u + (uint32_t)i, &c);
		sim_put_used(&dev, c.head, c.wrote);
	}
	CHECK(ok && !dev.broken, "device took three chains");
	CHECK(ig_vq_has_used(&vq), "used entries seen");
	void *cookie = ig_vq_take_used(&vq, &len);
	CHECK(cookie == bufs[0] && len == 10 && bufs[0][9] == 0xa0 && bufs[0][10] == 0,
	      "first frame: its buffer, its length, its bytes");
	cookie = ig_vq_take_used(&vq, &len);
	CHECK(cookie == bufs[1] && len == 11 && bufs[1][10] == 0xa1, "second frame in order");
	CHECK_INT(vq.num_free, 2, "two descriptors back on the free list");
	/* Repost the two, as the driver does after copying a frame out. */
	ok = ig_vq_add(&vq, &(struct ig_vq_buf){ bufs[0], 64, true }, 1, bufs[0]) >= 0 &&
	     ig_vq_add(&vq, &(struct ig_vq_buf){ bufs[1], 64, true }, 1, bufs[1]) >= 0;
	CHECK(ok && vq.num_free == 0, "reposted into the freed descriptors");
	cookie = ig_vq_take_used(&vq, &len);
	CHECK(cookie == bufs[2] && len == 12, "third frame still waiting after the reposts");
	CHECK(!ig_vq_has_used(&vq), "then none");
	free(area);
}

/* Driver-written chains (transmit): a header and a frame in two descriptors. */
static void test_chains(void)
{
	static struct ig_virtqueue vq;
	struct split_areas a;
	CHECK(split_init(&vq, &a, 8), "separate areas of their exact sizes");
	struct sim_device dev = { .vq = &vq };
	static uint8_t hdr[12], frame[60], in[100];
	memset(frame, 1, sizeof frame);
	hdr[0] = 5;

	struct ig_vq_buf two[] = { { hdr, sizeof hdr, false }, { frame, sizeof frame, false } };
	int head = ig_vq_add(&vq, two, 2, frame);
	CHECK(head >= 0 && vq.num_free == 6, "a two-descriptor chain takes two");
	CHECK((vq.desc[head].flags & IG_VQ_DESC_F_NEXT) &&
		      !(vq.desc[vq.desc[head].next].flags & IG_VQ_DESC_F_NEXT),
	      "NEXT on the first only");
	struct ig_vq_buf three[] = { { hdr, 10, false }, { frame, 20, false }, { in, 100, true } };
	CHECK(ig_vq_add(&vq, three, 3, in) >= 0, "a mixed chain of three");
	struct sim_chain c1, c2;
	bool ok = sim_take(&dev, 0x55, 1000, &c1) && sim_take(&dev, 0x66, 1000, &c2);
	CHECK(ok && !dev.broken, "device walked both chains");
	CHECK(c1.read_bytes == 72 && c1.read_sum == (uint8_t)(5 + 60) && c1.wrote == 0,
	      "first chain: header and frame read, nothing written");
	CHECK(c2.read_bytes == 30 && c2.wrote == 100 && in[99] == 0x66,
	      "second chain: 30 bytes read, the writable one filled");
	/* Three descriptors are free now (8 - 2 - 3); a chain of four must fail
	 * and leave everything as it was. */
	uint16_t free_before = vq.num_free, avail_before = vq.avail->idx;
	CHECK_INT(free_before, 3, "three descriptors free");
	struct ig_vq_buf four[] = { { hdr, 1, false }, { hdr, 1, false }, { hdr, 1, false },
				    { hdr, 1, false } };
	CHECK(ig_vq_add(&vq, four, 4, hdr) == -1, "a chain longer than the free list fails");
	CHECK(vq.num_free == free_before && vq.avail->idx == avail_before,
	      "and changes nothing");
	CHECK(ig_vq_add(&vq, two, 0, hdr) == -1, "an empty chain fails");

	sim_put_used(&dev, c2.head, c2.wrote); /* out of order: the second first */
	sim_put_used(&dev, c1.head, 0);
	uint32_t len;
	CHECK(ig_vq_take_used(&vq, &len) == in && len == 100, "out of order: the second chain first");
	CHECK(ig_vq_take_used(&vq, &len) == frame && len == 0, "then the first");
	CHECK_INT(vq.num_free, 8, "all eight descriptors free again");
	/* The free list itself, not just its count: eight single chains must
	 * get eight different descriptors. */
	unsigned seen = 0;
	for (int i = 0; i < 8; i++) {
		int h = ig_vq_add(&vq, &(struct ig_vq_buf){ hdr, 1, false }, 1, hdr);
		if (h >= 0 && h < 8)
			seen |= 1u << h;
	}
	CHECK_INT(seen, 0xff, "the freed chains relinked: eight distinct descriptors");
	split_free(&a);
}

/* A full ring, then the chains come back in reverse: the free list must
 * stay whole through any completion order. */
static void test_full_ring_reverse(void)
{
	static struct ig_virtqueue vq;
	struct split_areas a;
	split_init(&vq, &a, 32);
	struct sim_device dev = { .vq = &vq };
	static uint8_t bufs[32][16];
	for (int round = 0; round < 3; round++) {
		int n = 0;
		while (ig_vq_add(&vq, &(struct ig_vq_buf){ bufs[n % 32], 16, true }, 1, bufs[n % 32]) >= 0)
			n++;
		CHECK_INT(n, 32, "the ring takes exactly its size, then says full");
		struct sim_chain c[32];
		int taken = 0;
		while (taken < 32 && sim_take(&dev, (uint8_t)taken, 16, &c[taken]))
			taken++;
		CHECK(taken == 32 && !sim_take(&dev, 0, 16, &c[0]), "the device sees 32 and no more");
		for (int i = 31; i >= 0; i--)
			sim_put_used(&dev, c[i].head, (uint32_t)i);
		bool order = true;
		for (int i = 31; i >= 0; i--) {
			uint32_t len;
			void *ck = ig_vq_take_used(&vq, &len);
			order &= len == (uint32_t)i && ck != NULL && ((uint8_t *)ck)[0] == (uint8_t)i;
		}
		CHECK(order, "reverse completion: each cookie with its own length and bytes");
		CHECK(vq.num_free == 32 && !ig_vq_has_used(&vq), "every descriptor back");
	}
	split_free(&a);
}

/* Far more than 65536 chains through a small queue: the free-running 16-bit
 * indexes of both rings wrap, and every chain still comes back once. */
static void test_index_wrap(void)
{
	static struct ig_virtqueue vq;
	char *area = aligned_alloc(IG_VQ_LEGACY_ALIGN, ig_vq_legacy_bytes(8));
	memset(area, 0, ig_vq_legacy_bytes(8));
	ig_vq_init_legacy(&vq, area, 8);
	struct sim_device dev = { .vq = &vq };
	static uint32_t tokens[8];
	uint32_t sent = 0, received = 0;
	uint64_t token_sum = 0;
	bool ok = true;
	unsigned wraps_seen = 0;
	uint16_t prev_avail = 0;
	while (received < 70000 && ok) {
		/* Fill 1..8 slots, complete a varying number, sometimes reversed. */
		unsigned fill = 1 + sent % 8;
		for (unsigned k = 0; k < fill && vq.num_free > 0; k++) {
			/* The token slot is the head the chain will get. */
			uint16_t slot = vq.free_head;
			tokens[slot] = sent++;
			ok &= ig_vq_add(&vq, &(struct ig_vq_buf){ &tokens[slot], 4, false }, 1,
					&tokens[slot]) == slot;
		}
		struct sim_chain c[8];
		unsigned n = 0;
		while (n < 8 && sim_take(&dev, 0, 0, &c[n]))
			n++;
		bool reverse = (received / 8) % 2;
		for (unsigned k = 0; k < n; k++) {
			struct sim_chain *e = &c[reverse ? n - 1 - k : k];
			sim_put_used(&dev, e->head, *(uint32_t *)(uintptr_t)vq.desc[e->head].addr);
		}
		uint32_t len;
		void *ck;
		while ((ck = ig_vq_take_used(&vq, &len)) != NULL) {
			uint32_t *t = ck;
			ok &= t >= tokens && t < tokens + 8 && *t == len;
			token_sum += *t;
			received++;
		}
		if (vq.avail->idx < prev_avail)
			wraps_seen++;
		prev_avail = vq.avail->idx;
	}
	CHECK(ok && !dev.broken, "70000 chains: each came back with its own token");
	CHECK_INT(sent, received, "as many back as sent");
	CHECK_INT(token_sum, (uint64_t)sent * (sent - 1) / 2, "the returned tokens sum to the sent ones");
	CHECK(wraps_seen >= 1, "the avail index wrapped past 65535");
	CHECK_INT(vq.avail->idx, (uint16_t)sent, "avail index is the count modulo 2^16");
	CHECK_INT(vq.used->idx, (uint16_t)received, "used index is the count modulo 2^16");
	CHECK_INT(vq.num_free, 8, "free list whole after the wrap");
	free(area);
}

static void test_flags_and_bad_device(void)
{
	static struct ig_virtqueue vq;
	struct split_areas a;
	split_init(&vq, &a, 4);
	static uint8_t b[4];
	ig_vq_add(&vq, &(struct ig_vq_buf){ b, 4, true }, 1, b);
	CHECK(ig_vq_should_notify(&vq), "notify by default");
	vq.used->flags = IG_VQ_USED_F_NO_NOTIFY;
	CHECK(!ig_vq_should_notify(&vq), "no notify when the device says so");
	ig_vq_set_interrupts(&vq, false);
	CHECK_INT(vq.avail->flags, IG_VQ_AVAIL_F_NO_INTERRUPT, "interrupts suppressed");
	ig_vq_set_interrupts(&vq, true);
	CHECK_INT(vq.avail->flags, 0, "interrupts wanted again");

	/* A device returning an id out of range loses that entry, nothing more. */
	vq.used->ring[0] = (struct ig_vq_used_elem){ 4, 1 };
	vq.used->idx = 1;
	uint32_t len;
	CHECK(ig_vq_take_used(&vq, &len) == NULL && !ig_vq_has_used(&vq) && vq.num_free == 3,
	      "an out-of-range used id is skipped, the free list untouched");
	split_free(&a);
}

int main(void)
{
	test_layout();
	test_receive_round_trip();
	test_chains();
	test_full_ring_reverse();
	test_index_wrap();
	test_flags_and_bad_device();
	return check_done();
}
