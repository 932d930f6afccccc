/* A core's pool of PostgreSQL connections: INGOT_PG_POOL_SIZE of them,
 * opened when the core starts and kept open (reconnected with backoff from
 * 50 ms, doubling to 1 s, after a loss); a query goes to the connection
 * of the batch's previous one while that write has not left, else to the
 * ready connection with the fewest in flight, up to INGOT_PG_PIPELINING;
 * beyond that (until a full connection is half empty, so that waiters
 * leave together), or while none is up, it waits in a bounded queue for at most
 * INGOT_PG_ACQUIRE_TIMEOUT_MS. A held connection (a transaction) takes
 * nothing else until it is given back. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingot/log.h"
#include "ingot/http.h"

#define BACKOFF_FIRST_MS 50
#define BACKOFF_MAX_MS 1000

static const struct ig_pg_settings_values *cfg(void) { return &ig_pg_settings_values; }

static struct ig_pg_pool *pool_of_timer(struct ig_timer *t, size_t off)
{
	return (struct ig_pg_pool *)((char *)t - off);
}

static void arm_wait_timer(struct ig_pg_pool *p)
{
	struct ig_timers *w = &p->core->loop->timers;
	if (p->wait_head)
		ig_timer_set_lazy(w, &p->wait_timer, p->wait_head->deadline_ms);
	else
		ig_timer_cancel(w, &p->wait_timer);
}

static struct pg_query *pop_waiter(struct ig_pg_pool *p)
{
	struct pg_query *q = IG_FIFO_POP(p->wait_head, p->wait_tail);
	if (q)
		p->waiting--;
	return q;
}

static void on_wait_timer(struct ig_timer *t)
{
	struct ig_pg_pool *p = pool_of_timer(t, offsetof(struct ig_pg_pool, wait_timer));
	uint64_t now = pg_now_ms(p->core);
	while (p->wait_head && p->wait_head->deadline_ms <= now) {
		struct pg_query *q = pop_waiter(p);
		ig_pg_query_set_error(q, IG_PG_UNAVAILABLE, "no database connection became available in time");
		ig_pg_query_deliver(p->core, q);
	}
	arm_wait_timer(p);
}

static void on_retry_timer(struct ig_timer *t)
{
	struct ig_pg_pool *p = pool_of_timer(t, offsetof(struct ig_pg_pool, retry_timer));
	/* Doubles on each try until one connects (ig_pg_pool_conn_up). */
	p->backoff_ms = p->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : p->backoff_ms * 2;
	for (uint32_t i = 0; i < p->size; i++)
		if (p->conns[i] && p->conns[i]->state == PGC_IDLE && !p->conns[i]->held_lost)
			ig_pg_conn_start(p->conns[i]);
	if (p->listener && p->listener->state == PGC_IDLE)
		ig_pg_conn_start(p->listener);
}

static void schedule_retry(struct ig_pg_pool *p)
{
	if (!ig_timer_armed(&p->retry_timer))
		ig_timer_set(&p->core->loop->timers, &p->retry_timer, pg_now_ms(p->core) + p->backoff_ms);
}

void ig_pg_pool_init(struct ig_pg_pool *p, struct pg_core *c)
{
	p->core = c;
	p->size = cfg()->pool_size ? cfg()->pool_size : 1;
	if (p->size > PG_MAX_POOL)
		p->size = PG_MAX_POOL;
	p->backoff_ms = BACKOFF_FIRST_MS;
	p->wait_timer.fn = on_wait_timer;
	p->retry_timer.fn = on_retry_timer;
}

static bool pool_started(const struct ig_pg_pool *p) { return p->conns[0] != NULL; }

static const struct pg_conn_owner_ops pool_conn_ops;

void ig_pg_pool_start(struct ig_pg_pool *p)
{
	if (!ig_pg_configured_flag || pool_started(p))
		return;
	for (uint32_t i = 0; i < p->size; i++) {
		p->conns[i] = ig_pg_conn_new(p->core, PGR_POOL, &pool_conn_ops, p);
		if (!p->conns[i])
			break;
	}
	for (uint32_t i = 0; i < p->size && p->conns[i]; i++)
		if (p->conns[i]->state == PGC_IDLE)
			ig_pg_conn_start(p->conns[i]);
}

static bool takes_queries(const struct pg_conn *k)
{
	return k && k->state == PGC_READY && !k->held && k->inflight < cfg()->pipelining && !ig_pg_conn_cancelling(k);
}

/* The connection the last query went to while its write has not left
 * (the same loop batch, or one waiting for its earlier queries' answers:
 * ig_pg_conn_flush_deferred), under the pipelining limit and for at most
 * PG_BATCH_QUERIES: the queries of a batch (a request's 20) then leave in
 * one write and come back together, one read and one wakeup where they
 * would cost one per connection; a bigger batch (many requests' queries)
 * is spread, so that a server with several cores runs it in parallel.
 * Else the ready connection with the fewest queries in flight; NULL when
 * none. */
