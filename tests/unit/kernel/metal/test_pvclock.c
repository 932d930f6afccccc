/* Unit tests of kernel/metal/pvclock: kvmclock's arithmetic on a simulated
 * pvclock page (no hypervisor here): TSC ticks to nanoseconds with a
 * positive and a negative shift, a TSC before the page's timestamp, the
 * TSC rate the page implies, the version-retry read (an odd version, a
 * version that changes under the read), and the wall clock as the wall
 * base plus system time. */
#include "kernel/metal/pvclock.h"
#include "tests/unit/check.h"

/* 2.5 GHz as KVM describes it: 0.4 ns a tick = 0.8 * 2^-1. */
#define MUL_2_5GHZ 3435973837u

static volatile struct ig_pvclock_time_info page;
static int tsc_reads;
static uint64_t tsc_value;
/* The simulated hypervisor: during TSC read number update_at_read (from
 * 1; 0 never) of an ig_pvclock_read it rewrites the page and adds
 * version_step to the version (1 ends an update in progress, 2 is a whole
 * update under the read). */
static int update_at_read, version_step;

static void fill(uint32_t version, uint64_t stamp, uint64_t system, uint32_t mul, int8_t shift)
{
	page.version = version;
	page.tsc_timestamp = stamp;
	page.system_time = system;
	page.tsc_to_system_mul = mul;
	page.tsc_shift = shift;
}

static uint64_t fake_tsc(void)
{
	if (++tsc_reads == update_at_read)
		fill(page.version + (uint32_t)version_step, 1000, 7000000000u, 0x80000000u, 1);
	return tsc_value;
}

int main(void)
{
	CHECK_INT(ig_pvclock_scale(1000, 0x80000000u, 1), 1000, "shift 1, mul 1/2: 1 GHz");
	CHECK_INT(ig_pvclock_scale(1000, 0x80000000u, -1), 250, "a negative shift divides before the multiply");
	CHECK_INT(ig_pvclock_scale(2500000000u, MUL_2_5GHZ, -1), 1000000000, "2.5e9 ticks at 2.5 GHz: one second");
	CHECK_INT(ig_pvclock_scale(123456789, MUL_2_5GHZ, -1), 49382715, "an odd count at 2.5 GHz (the shift drops a bit)");
	CHECK_INT(ig_pvclock_scale(3, 0x80000000u, 2), 6, "shift 2, mul 1/2: 2 ns a tick");
	CHECK_INT(ig_pvclock_scale(UINT64_C(1) << 40, 0xffffffffu, 0), (UINT64_C(1) << 40) - 256,
		  "no overflow in the 64x32 product");

	CHECK_INT(ig_pvclock_tsc_hz(MUL_2_5GHZ, -1), 2499999999u, "the rate of the 2.5 GHz page");
	CHECK_INT(ig_pvclock_tsc_hz(0x80000000u, 1), 1000000000u, "the rate of the 1 GHz page");
	CHECK_INT(ig_pvclock_tsc_hz(0, 0), 0, "an unfilled page has no rate");

	struct ig_pvclock_time_info ti = { .tsc_timestamp = 1000000, .system_time = 5000000000u,
					   .tsc_to_system_mul = 0x80000000u, .tsc_shift = 1 };
	CHECK_INT(ig_pvclock_ns_at(&ti, 1000500), 5000000500u, "after the timestamp: forward");
	CHECK_INT(ig_pvclock_ns_at(&ti, 0), 4999000000u, "before the timestamp (the PVH entry's TSC): back");
	ti.system_time = 10;
	CHECK_INT(ig_pvclock_ns_at(&ti, 0), 0, "back past the VM's start: 0");

	struct ig_pvclock_time_info copy;
	fill(2, 1000, 3000000000u, MUL_2_5GHZ, -1);
	tsc_value = 1000 + 2500000000u;
	tsc_reads = 0;
	CHECK_INT(ig_pvclock_read(&page, fake_tsc, &copy), 4000000000u, "a steady page: system_time + the scaled delta");
	CHECK_INT(tsc_reads, 1, "a steady page is read once");

	fill(3, 0, 1, 1, 0); /* odd: the hypervisor is rewriting it */
	tsc_value = 1000 + 500;
	tsc_reads = 0;
	update_at_read = 2, version_step = 1;
	CHECK_INT(ig_pvclock_read(&page, fake_tsc, &copy), 7000000500u,
		  "an odd version: not used even when steady, the new values used");
	CHECK_INT(tsc_reads, 3, "an odd version read twice (steady, then ending), then the even one");
	CHECK_INT(copy.version, 4, "the copy is the even version's");

	fill(6, 0, 1, 1, 0);
	tsc_reads = 0;
	update_at_read = 1, version_step = 2;
	CHECK_INT(ig_pvclock_read(&page, fake_tsc, &copy), 7000000500u, "a version changed under the read: read again");
	CHECK_INT(tsc_reads, 2, "the changed version cost one retry");
	update_at_read = 0;

	/* 2024-12-05T12:00:00.000000123Z when the VM started; 1.5 s later. */
	static volatile struct ig_pvclock_wall_clock wall = { .version = 2, .sec = 1733400000u, .nsec = 123 };
	fill(2, 0, 1000000000u, 0x80000000u, 1);
	tsc_value = 500000000u;
	uint64_t base = ig_pvclock_wall_base_ns(&wall);
	CHECK_INT(base, UINT64_C(1733400000000000123), "the wall base: sec and nsec");
	CHECK_INT(base + ig_pvclock_read(&page, fake_tsc, &copy), UINT64_C(1733400001500000123),
		  "the wall clock: the base plus system time");
	return check_done();
}
