/* ACPI's tables, read for one thing: the MADT's processor local APIC
 * entries (type 0, enabled). The RSDP is where PVH's start info says, or
 * where the ACPI spec says to search for it: on a 16-byte boundary in the
 * BIOS area 0xe0000-0xfffff (qemu's microvm firmware puts it there). The
 * root table is the XSDT (64-bit entries) from revision 2, else the RSDT. */
#include "acpi.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct rsdp {
	char signature[8];
	uint8_t checksum;
	char oem[6];
	uint8_t revision;
	uint32_t rsdt;
	uint32_t length;
	uint64_t xsdt;
	uint8_t xchecksum, reserved[3];
} __attribute__((packed));

struct sdt {
	char signature[4];
	uint32_t length;
	uint8_t revision, checksum;
	char oem[6], table[8];
	uint32_t oem_revision, creator, creator_revision;
} __attribute__((packed));

#define MADT_LOCAL_APIC 0
#define LAPIC_ENABLED 1u

static bool sums_to_zero(const void *p, size_t n)
{
	uint8_t s = 0;
	for (size_t i = 0; i < n; i++)
		s = (uint8_t)(s + ((const uint8_t *)p)[i]);
	return s == 0;
}

static const struct rsdp *find_rsdp(uint64_t hint)
{
	if (hint) {
		const struct rsdp *r = (const void *)(uintptr_t)hint;
		return memcmp(r->signature, "RSD PTR ", 8) == 0 && sums_to_zero(r, 20) ? r : NULL;
	}
	for (uintptr_t a = 0xe0000; a < 0x100000; a += 16) {
		const struct rsdp *r = (const void *)a;
		if (memcmp(r->signature, "RSD PTR ", 8) == 0 && sums_to_zero(r, 20))
			return r;
	}
	return NULL;
}

static int madt_cpus(const struct sdt *madt, uint8_t *apic_ids, int max)
{
	const uint8_t *p = (const uint8_t *)madt + sizeof *madt + 8; /* the LAPIC's address, flags */
	const uint8_t *end = (const uint8_t *)madt + madt->length;
	int n = 0;
	while (p + 2 <= end && p[1] >= 2 && p + p[1] <= end) {
		if (p[0] == MADT_LOCAL_APIC && p[1] >= 8) {
			uint32_t flags;
			memcpy(&flags, p + 4, 4);
			if ((flags & LAPIC_ENABLED) && n < max)
				apic_ids[n++] = p[3];
		}
		p += p[1];
	}
	return n;
}

int ig_acpi_cpus(uint64_t rsdp_paddr, uint8_t *apic_ids, int max)
{
	const struct rsdp *r = find_rsdp(rsdp_paddr);
	if (!r)
		return 0;
	bool x = r->revision >= 2 && r->xsdt;
	const struct sdt *root = (const void *)(uintptr_t)(x ? r->xsdt : r->rsdt);
	if (memcmp(root->signature, x ? "XSDT" : "RSDT", 4) != 0 || !sums_to_zero(root, root->length))
		return 0;
	size_t width = x ? 8 : 4, entries = (root->length - sizeof *root) / width;
	for (size_t i = 0; i < entries; i++) {
		uint64_t at = 0;
		memcpy(&at, (const char *)(root + 1) + i * width, width);
		const struct sdt *t = (const void *)(uintptr_t)at;
		if (memcmp(t->signature, "APIC", 4) == 0 && sums_to_zero(t, t->length))
			return madt_cpus(t, apic_ids, max);
	}
	return 0;
}
