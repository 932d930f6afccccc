/* The pubsub test app's handlers: publishes of the request's Event, and
 * subscription handlers that record each run in the runs table (the
 * test counts them) before their verdict. */
#include "api.h"
#include "ingot/pg.h"

#include <stdio.h>
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
PUBLISH(publishOrdered, ordered)
PUBLISH(publishLimited, limited)

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

/* One more run of name in flight, recorded in ordered_runs (key, seq)
 * with the count of name's runs in flight now, this one included.
 * Returns how many runs of (key, seq) there have been, or -1. */
static int64_t begin_run(ig_ctx *ctx, const char *name, ig_str key, int64_t seq)
{
	ig_pg_value p[4] = { ig_pg_text((ig_str){ name, strlen(name) }), ig_pg_text(key), ig_pg_int8(seq),
			     ig_pg_int4((int32_t)getpid()) };
	ig_pg_error err;
	const ig_pg_result *r = ig_pg_run(ctx,
					  "WITH f AS (INSERT INTO inflight (name, n) VALUES ($1, 1) ON CONFLICT (name) "
					  "DO UPDATE SET n = inflight.n + 1 RETURNING n), "
					  "r AS (INSERT INTO ordered_runs (key, seq, inflight, pid) SELECT $2, $3, n, $4 FROM f) "
					  "SELECT count(*) + 1 FROM ordered_runs WHERE key = $2 AND seq = $3",
					  p, 4, &err);
	return r && r->rows == 1 ? ig_pg_at(r, 0, 0)->i : -1;
}

static int64_t in_flight(ig_ctx *ctx, const char *name, int delta)
{
	ig_pg_value p[2] = { ig_pg_text((ig_str){ name, strlen(name) }), ig_pg_int4(delta) };
	ig_pg_error err;
	const ig_pg_result *r = ig_pg_run(ctx, "UPDATE inflight SET n = n + $2 WHERE name = $1 RETURNING n", p, 2, &err);
	return r && r->rows == 1 ? ig_pg_at(r, 0, 0)->i : -1;
}

/* The first run of every fourth message fails: its retry must come
 * before the next message of its key. The short sleep widens the window
 * in which a second run of the key would be seen in flight. */
enum ig_pubsub_result onOrdered(ig_ctx *ctx, const struct Keyed *msg)
{
	char name[80];
	int n = snprintf(name, sizeof name, "key:%.*s", (int)msg->key.len, msg->key.ptr);
	if (n < 0 || (size_t)n >= sizeof name)
		return IG_PUBSUB_DROP;
	int64_t runs = begin_run(ctx, name, msg->key, msg->seq);
	if (runs < 0)
		return IG_PUBSUB_RETRY;
	enum ig_wait_result w = ig_sleep(ctx, 5);
	if (in_flight(ctx, name, -1) < 0 || w != IG_WAIT_OK)
		return IG_PUBSUB_RETRY;
	return runs == 1 && msg->seq % 4 == 1 ? IG_PUBSUB_RETRY : IG_PUBSUB_ACK;
}

/* Waits (at most 2 s) until a second run is in flight, so the consumer's
 * limit of 2 is reached, and a third would be seen. */
enum ig_pubsub_result onLimited(ig_ctx *ctx, const struct Event *msg)
{
	if (begin_run(ctx, "limited", IG_STR("limited"), msg->n) < 0)
		return IG_PUBSUB_RETRY;
	for (int i = 0; i < 100; i++) {
		int64_t now = in_flight(ctx, "limited", 0);
		if (now < 0 || now >= 2 || ig_sleep(ctx, 20) != IG_WAIT_OK)
			break;
	}
	return in_flight(ctx, "limited", -1) < 0 ? IG_PUBSUB_RETRY : IG_PUBSUB_ACK;
}
