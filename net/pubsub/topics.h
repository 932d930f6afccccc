/* The app's topics and subscriptions as the generated code records them
 * (schemac, from the document's x-ingot-topics and x-ingot-subscriptions):
 * names, settings already checked (numbers in range, backoffs ordered) and
 * the handler's entry point. Data only: the providers and the publish and
 * delivery paths read this table. */
#ifndef NET_PUBSUB_TOPICS_H
#define NET_PUBSUB_TOPICS_H

#include "ingot/pubsub.h"

#include <stddef.h>
#include <stdint.h>

struct ig_pubsub_topic {
	const char *name;         /* the document's, unique */
	const char *ordering_key; /* the message member messages are ordered by, or NULL */
	const char *message;      /* its schema's component name, for logs */
	const char *subscriptions; /* their names, comma-separated ("" when none) */
};

/* The generated glue to the app's typed handler: json (the message as
 * stored) decoded into the topic's message struct in ctx's arena and
 * checked against its schema, then the handler called with it (its
 * verdict in *result). Returns 0; or -1, the handler not called, when the
 * message breaks the schema (or the arena is full). On a handler's
 * coroutine: the handler may make linear calls. */
typedef int ig_pubsub_deliver_fn(ig_ctx *ctx, ig_str json, enum ig_pubsub_result *result);

struct ig_pubsub_subscription {
	const char *name;                     /* the document's, unique */
	const struct ig_pubsub_topic *topic;
	const struct ig_pubsub_topic *dead_letter; /* NULL: none */
	ig_pubsub_deliver_fn *deliver;
	const char *handler;                  /* the app's function's name, for logs */
	uint32_t max_attempts;                /* deliveries in all, >= 1 */
	uint32_t max_concurrency;             /* handlers running at once, per core */
	uint64_t min_backoff_us, max_backoff_us; /* min <= max */
	uint64_t ack_deadline_us;             /* a delivery unacknowledged this long is redelivered */
};

struct ig_pubsub_table {
	const struct ig_pubsub_topic *topics;
	size_t ntopics;
	const struct ig_pubsub_subscription *subs;
	size_t nsubs;
};

/* Defined by the generated code only when the document declares topics;
 * weak, so a runtime that reads it links nothing extra for an app with
 * none (&ig_api_pubsub is then NULL). */
extern const struct ig_pubsub_table ig_api_pubsub __attribute__((weak));

#endif
