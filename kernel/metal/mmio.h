/* Memory-mapped device registers for the bare-metal platform (virtio-mmio,
 * IOAPIC, LAPIC). Identity mapping: a register's physical address is its
 * pointer. Each access is one volatile load or store of exactly its width
 * (virtio-mmio's control registers take only 32-bit accesses, its config
 * space's byte fields only 8-bit ones), fenced by compiler barriers so that
 * ring memory written before a register store is not reordered past it;
 * x86 keeps stores in order, and MMIO is mapped uncached. */
#ifndef KERNEL_METAL_MMIO_H
#define KERNEL_METAL_MMIO_H

#include <stdint.h>

/* Stops the compiler (not the CPU) from moving memory accesses across it. */
#define ig_compiler_barrier() __asm__ volatile("" ::: "memory")

static inline uint32_t ig_mmio_read32(uintptr_t addr)
{
	ig_compiler_barrier();
	uint32_t v = *(volatile const uint32_t *)addr;
	ig_compiler_barrier();
	return v;
}

static inline void ig_mmio_write32(uintptr_t addr, uint32_t v)
{
	ig_compiler_barrier();
	*(volatile uint32_t *)addr = v;
	ig_compiler_barrier();
}

static inline uint8_t ig_mmio_read8(uintptr_t addr)
{
	ig_compiler_barrier();
	uint8_t v = *(volatile const uint8_t *)addr;
	ig_compiler_barrier();
	return v;
}

#endif
