/* A compact JWS verified (jwt.h): the header read and judged before any
 * key is touched, the signature checked with BearSSL against the key the
 * kid names (or each key of the alg's type), and only then the claims
 * read and checked against the policy, so that a forged token learns
 * nothing about exp, iss or aud. Everything decoded lives in the caller's
 * arena. The cache in front (ig_jwt_verify_cached) is token_cache.c's. */
#include "net/auth/jwt.h"
#include "net/auth/base64url.h"

#include <bearssl.h>
#include <math.h>
#include <string.h>
#include <strings.h>

/* Nesting allowed in a header or payload: claims are shallow. */
#define JWT_MAX_DEPTH 16

static const char *const error_names[IG_JWT_ERROR_COUNT] = {
	[IG_JWT_OK] = "ok",
	[IG_JWT_TOO_LARGE] = "too_large",
	[IG_JWT_MALFORMED] = "malformed",
	[IG_JWT_BAD_BASE64URL] = "bad_base64url",
	[IG_JWT_BAD_JSON] = "bad_json",
	[IG_JWT_ALG_NONE] = "alg_none",
	[IG_JWT_ALG_UNSUPPORTED] = "alg_unsupported",
	[IG_JWT_ALG_KEY_MISMATCH] = "alg_key_mismatch",
	[IG_JWT_CRIT_UNKNOWN] = "crit_unknown",
	[IG_JWT_UNKNOWN_KID] = "unknown_kid",
	[IG_JWT_BAD_SIGNATURE] = "bad_signature",
	[IG_JWT_EXPIRED] = "expired",
	[IG_JWT_NOT_YET_VALID] = "not_yet_valid",
	[IG_JWT_WRONG_ISSUER] = "wrong_issuer",
	[IG_JWT_WRONG_AUDIENCE] = "wrong_audience",
	[IG_JWT_NO_MEMORY] = "no_memory",
	[IG_JWT_NO_KEYS] = "no_keys",
};

const char *ig_jwt_error_name(enum ig_jwt_error e)
{
	return (unsigned)e < IG_JWT_ERROR_COUNT ? error_names[e] : "unknown";
}

static bool str_eq(ig_str s, const char *p, size_t n)
{
	return s.len == n && (n == 0 || memcmp(s.ptr, p, n) == 0);
}

