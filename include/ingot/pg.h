/* PostgreSQL on the core's own loop: the public API of net/pg.
 *
 * A per-core pool of connections speaks the frontend/backend protocol v3
 * (extended query protocol, statements prepared once per connection and
 * cached by SQL text, many queries pipelined on a connection, each with its
 * own Sync). Everything belongs to the calling core: callbacks run on the
 * loop that started the query; rows and errors land in the caller's arena;
 * a query's state comes from a per-core pool (no malloc per query).
 *
 * Every call below runs on the loop's thread of the core it names (a
 * ctx's, a pool's or a tx's), never blocks, and reports through its
 * callback, whose result comes first and the caller's arg last. Failures
 * are values (ig_pg_error, with a kind) given to that callback: no
 * starting call returns an error, and none fails silently.
 *
 * Inside a handler: start queries with ig_pg_query, return IG_PENDING, and
 * call ig_finish from the last completion (see README, "Database"). */
#ifndef INGOT_PG_H
#define INGOT_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingot/base.h"
#include "ingot/http.h"

struct ig_loop;

/* ---- values: parameters and result columns ----
 * In a result, s points into the query's arena; a column of a type not
 * listed below arrives as its text in s, with its own oid. */

/* The built-in type oids (pg_type.dat); they never change. */
enum {
	IG_PG_BOOL = 16,
	IG_PG_BYTEA = 17,
	IG_PG_INT8 = 20,
	IG_PG_INT2 = 21,
	IG_PG_INT4 = 23,
	IG_PG_TEXT = 25,
	IG_PG_JSON = 114,
	IG_PG_FLOAT4 = 700,
	IG_PG_FLOAT8 = 701,
	IG_PG_UNKNOWN = 705,
	IG_PG_VARCHAR = 1043,
	IG_PG_DATE = 1082,
	IG_PG_TIMESTAMP = 1114,
	IG_PG_TIMESTAMPTZ = 1184,
	IG_PG_NUMERIC = 1700,
	IG_PG_UUID = 2950,
	IG_PG_JSONB = 3802,
};

/* date and timestamp's infinities, as the server stores them. */
#define IG_PG_DATE_INFINITY INT32_MAX
#define IG_PG_DATE_NEG_INFINITY INT32_MIN
#define IG_PG_TS_INFINITY INT64_MAX
#define IG_PG_TS_NEG_INFINITY INT64_MIN

/* One value, a parameter (the caller's, read during the call) or a result
 * column (in the query's arena). oid says which member holds it:
 *   bool                      b
 *   int2, int4, int8          i
 *   float4, float8            f
 *   text, varchar, numeric, json, jsonb, and any other oid    s (its text)
 *   bytea                     s (the raw bytes, not hex)
 *   uuid                      uuid (16 bytes, in order)
 *   date                      date (days from 2000-01-01)
 *   timestamp, timestamptz    ts (microseconds from 2000-01-01 00:00:00;
 *                             UTC for timestamptz)
 * null: SQL NULL (then no member counts). A parameter with oid 0 is sent as
 * text in s with its type left to the server to infer. */
typedef struct ig_pg_value {
	uint32_t oid;
	bool null;
	union {
		bool b;
		int64_t i;
		double f;
		ig_str s;
		uint8_t uuid[16];
		int32_t date;
		int64_t ts;
	};
} ig_pg_value;

/* Parameter constructors: values, no allocation. A string's or bytea's
 * bytes are only pointed to; the query call copies them before it
 * returns. */
