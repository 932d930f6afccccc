/* net/pg's own structures: a core's state (percore.c), its pool of
 * connections (pool.c), a connection's protocol engine (conn.c and the
 * files it stands on, listed at ig_pg_conn_new), a query in flight, the
 * cancel side channel (cancel.c) and LISTEN (listen.c).
 * Everything here belongs to one core and is touched on its thread only. */
#ifndef NET_PG_INTERNAL_H
#define NET_PG_INTERNAL_H

#include "ingot/log.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "kernel/runtime/arena.h"
#include "kernel/runtime/list.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "net/dial/dial.h"
#include "net/pg/auth.h"
#include "net/pg/conninfo.h"
#include "ingot/pg.h"
#include "net/pg/settings.h"
#include "net/pg/types.h"
#include "net/pg/wire.h"
#include "net/sock/sock.h"

#define PG_MAX_POOL 256       /* INGOT_PG_POOL_SIZE's bound */
#define PG_MAX_PARAMS 256
#define PG_MAX_COLS 1024      /* columns of one result */
#define PG_STMT_SLOTS 64      /* prepared statements cached per connection */
#define PG_BATCH_QUERIES 32   /* a loop batch's queries kept on one connection, at most */
#define PG_SYNC_BYTES 5       /* a Sync message: 'S' and its length */
#define PG_CANCEL_TRIES 3     /* CancelRequests for one timed-out query, a timeout apart */
#define PG_CANCEL_WAIT_MS 10000 /* for the server to close a CancelRequest's connection */
#define PG_STMT_TEXT 16384    /* bytes of their SQL kept per connection */
#define PG_STMT_FORMATS 32    /* result columns whose format a statement remembers */
#define PG_RBUF_INITIAL 16384
#define PG_OUT_INITIAL 16384
#define PG_MAX_CHANNELS 16    /* LISTEN channels per core */

/* The process's configuration, set once at startup (pg_settings.c),
 * allocated only when a database is configured: the pages of a process
 * without one hold nothing of it. */
struct ig_pg_global {
	struct pg_conninfo ci;
	const struct tls_trust *trust; /* sslrootcert's anchors, or NULL: the default */
	struct sockaddr_storage addr;  /* a numeric host or a socket: set at start */
	socklen_t addr_len;            /* 0: a name, resolved before each connect */
	int backend_id;                /* /readyz's "postgresql" plus one, or 0 */
	atomic_uint cores;             /* loops that will run a pool: each core's start stores it */
	atomic_bool max_connections_checked; /* by the first core that connects */
	atomic_uint listeners;         /* cores with a LISTEN connection (listen.c) */
};
extern bool ig_pg_configured_flag;
extern struct ig_pg_global *ig_pg_global; /* NULL unless ig_pg_configured_flag */

/* The database's host and port (a socket's directory and port) on a log
 * line: where a connection failed, never who with (no user, no password). */
void ig_pg_log_peer(struct ig_logline *line);

/* errors.c: what the log calls a query: the name of sqlc's annotation
 * ("-- name: GetPost :one") when sql starts with one, else its first
 * words (white space runs as one space, cut after a whole word). Writes at
 * most cap - 1 bytes and a NUL to out. Returns: the length written. */
size_t ig_pg_query_label(ig_str sql, char *out, size_t cap);

/* address.c: ig_pg_global.addr from ig_pg_global.ci; NULL, or err. */
const char *ig_pg_resolve(char *err, size_t errlen);

enum pg_query_kind {
	PGQ_EXTENDED, /* Parse?/Bind/Describe?/Execute/Sync */
	PGQ_SIMPLE,   /* Query ('Q'): a script, BEGIN, COMMIT... */
	PGQ_HOLD,     /* a held connection's start: a lone Sync (or BEGIN) */
};

