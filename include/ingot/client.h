/* Outbound HTTP/1.1 on the core's own loop, modelled on Node's undici.
 *
 * Layers, bottom up:
 *   dispatch  ig_dispatch(d, opts, handler, arg): the low-level core. The
 *             handler's callbacks run on the calling core's loop, in order
 *             on_connect, on_headers, on_data*, on_complete | on_error.
 *   Client    one connection to one origin: keep-alive, pipelining up to
 *             a configurable depth (default 1).
 *   Pool      several Clients to one origin on this core.
 *   Agent     a Pool per origin (scheme, host, port), with limits on
 *             connections per origin and idle expiry.
 *   interceptors  wrap a dispatcher and are dispatchers themselves, so they
 *             compose in the order they are declared (retry, redirect,
 *             mock: see interceptors.h and mock.h).
 *   request   ig_fetch: method, URL, headers, body; the whole response
 *             lands in an arena (request.c). ig_stream delivers the body
 *             in chunks with back-pressure.
 *
 * Everything here belongs to one core: a dispatcher is created on a core's
 * loop and used only there, from that loop's thread; every callback runs
 * there too, with the call first and the caller's arg last. Nothing
 * allocates per request beyond the caller's arena: a call's state is taken
 * from a per-core pool. A call's failure is a value (enum
 * ig_client_error) delivered to its callback, never a return code: the
 * starting functions cannot fail silently.
 *
 * Inside a handler: start calls, return IG_PENDING, and call ig_finish from
 * the completion callback (ig_core_agent gives the core's Agent). Responses
 * on the inbound connection still leave in pipelining order. */
#ifndef INGOT_CLIENT_H
#define INGOT_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingot/base.h"
#include "ingot/http.h"

struct ig_loop;
/* Something calls can be dispatched to (a Client, Pool, Agent, an
 * interceptor, the mock agent); owned by whoever made it, until its
 * destroy. */
typedef struct ig_dispatcher ig_dispatcher;
/* One call in flight, owned by its dispatcher: valid from ig_dispatch
 * until on_complete or on_error has returned, and not after. */
typedef struct ig_call ig_call;

/* Why a call failed: every on_error carries one of these and a message. */
enum ig_client_error {
	IG_CLIENT_OK = 0,
	IG_CLIENT_DNS,             /* name resolution failed */
	IG_CLIENT_CONNECT,         /* refused, unreachable */
	IG_CLIENT_CONNECT_TIMEOUT,
	IG_CLIENT_HEADERS_TIMEOUT, /* no complete response head in time */
	IG_CLIENT_BODY_TIMEOUT,    /* the body stalled between chunks */
	IG_CLIENT_RESET,           /* the connection closed or reset mid-response */
	IG_CLIENT_PROTOCOL,        /* a malformed or hostile response */
	IG_CLIENT_TOO_LARGE,       /* over a header or body limit */
	IG_CLIENT_TLS,             /* handshake or certificate failure */
	IG_CLIENT_ABORTED,         /* ig_call_abort, or the dispatcher closed */
	IG_CLIENT_BUSY,            /* a queue or connection limit was reached */
	IG_CLIENT_REDIRECT_LIMIT,
	IG_CLIENT_MOCK_UNMATCHED,  /* mock agent: no interceptor matched */
	IG_CLIENT_NET_FORBIDDEN,   /* mock agent: real network is disabled */
	IG_CLIENT_BAD_REQUEST,     /* the options themselves are invalid */
	IG_CLIENT_CANCELLED,       /* a linear call's request was cancelled (the
				      client left, or the drain's grace ended) */
};
#define IG_CLIENT_ERROR_KINDS (IG_CLIENT_CANCELLED + 1)
/* e's name ("connect_timeout"), for logs and metrics labels. Returns:
 * static storage; "unknown" for a value not in the enum. Any thread. */
const char *ig_client_error_name(enum ig_client_error e);

/* ---- dispatch ---- */

/* What to send. The caller keeps the struct, and everything it points to,
 * valid until the call has ended (on_complete or on_error): a queued call
 * or a retry reads them later. */
