/* Unit tests of kernel/metal/acpi: the CPUs of a MADT built here as qemu's
 * firmware lays the tables out (an RSDP of revision 2, its XSDT naming a
 * FADT and the MADT), read through the RSDP's address as PVH's start info
 * gives it: the enabled local APICs counted, a disabled one and the other
 * entries (an IOAPIC) skipped, the count capped by the caller's room, and
 * tables whose signature or checksum is wrong refused (no CPU listed). */
#include "kernel/metal/acpi.h"
#include "tests/unit/check.h"

#include <stdint.h>

struct __attribute__((packed)) header {
	char signature[4];
	uint32_t length;
	uint8_t revision, checksum;
	char oem[6], table[8];
	uint32_t oem_revision, creator, creator_revision;
};

static struct __attribute__((packed)) {
	char signature[8];
	uint8_t checksum;
	char oem[6];
	uint8_t revision;
	uint32_t rsdt, length;
	uint64_t xsdt;
	uint8_t xchecksum, reserved[3];
} rsdp;
static struct __attribute__((packed)) {
	struct header h;
	uint64_t entry[2];
} xsdt;
static struct header fadt;
static struct __attribute__((packed)) {
	struct header h;
	uint32_t lapic_address, flags;
	uint8_t entries[4 * 8 + 12];
} madt;

static uint8_t sum(const void *p, size_t n)
{
	uint8_t s = 0;
	for (size_t i = 0; i < n; i++)
		s = (uint8_t)(s + ((const uint8_t *)p)[i]);
	return s;
}

static void seal(struct header *h)
{
	h->checksum = 0;
	h->checksum = (uint8_t)-sum(h, h->length);
}

static void lapic(uint8_t *e, uint8_t apic_id, uint32_t flags)
{
	e[0] = 0;
	e[1] = 8;
	e[2] = apic_id; /* the processor's ACPI ID */
	e[3] = apic_id;
	memcpy(e + 4, &flags, 4);
}

static void build(void)
{
	memcpy(madt.h.signature, "APIC", 4);
	madt.h.length = sizeof madt;
	lapic(madt.entries, 0, 1);
	lapic(madt.entries + 8, 1, 1);
	lapic(madt.entries + 16, 2, 0); /* disabled */
	lapic(madt.entries + 24, 5, 1);
	madt.entries[32] = 1; /* an IOAPIC: id, reserved, address, GSI base */
	madt.entries[33] = 12;
	seal(&madt.h);
	memcpy(fadt.signature, "FACP", 4);
	fadt.length = sizeof fadt;
	seal(&fadt);
	memcpy(xsdt.h.signature, "XSDT", 4);
	xsdt.h.length = sizeof xsdt;
	xsdt.entry[0] = (uint64_t)(uintptr_t)&fadt;
	xsdt.entry[1] = (uint64_t)(uintptr_t)&madt;
	seal(&xsdt.h);
	memcpy(rsdp.signature, "RSD PTR ", 8);
	rsdp.revision = 2;
	rsdp.length = sizeof rsdp;
	rsdp.xsdt = (uint64_t)(uintptr_t)&xsdt;
	rsdp.checksum = 0;
	rsdp.checksum = (uint8_t)-sum(&rsdp, 20);
}

int main(void)
{
	build();
	uint64_t at = (uint64_t)(uintptr_t)&rsdp;
	uint8_t ids[8] = { 0 };
	CHECK_INT(ig_acpi_cpus(at, ids, 8), 3, "three enabled local APICs, the disabled one and the IOAPIC skipped");
	CHECK(ids[0] == 0 && ids[1] == 1 && ids[2] == 5, "their APIC IDs, in the table's order");
	CHECK_INT(ig_acpi_cpus(at, ids, 2), 2, "no more than the caller has room for");

	madt.h.checksum++;
	CHECK_INT(ig_acpi_cpus(at, ids, 8), 0, "a MADT whose checksum fails lists no CPU");
	madt.h.checksum--;
	xsdt.h.checksum++;
	CHECK_INT(ig_acpi_cpus(at, ids, 8), 0, "nor one under an XSDT whose checksum fails");
	xsdt.h.checksum--;
	rsdp.signature[0] = 'X';
	CHECK_INT(ig_acpi_cpus(at, ids, 8), 0, "nor an RSDP without its signature");
	rsdp.signature[0] = 'R';
	madt.entries[9] = 0; /* an entry of length 0 would never end */
	seal(&madt.h);
	CHECK(ig_acpi_cpus(at, ids, 8) == 1, "an entry of length 0 ends the walk, after the CPUs before it");
	return check_done();
}
