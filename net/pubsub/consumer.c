/* Pub/Sub's consumers on PostgreSQL (consumer.h), on core 0's loop only:
 * one place per process claims, which keeps the claims few and the other
 * cores' loops free of it; a subscription's maxConcurrency is the number of
 * its deliveries core 0 runs at once. Deliveries are claimed with UPDATE
 * ... FOR UPDATE SKIP LOCKED (attempts + 1, hidden until the ack deadline),
 * when a NOTIFY names a topic and on a poll (the fallback, and retries'
 * backoffs); each runs as an in-process request (serve.c runs the handler)
 * and its verdict is written back: done, dropped, visible again after a
 * backoff, or dead (then copied to the dead-letter topic with the reason).
 * A process that dies mid-handler writes nothing: the deadline passes and
 * another claim takes the delivery. Messages settled a day ago are purged
 * at the first poll and about hourly. net/pg is referred to weakly. */
#include "consumer.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/clock.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "net/http/inproc.h"
#include "net/metrics/metrics.h"
#include "ingot/log.h"
#include "ingot/pg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEAK __attribute__((weak))
bool ig_pg_configured(void) WEAK;
struct ig_pg_pool *ig_pg_core_pool(struct ig_loop *loop) WEAK;
void ig_pg_pool_query(struct ig_pg_pool *pool, ig_arena *arena, const char *sql, const ig_pg_value *params,
		      size_t nparams, ig_pg_done *done, void *arg) WEAK;
const char *ig_pg_error_name(enum ig_pg_error_kind kind) WEAK;
int ig_pg_listen(struct ig_loop *loop, const char *channel, ig_pg_notify_fn *on_notify, void *arg) WEAK;

/* The poll when no NOTIFY comes (one lost while the listening connection
 * was down, a deadline that passed, a backoff that ended). */
#define POLL_MS 1000
/* A delivery's request: the message's JSON and a head. */
#define DELIVERY_BUF (256 * 1024)

/* $1 subscription, $2 how many, $3 the ack deadline in microseconds. */
#define CLAIM_SQL                                                                                             \
	"UPDATE ingot_pubsub.deliveries d SET attempts = d.attempts + 1, "                                     \
	"visible_at = now() + $3::bigint * interval '1 microsecond' FROM ingot_pubsub.messages m "             \
	"WHERE m.id = d.message_id AND d.subscription = $1 AND d.message_id IN (SELECT message_id FROM "      \
	"ingot_pubsub.deliveries WHERE subscription = $1 AND state = 'ready' AND visible_at <= now() "        \
	"ORDER BY visible_at LIMIT $2 FOR UPDATE SKIP LOCKED) "                                                \
	"RETURNING d.message_id, d.attempts, m.payload::text, coalesce(m.attributes->>'traceparent', '')"

/* $1 message, $2 subscription, $3 'done' or 'dropped'. */
#define SETTLE_SQL "UPDATE ingot_pubsub.deliveries SET state = $3 WHERE message_id = $1 AND subscription = $2"

/* $1 message, $2 subscription, $3 the attempt claimed (a later claim's
 * delivery is left alone), $4 the backoff in microseconds, $5 why. */
#define RETRY_SQL                                                                                     \
	"UPDATE ingot_pubsub.deliveries SET visible_at = now() + $4::bigint * interval '1 microsecond', " \
	"last_error = $5 WHERE message_id = $1 AND subscription = $2 AND attempts = $3 AND state = 'ready'"

/* $1 message, $2 subscription, $3 why, $4 the dead-letter topic ("":
 * none), $5 its subscriptions: the delivery dead, and the message
 * published again on the dead-letter topic with the reason, the
 * subscription, the message's id and the attempts in its attributes. */
