/* The local APIC: the wake-up timer of the idle halt (one-shot, vector
 * IG_LAPIC_TIMER_VECTOR, calibrated against the TSC), and the masking of
 * the legacy 8259 PICs, whose reset state would deliver their interrupts
 * on the exception vectors. Device interrupts come through the IOAPIC. */
#ifndef KERNEL_METAL_LAPIC_H
#define KERNEL_METAL_LAPIC_H

#include <stdint.h>

#define IG_LAPIC_TIMER_VECTOR 0x20

/* After ig_tsc_calibrate_end: enables the APIC, masks LINT0 and the PICs, and
 * measures the timer's rate over about 100 us. */
void ig_lapic_init(void);
/* On each other CPU: enables its APIC with the boot CPU's measured rate. */
void ig_lapic_init_ap(void);
/* This CPU's local APIC ID. */
uint8_t ig_lapic_id(void);
/* An interrupt command to the CPU apic_id: a fixed vector (IG_LAPIC_FIXED
 * | vector: the wake IPI), IG_LAPIC_INIT, or IG_LAPIC_STARTUP | page (the
 * start IPI: real mode at page << 12). */
#define IG_LAPIC_FIXED 0x4000u
#define IG_LAPIC_INIT 0x4500u
#define IG_LAPIC_STARTUP 0x4600u
void ig_lapic_send(uint8_t apic_id, uint32_t command);
/* Fires one interrupt after ns (capped at the counter's range: the idle
 * loop re-arms for the rest). 0 disarms. */
void ig_lapic_timer_arm(uint64_t ns);

#endif
