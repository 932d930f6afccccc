/* Pub/Sub's counters: each core writes its own row (relaxed stores, no
 * read-modify-write: net/metrics/metrics.h), the scrape on core 0 sums
 * the rows of every core. */
#include "pubsub_metrics.h"
#include "kernel/process/cores.h"

static ig_counter published[IG_MAX_CORES][IG_PUBSUB_METRIC_TOPICS + 1]; /* the last: "_OTHER" */

static size_t topic_slot(const struct ig_pubsub_topic *t)
{
	size_t i = (size_t)(t - ig_api_pubsub.topics);
	return i < IG_PUBSUB_METRIC_TOPICS ? i : IG_PUBSUB_METRIC_TOPICS;
}

void ig_pubsub_count_published(const ig_ctx *ctx, const struct ig_pubsub_topic *t)
{
	uint32_t core = ig_core_index(ctx);
	if (core < IG_MAX_CORES)
		ig_counter_add(&published[core][topic_slot(t)], 1);
}

static uint64_t summed(size_t slot)
{
	uint64_t n = 0;
	for (size_t c = 0; c < IG_MAX_CORES; c++)
		n += ig_counter_get(&published[c][slot]);
	return n;
}

static void write_pubsub(struct ig_expo *e, void *arg)
{
	(void)arg;
	if (!&ig_api_pubsub)
		return;
	ig_expo_family(e, "ingot_pubsub_published_total", "counter", "Messages stored by the provider, by topic.");
	size_t n = ig_api_pubsub.ntopics;
	for (size_t i = 0; i < n && i < IG_PUBSUB_METRIC_TOPICS; i++) {
		const char *name = ig_api_pubsub.topics[i].name;
		struct ig_label l = { "topic", name, strlen(name) };
		ig_expo_sample(e, "ingot_pubsub_published_total", &l, 1, (double)summed(i));
	}
	if (n > IG_PUBSUB_METRIC_TOPICS) {
		struct ig_label l = { "topic", "_OTHER", 6 };
		ig_expo_sample(e, "ingot_pubsub_published_total", &l, 1, (double)summed(IG_PUBSUB_METRIC_TOPICS));
	}
}

struct ig_metrics_source ig_pubsub_metrics_source = { .write = write_pubsub };
