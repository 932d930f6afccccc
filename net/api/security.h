/* The door's contract between the generated code and the runtime: schemac
 * turns the document's securitySchemes and security into these read-only
 * tables (data only, one struct ig_security per secured operation), and
 * ig_security_check judges a request against them before the operation's
 * decoder runs. Bearer JWTs are verified here with net/auth; apiKey and
 * basic credentials are handed to the app's ig_auth_handler (ingot/auth.h);
 * mutualTLS takes the client certificate the TLS listener verified. */
#ifndef NET_API_SECURITY_H
#define NET_API_SECURITY_H

#include "ingot/api_hooks.h"
#include "ingot/auth.h"

enum ig_sec_type { IG_SEC_BEARER, IG_SEC_API_KEY, IG_SEC_BASIC, IG_SEC_MUTUAL_TLS };
enum ig_sec_in { IG_SEC_IN_HEADER, IG_SEC_IN_QUERY, IG_SEC_IN_COOKIE };

typedef enum ig_auth_result ig_auth_handler_fn(ig_ctx *ctx, const struct ig_credentials *cred,
					       struct ig_principal *out);
/* The document's x-ingot-principal decoder (generated): a verified JWT's
 * payload json[0..len) into a new struct of the schema in ctx's arena.
 * Returns it, or NULL when the claims break the schema (or the arena is
 * full). */
typedef void *ig_claims_decode_fn(ig_ctx *ctx, const char *json, size_t len);

/* One securitySchemes entry. oauth2 and openIdConnect are bearer JWTs. */
struct ig_sec_scheme {
	const char *name; /* the document's key */
	enum ig_sec_type type;
	enum ig_sec_in in;  /* IG_SEC_API_KEY */
	const char *param;  /* IG_SEC_API_KEY: the header, query parameter or cookie name */
	ig_auth_handler_fn *handler; /* IG_SEC_API_KEY, IG_SEC_BASIC: ig_auth_handler */
	/* IG_SEC_BEARER with an x-ingot-principal: the claims' decoder (a token
	   whose claims fail it is refused as invalid_token); else NULL */
	ig_claims_decode_fn *claims;
};

/* One scheme of a requirement object, with the scopes it needs (for a
 * JWT: words of scope/scp; else: the auth handler's principal's). */
struct ig_sec_use {
	const struct ig_sec_scheme *scheme;
	const char *const *scopes;
	size_t nscopes;
};
/* A requirement object: every use must pass. nuses 0 ({}): anyone. */
struct ig_sec_alt {
	const struct ig_sec_use *uses;
	size_t nuses;
};
/* An operation's security: any alternative may pass. An operation whose
 * security is [] has no table (its descriptor's security is NULL). */
struct ig_security;
typedef bool ig_security_check_fn(ig_ctx *ctx, const struct ig_security *sec);
struct ig_security {
	/* ig_security_check: through the table, so that only a binary whose
	   document has security links it (and net/auth with it). */
	ig_security_check_fn *check;
	const struct ig_sec_alt *alts;
	size_t nalts;
	/* x-ingot-access-token-query (a stream's only): without a Bearer
	   Authorization, the token may be the query's access_token (RFC 6750
	   2.3), judged as the header's would be; both at once, or the
	   parameter twice, is 400 invalid_request. */
	bool query_token;
};

/* The key fetcher's half of struct ig_app_jwt (include/ingot/api_hooks.h;
 * net/api/jwks_remote.c), which the generated code points to. prepare:
 * with INGOT_JWKS_URL, INGOT_OIDC_DISCOVERY_URL or jwt->discovery_url
 * (and no INGOT_JWKS_FILE), registers the "jwks" backend (/readyz 503
 * until a first set is fetched), sets ig_jwks_unknown_kid_hook and
 * returns true; else false and nothing is done. core_start: core 0's first
 * fetch, then its refreshes. */
IG_NONNULL(1) bool ig_jwks_remote_prepare(const struct ig_app_jwt *jwt);
IG_NONNULL(1) void ig_jwks_remote_core_start(struct ig_loop *loop);

/* Whether judging sec may call the app's ig_auth_handler (an apiKey or
 * basic scheme), which may wait (ingot/auth.h): ig_run_operation then runs
 * the door on the handler's coroutine. */
static inline bool ig_security_may_wait(const struct ig_security *sec)
{
	for (size_t a = 0; a < sec->nalts; a++)
		for (size_t i = 0; i < sec->alts[a].nuses; i++)
			if (sec->alts[a].uses[i].scheme->handler)
				return true;
	return false;
}

/* Judges the request against sec. Returns true when an alternative passed
 * (its principal, if any, is the request's: ig_principal); false when it
 * has answered: 401 with WWW-Authenticate (RFC 6750: error="invalid_token"
 * when a bearer token was sent and refused, no error when none was sent;
 * a mutualTLS scheme without a verified client certificate is absent),
 * 400 with error="invalid_request" when sec->query_token and the token
 * came both ways (or twice in the query),
 * 403 with error="insufficient_scope" and the scopes of the first
 * alternative whose credentials were valid but lacked scopes, or 429 when
 * the client's address has failed too often (INGOT_AUTH_FAILURES_PER_MIN).
 * The problem+json body never says more than those codes. */
IG_NONNULL(1, 2) bool ig_security_check(ig_ctx *ctx, const struct ig_security *sec);

/* ig_security_check with one bearer JWT scheme and no scope: any token the
 * door's key set and INGOT_JWT_ISSUER/AUDIENCE take. For the runtime's own
 * endpoints (push delivery), which no document's security table covers.
 * Linked where the document has security (the start refers to it weakly). */
IG_NONNULL(1) bool ig_security_bearer(ig_ctx *ctx);

#endif
