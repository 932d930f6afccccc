/* The choice of a Pub/Sub provider (provider.h): read once from
 * INGOT_PUBSUB_URL after the settings' parse, and the start's entry
 * points that hand over to it. Referenced by publish.c, so linked only
 * into a binary whose document declares topics. */
#include "provider.h"

#include <string.h>

static bool is_nats(const char *url)
{
	return url && (strncmp(url, "nats://", 7) == 0 || strncmp(url, "tls://", 6) == 0);
}

const struct ig_pubsub_provider *ig_pubsub_provider(void)
{
	return is_nats(ig_pubsub_config.url) ? &ig_pubsub_nats_provider : &ig_pubsub_pg_provider;
}

static bool prepare(const struct ig_pubsub_table *table, bool publish_only)
{
	return ig_pubsub_provider()->prepare(table, publish_only);
}

static void core_start(struct ig_loop *loop, int core_count)
{
	ig_pubsub_provider()->core_start(loop, core_count);
}

const struct ig_pubsub_start_ops ig_pubsub_start_ops = {
	.prepare = prepare,
	.core_start = core_start,
};
