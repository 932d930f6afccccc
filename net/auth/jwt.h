/* JWT bearer tokens (RFC 7515 compact JWS, RFC 7519 claims): the contract
 * between net/auth and whoever authenticates a request with one (the
 * generated door). Three parts, one file each (beside base64url.c, and
 * auth_settings.c: the settings and the live key set, settings.h):
 *  - jwks.c: a JWKS (RFC 7517) parsed into a fixed array of keys: oct
 *    (HMAC), RSA (n, e) and EC P-256/P-384 (x, y), with kid, alg and use;
 *  - jwt.c: a compact JWS checked against those keys with BearSSL
 *    (HS256/384/512, RS256/384/512, ES256/384), then its claims (exp, nbf
 *    with leeway, iss, aud) against a policy; scopes and claims read;
 *  - token_cache.c: a core's bounded cache of tokens already verified,
 *    valid until their exp, so a repeated token costs no signature check.
 * Every refusal is an enum ig_jwt_error value, never a message to match.
 * Verification allocates only from the caller's arena (the request's):
 * the decoded segments and the claims' tree live there. Keys are read
 * only; a key set is replaced whole (jwks.c), never changed in place. */
#ifndef NET_AUTH_JWT_H
#define NET_AUTH_JWT_H

#include "ingot/base.h"
#include "ingot/json_read.h"

/* Why a token was refused. Stable values: metrics may index by them. */
enum ig_jwt_error {
	IG_JWT_OK = 0,
	IG_JWT_TOO_LARGE,        /* longer than the policy's max_len */
	IG_JWT_MALFORMED,        /* not three segments, or a header or claim of the wrong type */
	IG_JWT_BAD_BASE64URL,    /* a segment that is not canonical unpadded base64url */
	IG_JWT_BAD_JSON,         /* a header or payload that is not a JSON object */
	IG_JWT_ALG_NONE,         /* "alg": "none" (an unsecured JWS) */
	IG_JWT_ALG_UNSUPPORTED,  /* any alg but the eight below */
	IG_JWT_ALG_KEY_MISMATCH, /* no key of the alg's type (HS256 against an RSA key), or a key whose alg or
	                          * curve differs, or an HMAC secret shorter than the alg's hash */
	IG_JWT_CRIT_UNKNOWN,     /* a "crit" header (we understand no extension) */
	IG_JWT_UNKNOWN_KID,      /* a kid that no key has */
	IG_JWT_BAD_SIGNATURE,    /* no key of the right type verifies the signature */
	IG_JWT_EXPIRED,          /* now >= exp + leeway */
	IG_JWT_NOT_YET_VALID,    /* now + leeway < nbf */
	IG_JWT_WRONG_ISSUER,     /* iss is not the policy's issuer (when it has one) */
	IG_JWT_WRONG_AUDIENCE,   /* aud (a string or an array) lacks the policy's audience */
	IG_JWT_NO_MEMORY,        /* the arena is full */
	IG_JWT_NO_KEYS,          /* no key set loaded */
	IG_JWT_ERROR_COUNT
};

/* The error's name for logs and a metric's label ("expired"): a static
 * string; never says more than the kind. */
const char *ig_jwt_error_name(enum ig_jwt_error e);

/* ---- keys (jwks.c) ---- */
enum ig_jwt_alg {
	IG_JWT_ALG_ANY = 0, /* a key without "alg": any alg of its type */
	IG_JWT_HS256, IG_JWT_HS384, IG_JWT_HS512,
	IG_JWT_RS256, IG_JWT_RS384, IG_JWT_RS512,
	IG_JWT_ES256, IG_JWT_ES384,
};

enum ig_jwk_type { IG_JWK_OCT, IG_JWK_RSA, IG_JWK_EC };

#define IG_JWKS_MAX_KEYS 16
#define IG_JWK_KID_MAX 128
/* RSA moduli from 2048 (RFC 7518 3.3's minimum) to 4096 bits (BearSSL's
 * largest); HMAC secrets up to 512 bytes. */
