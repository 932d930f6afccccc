/* Pub/Sub for apps: what a subscription's handler returns. The document
 * declares topics (x-ingot-topics) and subscriptions
 * (x-ingot-subscriptions); the generated api.h declares each handler with
 * the topic's message struct, and the app defines it (the link fails
 * without it). README, "Pub/Sub". */
#ifndef INGOT_PUBSUB_H
#define INGOT_PUBSUB_H

#include "ingot/http.h"

/* A handler's verdict on one delivery of a message. A handler is called
 * with a decoded message that passed the topic's schema, on a core's
 * loop, with a context like a request's (its own request id; logs name the
 * subscription); it may make linear calls (pg.h, client.h). The same
 * message may be delivered again (at-least-once): after a crash, or when
 * the handler outlives the subscription's ackDeadline. */
enum ig_pubsub_result {
	IG_PUBSUB_ACK,   /* handled: never delivered to this subscription again */
	IG_PUBSUB_RETRY, /* failed: delivered again after a backoff, until maxAttempts,
			    then to the dead-letter topic */
	IG_PUBSUB_DROP,  /* never handled: discarded now, no retry, no dead letter */
};

#endif