static struct pg_conn *pick(struct ig_pg_pool *p)
{
	if (takes_queries(p->last) && p->last->out.len > 0 && p->last_batch < PG_BATCH_QUERIES)
		return p->last;
	struct pg_conn *best = NULL;
	for (uint32_t i = 0; i < p->size; i++) {
		struct pg_conn *k = p->conns[i];
		if (!takes_queries(k))
			continue;
		if (!best || k->inflight < best->inflight) {
			best = k;
			if (!k->inflight)
				break;
		}
	}
	return best;
}

static void assign(struct ig_pg_pool *p, struct pg_conn *k, struct pg_query *q)
{
	if (q->kind == PGQ_HOLD) {
		k->held = true;
		k->held_arena = q->arena;
	}
	p->last_batch = k == p->last && k->out.len > 0 ? p->last_batch + 1 : 1;
	p->last = k;
	if (!ig_pg_conn_send(k, q)) {
		if (q->kind == PGQ_HOLD)
			k->held = false;
		ig_pg_fail_later(p->core, q, IG_PG_TOO_LARGE, "the query does not fit in a message");
	}
}

static void drain(struct ig_pg_pool *p)
{
	struct pg_conn *k;
	while (p->wait_head && (k = pick(p)))
		assign(p, k, pop_waiter(p));
	arm_wait_timer(p);
}

static bool any_ready(const struct ig_pg_pool *p)
{
	for (uint32_t i = 0; i < p->size; i++)
		if (p->conns[i] && p->conns[i]->state == PGC_READY)
			return true;
	return false;
}

static ig_str copy_message(ig_arena *a, const char *m)
{
	size_t n = strlen(m);
	char *c = a ? ig_arena_alloc(a, n + 1) : NULL;
	if (!c)
		return (ig_str){ "database connection failed", 26 };
	memcpy(c, m, n + 1);
	return (ig_str){ c, n };
}

/* Authentication and TLS failures will not mend by waiting: the waiters
 * hear them now. */
static bool fail_fast(const struct ig_pg_pool *p)
{
	return (p->last_kind == IG_PG_AUTH || p->last_kind == IG_PG_TLS) && !any_ready(p);
}

static void fail_with_last(struct ig_pg_pool *p, struct pg_query *q, bool later)
{
	ig_pg_query_set_error(q, p->last_kind, "");
	q->err.message = copy_message(q->arena, p->last_message);
	if (later)
		ig_pg_fail_later(p->core, q, p->last_kind, "");
	else
		ig_pg_query_deliver(p->core, q);
}

void ig_pg_pool_submit(struct ig_pg_pool *p, struct pg_query *q)
{
	if (!ig_pg_configured_flag) {
		ig_pg_fail_later(p->core, q, IG_PG_NOT_CONFIGURED, "no database configured");
		return;
	}
	ig_pg_pool_start(p);
	struct pg_conn *k = p->wait_head ? NULL : pick(p);
	if (k) {
		assign(p, k, q);
		return;
	}
	if (fail_fast(p)) {
		fail_with_last(p, q, true);
		return;
	}
	if (p->waiting >= cfg()->max_queued) {
		ig_pg_fail_later(p->core, q, IG_PG_BUSY, "too many queries waiting for a database connection");
		return;
	}
	q->deadline_ms = pg_now_ms(p->core) + cfg()->acquire_timeout_ms;
	IG_FIFO_PUSH(p->wait_head, p->wait_tail, q);
	p->waiting++;
	arm_wait_timer(p);
}

/* Pool size x cores, and a LISTEN connection per core that has one,
 * against the server's max_connections, once per process, from the first
 * connection of whichever core connects first: a line at startup when
 * they would not fit, before queries start failing. Not core 0's: when the
 * slots run out, core 0 may be the one that gets none. The listeners are
 * asked for by the cores' start hooks (Pub/Sub's consumers), which run as
 * each core starts, beside the others: a core that is still starting when
 * the first connects may not be counted yet. */
static void on_max_connections(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct ig_pg_pool *p = arg;
	if (!err && res->rows == 1 && res->cols == 1 && !res->values[0].null) {
		char digits[24] = "";
		ig_str v = res->values[0].s;
		memcpy(digits, v.ptr, v.len < sizeof digits - 1 ? v.len : sizeof digits - 1);
		long max = strtol(digits, NULL, 10);
		long listeners = (long)atomic_load(&ig_pg_global->listeners);
		unsigned cores = atomic_load_explicit(&ig_pg_global->cores, memory_order_relaxed);
		long want = (long)p->size * (cores ? cores : 1) + listeners;
		if (max > 0 && want > max) {
			struct ig_logline l;
			if (ig_log_begin(&l, IG_LOG_WARN,
					 "the database's max_connections is below INGOT_PG_POOL_SIZE x cores + LISTEN connections")) {
				ig_log_int(&l, "max_connections", max);
				ig_log_int(&l, "pool_size", p->size);
				ig_log_int(&l, "cores", cores);
				ig_log_int(&l, "listeners", listeners);
				ig_log_end(&l);
			}
		}
	}
	ig_arena_reset(&p->core->scratch);
}

