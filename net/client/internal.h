/* Shared inside net/client's connection management: the per-core client
 * state (percore.c), a call, a connection (conn.c), a pool of connections
 * to one origin (pool.c) and the agent's pools (agent.c); and the call
 * states of the interceptors and the mock agent. Not for apps: they see
 * client.h (interceptors.h, mock.h) only.
 *
 * Layers, each calling only the ones below it:
 *   core.c     the core's shared Agent (ig_core_agent), made with the
 *              public ig_agent_new like any app's
 *   agent.c    a pool per origin
 *   pool.c     the connections to one origin and the queue of calls waiting
 *   conn.c     one connection: writes its FIFO, reads the responses
 *   call.c     one request: its options, its bytes and its callbacks to the
 *              caller
 *   below      the response head parser and chunked decoder (net/http's
 *              codec), the dialer (net/dial: resolve, connect, TLS),
 *              the transports (net/sock, net/tls), the options' defaults and settings
 *              (client_settings.c); struct client_origin, the origin and
 *              options a pool's connections and calls read
 *   percore.c  the bottom: struct client_core, the per-core slot pools and
 *              scratch that everything is taken from, which the public
 *              constructors (ig_agent_new, ig_pool_new, ig_client_new) and
 *              ig_core_agent look up from their loop with ig_client_core_of
 * A lower object tells its owner about events through callbacks the owner
 * set, never by a call up: a connection tells its pool (conn_owner_ops)
 * that it can take a call, that it closed, that calls go back to the
 * queue, that its memory has gone; a call tells its holder (the pool's
 * queue, then a connection: call_holder_ops) that the caller aborted or
 * resumed it, and its slot's release is a deferred function its pool set;
 * a pool tells its agent (pool_owner_ops) that it has gone.
 *
 * Ownership: a call belongs to its pool's queue until a connection takes
 * it, then to that connection's FIFO until it ends. A connection belongs
 * to its pool, a pool to its agent (or to whoever made it with
 * ig_client_new / ig_pool_new). Everything is taken from the core's pools
 * (struct client_core); nothing is shared between cores.
 *
 * What may be freed when: a call, a connection, a pool, an agent and the
 * interceptors' and mock's call states and dispatchers are never freed
 * where they end (a caller's callback, and the frames of ours below it,
 * may still be using them): ending one puts it on its loop's deferred
 * queue (ig_loop_defer, kernel/runtime/loop.h), which runs once every callback of
 * the batch has returned, and only there is memory given back. So after
 * any callback an object is still readable, and its state (CALL_DONE,
 * CC_CLOSED, destroyed, WRAP_ENDED...) says whether it goes on. What is
 * released there checks again that it is still unused (an agent's idle
 * pool may have had a new call since). The one exception: an interceptor
 * or mock agent destroyed with no call state left is freed at once, as
 * nothing of it can be on the stack. ig_call_resume is deferred the same
 * way, so that a parser never runs inside a callback. A test that drives
 * a loop without ig_loop_run calls ig_loop_run_deferred after each event. */
#ifndef NET_CLIENT_INTERNAL_H
#define NET_CLIENT_INTERNAL_H

#include <sys/socket.h>

#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "ingot/client.h"
#include "net/client/url.h"
#include "net/dial/dial.h"
#include "net/http/response_head.h"
#include "net/metrics/metrics.h"
#include "net/sock/sock.h"

/* A connection's read buffer: taken when bytes arrive, given back when it
 * is drained, so an idle keep-alive connection holds none. A response head
 * must fit in half of it. */
#define CLIENT_RBUF_SIZE (64 * 1024)
#define CLIENT_MAX_HEAD_BYTES (CLIENT_RBUF_SIZE / 2)
#define CLIENT_MAX_HEADERS 1000
#define CLIENT_MAX_STREAMS 65536 /* outbound sockets per core */