#define IG_JWK_RSA_MIN_BYTES 256
#define IG_JWK_MATERIAL_MAX 520

struct ig_jwk {
	enum ig_jwk_type type;
	enum ig_jwt_alg alg; /* IG_JWT_ALG_ANY when the JWK names none */
	int curve;           /* EC: BR_EC_secp256r1 or BR_EC_secp384r1 */
	uint16_t kid_len;    /* 0: no kid */
	uint16_t len;        /* oct: the secret's; EC: the point's (0x04 x y) */
	uint16_t n_len, e_len; /* RSA: material holds n then e, no leading zeros */
	char kid[IG_JWK_KID_MAX];
	uint8_t material[IG_JWK_MATERIAL_MAX];
};

/* A key set: filled by ig_jwks_parse, then only read. generation tells
 * one loaded set from the next (token_cache.c forgets tokens verified
 * with an older one). */
struct ig_jwks {
	uint64_t generation;
	size_t count;
	struct ig_jwk keys[IG_JWKS_MAX_KEYS];
};

/* Parses a JWKS document ({"keys": [...]}) from json[0..len) into out,
 * using arena for the parse (nothing of it is kept). Keys with "use"
 * other than "sig", of another kty or curve, or with key_ops lacking
 * "verify", are skipped, not errors; so are private members (d, p, ...),
 * which are never copied. Returns NULL, or a static message saying what
 * is wrong (bad JSON, a key member that is not base64url, a key too small
 * or too large, too many keys). Two keys may share a kid (RFC 7517 4.5). */
IG_NONNULL(1, 3, 4) const char *ig_jwks_parse(const char *json, size_t len, ig_arena *arena, struct ig_jwks *out);

/* The current key set (auth_settings.c): INGOT_JWKS_FILE's, read at the
 * start and again by ig_jwks_file_refresh when the file changed, or the
 * last one fetched over HTTP (ig_jwks_load_json); NULL when none is
 * loaded. The set returned stays valid until two later loads have
 * happened (the refresh checks the file at most once a second; fetched
 * sets change at most twice a minute), so a caller holds it for one
 * verification, not longer. */
const struct ig_jwks *ig_jwks_current(void);
/* Reads INGOT_JWKS_FILE again if its size, inode or modification time
 * changed since the last read (at most one stat per second of now_s); a
 * file that fails to parse keeps the old set. Call from core 0 only (a
 * timer there), the thread that SIGHUP's reload (ig_jwks_sighup) runs
 * on. Returns NULL, or why the new file was refused (the caller logs
 * it). */
const char *ig_jwks_file_refresh(int64_t now_s);

/* ---- tokens (jwt.c) ---- */
/* What a token must satisfy beyond its signature. Empty issuer or
 * audience: not checked. */
struct ig_jwt_policy {
	ig_str issuer, audience;
	int64_t leeway_s; /* for exp and nbf; the settings' default is 60 */
	size_t max_len;   /* 0: IG_JWT_MAX_LEN */
};
#define IG_JWT_MAX_LEN 8192

/* A verified token: its header's alg and the claims' tree, in the arena
 * given to the verify; valid while that arena is. */
struct ig_jwt {
	enum ig_jwt_alg alg;
	const ig_json_value *claims; /* the payload: an object */
	bool has_exp;
	int64_t exp; /* whole seconds; a fractional exp is rounded down */
	ig_str sub;  /* empty when there is no sub */
	ig_str payload; /* the claims' JSON text, decoded from base64url (the reader never writes to it) */
};

/* Verifies token[0..len) (the compact JWS, without "Bearer ") against
 * keys (NULL: none loaded, IG_JWT_NO_KEYS) and policy at now_s (Unix
 * seconds), allocating from arena. On IG_JWT_OK fills *out. A token with
 * a kid is checked with that kid's keys only; one without is tried
 * against each key of its alg's type. HMAC tags are compared in constant
 * time. */
