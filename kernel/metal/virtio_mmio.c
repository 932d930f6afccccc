/* The virtio-mmio transport: the command line's device words, the probe of
 * a register window, and the driver's initialisation sequence of virtio 1.x
 * section 3.1.1 (with the legacy variant of 4.2.4). Register offsets are the
 * spec's table 4.1; the legacy-only ones are marked. */
#include "kernel/metal/virtio_mmio.h"

#include "kernel/metal/mmio.h"

#include <string.h>

enum {
	REG_MAGIC = 0x000,
	REG_VERSION = 0x004,
	REG_DEVICE_ID = 0x008,
	REG_DEVICE_FEATURES = 0x010,
	REG_DEVICE_FEATURES_SEL = 0x014,
	REG_DRIVER_FEATURES = 0x020,
	REG_DRIVER_FEATURES_SEL = 0x024,
	REG_LEGACY_GUEST_PAGE_SIZE = 0x028,
	REG_QUEUE_SEL = 0x030,
	REG_QUEUE_NUM_MAX = 0x034,
	REG_QUEUE_NUM = 0x038,
	REG_LEGACY_QUEUE_ALIGN = 0x03c,
	REG_LEGACY_QUEUE_PFN = 0x040,
	REG_QUEUE_READY = 0x044,
	REG_QUEUE_NOTIFY = 0x050,
	REG_INTERRUPT_STATUS = 0x060,
	REG_INTERRUPT_ACK = 0x064,
	REG_STATUS = 0x070,
	REG_QUEUE_DESC_LOW = 0x080,
	REG_QUEUE_DESC_HIGH = 0x084,
	REG_QUEUE_DRIVER_LOW = 0x090, /* the available ring */
	REG_QUEUE_DRIVER_HIGH = 0x094,
	REG_QUEUE_DEVICE_LOW = 0x0a0, /* the used ring */
	REG_QUEUE_DEVICE_HIGH = 0x0a4,
	REG_CONFIG_GENERATION = 0x0fc,
	REG_CONFIG = 0x100,
};

enum {
	STATUS_ACKNOWLEDGE = 1,
	STATUS_DRIVER = 2,
	STATUS_DRIVER_OK = 4,
	STATUS_FEATURES_OK = 8,
	STATUS_FAILED = 128,
};

#define LEGACY_PAGE_SIZE 4096u
#define DEVICE_WORD "virtio_mmio.device="
#define WINDOW_MIN_SIZE 0x200u /* registers and a config space worth having */
#define MAX_WINDOWS 8
#define RESET_SPINS 100000 /* a device that never reads back 0 is broken */

/* ---- the command line's words (pure) ---- */

