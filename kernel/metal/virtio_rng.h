/* The machine's entropy device: virtio-rng (virtio 1.x section 5.4) on
 * virtio-mmio, as qemu's `-device virtio-rng-device` and Firecracker's
 * entropy device provide. One request queue; each read hands the device a
 * buffer and polls until it comes back filled. Single core, interrupts off;
 * memory identity-mapped (phys == virt). */
#ifndef KERNEL_METAL_VIRTIO_RNG_H
#define KERNEL_METAL_VIRTIO_RNG_H

#include <stdbool.h>
#include <stddef.h>

/* Finds the device as virtio_net.h does (the command line's
 * `virtio_mmio.device=` words, else microvm's transports), resets it and
 * sets its queue up. False when there is none or it refused the setup. */
bool ig_virtio_rng_init(const char *cmdline);

/* Fills buf with len bytes from the device; false if the device stopped
 * answering (what was filled is then not to be used). */
bool ig_virtio_rng_read(void *buf, size_t len);

#endif
