/* The virtio-mmio transport (virtio 1.x section 4.2), legacy (version 1,
 * qemu's default) and modern (version 2, Firecracker's and qemu's with
 * virtio-mmio.force-legacy=false): finding a device, from the command line's
 * `virtio_mmio.device=SIZE@BASE:IRQ` words or by scanning microvm's fixed
 * transports, then the status handshake, features, queues and notification.
 * Device-independent: virtio_net.c drives it. */
#ifndef KERNEL_METAL_VIRTIO_MMIO_H
#define KERNEL_METAL_VIRTIO_MMIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/metal/virtqueue.h"

#define IG_VIRTIO_MMIO_MAGIC 0x74726976u /* "virt", little-endian */
/* qemu's microvm with ACPI (its default) puts no words on the command line:
 * it has 24 transports here, transport i on GSI 24 + i (the second IOAPIC). */
#define IG_VIRTIO_MMIO_SCAN_BASE 0xfeb00000u
#define IG_VIRTIO_MMIO_SCAN_STRIDE 0x200u
#define IG_VIRTIO_MMIO_SCAN_COUNT 24
#define IG_VIRTIO_MMIO_SCAN_GSI 24
#define IG_VIRTIO_MMIO_MAX_GSI 47 /* the last one ig_ioapic_route reaches */

#define IG_VIRTIO_F_VERSION_1 32 /* feature bit: the modern interface */
#define IG_VIRTIO_F_ANY_LAYOUT 27 /* legacy: any split of header and data */

/* One `virtio_mmio.device=` word. */
struct ig_virtio_mmio_window {
	uint64_t size, base;
	uint32_t irq; /* a GSI */
};

/* Parses one command-line word of the form Linux accepts and qemu's microvm
 * (with acpi=off) and Firecracker write: `virtio_mmio.device=SIZE@BASE:IRQ`
 * with an optional `:ID` after it (ignored). SIZE is a number with an
 * optional K, M or G suffix (powers of 1024); SIZE and BASE are decimal or
 * 0x-prefixed hexadecimal, IRQ decimal. Returns false for any other word or
 * a malformed or overflowing one (size 0 included). Pure. */
bool ig_virtio_mmio_parse_word(const char *word, size_t len, struct ig_virtio_mmio_window *out);

/* Collects the windows of a NUL-terminated command line (words separated by
 * spaces or tabs) in order, at most `max`; returns how many it stored. Pure. */
size_t ig_virtio_mmio_windows(const char *cmdline, struct ig_virtio_mmio_window *out, size_t max);

/* A transport in use. */
struct ig_virtio_mmio {
	uintptr_t base;
	uint32_t version;  /* 1 legacy, 2 modern */
	uint32_t gsi;      /* where its interrupt arrives */
	uint64_t features; /* what was negotiated */
};

/* Finds the first transport holding a device of `device_id` (1: network):
 * among the command line's windows when it has any, else among microvm's 24.
 * Returns false when there is none. Reads device registers. */
bool ig_virtio_mmio_find(const char *cmdline, uint32_t device_id, struct ig_virtio_mmio *dev);

/* Resets the device, acknowledges it and accepts the features offered that
 * `wanted` has (bit numbers as in the spec; a modern device must offer
 * VERSION_1, which is then always accepted), checks FEATURES_OK (modern),
 * and sets the legacy page size. On false the device is marked FAILED. */
bool ig_virtio_mmio_negotiate(struct ig_virtio_mmio *dev, uint64_t wanted);

/* Sets up queue `index` with the largest power-of-two size up to both the
 * device's maximum and `max_size`, over `area`: zeroed, aligned to
 * IG_VQ_LEGACY_ALIGN and ig_vq_legacy_bytes(max_size) long (the legacy
 * single-area layout, whose three parts also satisfy the modern transport's
 * separate addresses). False when the queue does not exist or is in use. */
bool ig_virtio_mmio_setup_queue(struct ig_virtio_mmio *dev, uint16_t index, struct ig_virtqueue *vq,
				void *area, uint16_t max_size);

/* Ends the setup: the device may use the queues from now on. */
void ig_virtio_mmio_driver_ok(struct ig_virtio_mmio *dev);

/* Marks the device FAILED (a setup step did not hold). */
void ig_virtio_mmio_fail(struct ig_virtio_mmio *dev);

/* Tells the device queue `index` has new available entries. */
void ig_virtio_mmio_notify(const struct ig_virtio_mmio *dev, uint16_t index);

/* Reads InterruptStatus and acknowledges what it holds (bit 0: used
 * buffers, bit 1: configuration change), so that the interrupt line drops
 * and the next event raises it again; returns those bits. */
uint32_t ig_virtio_mmio_ack_interrupt(const struct ig_virtio_mmio *dev);

/* Copies `len` bytes of the device-specific configuration from `offset`,
 * byte by byte as the spec requires for byte fields, and (modern) retried
 * until ConfigGeneration says no change happened in between. */
void ig_virtio_mmio_read_config(const struct ig_virtio_mmio *dev, size_t offset, uint8_t *out,
				size_t len);

#endif
