/* Shared inside net/client's connection management: the per-core client
 * state, a call, a connection (conn.c), a pool of connections to one
 * origin (pool.c) and the agent's pools (agent.c); and the call states of
 * the interceptors and the mock agent. Not for apps: they see client.h
 * (interceptors.h, mock.h) only.
 *
 * Ownership, bottom up: a call belongs to its pool's queue until a
 * connection takes it, then to that connection's FIFO until it ends. A
 * connection belongs to its pool, a pool to its agent (or to whoever made
 * it with ig_client_new / ig_pool_new). Everything is taken from the
 * core's pools (struct client_core); nothing is shared between cores. */
#ifndef NET_CLIENT_INTERNAL_H
#define NET_CLIENT_INTERNAL_H

#include <sys/socket.h>

#include "kernel/loop.h"
#include "kernel/pool.h"
#include "net/client/client.h"
#include "net/client/url.h"
#include "net/http/response_head.h"
#include "net/sock/sock.h"

/* A connection's read buffer: taken when bytes arrive, given back when it
 * is drained, so an idle keep-alive connection holds none. A response head
 * must fit in half of it. */
#define CLIENT_RBUF_SIZE (64 * 1024)
#define CLIENT_MAX_HEAD_BYTES (CLIENT_RBUF_SIZE / 2)
#define CLIENT_MAX_HEADERS 1000
#define CLIENT_MAX_ADDRS 4     /* addresses of a name tried in turn */
#define CLIENT_MAX_STREAMS 65536 /* outbound sockets per core */

/* ---- per core ---- */

struct client_conn;

struct client_core {
	struct ig_loop *loop;
	struct client_core *next; /* the other loops of this thread */
	struct client_core *all_next; /* every core of the process */
	struct sock_core sock;    /* outbound sockets: no listener */
	struct ig_pool calls, conns, rbufs, pools, agents;
	struct http_header *scratch; /* response head parser output */
	ig_header *headers;          /* what on_headers sees */
	ig_dispatcher *agent;        /* ig_core_agent's (or a test's) */
	struct dns_resolver *dns;    /* made on the first name to resolve */
	uint32_t delivering;         /* user callbacks on the stack */
	struct client_conn *resumes; /* ig_call_resume asked inside one */
	uint64_t connects;           /* connections opened, ever */
	char wscratch[16384];        /* request heads gathered for one writev */
};

/* The core of the calling thread for loop, made on first use; NULL if
 * memory is short. */
struct client_core *client_core_of(struct ig_loop *loop);

/* ---- a call ---- */

enum call_state {
	CALL_QUEUED,  /* in the pool's queue: no connection yet */
	CALL_ON_CONN, /* in a connection's FIFO: being written or answered */
	CALL_ZOMBIE,  /* aborted while its response was owed: the response
			 is read and dropped, then the slot is freed */
	CALL_DONE,    /* ended; the slot goes back once the callback returns */
};

struct client_pool;

struct client_call {
	ig_call base; /* first: what callers hold */
	struct client_call *next; /* in the pool's queue or a FIFO */
	struct client_pool *pool;
	struct client_conn *conn;
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
	uint8_t in_callback; /* its callbacks on the stack */
	uint8_t length_len;
	char length_line[40]; /* "Content-Length: N\r\n", when one is sent */
	size_t request_bytes; /* head and body, as written */
	uint32_t connect_ms, headers_ms, body_ms;
};

extern const struct ig_call_ops client_call_ops;

/* Validates opts and fills the call from them (c->pool set). 0, or -1
 * with a message. */
int call_init(struct client_call *c, const ig_dispatch_opts *opts, const char **why);
/* Fills iov with the request's bytes from offset skip; returns the count
 * used (at most max). *more says whether bytes remain beyond them. */
int call_iov(const struct client_call *c, size_t skip, struct iovec *iov, int max, bool *more);

/* Every callback to the caller goes through these, so that the core knows
 * when user code is on the stack (client_core.delivering). */
enum call_verdict {
	CALL_GO,    /* go on */
	CALL_PAUSE, /* the caller said false: c->paused is set */
	CALL_GONE,  /* the call ended inside the callback (aborted): it is
		       out of every list and must not be touched */
};
void call_connected(struct client_call *c);
enum call_verdict call_headers(struct client_call *c, int status, const struct http_header *h, size_t n);
enum call_verdict call_data(struct client_call *c, const char *data, size_t len);
/* Ends the call: on_complete (error IG_CLIENT_OK) or on_error, then the
 * slot is freed (when its own callbacks have returned). The call must be
 * unlinked from every list before. */