/* ---- metrics (client_metrics.c) ----
 * Per core, written only by that core, read by the scrape on core 0: a
 * fixed table of origins (host and port; the last slot is "_OTHER", for
 * the origins beyond it) with their error counts by kind and their
 * connections, and a fixed table of duration series by origin, method and
 * status (the last slot takes whatever does not fit). An entry is filled,
 * then published by a release store of the count, so a reader that loads
 * the count with acquire sees whole entries; entries never change after. */
#define CLIENT_METRICS_ORIGINS 16
#define CLIENT_METRICS_SERIES 64

struct ig_client_metrics_origin {
	uint16_t port;
	char host[IG_URL_HOST_MAX + 1];
	ig_counter errors[IG_CLIENT_ERROR_KINDS];
	ig_counter conns_open, conns_busy; /* gauges: open, and with a call in flight */
};

struct client_metrics_series {
	uint8_t origin; /* slot; CLIENT_METRICS_ORIGINS: "_OTHER" */
	uint8_t method; /* index in ig_http_method_names */
	uint16_t status;
	struct ig_histogram duration;
};

struct client_metrics {
	struct ig_client_metrics_origin origins[CLIENT_METRICS_ORIGINS + 1];
	struct client_metrics_series series[CLIENT_METRICS_SERIES + 1];
	_Atomic uint32_t origin_count, series_count; /* published entries */
};

/* ---- per core ---- */

struct client_core {
	struct ig_loop *loop;
	struct client_core *all_next; /* every core of the process */
	struct sock_core sock;    /* outbound sockets: no listener */
	struct ig_pool calls, conns, rbufs, pools, agents;
	ig_header *scratch;          /* response head parser output, what on_headers sees */
	ig_dispatcher *agent;        /* ig_core_agent's (or a test's) */
	uint64_t connects;           /* connections opened, ever */
	struct client_metrics metrics;
	char wscratch[16384];        /* request heads gathered for one writev */
};

/* The core of the calling thread for loop, made on first use; NULL if
 * memory is short (percore.c). */
struct client_core *ig_client_core_of(struct ig_loop *loop);
/* Every core made so far, from any thread (the scrape): the first after
 * prev (NULL: the first), or NULL. A core lives as long as the process. */
const struct client_core *ig_client_core_next(const struct client_core *prev);

/* What a pool's connections and calls read of it: the origin, its
 * options and limits, the core. Set once when the pool is made. */
struct client_origin {
	struct client_core *core;
	struct ig_url url;              /* the origin */
	char host[IG_URL_HOST_MAX + 1]; /* NUL-terminated: resolver, SNI */
	ig_client_opts opts;
	struct http_limits limits;
	uint8_t metrics_origin; /* its slot in core->metrics.origins */
};

/* The slot of host:port in core's origin table, taken if new ("_OTHER"'s
 * when the table is full). On core's own thread. */
uint8_t ig_client_metrics_origin(struct client_core *core, const char *host, uint16_t port);

/* ---- a call ---- */

enum call_state {
	CALL_QUEUED,  /* in the pool's queue: no connection yet */
	CALL_ON_CONN, /* in a connection's FIFO: being written or answered */
	CALL_ZOMBIE,  /* aborted while its response was owed: the response
			 is read and dropped, then the slot is freed */
	CALL_DONE,    /* ended; its slot goes back after the batch */
};

struct client_call;

/* The caller aborted or resumed c: its holder, the pool while it is
 * queued, then the connection that took it, acts. */
struct call_holder_ops {
	void (*abort)(void *holder, struct client_call *c);
	void (*resume)(void *holder, struct client_call *c); /* NULL: nothing */
};