/* One query, from the core's pool, from its start to its done. */
struct pg_query {
	struct pg_query *next;
	struct pg_conn *conn;   /* the connection it was written to, or NULL */
	enum pg_query_kind kind;
	const char *sql;
	size_t sql_len;
	ig_pg_value *params;    /* a copy in the arena */
	uint16_t nparams;
	ig_arena *arena;
	ig_pg_done *done;
	ig_pg_tx_ready *ready;  /* PGQ_HOLD */
	void *arg;
	uint64_t deadline_ms;   /* waiting: the acquire deadline; written: the query timeout's */
	int16_t stmt;           /* the cache slot it used, or -1 */
	uint32_t stmt_gen;      /* that slot's generation when it was used */
	bool parsed_here;       /* its own Parse went with it */
	bool retried;           /* prepared again once already */
	bool retry;             /* its statement was gone: prepare again */
	bool zombie;            /* its done ran already (timed out): drop what comes */
	bool internal;          /* net/pg's own (ROLLBACK on release): no done */
	bool commit;            /* COMMIT: a "ROLLBACK" tag means it had failed */
	bool release_after;     /* COMMIT/ROLLBACK: give the connection back */
	bool begin;             /* PGQ_HOLD with BEGIN */
	bool cancelled;         /* a CancelRequest went for it */
	uint8_t cancels;        /* CancelRequests sent for it */
	bool behind_cancel;     /* on the connection behind a query when its CancelRequest
				   went: a 57014 may be that request's (pipeline.c) */
	bool answered;          /* a message of its answer came */
	bool read_only;         /* ig_pg_read: may share the next read's Sync */
	bool sync_shared;       /* its Sync was taken off for the next query's:
				   its answer ends at CommandComplete or ErrorResponse */
	bool skipped;           /* an earlier query of its Sync failed: the server
				   skipped it; sent again alone at the ReadyForQuery */
	/* the result being built */
	bool failed;
	ig_pg_error err;
	uint32_t rows, cap, cols;
	ig_pg_value *values;
	ig_str *names;
	uint32_t *oids;
	int16_t *formats;
	ig_str tag;
	uint64_t affected;
};

/* Queries wait in three FIFOs (a connection's in flight, the pool's
 * waiters, the core's failed-at-once), each a head and a tail linked by
 * next: kernel/runtime/list.h's IG_FIFO_PUSH appends, IG_FIFO_POP takes the
 * first off. */

/* A statement prepared on one connection: named "s<number>" (name, kept
 * so that a Bind formats nothing). Once described, and when its columns
 * fit (at most PG_STMT_FORMATS, their oids and names in stmt_text), it is
 * "known": its executions send no Describe, and their results take the
 * columns from here (a statement's result shape is fixed: a schema change
 * that alters it fails the Bind with 0A000, which prepares it again). */
struct pg_stmt {
	uint64_t hash;     /* 0: free */
	const char *sql;   /* the connection's copy */
	uint32_t len;
	uint32_t number;
	uint32_t gen;      /* bumped when the slot is dropped */
	uint16_t ncols;    /* result columns, once a RowDescription came */
	bool described;
	bool known;        /* described, and oids/names kept: no Describe */
	char name[12];     /* "s<number>", NUL-terminated */
	/* known: in stmt_text, ncols name lengths, and the columns as a query's
	   result keeps them after its names (take_columns copies it whole):
	   ncols type oids, ncols formats, then the names, each with its NUL. */
	const uint16_t *name_lens;
	const char *columns;
	uint32_t columns_bytes;
	int16_t formats[PG_STMT_FORMATS];
};

enum pg_conn_state {
	PGC_IDLE,       /* no transport; the pool may connect it */
	PGC_CONNECTING, /* the dial (lookup, TCP or unix connect) is under way */
	PGC_SSL,        /* SSLRequest sent, waiting for 'S' or 'N' */
	PGC_AUTH,       /* StartupMessage sent: authentication, parameters, key */
	PGC_READY,      /* takes queries */
};

/* PGR_POOL holds back what comes while its written queries are
 * unanswered (ig_pg_conn_flush_deferred); PGR_LISTEN writes at once. */