static inline ig_pg_value ig_pg_null(uint32_t oid) { return (ig_pg_value){ .oid = oid, .null = true }; }
static inline ig_pg_value ig_pg_bool(bool v) { return (ig_pg_value){ .oid = IG_PG_BOOL, .b = v }; }
static inline ig_pg_value ig_pg_int2(int16_t v) { return (ig_pg_value){ .oid = IG_PG_INT2, .i = v }; }
static inline ig_pg_value ig_pg_int4(int32_t v) { return (ig_pg_value){ .oid = IG_PG_INT4, .i = v }; }
static inline ig_pg_value ig_pg_int8(int64_t v) { return (ig_pg_value){ .oid = IG_PG_INT8, .i = v }; }
static inline ig_pg_value ig_pg_float4(float v) { return (ig_pg_value){ .oid = IG_PG_FLOAT4, .f = v }; }
static inline ig_pg_value ig_pg_float8(double v) { return (ig_pg_value){ .oid = IG_PG_FLOAT8, .f = v }; }
static inline ig_pg_value ig_pg_text(ig_str s) { return (ig_pg_value){ .oid = IG_PG_TEXT, .s = s }; }
static inline ig_pg_value ig_pg_varchar(ig_str s) { return (ig_pg_value){ .oid = IG_PG_VARCHAR, .s = s }; }
static inline ig_pg_value ig_pg_numeric(ig_str text) { return (ig_pg_value){ .oid = IG_PG_NUMERIC, .s = text }; }
static inline ig_pg_value ig_pg_json(ig_str text) { return (ig_pg_value){ .oid = IG_PG_JSON, .s = text }; }
static inline ig_pg_value ig_pg_jsonb(ig_str text) { return (ig_pg_value){ .oid = IG_PG_JSONB, .s = text }; }
static inline ig_pg_value ig_pg_bytea(ig_str bytes) { return (ig_pg_value){ .oid = IG_PG_BYTEA, .s = bytes }; }
static inline ig_pg_value ig_pg_date(int32_t days) { return (ig_pg_value){ .oid = IG_PG_DATE, .date = days }; }
static inline ig_pg_value ig_pg_timestamp(int64_t us) { return (ig_pg_value){ .oid = IG_PG_TIMESTAMP, .ts = us }; }
static inline ig_pg_value ig_pg_timestamptz(int64_t us) { return (ig_pg_value){ .oid = IG_PG_TIMESTAMPTZ, .ts = us }; }
static inline ig_pg_value ig_pg_uuid(const uint8_t u[16])
{
	ig_pg_value v = { .oid = IG_PG_UUID };
	memcpy(v.uuid, u, 16);
	return v;
}
/* A value in PostgreSQL's text syntax, its type inferred by the server. */
static inline ig_pg_value ig_pg_untyped(ig_str text) { return (ig_pg_value){ .oid = 0, .s = text }; }

/* Calendar helpers for dates and timestamps (proleptic Gregorian, UTC):
 * days from 2000-01-01 to y-m-d (m 1-12, d 1-31; not checked), and back
 * into *y, *m, *d. Pure; any thread. */
int32_t ig_pg_date_from_ymd(int32_t y, unsigned m, unsigned d);
IG_NONNULL(2, 3, 4) void ig_pg_date_to_ymd(int32_t days, int32_t *y, unsigned *m, unsigned *d);


/* For generated query code (schemac --queries): the text of a decoded
 * uuid (canonical, lowercase), date ("2024-02-29") or timestamp(tz)
 * ("2024-02-29T13:05:00.25", with "Z" for timestamptz: RFC 3339; infinity
 * as "infinity"/"-infinity"), in arena. Returns: false for another oid or
 * when the arena is full. Any thread. */
IG_MUST_USE IG_NONNULL(1, 2, 3) bool ig_pg_value_text(const ig_pg_value *v, ig_arena *arena, ig_str *out);

/* For generated query code: one-dimensional arrays. A result column of an
 * array type arrives as its text in s (see above); ig_pg_array_decode
 * splits it into *n elements decoded as elem_oid's values (NULL elements
 * have null set), *items in arena. Returns: false when v is NULL, not one
 * dimension, malformed, or the arena is full. ig_pg_array_text writes
 * items[0..n) (each by its oid; strings quoted, bytea as hex, uuid, dates
 * and timestamps as ig_pg_value_text gives them) as an array literal in
 * arena, for a parameter of oid 0 that the server reads as the
 * statement's array type. Returns: false when the arena is full or a
 * string holds a NUL. Any thread. */