typedef struct ig_dispatch_opts {
	const char *method;      /* "GET", ...; NULL means GET */
	ig_str origin;           /* "http://host:port" / "https://host"; empty for
				    a Client or Pool (their own origin) */
	ig_str path;             /* "/json?x=1": origin-form target */
	const ig_header *headers; /* extra request headers (Host and
				     Content-Length are added) */
	size_t header_count;
	ig_str body;
	uint32_t connect_timeout_ms; /* 0: the dispatcher's default */
	uint32_t headers_timeout_ms;
	uint32_t body_timeout_ms;
	int8_t idempotent;       /* -1: from the method; 0 or 1: as given */
	ig_ctx *parent;          /* the inbound request the call is made for, or
				    NULL. The call then carries its X-Request-Id,
				    a traceparent naming a new client span of its
				    trace (ig_traceparent_child: same trace id and
				    flags), and its tracestate; each unless headers
				    has that field already (tracestate is left out
				    too when headers has a traceparent). */
} ig_dispatch_opts;

/* The callbacks of one call, in the order on_connect, on_headers,
 * on_data*, then exactly one of on_complete and on_error. Each takes the
 * call first and the caller's arg (given to ig_dispatch) last, and runs on
 * the dispatcher's loop. The headers, data and message passed in are
 * valid only during the callback. The handler struct itself must stay
 * valid until the call has ended (a static const one, usually). Any of
 * them may be NULL. Inside a callback the caller may abort or resume any
 * call, dispatch new ones, or finish an inbound exchange. */
typedef struct ig_dispatch_handler {
	/* The request was written to a connection. */
	void (*on_connect)(ig_call *call, void *arg);
	/* The final response head (1xx are skipped). Returns: true to go on;
	   false pauses the body until ig_call_resume. */
	bool (*on_headers)(ig_call *call, int status, const ig_header *headers, size_t count, void *arg);
	/* A piece of the body, decoded (no chunk framing), never empty.
	   Returns: true to go on; false pauses. */
	bool (*on_data)(ig_call *call, const char *data, size_t len, void *arg);
	/* The response is complete; the call is over (call is invalid once
	   this returns). */
	void (*on_complete)(ig_call *call, void *arg);
	/* The call failed with error (message: static or valid during the
	   call); nothing else follows, and call is invalid once this
	   returns. It may run before ig_dispatch returns (an immediate
	   failure), with a call that aborting or resuming leaves alone. */
	void (*on_error)(ig_call *call, enum ig_client_error error, const char *message, void *arg);
} ig_dispatch_handler;

/* What every dispatcher implements; apps call them through ig_dispatch
 * and through the destroy of the dispatcher they made. */
struct ig_dispatcher_ops {
	/* Starts a call; every outcome, even an immediate failure, arrives
	   through the handler (an immediate one before this returns). Returns
	   the call (valid until its end), or NULL when it already ended. */
	ig_call *(*dispatch)(ig_dispatcher *d, const ig_dispatch_opts *opts,
			     const ig_dispatch_handler *handler, void *arg);
	/* Closes idle connections, fails queued calls with IG_CLIENT_ABORTED
	   and frees the dispatcher once its calls have ended; d must not be
	   used after. */
	void (*destroy)(ig_dispatcher *d);
};

/* A dispatcher's common head: implementations embed it first. */
struct ig_dispatcher {
	const struct ig_dispatcher_ops *ops;
	struct ig_loop *loop;
	uint64_t max_body_bytes; /* ig_fetch's default limit (0: 1 MiB);
				    interceptors copy their inner's */
};

/* Starts a call on d (d->ops->dispatch's contract). On d's loop's
 * thread; opts, handler and arg as above. */
static inline ig_call *ig_dispatch(ig_dispatcher *d, const ig_dispatch_opts *opts,
				   const ig_dispatch_handler *handler, void *arg)
{
	return d->ops->dispatch(d, opts, handler, arg);
}

