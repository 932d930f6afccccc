/* A fast per-core pseudo-random source for identifiers (request ids, trace
 * and span ids): splitmix64, seeded once from getrandom when a core starts,
 * so that making an id costs no syscall. Not for keys: TLS has its own. */
#ifndef KERNEL_RNG_H
#define KERNEL_RNG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ig_rng {
	uint64_t state;
};

/* Seeds r from the kernel's entropy (getrandom, not blocking); falls back
 * to the clock and r's address, which keeps ids distinct if not secret. */
void ig_rng_seed(struct ig_rng *r);

static inline uint64_t ig_rng_next(struct ig_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Eight nibbles of x, one per byte, the most significant in the highest
 * byte, then made digits: a dozen operations instead of a loop of eight
 * (ids are made for every request). */
static inline uint64_t ig_hex32_bytes(uint64_t x)
{
	x = (x | x << 16) & 0x0000ffff0000ffffu;
	x = (x | x << 8) & 0x00ff00ff00ff00ffu;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0fu;
	uint64_t letters = ((x + 0x0606060606060606u) >> 4) & 0x0101010101010101u; /* 1 where >= 10 */
	return __builtin_bswap64(x + 0x3030303030303030u + letters * ('a' - '0' - 10));
}

/* Writes v as 16 lowercase hex digits (no NUL). */
static inline void ig_hex64(char out[16], uint64_t v)
{
	uint64_t hi = ig_hex32_bytes(v >> 32), lo = ig_hex32_bytes(v & 0xffffffffu);
	memcpy(out, &hi, 8);
	memcpy(out + 8, &lo, 8);
}

#endif
