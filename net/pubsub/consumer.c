/* Pub/Sub's consumers on PostgreSQL (consumer.h), on core 0's loop only:
 * one place per process claims, which keeps the claims few and the other
 * cores' loops free of it; a subscription's maxConcurrency is the number of
 * its deliveries core 0 runs at once. Deliveries are claimed with UPDATE
 * ... FOR UPDATE SKIP LOCKED (attempts + 1, hidden until the ack deadline),
 * when a NOTIFY names a topic, on a poll (the fallback, and retries'
 * backoffs) and as slots free; each runs as a task (delivery.c runs the
 * handler) and its verdict is written back: done or dropped in a round
 * with the next claim (one statement), visible again after a backoff, or
 * dead (then copied to the dead-letter topic with the reason).
 * A process that dies mid-handler writes nothing: the deadline passes and
 * another claim takes the delivery. Messages settled a day ago are purged
 * at the first poll and about hourly. net/pg is referred to weakly, but for
 * LISTEN. */
#include "consumer.h"
#include "delivery.h"
#include "kernel/runtime/clock.h"
#include "kernel/runtime/loop.h"
#include "ingot/log.h"
#include "ingot/pg.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEAK __attribute__((weak))
bool ig_pg_configured(void) WEAK;
struct ig_pg_pool *ig_pg_core_pool(struct ig_loop *loop) WEAK;
void ig_pg_pool_query(struct ig_pg_pool *pool, ig_arena *arena, const char *sql, const ig_pg_value *params,
		      size_t nparams, ig_pg_done *done, void *arg) WEAK;
const char *ig_pg_error_name(enum ig_pg_error_kind kind) WEAK;
/* ig_pg_listen (ingot/pg.h) is referred to strongly: a weak reference
 * links nothing from the archive, and net/pg/listen.c is referred to by
 * nothing else, so the consumers would wait for the poll alone. A binary
 * with subscriptions links net/pg anyway (the publish calls). */

/* The poll when no NOTIFY comes (one lost while the listening connection
 * was down, a deadline that passed, a backoff that ended). */
#define POLL_MS 1000
/* One statement a round: the acks and drops that came while the previous
 * round's ran, and a claim of the slots free once they are settled, in one
 * commit (a statement each would wait for a WAL flush each).
 * $1 subscription, $2 how many to claim, $3 the ack deadline in
 * microseconds, $4 the settled messages' ids and $5 their states ('done'
 * or 'dropped'), both as array literals ('{}': none). The claim cannot see
 * the settle's writes (a statement's parts share its snapshot), so it
 * leaves the settled rows alone and counts them as settled itself. A
 * delivery with an ordering key waits while an earlier message of its key
 * is unsettled for the subscription ('ready': in flight, or waiting for
 * its retry; done, dropped and dead ones release the key), or a later one
 * has begun (hidden: a transaction that committed out of id order let it
 * go first): one delivery of a key at a time, in publish order, across
 * processes, since a claimed delivery stays 'ready' until its verdict. */
#define ROUND_SQL                                                                                             \
	"WITH v AS (SELECT * FROM unnest($4::text::bigint[], $5::text::text[]) AS v(id, state)), "              \
	"s AS (UPDATE ingot_pubsub.deliveries d SET state = v.state FROM v "                                   \
	"WHERE d.message_id = v.id AND d.subscription = $1) "                                                  \
	"UPDATE ingot_pubsub.deliveries d SET attempts = d.attempts + 1, "                                     \
	"visible_at = now() + $3::bigint * interval '1 microsecond' FROM ingot_pubsub.messages m "             \
	"WHERE m.id = d.message_id AND d.subscription = $1 AND d.message_id IN (SELECT c.message_id FROM "    \
	"ingot_pubsub.deliveries c WHERE c.subscription = $1 AND c.state = 'ready' AND c.visible_at <= now() " \
	"AND c.message_id NOT IN (SELECT id FROM v) "                                                          \
	"AND (c.ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM ingot_pubsub.deliveries e "                  \
	"WHERE e.subscription = $1 AND e.ordering_key = c.ordering_key AND e.state = 'ready' "                 \
	"AND e.message_id <> c.message_id AND e.message_id NOT IN (SELECT id FROM v) "                         \
	"AND (e.message_id < c.message_id OR e.visible_at > now()))) "                                         \
	"ORDER BY c.visible_at LIMIT $2 FOR UPDATE SKIP LOCKED) "                                              \
	"RETURNING d.message_id, d.attempts, m.payload::text, coalesce(m.attributes->>'traceparent', '')"