struct client_call {
	ig_call base; /* first: what callers hold */
	struct client_call *next; /* in the pool's queue or a FIFO */
	const struct client_origin *origin;
	const struct call_holder_ops *holder_ops;
	void *holder;
	struct ig_deferred release; /* gives the slot back: set by the pool */
	const ig_dispatch_handler *h;
	void *arg;
	ig_dispatch_opts opts; /* pointers into the caller's memory, valid
				  until the call ends (client.h) */
	enum call_state state;
	bool idempotent;
	bool head_request; /* HEAD: no body in the response */
	bool sent;         /* every byte of the request was written */
	bool responding;   /* a byte of its response has been parsed */
	bool paused;       /* on_headers/on_data said false */
	bool resent;       /* already moved to a new connection once */
	bool conn_close;   /* the caller sent Connection: close */
	bool connect_told; /* on_connect has run */
	uint8_t length_len;
	char length_line[40]; /* "Content-Length: N\r\n", when one is sent */
	/* From opts.parent: the fields the call adds (empty: not added). */
	ig_str request_id, traceparent, tracestate;
	char traceparent_value[IG_TRACEPARENT_LEN];
	size_t request_bytes; /* head and body, as written */
	uint32_t connect_ms, headers_ms, body_ms;
	uint64_t start_us; /* dispatched: the duration's start */
	uint16_t status;   /* of the final response head, 0 before one */
};

/* Counts the end of c (an error, if any, by kind; the duration, if a
 * response head came, by method and status) in its core's metrics. */
void ig_client_metrics_call_end(const struct client_call *c, enum ig_client_error error);

extern const struct ig_call_ops ig_client_call_ops;

/* Validates opts and fills the call from them (c->origin set). 0, or -1
 * with a message. */
int ig_call_init(struct client_call *c, const ig_dispatch_opts *opts, const char **why);
/* Shortens the call's connect, headers and body timeouts to what is left
 * of its parent request's deadline (ig_deadline_ms; 0: none) at now_ms, so
 * that the call fails by then (at least 1 ms: 0 would mean the default). */
void ig_call_cap_to_deadline(struct client_call *c, uint64_t deadline_ms, uint64_t now_ms);
/* Fills iov with the request's bytes from offset skip; returns the count
 * used (at most max). *more says whether bytes remain beyond them. */
int ig_call_iov(const struct client_call *c, size_t skip, struct iovec *iov, int max, bool *more);

/* Every callback to the caller goes through these. */
enum call_verdict {
	CALL_GO,    /* go on */
	CALL_PAUSE, /* the caller said false: c->paused is set */
	CALL_GONE,  /* the call ended inside the callback (aborted): it is
		       out of every list; only its state may be read */
};
void ig_call_connected(struct client_call *c);
enum call_verdict ig_call_headers(struct client_call *c, int status, const ig_header *h, size_t n);
enum call_verdict ig_call_data(struct client_call *c, const char *data, size_t len);
/* Ends the call: on_complete (error IG_CLIENT_OK) or on_error, then the
 * slot goes back after the batch. The call must be unlinked from every
 * list before. */
void ig_call_end(struct client_call *c, enum ig_client_error error, const char *message);
/* on_error now, but the slot stays in its FIFO as a zombie: its response
 * is still owed by the connection and will be read and dropped. */
void ig_call_end_zombie(struct client_call *c, enum ig_client_error error, const char *message);
/* Gives the slot back after the batch (a zombie whose response came or
 * never will). */
void ig_call_free(struct client_call *c);
/* A failure before any call exists (no pool for the origin): on_error
 * with a call that lives on the stack for the callback's length. */
void ig_call_fail_now(const ig_dispatch_handler *h, void *arg, enum ig_client_error error, const char *message);

/* ---- a connection (conn.c) ---- */

enum cconn_state {
	CC_DIALING,    /* the dial (resolve, connect) is under way */
	CC_OPEN,       /* connected (a TLS handshake may still run inside) */
	CC_CLOSED,     /* closed; its memory goes after the batch */
};

enum cconn_read {
	RD_HEAD,        /* the FIFO's first call waits for its head */
	RD_LENGTH,      /* body_left bytes of body to come */
	RD_CHUNKED,     /* decoding a chunked body */
	RD_UNTIL_CLOSE, /* the body ends with the connection */
};

/* The connect deadline is the dial's (net/dial). */
enum cconn_deadline { DL_NONE, DL_HEADERS, DL_BODY, DL_IDLE };

