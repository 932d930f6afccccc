/* The CPU's own registers for the bare-metal platform: CPUID and the
 * model-specific registers (the clock's kvmclock MSRs, the entropy's
 * feature bits). Single instructions; no state. */
#ifndef KERNEL_METAL_CPU_H
#define KERNEL_METAL_CPU_H

#include <stdint.h>

struct ig_cpuid {
	uint32_t a, b, c, d;
};

static inline struct ig_cpuid ig_cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct ig_cpuid r;
	__asm__ volatile("cpuid" : "=a"(r.a), "=b"(r.b), "=c"(r.c), "=d"(r.d) : "a"(leaf), "c"(subleaf));
	return r;
}

static inline void ig_wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

#endif
