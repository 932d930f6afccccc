/* CORS (the Fetch standard's cross-origin checks), answered by the engine:
 * the allowed origins and the rest of the policy come from the settings
 * (cors_settings.c); a request's Origin is judged once, at dispatch, and an
 * allowed one gets its headers added before any handler or router answer,
 * so the runtime's own errors carry them too. Preflights are answered by
 * the router's OPTIONS answer (net/api/operation.c), which knows the path. */
#ifndef NET_HTTP_CORS_H
#define NET_HTTP_CORS_H

#include "ingot/http.h"
#include "ingot/settings.h"

#define IG_CORS_MAX_ORIGINS 64

/* One allowed origin: exact ("https://a.example"), or a pattern whose one
 * '*' stands for one or more subdomain labels: the pattern for
 * https://<labels>.example.com is the prefix "https://" and the suffix
 * ".example.com". */
struct ig_cors_origin {
	ig_str prefix, suffix;
	bool pattern;
};

struct ig_cors_config {
	const char *origins;        /* INGOT_CORS_ORIGINS, as given; "": off */
	const char *expose_headers; /* INGOT_CORS_EXPOSE_HEADERS */
	int64_t max_age;            /* INGOT_CORS_MAX_AGE; 0: no Access-Control-Max-Age */
	bool credentials;           /* INGOT_CORS_CREDENTIALS */
	/* Derived by the settings' check from origins: */
	bool any; /* '*' is among them */
	size_t count;
	/* the origins themselves are in ig_cors_origins (one list: there is
	   one policy), out of this struct so that its defaults
	   (cors_settings.c) are a few bytes of the binary's data */
};
extern struct ig_cors_origin ig_cors_origins[IG_CORS_MAX_ORIGINS];

extern struct ig_cors_config ig_cors_config;
extern const struct ig_settings ig_cors_settings;
/* Whether CORS is on: the one test a request pays while it is off. */
extern bool ig_cors_on;

struct ig_app_cors;
/* The document's policy (x-ingot-cors) as the settings' defaults: before
 * the settings' parse, on the main thread. */
void ig_cors_document(const struct ig_app_cors *d);

/* Splits c->origins into ig_cors_origins (c->count of them:
 * one policy at a time, the last one parsed); NULL, or what is wrong. */
const char *ig_cors_parse_origins(struct ig_cors_config *c);

/* Whether origin (an Origin field's value) is allowed by c, the policy
 * last given to ig_cors_parse_origins. */
bool ig_cors_allows(const struct ig_cors_config *c, ig_str origin);

/* At dispatch, CORS on: the head lines every answer to q carries, into
 * out: Vary: Origin, and for an allowed Origin that is not a preflight,
 * Access-Control-Allow-Origin (-Credentials, -Expose-Headers); an Origin
 * whose lines do not fit cap gets Vary alone. Returns their length. */
#define IG_CORS_LINES_MAX 2048
size_t ig_cors_request_lines(const ig_request *q, char *out, size_t cap);

/* OPTIONS on a known path, CORS on: a preflight (Origin and
 * Access-Control-Request-Method) is answered 204, with the CORS headers
 * when its origin and method are allowed, and true is returned; false: not
 * a preflight, answer it as usual. allow: the path's Allow list;
 * headers: the request header names its operations take, comma-separated. */
bool ig_cors_preflight(ig_ctx *ctx, ig_str allow, ig_str headers);

/* ---- answers without an exchange (a connection's failed request) ---- */

/* The longest Origin kept for such an answer: a longer one gets none. */
#define IG_CORS_ORIGIN_MAX 127

/* Copies the request's Origin into out when it is allowed and fits;
 * returns its length, else 0. */
size_t ig_cors_keep_origin(const ig_header *headers, size_t n, char out[IG_CORS_ORIGIN_MAX]);

/* The head lines (Vary, Access-Control-*) of an answer to an allowed
 * origin, into out; returns their length, 0 when they do not fit. */
size_t ig_cors_head_lines(char *out, size_t cap, ig_str origin);

#endif