#define DEAD_SQL                                                                                             \
	"WITH d AS (UPDATE ingot_pubsub.deliveries SET state = 'dead', last_error = $3 "                      \
	"WHERE message_id = $1 AND subscription = $2 AND state = 'ready' RETURNING message_id, attempts), "   \
	"m AS (INSERT INTO ingot_pubsub.messages (topic, payload, attributes) SELECT $4, o.payload, "          \
	"o.attributes || jsonb_build_object('reason', $3::text, 'subscription', $2::text, "                   \
	"'message_id', o.id, 'attempts', d.attempts) FROM ingot_pubsub.messages o JOIN d ON o.id = d.message_id " \
	"WHERE $4 <> '' RETURNING id), "                                                                       \
	"x AS (INSERT INTO ingot_pubsub.deliveries (message_id, subscription) "                               \
	"SELECT m.id, s FROM m, unnest(string_to_array($5, ',')) s) "                                         \
	"SELECT pg_notify('ingot_pubsub', $4) FROM m"

/* Messages a day old whose deliveries are all settled (done or dropped:
 * dead ones are kept for a look) go, their deliveries with them (ON
 * DELETE CASCADE): at the first poll, then every PURGE_POLLS polls. */
#define PURGE_SQL                                                                                      \
	"DELETE FROM ingot_pubsub.messages m WHERE m.published_at < now() - interval '1 day' "          \
	"AND NOT EXISTS (SELECT 1 FROM ingot_pubsub.deliveries d WHERE d.message_id = m.id "             \
	"AND d.state IN ('ready', 'dead'))"
#define PURGE_POLLS 3600

enum outcome { OUT_ACK, OUT_RETRY, OUT_DROP, OUT_DEAD, OUTCOMES };
static const char *const outcome_names[OUTCOMES] = { "ack", "retry", "drop", "dead" };

struct sub_run;

/* One delivery in flight: its request, then its verdict's statement. */
struct delivery {
	struct sub_run *sub;
	bool busy;
	int64_t message_id;
	int32_t attempts;
	uint64_t started_us;
	enum outcome outcome;
	char attempt_text[16];
	ig_header headers[3];
	struct http_inproc inproc;
	char *buf;
	ig_arena arena;
};

struct sub_run {
	const struct ig_pubsub_subscription *sub;
	char target[128];
	struct delivery *slots; /* max_concurrency of them */
	uint32_t running;
	bool claiming, again;
	ig_arena claim_arena;
	ig_counter delivered[OUTCOMES];
	struct ig_histogram duration;
};

char ig_pubsub_key[IG_PUBSUB_KEY_LEN + 1];

static struct {
	const struct ig_pubsub_table *table;
	struct sub_run *subs;
	struct http_core *core;
	struct ig_pg_pool *pool;
	struct ig_timer timer;
	struct ig_pool blocks;
	struct ig_metrics_source metrics;
	uint32_t polls;
	bool purging;
	ig_arena purge_arena;
} s;

static void write_metrics(struct ig_expo *e, void *arg)
{
	(void)arg;
	ig_expo_family(e, "ingot_pubsub_delivered_total", "counter",
		       "deliveries handled by subscription and result: ack, retry (after a backoff), drop, "
		       "dead (max attempts, or a message that breaks the schema)");
	for (size_t i = 0; i < s.table->nsubs; i++)
		for (int k = 0; k < OUTCOMES; k++) {
			const char *n = s.subs[i].sub->name;
			const struct ig_label l[2] = { { "subscription", n, strlen(n) },
						       { "result", outcome_names[k], strlen(outcome_names[k]) } };
			ig_expo_sample(e, "ingot_pubsub_delivered_total", l, 2,
				       (double)ig_counter_get(&s.subs[i].delivered[k]));
		}
	ig_expo_family(e, "ingot_pubsub_handling_duration_seconds", "histogram",
		       "from a delivery's claim to its handler's verdict, by subscription");
	for (size_t i = 0; i < s.table->nsubs; i++) {
		const char *n = s.subs[i].sub->name;
		const struct ig_label l = { "subscription", n, strlen(n) };
		struct ig_histogram sum = { 0 };
		ig_histogram_sum_into(&sum, &s.subs[i].duration);
		ig_expo_histogram(e, "ingot_pubsub_handling_duration_seconds", &l, 1, &sum, &ig_duration_bounds);
	}
}

