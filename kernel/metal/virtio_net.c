/* virtio-net (virtio 1.x section 5.1) over virtio-mmio: queue 0 receives,
 * queue 1 transmits. Every buffer is static and holds the virtio-net header
 * (10 bytes legacy, 12 with VERSION_1) followed by one frame; receiving
 * copies the frame out and reposts the buffer, sending copies the frame in
 * behind a zeroed header (no offloads are negotiated). */
#include "kernel/metal/virtio_net.h"

#include <string.h>

#include "kernel/metal/ioapic.h"
#include "kernel/metal/virtio_mmio.h"

#define DEVICE_ID_NET 1
#define F_MAC 5 /* the device has a MAC address in its config space */
#define RX_QUEUE 0
#define TX_QUEUE 1
#define HDR_LEGACY 10 /* struct virtio_net_hdr */
#define HDR_MODERN 12 /* with num_buffers, always present under VERSION_1 */
#define BUF_BYTES 1536 /* >= HDR_MODERN + IG_VIRTIO_NET_FRAME_MAX, keeps 64-byte alignment */
#define QUEUE_MAX IG_VQ_MAX_SIZE

_Static_assert(BUF_BYTES >= HDR_MODERN + IG_VIRTIO_NET_FRAME_MAX, "a buffer holds a frame");

/* The rings, then the buffers: zero-initialised .bss, phys == virt. */
static uint8_t rx_area[IG_VQ_LEGACY_BYTES(QUEUE_MAX)] __attribute__((aligned(IG_VQ_LEGACY_ALIGN)));
static uint8_t tx_area[IG_VQ_LEGACY_BYTES(QUEUE_MAX)] __attribute__((aligned(IG_VQ_LEGACY_ALIGN)));
static uint8_t rx_bufs[QUEUE_MAX][BUF_BYTES] __attribute__((aligned(64)));
static uint8_t tx_bufs[QUEUE_MAX][BUF_BYTES] __attribute__((aligned(64)));

static struct {
	struct ig_virtio_mmio dev;
	struct ig_virtqueue rx, tx;
	uint8_t mac[6];
	uint32_t hdr_len;
	bool split_header;   /* legacy without ANY_LAYOUT: the header has its own descriptor */
	bool up;
	uint16_t tx_free_count;
	uint16_t tx_free[QUEUE_MAX]; /* indexes into tx_bufs not in the ring */
} net;

/* Hands a receive buffer to the device: one descriptor, or header and
 * frame in two when the device needs the header on its own. */
static bool post_rx(uint8_t *buf)
{
	if (net.split_header) {
		struct ig_vq_buf two[] = { { buf, net.hdr_len, true },
					   { buf + net.hdr_len, BUF_BYTES - net.hdr_len, true } };
		return ig_vq_add(&net.rx, two, 2, buf) >= 0;
	}
	return ig_vq_add(&net.rx, &(struct ig_vq_buf){ buf, BUF_BYTES, true }, 1, buf) >= 0;
}

static void notify(struct ig_virtqueue *vq, uint16_t index)
{
	if (ig_vq_should_notify(vq))
		ig_virtio_mmio_notify(&net.dev, index);
}