void call_end(struct client_call *c, enum ig_client_error error, const char *message);
/* on_error now, but the slot stays in its FIFO as a zombie: its response
 * is still owed by the connection and will be read and dropped. */
void call_end_zombie(struct client_call *c, enum ig_client_error error, const char *message);
/* Gives the slot back (a zombie whose response came or never will). */
void call_free(struct client_call *c);
/* A failure before any call exists (no pool for the origin): on_error
 * with a call that lives on the stack for the callback's length. */
void call_fail_now(struct client_core *core, const ig_dispatch_handler *h, void *arg,
		   enum ig_client_error error, const char *message);

/* ---- a connection (conn.c) ---- */

enum cconn_state {
	CC_RESOLVING,  /* waiting for the resolver */
	CC_CONNECTING, /* TCP connect in progress */
	CC_OPEN,       /* connected (a TLS handshake may still run inside) */
	CC_CLOSED,     /* freed once no callback of it is on the stack */
};

enum cconn_read {
	RD_HEAD,        /* the FIFO's first call waits for its head */
	RD_LENGTH,      /* body_left bytes of body to come */
	RD_CHUNKED,     /* decoding a chunked body */
	RD_UNTIL_CLOSE, /* the body ends with the connection */
};

enum cconn_deadline { DL_NONE, DL_CONNECT, DL_HEADERS, DL_BODY, DL_IDLE };

struct client_conn {
	struct client_pool *pool;
	struct client_conn *next, *prev; /* the pool's connections */
	struct ig_transport *t;    /* what the engine talks to: TLS or socket */
	struct ig_transport *sock; /* the socket under it */
	struct dns_query *dns;
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
	uint32_t connect_ms; /* the connect deadline's length, for messages */
	uint32_t busy;    /* entries of this connection on the stack */
	uint8_t addr_next, addr_count;
	bool reusable;    /* may take more requests (no Connection: close) */
	bool processing;  /* parsing: writes and drives wait for its end */
	bool resume_queued;
	struct client_conn *resume_next;
	struct sockaddr_storage addrs[CLIENT_MAX_ADDRS];
};

/* A new connection of p, not started; NULL when out of slots. The
 * connect deadline (name resolution included) starts now. */
struct client_conn *conn_open(struct client_pool *p, uint32_t connect_ms);
/* Resolves and connects; a failure at once fails the calls it has taken. */
void conn_start(struct client_conn *k);
/* Takes call c (already in no list) at the end of the FIFO and writes it
 * as soon as it can. */
void conn_take(struct client_conn *k, struct client_call *c);
/* Whether k can take c now: the pipelining depth, and a call that is not
 * idempotent only on a connection with nothing in flight. */
bool conn_can_take(const struct client_conn *k, const struct client_call *c);
/* Closes an idle connection (no call in its FIFO). */
void conn_close_idle(struct client_conn *k);
/* ig_call_abort / ig_call_resume for a call on a connection. */
void conn_abort_call(struct client_conn *k, struct client_call *c);
void conn_resume_call(struct client_conn *k, struct client_call *c);
/* Runs resumes that were asked while user code was on the stack. */
void conn_run_resumes(struct client_core *core);

/* ---- a pool: the connections to one origin (pool.c) ---- */

struct client_agent;

struct client_pool {
	ig_dispatcher d; /* first */
	struct client_core *core;
	struct client_agent *agent; /* NULL: made by ig_client_new/ig_pool_new */
	struct client_pool *next;   /* the agent's pools */
	struct ig_url url;          /* the origin */
	char host[IG_URL_HOST_MAX + 1]; /* NUL-terminated: resolver, SNI */
	ig_client_opts opts;
	struct http_limits limits;
	struct client_conn *conns; /* most recently ready first */
	uint32_t conn_count;
	struct client_call *queue, *queue_tail;
	uint32_t queued;
	uint32_t calls;   /* slots taken by its calls, zombies included */
	uint32_t closing; /* connections closed but not yet freed */
	uint32_t busy;    /* its functions on the stack */
	bool destroyed;   /* freed once its connections and calls are gone */
	bool driving, drive_again;
};

/* Defaults filled in, limits clamped. */
void client_opts_resolve(ig_client_opts *out, const ig_client_opts *in);
struct client_pool *pool_new(struct client_core *core, const struct ig_url *origin,
			     const ig_client_opts *opts, struct client_agent *agent);
/* Assigns queued calls to connections, opening new ones up to the limit. */
void pool_drive(struct client_pool *p);
/* Puts calls back at the front of the queue, in their order (a list
 * linked by next). */
