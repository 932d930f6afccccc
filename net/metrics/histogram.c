/* Histograms of one core: the two sets of bounds the server uses and the
 * observation, a scan of the bounds and three counter adds. Observations
 * are integers (millionths of the unit) so that the hot path does one
 * division and no formatting. */
#include "metrics.h"

const struct ig_histogram_bounds ig_duration_bounds = {
	19,
	{ 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5,
	  5, 7.5, 10 },
};

const struct ig_histogram_bounds ig_size_bounds = {
	15,
	{ 0, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456,
	  1073741824 },
};

void ig_histogram_observe(struct ig_histogram *h, const struct ig_histogram_bounds *b, uint64_t value_micro)
{
	/* Correctly rounded, so an integer number of microseconds equal to a
	   bound (100 us and 0.0001) compares equal to the bound's literal. */
	double v = (double)value_micro / 1e6;
	uint32_t i = 0;
	while (i < b->n && v > b->le[i])
		i++;
	ig_counter_add(&h->bucket[i], 1);
	ig_counter_add(&h->sum_micro, value_micro);
	ig_counter_add(&h->count, 1);
}

void ig_histogram_sum_into(struct ig_histogram *sum, const struct ig_histogram *src)
{
	/* sum is the scrape's own: plain additions through the same type. */
	ig_counter_set(&sum->count, ig_counter_get(&sum->count) + ig_counter_get(&src->count));
	ig_counter_set(&sum->sum_micro, ig_counter_get(&sum->sum_micro) + ig_counter_get(&src->sum_micro));
	for (size_t i = 0; i < IG_HISTOGRAM_MAX_BUCKETS; i++)
		ig_counter_set(&sum->bucket[i], ig_counter_get(&sum->bucket[i]) + ig_counter_get(&src->bucket[i]));
}