/* $1 message, $2 subscription, $3 the attempt claimed (a later claim's
 * delivery is left alone), $4 the backoff in microseconds, $5 why. */
#define RETRY_SQL                                                                                     \
	"UPDATE ingot_pubsub.deliveries SET visible_at = now() + $4::bigint * interval '1 microsecond', " \
	"last_error = $5 WHERE message_id = $1 AND subscription = $2 AND attempts = $3 AND state = 'ready'"

/* $1 message, $2 subscription, $3 why, $4 the dead-letter topic ("":
 * none), $5 its subscriptions, $6 its ordering key's member ("": none):
 * the delivery dead (which releases its key), and the message published
 * again on the dead-letter topic with the reason, the subscription, the
 * message's id and the attempts in its attributes. */
#define DEAD_SQL                                                                                             \
	"WITH d AS (UPDATE ingot_pubsub.deliveries SET state = 'dead', last_error = $3 "                      \
	"WHERE message_id = $1 AND subscription = $2 AND state = 'ready' RETURNING message_id, attempts), "   \
	"m AS (INSERT INTO ingot_pubsub.messages (topic, payload, attributes) SELECT $4, o.payload, "          \
	"o.attributes || jsonb_build_object('reason', $3::text, 'subscription', $2::text, "                   \
	"'message_id', o.id, 'attempts', d.attempts) FROM ingot_pubsub.messages o JOIN d ON o.id = d.message_id " \
	"WHERE $4 <> '' RETURNING id, payload), "                                                             \
	"x AS (INSERT INTO ingot_pubsub.deliveries (message_id, subscription, ordering_key) "                 \
	"SELECT m.id, s, m.payload ->> nullif($6, '') FROM m, unnest(string_to_array($5, ',')) s) "            \
	"SELECT pg_notify('ingot_pubsub', $4) FROM m"

/* Messages a day old whose deliveries are all settled (done or dropped:
 * dead ones are kept for a look) go, their deliveries with them (ON
 * DELETE CASCADE): at the first poll, then every PURGE_POLLS polls. */
#define PURGE_SQL                                                                                      \
	"DELETE FROM ingot_pubsub.messages m WHERE m.published_at < now() - interval '1 day' "          \
	"AND NOT EXISTS (SELECT 1 FROM ingot_pubsub.deliveries d WHERE d.message_id = m.id "             \
	"AND d.state IN ('ready', 'dead'))"
#define PURGE_POLLS 3600

struct sub_run;

/* A round's arena (its verdicts' arrays, its claimed rows), in blocks of
 * ROUND_BLOCK bytes. */
#define ROUND_ARENA (1024 * 1024)
#define ROUND_BLOCK (64 * 1024)

/* One delivery in flight: its task, then its verdict (in its round, or a
 * retry's or a death's statement in its slot's arena). */
struct delivery {
	struct ig_pubsub_delivery base; /* first: record's cast */
	struct sub_run *sub;
	struct delivery *next; /* in its sub_run's to_settle or settling */
	int64_t message_id;
	enum ig_pubsub_outcome outcome;
};

struct sub_run {
	struct ig_pubsub_lane lane; /* first: ig_pubsub_lanes_make's */
	struct delivery *slots; /* max_concurrency of them */
	uint32_t running;
	/* A round's statement runs; a claim was asked for while it ran (a
	   NOTIFY, the poll, a slot freed by a retry's or a death's statement). */
	bool in_round, again;
	ig_arena round_arena;
	/* Acked or dropped: waiting for the next round; in the round whose
	   statement runs (their slots stay busy until it answers). */
	struct delivery *to_settle, *settling;
	struct ig_deferred flush;
};


