/* The clocks: kvmclock where the hypervisor offers it (KVM, Firecracker,
 * which has no CMOS RTC), else TSC calibration against PIT channel 0 (read
 * back with latch commands, so no port 0x61 gate is needed, which microvm
 * may lack) and the CMOS RTC. ns = ticks * mult >> 32, with mult from the
 * calibration; kvmclock's arithmetic is pvclock.c's. */
#include "tsc.h"
#include "cpu.h"
#include "io.h"
#include "pvclock.h"

#include <stdbool.h>
#include <string.h>

#define PIT_HZ 1193182u
#define PIT_CH0 0x40
#define PIT_CMD 0x43
#define CALIBRATION_TICKS 2386u /* 2 ms */
#define CMOS_INDEX 0x70
#define CMOS_DATA 0x71
#define KVM_CPUID_SIGNATURE 0x40000000u
#define KVM_CPUID_FEATURES 0x40000001u
#define KVM_FEATURE_CLOCKSOURCE2 3
#define MSR_KVM_WALL_CLOCK_NEW 0x4b564d00u
#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01u

extern uint64_t ig_metal_entry_tsc;

static uint64_t mult; /* ns per tick, 32.32 fixed point */
static uint64_t hz;
static uint64_t wall_at_boot_ns; /* wall time at the PVH entry */

/* kvmclock: the boot CPU's time page (one per CPU, as the ABI has it; the
 * platform runs one) and the wall clock KVM writes once on request. */
static bool kvmclock;
static struct ig_pvclock_time_info kvm_time __attribute__((aligned(64)));
static struct ig_pvclock_wall_clock kvm_wall __attribute__((aligned(16)));
static uint64_t kvm_entry_ns; /* system_time at the PVH entry */

static uint64_t rdtsc_now(void)
{
	return ig_rdtsc();
}

static uint16_t pit_read(void)
{
	outb(PIT_CMD, 0x00); /* latch channel 0 */
	uint8_t lo = inb(PIT_CH0), hi = inb(PIT_CH0);
	return (uint16_t)(hi << 8 | lo);
}

uint64_t ig_tsc_now_ns(void)
{
	if (kvmclock) {
		struct ig_pvclock_time_info copy;
		return ig_pvclock_read(&kvm_time, rdtsc_now, &copy) - kvm_entry_ns;
	}
	return (uint64_t)(((unsigned __int128)(ig_rdtsc() - ig_metal_entry_tsc) * mult) >> 32);
}

uint64_t ig_tsc_wall_ns(void)
{
	return wall_at_boot_ns + ig_tsc_now_ns();
}

uint64_t ig_tsc_hz(void)
{
	return hz;
}

static uint8_t cmos(uint8_t reg)
{
	outb(CMOS_INDEX, reg);
	return inb(CMOS_DATA);
}

static int from_bcd(uint8_t v, bool binary)
{
	return binary ? v : (v >> 4) * 10 + (v & 0xf);
}

/* Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (unsigned)((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1);
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* Seconds since 1970 from the RTC: read while no update is under way, and
 * again until two reads agree. */
static int64_t rtc_seconds(void)
{
	uint8_t r[7], prev[7] = { 0xff };
	static const uint8_t regs[7] = { 0x00, 0x02, 0x04, 0x07, 0x08, 0x09, 0x32 };
	for (int tries = 0; tries < 8; tries++) {
		while (cmos(0x0a) & 0x80)
			;
		for (int i = 0; i < 7; i++)
			r[i] = cmos(regs[i]);
		bool same = true;
		for (int i = 0; i < 7; i++)
			same = same && r[i] == prev[i];
		if (same)
			break;
		for (int i = 0; i < 7; i++)
			prev[i] = r[i];
	}
	uint8_t b = cmos(0x0b);
	bool binary = b & 0x04, h24 = b & 0x02;
	int hour = from_bcd(r[2] & 0x7f, binary);
	if (!h24 && (r[2] & 0x80))
		hour = (hour % 12) + 12;
	else if (!h24 && hour == 12)
		hour = 0;
	int century = from_bcd(r[6], binary);
	int year = (century >= 19 && century <= 99 ? century : 20) * 100 + from_bcd(r[5], binary);
	int64_t days = days_from_civil(year, from_bcd(r[4], binary), from_bcd(r[3], binary));
	return days * 86400 + hour * 3600 + from_bcd(r[1], binary) * 60 + from_bcd(r[0], binary);
}

/* KVM's signature leaf says "KVMKVMKVM" and its features leaf offers the
 * new clocksource MSRs: register the page (bit 0 enables it; memory is
 * identity-mapped, so its address is physical) and fetch the wall clock. */
static bool kvmclock_init(void)
{
	struct ig_cpuid sig = ig_cpuid(KVM_CPUID_SIGNATURE, 0);
	char name[12];
	memcpy(name, &sig.b, 4);
	memcpy(name + 4, &sig.c, 4);
	memcpy(name + 8, &sig.d, 4);
	if (memcmp(name, "KVMKVMKVM\0\0\0", 12) != 0 || sig.a < KVM_CPUID_FEATURES)
		return false;
	if (!(ig_cpuid(KVM_CPUID_FEATURES, 0).a >> KVM_FEATURE_CLOCKSOURCE2 & 1))
		return false;
	ig_wrmsr(MSR_KVM_SYSTEM_TIME_NEW, (uintptr_t)&kvm_time | 1);
	ig_wrmsr(MSR_KVM_WALL_CLOCK_NEW, (uintptr_t)&kvm_wall);
	struct ig_pvclock_time_info copy;
	ig_pvclock_read(&kvm_time, rdtsc_now, &copy);
	hz = ig_pvclock_tsc_hz(copy.tsc_to_system_mul, copy.tsc_shift);
	if (hz == 0)
		return false;
	kvm_entry_ns = ig_pvclock_ns_at(&copy, ig_metal_entry_tsc);
	wall_at_boot_ns = ig_pvclock_wall_base_ns(&kvm_wall) + kvm_entry_ns;
	kvmclock = true;
	return true;
}

/* The calibration's start: a change of the PIT's count (so the window
 * begins on a tick) and the TSC then. */
static uint16_t pit_start;
static uint64_t tsc_start;

int ig_tsc_calibrate_begin(void)
{
	if (kvmclock_init())
		return 0;
	/* Mode 0 from 0xffff counts down once; interrupts are masked. */
	outb(PIT_CMD, 0x30);
	outb(PIT_CH0, 0xff);
	outb(PIT_CH0, 0xff);
	uint16_t c0 = pit_read(), c;
	uint64_t spins = 0;
	while ((c = pit_read()) == c0)
		if (++spins > 10000000)
			return -1;
	tsc_start = ig_rdtsc();
	pit_start = c;
	return 0;
}

int ig_tsc_calibrate_end(void)
{
	if (kvmclock)
		return 0;
	uint16_t c;
	uint64_t spins = 0;
	while ((uint16_t)(pit_start - (c = pit_read())) < CALIBRATION_TICKS)
		if (++spins > 100000000)
			return -1;
	uint64_t t1 = ig_rdtsc();
	uint64_t ticks = (uint16_t)(pit_start - c);
	hz = (t1 - tsc_start) * PIT_HZ / ticks;
	if (hz == 0)
		return -1;
	mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / hz);
	int64_t secs = rtc_seconds();
	wall_at_boot_ns = (uint64_t)secs * 1000000000u - ig_tsc_now_ns();
	return 0;
}
