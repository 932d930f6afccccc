/* Pub/Sub's consumers, as the providers (provider.h) and the generated
 * router reach them: core 0 of each process whose document declares
 * subscriptions takes deliveries (PostgreSQL's claims in consumer.c,
 * NATS's pulls in nats_consumer.c) and runs each one as a task
 * (net/http/task.h, delivery.h), in which ig_pubsub_handle runs the
 * subscription's handler on a handler coroutine. */
#ifndef NET_PUBSUB_CONSUMER_H
#define NET_PUBSUB_CONSUMER_H

#include "key.h"
#include "topics.h"

#include <stdbool.h>

struct ig_loop;
struct ig_settings;

/* INGOT_PUBSUB_URL and INGOT_PUBSUB_CONSUME (pubsub_settings.c). */
struct ig_pubsub_config {
	const char *url; /* the provider (provider.h): "" or "postgres", or NATS's URL */
	bool consume;    /* false: a process that publishes only */
};
extern struct ig_pubsub_config ig_pubsub_config;
extern const struct ig_settings ig_pubsub_settings;

/* PostgreSQL's consumers (consumer.c), which its provider starts. */
struct ig_pubsub_consumer_ops {
	/* On the main thread after the app's init, outside Lambda, with a
	   database configured: returns whether core_start must run (false
	   also when INGOT_PUBSUB_CONSUME is false). */
	bool (*prepare)(const struct ig_pubsub_table *table);
	/* On each core's loop as it starts, after net/pg's pool: core 0's
	   LISTENs, arms the poll and claims. */
	void (*core_start)(struct ig_loop *loop, int core_count);
};
extern const struct ig_pubsub_consumer_ops ig_pubsub_consumer_ops;

/* The generated router's last step before its 404 in a document with
 * subscriptions (net/pubsub/serve.c): POST IG_PUBSUB_PATH<name> carrying
 * the key runs that subscription's handler with the body (the message's
 * JSON) and answers its verdict as a status. Returns false, answering
 * nothing, for any other request (the router answers 404). */
struct ig_ctx;
bool ig_pubsub_serve(struct ig_ctx *ctx);

/* Push delivery (push.c), asked first by ig_pubsub_serve: POST
 * /_ingot/push/<name> with INGOT_PUSH_SECRET as a bearer token (or a JWT
 * the door takes, push_settings.h) delivers
 * the CloudEvent's or Pub/Sub push's message to that subscription and
 * answers its verdict (204 ack, 202 drop, 422 a message that breaks the
 * schema, 503 retry, 500 a failed handler). Returns false, answering
 * nothing, while neither the secret nor the JWT is configured, and for
 * another path or an unknown subscription. */
bool ig_pubsub_push_serve(struct ig_ctx *ctx);

#endif