static bool setup(const char *cmdline)
{
	if (!ig_virtio_mmio_find(cmdline, DEVICE_ID_NET, &net.dev))
		return false;
	uint64_t wanted = 1ull << F_MAC;
	if (net.dev.version == 1)
		wanted |= 1ull << IG_VIRTIO_F_ANY_LAYOUT;
	if (!ig_virtio_mmio_negotiate(&net.dev, wanted))
		return false;
	bool modern = (net.dev.features >> IG_VIRTIO_F_VERSION_1) & 1;
	net.hdr_len = modern ? HDR_MODERN : HDR_LEGACY;
	net.split_header = !modern && !((net.dev.features >> IG_VIRTIO_F_ANY_LAYOUT) & 1);

	memset(rx_area, 0, sizeof rx_area);
	memset(tx_area, 0, sizeof tx_area);
	if (!ig_virtio_mmio_setup_queue(&net.dev, RX_QUEUE, &net.rx, rx_area, QUEUE_MAX) ||
	    !ig_virtio_mmio_setup_queue(&net.dev, TX_QUEUE, &net.tx, tx_area, QUEUE_MAX)) {
		ig_virtio_mmio_fail(&net.dev);
		return false;
	}
	/* Transmit completions are collected when polled: no interrupt needed. */
	ig_vq_set_interrupts(&net.tx, false);

	if ((net.dev.features >> F_MAC) & 1)
		ig_virtio_mmio_read_config(&net.dev, 0, net.mac, sizeof net.mac);
	else
		memcpy(net.mac, (const uint8_t[6]){ 0x02, 0, 0, 0, 0, 1 }, sizeof net.mac);

	for (uint16_t i = 0; i < net.rx.size && post_rx(rx_bufs[i]); i++)
		;
	net.tx_free_count = 0;
	for (uint16_t i = 0; i < net.tx.size; i++)
		net.tx_free[net.tx_free_count++] = i;

	ig_virtio_mmio_driver_ok(&net.dev);
	ig_virtio_mmio_notify(&net.dev, RX_QUEUE); /* only now may the device be told */
	ig_ioapic_route(net.dev.gsi, IG_METAL_IRQ_VECTOR);
	return true;
}

int ig_virtio_net_init(const char *cmdline)
{
	net.up = setup(cmdline);
	return net.up ? 0 : -1;
}

void ig_virtio_net_mac(uint8_t mac[6])
{
	memcpy(mac, net.mac, sizeof net.mac);
}

static void reclaim_tx(void)
{
	uint32_t len;
	uint8_t *buf;
	while ((buf = ig_vq_take_used(&net.tx, &len)) != NULL)
		net.tx_free[net.tx_free_count++] = (uint16_t)((buf - tx_bufs[0]) / BUF_BYTES);
}

bool ig_virtio_net_poll(void)
{
	if (!net.up)
		return false;
	/* Acknowledge first: an event after this raises the line again. */
	ig_virtio_mmio_ack_interrupt(&net.dev);
	reclaim_tx();
	return ig_vq_has_used(&net.rx);
}

ssize_t ig_virtio_net_recv(void *buf, size_t cap)
{
	if (!net.up)
		return 0;
	uint32_t len;
	uint8_t *rx;
	while ((rx = ig_vq_take_used(&net.rx, &len)) != NULL) {
		size_t frame = len > net.hdr_len ? len - net.hdr_len : 0;
		if (frame > BUF_BYTES - net.hdr_len)
			frame = BUF_BYTES - net.hdr_len; /* the device claims more than it had */
		size_t n = frame < cap ? frame : cap;
		memcpy(buf, rx + net.hdr_len, n);
		post_rx(rx); /* its descriptors were just freed: this cannot fail */
		notify(&net.rx, RX_QUEUE);
		if (n > 0)
			return (ssize_t)n;
	}
	return 0;
}

int ig_virtio_net_send(const struct iovec *iov, int iovcnt)
{
	if (!net.up)
		return -1;
	size_t total = 0;
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (total == 0 || total > IG_VIRTIO_NET_FRAME_MAX)
		return -1;
	unsigned need = net.split_header ? 2 : 1;
	if (net.tx_free_count == 0 || net.tx.num_free < need)
		reclaim_tx();
	if (net.tx_free_count == 0 || net.tx.num_free < need)
		return -1;

	uint8_t *buf = tx_bufs[net.tx_free[--net.tx_free_count]];
	memset(buf, 0, net.hdr_len); /* no checksum or segmentation offload asked */
	uint8_t *p = buf + net.hdr_len;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len)
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	struct ig_vq_buf bufs[2] = { { buf, (uint32_t)(net.hdr_len + total), false } };
	if (net.split_header) {
		bufs[0].len = net.hdr_len;
		bufs[1] = (struct ig_vq_buf){ buf + net.hdr_len, (uint32_t)total, false };
	}
	ig_vq_add(&net.tx, bufs, need, buf); /* room was checked above */
	notify(&net.tx, TX_QUEUE);
	return 0;
}
