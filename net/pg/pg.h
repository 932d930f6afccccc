/* PostgreSQL on the core's own loop: the public API of net/pg.
 *
 * A per-core pool of connections speaks the frontend/backend protocol v3
 * (extended query protocol, statements prepared once per connection and
 * cached by SQL text, many queries pipelined on a connection, each with its
 * own Sync). Everything belongs to the calling core: callbacks run on the
 * loop that started the query; rows and errors land in the caller's arena;
 * a query's state comes from a per-core pool (no malloc per query).
 *
 * Inside a handler: start queries with ig_pg_query, return IG_PENDING, and
 * call ig_finish from the last completion (see README, "Database"). */
#ifndef NET_PG_PG_H
#define NET_PG_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/runtime/ingot.h"
#include "net/http/exchange.h"
#include "net/pg/types.h"

struct ig_loop;

/* ---- values: parameters and result columns ----
 * struct ig_pg_value, the IG_PG_<TYPE> oids (IG_PG_INT4, IG_PG_TEXT, ...)
 * and the constructors (ig_pg_int4(v), ig_pg_text(s), ig_pg_null(oid),
 * ...) are net/pg/types.h's. In a result, s points into the query's arena;
 * a column of a type types.h does not know arrives as its text in s, with
 * its own oid. */

/* ---- errors ---- */

enum ig_pg_error_kind {
	IG_PG_OK = 0,
	IG_PG_NOT_CONFIGURED,  /* no DATABASE_URL / PGHOST / PGDATABASE */
	IG_PG_UNAVAILABLE,     /* no connection came up within the acquire timeout */
	IG_PG_BUSY,            /* the pool's wait queue is full */
	IG_PG_CONNECT,         /* refused, unreachable, connect timeout */
	IG_PG_AUTH,            /* authentication failed or is not supported */
	IG_PG_TLS,             /* SSL refused by the server, handshake or certificate */
	IG_PG_SERVER,          /* an ErrorResponse: sqlstate says which */
	IG_PG_CONNECTION_LOST, /* the connection closed with the query in flight */
	IG_PG_TIMEOUT,         /* the query timeout passed: it was cancelled */
	IG_PG_PROTOCOL,        /* a malformed or unexpected message from the server */
	IG_PG_TOO_LARGE,       /* a message over INGOT_PG_MAX_MESSAGE_BYTES, or a
	                          result the arena cannot hold */
	IG_PG_BAD_PARAMS,      /* a parameter net/pg cannot encode, too many, ... */
	IG_PG_ABORTED,         /* the transaction had failed: COMMIT rolled back */
};
#define IG_PG_ERROR_KINDS (IG_PG_ABORTED + 1)
/* "not_configured", "unavailable", ...: for logs and metrics labels. */
const char *ig_pg_error_name(enum ig_pg_error_kind kind);

/* sqlstate: five characters and a NUL ("" unless kind is IG_PG_SERVER).
 * message: the server's, or net/pg's own for the other kinds; detail and
 * constraint may be empty. The strings are in the query's arena, or static;
 * none ever holds the password. */
typedef struct ig_pg_error {
	enum ig_pg_error_kind kind;
	char sqlstate[6];
	ig_str message, detail, constraint;
} ig_pg_error;

/* ---- results ---- */

/* rows x cols values, row-major, and the column names, in the arena.
 * affected: the count of the command tag ("UPDATE 3": 3; 0 when none);
 * tag: the whole command tag ("SELECT 1"). For a simple query of several
 * statements (ig_pg_simple), the last statement's result. */
typedef struct ig_pg_result {
	uint32_t rows, cols;
	const ig_pg_value *values;
	const ig_str *names;
	uint64_t affected;
	ig_str tag;
} ig_pg_result;

static inline const ig_pg_value *ig_pg_at(const ig_pg_result *r, uint32_t row, uint32_t col)
{
	return &r->values[(size_t)row * r->cols + col];
}

/* A query's completion: exactly one of res and err is non-NULL. Runs once,
 * on the loop that started the query, never inside the call that started
 * it (an immediate failure is delivered after the current batch). Both
 * live in the query's arena (res) or until done returns (err's struct; its
 * strings stay in the arena). */
typedef void ig_pg_done(void *arg, const ig_pg_result *res, const ig_pg_error *err);

/* ---- queries ----
 *
 * sql: one statement, parameters $1..$n. sql must stay valid until done
 * has run (a literal, usually). params are copied (with what their s
 * points to) before the call returns: a stack array will do. At most 256
 * parameters. Results: bool, int2/4/8, float4/8, uuid, date, timestamp(tz),
 * bytea, json(b) and text arrive decoded per ig_pg_value; a NULL column has
 * null set and its oid. Up to INGOT_PG_PIPELINING queries are in flight on
 * a connection; a failing query does not fail the others. Queries given to
 * a connection whose written ones are still unanswered leave together once
 * their answers came: one write for many requests' queries. */

struct ig_pg_pool;

/* In a handler: on the core's pool, rows in ctx's arena. */
void ig_pg_query(ig_ctx *ctx, const char *sql, const ig_pg_value *params, size_t nparams,
		 ig_pg_done *done, void *arg);