IG_NONNULL(1, 4, 6, 7)
enum ig_jwt_error ig_jwt_verify(const char *token, size_t len, const struct ig_jwks *keys,
				const struct ig_jwt_policy *policy, int64_t now_s, ig_arena *arena, struct ig_jwt *out);

/* The string claim name (a NUL-terminated claim name): true with *out
 * (in the arena) when the payload has it as a string. */
IG_NONNULL(1, 2, 3) bool ig_jwt_claim_str(const struct ig_jwt *t, const char *name, ig_str *out);
/* True when the token grants scope[0..len): a word of "scope" (space
 * separated), or of "scp" (an array of strings, or one space-separated
 * string). */
IG_NONNULL(1) bool ig_jwt_has_scope(const struct ig_jwt *t, const char *scope, size_t len);
/* The token's scopes, for a handler that lists them: the words of "scope",
 * then those of "scp", into out[0..cap) as slices of the claims. Returns
 * how many there are (more than cap: the rest did not fit). */
IG_NONNULL(1) size_t ig_jwt_scopes(const struct ig_jwt *t, ig_str *out, size_t cap);

/* ---- the per-core cache (token_cache.c) ---- */
#define IG_TOKEN_CACHE_SETS 64   /* a power of two */
#define IG_TOKEN_CACHE_WAYS 2
#define IG_TOKEN_CACHE_TOKEN_MAX 1024 /* longer tokens are verified every time */

struct ig_token_cache_entry {
	uint64_t hash;
	uint64_t generation;
	int64_t exp;
	uint32_t len;  /* 0: empty */
	uint32_t used; /* the cache's clock at the last hit: the older way goes */
	uint32_t tag;  /* the caller's (jwt.c: the alg) */
	char token[IG_TOKEN_CACHE_TOKEN_MAX];
};

/* One core's: never shared, so no lock. 133 KiB (128 tokens of up to
 * 1 KiB), in .bss or the core's memory: a page costs nothing until a
 * token lands in it. */
struct ig_token_cache {
	uint64_t key[2]; /* the hash's secret key, from getrandom */
	uint32_t clock;
	struct ig_token_cache_entry entries[IG_TOKEN_CACHE_SETS][IG_TOKEN_CACHE_WAYS];
};

/* Empties c and draws its hash key. */
IG_NONNULL(1) void ig_token_cache_init(struct ig_token_cache *c);
/* True when token[0..len) was stored by ig_token_cache_put with this
 * generation and now_s is before its exp (plus leeway_s): the token's
 * signature and claims were checked then; *tag is what put stored. The hash finds the slot; the
 * full token is then compared (in constant time). */
IG_NONNULL(1, 2, 7) bool ig_token_cache_get(struct ig_token_cache *c, const char *token, size_t len,
					    uint64_t generation, int64_t now_s, int64_t leeway_s, uint32_t *tag);
/* Remembers a verified token until exp (evicting the least recently used
 * of its set); a token longer than IG_TOKEN_CACHE_TOKEN_MAX is not kept. */
IG_NONNULL(1, 2) void ig_token_cache_put(struct ig_token_cache *c, const char *token, size_t len, uint64_t generation,
					 int64_t exp, uint32_t tag);

/* The verify with the cache in front: a hit parses the payload only (no
 * signature, no key); a miss verifies and, on success with an exp,
 * stores the token. Same results as ig_jwt_verify. */
IG_NONNULL(1, 2, 5, 7, 8)
enum ig_jwt_error ig_jwt_verify_cached(struct ig_token_cache *c, const char *token, size_t len,
				       const struct ig_jwks *keys, const struct ig_jwt_policy *policy, int64_t now_s,
				       ig_arena *arena, struct ig_jwt *out);

#endif