struct client_conn;

/* What a connection tells its owner (the pool), which set them. */
struct conn_owner_ops {
	/* k finished a response and can take more. */
	void (*ready)(void *owner, struct client_conn *k);
	/* k closed: it takes no more calls, and its slot may be reused. */
	void (*closed)(void *owner, struct client_conn *k);
	/* Calls k will not send (a list linked by next, in their order): to
	   go first to whatever connection takes calls next. */
	void (*requeue)(void *owner, struct client_call *first);
	/* k has room again, or calls were requeued: the queue may move. */
	void (*drive)(void *owner);
	/* k's memory has gone (after the batch in which it closed). */
	void (*released)(void *owner, struct client_conn *k);
};

struct client_conn {
	const struct client_origin *origin;
	const struct conn_owner_ops *owner_ops;
	void *owner;
	struct client_conn *next, *prev; /* the owner's connections */
	struct ig_transport *t;    /* what the engine talks to: TLS or socket */
	struct ig_transport *sock; /* the socket under it */
	struct ig_dial dial;       /* CC_DIALING: the resolve and connect */
	enum cconn_state state;
	enum cconn_read rd;
	struct client_call *head, *tail; /* FIFO: written or being written */
	struct client_call *unsent;      /* first call not fully written */
	size_t unsent_off;               /* its bytes already written */
	uint32_t inflight;               /* calls in the FIFO */
	uint32_t responses;              /* completed on this connection */
	char *rbuf;
	uint32_t rpos, rlen;
	uint64_t body_left;
	struct http_chunked_decoder chunked;
	struct ig_timer timer;
	enum cconn_deadline dl;
	uint64_t deadline_ms;
	uint64_t idle_ms; /* keep-alive expiry: the pool's, or less if the
			     server said so (Keep-Alive: timeout=N) */
	uint32_t connect_ms; /* the dial's deadline, from ig_conn_open */
	bool reusable;    /* may take more requests (no Connection: close) */
	bool retiring;    /* the owner is going: close once the FIFO is empty */
	bool processing;  /* parsing: writes wait for its end, and a resume
			     never enters the parser again */
	struct ig_deferred resume;  /* a call of it was resumed */
	struct ig_deferred release; /* closed: the memory goes */
};

/* A connection's gauges in its origin's metrics, delta +1 or -1: open
 * (from ig_conn_open until closed) and busy (while a call is in flight). */
void ig_client_metrics_conn_open(const struct client_origin *o, int delta);
void ig_client_metrics_conn_busy(const struct client_origin *o, int delta);

/* A new connection to origin, not started, not linked anywhere; NULL when
 * out of slots. connect_ms bounds its dial (name resolution included),
 * from ig_conn_start. */
struct client_conn *ig_conn_open(const struct client_origin *origin, const struct conn_owner_ops *ops, void *owner,
			      uint32_t connect_ms);
/* Resolves and connects; a failure at once fails the calls it has taken. */
void ig_conn_start(struct client_conn *k);
/* Takes call c (already in no list) at the end of the FIFO and writes it
 * as soon as it can. */
void ig_conn_take(struct client_conn *k, struct client_call *c);
/* Whether k can take c now: the pipelining depth, and a call that is not
 * idempotent only on a connection with nothing in flight. */
bool ig_conn_can_take(const struct client_conn *k, const struct client_call *c);
/* The owner is going: k takes no more calls and closes once idle. */
void ig_conn_retire(struct client_conn *k);

/* ---- a pool: the connections to one origin (pool.c) ---- */

struct client_pool;

/* What a pool tells whoever made it (an agent), which set them. */
struct pool_owner_ops {
	/* p has nothing left (no call, no connection) and is freed when
	   this returns; an owned pool goes so even if not destroyed. */
	void (*gone)(void *owner, struct client_pool *p);
};