/* Every dispatcher's call state begins with struct ig_call, so that
 * ig_call_abort and ig_call_resume reach whichever dispatcher made the call
 * (a Client, an interceptor, the mock agent). A dispatcher zeroes retries
 * and redirects; an interceptor sets them on its own call before each
 * callback it forwards, adding what its inner calls reported, so the
 * outermost call carries the totals (ig_response.retries, .redirects). */
struct ig_call_ops {
	void (*abort)(ig_call *call);
	void (*resume)(ig_call *call);
};
struct ig_call {
	const struct ig_call_ops *ops;
	uint32_t retries, redirects;
};

/* Ends a call early: on_error(IG_CLIENT_ABORTED) runs before this
 * returns, and call is invalid after. Only on a call that has not ended;
 * on its dispatcher's loop. */
static inline void ig_call_abort(ig_call *call) { call->ops->abort(call); }
/* Continues a body paused by on_headers or on_data returning false; the
 * body goes on once the loop's current batch of callbacks has returned
 * (as from a socket: never inside the caller's frame). Only on a call
 * that has not ended. */
static inline void ig_call_resume(ig_call *call) { call->ops->resume(call); }

/* ---- Client, Pool, Agent ----
 *
 * A Client is one connection to one origin (reopened when it closes); a
 * Pool is up to `connections` of them; an Agent is a Pool per origin
 * (scheme, host, port), made on the origin's first call and dropped when
 * its last connection has closed. A call goes to the first connection that
 * can take it, preferring the one that most recently finished a response;
 * a new connection opens only when none can, up to the limit; beyond it the
 * call waits (up to max_queued, then IG_CLIENT_BUSY).
 *
 * Pipelining: up to `pipelining` requests in flight per connection, their
 * requests gathered into one write. A call that is not idempotent (POST,
 * PATCH, or any call with opts.idempotent = 0) is only written to a connection with
 * nothing in flight, so every call pipelined behind another is idempotent.
 *
 * When a connection fails (a malformed or hostile response, a reset, a
 * timeout), the call it was answering fails with that error (its
 * on_headers may have run), the connection closes, and the calls behind it,
 * whose responses had not begun, are written again on another connection,
 * in their order: they are idempotent or were never written. One more is
 * sent again, once: an idempotent call whose request went out on a reused
 * keep-alive connection that the upstream closed before answering (the
 * keep-alive race). A connection that cannot be set up (name, connect, TLS
 * handshake) fails every call waiting for it. Bytes that arrive when no
 * request is in flight close the connection; no response is taken from
 * bytes that came before its request. An aborted call whose request was
 * written but whose response had not begun keeps its place: its response
 * is read and dropped. Idle connections close after keep_alive_ms, or
 * earlier if the upstream's Keep-Alive: timeout=N says so.
 *
 * Timeouts: connect (name resolution and TCP connect), headers (from when
 * the call's request is at the head of its connection to its response
 * head; a TLS handshake counts here), body (the longest stall between two
 * pieces of the body; none while the caller has paused it). */

/* A Client's, Pool's or Agent's options; zero fields mean their defaults.
 * Copied by the new that takes them, but for trust, which is kept (the
 * runtime's, or one that outlives the dispatcher). */
typedef struct ig_client_opts {
	uint32_t connections;        /* Pool/Agent: per origin (default 8) */
	uint32_t pipelining;         /* requests in flight per connection (default 1) */
	uint32_t connect_timeout_ms; /* default 10000 */
	uint32_t headers_timeout_ms; /* default 30000 */
	uint32_t body_timeout_ms;    /* default 30000 */
	uint32_t keep_alive_ms;      /* idle connection expiry (default 4000) */
	uint32_t max_header_bytes;   /* response head (default 16384, at most 32768) */
	uint32_t max_headers;        /* default 100, at most 1000 */
	uint64_t max_body_bytes;     /* ig_fetch's limit (default 1 MiB) */
	uint32_t max_queued;         /* calls waiting for a connection (default 1024) */
	const struct tls_trust *trust; /* https: NULL means the runtime's anchors */
} ig_client_opts;