IG_MUST_USE IG_NONNULL(1, 3, 4, 5) bool ig_pg_array_decode(const ig_pg_value *v, uint32_t elem_oid, ig_arena *arena,
							 ig_pg_value **items, size_t *n);
IG_MUST_USE IG_NONNULL(3, 4) bool ig_pg_array_text(const ig_pg_value *items, size_t n, ig_arena *arena, ig_str *out);
/* The same for integer elements, written straight from items[0..n) (no
 * ig_pg_value each): "{1,-2,3}" in arena, for an int2[], int4[] or int8[]
 * parameter (items may be NULL when n is 0). Returns: false when the
 * arena is full. Any thread. */
IG_MUST_USE IG_NONNULL(3, 4) bool ig_pg_array_text_int16(const int16_t *items, size_t n, ig_arena *arena, ig_str *out);
IG_MUST_USE IG_NONNULL(3, 4) bool ig_pg_array_text_int32(const int32_t *items, size_t n, ig_arena *arena, ig_str *out);
IG_MUST_USE IG_NONNULL(3, 4) bool ig_pg_array_text_int64(const int64_t *items, size_t n, ig_arena *arena, ig_str *out);

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
	IG_PG_CANCELLED,       /* a linear call's request was cancelled (the
	                          client left, or the drain's grace ended) */
	IG_PG_ROW_MISMATCH,    /* a row does not fit a typed query's row (schemac
	                          --queries): its columns are not the build's, or
	                          a json(b) value does not fit its schema */
};
#define IG_PG_ERROR_KINDS (IG_PG_ROW_MISMATCH + 1)
/* "not_configured", "unavailable", ...: for logs and metrics labels.
 * Returns: static storage, never NULL. Any thread. */
const char *ig_pg_error_name(enum ig_pg_error_kind kind);

/* sqlstate: five characters and a NUL ("" unless kind is IG_PG_SERVER).
 * message: the server's, or net/pg's own for the other kinds; detail and
 * constraint may be empty. The strings are in the query's arena, or static;
 * none ever holds the password. They may name tables, columns and values:
 * they are for the log (ig_pg_respond_error), never for the client.
 * query: the SQL the query was started with (not a copy: valid as long as
 * the caller keeps that text, a literal usually); empty for a failure that
 * had no query (BUSY before one could be made, a held connection's). */
