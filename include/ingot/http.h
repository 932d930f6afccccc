/* What a handler sees of one request/response exchange (ig_ctx): the
 * parsed request, the per-request arena, the response being built, and the
 * "pending, complete later" path. The hooks that only the generated code
 * calls (the router, decoders, encoders, the app struct) are in
 * include/ingot/api_hooks.h; a handler never needs them.
 *
 * Lifetime: an ig_ctx lives from dispatch until ig_finish has run and its
 * response has been written out (or dropped because the client left). A
 * handler either returns a status (the generated code then calls
 * ig_finish) or returns IG_PENDING and calls ig_finish exactly once later,
 * on the same core, even if the client has gone (ig_cancelled says so):
 * the ctx and its arena stay valid until then. Every call below takes a
 * live ctx on its own core (base.h's conventions), none blocks, and none
 * may be made after ig_finish on a pending exchange.
 *
 * Calls that wait (the database, the outbound client, ig_after) take ctx
 * (or what it gives: its arena, its loop) first, start work, and report to
 * a callback with the result first and `arg` last. The results
 * (ig_response, ig_pg_result, an ig_pg_error's strings) live in the
 * request's arena, so the forms that wait in place and return them (issue
 * 26's linear handlers, on a stack per pending request) can hand back the
 * same structs under the same contracts, with these callback forms kept
 * underneath as the low-level API. */
#ifndef INGOT_HTTP_H
#define INGOT_HTTP_H

#include "ingot/base.h"

/* One exchange, owned by the runtime; a handler borrows it until
 * ig_finish. */
typedef struct ig_ctx ig_ctx;

/* The request as parsed, valid (every slice too) while ctx is. */
typedef struct ig_request {
	ig_str method; /* "HEAD" is routed as GET; see head below */
	ig_str target, path, query; /* raw: path and query are not %-decoded */
	const ig_header *headers; /* in arrival order; names as sent */
	size_t num_headers;
	ig_str body; /* the whole body, read before dispatch */
	int minor_version;
	bool head; /* a HEAD request: the body will not be sent */
} ig_request;

/* A deferred step on the exchange's core (ig_after): ctx first, the
 * caller's arg last. It may call ig_finish. */
typedef void ig_ctx_fn(ig_ctx *ctx, void *arg);

struct ig_loop;

/* What a handler returns when it will call ig_finish later. */
#define IG_PENDING (-1)

/* ---- the request ---- */

/* The parsed request. Returns: never NULL, valid while ctx is. */
IG_NONNULL(1) const ig_request *ig_req(const ig_ctx *ctx);
/* The value of the first request field named name (compared without case).
 * Returns: a slice valid while ctx is, or {NULL, 0} when there is none. */
IG_NONNULL(1, 2) ig_str ig_req_header(const ig_ctx *ctx, const char *name);

/* ---- the request's memory ---- */

/* size bytes from the request's arena, freed when the exchange ends.
 * Returns: 8-byte aligned memory, or NULL when the request's memory limit
 * (twice INGOT_MAX_BODY, plus 1 MiB) is reached; answering 500 is then the
 * handler's choice. */
IG_MUST_USE IG_NONNULL(1) void *ig_alloc(ig_ctx *ctx, size_t size);
/* The same arena, for an ig_wbuf, the JSON reader, the client or the
 * database. Returns: never NULL, valid while ctx is. */
IG_NONNULL(1) ig_arena *ig_ctx_arena(ig_ctx *ctx);

/* ---- where the exchange runs ---- */

/* The loop of the core the exchange runs on: where calls that wait start
 * (net/client, net/pg), so that they answer on it. Returns: never NULL,
 * valid for the life of the process's core. */
IG_NONNULL(1) struct ig_loop *ig_ctx_loop(ig_ctx *ctx);
/* This core's index (0 .. ig_core_count - 1) and the number of cores. */
IG_NONNULL(1) uint32_t ig_core_index(const ig_ctx *ctx);
IG_NONNULL(1) uint32_t ig_core_count(const ig_ctx *ctx);
/* The TCP port the server listens on (PORT=0 resolved): a route that calls
 * the service itself (the reference service's default upstream) needs
 * it. The configured port when the exchange came in without a listener
 * (Lambda, handler tests). */
