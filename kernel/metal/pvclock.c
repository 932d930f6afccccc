/* kvmclock's arithmetic over the pvclock pages (pvclock.h): no MSR, no
 * TSC of its own; tsc.c registers the pages and passes the TSC reader. */
#include "pvclock.h"

#define barrier() __asm__ volatile("" ::: "memory")

uint64_t ig_pvclock_scale(uint64_t delta, uint32_t mul, int8_t shift)
{
	if (shift < 0)
		delta >>= -shift;
	else
		delta <<= shift;
	return (uint64_t)(((unsigned __int128)delta * mul) >> 32);
}

uint64_t ig_pvclock_ns_at(const struct ig_pvclock_time_info *ti, uint64_t tsc)
{
	if (tsc >= ti->tsc_timestamp)
		return ti->system_time + ig_pvclock_scale(tsc - ti->tsc_timestamp, ti->tsc_to_system_mul, ti->tsc_shift);
	uint64_t back = ig_pvclock_scale(ti->tsc_timestamp - tsc, ti->tsc_to_system_mul, ti->tsc_shift);
	return back < ti->system_time ? ti->system_time - back : 0;
}

uint64_t ig_pvclock_read(const volatile struct ig_pvclock_time_info *ti, uint64_t (*tsc_now)(void),
			 struct ig_pvclock_time_info *copy)
{
	uint32_t version;
	uint64_t tsc;
	do {
		version = ti->version;
		barrier();
		copy->version = version;
		copy->tsc_timestamp = ti->tsc_timestamp;
		copy->system_time = ti->system_time;
		copy->tsc_to_system_mul = ti->tsc_to_system_mul;
		copy->tsc_shift = ti->tsc_shift;
		copy->flags = ti->flags;
		tsc = tsc_now();
		barrier();
	} while ((version & 1) || version != ti->version);
	return ig_pvclock_ns_at(copy, tsc);
}

uint64_t ig_pvclock_tsc_hz(uint32_t mul, int8_t shift)
{
	if (mul == 0)
		return 0;
	/* ns per tick = mul * 2^shift / 2^32, so hz = 1e9 * 2^(32 - shift) / mul. */
	unsigned __int128 v = (unsigned __int128)1000000000u << 32;
	v = shift >= 0 ? v >> shift : v << -shift;
	return (uint64_t)(v / mul);
}

uint64_t ig_pvclock_wall_base_ns(const volatile struct ig_pvclock_wall_clock *wc)
{
	uint32_t version, sec, nsec;
	do {
		version = wc->version;
		barrier();
		sec = wc->sec;
		nsec = wc->nsec;
		barrier();
	} while ((version & 1) || version != wc->version);
	return (uint64_t)sec * 1000000000u + nsec;
}
