/* What a handler and the generated code see of one request/response
 * exchange (ig_ctx): the parsed request, the per-request arena, the response
 * being built, and the "pending, complete later" path.
 *
 * Lifetime: an ig_ctx lives from dispatch until ig_finish has run and its
 * response has been written out (or dropped because the client left). A
 * handler that returns IG_PENDING must call ig_finish exactly once later,
 * on the same core, even if the client has gone (ig_cancelled says so): the
 * ctx and its arena stay valid until then. */
#ifndef INGOT_HTTP_H
#define INGOT_HTTP_H

#include "ingot/base.h"

typedef struct ig_ctx ig_ctx;

typedef struct ig_request {
	ig_str method; /* "HEAD" is routed as GET; see head below */
	ig_str target, path, query; /* raw: path and query are not %-decoded */
	const ig_header *headers;
	size_t num_headers;
	ig_str body;
	int minor_version;
	bool head; /* a HEAD request: the body will not be sent */
} ig_request;

/* Turns the output struct into a body (ig_set_encoder). */
typedef void ig_encode_fn(ig_ctx *ctx, int status, const void *out);
/* Runs on the exchange's core (ig_after). */
typedef void ig_ctx_fn(ig_ctx *ctx, void *arg);

struct ig_loop;

#define IG_PENDING (-1)

const ig_request *ig_req(const ig_ctx *ctx);
/* Case-insensitive lookup; the first match, or {NULL, 0}. */
ig_str ig_req_header(const ig_ctx *ctx, const char *name);

void *ig_alloc(ig_ctx *ctx, size_t size); /* arena; NULL when over limit */
ig_arena *ig_ctx_arena(ig_ctx *ctx);      /* the same arena, for ig_wbuf, the JSON reader, the client */
/* The loop of the core the exchange runs on: where a handler's outbound
 * calls (net/client, net/pg) start, so that they answer on it. */
struct ig_loop *ig_ctx_loop(ig_ctx *ctx);
uint32_t ig_core_index(const ig_ctx *ctx);
uint32_t ig_core_count(const ig_ctx *ctx);
/* The TCP port the server listens on (PORT=0 resolved): a route that calls
 * the service itself (the reference service's default upstream) needs it. */
uint16_t ig_listen_port(const ig_ctx *ctx);

/* The router names the path template that matched (an index into
 * ig_app.routes), before choosing the method, so that metrics and logs
 * carry the template, never the raw path. */
void ig_set_route(ig_ctx *ctx, uint32_t index);
/* The matched template ("/blog/{id}"), or "" when no path matched. */
const char *ig_route_template(const ig_ctx *ctx);

/* For the typed-API runtime, before any handler: the decoder rejected the
 * request, 400 (counted in ingot_validation_failures_total by route) or
 * another status such as 415 (ingot_http_errors_total). */
void ig_count_rejected(ig_ctx *ctx, int status);

/* ---- request id and trace context ---- */
/* The request's id: its X-Request-Id when that is 1 to 128 characters from
 * 0x21 to 0x7e, else 32 random lowercase hex digits made for it. The
 * response echoes it (X-Request-Id), problem+json bodies carry it as
 * "request_id", so do the access log and log lines about the request, and
 * outbound calls made for the request pass it on (net/client: opts.parent).
 * Not NUL-terminated; may hold '"' or '\\': escape it where it goes into
 * JSON. Valid while ctx is. */
ig_str ig_request_id(const ig_ctx *ctx);
/* W3C Trace Context (level 1). The trace id: the one a valid traceparent
 * brought, else a new one (an invalid traceparent is ignored). The span
 * id: this server span's, new for each request. Both lowercase hex,
 * NUL-terminated (32 and 16 digits), made on first use, valid while ctx
 * is. The flags: those received, or 01 (sampled) for a new trace. */
const char *ig_trace_id(const ig_ctx *ctx);
const char *ig_span_id(const ig_ctx *ctx);
uint8_t ig_trace_flags(const ig_ctx *ctx);
/* tracestate as received (several fields joined with ','), to pass on;
 * empty when absent, longer than 512 characters, or when traceparent was
 * invalid (it belonged to another trace). */
