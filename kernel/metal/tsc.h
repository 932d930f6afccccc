/* Time on bare metal: a monotonic clock counting from the PVH entry
 * (boot.S), so the `listening` line's startup_us includes the whole boot,
 * and the wall clock. Under KVM or Firecracker (no CMOS RTC there) both
 * come from kvmclock when it is offered; else from the TSC, calibrated
 * against the PIT at boot, and the CMOS RTC read once and carried forward
 * by the TSC. */
#ifndef KERNEL_METAL_TSC_H
#define KERNEL_METAL_TSC_H

#include <stdint.h>

/* The clock's start, in two calls with other work between them (which
 * must not read the clock, and must take less than the PIT's 55 ms
 * period): begin registers kvmclock if the hypervisor offers it (then end
 * does nothing), else starts PIT channel 0 counting; end waits until the
 * count has run 2 ms since begin, so the work between costs the boot
 * nothing up to that, calibrates the TSC on the window, and reads the
 * RTC. -1 if the PIT never counted (then the clock cannot be trusted: a
 * boot error). */
int ig_tsc_calibrate_begin(void);
int ig_tsc_calibrate_end(void);
/* Nanoseconds since the PVH entry. */
uint64_t ig_tsc_now_ns(void);
/* Nanoseconds since 1970 (UTC): kvmclock's, or from the RTC's second at boot. */
uint64_t ig_tsc_wall_ns(void);
/* TSC ticks per second, for the wake-up timer's calibration. */
uint64_t ig_tsc_hz(void);

static inline uint64_t ig_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

#endif
