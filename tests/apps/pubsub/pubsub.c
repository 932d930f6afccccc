/* The pubsub test app's handlers: publishes of the request's Event, and
 * subscription handlers that record each run in the runs table (the
 * test counts them) before their verdict. */
#include "api.h"
#include "ingot/pg.h"

#include <string.h>
#include <unistd.h>

#define PUBLISH(op, topic)                                                       \
	int op(ig_ctx *ctx, const struct op##_in *in, struct op##_out *out)      \
	{                                                                        \
		(void)out;                                                       \
		ig_pubsub_error err;                                             \
		if (ig_publish_##topic(ctx, &in->body, &err) < 0) {              \
			ig_respond_problem(ctx, 500, err.message);               \
			return 500;                                              \
		}                                                                \
		return 204;                                                      \
	}
PUBLISH(publishEvents, events)
PUBLISH(publishFailing, failing)
PUBLISH(publishSlow, slow)

/* The run recorded; returns how many runs of this message the
 * subscription has had (this one included), or -1. */
static int64_t ran(ig_ctx *ctx, const char *sub, const struct Event *msg)
{
	ig_pg_value p[3] = { ig_pg_text((ig_str){ sub, strlen(sub) }), ig_pg_int8(msg->n), ig_pg_int4((int32_t)getpid()) };
	ig_pg_error err;
	const ig_pg_result *r = ig_pg_run(ctx,
					  "WITH i AS (INSERT INTO runs (sub, n, pid) VALUES ($1, $2, $3)) "
					  "SELECT count(*) + 1 FROM runs WHERE sub = $1 AND n = $2",
					  p, 3, &err);
	return r && r->rows == 1 ? ig_pg_at(r, 0, 0)->i : -1;
}

enum ig_pubsub_result onFirst(ig_ctx *ctx, const struct Event *msg)
{
	return ran(ctx, "first", msg) < 0 ? IG_PUBSUB_RETRY : IG_PUBSUB_ACK;
}

enum ig_pubsub_result onSecond(ig_ctx *ctx, const struct Event *msg)
{
	return ran(ctx, "second", msg) < 0 ? IG_PUBSUB_RETRY : IG_PUBSUB_ACK;
}

enum ig_pubsub_result onFlaky(ig_ctx *ctx, const struct Event *msg)
{
	(void)ran(ctx, "flaky", msg);
	return IG_PUBSUB_RETRY;
}

enum ig_pubsub_result onSlow(ig_ctx *ctx, const struct Event *msg)
{
	int64_t runs = ran(ctx, "slow", msg);
	if (runs < 0)
		return IG_PUBSUB_RETRY;
	/* The first run outlives the ack deadline: the test kills it here. */
	if (runs == 1 && ig_sleep(ctx, 120000) != IG_WAIT_OK)
		return IG_PUBSUB_RETRY;
	return IG_PUBSUB_ACK;
}