ig_str ig_tracestate(const ig_ctx *ctx);
#define IG_TRACEPARENT_LEN 55
/* The traceparent of an outbound call made for ctx, a child of this server
 * span: "00-<trace id>-<a new span id>-<flags>", IG_TRACEPARENT_LEN
 * characters, no NUL. net/client writes it itself for opts.parent. */
void ig_traceparent_child(ig_ctx *ctx, char out[IG_TRACEPARENT_LEN]);

/* ---- building the response ---- */
/* The body writer; content type defaults to application/json. */
ig_wbuf *ig_body(ig_ctx *ctx);
void ig_set_content_type(ig_ctx *ctx, const char *ct);
/* Adds a header field; name and value are copied. */
void ig_add_header(ig_ctx *ctx, const char *name, ig_str value);

/* Changes the status to send. ig_finish sets the status it is given and
 * then runs the encoder, so this matters only when called from an encoder;
 * the generated encoders do not call it (a response that breaks its schema
 * is answered 500 by the generated code in the response-check build). */
void ig_set_status(ig_ctx *ctx, int status);

/* Generated code registers how to turn the output struct into a body. */
void ig_set_encoder(ig_ctx *ctx, ig_encode_fn *encode, const void *out);

/* Completes the exchange with status: runs the encoder (if any) and queues
 * the response. Call exactly once. (Within a synchronous handler a second
 * call is ignored, so a handler that answered with ig_respond_problem may
 * return any status; once pending, the first call may free the ctx.) */
void ig_finish(ig_ctx *ctx, int status);

/* A complete problem+json (RFC 9457) response; headers added before (such
 * as Allow) are kept. */
void ig_respond_problem(ig_ctx *ctx, int status, const char *detail);

/* Validation errors: collect, then answer 400 with an "errors" array. */
void ig_error_add(ig_ctx *ctx, const char *in, const char *name_or_pointer,
		  const char *keyword, const char *message);
bool ig_has_errors(const ig_ctx *ctx);
void ig_respond_errors(ig_ctx *ctx, const char *detail);

/* ---- pending work ---- */
/* The time by which the request must be answered, on the core's clock
 * (the loop's now_ms), or 0 for none: an HTTP request has none, an
 * in-process one may (net/lambda: Lambda-Runtime-Deadline-Ms). Outbound
 * calls made with .parent = ctx end by it: net/client shortens their
 * timeouts to what is left. */
uint64_t ig_deadline_ms(const ig_ctx *ctx);
/* ---- pending work ---- */
/* True once the client has gone (reset, or closed its side while this was
 * pending): the response will be dropped. */
bool ig_cancelled(const ig_ctx *ctx);
/* Runs fn(ctx, arg) after ms milliseconds on this core. One per ctx. */
void ig_after(ig_ctx *ctx, uint32_t ms, ig_ctx_fn *fn, void *arg);

/* ---- readiness (GET /readyz) ---- */
/* A backend the service cannot serve without (a database): /readyz says
 * 503 until every one registered is up. Register on the starting thread,
 * before ig_main serves; returns its id (down until set up), or -1 when
 * IG_MAX_BACKENDS are registered. name (kept, not copied) is what /readyz
 * names while it is down. */
#define IG_MAX_BACKENDS 16
int ig_backend_register(const char *name);
/* From any thread: a relaxed store, read by the probe only. */
void ig_backend_set_up(int id, bool up);

/* ---- the app, as the generated code hands it to the runtime ---- */
struct ig_app {
	const char *name, *version;
	void (*route)(ig_ctx *ctx); /* match, decode, call, or answer an error */
	const char *const *routes;  /* the document's path templates */
	uint32_t route_count;
	const char *openapi_json;
	size_t openapi_len;
};

/* The program's entry: parse config, start a loop per core, serve until
 * SIGTERM/SIGINT; returns the process exit code. */
int ig_main(int argc, char **argv, const struct ig_app *app);

#endif
