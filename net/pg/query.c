/* The query API of include/ingot/pg.h: a query's state taken from the core's
 * pool, its parameters copied into the caller's arena, then handed to the
 * core's pool of connections (pool.c) or to a held connection (a
 * transaction). A failure's HTTP answer and log line are errors.c's. */
#include "internal.h"

#include <string.h>

static bool copy_params(struct pg_query *q, const ig_pg_value *params, size_t n)
{
	if (n > PG_MAX_PARAMS)
		return false;
	q->nparams = (uint16_t)n;
	if (!n)
		return true;
	ig_pg_value *v = ig_arena_alloc(q->arena, n * sizeof *v);
	if (!v)
		return false;
	memcpy(v, params, n * sizeof *v);
	for (size_t i = 0; i < n; i++) {
		/* a string's bytes may be on the caller's stack */
		if (pg_value_has_bytes(&v[i]) && v[i].s.len) {
			char *s = ig_arena_alloc(q->arena, v[i].s.len);
			if (!s)
				return false;
			memcpy(s, v[i].s.ptr, v[i].s.len);
			v[i].s.ptr = s;
		}
	}
	q->params = v;
	return true;
}

static struct pg_query *make(struct pg_core *c, ig_arena *arena, enum pg_query_kind kind, const char *sql,
			     ig_pg_done *done, void *arg)
{
	struct pg_query *q = ig_pg_query_new(c);
	if (!q)
		return NULL;
	q->kind = kind;
	q->arena = arena;
	q->sql = sql;
	q->sql_len = sql ? strlen(sql) : 0;
	q->done = done;
	q->arg = arg;
	return q;
}

/* Checks and copies the parameters; false when q failed (later). */
static bool prepare_params(struct pg_core *c, struct pg_query *q, const ig_pg_value *params, size_t n)
{
	for (size_t i = 0; i < n && i < PG_MAX_PARAMS; i++) {
		if (!ig_pg_param_valid(&params[i])) {
			ig_pg_fail_later(c, q, IG_PG_BAD_PARAMS, "a parameter cannot be sent as its type");
			return false;
		}
	}
	if (!copy_params(q, params, n)) {
		ig_pg_fail_later(c, q, n > PG_MAX_PARAMS ? IG_PG_BAD_PARAMS : IG_PG_TOO_LARGE,
			      n > PG_MAX_PARAMS ? "too many parameters" : "the parameters do not fit in the arena");
		return false;
	}
	return true;
}

/* Only when memory is short is there no query to fail: the caller hears
 * it at once (a per-core pool of 2^20 queries is exhausted). */
static void out_of_queries(const char *sql, ig_pg_done *done, void *arg)
{
	ig_pg_error e = { .kind = IG_PG_BUSY, .message = IG_STR("too many queries in flight"),
			  .query = { sql, strlen(sql) } };
	if (done)
		done(NULL, &e, arg);
}

struct ig_pg_pool *ig_pg_core_pool(struct ig_loop *loop)
{
	struct pg_core *c = ig_pg_core_of(loop);
	return c ? &c->pool : NULL;
}

static void pool_query(struct ig_pg_pool *pool, ig_arena *arena, const char *sql, const ig_pg_value *params,
		       size_t nparams, ig_pg_done *done, void *arg, bool read_only)
{
	struct pg_query *q = pool ? make(pool->core, arena, PGQ_EXTENDED, sql, done, arg) : NULL;
	if (!q) {
		out_of_queries(sql, done, arg);
		return;
	}
	q->read_only = read_only;
	if (prepare_params(pool->core, q, params, nparams))
		ig_pg_pool_submit(pool, q);
}

void ig_pg_pool_query(struct ig_pg_pool *pool, ig_arena *arena, const char *sql, const ig_pg_value *params,
		      size_t nparams, ig_pg_done *done, void *arg)
{
	pool_query(pool, arena, sql, params, nparams, done, arg, false);
}

void ig_pg_pool_read(struct ig_pg_pool *pool, ig_arena *arena, const char *sql, const ig_pg_value *params,
		     size_t nparams, ig_pg_done *done, void *arg)
{
	pool_query(pool, arena, sql, params, nparams, done, arg, true);
}

void ig_pg_query(ig_ctx *ctx, const char *sql, const ig_pg_value *params, size_t nparams, ig_pg_done *done,
		 void *arg)
{
	pool_query(ig_pg_core_pool(ig_ctx_loop(ctx)), ig_ctx_arena(ctx), sql, params, nparams, done, arg, false);
}

void ig_pg_read(ig_ctx *ctx, const char *sql, const ig_pg_value *params, size_t nparams, ig_pg_done *done,
		void *arg)
{
	pool_query(ig_pg_core_pool(ig_ctx_loop(ctx)), ig_ctx_arena(ctx), sql, params, nparams, done, arg, true);
}