/* Make a Client, a Pool or an Agent on loop (used only from its thread).
 * origin and opts are copied; opts may be NULL (every default). A Client
 * or Pool takes calls whose opts.origin is empty or its own origin.
 * Returns: the dispatcher, the caller's until it calls d->ops->destroy;
 * NULL (errno set) when the origin is not a valid http:// or https://
 * origin or memory is short, and nothing was made. */
IG_MUST_USE IG_NONNULL(1, 2)
ig_dispatcher *ig_client_new(struct ig_loop *loop, const char *origin, const ig_client_opts *opts);
IG_MUST_USE IG_NONNULL(1, 2)
ig_dispatcher *ig_pool_new(struct ig_loop *loop, const char *origin, const ig_client_opts *opts);
IG_MUST_USE IG_NONNULL(1) ig_dispatcher *ig_agent_new(struct ig_loop *loop, const ig_client_opts *opts);

/* This core's shared Agent, created on first use; or the dispatcher set
 * with ig_core_set_agent. From a handler, or a callback of ctx's.
 * Returns: the runtime's dispatcher (never destroy it), for the life of
 * the core; NULL if memory is short or the client is not set up on this
 * core. Its options are the
 * settings parsed at startup (net/client/settings.h; a bad value stops the
 * start): INGOT_CLIENT_CONNECTIONS (8), INGOT_CLIENT_PIPELINING (1),
 * INGOT_CLIENT_CONNECT_TIMEOUT_MS (10000), INGOT_CLIENT_HEADERS_TIMEOUT_MS
 * (30000), INGOT_CLIENT_BODY_TIMEOUT_MS (30000), INGOT_CLIENT_KEEP_ALIVE_MS
 * (4000), INGOT_CLIENT_MAX_HEADER_BYTES (16384), INGOT_CLIENT_MAX_HEADERS
 * (100), INGOT_CLIENT_MAX_BODY (1048576), INGOT_CLIENT_MAX_QUEUED (1024);
 * https trust from INGOT_TLS_CA_FILE / INGOT_TLS_CA_MODE (net/tls/tls.h). */
IG_NONNULL(1) ig_dispatcher *ig_core_agent(ig_ctx *ctx);
/* Puts d where ig_core_agent finds it on loop's core (tests put a mock
 * agent there); the dispatcher it replaces is not destroyed, and d stays
 * the caller's. On loop's thread. */
IG_NONNULL(1) void ig_core_set_agent(struct ig_loop *loop, ig_dispatcher *d);

/* ---- request: the whole response in an arena ---- */

/* A call's outcome as ig_fetch hands it over: in the call's arena, every
 * slice too, until that arena is reset. */
typedef struct ig_response {
	enum ig_client_error error; /* IG_CLIENT_OK: the fields below hold */
	const char *error_message;
	int status;
	const ig_header *headers;
	size_t header_count;
	ig_str body;
	uint32_t redirects, retries; /* what the interceptors did */
} ig_response;

/* ig_fetch's completion: the response first, the caller's arg last. */
typedef void ig_response_fn(ig_response *res, void *arg);

/* What ig_fetch sends: url is copied during the call; headers and body
 * must stay valid until done has run. */
typedef struct ig_fetch_opts {
	const char *method;       /* NULL: GET */
	const char *url;          /* absolute: "http://host:port/path?q" */
	const ig_header *headers;
	size_t header_count;
	ig_str body;
	uint32_t connect_timeout_ms, headers_timeout_ms, body_timeout_ms; /* 0: defaults */
	uint64_t max_body_bytes;  /* 0: the dispatcher's default (d->max_body_bytes,
				     else 1 MiB); ig_stream has no limit */
	ig_ctx *parent;           /* as in ig_dispatch_opts: the request the call
				     is made for (request id and trace context) */
} ig_fetch_opts;