/* Decimal, or hexadecimal after 0x when `hex_allowed`. */
static bool parse_number(const char **p, const char *end, bool hex_allowed, uint64_t *out)
{
	unsigned base = 10;
	const char *s = *p;
	if (hex_allowed && end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	const char *start = s;
	uint64_t v = 0;
	for (; s < end; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && (*s | 0x20) >= 'a' && (*s | 0x20) <= 'f')
			d = (unsigned)((*s | 0x20) - 'a' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	if (s == start)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool parse_char(const char **p, const char *end, char c)
{
	if (*p == end || **p != c)
		return false;
	(*p)++;
	return true;
}

bool ig_virtio_mmio_parse_word(const char *word, size_t len, struct ig_virtio_mmio_window *out)
{
	const size_t prefix = sizeof DEVICE_WORD - 1;
	if (len < prefix || memcmp(word, DEVICE_WORD, prefix) != 0)
		return false;
	const char *p = word + prefix, *end = word + len;
	uint64_t size, base, irq, id;
	if (!parse_number(&p, end, true, &size))
		return false;
	unsigned shift = 0;
	if (p < end && (*p == 'K' || *p == 'k'))
		shift = 10;
	else if (p < end && (*p == 'M' || *p == 'm'))
		shift = 20;
	else if (p < end && (*p == 'G' || *p == 'g'))
		shift = 30;
	if (shift) {
		p++;
		if (size > UINT64_MAX >> shift)
			return false;
		size <<= shift;
	}
	if (size == 0 || !parse_char(&p, end, '@') || !parse_number(&p, end, true, &base) ||
	    !parse_char(&p, end, ':'))
		return false;
	if (!parse_number(&p, end, false, &irq) || irq > UINT32_MAX)
		return false;
	if (parse_char(&p, end, ':') && !parse_number(&p, end, false, &id))
		return false;
	if (p != end || base > UINT64_MAX - size)
		return false;
	*out = (struct ig_virtio_mmio_window){ .size = size, .base = base, .irq = (uint32_t)irq };
	return true;
}

size_t ig_virtio_mmio_windows(const char *cmdline, struct ig_virtio_mmio_window *out, size_t max)
{
	size_t n = 0;
	const char *p = cmdline;
	while (*p && n < max) {
		while (*p == ' ' || *p == '\t')
			p++;
		const char *start = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (p > start && ig_virtio_mmio_parse_word(start, (size_t)(p - start), &out[n]))
			n++;
	}
	return n;
}

/* ---- registers ---- */

static uint32_t reg_read(const struct ig_virtio_mmio *dev, uint32_t reg)
{
	return ig_mmio_read32(dev->base + reg);
}

static void reg_write(const struct ig_virtio_mmio *dev, uint32_t reg, uint32_t v)
{
	ig_mmio_write32(dev->base + reg, v);
}

static bool probe(struct ig_virtio_mmio *dev, uintptr_t base, uint32_t gsi, uint32_t device_id)
{
	*dev = (struct ig_virtio_mmio){ .base = base, .gsi = gsi };
	if (reg_read(dev, REG_MAGIC) != IG_VIRTIO_MMIO_MAGIC)
		return false;
	dev->version = reg_read(dev, REG_VERSION);
	/* Device id 0 is qemu's empty placeholder transport. */
	return (dev->version == 1 || dev->version == 2) && reg_read(dev, REG_DEVICE_ID) == device_id;
}

bool ig_virtio_mmio_find(const char *cmdline, uint32_t device_id, struct ig_virtio_mmio *dev)
{
	struct ig_virtio_mmio_window w[MAX_WINDOWS];
	size_t n = cmdline ? ig_virtio_mmio_windows(cmdline, w, MAX_WINDOWS) : 0;
	for (size_t i = 0; i < n; i++) {
		/* Only what the identity map covers and the IOAPICs can route. */
		if (w[i].size >= WINDOW_MIN_SIZE && w[i].base + w[i].size <= (1ull << 32) &&
		    w[i].irq <= IG_VIRTIO_MMIO_MAX_GSI && probe(dev, (uintptr_t)w[i].base, w[i].irq, device_id))
			return true;
	}
	if (n > 0)
		return false; /* the words are the machine's description: no guessing past them */
	for (uint32_t i = 0; i < IG_VIRTIO_MMIO_SCAN_COUNT; i++) {
		if (probe(dev, IG_VIRTIO_MMIO_SCAN_BASE + IG_VIRTIO_MMIO_SCAN_STRIDE * i,
			  IG_VIRTIO_MMIO_SCAN_GSI + i, device_id))
			return true;
	}
	return false;
}

static void set_status(struct ig_virtio_mmio *dev, uint32_t bits)
{
	reg_write(dev, REG_STATUS, reg_read(dev, REG_STATUS) | bits);
}

void ig_virtio_mmio_fail(struct ig_virtio_mmio *dev)
{
	set_status(dev, STATUS_FAILED);
}

bool ig_virtio_mmio_negotiate(struct ig_virtio_mmio *dev, uint64_t wanted)
{
	reg_write(dev, REG_STATUS, 0);
	for (int i = 0; reg_read(dev, REG_STATUS) != 0; i++) {
		if (i == RESET_SPINS)
			return false;
	}
	set_status(dev, STATUS_ACKNOWLEDGE);
	set_status(dev, STATUS_DRIVER);

	uint64_t offered = 0;
	for (uint32_t half = 0; half < 2; half++) {
		reg_write(dev, REG_DEVICE_FEATURES_SEL, half);
		offered |= (uint64_t)reg_read(dev, REG_DEVICE_FEATURES) << (32 * half);
	}
	const uint64_t version_1 = 1ull << IG_VIRTIO_F_VERSION_1;
	if (dev->version == 2) {
		if (!(offered & version_1)) {
			ig_virtio_mmio_fail(dev);
			return false;
		}
		wanted |= version_1;
	} else {
		wanted &= 0xffffffffu; /* a legacy device has 32 feature bits */
	}
	dev->features = offered & wanted;
	for (uint32_t half = 0; half < 2; half++) {
		reg_write(dev, REG_DRIVER_FEATURES_SEL, half);
		reg_write(dev, REG_DRIVER_FEATURES, (uint32_t)(dev->features >> (32 * half)));
	}
	if (dev->version == 2) {
		set_status(dev, STATUS_FEATURES_OK);
		if (!(reg_read(dev, REG_STATUS) & STATUS_FEATURES_OK)) {
			ig_virtio_mmio_fail(dev);
			return false;
		}
	} else {
		reg_write(dev, REG_LEGACY_GUEST_PAGE_SIZE, LEGACY_PAGE_SIZE);
	}
	return true;
}

bool ig_virtio_mmio_setup_queue(struct ig_virtio_mmio *dev, uint16_t index, struct ig_virtqueue *vq,
				void *area, uint16_t max_size)
{
	reg_write(dev, REG_QUEUE_SEL, index);
	uint32_t in_use = dev->version == 2 ? reg_read(dev, REG_QUEUE_READY)
					    : reg_read(dev, REG_LEGACY_QUEUE_PFN);
	uint32_t device_max = reg_read(dev, REG_QUEUE_NUM_MAX);
	if (in_use != 0 || device_max == 0)
		return false;
	uint32_t limit = device_max < max_size ? device_max : max_size;
	uint16_t size = 1;
	while ((uint32_t)size * 2 <= limit)
		size = (uint16_t)(size * 2);
	if (!ig_vq_init_legacy(vq, area, size))
		return false;
	reg_write(dev, REG_QUEUE_NUM, size);
	if (dev->version == 1) {
		reg_write(dev, REG_LEGACY_QUEUE_ALIGN, IG_VQ_LEGACY_ALIGN);
		reg_write(dev, REG_LEGACY_QUEUE_PFN, (uint32_t)((uintptr_t)area / LEGACY_PAGE_SIZE));
		return true;
	}
	uint64_t desc = (uintptr_t)vq->desc, avail = (uintptr_t)vq->avail, used = (uintptr_t)vq->used;
	reg_write(dev, REG_QUEUE_DESC_LOW, (uint32_t)desc);
	reg_write(dev, REG_QUEUE_DESC_HIGH, (uint32_t)(desc >> 32));
	reg_write(dev, REG_QUEUE_DRIVER_LOW, (uint32_t)avail);
	reg_write(dev, REG_QUEUE_DRIVER_HIGH, (uint32_t)(avail >> 32));
	reg_write(dev, REG_QUEUE_DEVICE_LOW, (uint32_t)used);
	reg_write(dev, REG_QUEUE_DEVICE_HIGH, (uint32_t)(used >> 32));
	reg_write(dev, REG_QUEUE_READY, 1);
	return true;
}

void ig_virtio_mmio_driver_ok(struct ig_virtio_mmio *dev)
{
	set_status(dev, STATUS_DRIVER_OK);
}

void ig_virtio_mmio_notify(const struct ig_virtio_mmio *dev, uint16_t index)
{
	reg_write(dev, REG_QUEUE_NOTIFY, index);
}

uint32_t ig_virtio_mmio_ack_interrupt(const struct ig_virtio_mmio *dev)
{
	uint32_t bits = reg_read(dev, REG_INTERRUPT_STATUS);
	if (bits)
		reg_write(dev, REG_INTERRUPT_ACK, bits);
	return bits;
}

void ig_virtio_mmio_read_config(const struct ig_virtio_mmio *dev, size_t offset, uint8_t *out,
				size_t len)
{
	uint32_t before, after;
	do {
		before = dev->version == 2 ? reg_read(dev, REG_CONFIG_GENERATION) : 0;
		for (size_t i = 0; i < len; i++)
			out[i] = ig_mmio_read8(dev->base + REG_CONFIG + offset + i);
		after = dev->version == 2 ? reg_read(dev, REG_CONFIG_GENERATION) : 0;
	} while (before != after);
}
