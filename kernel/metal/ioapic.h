/* The I/O APICs of qemu's microvm: 0xfec00000 for GSIs 0-23 (the ISA
 * interrupts: the i8042 on 1) and, with ACPI, a second one at 0xfec10000 for
 * GSIs 24-47 (virtio-mmio transport i on 24 + i). Devices' interrupts only
 * end the idle halt, so every routed one lands on the same vector. */
#ifndef KERNEL_METAL_IOAPIC_H
#define KERNEL_METAL_IOAPIC_H

#include <stdint.h>

/* The vector every device interrupt is delivered on; the IDT's handler for
 * it only signals the LAPIC's end of interrupt. */
#define IG_METAL_IRQ_VECTOR 0x30

#define IG_IOAPIC_GSIS 48 /* GSIs 0..47 across the two IOAPICs */

/* Points a GSI's redirection entry at `vector` on the boot CPU (LAPIC id 0):
 * fixed delivery, physical destination, active high, edge-triggered,
 * unmasked. A GSI no present IOAPIC has is ignored. Edge suits virtio-mmio's
 * level line because the driver acknowledges InterruptStatus before it
 * looks at its rings, so every later event raises a fresh edge. */
void ig_ioapic_route(uint32_t gsi, uint8_t vector);

#endif