static void log_db_error(const char *msg, const struct sub_run *r, const ig_pg_error *err)
{
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_ERROR, msg)) {
		ig_log_cstr(&l, "subscription", r->sub->name);
		ig_log_cstr(&l, "error", ig_pg_error_name(err->kind));
		ig_log_str(&l, "message", err->message.ptr, err->message.len);
		ig_log_end(&l);
	}
}

static void claim(struct sub_run *r);

static void settled(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct delivery *d = arg;
	struct sub_run *r = d->sub;
	(void)res;
	if (err) /* the deadline will make it visible again */
		log_db_error("pub/sub verdict not recorded: database error", r, err);
	else
		ig_counter_add(&r->delivered[d->outcome], 1);
	d->busy = false;
	r->running--;
	claim(r);
}

/* min_backoff doubled per attempt after the first, up to max_backoff. */
static uint64_t backoff_us(const struct ig_pubsub_subscription *sub, int32_t attempts)
{
	uint64_t b = sub->min_backoff_us;
	for (int32_t i = 1; i < attempts && b < sub->max_backoff_us; i++)
		b *= 2;
	return b < sub->max_backoff_us ? b : sub->max_backoff_us;
}

static void record(struct delivery *d, enum outcome outcome, const char *why)
{
	const struct ig_pubsub_subscription *sub = d->sub->sub;
	ig_histogram_observe(&d->sub->duration, &ig_duration_bounds, ig_monotonic_us() - d->started_us);
	if (outcome == OUT_RETRY && (uint32_t)d->attempts >= sub->max_attempts) {
		outcome = OUT_DEAD;
		why = "max attempts reached";
	}
	d->outcome = outcome;
	ig_arena_reset(&d->arena);
	ig_str name = { sub->name, strlen(sub->name) };
	if (outcome == OUT_ACK || outcome == OUT_DROP) {
		const char *state = outcome == OUT_ACK ? "done" : "dropped";
		const ig_pg_value p[3] = { ig_pg_int8(d->message_id), ig_pg_text(name),
					   ig_pg_text((ig_str){ state, strlen(state) }) };
		ig_pg_pool_query(s.pool, &d->arena, SETTLE_SQL, p, 3, settled, d);
	} else if (outcome == OUT_RETRY) {
		const ig_pg_value p[5] = { ig_pg_int8(d->message_id), ig_pg_text(name), ig_pg_int4(d->attempts),
					   ig_pg_int8((int64_t)backoff_us(sub, d->attempts)),
					   ig_pg_text((ig_str){ why, strlen(why) }) };
		ig_pg_pool_query(s.pool, &d->arena, RETRY_SQL, p, 5, settled, d);
		/* a poll soon enough for the backoff's end */
		uint64_t due = ig_monotonic_us() / 1000 + backoff_us(sub, d->attempts) / 1000 + 1;
		ig_timer_set_lazy(&s.core->loop.timers, &s.timer, due);
	} else {
		const char *dl = sub->dead_letter ? sub->dead_letter->name : "";
		const char *dl_subs = sub->dead_letter ? sub->dead_letter->subscriptions : "";
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_WARN, "pub/sub delivery dead")) {
			ig_log_cstr(&l, "subscription", sub->name);
			ig_log_int(&l, "message_id", d->message_id);
			ig_log_int(&l, "attempts", d->attempts);
			ig_log_cstr(&l, "reason", why);
			ig_log_end(&l);
		}
		const ig_pg_value p[5] = { ig_pg_int8(d->message_id), ig_pg_text(name),
					   ig_pg_text((ig_str){ why, strlen(why) }), ig_pg_text((ig_str){ dl, strlen(dl) }),
					   ig_pg_text((ig_str){ dl_subs, strlen(dl_subs) }) };
		ig_pg_pool_query(s.pool, &d->arena, DEAD_SQL, p, 5, settled, d);
	}
}

