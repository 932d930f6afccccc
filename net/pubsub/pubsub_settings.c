/* Pub/Sub's rows of the settings table: the provider and whether this
 * process runs its consumers. Linked with the provider's choice
 * (provider.c reads it), so only into a binary whose document declares
 * topics; the start lists it weakly (net/start.c). */
#include "consumer.h"
#include "kernel/runtime/config.h"

#include <stdio.h>
#include <string.h>

struct ig_pubsub_config ig_pubsub_config;
static const struct ig_pubsub_config pubsub_defaults = { .url = "", .consume = true };

/* A provider this binary knows, else the start stops (exit 2): a typo must
 * not fall back to PostgreSQL silently. The NATS URL's own parse runs when
 * its clients start (net/nats/url.c). */
static const char *check_pubsub(char *err, size_t errlen)
{
	const char *u = ig_pubsub_config.url;
	if (!u[0] || strcmp(u, "postgres") == 0 || strncmp(u, "nats://", 7) == 0 || strncmp(u, "tls://", 6) == 0)
		return NULL;
	snprintf(err, errlen, "INGOT_PUBSUB_URL: not \"postgres\", nats:// nor tls://");
	return err;
}

static const struct ig_option pubsub_rows[] = {
	{ "INGOT_PUBSUB_URL", IG_OPT_SECRET, &ig_pubsub_config.url, 0, 0,
	  IG_HELP("the Pub/Sub provider: postgres (or not set: PostgreSQL, with DATABASE_URL), or NATS JetStream "
		  "at nats://[token@|user:password@]host[:port] (tls:// to require TLS; a comma-separated list for "
		  "a cluster's servers: the streams are then replicated on that many, at most 3)") },
	{ "INGOT_PUBSUB_CONSUME", IG_OPT_BOOL, &ig_pubsub_config.consume, 0, 1,
	  IG_HELP("run this process's Pub/Sub consumers (the subscriptions' handlers) when a provider is "
		  "configured; false: it publishes only") },
};

const struct ig_settings ig_pubsub_settings = {
	.part = "pubsub", .opts = pubsub_rows, .count = IG_COUNTOF(pubsub_rows), .check = check_pubsub,
	.values = &ig_pubsub_config, .defaults = &pubsub_defaults, .size = sizeof ig_pubsub_config,
};