enum pg_conn_role { PGR_POOL, PGR_LISTEN };

struct pg_core;
struct pg_conn;

/* What a connection tells its owner, which set them (ig_pg_conn_new): the
 * pool for its connections (pool.c), the LISTEN side for the listener
 * (listen.c). A connection calls nothing above it but these. */
struct pg_conn_owner_ops {
	/* k finished its startup: it takes queries. */
	void (*up)(void *owner, struct pg_conn *k);
	/* A query of k's ended with its ReadyForQuery and k is not held: it
	   has room again. NULL: nothing to do. */
	void (*room)(void *owner, struct pg_conn *k);
	/* k closed (PGC_IDLE again; was_ready: it had come up), before the
	   queries it carried fail with kind and message. */
	void (*lost)(void *owner, struct pg_conn *k, bool was_ready, enum ig_pg_error_kind kind,
		     const char *message);
	/* A NotificationResponse on k; the slices are valid during the call. */
	void (*notify)(void *owner, struct pg_conn *k, ig_str channel, ig_str payload);
};

struct pg_conn {
	struct pg_core *core;
	const struct pg_conn_owner_ops *owner_ops;
	void *owner;
	enum pg_conn_role role;
	enum pg_conn_state state;
	struct ig_transport *t, *sock; /* t: TLS over sock, or sock */
	bool tls;
	char *rbuf;
	uint32_t rpos, rlen, rcap;
	char *obuf;
	struct pg_out out;
	size_t opos;            /* written so far */
	bool flushing;          /* a write waits for writable */
	struct ig_deferred flush;
	struct pg_query *head, *tail; /* in flight, in order */
	size_t tail_sync_end;   /* out.len just after the tail's unwritten Sync, or 0 */
	uint32_t inflight;
	uint32_t written;       /* of inflight, the first ones, whose bytes have left */
	uint32_t generation;    /* bumped on every close */
	uint32_t pid, key;      /* BackendKeyData, for CancelRequest */
	uint8_t cancels_open;   /* CancelRequests sent whose connection the server has not closed */
	struct sockaddr_storage addr; /* where this connection went (its CancelRequests go there) */
	socklen_t addr_len;
	struct ig_dial dial;    /* PGC_CONNECTING: the lookup and the connect */
	char tx_status;
	bool held;              /* an ig_pg_tx */
	bool held_lost;         /* lost while held: reconnect after release */
	ig_arena *held_arena;
	struct ig_timer timer;  /* connect timeout, then the head's query timeout */
	struct pg_scram scram;
	struct pg_stmt stmts[PG_STMT_SLOTS];
	char *stmt_text;
	uint32_t stmt_text_used, next_stmt;
};

/* A CancelRequest went for k's head and the server may still act on it:
 * until the cancelled query's answer has come and the server has closed
 * every CancelRequest's connection (it signals the backend before), k
 * takes no new query, so a CancelRequest can stop no query sent after it. */
static inline bool ig_pg_conn_cancelling(const struct pg_conn *k)
{
	return k->cancels_open || (k->head && k->head->cancelled);
}

struct pg_channel {
	char name[64];
	ig_pg_notify_fn *fn;
	void *arg;
};

/* The pool of one core (struct ig_pg_pool of the API). */
struct ig_pg_pool {
	struct pg_core *core;
	struct pg_conn *conns[PG_MAX_POOL];
	uint32_t size;
	struct pg_conn *last;        /* the last one given a query (pick's batch) */
	uint32_t last_batch;         /* queries in last's unwritten batch */
	struct pg_query *wait_head, *wait_tail; /* waiting for a connection */
	uint32_t waiting;
	struct ig_timer wait_timer;  /* the oldest waiter's acquire deadline */
	struct ig_timer retry_timer; /* reconnect with backoff */
	uint32_t backoff_ms;
	bool connected_once;
	bool outage_logged;          /* "database unreachable" said, "reachable" not yet */
	/* why the last connect failed, when it was authentication or TLS:
	   waiters fail at once with it instead of waiting out the timeout */
	enum ig_pg_error_kind last_kind;
	char last_message[256];
	struct pg_conn *listener;    /* listen.c's; reconnected with the others */
	/* A NOTIFY that came on one of the pool's connections (the app
	   LISTENed on a held one): to the LISTEN side, once it has started. */
	void (*listen_notify)(struct ig_pg_pool *p, ig_str channel, ig_str payload);
	struct pg_channel channels[PG_MAX_CHANNELS];
	uint32_t nchannels;
};