/* Sends the request through d; done(res, arg) runs exactly once on d's
 * loop with the response (status, headers, body) copied into arena; *res
 * lives in the arena too, which must stay valid until done has run. On
 * d's loop's thread. opts->url is copied; opts' headers and body must stay
 * valid until done has run. Errors arrive in res->error: a body over
 * max_body_bytes (or over what the arena holds) aborts the call,
 * IG_CLIENT_TOO_LARGE; a URL that does not parse (net/client/url.h) is
 * IG_CLIENT_BAD_REQUEST; an immediate failure runs done before ig_fetch
 * returns. Returns: the call (for ig_call_abort), valid until done runs;
 * NULL if it already ended. */
IG_NONNULL(1, 2, 3, 4)
ig_call *ig_fetch(ig_dispatcher *d, ig_arena *arena, const ig_fetch_opts *opts, ig_response_fn *done,
		  void *arg);

/* A failed call (res->error is not IG_CLIENT_OK) as the answer to ctx, the
 * request it was made for, from its handler or from done while ctx is not
 * finished. Writes ctx's body: a problem+json whose "detail" says what
 * failed in the runtime's words and whose "error" is the kind
 * (ig_client_error_name: "connect", "headers_timeout", "protocol", ...),
 * never the upstream's URL, host or address nor res->error_message; and
 * logs the request's one error line, "msg":"upstream error" with its
 * request id, route, status, the kind and the whole message (at most one a
 * second for the same kind on a route, then their count). Returns the
 * status, ig_fetch_problem_status's, for the caller to return from the
 * handler or pass to ig_finish. */
IG_MUST_USE IG_NONNULL(1, 2) int ig_fetch_respond_error(ig_ctx *ctx, const ig_response *res);
/* The answer's status for a failed call: 504 for a timeout (connect,
 * headers, body), 503 for IG_CLIENT_BUSY and IG_CLIENT_ABORTED, else 502. */
int ig_fetch_problem_status(enum ig_client_error error);

/* ---- linear calls: a handler that waits (http.h, "waiting") ----
 * Only from a handler on its coroutine, before it returns. opts (and what
 * it points to) may live on the handler's stack: the call has ended, or
 * been aborted, before the handler can leave. */

/* ig_fetch, waiting for the response. Returns: never NULL: the response,
 * in ctx's arena (as ig_fetch's); a failure in res->error, with
 * IG_CLIENT_CANCELLED when the request was cancelled meanwhile (the call
 * is then aborted) or the call is made outside a handler. */
IG_MUST_USE IG_NONNULL(1, 2, 3)
ig_response *ig_fetch_wait(ig_ctx *ctx, ig_dispatcher *d, const ig_fetch_opts *opts);
/* Starts the call and returns at once, for several at once: the response
 * is filled when ig_wait_all (http.h) returns, and may be read only then
 * (IG_CLIENT_CANCELLED if the request was cancelled first). A call still
 * running when the handler returns is aborted. Returns: never NULL, in
 * ctx's arena (a failure to start, in res->error). */
IG_MUST_USE IG_NONNULL(1, 2, 3)
ig_response *ig_fetch_send(ig_ctx *ctx, ig_dispatcher *d, const ig_fetch_opts *opts);

/* ig_stream's callbacks: on_headers, then on_data for each piece as it
 * arrives (return false to pause, ig_call_resume to continue), then done
 * with res->body empty (status and headers are in res as with ig_fetch).
 * Each takes the call first and arg last; on_headers and on_data may be
 * NULL; done may not. The struct must stay valid until done has run. */
typedef struct ig_stream_handler {
	bool (*on_headers)(ig_call *call, int status, const ig_header *headers, size_t count, void *arg);
	bool (*on_data)(ig_call *call, const char *data, size_t len, void *arg);
	ig_response_fn *done;
} ig_stream_handler;
/* As ig_fetch, the body handed over in pieces with back-pressure and no
 * size limit. */
IG_NONNULL(1, 2, 3, 4)
ig_call *ig_stream(ig_dispatcher *d, ig_arena *arena, const ig_fetch_opts *opts, const ig_stream_handler *h,
		   void *arg);

#endif
