/* The hooks of the exchange that only generated code calls: schemac's
 * api.c (its router, decoders and encoders) and the typed-API runtime
 * under it (net/api). A handler never includes this: what it calls is in
 * include/ingot/http.h. The contracts of http.h's conventions hold here
 * too (a live ctx on its own core, before ig_finish). */
#ifndef INGOT_API_HOOKS_H
#define INGOT_API_HOOKS_H

#include "ingot/http.h"
#include "ingot/hooks.h"

/* ---- the router ---- */

/* Names the path template that matched: index into ig_app.routes, before
 * the method is chosen, so that metrics and logs carry the template, never
 * the raw path (ig_route_template). An index at or past route_count is
 * ignored. */
IG_NONNULL(1) void ig_set_route(ig_ctx *ctx, uint32_t index);

/* ---- decoders: rejecting a request before any handler ---- */

/* Collects a validation error for the 400 answer: in ("query", "path",
 * "header", "cookie"; NULL or "body" for the body) with name_or_pointer
 * (a parameter's name, or the body's JSON pointer), the failed keyword and
 * a message. All four strings are copied. The first 20 are kept, later ones
 * dropped. */
IG_NONNULL(1, 3, 4, 5)
void ig_error_add(ig_ctx *ctx, const char *in, const char *name_or_pointer, const char *keyword,
		  const char *message);
/* Whether ig_error_add has collected any. */
IG_NONNULL(1) bool ig_has_errors(const ig_ctx *ctx);
/* Answers 400 problem+json with detail (copied) and the collected errors
 * as its "errors" array, and FINISHES the exchange as ig_respond_problem
 * does. */
IG_NONNULL(1, 2) void ig_respond_errors(ig_ctx *ctx, const char *detail);
/* Counts a request the decoder rejected with status: 400 in
 * ingot_validation_failures_total by route, any other (415, 500) in
 * ingot_http_errors_total. Call once, before answering it. */
IG_NONNULL(1) void ig_count_rejected(ig_ctx *ctx, int status);
struct ig_principal;
/* The door (net/api/security.c) admitted the request as p (in the arena):
 * what ig_principal returns from now on. */
IG_NONNULL(1, 2) void ig_set_principal(ig_ctx *ctx, const struct ig_principal *p);

/* ---- encoders ---- */

/* Turns the operation's out struct into the body (ig_body) for status.
 * Runs inside ig_finish, on the exchange's core, once; out is what
 * ig_set_encoder was given. */
typedef void ig_encode_fn(ig_ctx *ctx, int status, const void *out);
/* Registers how ig_finish turns out into the body; out (in the request's
 * arena, usually) must stay valid until ig_finish. A later call replaces
 * the encoder; ig_respond_problem and ig_respond_errors drop it. */
IG_NONNULL(1) void ig_set_encoder(ig_ctx *ctx, ig_encode_fn *encode, const void *out);
/* From an encoder: writes the runtime's own problem+json body for status
 * (the one ig_respond_problem(ctx, status, NULL) sends: the reason as
 * title and detail, the request id) in place of any body, with its
 * content type. For a status the document answers with the runtime's
 * problem schema, when the handler returned it without answering itself. */
IG_NONNULL(1) void ig_encode_problem(ig_ctx *ctx, int status);
/* Changes the status to send. ig_finish sets the status it is given and
 * then runs the encoder, so this matters only when called from an encoder;
 * the generated encoders do not call it (a response that breaks its schema
 * is answered 500 by the generated code in the response-check build). */
IG_NONNULL(1) void ig_set_status(ig_ctx *ctx, int status);

/* ---- the app, as the generated code hands it to the runtime ----
 * The generated api.c defines one, `const struct ig_app ig_api_app`, in
 * static storage: the runtime keeps the pointer for the life of the
 * process. */
/* The document's CORS policy (its root's x-ingot-cors): the defaults of
 * the INGOT_CORS_* settings, which override it field by field. */
struct ig_app_cors {
	const char *origins;        /* comma-separated, as INGOT_CORS_ORIGINS */
	const char *expose_headers; /* "": none */
	int64_t max_age;            /* 0: no Access-Control-Max-Age */
	bool credentials;
};