void pool_requeue(struct client_pool *p, struct client_call *first);
/* A connection of p closed (it is already unlinked). */
void pool_conn_gone(struct client_pool *p, struct client_conn *k);
/* A connection finished a response and can take more: first in the list. */
void pool_conn_ready(struct client_pool *p, struct client_conn *k);
/* Frees a destroyed pool with nothing left in it. */
void pool_settle(struct client_pool *p);
/* Takes a queued call out of the queue. */
void pool_unqueue(struct client_pool *p, struct client_call *c);
/* Fails every queued call with error (pool destroyed, origin unreachable). */
void pool_fail_queued(struct client_pool *p, enum ig_client_error error, const char *message);
ig_call *pool_dispatch(ig_dispatcher *d, const ig_dispatch_opts *opts,
		       const ig_dispatch_handler *handler, void *arg);

/* ---- the agent: a pool per origin (agent.c) ---- */

struct client_agent {
	ig_dispatcher d; /* first */
	struct client_core *core;
	ig_client_opts opts;
	struct client_pool *pools; /* most recently used first */
	uint32_t pool_count;
	uint32_t busy;
	bool destroyed;
};

/* A pool of the agent has gone (destroyed and settled). */
void agent_pool_gone(struct client_agent *a, struct client_pool *p);

/* ---- a wrapping dispatcher's call states (retry.c, redirect.c, mock.c;
 * implemented in interceptors.c) ----
 * The interceptors and the mock agent keep one state per outer call, taken
 * from a pool per thread and per kind of state (struct wrap_slots), so a
 * call allocates nothing. Every entry point holds the state while it runs:
 * a state is given back only when no frame of ours uses it and its caller
 * has had on_complete or on_error, so a caller that ends the call from
 * inside a callback never leaves us a freed state. A destroyed dispatcher
 * is freed when its last state is. */

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
	uint32_t live;           /* states taken, plus one while destroy runs */
	bool destroying;
	void (*free)(struct wrap_owner *o); /* once destroying and live is 0 */
};

struct wrap_call {
	ig_call call; /* first: what the caller holds */
	struct wrap_owner *owner;
	struct wrap_slots *slots; /* the pool it came from */
	struct wrap_call *prev, *next;
	uint32_t holds; /* frames of ours that still use this state */
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
 * when the pool is exhausted. Fill it, then wrap_call_link it. */
void *wrap_call_take(struct wrap_slots *s);
/* Counts w (taken from s) as one of o's live calls. */
void wrap_call_link(struct wrap_owner *o, struct wrap_slots *s, struct wrap_call *w);
static inline void wrap_hold(struct wrap_call *w)
{
	w->holds++;
}
/* Drops a hold; ended: the caller has had its last callback. */
void wrap_let_go(struct wrap_call *w, bool ended);
/* Between these two, o stays allocated whatever its calls do. */
void wrap_destroy_begin(struct wrap_owner *o);
void wrap_destroy_end(struct wrap_owner *o);

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

/* Every entry point holds the call while it runs (above). */
static inline void wrap_fwd_hold(struct wrap_fwd *c)
{
	wrap_hold(&c->w);
}
static inline void wrap_fwd_let_go(struct wrap_fwd *c)
{
	wrap_let_go(&c->w, c->state == WRAP_ENDED);
}
/* Memory for a call of o (a struct wrap_fwd first), or NULL once the
 * caller had on_error (o destroyed, or s exhausted). Zero the kind's own
 * fields, then wrap_fwd_begin it. */
void *wrap_fwd_take(struct wrap_owner *o, struct wrap_slots *s, const struct wrap_fwd_kind *kind,
		    const ig_dispatch_handler *h, void *arg);
/* Fills c's shared fields, links it and starts its first inner call on
 * inner: what the interceptor's dispatch returns. */
ig_call *wrap_fwd_begin(struct wrap_fwd *c, struct wrap_owner *o, struct wrap_slots *s,
			const struct wrap_fwd_kind *kind, ig_dispatcher *inner, const ig_dispatch_opts *opts,
			const ig_dispatch_handler *h, void *arg);
/* Sets up o (calloc'ed, freed with free) as a dispatcher wrapping inner. */
void wrap_fwd_owner_init(struct wrap_owner *o, const struct ig_dispatcher_ops *ops, ig_dispatcher *inner);
/* Ends a destroy begun with wrap_destroy_begin: destroys *inner, then o
 * once its last call is gone. */
void wrap_fwd_destroy_end(struct wrap_owner *o, ig_dispatcher **inner);
/* Dispatches c->opts on inner (WRAP_TRY). */
void wrap_fwd_start(struct wrap_fwd *c, ig_dispatcher *inner);
/* Ends the caller's call with on_error (WRAP_ENDED). */
void wrap_fwd_end_with_error(struct wrap_fwd *c, enum ig_client_error error, const char *message);

#endif