typedef struct ig_pg_error { /* owned as ig_pg_done says */
	enum ig_pg_error_kind kind;
	char sqlstate[6];
	ig_str message, detail, constraint;
	ig_str query;
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

/* The value at row, col: both must be in range (not checked). */
static inline const ig_pg_value *ig_pg_at(const ig_pg_result *r, uint32_t row, uint32_t col)
{
	return &r->values[(size_t)row * r->cols + col];
}

/* A query's completion: exactly one of res and err is non-NULL. Runs once,
 * on the loop that started the query. An immediate failure (a bad
 * parameter, the arena full) is delivered after the current batch, never
 * inside the call that started it; the one exception is IG_PG_BUSY when
 * no query state can be had at all (the core's 2^20 are in use, or no
 * pool), which runs done before the starting call returns. res lives in
 * the query's arena; err's struct lives until done returns (copy it to
 * keep it), its strings in the arena. As every callback of include/ingot/,
 * it takes what it reports on first and the caller's arg last. A
 * completion may start further queries and may finish the exchange. */
typedef void ig_pg_done(const ig_pg_result *res, const ig_pg_error *err, void *arg);

/* ---- queries ----
 *
 * sql: one statement, parameters $1..$n. sql must stay valid until done
 * has run (a literal, usually). done may be NULL where the result does not
 * matter (and then nothing reports a failure). params are copied (with what their s
 * points to) before the call returns: a stack array will do. At most 256
 * parameters. Results: bool, int2/4/8, float4/8, uuid, date, timestamp(tz),
 * bytea, json(b) and text arrive decoded per ig_pg_value; a NULL column has
 * null set and its oid. Up to INGOT_PG_PIPELINING queries are in flight on
 * a connection; a failing query does not fail the others. Queries given to
 * a connection whose written ones are still unanswered leave together once
 * their answers came: one write for many requests' queries. */

/* A core's pool of connections, owned by the core (ig_pg_core_pool). */
struct ig_pg_pool;

/* In a handler (or a callback of ctx's, before ig_finish): on the core's
 * pool, rows in ctx's arena. Without a configured database, done gets
 * IG_PG_NOT_CONFIGURED. */
IG_NONNULL(1, 2) void ig_pg_query(ig_ctx *ctx, const char *sql, const ig_pg_value *params, size_t nparams,
		 ig_pg_done *done, void *arg);
/* As ig_pg_query, for a statement without effects (a plain SELECT): reads
 * started together on a connection share one Sync, so the server flushes
 * their answers once instead of once each. A failing read still fails
 * alone: the server skips the reads after it up to the Sync, and each is
 * sent again alone. A query timeout's CancelRequest can stop a later read
 * of the same Sync, which then fails with SQLSTATE 57014. */
IG_NONNULL(1, 2) void ig_pg_read(ig_ctx *ctx, const char *sql, const ig_pg_value *params, size_t nparams,
		ig_pg_done *done, void *arg);

/* ---- a failed query as the HTTP answer ----
 *
 * Database errors stay on the server. The client gets problem+json whose
 * detail says what went wrong in the runtime's words and no more: a class
 * and, for a server error, the SQLSTATE ("database error (server 42P01)").
 * Never the SQL, a table, column, constraint or value. The log gets the
 * full error once, in one line with the request's id, method and route:
 * "database error" at error level for a 5xx; at debug level for a 4xx (the
 * access log counts those) and for a cancelled request (the client left).
 * Its fields: status, error (ig_pg_error_name), sqlstate, message, detail,
 * constraint, and query: the query's name when its SQL starts with sqlc's
 * annotation ("-- name: GetPost :one"), else the SQL's first words. This is
 * the one error line of such a request: nothing else logs its 5xx.
 *
 * The runtime's answers: 503 for NOT_CONFIGURED ("no database
 * configured"), UNAVAILABLE, BUSY, CONNECT, AUTH, TLS, CONNECTION_LOST
 * and TIMEOUT, and for CANCELLED (nobody reads it: the client has gone);
 * 409 for SQLSTATE 23505 (a unique violation, without the constraint's
 * name); 500 otherwise. */

/* An app's own answer to a SQLSTATE: sqlstate is five characters, or a
 * class's first two ("23": every integrity violation); status any 4xx or
 * 5xx; detail the client's text (a literal: kept, not copied), in place
 * of the runtime's. The problem's title stays the status's reason
 * (RFC 9457: a problem of type about:blank has no other title). */
struct ig_pg_answer {
	const char *sqlstate;
	int status;
	const char *detail;
};

/* Answers err, as above, and FINISHES the exchange, as ig_respond_problem
 * does: from a completion, call it and nothing else (a second ig_finish on
 * a pending exchange may touch one already freed). Returns: the status it
 * answered (ctx may be gone by then). */
IG_NONNULL(1, 2) int ig_pg_respond_error(ig_ctx *ctx, const ig_pg_error *err);
/* As ig_pg_respond_error, with the app's answers first: a server error
 * whose SQLSTATE matches an entry of answers[0..n-1] gets the first such
 * entry's status and detail (list a code before its class).
 * answers may be NULL when n is 0; a static const table, usually per
 * operation (a unique violation means "this title exists" on one table and
 * "this email is registered" on another). The log line is as above. */
IG_NONNULL(1, 2) int ig_pg_respond_error_as(ig_ctx *ctx, const ig_pg_error *err, const struct ig_pg_answer *answers,
					    size_t n);

/* Outside a request (a background task, `service --migrate`): the pool of
 * the core whose loop this is, made on first use (NULL when memory is
 * short). A program without ig_main's server may make its own loop
 * (ig_loop_init), take its pool here, and run the loop; ig_pg_settings
 * (net/pg/settings.h) must have been parsed. On loop's thread. Returns:
 * the pool, owned by the core for its life; NULL when memory is short or
 * net/pg is not set up on loop (the pool calls below then report
 * IG_PG_BUSY). */
IG_NONNULL(1) struct ig_pg_pool *ig_pg_core_pool(struct ig_loop *loop);
/* As ig_pg_query; the result and the error's strings go into arena, which
 * must stay valid until done has run. pool may be NULL (see above). */
IG_NONNULL(2, 3) void ig_pg_pool_query(struct ig_pg_pool *pool, ig_arena *arena, const char *sql,
		      const ig_pg_value *params, size_t nparams, ig_pg_done *done, void *arg);
/* As ig_pg_read, on pool, into arena. */
IG_NONNULL(2, 3) void ig_pg_pool_read(struct ig_pg_pool *pool, ig_arena *arena, const char *sql,
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
/* A held connection is ready (tx) or could not be had (err, with tx
 * NULL): exactly one is non-NULL. Runs once, as ig_pg_done does (err's
 * struct until it returns). The tx is the caller's until given back. */
typedef void ig_pg_tx_ready(ig_pg_tx *tx, const ig_pg_error *err, void *arg);

/* Takes a connection and sends BEGIN; ready runs once it has succeeded,
 * or with the error. Results of the tx's queries go into ctx's arena, so
 * the tx must be given back before ig_finish. */
IG_NONNULL(1, 2) void ig_pg_begin(ig_ctx *ctx, ig_pg_tx_ready *ready, void *arg);
/* As ig_pg_begin, on pool (may be NULL, as above), into arena. */
IG_NONNULL(2, 3) void ig_pg_pool_begin(struct ig_pg_pool *pool, ig_arena *arena, ig_pg_tx_ready *ready, void *arg);
/* Takes a connection without BEGIN (session-level work: an advisory lock
 * held across several transactions, as migrations do). */
IG_NONNULL(2, 3) void ig_pg_pool_hold(struct ig_pg_pool *pool, ig_arena *arena, ig_pg_tx_ready *ready, void *arg);

/* As ig_pg_query, on the held connection, after the queries given to it
 * before; results in the arena the tx was taken with. */
IG_NONNULL(1, 2) void ig_pg_tx_query(ig_pg_tx *tx, const char *sql, const ig_pg_value *params, size_t nparams,
		    ig_pg_done *done, void *arg);
/* The simple query protocol: sql may hold several statements separated by
 * ';' (a migration's file) and no parameters; results in text form. Runs
 * as one implicit transaction unless sql has its own BEGIN/COMMIT, or tx
 * is inside ig_pg_begin's. */
IG_NONNULL(1, 2) void ig_pg_tx_simple(ig_pg_tx *tx, const char *sql, ig_pg_done *done, void *arg);
/* COMMIT / ROLLBACK, then the connection goes back to the pool: tx must
 * not be used after the call (done, which may be NULL, reports the
 * statement's outcome; a failed transaction's COMMIT reports
 * IG_PG_ABORTED). */
IG_NONNULL(1) void ig_pg_commit(ig_pg_tx *tx, ig_pg_done *done, void *arg);
IG_NONNULL(1) void ig_pg_rollback(ig_pg_tx *tx, ig_pg_done *done, void *arg);
/* Gives a held connection back without a statement; a connection given
 * back inside a transaction (or lost) is closed rather than reused. tx is
 * invalid after the call. */
IG_NONNULL(1) void ig_pg_release(ig_pg_tx *tx);

/* ---- linear calls: a handler that waits (see http.h, "Waiting") ----
 *
 * Only from a handler running on its coroutine (every generated handler
 * does), before it returns; they suspend the handler, never the core.
 * Results and the error's strings live in ctx's arena until the exchange
 * ends. While a transaction is open on ctx (ig_pg_transaction_begin),
 * every query of ctx runs on its connection, in order. A query is never
 * stopped once sent: when the request is cancelled the handler goes on at
 * once and the exchange ends after the query has, so sql must stay valid
 * until then (a literal). Queries the handler sent and never waited for
 * are not cancelled; their outcomes are dropped. */

/* Runs one statement and waits for it. Returns: the result; or NULL with
 * *err filled (its kind says why: IG_PG_CANCELLED when the request was
 * cancelled while waiting). */
IG_MUST_USE IG_NONNULL(1, 2, 5)
const ig_pg_result *ig_pg_run(ig_ctx *ctx, const char *sql, const ig_pg_value *params, size_t nparams,
			      ig_pg_error *err);

/* A query started without waiting, for running several at once: its
 * outcome lands here when ig_wait_all (http.h) returns. Exactly one of res
 * and err.kind != IG_PG_OK holds then. */
typedef struct ig_pg_call {
	const ig_pg_result *res;
	ig_pg_error err;
} ig_pg_call;
/* Starts sql as ig_pg_query does (ig_pg_send_read: as ig_pg_read, reads
 * sharing one Sync) and returns at once; call (in the arena or on the
 * handler's stack) must stay valid until ig_wait_all returns. */
IG_NONNULL(1, 2, 5) void ig_pg_send(ig_ctx *ctx, const char *sql, const ig_pg_value *params, size_t nparams,
				    ig_pg_call *call);
IG_NONNULL(1, 2, 5) void ig_pg_send_read(ig_ctx *ctx, const char *sql, const ig_pg_value *params,
					 size_t nparams, ig_pg_call *call);

/* A transaction on ctx: takes a connection and sends BEGIN, waiting.
 * Returns: true; or false with *err filled (no transaction is open). One
 * at a time per ctx. A transaction still open when the handler returns, or
 * when the request is cancelled, is rolled back. */
IG_MUST_USE IG_NONNULL(1, 2) bool ig_pg_transaction_begin(ig_ctx *ctx, ig_pg_error *err);
/* COMMIT, waiting; the connection goes back to the pool either way.
 * Returns: true when committed; false with *err (IG_PG_ABORTED when a query
 * had failed inside: the server rolled back). */
IG_MUST_USE IG_NONNULL(1, 2) bool ig_pg_transaction_commit(ig_ctx *ctx, ig_pg_error *err);
/* ROLLBACK, waiting; the connection goes back to the pool. */
IG_NONNULL(1) void ig_pg_transaction_rollback(ig_ctx *ctx);
/* Whether a transaction is open on ctx (begun, not yet ended). */
IG_NONNULL(1) bool ig_pg_transaction_open(ig_ctx *ctx);

/* ---- LISTEN/NOTIFY ---- */

/* LISTEN channel on a dedicated connection of this loop's core (one per
 * core, opened on the first call, reconnected and re-LISTENed after a
 * loss). on_notify runs on this loop for every NOTIFY on the channel; the
 * slices are valid during the call. channel is copied (at most 63 bytes).
 * On loop's thread; arg is kept until the process ends (there is no
 * UNLISTEN). Returns: 0; or -1 when the database is not configured, the
 * channel is too long or memory is short, and nothing listens. A
 * notification sent while the connection was down is lost. */
typedef void ig_pg_notify_fn(ig_str channel, ig_str payload, void *arg);
IG_MUST_USE IG_NONNULL(1, 2, 3) int ig_pg_listen(struct ig_loop *loop, const char *channel, ig_pg_notify_fn *on_notify, void *arg);

/* ---- state ---- */

/* DATABASE_URL, or PGHOST / PGDATABASE, was set (and parsed) at startup.
 * Any thread, after the start has parsed the settings. */
bool ig_pg_configured(void);

#endif
