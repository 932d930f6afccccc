/* Histograms of one core: the two sets of bounds the server uses, in
 * millionths of their unit like the observations (metrics.h), and the
 * summing of one series over the cores for a scrape. */
#include "metrics.h"

const struct ig_histogram_bounds ig_duration_bounds = {
	19,
	{ 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 75000, 100000, 250000, 500000, 750000, 1000000,
	  2500000, 5000000, 7500000, 10000000 },
};

#define BYTES 1000000ull /* one byte, in millionths */
const struct ig_histogram_bounds ig_size_bounds = {
	IG_SIZE_BOUNDS,
	{ 0, 16 * BYTES, 64 * BYTES, 256 * BYTES, 1024 * BYTES, 4096 * BYTES, 16384 * BYTES, 65536 * BYTES,
	  262144 * BYTES, 1048576 * BYTES, 4194304 * BYTES, 16777216 * BYTES, 67108864 * BYTES, 268435456 * BYTES,
	  1073741824 * BYTES },
};

void ig_histogram_sum_into(struct ig_histogram *sum, const struct ig_histogram *src)
{
	/* sum is the scrape's own: plain additions through the same type. */
	ig_counter_set(&sum->count, ig_counter_get(&sum->count) + ig_counter_get(&src->count));
	ig_counter_set(&sum->sum_micro, ig_counter_get(&sum->sum_micro) + ig_counter_get(&src->sum_micro));
	for (size_t i = 0; i < IG_HISTOGRAM_MAX_BUCKETS; i++)
		ig_counter_set(&sum->bucket[i], ig_counter_get(&sum->bucket[i]) + ig_counter_get(&src->bucket[i]));
}
