/* net/auth's rows of the settings table (INGOT_JWKS_FILE, INGOT_JWKS_URL,
 * INGOT_OIDC_DISCOVERY_URL, INGOT_JWT_*)
 * and the values they hold: the process's start parses them with every
 * other part's (net/start.c lists them weakly: a binary whose door checks
 * no JWT links none of this). */
#ifndef NET_AUTH_SETTINGS_H
#define NET_AUTH_SETTINGS_H

#include "net/auth/jwt.h"
#include "kernel/runtime/config.h"

struct ig_auth_settings_values {
	const char *jwks_file; /* "": no key set (every token is IG_JWT_NO_KEYS) */
	const char *jwks_url;  /* "": not fetched (net/api/jwks_remote.c fetches it) */
	const char *oidc_discovery_url; /* "": an openIdConnect scheme's, if any */
	const char *issuer, *audience; /* "": not checked */
	int64_t leeway_s;
	int64_t failures_per_min; /* the door's limit per client address; 0: none */
};
extern struct ig_auth_settings_values ig_auth_settings_values;
/* Its check reads and parses INGOT_JWKS_FILE: a missing or bad file stops
 * the start (exit 2), with a message that never quotes the file; a file
 * and a URL both set, or a URL that is not http(s), stop it too. */
extern const struct ig_settings ig_auth_settings;

/* The policy the settings make (max_len: IG_JWT_MAX_LEN). */
void ig_auth_policy(struct ig_jwt_policy *out);

/* Reads path and makes it the current key set (ig_jwks_current), with a
 * new generation. Returns NULL, or why not (in err[errlen], or static); the
 * current set stays then. For the settings' check, the refresh and tests. */
const char *ig_jwks_load_file(const char *path, char *err, size_t errlen);

/* A fetched JWKS document (net/api/jwks_remote.c): parsed into a new set,
 * made current (a new generation) when its keys differ from the current
 * set's, *changed saying whether. Any thread. Returns NULL, or why the
 * document was refused (static; the current set stays). */
IG_NONNULL(1, 3) const char *ig_jwks_load_json(const char *json, size_t len, bool *changed);
/* OpenID Connect discovery's issuer (copied): the policy's issuer while
 * INGOT_JWT_ISSUER is not set. The first call's stays; call it before the
 * first ig_jwks_load_json, so that no token is verified without it. */
IG_NONNULL(1) void ig_auth_set_discovered_issuer(const char *issuer);

/* An upcall for the door: a token's kid was in no key of the current set
 * (a rotation the keys' source may know of). NULL unless the keys are
 * fetched (net/api/jwks_remote.c sets it before the first set is
 * published). Called on the request's core; must not block. */
struct ig_ctx;
extern void (*ig_jwks_unknown_kid_hook)(struct ig_ctx *ctx);

/* SIGHUP: INGOT_JWKS_FILE read again whether or not it changed, and one
 * log line saying so (or why the old keys stay). net/server/reload.c calls
 * it, weakly: only a binary that links net/auth has it. */
void ig_jwks_sighup(void);

#endif
