/* A JWKS document (RFC 7517) parsed into struct ig_jwks (jwt.h): the
 * project's JSON reader builds the tree in a scratch arena, and each
 * usable public key's members are decoded into the key's fixed storage.
 * Only public material is read; a private member is ignored, never kept.
 * Reading the file and replacing the live set is auth_settings.c's. */
#include "net/auth/jwt.h"
#include "net/auth/base64url.h"

#include <bearssl.h>
#include <string.h>

static bool str_is(const ig_json_value *v, const char *lit)
{
	size_t n = strlen(lit);
	return v && v->type == IG_JSON_STRING && v->s.len == n && memcmp(v->s.ptr, lit, n) == 0;
}

static const ig_json_value *member(const ig_json_value *o, const char *name)
{
	return ig_json_get(o, name, strlen(name));
}

/* A base64url member into out[cap], leading zero bytes dropped when
 * strip (RSA's unsigned integers). Returns the length, or -1. */
static long b64_member(const ig_json_value *v, uint8_t *out, size_t cap, bool strip)
{
	if (!v || v->type != IG_JSON_STRING)
		return -1;
	uint8_t tmp[IG_JWK_MATERIAL_MAX];
	long n = ig_b64url_decode(v->s.ptr, v->s.len, tmp, sizeof tmp);
	if (n < 0)
		return -1;
	long skip = 0;
	while (strip && skip < n && tmp[skip] == 0)
		skip++;
	if ((size_t)(n - skip) > cap)
		return -1;
	memcpy(out, tmp + skip, (size_t)(n - skip));
	return n - skip;
}