struct pg_core {
	struct pg_core *all_next;
	struct ig_loop *loop;
	struct sock_core sock;
	struct ig_pool queries;
	struct ig_pool cancels;
	struct ig_pg_pool pool;
	struct pg_query *failed_head, *failed_tail; /* failed at once: done after the batch */
	struct ig_deferred deliver;
	struct ig_pool blocks; /* for scratch: net/pg's own queries' results */
	/* Why a connection's startup failed, in the server's words, and why
	   its TLS did: the text ig_pg_conn_close passes on (logged, kept as
	   the pool's last message). The core's own: every core's pool may
	   fail at once, each with its own words. */
	char startup_error[256];
	char tls_error[160];
	ig_arena scratch;
	/* one message's columns while it is decoded (calloc'd: untouched
	   pages cost nothing until a wide row comes) */
	struct pg_col cols[PG_MAX_COLS];
	struct pg_field fields[PG_MAX_COLS];
};

/* Whether v's value is the bytes s points to (text, varchar, numeric,
 * json(b), bytea, an untyped or unknown type) rather than a fixed-size
 * member: only those are copied and counted in a message's size. */
static inline bool pg_value_has_bytes(const ig_pg_value *v)
{
	switch (v->oid) {
	case IG_PG_BOOL: case IG_PG_INT2: case IG_PG_INT4: case IG_PG_INT8: case IG_PG_FLOAT4:
	case IG_PG_FLOAT8: case IG_PG_UUID: case IG_PG_DATE: case IG_PG_TIMESTAMP: case IG_PG_TIMESTAMPTZ:
		return false;
	default:
		return !v->null;
	}
}

/* percore.c */
struct pg_core *ig_pg_core_of(struct ig_loop *loop);
static inline uint64_t pg_now_ms(const struct pg_core *c) { return c->loop->clock.now_ms; }
struct pg_query *ig_pg_query_new(struct pg_core *c);
void ig_pg_query_free(struct pg_core *c, struct pg_query *q);
/* Fails q later (after the batch): its done or ready never runs inside
 * the call that started it. message is static or in q's arena. */
void ig_pg_fail_later(struct pg_core *c, struct pg_query *q, enum ig_pg_error_kind kind, const char *message);
/* Runs q's done (or ready) with its result or error, then frees it. */
void ig_pg_query_deliver(struct pg_core *c, struct pg_query *q);
void ig_pg_query_set_error(struct pg_query *q, enum ig_pg_error_kind kind, const char *message);

/* A connection is six files, each calling only those listed after it:
 * conn.c (making, connecting, the transport's events), startup.c,
 * pipeline.c, results.c, statements.c and conn_io.c. */

/* conn.c: a new connection, for the process's lifetime (a reconnect
 * reuses it), told to owner through ops; and its (re)connect. */
struct pg_conn *ig_pg_conn_new(struct pg_core *c, enum pg_conn_role role, const struct pg_conn_owner_ops *ops,
			    void *owner);
void ig_pg_conn_start(struct pg_conn *k);

/* startup.c: StartupMessage into k's output; a message of the startup
 * phase (PGC_AUTH). */
void ig_pg_startup_send(struct pg_conn *k);
void ig_pg_startup_message(struct pg_conn *k, const struct pg_msg *m);

/* pipeline.c */
/* Writes q to k (appends it to k's FIFO; the write goes out after the
 * batch). false when it cannot be encoded (then q is untouched). */
