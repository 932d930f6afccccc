/* Pub/Sub on PostgreSQL (provider.h's ig_pubsub_pg_provider): a publish
 * is one statement that stores the message, a delivery row per
 * subscription and a NOTIFY, through net/pg's linear calls, so it joins
 * the handler's open transaction (the outbox pattern: it commits or rolls
 * back with the app's writes). Its consumers are consumer.c's, reached
 * weakly (linked with the generated router's delivery path). */
#include "pg_provider.h"
#include "provider.h"
#include "pubsub_metrics.h"

#include "ingot/log.h"
#include "ingot/pg.h"

#include <string.h>

const char ig_pubsub_pg_schema[] =
	"CREATE SCHEMA IF NOT EXISTS ingot_pubsub; "
	"CREATE TABLE IF NOT EXISTS ingot_pubsub.messages (id bigserial PRIMARY KEY, topic text NOT NULL, "
	"payload jsonb NOT NULL, attributes jsonb NOT NULL DEFAULT '{}', "
	"published_at timestamptz NOT NULL DEFAULT now()); "
	"CREATE TABLE IF NOT EXISTS ingot_pubsub.deliveries (message_id bigint NOT NULL "
	"REFERENCES ingot_pubsub.messages (id) ON DELETE CASCADE, subscription text NOT NULL, "
	"state text NOT NULL DEFAULT 'ready', attempts integer NOT NULL DEFAULT 0, "
	"visible_at timestamptz NOT NULL DEFAULT now(), last_error text, "
	"PRIMARY KEY (message_id, subscription)); "
	"CREATE INDEX IF NOT EXISTS deliveries_ready ON ingot_pubsub.deliveries (subscription, visible_at) "
	"WHERE state = 'ready'; "
	/* The ordering key's value (NULL: the topic has none), on the
	   delivery so a claim finds an earlier unsettled one of its key in
	   the index alone. ADD COLUMN IF NOT EXISTS: tables made before it
	   get it at the next start. */
	"ALTER TABLE ingot_pubsub.deliveries ADD COLUMN IF NOT EXISTS ordering_key text; "
	"CREATE INDEX IF NOT EXISTS deliveries_ordered ON ingot_pubsub.deliveries "
	"(subscription, ordering_key, message_id) WHERE state = 'ready' AND ordering_key IS NOT NULL";

/* $1 topic, $2 payload, $3 the topic's subscriptions, comma-separated
   (names are labels: no comma), $4 the attributes, $5 the ordering key's
   member ("": none; its value, a string or an integer, is stored as
   text). The NOTIFY is sent at commit. */
#define PUBLISH_SQL                                                                                         \
	"WITH m AS (INSERT INTO ingot_pubsub.messages (topic, payload, attributes) "                          \
	"VALUES ($1, $2::jsonb, $4::jsonb) RETURNING id), "                                                   \
	"d AS (INSERT INTO ingot_pubsub.deliveries (message_id, subscription, ordering_key) "                \
	"SELECT m.id, s, $2::jsonb ->> nullif($5, '') FROM m, unnest(string_to_array($3, ',')) s) "          \
	"SELECT m.id, pg_notify('ingot_pubsub', $1) FROM m"

extern const struct ig_pubsub_consumer_ops ig_pubsub_consumer_ops __attribute__((weak));

static int pg_publish(ig_ctx *ctx, const struct ig_pubsub_topic *t, const char *json, size_t len,
		      ig_pubsub_error *err)
{
	if (!ig_pg_configured()) {
		*err = (ig_pubsub_error){ IG_PUBSUB_NO_PROVIDER, "no pub/sub provider: DATABASE_URL is not set" };
		return -1;
	}
	/* The publisher's trace goes with the message (W3C traceparent, a
	   child of the publishing request's span): its deliveries continue
	   that trace. */
	char attrs[] = "{\"traceparent\":\"" "00-00000000000000000000000000000000-0000000000000000-00" "\"}";
	ig_traceparent_child(ctx, attrs + 16);
	const char *key = t->ordering_key ? t->ordering_key : "";
	ig_pg_value params[5] = {
		ig_pg_text((ig_str){ t->name, strlen(t->name) }),
		ig_pg_text((ig_str){ json, len }),
		ig_pg_text((ig_str){ t->subscriptions, strlen(t->subscriptions) }),
		ig_pg_text((ig_str){ attrs, sizeof attrs - 1 }),
		ig_pg_text((ig_str){ key, strlen(key) }),
	};
	ig_pg_error pe;
	const ig_pg_result *res = ig_pg_run(ctx, PUBLISH_SQL, params, 5, &pe);
	if (res) {
		ig_pubsub_count_published(ctx, t);
		return 0;
	}
	if (pe.kind == IG_PG_CANCELLED) {
		*err = (ig_pubsub_error){ IG_PUBSUB_CANCELLED, "cancelled while publishing" };
		return -1;
	}
	struct ig_logline l;
	if (ig_log_req(ctx, &l, IG_LOG_ERROR, "publish failed")) {
		ig_log_cstr(&l, "topic", t->name);
		ig_log_cstr(&l, "error", ig_pg_error_name(pe.kind));
		if (pe.sqlstate[0])
			ig_log_cstr(&l, "sqlstate", pe.sqlstate);
		ig_log_str(&l, "message", pe.message.ptr, pe.message.len);
		ig_log_end(&l);
	}
	*err = (ig_pubsub_error){ IG_PUBSUB_PROVIDER, "the database failed to store the message" };
	return -1;
}

/* The consumers, with a database configured (consumer.c checks it too);
 * a publish-only process needs nothing but net/pg's pool. */
static bool pg_prepare(const struct ig_pubsub_table *table, bool publish_only)
{
	return !publish_only && &ig_pubsub_consumer_ops && ig_pg_configured() && ig_pubsub_consumer_ops.prepare(table);
}

static void pg_core_start(struct ig_loop *loop, int core_count)
{
	ig_pubsub_consumer_ops.core_start(loop, core_count);
}

const struct ig_pubsub_provider ig_pubsub_pg_provider = {
	.name = "postgres",
	.publish = pg_publish,
	.prepare = pg_prepare,
	.core_start = pg_core_start,
};
