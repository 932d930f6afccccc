/* Local APIC registers at 0xfee00000 (mapped uncached by boot.S). The timer
 * runs at the bus rate divided by 1; its rate is measured, not assumed. */
#include "lapic.h"
#include "io.h"
#include "mmio.h"
#include "tsc.h"

#define LAPIC 0xfee00000u
#define LAPIC_ID 0x20
#define LAPIC_SVR 0xf0
#define LAPIC_ICR_LOW 0x300
#define LAPIC_ICR_HIGH 0x310
#define ICR_PENDING 0x1000u
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_LINT0 0x350
#define LAPIC_TIMER_INIT 0x380
#define LAPIC_TIMER_CUR 0x390
#define LAPIC_TIMER_DIV 0x3e0
#define LVT_MASKED 0x10000u
#define SPURIOUS_VECTOR 0xff

static uint64_t ticks_per_ms;

static void wr(uint32_t reg, uint32_t v)
{
	ig_mmio_write32(LAPIC + reg, v);
}

static uint32_t rd(uint32_t reg)
{
	return ig_mmio_read32(LAPIC + reg);
}

/* Remapped to 0x20-0x2f (off the exception vectors), then all masked. */
static void mask_pics(void)
{
	outb(0x20, 0x11);
	outb(0xa0, 0x11);
	outb(0x21, 0x20);
	outb(0xa1, 0x28);
	outb(0x21, 0x04);
	outb(0xa1, 0x02);
	outb(0x21, 0x01);
	outb(0xa1, 0x01);
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

void ig_lapic_init(void)
{
	mask_pics();
	wr(LAPIC_SVR, 0x100 | SPURIOUS_VECTOR);
	wr(LAPIC_LVT_LINT0, LVT_MASKED);
	wr(LAPIC_TIMER_DIV, 0x0b); /* divide by 1 */
	wr(LAPIC_LVT_TIMER, LVT_MASKED | IG_LAPIC_TIMER_VECTOR);
	wr(LAPIC_TIMER_INIT, 0xffffffffu);
	uint64_t t0 = ig_rdtsc(), window = ig_tsc_hz() / 10000; /* 100 us */
	while (ig_rdtsc() - t0 < window)
		;
	uint32_t left = rd(LAPIC_TIMER_CUR);
	uint64_t elapsed = ig_rdtsc() - t0;
	wr(LAPIC_TIMER_INIT, 0);
	uint64_t counted = 0xffffffffu - left;
	ticks_per_ms = elapsed ? counted * (ig_tsc_hz() / 1000) / elapsed : 0;
	if (!ticks_per_ms)
		ticks_per_ms = 1;
	wr(LAPIC_LVT_TIMER, IG_LAPIC_TIMER_VECTOR); /* one-shot, unmasked */
}

/* Another CPU's APIC: the boot CPU measured the timer's rate, which is
 * the bus's, the same for every CPU. */
void ig_lapic_init_ap(void)
{
	wr(LAPIC_SVR, 0x100 | SPURIOUS_VECTOR);
	wr(LAPIC_LVT_LINT0, LVT_MASKED);
	wr(LAPIC_TIMER_DIV, 0x0b);
	wr(LAPIC_LVT_TIMER, IG_LAPIC_TIMER_VECTOR);
}

uint8_t ig_lapic_id(void)
{
	return (uint8_t)(rd(LAPIC_ID) >> 24);
}

void ig_lapic_send(uint8_t apic_id, uint32_t command)
{
	while (rd(LAPIC_ICR_LOW) & ICR_PENDING)
		__asm__ volatile("pause");
	wr(LAPIC_ICR_HIGH, (uint32_t)apic_id << 24);
	wr(LAPIC_ICR_LOW, command);
}

void ig_lapic_timer_arm(uint64_t ns)
{
	if (ns == 0) {
		wr(LAPIC_TIMER_INIT, 0);
		return;
	}
	unsigned __int128 count = (unsigned __int128)ns * ticks_per_ms / 1000000u;
	wr(LAPIC_TIMER_INIT, count == 0 ? 1 : count > 0xffffffffu ? 0xffffffffu : (uint32_t)count);
}