bool ig_pg_conn_send(struct pg_conn *k, struct pg_query *q);
/* A message of a ready connection; the query timeout's expiry. */
void ig_pg_pipeline_message(struct pg_conn *k, const struct pg_msg *m);
void ig_pg_pipeline_timeout(struct pg_conn *k);
/* One of k's CancelRequests ended (the server closed its connection, or
 * it failed, or it waited past PG_CANCEL_WAIT_MS): k takes queries again
 * once none is open and the cancelled query's answer has come. */
void ig_pg_pipeline_cancel_ended(struct pg_conn *k);

/* results.c: a message of q's answer into q (k lends its scratch and
 * statements). ig_pg_result_error is false when the ErrorResponse is
 * malformed (the caller closes k); q may be NULL there (a FATAL). */
void ig_pg_result_columns(struct pg_conn *k, struct pg_query *q, const struct pg_msg *m);
void ig_pg_result_row(struct pg_conn *k, struct pg_query *q, const struct pg_msg *m);
void ig_pg_result_tag(struct pg_query *q, ig_str tag, uint64_t rows);
bool ig_pg_result_error(struct pg_conn *k, struct pg_query *q, const struct pg_msg *m);

/* statements.c: k's statement cache. */
void ig_pg_stmts_clear(struct pg_conn *k);
/* Drops slot if it still holds the statement of generation gen. */
void ig_pg_stmt_drop(struct pg_conn *k, int16_t slot, uint32_t gen);
/* q (PGQ_EXTENDED) into k's output: Parse when new, Bind, Describe until
 * known, Execute, Sync; sets q's stmt, stmt_gen and parsed_here, and its
 * columns when known (or its error when they do not fit its arena). */
void ig_pg_stmt_encode(struct pg_conn *k, struct pg_query *q);
/* q's RowDescription (f[0..n)) or NoData, for its statement. */
void ig_pg_stmt_described(struct pg_conn *k, const struct pg_query *q, const struct pg_field *f, uint16_t n);
void ig_pg_stmt_no_data(struct pg_conn *k, const struct pg_query *q);

/* conn_io.c */
/* Room for need more bytes in k's output; false when out of memory. */
bool ig_pg_conn_out_grow(struct pg_conn *k, size_t need);
/* Writes k's output after the loop batch (ig_pg_conn_flush_deferred, k's
 * flush: held back on a pool connection while written queries wait). */
void ig_pg_conn_schedule_flush(struct pg_conn *k);
void ig_pg_conn_flush_deferred(struct ig_deferred *d);
/* Writes what it can now; the rest when the transport is writable. */
void ig_pg_conn_flush(struct pg_conn *k);
void ig_pg_conn_out_empty(struct pg_conn *k);
/* Ends k (PGC_IDLE): the owner hears lost, then the queries in flight
 * fail with kind and message. Nothing when idle already. */
void ig_pg_conn_close(struct pg_conn *k, enum ig_pg_error_kind kind, const char *message);

/* pool.c */
void ig_pg_pool_init(struct ig_pg_pool *p, struct pg_core *c);
void ig_pg_pool_submit(struct ig_pg_pool *p, struct pg_query *q);
/* A connection of the core's came up, or was lost (as the owner ops):
 * the backoff, the outage's log lines and /readyz, for the pool's
 * connections and the listener alike. */
void ig_pg_pool_conn_up(struct ig_pg_pool *p);
void ig_pg_pool_conn_lost(struct ig_pg_pool *p, struct pg_conn *k, bool was_ready,
		       enum ig_pg_error_kind kind, const char *message);
void ig_pg_pool_start(struct ig_pg_pool *p);
/* A held connection given back (the tx is over). */
void ig_pg_pool_release(struct ig_pg_pool *p, struct pg_conn *k);

/* cancel.c */
void ig_pg_cancel_send(struct pg_core *c, struct pg_conn *k);

#endif
