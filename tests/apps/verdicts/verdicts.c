/* The verdicts app's handlers: each run logged (the tests count the
 * lines; whether the delivery has a deadline), then the verdict the
 * message names. */
#include "api.h"
#include "ingot/log.h"

#include <string.h>

static enum ig_pubsub_result verdict(ig_ctx *ctx, const char *sub, const struct Job *msg)
{
	struct ig_logline l;
	if (ig_log_req(ctx, &l, IG_LOG_INFO, "job ran")) {
		ig_log_cstr(&l, "sub", sub);
		ig_log_int(&l, "n", msg->n);
		ig_log_str(&l, "verdict", msg->verdict.ptr, msg->verdict.len);
		ig_log_int(&l, "deadline", ig_deadline_ms(ctx) != 0); /* an invocation's, under Lambda */
		ig_log_end(&l);
	}
	if (ig_str_eq(msg->verdict, "retry", 5))
		return IG_PUBSUB_RETRY;
	if (ig_str_eq(msg->verdict, "drop", 4))
		return IG_PUBSUB_DROP;
	return IG_PUBSUB_ACK;
}

enum ig_pubsub_result onWork(ig_ctx *ctx, const struct Job *msg)
{
	return verdict(ctx, "work", msg);
}

enum ig_pubsub_result onAudit(ig_ctx *ctx, const struct Job *msg)
{
	return verdict(ctx, "audit", msg);
}

int ping(ig_ctx *ctx, const struct ping_in *in, struct ping_out *out)
{
	(void)ctx;
	(void)in;
	(void)out;
	return 204;
}
