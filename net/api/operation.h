/* How the generated code runs an operation: schemac emits one descriptor
 * per operation (struct ig_operation: the sizes of its in and out structs,
 * its decoder, handler and encoder) and a router that calls
 * ig_run_operation with it; this runtime runs every operation through the
 * same steps: decode -> handler (on a coroutine) -> encode -> (response
 * check). Also the
 * router's fixed answers and the app the generated code exports. */
#ifndef NET_API_OPERATION_H
#define NET_API_OPERATION_H

#include "validate.h"
#include "ingot/api_hooks.h"
#include "security.h"
#include "rate_limit.h"

/* Fills the zeroed in struct from the request (parameters from seg, the
 * path's segments, and the query, headers and body). Returns 0, or the
 * status to answer: 400 (errors collected with ig_error_add), 415 (not
 * application/json) or 500 (out of request memory). */
typedef int ig_decode_op_fn(ig_ctx *ctx, const ig_str *seg, void *in);
/* Calls the operation's handler (`int <operationId>(ctx, in, out)`):
 * the status to send, or IG_PENDING. */
typedef int ig_handle_op_fn(ig_ctx *ctx, const void *in, void *out);

/* A response schema to check a status against. status: an exact status
 * (100 to 599), a range's first digit (4 for the document's "4XX") or 0
 * for "default"; an exact status wins over its range, a range over
 * default. validate NULL: that key's responses are not checked. */
struct ig_response_schema {
	int status;
	ig_validate_fn *validate;
};

struct ig_operation;
/* The response check (ig_check_response in debug builds). */
typedef int ig_check_op_fn(ig_ctx *ctx, const struct ig_operation *op, int status, void *out);

/* What the generated code records about one operation. */
struct ig_operation {
	const char *id; /* the operationId, for logs */
	size_t in_size, out_size;
	ig_decode_op_fn *decode; /* NULL: no parameters and no body */
	ig_handle_op_fn *handle;
	ig_encode_fn *encode; /* NULL: no JSON response; the handler writes any body */
	/* The operation's security (net/api/security.h), judged before the
	   decoder; NULL: open (no security, or `security: []`). */
	const struct ig_security *security;
	/* Debug builds (IG_CHECK_RESPONSES) only: check, and the schemas of
	 * the responses to check (nschemas of them; a status not listed is
	 * not checked). NULL in the shipped binary, which then links neither
	 * the checker nor the response validators. */
	ig_check_op_fn *check;
	const struct ig_response_schema *schemas;
	size_t nschemas;
	/* Its x-ingot-rate-limit (or the root's), checked before decoding;
	   NULL: none, and no cost but the test. */
	const struct ig_rate_limit *rate_limit;
	/* Its x-ingot-hooks with the root's (api_hooks.h); NULL: none, and
	   no cost but the test. */
	const struct ig_op_hooks *hooks;
};

/* The check members of a generated descriptor: schemas (an array of n)
 * and the checker when the build defines IG_CHECK_RESPONSES (the ASan
 * build), else none; list is then not even compiled, nor linked. */
#ifdef IG_CHECK_RESPONSES
#define IG_RESPONSE_CHECK(list, n) .check = ig_check_response, .schemas = (list), .nschemas = (n)
#else
#define IG_RESPONSE_CHECK(list, n) .check = NULL
#endif

/* Runs op for this request: in and out are allocated zeroed in the
 * request arena (a pending handler may keep them until ig_finish), the
 * decoder's verdict is answered as a problem (400 with the collected
 * errors, 415, 500), else the handler runs on a coroutine of the core's
 * pool (net/http/wait.h) with the encoder registered, and ig_finish
 * follows its status unless it returned IG_PENDING: at once, or when a
 * handler that waited returns. At the core's cap of live coroutines
 * (INGOT_MAX_WAITING) the answer is 503 with Retry-After: 1 instead. seg:
 * the path's segments, for decoders of path parameters. An operation with
 * a rate limit is first admitted by it (rate_limit.h), or answered 429;
 * one keyed by subject, once the door's security has passed. The door
 * (op->security) runs before the decoder: on the loop, or, when an auth
 * handler judges it (which may wait), on the handler's coroutine with the
 * limit by subject and the decoder after it (so a core at its cap answers
 * 503 before judging credentials). An operation with hooks runs its
 * before-hooks after the door and the decoder, in order, until one returns
 * a status, which answers (one outside 100..599: 500); its after-hooks
 * replace the root's on each of its answers. */
void ig_run_operation(ig_ctx *ctx, const struct ig_operation *op, const ig_str *seg);

/* Debug builds: the check of op->check. The handler returned status (or
 * IG_PENDING): the body is encoded now, read back and validated against
 * its schema; a violation is logged and answered 500 instead. A pending
 * answer is checked as it is encoded later, and logged, but keeps its
 * status. Returns the status to finish with, or IG_PENDING when it has
 * answered (500) or the answer is pending. */
int ig_check_response(ig_ctx *ctx, const struct ig_operation *op, int status, void *out);

/* ---- the router's answers ---- */

/* Splits the path after its leading '/' at each '/' ("/" is one empty
 * segment) into seg[0..max). Returns the count, or max + 1 when there are
 * more segments than any route has: no route can match then. */
size_t ig_split_path(ig_str path, ig_str *seg, size_t max);

/* Whether path fits the path template tmpl, segment by segment: a
 * "{name}" segment takes any non-empty segment, any other is compared as
 * it is. x-ingot-stream-body's question at a request's head, before the
 * router (ig_app.stream_body_limit); a path it misses has its body read
 * whole, and still reaches its operation. */
bool ig_path_fits(ig_str path, const char *tmpl);
/* OPTIONS: 204 with Allow; with CORS on, a preflight is answered by
 * ig_cors_preflight (net/http/cors.h). headers: the request header names
 * the path's operations take, for Access-Control-Allow-Headers. */
void ig_answer_options(ig_ctx *ctx, ig_str allow, ig_str headers);
/* A method that none of a known path's operations takes: OPTIONS is
 * answered as ig_answer_options, any other method 405 with Allow. */
void ig_answer_other_method(ig_ctx *ctx, ig_str allow, ig_str headers);

/* ---- the app ---- */

/* The generated code's app (build/gen/api.c): the service's name,
 * version, router and document. net/api/main.c hands it to ig_main;
 * programs that set up a core themselves (the fuzz target, the handler
 * tests) leave main.c out and use it directly. */
extern const struct ig_app ig_api_app;

#endif
