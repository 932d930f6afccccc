/* Seeding the per-core id generator (rng.h) and the hex form ids are
 * written in. One getrandom per core start, none per request. */
#include "rng.h"
#include "clock.h"

#include <sys/random.h>

void ig_rng_seed(struct ig_rng *r)
{
	uint64_t seed;
	if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed)
		seed = ig_monotonic_us() ^ (uint64_t)(uintptr_t)r;
	r->state = seed;
}

void ig_hex64(char out[16], uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 15; i >= 0; i--, v >>= 4)
		out[i] = digits[v & 15];
}