static struct {
	const struct ig_pubsub_table *table;
	struct sub_run *subs;
	struct http_inproc_worker worker; /* its blocks: every arena here but the rounds' */
	/* The rounds' arenas' blocks: a claim's rows (their values array is
	   6 KiB at 64 rows) fit in one, kept for the next round, where the
	   worker's 4 KiB blocks made the array a mapping of its own, mapped
	   and unmapped twice a claim. */
	struct ig_pool round_blocks;
	struct ig_pg_pool *pool;
	struct ig_timer timer;
	uint32_t polls;
	bool purging;
	ig_arena purge_arena;
} s;

static void log_db_error(const char *msg, const struct sub_run *r, const ig_pg_error *err)
{
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_ERROR, msg)) {
		ig_log_cstr(&l, "subscription", r->lane.sub->name);
		ig_log_cstr(&l, "error", ig_pg_error_name(err->kind));
		ig_log_str(&l, "message", err->message.ptr, err->message.len);
		ig_log_end(&l);
	}
}

/* The claimed row as a task (delivery.c); false when it could not start
 * (the core drains or is full): its deadline will show it again. */
static bool start(struct delivery *d, const ig_pg_result *res, uint32_t row)
{
	d->message_id = ig_pg_at(res, row, 0)->i;
	d->base.attempts = (uint64_t)(int32_t)ig_pg_at(res, row, 1)->i;
	return ig_pubsub_delivery_run(&d->base, &s.worker, ig_pg_at(res, row, 3)->s, ig_pg_at(res, row, 2)->s);
}

static struct delivery *free_slot(struct sub_run *r)
{
	for (uint32_t i = 0; i < r->lane.sub->max_concurrency; i++)
		if (!r->slots[i].base.busy)
			return &r->slots[i];
	return NULL;
}

static void round_start(struct sub_run *r);

/* The round's answer: its verdicts stored (or not: the deadline will show
 * them again) and their slots free, then its claimed rows started, then
 * the next round if verdicts or a claim wait for one. */
static void round_done(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct sub_run *r = arg;
	r->in_round = false;
	if (err)
		log_db_error(r->settling ? "pub/sub verdicts not recorded, nothing claimed: database error"
					 : "pub/sub claim failed: database error",
			     r, err);
	for (struct delivery *d = r->settling, *next; d; d = next) {
		next = d->next;
		if (!err)
			ig_counter_add(&r->lane.stats.delivered[d->outcome], 1);
		d->base.busy = false;
		r->running--;
	}
	r->settling = NULL;
	for (uint32_t i = 0; !err && i < res->rows; i++) {
		struct delivery *d = free_slot(r);
		if (!d)
			break; /* cannot happen: the claim asked for the free slots */
		d->base.busy = true;
		r->running++;
		if (!start(d, res, i)) {
			d->base.busy = false;
			r->running--;
		}
	}
	/* After an error only verdicts go on (a claim waits for the poll). */
	if (r->to_settle || (r->again && !err))
		round_start(r);
}

/* Sends a round: the waiting acks and drops, and a claim of the slots free
 * once they are settled (none while the core drains). Unless a round runs:
 * its answer sends the next. The acks come deferred to the end of the
 * loop's batch, so the deliveries that ended in one batch share a round. */
