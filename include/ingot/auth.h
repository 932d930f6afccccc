/* Who made the request, as the door (the document's security, checked by
 * net/api/security.c before any handler runs) established it: the
 * principal a handler reads, and the auth handler an app writes once for
 * its apiKey and http basic schemes (Encore's model). Bearer JWTs need no
 * app code: the runtime verifies them (net/auth), nor does mutualTLS (the
 * TLS handshake verifies the client certificate). */
#ifndef INGOT_AUTH_H
#define INGOT_AUTH_H

#include "ingot/http.h"
#include "ingot/json_read.h"

/* The request's principal: every slice lives in the request's arena (or
 * static storage) and is valid while ctx is. */
struct ig_principal {
	ig_str subject;       /* a JWT's sub; what the auth handler set; a verified
				 TLS client certificate's subject CN (mutualTLS) */
	const ig_str *scopes; /* a JWT's scope/scp words; the auth handler's */
	size_t nscopes;
	const char *scheme;   /* the securitySchemes key that admitted it (static) */
	void *data;           /* with the document's x-ingot-principal: its struct (the
				 auth handler's, or a JWT's claims decoded), read with
				 the generated ig_principal_<Type>; else the auth
				 handler's own, and NULL for a JWT; always NULL for
				 mutualTLS */
	const void *token;    /* runtime's: the verified JWT, for ig_principal_claim */
};

/* The principal the door admitted. Returns: NULL on an operation without
 * security (or with `security: []`, or an alternative `{}` that passed),
 * else a principal valid while ctx is. */
IG_NONNULL(1) const struct ig_principal *ig_principal(const ig_ctx *ctx);

/* A string claim of the request's JWT, by name (NUL-terminated). Returns:
 * true with *out (valid while ctx is) when the principal came from a JWT
 * whose payload has name as a string; false otherwise. */
IG_NONNULL(1, 2, 3) bool ig_principal_claim(ig_ctx *ctx, const char *name, ig_str *out);

/* A claim of the request's JWT, by name (NUL-terminated), whatever its
 * JSON type (a number, an array, an object...). Returns: the value (in the
 * arena, valid while ctx is) when the principal came from a JWT whose
 * payload has that member; NULL otherwise (no principal, not a JWT, no
 * such claim). */
IG_NONNULL(1, 2) const ig_json_value *ig_principal_claim_value(const ig_ctx *ctx, const char *name);

/* True when the principal holds scope[0..len) (compared exactly). */
IG_NONNULL(1, 2) bool ig_principal_has_scope(const struct ig_principal *p, const char *scope, size_t len);

/* ---- the app's auth handler ---- */

enum ig_credential_kind { IG_CRED_API_KEY, IG_CRED_BASIC };

/* What a request sent for one apiKey or http basic scheme. */
struct ig_credentials {
	const char *scheme; /* the securitySchemes key (static) */
	enum ig_credential_kind kind;
	ig_str key;            /* IG_CRED_API_KEY: the header's, query parameter's or cookie's value (raw) */
	ig_str user, password; /* IG_CRED_BASIC: decoded from base64, in the arena */
};

/* What the auth handler answers. */
enum ig_auth_result { IG_AUTH_OK = 0, IG_AUTH_REFUSED = 1 };

/* Written by the app when its document declares an apiKey or http basic
 * scheme (the generated tables refer to it: the link fails without it).
 * Called on the operation's handler coroutine, before its decoder and
 * handler, with credentials that were sent (a scheme whose credential is
 * absent is refused by the runtime without a call). It may wait: the
 * linear calls (ingot/http.h's "waiting": ig_sleep, a query, an outbound
 * call) suspend it as they do a handler, and return cancelled when the
 * client has gone (refuse then). Fills *out (zeroed; subject and scopes in
 * the arena or static) and returns IG_AUTH_OK, or returns
 * IG_AUTH_REFUSED: the request is then answered 401 unless another
 * alternative of the operation's security passes. Compare secrets with
 * ig_secret_eq.
 *
 * A document with a root `x-ingot-principal` ({"$ref":
 * "#/components/schemas/T"}) has a typed handler instead, declared in its
 * generated api.h: ig_auth_handler_T(ctx, cred, out, struct T *data),
 * called as this one with data zeroed in the arena; on IG_AUTH_OK the
 * principal's data is that struct (the generated ig_principal_T(ctx)). */
IG_NONNULL(1, 2, 3) enum ig_auth_result ig_auth_handler(ig_ctx *ctx, const struct ig_credentials *cred,
							 struct ig_principal *out);

/* a and b compared in time that depends on their lengths only, never on
 * where they differ: for keys and passwords. */
bool ig_secret_eq(ig_str a, ig_str b);

#endif
