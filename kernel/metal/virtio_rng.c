/* virtio-rng over virtio-mmio: queue 0 carries device-writable buffers that
 * come back holding random bytes (possibly fewer than asked). No interrupt:
 * a read spins on the used ring, bounded, since the device answers from
 * its host's generator without waiting on anything of the guest's. */
#include "kernel/metal/virtio_rng.h"

#include <stdint.h>
#include <string.h>

#include "kernel/metal/virtio_mmio.h"

#define DEVICE_ID_RNG 4
#define REQUEST_QUEUE 0
#define QUEUE_MAX 4
#define CHUNK 64
#define SPINS 200000000u /* seconds of polling: the device is gone */

static uint8_t area[IG_VQ_LEGACY_BYTES(QUEUE_MAX)] __attribute__((aligned(IG_VQ_LEGACY_ALIGN)));
static uint8_t chunk[CHUNK] __attribute__((aligned(64)));

static struct {
	struct ig_virtio_mmio dev;
	struct ig_virtqueue vq;
	bool up;
} rng;

bool ig_virtio_rng_init(const char *cmdline)
{
	if (!ig_virtio_mmio_find(cmdline, DEVICE_ID_RNG, &rng.dev) || !ig_virtio_mmio_negotiate(&rng.dev, 0))
		return false;
	memset(area, 0, sizeof area);
	if (!ig_virtio_mmio_setup_queue(&rng.dev, REQUEST_QUEUE, &rng.vq, area, QUEUE_MAX)) {
		ig_virtio_mmio_fail(&rng.dev);
		return false;
	}
	ig_vq_set_interrupts(&rng.vq, false);
	ig_virtio_mmio_driver_ok(&rng.dev);
	rng.up = true;
	return true;
}

bool ig_virtio_rng_read(void *buf, size_t len)
{
	uint8_t *out = buf;
	while (rng.up && len) {
		if (ig_vq_add(&rng.vq, &(struct ig_vq_buf){ chunk, CHUNK, true }, 1, chunk) < 0)
			break;
		if (ig_vq_should_notify(&rng.vq))
			ig_virtio_mmio_notify(&rng.dev, REQUEST_QUEUE);
		uint32_t spins = 0;
		while (!ig_vq_has_used(&rng.vq) && ++spins < SPINS)
			__asm__ volatile("pause");
		uint32_t got = 0;
		if (spins == SPINS || !ig_vq_take_used(&rng.vq, &got)) {
			rng.up = false; /* the buffer stays the device's: never reuse the ring */
			break;
		}
		size_t n = got < len ? got : len;
		if (n > CHUNK)
			n = CHUNK;
		memcpy(out, chunk, n);
		memset(chunk, 0, sizeof chunk);
		out += n;
		len -= n;
	}
	return rng.up && len == 0;
}