static void round_start(struct sub_run *r)
{
	if (!r->slots)
		return;
	if (r->in_round) {
		r->again = true;
		return;
	}
	size_t n = 0;
	for (const struct delivery *d = r->to_settle; d; d = d->next)
		n++;
	uint32_t room = s.worker.core->draining ? 0 : r->lane.sub->max_concurrency - r->running + (uint32_t)n;
	if (n == 0 && room == 0)
		return; /* a slot's end starts the next round */
	r->again = false;
	r->in_round = true;
	r->settling = r->to_settle;
	r->to_settle = NULL;
	ig_arena_reset(&r->round_arena);
	char *ids = ig_arena_alloc(&r->round_arena, n * 21 + 3), *states = ig_arena_alloc(&r->round_arena, n * 8 + 3);
	if (!ids || !states) {
		static const ig_pg_error full = { .kind = IG_PG_TOO_LARGE, .message = IG_STR("the round's verdicts do not fit its arena") };
		round_done(NULL, &full, r);
		return;
	}
	size_t ni = 0, ns = 0;
	ids[ni++] = states[ns++] = '{';
	for (const struct delivery *d = r->settling; d; d = d->next) {
		if (d != r->settling)
			ids[ni++] = states[ns++] = ',';
		ni += ig_fmt_i64(ids + ni, d->message_id);
		const char *st = d->outcome == IG_PUBSUB_OUT_ACK ? "done" : "dropped";
		memcpy(states + ns, st, strlen(st));
		ns += strlen(st);
	}
	ids[ni++] = states[ns++] = '}';
	const ig_pg_value p[5] = { ig_pg_text((ig_str){ r->lane.sub->name, strlen(r->lane.sub->name) }),
				   ig_pg_int4((int32_t)room), ig_pg_int8((int64_t)r->lane.sub->ack_deadline_us),
				   ig_pg_text((ig_str){ ids, ni }), ig_pg_text((ig_str){ states, ns }) };
	ig_pg_pool_query(s.pool, &r->round_arena, ROUND_SQL, p, 5, round_done, r);
}

/* A running round's answer sends what waits (no claim is asked for). */
static void on_flush(struct ig_deferred *f)
{
	struct sub_run *r = (struct sub_run *)((char *)f - offsetof(struct sub_run, flush));
	if (!r->in_round)
		round_start(r);
}

static void settled(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct delivery *d = arg;
	struct sub_run *r = d->sub;
	(void)res;
	if (err) /* the deadline will make it visible again */
		log_db_error("pub/sub verdict not recorded: database error", r, err);
	else
		ig_counter_add(&r->lane.stats.delivered[d->outcome], 1);
	d->base.busy = false;
	r->running--;
	round_start(r);
}

static void record(struct ig_pubsub_delivery *base, enum ig_pubsub_outcome outcome, const char *why)
{
	struct delivery *d = (struct delivery *)base;
	const struct ig_pubsub_subscription *sub = d->sub->lane.sub;
	int32_t attempts = (int32_t)base->attempts; /* as claimed: an int4 */
	d->outcome = outcome;
	ig_arena_reset(&base->arena);
	ig_str name = { sub->name, strlen(sub->name) };
	if (outcome == IG_PUBSUB_OUT_ACK || outcome == IG_PUBSUB_OUT_DROP) {
		d->next = d->sub->to_settle;
		d->sub->to_settle = d;
		ig_loop_defer(&s.worker.core->loop, &d->sub->flush);
	} else if (outcome == IG_PUBSUB_OUT_RETRY) {
		const ig_pg_value p[5] = { ig_pg_int8(d->message_id), ig_pg_text(name), ig_pg_int4(attempts),
					   ig_pg_int8((int64_t)ig_pubsub_backoff_us(sub, base->attempts)),
					   ig_pg_text((ig_str){ why, strlen(why) }) };
		ig_pg_pool_query(s.pool, &base->arena, RETRY_SQL, p, 5, settled, d);
		/* a poll soon enough for the backoff's end */
		uint64_t due = ig_monotonic_us() / 1000 + ig_pubsub_backoff_us(sub, base->attempts) / 1000 + 1;
		ig_timer_set_lazy(&s.worker.core->loop.timers, &s.timer, due);
	} else {
		const char *dl = sub->dead_letter ? sub->dead_letter->name : "";
		const char *dl_subs = sub->dead_letter ? sub->dead_letter->subscriptions : "";
		const char *dl_key = sub->dead_letter && sub->dead_letter->ordering_key ? sub->dead_letter->ordering_key : "";
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_WARN, "pub/sub delivery dead")) {
			ig_log_cstr(&l, "subscription", sub->name);
			ig_log_int(&l, "message_id", d->message_id);
			ig_log_int(&l, "attempts", attempts);
			ig_log_cstr(&l, "reason", why);
			ig_log_end(&l);
		}
		const ig_pg_value p[6] = { ig_pg_int8(d->message_id), ig_pg_text(name),
					   ig_pg_text((ig_str){ why, strlen(why) }), ig_pg_text((ig_str){ dl, strlen(dl) }),
					   ig_pg_text((ig_str){ dl_subs, strlen(dl_subs) }),
					   ig_pg_text((ig_str){ dl_key, strlen(dl_key) }) };
		ig_pg_pool_query(s.pool, &base->arena, DEAD_SQL, p, 6, settled, d);
	}
}