static enum ig_jwt_alg alg_of(const ig_json_value *v)
{
	static const char *const names[] = { "HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "ES256", "ES384" };
	for (size_t i = 0; i < IG_COUNTOF(names); i++)
		if (str_is(v, names[i]))
			return (enum ig_jwt_alg)(i + 1);
	return IG_JWT_ALG_ANY;
}

/* The key's type as an alg's: an RS alg on an EC key is no use. */
static bool alg_fits(enum ig_jwk_type t, enum ig_jwt_alg a)
{
	switch (t) {
	case IG_JWK_OCT: return a >= IG_JWT_HS256 && a <= IG_JWT_HS512;
	case IG_JWK_RSA: return a >= IG_JWT_RS256 && a <= IG_JWT_RS512;
	case IG_JWK_EC: return a == IG_JWT_ES256 || a == IG_JWT_ES384;
	}
	return false;
}

/* For verification: no "use", or "sig"; no "key_ops", or one with "verify". */
static bool for_signatures(const ig_json_value *k)
{
	const ig_json_value *use = member(k, "use");
	if (use && !str_is(use, "sig"))
		return false;
	const ig_json_value *ops = member(k, "key_ops");
	if (!ops)
		return true;
	if (ops->type != IG_JSON_ARRAY)
		return false;
	for (size_t i = 0; i < ops->array.len; i++)
		if (str_is(ops->array.items[i], "verify"))
			return true;
	return false;
}

/* One key into *out. Returns NULL and sets *skip when the key is not for
 * us; a message when it is malformed. */
static const char *parse_key(const ig_json_value *k, struct ig_jwk *out, bool *skip)
{
	*skip = false;
	memset(out, 0, sizeof *out);
	if (!k || k->type != IG_JSON_OBJECT)
		return "JWKS: a key is not an object";
	const ig_json_value *kty = member(k, "kty");
	if (!kty || kty->type != IG_JSON_STRING)
		return "JWKS: a key has no kty";
	const ig_json_value *kid = member(k, "kid"), *alg = member(k, "alg");
	if (kid) {
		if (kid->type != IG_JSON_STRING)
			return "JWKS: a kid is not a string";
		if (kid->s.len == 0 || kid->s.len > IG_JWK_KID_MAX)
			return "JWKS: a kid is empty or longer than 128 bytes";
		memcpy(out->kid, kid->s.ptr, kid->s.len);
		out->kid_len = (uint16_t)kid->s.len;
	}
	if (alg && alg->type != IG_JSON_STRING)
		return "JWKS: an alg is not a string";
	if (!for_signatures(k)) {
		*skip = true;
		return NULL;
	}
	if (str_is(kty, "oct")) {
		out->type = IG_JWK_OCT;
		long n = b64_member(member(k, "k"), out->material, sizeof out->material, false);
		if (n < 0)
			return "JWKS: an oct key's k is missing, not base64url or over 512 bytes";
		if (n < 32) /* RFC 7518 3.2: at least the hash's size; HS256's is 32 */
			return "JWKS: an oct key's k is under 32 bytes";
		out->len = (uint16_t)n;
	} else if (str_is(kty, "RSA")) {
		out->type = IG_JWK_RSA;
		long n = b64_member(member(k, "n"), out->material, 512, true);
		if (n < 0)
			return "JWKS: an RSA key's n is missing, not base64url or over 4096 bits";
		if (n < IG_JWK_RSA_MIN_BYTES)
			return "JWKS: an RSA key's n is under 2048 bits";
		long e = b64_member(member(k, "e"), out->material + n, sizeof out->material - (size_t)n, true);
		if (e <= 0 || e > 8)
			return "JWKS: an RSA key's e is missing, not base64url or too long";
		out->n_len = (uint16_t)n;
		out->e_len = (uint16_t)e;
	} else if (str_is(kty, "EC")) {
		out->type = IG_JWK_EC;
		const ig_json_value *crv = member(k, "crv");
		size_t size;
		if (str_is(crv, "P-256")) {
			out->curve = BR_EC_secp256r1;
			size = 32;
		} else if (str_is(crv, "P-384")) {
			out->curve = BR_EC_secp384r1;
			size = 48;
		} else {
			*skip = true; /* another curve (P-521, secp256k1): not ours */
			return NULL;
		}
		out->material[0] = 4; /* uncompressed point: 04 x y */
		if (b64_member(member(k, "x"), out->material + 1, size, false) != (long)size ||
		    b64_member(member(k, "y"), out->material + 1 + size, size, false) != (long)size)
			return "JWKS: an EC key's x or y is missing, not base64url or not the curve's size";
		out->len = (uint16_t)(1 + 2 * size);
	} else {
		*skip = true; /* OKP and what comes later */
		return NULL;
	}
	if (alg) {
		out->alg = alg_of(alg);
		if (out->alg == IG_JWT_ALG_ANY || !alg_fits(out->type, out->alg)) {
			*skip = true; /* an alg we do not verify, or one not of this key's type */
			return NULL;
		}
		if (out->type == IG_JWK_EC && (out->alg == IG_JWT_ES256) != (out->curve == BR_EC_secp256r1))
			return "JWKS: an EC key's alg does not match its crv";
	}
	return NULL;
}

const char *ig_jwks_parse(const char *json, size_t len, ig_arena *arena, struct ig_jwks *out)
{
	ig_json_reader r;
	ig_jr_init(&r, json, len, arena, 8);
	const ig_json_value *doc = ig_jr_value(&r);
	if (!doc || !ig_jr_finish(&r))
		return "JWKS: not JSON";
	const ig_json_value *keys = member(doc, "keys");
	if (!keys || keys->type != IG_JSON_ARRAY)
		return "JWKS: no \"keys\" array";
	uint64_t generation = out->generation;
	memset(out, 0, sizeof *out);
	out->generation = generation;
	for (size_t i = 0; i < keys->array.len; i++) {
		if (out->count == IG_JWKS_MAX_KEYS)
			return "JWKS: more than 16 keys";
		bool skip;
		struct ig_jwk *k = &out->keys[out->count];
		const char *why = parse_key(keys->array.items[i], k, &skip);
		if (why)
			return why;
		if (skip)
			continue;
		out->count++;
	}
	return NULL;
}