IG_NONNULL(1) uint16_t ig_listen_port(const ig_ctx *ctx);
/* The matched path template ("/blog/{id}"), for logs and metrics labels.
 * Returns: static storage; "" when no path matched. */
IG_NONNULL(1) const char *ig_route_template(const ig_ctx *ctx);

/* ---- request id and trace context ---- */

/* The request's id: its X-Request-Id when that is 1 to 128 characters from
 * 0x21 to 0x7e, else 32 random lowercase hex digits made for it. The
 * response echoes it (X-Request-Id), problem+json bodies carry it as
 * "request_id", so do the access log and log lines about the request, and
 * outbound calls made for the request pass it on (net/client: opts.parent).
 * Returns: a slice valid while ctx is, not NUL-terminated; it may hold '"'
 * or '\\': escape it where it goes into JSON. */
IG_NONNULL(1) ig_str ig_request_id(const ig_ctx *ctx);
/* W3C Trace Context (level 1). The trace id: the one a valid traceparent
 * brought, else a new one (an invalid traceparent is ignored). The span
 * id: this server span's, new for each request. Returns: lowercase hex,
 * NUL-terminated (32 and 16 digits), made on first use, valid while ctx
 * is. */
IG_NONNULL(1) const char *ig_trace_id(const ig_ctx *ctx);
IG_NONNULL(1) const char *ig_span_id(const ig_ctx *ctx);
/* The trace flags: those received, or 01 (sampled) for a new trace. */
IG_NONNULL(1) uint8_t ig_trace_flags(const ig_ctx *ctx);
/* tracestate as received (several fields joined with ','), to pass on.
 * Returns: a slice valid while ctx is; empty when absent, longer than 512
 * characters, or when traceparent was invalid (it belonged to another
 * trace). */
IG_NONNULL(1) ig_str ig_tracestate(const ig_ctx *ctx);
#define IG_TRACEPARENT_LEN 55
/* Writes the traceparent of an outbound call made for ctx, a child of this
 * server span, to out: "00-<trace id>-<a new span id>-<flags>",
 * IG_TRACEPARENT_LEN characters, no NUL. net/client writes it itself for
 * opts.parent; this is for other protocols. */
IG_NONNULL(1, 2) void ig_traceparent_child(ig_ctx *ctx, char out[IG_TRACEPARENT_LEN]);

/* ---- building the response ----
 * Until ig_finish, in any order; what is written after it is lost. */

/* The response body writer (in the request's arena). Its content type is
 * application/json unless ig_set_content_type says otherwise; a response
 * whose body is empty goes out with no Content-Type unless one was set. A
 * body whose writes failed (w->failed) is answered 500 by ig_finish.
 * Returns: never NULL, valid while ctx is. */
IG_NONNULL(1) ig_wbuf *ig_body(ig_ctx *ctx);
/* Sets the Content-Type. ct is kept, not copied: a literal, or a string
 * in ctx's arena. */
IG_NONNULL(1, 2) void ig_set_content_type(ig_ctx *ctx, const char *ct);
/* Adds a response header field; name and value are copied (a CR, LF or
 * NUL in value is sent as a space). Fields added before an error answer
 * (ig_respond_problem, Allow for instance) are kept. Out of request memory,
 * what does not fit is lost. */
IG_NONNULL(1, 2) void ig_add_header(ig_ctx *ctx, const char *name, ig_str value);

/* Completes the exchange with status: runs the registered encoder (the
 * generated code's, for the operation's out struct) and queues the
 * response, which leaves in the connection's pipelining order. Call exactly
 * once per exchange: from the handler, the generated code does it for the
 * status the handler returns; a pending exchange, from the last callback.
 * Within a synchronous handler a second call is ignored, so a handler that
 * answered with ig_respond_problem may return any status; once pending,
 * ig_finish may free ctx: nothing may touch it afterwards. If the client
 * has gone the response is dropped and ctx freed. */
IG_NONNULL(1) void ig_finish(ig_ctx *ctx, int status);

/* Answers a complete problem+json (RFC 9457) response: status, its
 * reason as title, detail (copied; NULL for none) and the request id. It
 * replaces any body written so far and FINISHES the exchange, as
 * ig_finish does, with the same rule: nothing may follow it on a pending
 * exchange. */
IG_NONNULL(1) void ig_respond_problem(ig_ctx *ctx, int status, const char *detail);