static void on_notify(ig_str channel, ig_str topic, void *arg)
{
	(void)channel;
	(void)arg;
	for (size_t i = 0; i < s.table->nsubs; i++) {
		const char *t = s.subs[i].lane.sub->topic->name;
		if (strlen(t) == topic.len && memcmp(t, topic.ptr, topic.len) == 0)
			round_start(&s.subs[i]);
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
	if (s.worker.core->draining)
		return;
	if (s.polls++ % PURGE_POLLS == 0 && !s.purging) {
		s.purging = true;
		ig_arena_reset(&s.purge_arena);
		ig_pg_pool_query(s.pool, &s.purge_arena, PURGE_SQL, NULL, 0, purged, NULL);
	}
	for (size_t i = 0; i < s.table->nsubs; i++)
		round_start(&s.subs[i]);
	ig_timer_set(&s.worker.core->loop.timers, &s.timer, ig_monotonic_us() / 1000 + POLL_MS);
}

static bool prepare(const struct ig_pubsub_table *table)
{
	if (!ig_pubsub_config.consume || !table->nsubs || !ig_pg_configured || !ig_pg_configured() || !ig_pg_pool_query || !ig_pg_core_pool)
		return false;
	s.table = table;
	if (!(s.subs = ig_pubsub_lanes_make(table, sizeof *s.subs)))
		return false;
	ig_pubsub_delivery_lanes(table, &s.subs[0].lane, sizeof s.subs[0]);
	return true;
}

static void core_start(struct ig_loop *loop, int core_count)
{
	(void)core_count;
	if (loop->core != 0 || !s.subs)
		return;
	ig_http_inproc_worker_init(&s.worker, loop, 4096);
	s.pool = ig_pg_core_pool(loop);
	if (!s.pool)
		return;
	ig_arena_init(&s.purge_arena, &s.worker.blocks, 16 * 1024);
	ig_pool_init(&s.round_blocks, ROUND_BLOCK, 1, s.table->nsubs * (ROUND_ARENA / ROUND_BLOCK));
	for (size_t i = 0; i < s.table->nsubs; i++) {
		struct sub_run *r = &s.subs[i];
		r->slots = calloc(r->lane.sub->max_concurrency, sizeof *r->slots);
		if (!r->slots)
			continue;
		ig_arena_init(&r->round_arena, &s.round_blocks, ROUND_ARENA);
		r->flush.fn = on_flush;
		for (uint32_t k = 0; k < r->lane.sub->max_concurrency; k++) {
			struct delivery *d = &r->slots[k];
			d->sub = r;
			ig_pubsub_delivery_init(&d->base, &s.worker, &r->lane, record, 64 * 1024);
		}
	}
	if (ig_pg_listen(loop, "ingot_pubsub", on_notify, NULL) != 0) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_WARN, "pub/sub: no LISTEN: deliveries wait for the poll"))
			ig_log_end(&l);
	}
	s.timer.fn = on_timer;
	ig_timer_set(&s.worker.core->loop.timers, &s.timer, ig_monotonic_us() / 1000);
}

const struct ig_pubsub_consumer_ops ig_pubsub_consumer_ops = {
	.prepare = prepare,
	.core_start = core_start,
};
