/* Publishing a message the generated ig_publish_<topic> has encoded and
 * validated: handed to the deployment's provider (provider.h: PostgreSQL
 * or NATS JetStream), waiting on the handler's coroutine until it is
 * stored. */
#ifndef NET_PUBSUB_PUBLISH_H
#define NET_PUBSUB_PUBLISH_H

#include "topics.h"

/* Stores json (len bytes, the message as the topic's schema allows) for
 * every subscription of topic t. Inside an open transaction of ctx
 * (ig_pg_transaction_begin) PostgreSQL's provider writes the message on
 * it, so it is delivered only if the transaction commits; NATS's refuses
 * (IG_PUBSUB_IN_TRANSACTION). Returns 0; or -1 with *err filled. A linear
 * call (include/ingot/http.h, "Waiting"). */
IG_MUST_USE int ig_pubsub_publish(ig_ctx *ctx, const struct ig_pubsub_topic *t, const char *json, size_t len,
				  ig_pubsub_error *err);

#endif
