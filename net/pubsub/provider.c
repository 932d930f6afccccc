/* The choice of a Pub/Sub provider (provider.h): read once from
 * INGOT_PUBSUB_URL after the settings' parse. Referenced by publish.c,
 * so linked only into a binary whose document declares topics. */
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
