/* Deliveries from outside as in-process requests (consumer.h:
 * ig_pubsub_serve): SQS's records and push deliveries reach the router's
 * miss as POST IG_PUBSUB_PATH<subscription> with the runtime's key, and
 * run the subscription's handler as the consumers' tasks do
 * (delivery.h: ig_pubsub_handle). */
#include "consumer.h"
#include "delivery.h"
#include "ingot/http.h"

#include <string.h>

/* The generated router refers to ig_pubsub_serve in a document with
 * subscriptions only, so this file links SQS's records under Lambda
 * (sqs.c) and PostgreSQL's consumers (consumer.c) into such a binary and
 * no other. Strong references (sqs.h declares the
 * ops weak, for the Lambda runtime; the PostgreSQL provider refers to the
 * consumers weakly, for a document with topics and no subscriptions). */
struct ig_pubsub_sqs_ops;
extern const struct ig_pubsub_sqs_ops ig_pubsub_sqs_ops;
const struct ig_pubsub_sqs_ops *const ig_pubsub_sqs_link = &ig_pubsub_sqs_ops;
const struct ig_pubsub_consumer_ops *const ig_pubsub_consumer_link = &ig_pubsub_consumer_ops;

/* The key compared in time that does not depend on where the first
 * difference lies. */
static bool keyed(ig_str key)
{
	if (!ig_pubsub_key[0] || key.len != IG_PUBSUB_KEY_LEN)
		return false;
	unsigned char diff = 0;
	for (size_t i = 0; i < IG_PUBSUB_KEY_LEN; i++)
		diff |= (unsigned char)(key.ptr[i] ^ ig_pubsub_key[i]);
	return diff == 0;
}

bool ig_pubsub_serve(ig_ctx *ctx)
{
	if (ig_pubsub_push_serve(ctx)) /* deliveries over HTTP (push.c) */
		return true;
	const ig_request *req = ig_req(ctx);
	size_t plen = sizeof IG_PUBSUB_PATH - 1;
	if (req->path.len <= plen || memcmp(req->path.ptr, IG_PUBSUB_PATH, plen) != 0 ||
	    !keyed(ig_req_header(ctx, IG_PUBSUB_KEY_HEADER)))
		return false;
	ig_str name = { req->path.ptr + plen, req->path.len - plen };
	const struct ig_pubsub_subscription *sub = NULL;
	for (size_t i = 0; i < ig_api_pubsub.nsubs; i++)
		if (strlen(ig_api_pubsub.subs[i].name) == name.len &&
		    memcmp(ig_api_pubsub.subs[i].name, name.ptr, name.len) == 0)
			sub = &ig_api_pubsub.subs[i];
	if (!sub)
		return false;
	ig_pubsub_handle(ctx, sub);
	return true;
}