/* ---- held connections ---- */

static void hold(struct ig_pg_pool *pool, ig_arena *arena, bool begin, ig_pg_tx_ready *ready, void *arg)
{
	struct pg_query *q = pool ? make(pool->core, arena, PGQ_HOLD, NULL, NULL, arg) : NULL;
	if (!q) {
		static const ig_pg_error e = { .kind = IG_PG_BUSY, .message = IG_STR_INIT("too many queries in flight") };
		ready(NULL, &e, arg);
		return;
	}
	q->ready = ready;
	q->begin = begin;
	ig_pg_pool_submit(pool, q);
}

void ig_pg_pool_begin(struct ig_pg_pool *pool, ig_arena *arena, ig_pg_tx_ready *ready, void *arg)
{
	hold(pool, arena, true, ready, arg);
}

void ig_pg_pool_hold(struct ig_pg_pool *pool, ig_arena *arena, ig_pg_tx_ready *ready, void *arg)
{
	hold(pool, arena, false, ready, arg);
}

void ig_pg_begin(ig_ctx *ctx, ig_pg_tx_ready *ready, void *arg)
{
	ig_pg_pool_begin(ig_pg_core_pool(ig_ctx_loop(ctx)), ig_ctx_arena(ctx), ready, arg);
}

static void tx_send(struct pg_conn *k, struct pg_query *q)
{
	if (k->state != PGC_READY || k->held_lost) {
		ig_pg_fail_later(k->core, q, IG_PG_CONNECTION_LOST, "the connection to the database was lost");
		return;
	}
	if (!ig_pg_conn_send(k, q))
		ig_pg_fail_later(k->core, q, IG_PG_TOO_LARGE, "the query does not fit in a message");
}

void ig_pg_tx_query(ig_pg_tx *tx, const char *sql, const ig_pg_value *params, size_t nparams, ig_pg_done *done,
		    void *arg)
{
	struct pg_conn *k = (struct pg_conn *)tx;
	struct pg_query *q = make(k->core, k->held_arena, PGQ_EXTENDED, sql, done, arg);
	if (!q) {
		out_of_queries(sql, done, arg);
		return;
	}
	if (prepare_params(k->core, q, params, nparams))
		tx_send(k, q);
}

void ig_pg_tx_simple(ig_pg_tx *tx, const char *sql, ig_pg_done *done, void *arg)
{
	struct pg_conn *k = (struct pg_conn *)tx;
	struct pg_query *q = make(k->core, k->held_arena, PGQ_SIMPLE, sql, done, arg);
	if (!q) {
		out_of_queries(sql, done, arg);
		return;
	}
	tx_send(k, q);
}

static void end_tx(ig_pg_tx *tx, const char *sql, bool commit, ig_pg_done *done, void *arg)
{
	struct pg_conn *k = (struct pg_conn *)tx;
	struct pg_query *q = make(k->core, k->held_arena, PGQ_SIMPLE, sql, done, arg);
	if (!q) {
		ig_pg_pool_release(&k->core->pool, k);
		out_of_queries(sql, done, arg);
		return;
	}
	q->commit = commit;
	q->release_after = true;
	if (k->state != PGC_READY || k->held_lost) {
		ig_pg_pool_release(&k->core->pool, k);
		ig_pg_fail_later(k->core, q, IG_PG_CONNECTION_LOST, "the connection to the database was lost");
		return;
	}
	if (!ig_pg_conn_send(k, q)) {
		ig_pg_pool_release(&k->core->pool, k);
		ig_pg_fail_later(k->core, q, IG_PG_TOO_LARGE, "cannot write the statement");
	}
}

void ig_pg_commit(ig_pg_tx *tx, ig_pg_done *done, void *arg) { end_tx(tx, "COMMIT", true, done, arg); }
void ig_pg_rollback(ig_pg_tx *tx, ig_pg_done *done, void *arg) { end_tx(tx, "ROLLBACK", false, done, arg); }

void ig_pg_release(ig_pg_tx *tx)
{
	struct pg_conn *k = (struct pg_conn *)tx;
	if (k->state == PGC_READY && !k->held_lost && k->tx_status != 'I') {
		/* Inside a transaction: rolled back before anyone else uses it
		   (ReadyForQuery's status is that of the last query answered;
		   one still in flight may open one, so ROLLBACK whenever in
		   doubt is harmless: outside a transaction it only warns). */
		struct pg_query *q = make(k->core, NULL, PGQ_SIMPLE, "ROLLBACK", NULL, NULL);
		if (q) {
			q->internal = true;
			if (!ig_pg_conn_send(k, q))
				ig_pg_query_free(k->core, q);
		}
	}
	ig_pg_pool_release(&k->core->pool, k);
}

bool ig_pg_configured(void)
{
	return ig_pg_configured_flag;
}
