/* I/O APIC redirection entries, through the indirect IOREGSEL/IOWIN pair
 * (Intel 82093AA datasheet, section 3): register 1 holds the number of
 * entries, entry n is registers 0x10 + 2n (low) and 0x11 + 2n (high). */
#include "kernel/metal/ioapic.h"

#include "kernel/metal/mmio.h"

#define IOAPIC0_BASE 0xfec00000u
#define IOAPIC1_BASE 0xfec10000u
#define IOAPIC_PINS 24 /* GSIs per IOAPIC on microvm */
#define IOREGSEL 0x00
#define IOWIN 0x10
#define REG_VERSION 0x01
#define REG_REDIRECTION 0x10

/* Low word: vector in bits 0-7; delivery mode (8-10), destination mode
 * (11), polarity (13) and trigger mode (15) all 0 mean fixed, physical,
 * active high, edge; bit 16 masks. High word: destination in bits 24-31. */
#define ENTRY_MASKED (1u << 16)
#define BSP_APIC_ID 0u

static uint32_t ioapic_read(uintptr_t base, uint32_t reg)
{
	ig_mmio_write32(base + IOREGSEL, reg);
	return ig_mmio_read32(base + IOWIN);
}

static void ioapic_write(uintptr_t base, uint32_t reg, uint32_t v)
{
	ig_mmio_write32(base + IOREGSEL, reg);
	ig_mmio_write32(base + IOWIN, v);
}

void ig_ioapic_route(uint32_t gsi, uint8_t vector)
{
	if (gsi >= IG_IOAPIC_GSIS)
		return;
	uintptr_t base = gsi < IOAPIC_PINS ? IOAPIC0_BASE : IOAPIC1_BASE;
	uint32_t pin = gsi % IOAPIC_PINS;
	/* Bits 16-23 of the version register: the highest entry. An absent
	 * IOAPIC reads as all ones, which this also refuses. */
	uint32_t version = ioapic_read(base, REG_VERSION);
	if (version == 0xffffffffu || pin > ((version >> 16) & 0xff))
		return;
	uint32_t reg = REG_REDIRECTION + 2 * pin;
	/* Masked while half-written, destination first, unmasked last. */
	ioapic_write(base, reg, ENTRY_MASKED);
	ioapic_write(base, reg + 1, BSP_APIC_ID << 24);
	ioapic_write(base, reg, vector);
}
