/* The consumer's deliveries arriving as in-process requests (consumer.h:
 * ig_pubsub_serve): the subscription's handler runs on a handler
 * coroutine (net/http/wait.h), so it may make linear calls, in the
 * request's context (its request id, the publisher's traceparent), and
 * its verdict goes back as the status. Reached from the router's miss. */
#include "consumer.h"
#include "net/http/wait.h"
#include "ingot/http.h"
#include "ingot/log.h"

#include <string.h>

struct delivery_work {
	struct ig_wait_work work;
	const struct ig_pubsub_subscription *sub;
};

static int run_handler(ig_ctx *ctx, const void *in, void *out)
{
	const struct ig_pubsub_subscription *sub = in;
	(void)out;
	enum ig_pubsub_result result = IG_PUBSUB_RETRY;
	if (sub->deliver(ctx, ig_req(ctx)->body, &result) != 0) {
		struct ig_logline l;
		if (ig_log_req(ctx, &l, IG_LOG_WARN, "pub/sub message breaks the topic's schema")) {
			ig_log_cstr(&l, "subscription", sub->name);
			ig_log_end(&l);
		}
		return IG_PUBSUB_STATUS_INVALID;
	}
	switch (result) {
	case IG_PUBSUB_ACK:
		return IG_PUBSUB_STATUS_ACK;
	case IG_PUBSUB_DROP:
		return IG_PUBSUB_STATUS_DROP;
	default:
		return 503;
	}
}

static void answer(ig_ctx *ctx, int status)
{
	if (status == IG_PUBSUB_STATUS_ACK || status == IG_PUBSUB_STATUS_DROP)
		ig_finish(ctx, status);
	else
		ig_respond_problem(ctx, status, status == IG_PUBSUB_STATUS_INVALID ? "the message breaks the topic's schema"
										   : "the handler asked for a retry");
}

static void handler_returned(ig_ctx *ctx, void *arg)
{
	answer(ctx, ((struct delivery_work *)arg)->work.status);
}

/* SQS's records under Lambda (sqs.c) and PostgreSQL's consumers
 * (consumer.c) come in through this path: linked with it, so into a
 * binary with subscriptions only. Strong references (sqs.h declares the
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
	struct delivery_work *w = ig_alloc(ctx, sizeof *w);
	if (!w) {
		ig_respond_problem(ctx, 500, "out of request memory");
		return true;
	}
	*w = (struct delivery_work){
		.work = { .handle = run_handler, .name = sub->handler, .in = sub, .finish = handler_returned },
		.sub = sub,
	};
	switch (ig_wait_run(ctx, &w->work)) {
	case 1:
		answer(ctx, w->work.status);
		break;
	case 0:
		break;
	default:
		ig_respond_problem(ctx, 503, "too many requests are waiting on this core");
	}
	return true;
}
