/* Seeding the per-core id generator (rng.h): one getrandom per core
 * start, none per request. */
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
