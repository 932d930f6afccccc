/* The source behind getrandom (entropy.h). The CPU's instructions come
 * first (no exit to the hypervisor per read), then virtio-rng. RDRAND and
 * RDSEED may report a transient failure (carry clear): each read is
 * retried a few times, as Intel's guidance asks, and then the call fails. */
#include "kernel/metal/entropy.h"

#include <stdint.h>
#include <string.h>

#include "kernel/metal/cpu.h"
#include "kernel/metal/virtio_rng.h"

#define CPUID1_ECX_RDRAND 30
#define CPUID7_EBX_RDSEED 18
#define RETRIES 32

enum source { NONE, RDRAND, RDSEED, VIRTIO };
static enum source source;

static bool rdrand64(uint64_t *v)
{
	unsigned char ok;
	__asm__ volatile("rdrand %0; setc %1" : "=r"(*v), "=qm"(ok));
	return ok;
}

static bool rdseed64(uint64_t *v)
{
	unsigned char ok;
	__asm__ volatile("rdseed %0; setc %1" : "=r"(*v), "=qm"(ok));
	return ok;
}

static bool cpu_fill(uint8_t *buf, size_t len, bool (*insn)(uint64_t *))
{
	while (len) {
		uint64_t v;
		int i = 0;
		while (!insn(&v))
			if (++i == RETRIES)
				return false;
		size_t n = len < 8 ? len : 8;
		memcpy(buf, &v, n);
		buf += n;
		len -= n;
	}
	return true;
}

const char *ig_entropy_init(const char *cmdline)
{
	uint64_t probe;
	if ((ig_cpuid(1, 0).c >> CPUID1_ECX_RDRAND & 1) && cpu_fill((uint8_t *)&probe, sizeof probe, rdrand64))
		return source = RDRAND, "rdrand";
	if (ig_cpuid(0, 0).a >= 7 && (ig_cpuid(7, 0).b >> CPUID7_EBX_RDSEED & 1) &&
	    cpu_fill((uint8_t *)&probe, sizeof probe, rdseed64))
		return source = RDSEED, "rdseed";
	if (ig_virtio_rng_init(cmdline) && ig_virtio_rng_read(&probe, sizeof probe))
		return source = VIRTIO, "virtio-rng";
	return source = NONE, "none";
}

bool ig_entropy_fill(void *buf, size_t len)
{
	switch (source) {
	case RDRAND: return cpu_fill(buf, len, rdrand64);
	case RDSEED: return cpu_fill(buf, len, rdseed64);
	case VIRTIO: return ig_virtio_rng_read(buf, len);
	case NONE: break;
	}
	return false;
}
