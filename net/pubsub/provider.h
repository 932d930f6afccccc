/* Pub/Sub's providers behind one ops table: publish.c and the start reach
 * the deployment's provider (PostgreSQL or NATS JetStream, chosen once by
 * INGOT_PUBSUB_URL) only through it, so each provider's files depend on
 * nothing but net/pubsub's shared parts (topics.h, consumer.h's delivery
 * path) and their own client. */
#ifndef NET_PUBSUB_PROVIDER_H
#define NET_PUBSUB_PROVIDER_H

#include "consumer.h"

#include <stdbool.h>

struct ig_loop;

struct ig_pubsub_provider {
	const char *name; /* "postgres", "nats": for logs */
	/* ig_pubsub_publish's work (publish.h), the message already valid */
	int (*publish)(ig_ctx *ctx, const struct ig_pubsub_topic *t, const char *json, size_t len,
		       ig_pubsub_error *err);
	/* On the main thread after the app's init: whether core_start must
	   run (its consumers, or a client per core). publish_only: under
	   Lambda, frozen between invocations: no consumers, no cron claims,
	   only what a publish needs (NATS's client; PostgreSQL's is net/pg's
	   pool) */
	bool (*prepare)(const struct ig_pubsub_table *table, bool publish_only);
	/* On each core's loop as it starts, after net/pg's pool */
	void (*core_start)(struct ig_loop *loop, int core_count);
};

/* The providers; the NATS one is linked only through ig_pubsub_provider. */
extern const struct ig_pubsub_provider ig_pubsub_pg_provider, ig_pubsub_nats_provider;

/* The deployment's provider, INGOT_PUBSUB_URL's (pubsub_settings.c):
 * nats:// or tls:// (a list of them) is NATS, anything else PostgreSQL
 * (which fails each publish without DATABASE_URL). The start (net/start.c)
 * refers to it weakly for prepare and core_start. */
const struct ig_pubsub_provider *ig_pubsub_provider(void);

#endif