/* The document's bearer JWT schemes (http bearer, oauth2, openIdConnect),
 * emitted when an operation uses one: where their keys may come from over
 * HTTP (INGOT_JWKS_URL, OpenID Connect discovery). Its functions are the
 * runtime's key fetcher (net/api/jwks_remote.c), so a binary without such
 * a scheme links neither it nor the outbound client. */
struct ig_loop;
struct ig_app_jwt {
	const char *discovery_url; /* an openIdConnect scheme's openIdConnectUrl; NULL: none */
	/* After the settings, before any listener, on the main thread: true
	   when the keys are to be fetched (readiness then waits for them). */
	bool (*prepare)(const struct ig_app_jwt *jwt);
	/* On core 0's loop (its thread) as it starts, after a true prepare. */
	void (*core_start)(struct ig_loop *loop);
};

/* The hooks (include/ingot/hooks.h) the document's x-ingot-hooks name for
 * one operation, in the order they run: the root's, then the operation's
 * own. The app's (ig_app.hooks) has the root's after-hooks only: those of
 * an answer no operation gives (the router's 404 and 405, OPTIONS, the
 * connection's own errors). */
struct ig_op_hooks {
	ig_before_hook_fn *const *before;
	ig_after_hook_fn *const *after;
	uint32_t nbefore, nafter;
};

struct ig_app {
	const char *name, *version;
	void (*route)(ig_ctx *ctx); /* match, decode, call, or answer an error */
	const char *const *routes;  /* the document's path templates */
	uint32_t route_count;
	const char *openapi_json;
	size_t openapi_len;
	const struct ig_app_cors *cors; /* NULL: the document states none */
	const struct ig_app_jwt *jwt;   /* NULL: no operation takes a bearer JWT */
	/* Some operation's rate limit is keyed by the client's address, or
	   some operation has security (the door's limit on failed attempts
	   is keyed by it): the listeners keep each connection's peer address. */
	bool peer_addresses;
	/* Some operation takes the mutualTLS scheme: HTTPS without
	   INGOT_TLS_CLIENT_CA stops the start (it could admit no one). */
	bool client_certs;
	/* x-ingot-hooks: the root's after-hooks; NULL when the document
	   names no hook at all (every response then pays one test). */
	const struct ig_op_hooks *hooks;
	/* x-ingot-stream-body: the maxBytes of the operation that method and
	   path (the target's path, as sent) reach when it reads its body as
	   it arrives, else 0; asked at the head, before the body. NULL when
	   no operation does (then each request with a body pays one test). */
	uint64_t (*stream_body_limit)(ig_str method, ig_str path);
};

/* The program's entry (net/api/main.c calls it with ig_api_app): parses
 * the settings from argv and the environment, starts a loop per core and
 * serves until SIGTERM/SIGINT has drained. On the process's main thread,
 * once. Returns: the process exit code (2: bad configuration; see the
 * README's table). */
IG_NONNULL(2, 3) int ig_main(int argc, char **argv, const struct ig_app *app);

/* For a one-shot command that does not go through ig_main (--migrate, which
 * reads only its own part's settings): warns, on stdout's log, about each
 * environment variable starting with INGOT_ that no setting declares (the
 * runtime's, the app's, those of parts the binary does not link), naming
 * the nearest declared one; with INGOT_STRICT_ENV on, names each on stderr
 * instead. On the main thread, before the command. Returns 0, or 2 (the
 * exit status) when strict mode found one or INGOT_STRICT_ENV is no
 * boolean. ig_main does the same itself. */
IG_NONNULL(1) int ig_check_env(const struct ig_app *app);

/* The generated code and descriptor of a stream operation (text/event-
 * stream): sections that net/cold.ld moves to the cold block, as a
 * stream's request is rare beside its length, so the open routes' block
 * stays the size it was. */
#define IG_STREAM_CODE __attribute__((cold, noinline, section(".text.ig_stream")))
#if defined(__PIC__) || defined(__PIE__)
/* Position-independent (the host's test builds): a descriptor's pointers
   need relocations, which a read-only section named here cannot take. */
#define IG_STREAM_DATA
#else
#define IG_STREAM_DATA __attribute__((section(".rodata.ig_stream")))
#endif

#endif
