/* The local APIC: the wake-up timer of the idle halt (one-shot, vector
 * IG_LAPIC_TIMER_VECTOR, calibrated against the TSC), and the masking of
 * the legacy 8259 PICs, whose reset state would deliver their interrupts
 * on the exception vectors. Device interrupts come through the IOAPIC. */
#ifndef KERNEL_METAL_LAPIC_H
#define KERNEL_METAL_LAPIC_H

#include <stdint.h>

#define IG_LAPIC_TIMER_VECTOR 0x20

/* After ig_tsc_init: enables the APIC, masks LINT0 and the PICs, and
 * measures the timer's rate over about 100 us. */
void ig_lapic_init(void);
/* Fires one interrupt after ns (capped at the counter's range: the idle
 * loop re-arms for the rest). 0 disarms. */
void ig_lapic_timer_arm(uint64_t ns);

#endif