struct client_pool {
	ig_dispatcher d; /* first */
	struct client_origin o;
	const struct pool_owner_ops *owner_ops; /* NULL: made by ig_client_new/ig_pool_new */
	void *owner;
	struct client_pool *next;   /* the agent's pools */
	struct client_conn *conns; /* most recently ready first */
	uint32_t conn_count;
	struct client_call *queue, *queue_tail;
	uint32_t queued;
	uint32_t calls;   /* slots taken by its calls, zombies included */
	uint32_t closing; /* connections closed but not yet freed */
	bool destroyed;   /* freed once its connections and calls are gone */
	bool driving, drive_again; /* one walk of the queue at a time */
	struct ig_deferred release;
};

/* Defaults filled in, limits clamped. */
void ig_client_opts_resolve(ig_client_opts *out, const ig_client_opts *in);
struct client_pool *ig_client_pool_new(struct client_core *core, const struct ig_url *origin,
			     const ig_client_opts *opts, const struct pool_owner_ops *owner_ops, void *owner);
ig_call *ig_pool_dispatch(ig_dispatcher *d, const ig_dispatch_opts *opts,
		       const ig_dispatch_handler *handler, void *arg);

/* ---- the agent: a pool per origin (agent.c) ---- */

struct client_agent {
	ig_dispatcher d; /* first */
	struct client_core *core;
	ig_client_opts opts;
	struct client_pool *pools; /* most recently used first */
	uint32_t pool_count;
	bool destroyed;
	struct ig_deferred release;
};

/* ---- a wrapping dispatcher's call states (retry.c, redirect.c, mock.c;
 * implemented in interceptors.c) ----
 * The interceptors and the mock agent keep one state per outer call, taken
 * from a pool per thread and per kind of state (struct wrap_slots), so a
 * call allocates nothing. A state whose caller has had on_complete or
 * on_error is released after the batch (ig_wrap_call_ended; see "What may be
 * freed when" above), so no frame of ours, nor a caller that ends the
 * call from inside a callback, is ever left with a freed state. A
 * destroyed dispatcher is freed with its last state. */

struct wrap_call;
struct wrap_slots;

/* A response that is dropped (a retried 5xx, a followed 3xx) is read to
 * its end so the connection stays usable, but only up to this much: an
 * upstream trickling an endless body must not hold the call. Beyond it,
 * the inner call is aborted and the interceptor goes on. */
#define WRAP_DRAIN_MAX (64 * 1024)

struct wrap_owner {
	ig_dispatcher d;         /* first: what callers hold */
	struct wrap_call *calls; /* live ones, for destroy */
	uint32_t live;           /* states taken and not yet released */
	bool destroying;
	void (*free)(struct wrap_owner *o); /* once destroying and live is 0 */
};

struct wrap_call {
	ig_call call; /* first: what the caller holds */
	struct wrap_owner *owner;
	struct wrap_slots *slots; /* the pool it came from */
	struct wrap_call *prev, *next;
	struct ig_deferred release;
};

/* The pool of one kind of state, made on first use; declare it
 *   static _Thread_local struct wrap_slots slots = WRAP_SLOTS(struct x_call, 64, 65536); */
struct wrap_slots {
	struct ig_pool pool;
	size_t size, chunk_objs, max_objs;
	bool ready;
};
#define WRAP_SLOTS(type, chunk, max) { .size = sizeof(type), .chunk_objs = (chunk), .max_objs = (max) }

/* Memory for a state (the whole object, a struct wrap_call first); NULL
 * when the pool is exhausted. Fill it, then ig_wrap_call_link it. */
void *ig_wrap_call_take(struct wrap_slots *s);
/* Counts w (taken from s) as one of o's live calls. */
void ig_wrap_call_link(struct wrap_owner *o, struct wrap_slots *s, struct wrap_call *w);
/* The caller has had its last callback: w goes back after the batch. */
void ig_wrap_call_ended(struct wrap_call *w);
/* o is being destroyed: between these two its calls are ended; then o is
 * freed, at once if none is left, else with the last one released. */
void ig_wrap_destroy_begin(struct wrap_owner *o);
void ig_wrap_destroy_end(struct wrap_owner *o);

