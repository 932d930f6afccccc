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

/* Why a publish failed. A publish (the generated ig_publish_<topic>, one
 * per topic of the document) is a linear call: only from a handler on its
 * coroutine (see http.h, "Waiting"). */
enum ig_pubsub_error_kind {
	IG_PUBSUB_OK = 0,
	IG_PUBSUB_INVALID,        /* the message breaks the topic's schema: nothing was sent */
	IG_PUBSUB_NO_MEMORY,      /* the request's arena could not hold the encoded message */
	IG_PUBSUB_NO_PROVIDER,    /* no provider is configured (DATABASE_URL, INGOT_PUBSUB_URL) */
	IG_PUBSUB_PROVIDER,       /* the provider failed (its error is logged: the database's,
				     NATS's missing PubAck): the message may not have been stored */
	IG_PUBSUB_CANCELLED,      /* the request was cancelled while waiting */
	IG_PUBSUB_IN_TRANSACTION, /* inside an open transaction with a provider that cannot
				     join it (NATS): nothing was sent */
	IG_PUBSUB_NOT_IN_HANDLER, /* called outside a handler's coroutine (a callback of the
				     low-level API, a lifecycle hook): nothing was sent */
};

typedef struct ig_pubsub_error {
	enum ig_pubsub_error_kind kind;
	const char *message; /* static: what went wrong, for logs; never NULL after a failure */
} ig_pubsub_error;

#endif