static void answered(void *arg, enum http_inproc_result result, const struct http_inproc_response *res)
{
	struct delivery *d = arg;
	int status = result == HTTP_INPROC_OK ? res->status : 0;
	if (status == IG_PUBSUB_STATUS_ACK)
		record(d, OUT_ACK, NULL);
	else if (status == IG_PUBSUB_STATUS_DROP)
		record(d, OUT_DROP, NULL);
	else if (status == IG_PUBSUB_STATUS_INVALID)
		record(d, OUT_DEAD, "the message breaks the topic's schema");
	else
		record(d, OUT_RETRY, status == 503 ? "the handler asked for a retry" : "the handler failed");
}

/* The claimed row as a request to serve.c; false when it could not start
 * (the core drains or is full): its deadline will show it again. */
static bool start(struct sub_run *r, struct delivery *d, const ig_pg_result *res, uint32_t row)
{
	d->message_id = ig_pg_at(res, row, 0)->i;
	d->attempts = (int32_t)ig_pg_at(res, row, 1)->i;
	ig_str body = ig_pg_at(res, row, 2)->s, traceparent = ig_pg_at(res, row, 3)->s;
	size_t n = (size_t)ig_fmt_i64(d->attempt_text, d->attempts);
	size_t nh = 0;
	d->headers[nh++] = (ig_header){ IG_STR(IG_PUBSUB_KEY_HEADER), { ig_pubsub_key, IG_PUBSUB_KEY_LEN } };
	d->headers[nh++] = (ig_header){ IG_STR("Ingot-Pubsub-Attempt"), { d->attempt_text, n } };
	if (traceparent.len)
		d->headers[nh++] = (ig_header){ IG_STR("traceparent"), traceparent };
	const struct http_inproc_request req = {
		.method = IG_STR("POST"),
		.target = { r->target, strlen(r->target) },
		.headers = d->headers,
		.header_count = nh,
		.body = body,
		.peer = IG_STR("pubsub"),
	};
	d->started_us = ig_monotonic_us();
	enum http_inproc_result result;
	if (ig_http_inproc_run(&d->inproc, s.core, d->buf, DELIVERY_BUF, &req, answered, d, &result) == 0)
		return true;
	if (!s.core->draining && result == HTTP_INPROC_NO_ROOM) {
		/* Larger than a delivery's buffer: it never will fit. */
		record(d, OUT_DEAD, "the message is larger than a delivery's buffer");
		return true;
	}
	return false;
}

static struct delivery *free_slot(struct sub_run *r)
{
	for (uint32_t i = 0; i < r->sub->max_concurrency; i++)
		if (!r->slots[i].busy)
			return &r->slots[i];
	return NULL;
}

static void claimed(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct sub_run *r = arg;
	r->claiming = false;
	if (err) {
		log_db_error("pub/sub claim failed: database error", r, err);
		return; /* the poll tries again */
	}
	for (uint32_t i = 0; i < res->rows; i++) {
		struct delivery *d = free_slot(r);
		if (!d)
			break; /* cannot happen: the claim asked for the free slots */
		d->busy = true;
		r->running++;
		if (!start(r, d, res, i)) {
			d->busy = false;
			r->running--;
		}
	}
	if (r->again) /* a NOTIFY came while claiming */
		claim(r);
}

static void claim(struct sub_run *r)
{
	if (s.core->draining || !r->slots)
		return;
	uint32_t room = r->sub->max_concurrency - r->running;
	if (r->claiming || room == 0) {
		r->again = true;
		return;
	}
	r->again = false;
	r->claiming = true;
	ig_arena_reset(&r->claim_arena);
	const ig_pg_value p[3] = { ig_pg_text((ig_str){ r->sub->name, strlen(r->sub->name) }), ig_pg_int4((int32_t)room),
				   ig_pg_int8((int64_t)r->sub->ack_deadline_us) };
	ig_pg_pool_query(s.pool, &r->claim_arena, CLAIM_SQL, p, 3, claimed, r);
}

