/* A fast per-core pseudo-random source for identifiers (request ids, trace
 * and span ids): splitmix64, seeded once from getrandom when a core starts,
 * so that making an id costs no syscall. Not for keys: TLS has its own. */
#ifndef KERNEL_RNG_H
#define KERNEL_RNG_H

#include <stddef.h>
#include <stdint.h>

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

/* Writes v as 16 lowercase hex digits (no NUL). */
void ig_hex64(char out[16], uint64_t v);

#endif