static void check_max_connections(struct ig_pg_pool *p, struct pg_conn *k)
{
	if (atomic_exchange(&ig_pg_global->max_connections_checked, true))
		return;
	struct pg_query *q = ig_pg_query_new(p->core);
	if (!q)
		return;
	q->kind = PGQ_SIMPLE;
	q->sql = "SHOW max_connections";
	q->sql_len = strlen(q->sql);
	q->arena = &p->core->scratch;
	q->done = on_max_connections;
	q->arg = p;
	if (!ig_pg_conn_send(k, q))
		ig_pg_query_free(p->core, q);
}

void (*ig_pg_schema_check)(struct ig_pg_pool *p, int backend);

void ig_pg_pool_conn_up(struct ig_pg_pool *p)
{
	p->backoff_ms = BACKOFF_FIRST_MS;
	p->last_kind = IG_PG_OK;
	if (p->outage_logged) {
		p->outage_logged = false;
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_INFO, "database reachable")) {
			ig_pg_log_peer(&l);
			ig_log_end(&l);
		}
	}
	if (!p->connected_once) {
		p->connected_once = true;
		if (ig_pg_global->backend_id > 0) {
			if (ig_pg_schema_check)
				ig_pg_schema_check(p, ig_pg_global->backend_id - 1);
			else
				ig_backend_set_up(ig_pg_global->backend_id - 1, true);
		}
	}
}

static void pool_conn_up(void *owner, struct pg_conn *k)
{
	struct ig_pg_pool *p = owner;
	struct ig_logline l;
	if (ig_unlikely(ig_log_enabled(IG_LOG_DEBUG)) && ig_log_begin(&l, IG_LOG_DEBUG, "database connection ready")) {
		ig_pg_log_peer(&l);
		ig_log_end(&l);
	}
	ig_pg_pool_conn_up(p);
	check_max_connections(p, k);
	drain(p);
}

static void pool_conn_room(void *owner, struct pg_conn *k)
{
	(void)k;
	struct ig_pg_pool *p = owner;
	/* A freed slot takes a waiter at once: its bytes stay in the
	   connection's buffer until the queries written before are all
	   answered (ig_pg_conn_flush_deferred), so the waiters still
	   leave together, in one write. */
	if (p->wait_head)
		drain(p);
}

void ig_pg_pool_conn_lost(struct ig_pg_pool *p, struct pg_conn *k, bool was_ready, enum ig_pg_error_kind kind,
		       const char *message)
{
	/* A connect that failed, once per outage (the retries that follow
	   say nothing more until one gets through): without it a database
	   out of reach would show only as 503s and a /readyz that stays 503.
	   A lost ready connection has said so itself (ig_pg_conn_close). */
	if (!was_ready && kind != IG_PG_AUTH && kind != IG_PG_TLS && !p->outage_logged) {
		p->outage_logged = true;
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_WARN, "database unreachable")) {
			ig_pg_log_peer(&l);
			ig_log_cstr(&l, "reason", message);
			ig_log_end(&l);
		}
	}
	if (kind == IG_PG_AUTH || kind == IG_PG_TLS) {
		if (p->last_kind != kind || strcmp(p->last_message, message)) {
			struct ig_logline l;
			if (ig_log_begin(&l, IG_LOG_ERROR, "database connection refused")) {
				ig_pg_log_peer(&l);
				ig_log_cstr(&l, "reason", message);
				ig_log_end(&l);
			}
		}
		p->last_kind = kind;
		snprintf(p->last_message, sizeof p->last_message, "%s", message);
		while (fail_fast(p) && p->wait_head)
			fail_with_last(p, pop_waiter(p), false);
		arm_wait_timer(p);
	}
	if (k->held) {
		k->held_lost = true; /* reconnected once its holder gives it back */
		return;
	}
	schedule_retry(p);
}

static void pool_conn_lost(void *owner, struct pg_conn *k, bool was_ready, enum ig_pg_error_kind kind,
			   const char *message)
{
	ig_pg_pool_conn_lost(owner, k, was_ready, kind, message);
}

static void pool_conn_notify(void *owner, struct pg_conn *k, ig_str channel, ig_str payload)
{
	(void)k;
	struct ig_pg_pool *p = owner;
	if (p->listen_notify)
		p->listen_notify(p, channel, payload);
}

static const struct pg_conn_owner_ops pool_conn_ops = {
	.up = pool_conn_up,
	.room = pool_conn_room,
	.lost = pool_conn_lost,
	.notify = pool_conn_notify,
};

void ig_pg_pool_release(struct ig_pg_pool *p, struct pg_conn *k)
{
	k->held = false;
	if (k->held_lost) {
		k->held_lost = false;
		schedule_retry(p);
		return;
	}
	drain(p);
}
