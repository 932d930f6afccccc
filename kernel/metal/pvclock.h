/* kvmclock's arithmetic (the pvclock ABI KVM and Firecracker share): a
 * vCPU's time page turned into nanoseconds, the version-retry read, the
 * TSC rate it implies, and the wall clock's base. Pure: the MSRs that make
 * the hypervisor fill the pages are tsc.c's; the TSC is read through a
 * function the caller passes, so a test can simulate both. */
#ifndef KERNEL_METAL_PVCLOCK_H
#define KERNEL_METAL_PVCLOCK_H

#include <stdint.h>

/* struct pvclock_vcpu_time_info: system_time (ns since the VM started) at
 * tsc_timestamp; later TSC ticks scale by tsc_to_system_mul (32.32 fixed
 * point) after a shift by tsc_shift (left if positive, right if negative).
 * version is odd while the hypervisor rewrites the page. */
struct ig_pvclock_time_info {
	uint32_t version;
	uint32_t pad0;
	uint64_t tsc_timestamp;
	uint64_t system_time;
	uint32_t tsc_to_system_mul;
	int8_t tsc_shift;
	uint8_t flags;
	uint8_t pad[2];
};

/* struct pvclock_wall_clock: the wall time (UTC) when system_time was 0. */
struct ig_pvclock_wall_clock {
	uint32_t version;
	uint32_t sec;
	uint32_t nsec;
};

_Static_assert(sizeof(struct ig_pvclock_time_info) == 32, "the pvclock ABI's 32 bytes");
_Static_assert(sizeof(struct ig_pvclock_wall_clock) == 12, "the pvclock ABI's 12 bytes");

/* Nanoseconds for `delta` TSC ticks at the page's rate. */
uint64_t ig_pvclock_scale(uint64_t delta, uint32_t mul, int8_t shift);

/* system_time at `tsc` per one consistent copy of the page; a tsc before
 * tsc_timestamp (the PVH entry's, before the page was registered) counts
 * back, clamped at 0. */
uint64_t ig_pvclock_ns_at(const struct ig_pvclock_time_info *ti, uint64_t tsc);

/* Copies the page into *copy and reads the TSC (tsc_now) until the version
 * was even and unchanged around both; returns system_time now. */
uint64_t ig_pvclock_read(const volatile struct ig_pvclock_time_info *ti, uint64_t (*tsc_now)(void),
			 struct ig_pvclock_time_info *copy);

/* TSC ticks per second the page's multiplier and shift describe (0 for a
 * page not yet filled: mul 0). */
uint64_t ig_pvclock_tsc_hz(uint32_t mul, int8_t shift);

/* The wall time, ns since 1970, when system_time was 0 (version-retried);
 * the wall time now is this plus ig_pvclock_read's system_time. */
uint64_t ig_pvclock_wall_base_ns(const volatile struct ig_pvclock_wall_clock *wc);

#endif