/* ---- an interceptor's call (retry.c, redirect.c; interceptors.c) ----
 * The retry and redirect interceptors run one inner call at a time for
 * each outer call and forward it to the caller once they keep a response;
 * the plumbing of both sides is here, and each interceptor keeps only its
 * decisions (struct wrap_fwd_kind). A wrap_fwd is the first member of
 * their call states, so it is also the inner calls' handler argument. */

enum wrap_state {
	WRAP_TRY,   /* an inner call runs; nothing has reached the caller */
	WRAP_DRAIN, /* its response will not be kept: dropping its body */
	WRAP_WAIT,  /* no inner call: the interceptor waits (retry's backoff) */
	WRAP_PASS,  /* the caller has the head: the rest is forwarded */
	WRAP_ENDED, /* the caller has had on_complete or on_error */
};

struct wrap_fwd;

struct wrap_fwd_kind {
	const char *destroyed_message, *busy_message; /* for a call refused */
	/* A head while WRAP_TRY: true drops the response (WRAP_DRAIN). */
	bool (*drop)(struct wrap_fwd *c, int status, const ig_header *headers, size_t count);
	/* A dropped response is over (complete). */
	void (*dropped)(struct wrap_fwd *c);
	/* The inner call failed and the caller did not abort: true if the
	   interceptor goes on (or ended the call itself), false to pass the
	   error to the caller. */
	bool (*failed)(struct wrap_fwd *c, enum ig_client_error error, const char *message);
	/* The call ends while WRAP_WAIT; NULL if the kind never waits. */
	void (*cancel_wait)(struct wrap_fwd *c);
};

struct wrap_fwd {
	struct wrap_call w; /* first: what the caller holds */
	const struct wrap_fwd_kind *kind;
	ig_dispatch_opts opts; /* the current inner call's */
	const ig_dispatch_handler *h;
	void *arg;
	ig_call *inner; /* valid while inner_live */
	bool inner_live;
	bool connected; /* on_connect was forwarded */
	bool aborting;  /* the caller aborted: no more inner calls */
	enum wrap_state state;
	uint64_t drained;                      /* body bytes dropped in WRAP_DRAIN */
	uint32_t retries, redirects;           /* made by this interceptor */
	uint32_t done_retries, done_redirects; /* reported by ended inner calls */
};

/* Memory for a call of o (a struct wrap_fwd first), or NULL once the
 * caller had on_error (o destroyed, or s exhausted). Zero the kind's own
 * fields, then ig_wrap_fwd_begin it. */
void *ig_wrap_fwd_take(struct wrap_owner *o, struct wrap_slots *s, const struct wrap_fwd_kind *kind,
		    const ig_dispatch_handler *h, void *arg);
/* Fills c's shared fields, links it and starts its first inner call on
 * inner: what the interceptor's dispatch returns. */
ig_call *ig_wrap_fwd_begin(struct wrap_fwd *c, struct wrap_owner *o, struct wrap_slots *s,
			const struct wrap_fwd_kind *kind, ig_dispatcher *inner, const ig_dispatch_opts *opts,
			const ig_dispatch_handler *h, void *arg);
/* Sets up o (calloc'ed, freed with free) as a dispatcher wrapping inner. */
void ig_wrap_fwd_owner_init(struct wrap_owner *o, const struct ig_dispatcher_ops *ops, ig_dispatcher *inner);
/* Ends a destroy begun with ig_wrap_destroy_begin: destroys *inner, then o
 * once its last call is gone. */
void ig_wrap_fwd_destroy_end(struct wrap_owner *o, ig_dispatcher **inner);
/* Dispatches c->opts on inner (WRAP_TRY). */
void ig_wrap_fwd_start(struct wrap_fwd *c, ig_dispatcher *inner);
/* Ends the caller's call with on_error (WRAP_ENDED). */
void ig_wrap_fwd_end_with_error(struct wrap_fwd *c, enum ig_client_error error, const char *message);

#endif