static void on_notify(ig_str channel, ig_str topic, void *arg)
{
	(void)channel;
	(void)arg;
	for (size_t i = 0; i < s.table->nsubs; i++) {
		const char *t = s.subs[i].sub->topic->name;
		if (strlen(t) == topic.len && memcmp(t, topic.ptr, topic.len) == 0)
			claim(&s.subs[i]);
	}
}

static void purged(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	(void)arg;
	s.purging = false;
	struct ig_logline l;
	if (err) {
		if (ig_log_begin(&l, IG_LOG_WARN, "pub/sub: settled messages not purged: database error")) {
			ig_log_cstr(&l, "error", ig_pg_error_name(err->kind));
			ig_log_str(&l, "message", err->message.ptr, err->message.len);
			ig_log_end(&l);
		}
	} else if (res->affected && ig_log_begin(&l, IG_LOG_INFO, "pub/sub: settled messages purged")) {
		ig_log_int(&l, "messages", (int64_t)res->affected);
		ig_log_end(&l);
	}
}

static void on_timer(struct ig_timer *t)
{
	(void)t;
	if (s.core->draining)
		return;
	if (s.polls++ % PURGE_POLLS == 0 && !s.purging) {
		s.purging = true;
		ig_arena_reset(&s.purge_arena);
		ig_pg_pool_query(s.pool, &s.purge_arena, PURGE_SQL, NULL, 0, purged, NULL);
	}
	for (size_t i = 0; i < s.table->nsubs; i++)
		claim(&s.subs[i]);
	ig_timer_set(&s.core->loop.timers, &s.timer, ig_monotonic_us() / 1000 + POLL_MS);
}

static bool prepare(const struct ig_pubsub_table *table)
{
	if (!ig_pubsub_config.consume || !table->nsubs || !ig_pg_configured || !ig_pg_configured() || !ig_pg_pool_query || !ig_pg_core_pool)
		return false;
	if (!ig_pubsub_key_make())
		return false;
	s.table = table;
	s.subs = calloc(table->nsubs, sizeof *s.subs);
	if (!s.subs)
		return false;
	for (size_t i = 0; i < table->nsubs; i++) {
		struct sub_run *r = &s.subs[i];
		r->sub = &table->subs[i];
		/* the name is a label (no '/', '?', '%'): the path as it is */
		snprintf(r->target, sizeof r->target, IG_PUBSUB_PATH "%s", r->sub->name);
	}
	s.metrics.write = write_metrics;
	ig_metrics_register(&s.metrics);
	return true;
}

static void core_start(struct ig_loop *loop, int core_count)
{
	(void)core_count;
	if (loop->core != 0 || !s.subs)
		return;
	s.core = (struct http_core *)loop; /* the loop is its core's first member */
	s.pool = ig_pg_core_pool(loop);
	if (!s.pool)
		return;
	ig_pool_init(&s.blocks, 4096, 4, 4096);
	ig_arena_init(&s.purge_arena, &s.blocks, 16 * 1024);
	for (size_t i = 0; i < s.table->nsubs; i++) {
		struct sub_run *r = &s.subs[i];
		r->slots = calloc(r->sub->max_concurrency, sizeof *r->slots);
		if (!r->slots)
			continue;
		ig_arena_init(&r->claim_arena, &s.blocks, 1024 * 1024);
		for (uint32_t k = 0; k < r->sub->max_concurrency; k++) {
			struct delivery *d = &r->slots[k];
			d->sub = r;
			d->buf = malloc(DELIVERY_BUF);
			d->busy = d->buf == NULL; /* a slot without memory is never used */
			ig_arena_init(&d->arena, &s.blocks, 64 * 1024);
		}
	}
	if (ig_pg_listen && ig_pg_listen(loop, "ingot_pubsub", on_notify, NULL) != 0) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_WARN, "pub/sub: no LISTEN: deliveries wait for the poll"))
			ig_log_end(&l);
	}
	s.timer.fn = on_timer;
	ig_timer_set(&s.core->loop.timers, &s.timer, ig_monotonic_us() / 1000);
}

const struct ig_pubsub_consumer_ops ig_pubsub_consumer_ops = {
	.prepare = prepare,
	.core_start = core_start,
};
