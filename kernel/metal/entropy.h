/* Randomness fit for keys on bare metal: RDRAND, else RDSEED, where CPUID
 * says the CPU has them, else a virtio-rng device. Chosen once at boot;
 * without any, there is none (getrandom then refuses keys: syscalls.c). */
#ifndef KERNEL_METAL_ENTROPY_H
#define KERNEL_METAL_ENTROPY_H

#include <stdbool.h>
#include <stddef.h>

/* Picks the source (the command line locates a virtio-rng device) and
 * returns its name: "rdrand", "rdseed", "virtio-rng" or "none". */
const char *ig_entropy_init(const char *cmdline);

/* Fills buf from the source; false when there is none or it failed. */
bool ig_entropy_fill(void *buf, size_t len);

#endif