/* As ig_pg_query, for a statement without effects (a plain SELECT): reads
 * started together on a connection share one Sync, so the server flushes
 * their answers once instead of once each. A failing read still fails
 * alone: the server skips the reads after it up to the Sync, and each is
 * sent again alone. A query timeout's CancelRequest can stop a later read
 * of the same Sync, which then fails with SQLSTATE 57014. */
void ig_pg_read(ig_ctx *ctx, const char *sql, const ig_pg_value *params, size_t nparams,
		ig_pg_done *done, void *arg);

/* Error -> HTTP: 503 for NOT_CONFIGURED ("no database configured"),
 * UNAVAILABLE, BUSY, CONNECT, AUTH, TLS, CONNECTION_LOST and TIMEOUT; 409
 * for SQLSTATE 23505 (unique violation); 500 otherwise. Answers
 * problem+json with a detail naming what failed (never the password) and
 * FINISHES the exchange, as ig_respond_problem does: from a completion,
 * call it and nothing else (a second ig_finish on a pending exchange may
 * touch one already freed). Returns the status it answered. */
int ig_pg_respond_error(ig_ctx *ctx, const ig_pg_error *err);

/* Outside a request (a background task, `service --migrate`): the pool of
 * the core whose loop this is, made on first use (NULL when memory is
 * short). A program without ig_main's server may make its own loop
 * (ig_loop_init), take its pool here, and run the loop; ig_pg_settings
 * (net/pg/settings.h) must have been parsed. */
struct ig_pg_pool *ig_pg_core_pool(struct ig_loop *loop);
/* As ig_pg_query; the result and the error's strings go into arena, which
 * must stay valid until done has run. */
void ig_pg_pool_query(struct ig_pg_pool *pool, ig_arena *arena, const char *sql,
		      const ig_pg_value *params, size_t nparams, ig_pg_done *done, void *arg);
/* As ig_pg_read, on pool, into arena. */
void ig_pg_pool_read(struct ig_pg_pool *pool, ig_arena *arena, const char *sql,
		     const ig_pg_value *params, size_t nparams, ig_pg_done *done, void *arg);

/* ---- a held connection: transactions and scripts ----
 *
 * ig_pg_tx is one connection taken out of the pool for one user: nothing
 * else is pipelined on it until it is given back (ig_pg_commit,
 * ig_pg_rollback or ig_pg_release). Queries on it run in order. A query
 * that fails inside a transaction aborts it (PostgreSQL's rule): later
 * queries fail with SQLSTATE 25P02 and ig_pg_commit reports IG_PG_ABORTED
 * after rolling back. If the connection is lost, every query on it fails
 * with IG_PG_CONNECTION_LOST; the tx must still be given back. */
typedef struct ig_pg_tx ig_pg_tx;
typedef void ig_pg_tx_ready(void *arg, ig_pg_tx *tx, const ig_pg_error *err); /* tx NULL iff err */

/* Takes a connection and sends BEGIN; ready runs once it has succeeded.
 * Results go into ctx's arena. */
void ig_pg_begin(ig_ctx *ctx, ig_pg_tx_ready *ready, void *arg);
void ig_pg_pool_begin(struct ig_pg_pool *pool, ig_arena *arena, ig_pg_tx_ready *ready, void *arg);
/* Takes a connection without BEGIN (session-level work: an advisory lock
 * held across several transactions, as migrations do). */
void ig_pg_pool_hold(struct ig_pg_pool *pool, ig_arena *arena, ig_pg_tx_ready *ready, void *arg);

void ig_pg_tx_query(ig_pg_tx *tx, const char *sql, const ig_pg_value *params, size_t nparams,
		    ig_pg_done *done, void *arg);
/* The simple query protocol: sql may hold several statements separated by
 * ';' (a migration's file) and no parameters; results in text form. Runs
 * as one implicit transaction unless sql has its own BEGIN/COMMIT, or tx
 * is inside ig_pg_begin's. */
void ig_pg_tx_simple(ig_pg_tx *tx, const char *sql, ig_pg_done *done, void *arg);
/* COMMIT / ROLLBACK, then the connection goes back to the pool (tx is
 * invalid once done runs; done may be NULL). */
void ig_pg_commit(ig_pg_tx *tx, ig_pg_done *done, void *arg);
void ig_pg_rollback(ig_pg_tx *tx, ig_pg_done *done, void *arg);
/* Gives a held connection back without a statement; a connection given
 * back inside a transaction (or lost) is closed rather than reused. */
void ig_pg_release(ig_pg_tx *tx);

/* ---- LISTEN/NOTIFY ---- */

/* LISTEN channel on a dedicated connection of this loop's core (one per
 * core, opened on the first call, reconnected and re-LISTENed after a
 * loss). on_notify runs on this loop for every NOTIFY on the channel; the
 * slices are valid during the call. channel is copied (at most 63 bytes).
 * Returns 0, or -1 when the database is not configured, the channel is
 * too long or memory is short. A notification sent while the connection
 * was down is lost. */
typedef void ig_pg_notify_fn(void *arg, ig_str channel, ig_str payload);
int ig_pg_listen(struct ig_loop *loop, const char *channel, ig_pg_notify_fn *on_notify, void *arg);

/* ---- state ---- */

/* DATABASE_URL, or PGHOST / PGDATABASE, was set (and parsed) at startup. */
bool ig_pg_configured(void);

#endif
