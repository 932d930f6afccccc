/* Seeding the per-core id generator (rng.h) and the hex form ids are
 * written in. One getrandom per core start, none per request. */
#include "rng.h"
#include "clock.h"

#include <string.h>
#include <sys/random.h>

void ig_rng_seed(struct ig_rng *r)
{
	uint64_t seed;
	if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed)
		seed = ig_monotonic_us() ^ (uint64_t)(uintptr_t)r;
	r->state = seed;
}

/* Eight nibbles of x, one per byte, the most significant in the highest
 * byte, then made digits: a dozen operations instead of a loop of eight
 * (ids are made for every request). */
static uint64_t hex32(uint64_t x)
{
	x = (x | x << 16) & 0x0000ffff0000ffffu;
	x = (x | x << 8) & 0x00ff00ff00ff00ffu;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0fu;
	uint64_t letters = ((x + 0x0606060606060606u) >> 4) & 0x0101010101010101u; /* 1 where >= 10 */
	return __builtin_bswap64(x + 0x3030303030303030u + letters * ('a' - '0' - 10));
}

void ig_hex64(char out[16], uint64_t v)
{
	uint64_t hi = hex32(v >> 32), lo = hex32(v & 0xffffffffu);
	memcpy(out, &hi, 8);
	memcpy(out + 8, &lo, 8);
}
