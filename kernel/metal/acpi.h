/* The firmware's list of CPUs: ACPI's MADT. */
#ifndef KERNEL_METAL_ACPI_H
#define KERNEL_METAL_ACPI_H

#include <stdint.h>

/* The local APIC IDs of the enabled CPUs the MADT lists, at most max, into
 * apic_ids; returns their number, 0 when there is no RSDP (rsdp_paddr, from
 * PVH's start info, else the BIOS area's search), no MADT, or a checksum
 * that fails. Reads memory only. */
int ig_acpi_cpus(uint64_t rsdp_paddr, uint8_t *apic_ids, int max);

#endif
