/* x86 port I/O for the bare-metal platform: the legacy devices (serial port,
 * PIT, CMOS, i8042, isa-debug-exit) live in the I/O space, not in memory.
 * Each access is a single in/out instruction; the "memory" clobber keeps the
 * compiler from moving memory accesses across a device access. */
#ifndef KERNEL_METAL_IO_H
#define KERNEL_METAL_IO_H

#include <stdint.h>

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;
	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}

static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;
	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

#endif
