/* Pub/Sub's row of the settings table: whether this process runs its
 * consumers. Linked with them (consumer.c reads it), so only into a binary
 * whose document declares subscriptions; the start lists it weakly
 * (net/start.c). */
#include "consumer.h"
#include "kernel/runtime/config.h"

struct ig_pubsub_config ig_pubsub_config;
static const struct ig_pubsub_config pubsub_defaults = { .consume = true };

static const struct ig_option pubsub_rows[] = {
	{ "INGOT_PUBSUB_CONSUME", IG_OPT_BOOL, &ig_pubsub_config.consume, 0, 1,
	  IG_HELP("run this process's Pub/Sub consumers (the subscriptions' handlers) when a database is "
		  "configured; false: it publishes only") },
};

const struct ig_settings ig_pubsub_settings = {
	.part = "pubsub", .opts = pubsub_rows, .count = IG_COUNTOF(pubsub_rows),
	.values = &ig_pubsub_config, .defaults = &pubsub_defaults, .size = sizeof ig_pubsub_config,
};