/* Makes the response a redirect: adds Location (copied, as ig_add_header
 * does), drops the body written so far, any content type and the
 * encoder, so that it goes out with no body and no Content-Type whatever
 * the operation's out struct holds. It does not finish the exchange.
 * status: 300 to 399 (301, 302, 303, 307 and 308 are the usual ones).
 * Returns: status, for `return ig_redirect(ctx, 302, to);` (a pending
 * handler passes it to ig_finish); for a status outside 300..399 nothing
 * is changed and it returns 500, which then answers the request. */
IG_MUST_USE IG_NONNULL(1) int ig_redirect(ig_ctx *ctx, int status, ig_str location);

/* ---- pending work ---- */

/* The time by which the request must be answered, on the core's clock
 * (the loop's now_ms), or 0 for none: an HTTP request has none, an
 * in-process one may (net/lambda: Lambda-Runtime-Deadline-Ms). Outbound
 * calls made with .parent = ctx end by it: net/client shortens their
 * timeouts to what is left. */
IG_NONNULL(1) uint64_t ig_deadline_ms(const ig_ctx *ctx);
/* True once the client has gone (reset, or closed its side while this was
 * pending): the response will be dropped. A pending exchange must still
 * be finished (ig_finish). */
IG_NONNULL(1) bool ig_cancelled(const ig_ctx *ctx);
/* Runs fn(ctx, arg) after ms milliseconds on this core's loop, never
 * before ig_after returns. One per ctx: a second call replaces the first
 * (only the last fn runs). The exchange must be pending (ctx stays valid
 * until fn has run); finishing the exchange first cancels it. arg is the
 * caller's, passed through. */
IG_NONNULL(1, 3) void ig_after(ig_ctx *ctx, uint32_t ms, ig_ctx_fn *fn, void *arg);

/* ---- waiting: a handler written top to bottom ----
 *
 * A handler runs on a coroutine stack of its own (INGOT_STACK_SIZE, taken
 * from the core's pool). The calls that wait (these, ig_pg_run and the
 * other linear calls of pg.h and client.h) suspend it, the core's loop
 * runs other work, and the handler goes on where it was when the result
 * arrives; it then returns its status as a handler that never waited does.
 * They may be called only from the handler itself, before it returns (not
 * from a callback-form completion). When the client leaves or the drain's
 * grace period ends, a waiting call returns "cancelled" at once and every
 * later one does too: the handler should return (its answer is dropped). */
enum ig_wait_result {
	IG_WAIT_OK = 0,
	IG_WAIT_CANCELLED,
};
/* Waits ms milliseconds. Returns: IG_WAIT_OK, or IG_WAIT_CANCELLED. */
IG_MUST_USE IG_NONNULL(1) enum ig_wait_result ig_sleep(ig_ctx *ctx, uint32_t ms);
/* Waits until every call this handler started without waiting (ig_pg_send,
 * ig_pg_send_read, ...) has its outcome. Returns: IG_WAIT_OK, or
 * IG_WAIT_CANCELLED (the calls' outcomes then say IG_PG_CANCELLED ...). */
IG_MUST_USE IG_NONNULL(1) enum ig_wait_result ig_wait_all(ig_ctx *ctx);

/* ---- readiness (GET /readyz) ---- */

#define IG_MAX_BACKENDS 16
/* Registers a backend the service cannot serve without (a database):
 * /readyz says 503 until every one registered is up. On the starting
 * thread, before ig_main serves: from the app's init hook
 * (include/ingot/lifecycle.h). name is kept, not copied (a literal): it
 * is what /readyz names while the backend is down.
 * Returns: its id (down until set up), or -1 when IG_MAX_BACKENDS are
 * registered (nothing is registered then). */
IG_MUST_USE IG_NONNULL(1) int ig_backend_register(const char *name);
/* Marks backend id up or down. From any thread: a relaxed store, read by
 * the probe only. An id outside 0 .. IG_MAX_BACKENDS - 1 (such as -1) is
 * ignored. */
void ig_backend_set_up(int id, bool up);

/* The app the generated code builds (include/ingot/api_hooks.h) and
 * ig_test_init takes; app code only names it: `extern const struct ig_app
 * ig_api_app;` is the generated code's. */
struct ig_app;

#endif