/* The compiler may not stop at the first difference: every byte is read. */
static bool equal_ct(const uint8_t *a, const uint8_t *b, size_t n)
{
	volatile uint8_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* One base64url segment decoded and parsed as a JSON object, in arena. */
static enum ig_jwt_error read_object(const char *seg, size_t n, ig_arena *arena, const ig_json_value **out,
				     ig_str *json)
{
	size_t cap = ig_b64url_max(n);
	uint8_t *buf = cap ? ig_arena_alloc(arena, cap) : NULL;
	if (cap && !buf)
		return IG_JWT_NO_MEMORY;
	long len = ig_b64url_decode(seg, n, buf, cap);
	if (len < 0)
		return IG_JWT_BAD_BASE64URL;
	ig_json_reader r;
	ig_jr_init(&r, (const char *)buf, (size_t)len, arena, JWT_MAX_DEPTH);
	const ig_json_value *v = ig_jr_value(&r);
	if (!v && r.error && strcmp(r.error, "out of memory") == 0)
		return IG_JWT_NO_MEMORY;
	if (!v || !ig_jr_finish(&r) || v->type != IG_JSON_OBJECT)
		return IG_JWT_BAD_JSON;
	*out = v;
	if (json)
		*json = (ig_str){ (const char *)buf, (size_t)len };
	return IG_JWT_OK;
}

struct alg_info {
	const char *name;
	enum ig_jwk_type type;
	const br_hash_class *hash;
	const unsigned char *oid; /* RSA */
	size_t sig_len;           /* EC: r || s */
	int curve;
};

static const struct alg_info algs[] = {
	[IG_JWT_HS256] = { "HS256", IG_JWK_OCT, &br_sha256_vtable, NULL, 0, 0 },
	[IG_JWT_HS384] = { "HS384", IG_JWK_OCT, &br_sha384_vtable, NULL, 0, 0 },
	[IG_JWT_HS512] = { "HS512", IG_JWK_OCT, &br_sha512_vtable, NULL, 0, 0 },
	[IG_JWT_RS256] = { "RS256", IG_JWK_RSA, &br_sha256_vtable, BR_HASH_OID_SHA256, 0, 0 },
	[IG_JWT_RS384] = { "RS384", IG_JWK_RSA, &br_sha384_vtable, BR_HASH_OID_SHA384, 0, 0 },
	[IG_JWT_RS512] = { "RS512", IG_JWK_RSA, &br_sha512_vtable, BR_HASH_OID_SHA512, 0, 0 },
	[IG_JWT_ES256] = { "ES256", IG_JWK_EC, &br_sha256_vtable, NULL, 64, BR_EC_secp256r1 },
	[IG_JWT_ES384] = { "ES384", IG_JWK_EC, &br_sha384_vtable, NULL, 96, BR_EC_secp384r1 },
};

/* Whether key k may check a token of alg a: its type, its own alg when it
 * names one, its curve; an HMAC secret at least the hash's size (RFC 7518
 * 3.2: a 32-byte secret serves HS256, not HS512). */
static bool key_fits(const struct ig_jwk *k, enum ig_jwt_alg a)
{
	const struct alg_info *ai = &algs[a];
	return k->type == ai->type && (k->alg == IG_JWT_ALG_ANY || k->alg == a) &&
	       (k->type != IG_JWK_EC || k->curve == ai->curve) &&
	       (k->type != IG_JWK_OCT || k->len >= (ai->hash->desc >> BR_HASHDESC_OUT_OFF & BR_HASHDESC_OUT_MASK));
}

/* Whether a token with this kid header (NULL: none) may use key k: any
 * key when it has none; else a key with that kid (never one without: a
 * kid of "" is no wildcard). */
static bool kid_names(const ig_json_value *kid, const struct ig_jwk *k)
{
	return !kid || (k->kid_len && str_eq(kid->s, k->kid, k->kid_len));
}

/* The signature sig[0..n) over input[0..in_len) with key k; digest is
 * input's hash under the alg's hash (RSA and EC sign that). */
static bool signature_ok(const struct ig_jwk *k, enum ig_jwt_alg a, const char *input, size_t in_len,
			 const uint8_t *digest, const uint8_t *sig, size_t n)
{
	const struct alg_info *ai = &algs[a];
	size_t hlen = (size_t)(ai->hash->desc >> BR_HASHDESC_OUT_OFF & BR_HASHDESC_OUT_MASK);
	switch (k->type) {
	case IG_JWK_OCT: {
		br_hmac_key_context kc;
		br_hmac_context hc;
		uint8_t tag[64];
		br_hmac_key_init(&kc, ai->hash, k->material, k->len);
		br_hmac_init(&hc, &kc, 0);
		br_hmac_update(&hc, input, in_len);
		br_hmac_out(&hc, tag);
		return n == hlen && equal_ct(tag, sig, n);
	}
	case IG_JWK_RSA: {
		br_rsa_public_key pk = { (unsigned char *)k->material, k->n_len, (unsigned char *)k->material + k->n_len,
					 k->e_len };
		uint8_t got[64];
		if (n != k->n_len || !br_rsa_pkcs1_vrfy_get_default()(sig, n, ai->oid, hlen, &pk, got))
			return false;
		return memcmp(got, digest, hlen) == 0;
	}
	case IG_JWK_EC: {
		br_ec_public_key pk = { k->curve, (unsigned char *)k->material, k->len };
		return n == ai->sig_len &&
		       br_ecdsa_vrfy_raw_get_default()(br_ec_get_default(), digest, hlen, &pk, sig, n) == 1;
	}
	}
	return false;
}

/* A NumericDate claim: absent (true, *has false), a number (true), or
 * anything else (false). Fractions round down; beyond int64 saturates. */
static bool numeric_date(const ig_json_value *v, bool *has, int64_t *out)
{
	*has = v != NULL;
	if (!v)
		return true;
	if (v->type == IG_JSON_INT) {
		*out = v->i;
		return true;
	}
	if (v->type != IG_JSON_NUMBER || !isfinite(v->d))
		return false;
	double f = floor(v->d);
	*out = f >= 9.2e18 ? INT64_MAX : f <= -9.2e18 ? INT64_MIN : (int64_t)f;
	return true;
}

/* The payload segment's claims into *out (exp and sub read; their types
 * checked). */
static enum ig_jwt_error read_claims(const char *seg, size_t n, ig_arena *arena, struct ig_jwt *out)
{
	enum ig_jwt_error e = read_object(seg, n, arena, &out->claims, &out->payload);
	if (e != IG_JWT_OK)
		return e;
	if (!numeric_date(ig_json_get(out->claims, "exp", 3), &out->has_exp, &out->exp))
		return IG_JWT_MALFORMED;
	const ig_json_value *sub = ig_json_get(out->claims, "sub", 3);
	if (sub && sub->type != IG_JSON_STRING)
		return IG_JWT_MALFORMED;
	out->sub = sub ? sub->s : (ig_str){ NULL, 0 };
	return IG_JWT_OK;
}

static enum ig_jwt_error check_claims(const struct ig_jwt *t, const struct ig_jwt_policy *p, int64_t now)
{
	int64_t nbf;
	bool has_nbf;
	if (!numeric_date(ig_json_get(t->claims, "nbf", 3), &has_nbf, &nbf))
		return IG_JWT_MALFORMED;
	/* now - leeway, not exp + leeway: an exp near INT64_MAX must not wrap. */
	if (t->has_exp && now - p->leeway_s >= t->exp)
		return IG_JWT_EXPIRED;
	if (has_nbf && now + p->leeway_s < nbf)
		return IG_JWT_NOT_YET_VALID;
	if (p->issuer.len) {
		const ig_json_value *iss = ig_json_get(t->claims, "iss", 3);
		if (!iss || iss->type != IG_JSON_STRING || !str_eq(iss->s, p->issuer.ptr, p->issuer.len))
			return IG_JWT_WRONG_ISSUER;
	}
	if (p->audience.len) {
		const ig_json_value *aud = ig_json_get(t->claims, "aud", 3);
		bool found = false;
		if (aud && aud->type == IG_JSON_STRING)
			found = str_eq(aud->s, p->audience.ptr, p->audience.len);
		else if (aud && aud->type == IG_JSON_ARRAY)
			for (size_t i = 0; i < aud->array.len && !found; i++)
				found = aud->array.items[i]->type == IG_JSON_STRING &&
					str_eq(aud->array.items[i]->s, p->audience.ptr, p->audience.len);
		if (!found)
			return IG_JWT_WRONG_AUDIENCE;
	}
	return IG_JWT_OK;
}

/* The two dots of a compact JWS: false unless there are exactly two. */
static bool split(const char *token, size_t len, size_t *dot1, size_t *dot2)
{
	const char *a = memchr(token, '.', len);
	if (!a)
		return false;
	const char *b = memchr(a + 1, '.', len - (size_t)(a + 1 - token));
	if (!b || memchr(b + 1, '.', len - (size_t)(b + 1 - token)))
		return false;
	*dot1 = (size_t)(a - token);
	*dot2 = (size_t)(b - token);
	return true;
}

enum ig_jwt_error ig_jwt_verify(const char *token, size_t len, const struct ig_jwks *keys,
				const struct ig_jwt_policy *policy, int64_t now_s, ig_arena *arena, struct ig_jwt *out)
{
	if (len > (policy->max_len ? policy->max_len : IG_JWT_MAX_LEN))
		return IG_JWT_TOO_LARGE;
	size_t dot1, dot2;
	if (!split(token, len, &dot1, &dot2))
		return IG_JWT_MALFORMED;

	/* The header: which alg, which key, and no extension we would ignore. */
	const ig_json_value *header;
	enum ig_jwt_error e = read_object(token, dot1, arena, &header, NULL);
	if (e != IG_JWT_OK)
		return e;
	const ig_json_value *alg = ig_json_get(header, "alg", 3), *kid = ig_json_get(header, "kid", 3);
	if (!alg || alg->type != IG_JSON_STRING || (kid && kid->type != IG_JSON_STRING))
		return IG_JWT_MALFORMED;
	enum ig_jwt_alg a = IG_JWT_ALG_ANY;
	for (size_t i = IG_JWT_HS256; i < IG_COUNTOF(algs); i++)
		if (str_eq(alg->s, algs[i].name, 5))
			a = (enum ig_jwt_alg)i;
	if (a == IG_JWT_ALG_ANY) /* "none" in any case is the unsecured JWS */
		return alg->s.len == 4 && strncasecmp(alg->s.ptr, "none", 4) == 0 ? IG_JWT_ALG_NONE
										   : IG_JWT_ALG_UNSUPPORTED;
	const ig_json_value *crit = ig_json_get(header, "crit", 4);
	if (crit) {
		/* RFC 7515 4.1.11: a non-empty array of names; we implement none
		 * of the extensions it could name, so any is refused. */
		if (crit->type != IG_JSON_ARRAY || crit->array.len == 0)
			return IG_JWT_MALFORMED;
		return IG_JWT_CRIT_UNKNOWN;
	}
	if (!keys || keys->count == 0)
		return IG_JWT_NO_KEYS;

	/* The keys to try: those of the kid (a set may give one kid to keys of
	 * different types, RFC 7517 4.5), or every one; of these, those that
	 * fit the alg. */
	bool kid_found = false, any = false;
	for (size_t i = 0; i < keys->count; i++)
		if (kid_names(kid, &keys->keys[i])) {
			kid_found = true;
			any = any || key_fits(&keys->keys[i], a);
		}
	if (!kid_found)
		return IG_JWT_UNKNOWN_KID;
	if (!any)
		return IG_JWT_ALG_KEY_MISMATCH;

	size_t sig_seg = len - dot2 - 1, sig_cap = ig_b64url_max(sig_seg);
	uint8_t *sig = sig_cap ? ig_arena_alloc(arena, sig_cap) : NULL;
	if (sig_cap && !sig)
		return IG_JWT_NO_MEMORY;
	long sig_len = ig_b64url_decode(token + dot2 + 1, sig_seg, sig, sig_cap);
	if (sig_len < 0)
		return IG_JWT_BAD_BASE64URL;
	uint8_t digest[64];
	if (algs[a].type != IG_JWK_OCT) {
		br_hash_compat_context hc;
		algs[a].hash->init(&hc.vtable);
		algs[a].hash->update(&hc.vtable, token, dot2);
		algs[a].hash->out(&hc.vtable, digest);
	}
	bool ok = false;
	for (size_t i = 0; i < keys->count && !ok; i++) {
		const struct ig_jwk *k = &keys->keys[i];
		ok = kid_names(kid, k) && key_fits(k, a) &&
		     signature_ok(k, a, token, dot2, digest, sig, (size_t)sig_len);
	}
	if (!ok)
		return IG_JWT_BAD_SIGNATURE;

	out->alg = a;
	e = read_claims(token + dot1 + 1, dot2 - dot1 - 1, arena, out);
	if (e != IG_JWT_OK)
		return e;
	return check_claims(out, policy, now_s);
}

bool ig_jwt_claim_str(const struct ig_jwt *t, const char *name, ig_str *out)
{
	const ig_json_value *v = ig_json_get(t->claims, name, strlen(name));
	if (!v || v->type != IG_JSON_STRING)
		return false;
	*out = v->s;
	return true;
}

/* Calls each(word, arg) for every space-separated word of s until it
 * returns true; returns whether one did. */
static bool each_word(ig_str s, bool (*each)(ig_str word, void *arg), void *arg)
{
	size_t i = 0;
	while (i < s.len) {
		while (i < s.len && s.ptr[i] == ' ')
			i++;
		size_t start = i;
		while (i < s.len && s.ptr[i] != ' ')
			i++;
		if (i > start && each((ig_str){ s.ptr + start, i - start }, arg))
			return true;
	}
	return false;
}

/* Calls each for every scope of the token ("scope"'s words, then "scp"'s:
 * an array's strings, or a string's words) until it returns true. */
static bool each_scope(const struct ig_jwt *t, bool (*each)(ig_str word, void *arg), void *arg)
{
	const ig_json_value *v = ig_json_get(t->claims, "scope", 5);
	if (v && v->type == IG_JSON_STRING && each_word(v->s, each, arg))
		return true;
	v = ig_json_get(t->claims, "scp", 3);
	if (v && v->type == IG_JSON_STRING)
		return each_word(v->s, each, arg);
	if (v && v->type == IG_JSON_ARRAY)
		for (size_t i = 0; i < v->array.len; i++)
			if (v->array.items[i]->type == IG_JSON_STRING && each(v->array.items[i]->s, arg))
				return true;
	return false;
}

static bool is_scope(ig_str word, void *arg)
{
	const ig_str *want = arg;
	return str_eq(word, want->ptr, want->len);
}

bool ig_jwt_has_scope(const struct ig_jwt *t, const char *scope, size_t len)
{
	if (len == 0 || memchr(scope, ' ', len))
		return false;
	ig_str want = { scope, len };
	return each_scope(t, is_scope, &want);
}

struct scope_list {
	ig_str *out;
	size_t cap, n;
};

static bool add_scope(ig_str word, void *arg)
{
	struct scope_list *l = arg;
	if (l->n < l->cap)
		l->out[l->n] = word;
	l->n++;
	return false;
}

size_t ig_jwt_scopes(const struct ig_jwt *t, ig_str *out, size_t cap)
{
	struct scope_list l = { out, cap, 0 };
	each_scope(t, add_scope, &l);
	return l.n;
}

enum ig_jwt_error ig_jwt_verify_cached(struct ig_token_cache *c, const char *token, size_t len,
				       const struct ig_jwks *keys, const struct ig_jwt_policy *policy, int64_t now_s,
				       ig_arena *arena, struct ig_jwt *out)
{
	uint32_t alg;
	size_t dot1, dot2;
	if (keys && ig_token_cache_get(c, token, len, keys->generation, now_s, policy->leeway_s, &alg) &&
	    split(token, len, &dot1, &dot2)) {
		out->alg = (enum ig_jwt_alg)alg;
		return read_claims(token + dot1 + 1, dot2 - dot1 - 1, arena, out);
	}
	enum ig_jwt_error e = ig_jwt_verify(token, len, keys, policy, now_s, arena, out);
	if (e == IG_JWT_OK && out->has_exp)
		ig_token_cache_put(c, token, len, keys->generation, out->exp, out->alg);
	return e;
}
