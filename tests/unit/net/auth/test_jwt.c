/* Unit tests of net/auth/jwt: RFC 7515's appendix examples A.1 (HS256),
 * A.2 (RS256) and A.3 (ES256) verified as published, at their time (2011)
 * and with their keys given as a JWKS without kid, iss or aud; a negative
 * corpus, each case refused with its own kind; scopes and claims; and,
 * given a fixture file (argv[1], written by tests/auth/jose_mint.mjs with
 * npm's jose: tests/integration/jwt_jose.test.mjs), tokens minted by a
 * real library, each accepted or refused as the fixture says. */
#include "net/auth/jwt.h"
#include "net/auth/base64url.h"
#include "tests/unit/net/auth/b64url.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "tests/unit/check.h"

#include <bearssl.h>
#include <stdlib.h>

static struct ig_pool blocks;
static ig_arena arena;

/* The payload all three examples sign, and its exp. */
#define RFC_PAYLOAD "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
#define RFC_EXP 1300819380
#define A1 "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9." RFC_PAYLOAD ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
#define A1_JWKS                                                                                                   \
	"{\"keys\":[{\"kty\":\"oct\",\"k\":\"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjA" \
	"zZr1Z9CAow\"}]}"
#define A2                                                                                                         \
	"eyJhbGciOiJSUzI1NiJ9." RFC_PAYLOAD                                                                         \
	".cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t" \
	"1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jz" \
	"DwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe" \
	"77Rw"
#define A2_N                                                                                                       \
	"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pC" \
	"gNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg66" \
	"5xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyu" \
	"XpoQ"
#define A2_JWKS "{\"keys\":[{\"kty\":\"RSA\",\"n\":\"" A2_N "\",\"e\":\"AQAB\"}]}"
#define A3                                                                                                          \
	"eyJhbGciOiJFUzI1NiJ9." RFC_PAYLOAD                                                                          \
	".DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
#define A3_JWKS                                                                                                    \
	"{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU\",\"y\":\"x_FEz" \
	"Ru9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0\"}]}"

static const struct ig_jwt_policy open_policy = { .leeway_s = 60 };

static void load(struct ig_jwks *keys, const char *json, const char *name)
{
	memset(keys, 0, sizeof *keys);
	const char *why = ig_jwks_parse(json, strlen(json), &arena, keys);
	check_that(why == NULL, name, "%s", why ? why : "");
	ig_arena_reset(&arena);
	keys->generation = 1;
}

static enum ig_jwt_error verify(const char *tok, const struct ig_jwks *keys, const struct ig_jwt_policy *p,
				int64_t now, struct ig_jwt *out)
{
	ig_arena_reset(&arena);
	return ig_jwt_verify(tok, strlen(tok), keys, p, now, &arena, out);
}

static void test_rfc7515(void)
{
	struct ig_jwks keys;
	struct ig_jwt t;
	const int64_t then = RFC_EXP - 100;

	load(&keys, A1_JWKS, "A.1: its oct key as a JWKS");
	CHECK_INT(verify(A1, &keys, &open_policy, then, &t), IG_JWT_OK, "A.1 (HS256) verifies as published");
	CHECK_INT(t.alg, IG_JWT_HS256, "A.1: alg HS256");
	CHECK(t.has_exp && t.exp == RFC_EXP, "A.1: exp read");
	ig_str iss;
	CHECK(ig_jwt_claim_str(&t, "iss", &iss) && iss.len == 3 && memcmp(iss.ptr, "joe", 3) == 0, "A.1: iss is joe");
	CHECK(!ig_jwt_claim_str(&t, "http://example.com/is_root", &iss), "A.1: a boolean claim is no string");
	static const char a1_payload[] = "{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}";
	CHECK(t.payload.len == sizeof a1_payload - 1 && memcmp(t.payload.ptr, a1_payload, t.payload.len) == 0,
	      "A.1: the payload's JSON text, as signed");
	CHECK_INT(verify(A1, &keys, &open_policy, RFC_EXP + 61, &t), IG_JWT_EXPIRED, "A.1 today: expired");
	CHECK_INT(verify(A1, &keys, &open_policy, RFC_EXP + 59, &t), IG_JWT_OK, "A.1 within the leeway past exp");

	load(&keys, A2_JWKS, "A.2: its RSA public key as a JWKS");
	CHECK_INT(verify(A2, &keys, &open_policy, then, &t), IG_JWT_OK, "A.2 (RS256) verifies as published");
	CHECK_INT(t.alg, IG_JWT_RS256, "A.2: alg RS256");

	load(&keys, A3_JWKS, "A.3: its P-256 public key as a JWKS");
	CHECK_INT(verify(A3, &keys, &open_policy, then, &t), IG_JWT_OK, "A.3 (ES256) verifies as published");
	CHECK_INT(t.alg, IG_JWT_ES256, "A.3: alg ES256");
	CHECK_INT(verify(A3, &keys, &open_policy, RFC_EXP + 3600, &t), IG_JWT_EXPIRED, "A.3 an hour late: expired");
}

/* header and payload as JSON, HMAC-signed with key (alg from hash). */
static char *mint_hmac(const char *header, const char *payload, const br_hash_class *hash, const void *key,
		       size_t key_len)
{
	size_t hl = strlen(header), pl = strlen(payload);
	char *tok = malloc(hl * 2 + pl * 2 + 100);
	size_t n = b64url_encode((const uint8_t *)header, hl, tok);
	tok[n++] = '.';
	n += b64url_encode((const uint8_t *)payload, pl, tok + n);
	br_hmac_key_context kc;
	br_hmac_context hc;
	uint8_t tag[64];
	br_hmac_key_init(&kc, hash, key, key_len);
	br_hmac_init(&hc, &kc, 0);
	br_hmac_update(&hc, tok, n);
	size_t tl = br_hmac_out(&hc, tag);
	tok[n++] = '.';
	n += b64url_encode(tag, tl, tok + n);
	tok[n] = 0;
	return tok;
}

static const uint8_t secret[64] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
/* secret (64 bytes) as a JWKS: kid k1, and one RSA key (A.2's), kid r1. */
#define MIXED_JWKS                                                                                            \
	"{\"keys\":[{\"kty\":\"oct\",\"kid\":\"k1\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc4OWFiY2RlZg\"}," \
	"{\"kty\":\"RSA\",\"kid\":\"r1\",\"use\":\"sig\",\"n\":\"" A2_N "\",\"e\":\"AQAB\"}]}"
#define NOW 1700000000

struct refusal {
	const char *name, *header, *payload;
	enum ig_jwt_error want;
};

static void test_refusals(void)
{
	struct ig_jwks keys;
	load(&keys, MIXED_JWKS, "an oct and an RSA key with kids");
	const struct ig_jwt_policy policy = { .issuer = IG_STR("https://issuer.test"), .audience = IG_STR("api"),
					      .leeway_s = 60 };
	struct ig_jwt t;
	static const struct refusal cases[] = {
		{ "a good token passes", "{\"alg\":\"HS256\",\"kid\":\"k1\"}",
		  "{\"iss\":\"https://issuer.test\",\"aud\":\"api\",\"exp\":1700000100,\"sub\":\"ann\"}", IG_JWT_OK },
		{ "aud as an array with ours passes", "{\"alg\":\"HS256\"}",
		  "{\"iss\":\"https://issuer.test\",\"aud\":[\"x\",\"api\"],\"exp\":1700000100}", IG_JWT_OK },
		{ "expired (beyond the leeway)", "{\"alg\":\"HS256\",\"kid\":\"k1\"}",
		  "{\"iss\":\"https://issuer.test\",\"aud\":\"api\",\"exp\":1699999900}", IG_JWT_EXPIRED },
		{ "nbf in the future (beyond the leeway)", "{\"alg\":\"HS256\",\"kid\":\"k1\"}",
		  "{\"iss\":\"https://issuer.test\",\"aud\":\"api\",\"nbf\":1700000100}", IG_JWT_NOT_YET_VALID },
		{ "nbf within the leeway passes", "{\"alg\":\"HS256\",\"kid\":\"k1\"}",
		  "{\"iss\":\"https://issuer.test\",\"aud\":\"api\",\"nbf\":1700000030}", IG_JWT_OK },
		{ "wrong issuer", "{\"alg\":\"HS256\",\"kid\":\"k1\"}", "{\"iss\":\"https://evil.test\",\"aud\":\"api\"}",
		  IG_JWT_WRONG_ISSUER },
		{ "no issuer", "{\"alg\":\"HS256\",\"kid\":\"k1\"}", "{\"aud\":\"api\"}", IG_JWT_WRONG_ISSUER },
		{ "wrong audience", "{\"alg\":\"HS256\",\"kid\":\"k1\"}", "{\"iss\":\"https://issuer.test\",\"aud\":\"apix\"}",
		  IG_JWT_WRONG_AUDIENCE },
		{ "wrong audience in an array", "{\"alg\":\"HS256\",\"kid\":\"k1\"}",
		  "{\"iss\":\"https://issuer.test\",\"aud\":[\"a\",\"b\"]}", IG_JWT_WRONG_AUDIENCE },
		{ "a crit header", "{\"alg\":\"HS256\",\"kid\":\"k1\",\"crit\":[\"exp\"],\"exp\":1}",
		  "{\"iss\":\"https://issuer.test\",\"aud\":\"api\"}", IG_JWT_CRIT_UNKNOWN },
		{ "an empty crit is malformed", "{\"alg\":\"HS256\",\"crit\":[]}", "{}", IG_JWT_MALFORMED },
		{ "an unknown kid", "{\"alg\":\"HS256\",\"kid\":\"nope\"}", "{}", IG_JWT_UNKNOWN_KID },
		{ "alg none", "{\"alg\":\"none\"}", "{}", IG_JWT_ALG_NONE },
		{ "alg NoNe", "{\"alg\":\"NoNe\"}", "{}", IG_JWT_ALG_NONE },
		{ "an unsupported alg", "{\"alg\":\"PS256\"}", "{}", IG_JWT_ALG_UNSUPPORTED },
		{ "no alg", "{\"typ\":\"JWT\"}", "{}", IG_JWT_MALFORMED },
		{ "a header that is not JSON", "{\"alg\":\"HS256\"", "{}", IG_JWT_BAD_JSON },
		{ "a payload that is not an object", "{\"alg\":\"HS256\",\"kid\":\"k1\"}", "[1]", IG_JWT_BAD_JSON },
		{ "a payload with a duplicate claim", "{\"alg\":\"HS256\",\"kid\":\"k1\"}", "{\"iss\":\"a\",\"iss\":\"b\"}",
		  IG_JWT_BAD_JSON },
		{ "exp that is not a number", "{\"alg\":\"HS256\",\"kid\":\"k1\"}",
		  "{\"iss\":\"https://issuer.test\",\"aud\":\"api\",\"exp\":\"soon\"}", IG_JWT_MALFORMED },
	};
	for (size_t i = 0; i < IG_COUNTOF(cases); i++) {
		char *tok = mint_hmac(cases[i].header, cases[i].payload, &br_sha256_vtable, secret, sizeof secret);
		CHECK_INT(verify(tok, &keys, &policy, NOW, &t), cases[i].want, cases[i].name);
		free(tok);
	}

	/* The confusion attack: HS256 with the RSA key's public bytes as the
	 * HMAC secret, by kid and without. */
	uint8_t n[256];
	CHECK_INT(ig_b64url_decode(A2_N, strlen(A2_N), n, sizeof n), 256, "A.2's modulus decodes");
	char *tok = mint_hmac("{\"alg\":\"HS256\",\"kid\":\"r1\"}", "{}", &br_sha256_vtable, n, sizeof n);
	CHECK_INT(verify(tok, &keys, &policy, NOW, &t), IG_JWT_ALG_KEY_MISMATCH, "alg confusion: HS256 naming the RSA kid");
	free(tok);
	struct ig_jwks rsa_only;
	load(&rsa_only, A2_JWKS, "A.2's key alone");
	tok = mint_hmac("{\"alg\":\"HS256\"}", "{}", &br_sha256_vtable, A2_JWKS, strlen(A2_JWKS));
	CHECK_INT(verify(tok, &rsa_only, &open_policy, NOW, &t), IG_JWT_ALG_KEY_MISMATCH,
		  "alg confusion: HS256 signed with the JWKS text, against an RSA-only set");
	free(tok);
	tok = mint_hmac("{\"alg\":\"HS256\"}", "{}", &br_sha256_vtable, n, sizeof n);
	CHECK_INT(verify(tok, &rsa_only, &open_policy, NOW, &t), IG_JWT_ALG_KEY_MISMATCH,
		  "alg confusion: HS256 signed with the modulus, against an RSA-only set");
	free(tok);
	CHECK_INT(verify(A2, &keys, &open_policy, RFC_EXP - 1, &t), IG_JWT_OK,
		  "RS256 without kid finds the RSA key among others");

	/* An empty kid names no key, not the keys without one. */
	struct ig_jwks no_kids;
	load(&no_kids, A1_JWKS, "A.1's key, without kid");
	tok = mint_hmac("{\"alg\":\"HS256\",\"kid\":\"\"}", "{}", &br_sha256_vtable, "x", 1);
	CHECK_INT(verify(tok, &no_kids, &open_policy, NOW, &t), IG_JWT_UNKNOWN_KID, "an empty kid is unknown");
	free(tok);

	/* One kid for an oct and an RSA key: HS256 under it is checked with
	 * the oct key only, so the RSA key's bytes as the secret fail. */
	struct ig_jwks shared;
	load(&shared, "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"s\",\"n\":\"" A2_N "\",\"e\":\"AQAB\"},"
		      "{\"kty\":\"oct\",\"kid\":\"s\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJj"
		      "ZGVmMDEyMzQ1Njc4OWFiY2RlZg\"}]}",
	     "an RSA and an oct key sharing a kid");
	tok = mint_hmac("{\"alg\":\"HS256\",\"kid\":\"s\"}", "{}", &br_sha256_vtable, secret, sizeof secret);
	CHECK_INT(verify(tok, &shared, &open_policy, NOW, &t), IG_JWT_OK, "a shared kid: HS256 finds the oct key");
	free(tok);
	tok = mint_hmac("{\"alg\":\"HS256\",\"kid\":\"s\"}", "{}", &br_sha256_vtable, n, sizeof n);
	CHECK_INT(verify(tok, &shared, &open_policy, NOW, &t), IG_JWT_BAD_SIGNATURE,
		  "a shared kid: HS256 signed with the RSA modulus fails");
	free(tok);

	/* A token, then the same with one byte changed in each part. */
	char *good = mint_hmac("{\"alg\":\"HS256\",\"kid\":\"k1\"}",
			       "{\"iss\":\"https://issuer.test\",\"aud\":\"api\",\"scope\":\"a b\"}", &br_sha256_vtable,
			       secret, sizeof secret);
	CHECK_INT(verify(good, &keys, &policy, NOW, &t), IG_JWT_OK, "the untouched token passes");
	char *dot1 = strchr(good, '.'), *dot2 = strchr(dot1 + 1, '.');
	dot1[3] ^= 1; /* a payload byte: still base64url, another claim set */
	CHECK_INT(verify(good, &keys, &policy, NOW, &t), IG_JWT_BAD_SIGNATURE, "a tampered payload");
	dot1[3] ^= 1;
	dot2[5] = dot2[5] == 'A' ? 'B' : 'A';
	CHECK_INT(verify(good, &keys, &policy, NOW, &t), IG_JWT_BAD_SIGNATURE, "a bad signature");
	char saved = dot2[5];
	dot2[5] = '+';
	CHECK_INT(verify(good, &keys, &policy, NOW, &t), IG_JWT_BAD_BASE64URL, "bad base64url in the signature");
	dot2[5] = saved;
	saved = good[2];
	good[2] = '/';
	CHECK_INT(verify(good, &keys, &policy, NOW, &t), IG_JWT_BAD_BASE64URL, "bad base64url in the header");
	good[2] = saved;
	dot1[1] = '=';
	CHECK_INT(verify(good, &keys, &policy, NOW, &t), IG_JWT_BAD_SIGNATURE,
		  "padding in the payload: the signature no longer covers it");
	free(good);

	CHECK_INT(verify("a.b", &keys, &policy, NOW, &t), IG_JWT_MALFORMED, "two segments");
	CHECK_INT(verify("a.b.c.d", &keys, &policy, NOW, &t), IG_JWT_MALFORMED, "four segments");
	CHECK_INT(verify("", &keys, &policy, NOW, &t), IG_JWT_MALFORMED, "empty");

	size_t big = IG_JWT_MAX_LEN + 1;
	char *huge = malloc(big + 1);
	memset(huge, 'A', big);
	huge[10] = huge[20] = '.';
	huge[big] = 0;
	CHECK_INT(verify(huge, &keys, &policy, NOW, &t), IG_JWT_TOO_LARGE, "a token over 8 KiB");
	free(huge);
	CHECK_INT(verify(A1, NULL, &open_policy, RFC_EXP - 1, &t), IG_JWT_NO_KEYS, "no key set");
	CHECK(strcmp(ig_jwt_error_name(IG_JWT_EXPIRED), "expired") == 0, "an error's name");
}

static void test_scopes(void)
{
	struct ig_jwks keys;
	load(&keys, MIXED_JWKS, "keys for scopes");
	struct ig_jwt t;
	char *tok = mint_hmac("{\"alg\":\"HS384\",\"kid\":\"k1\"}", "{\"scope\":\" reports:read  links:write\",\"sub\":\"bo\"}",
			      &br_sha384_vtable, secret, sizeof secret);
	CHECK_INT(verify(tok, &keys, &open_policy, NOW, &t), IG_JWT_OK, "HS384 passes");
	CHECK(ig_jwt_has_scope(&t, "reports:read", 12) && ig_jwt_has_scope(&t, "links:write", 11),
	      "scope: each space-separated word");
	CHECK(!ig_jwt_has_scope(&t, "reports", 7) && !ig_jwt_has_scope(&t, "links:write x", 13) &&
		      !ig_jwt_has_scope(&t, "", 0),
	      "scope: no prefix, no two words, no empty word");
	CHECK(t.sub.len == 2 && memcmp(t.sub.ptr, "bo", 2) == 0, "sub read");
	ig_str list[4];
	CHECK(ig_jwt_scopes(&t, list, 4) == 2 && list[0].len == 12 && memcmp(list[0].ptr, "reports:read", 12) == 0 &&
		      list[1].len == 11 && memcmp(list[1].ptr, "links:write", 11) == 0,
	      "scopes listed in order, spaces dropped");
	CHECK(ig_jwt_scopes(&t, list, 1) == 2 && list[0].len == 12, "a short list: the count says more");
	free(tok);
	tok = mint_hmac("{\"alg\":\"HS512\"}", "{\"scp\":[\"a\",\"b:c\"]}", &br_sha512_vtable, secret, sizeof secret);
	CHECK_INT(verify(tok, &keys, &open_policy, NOW, &t), IG_JWT_OK, "HS512 without kid passes");
	CHECK(ig_jwt_has_scope(&t, "b:c", 3) && !ig_jwt_has_scope(&t, "c", 1), "scp as an array");
	CHECK(ig_jwt_scopes(&t, list, 4) == 2 && list[1].len == 3 && memcmp(list[1].ptr, "b:c", 3) == 0, "scp listed");
	CHECK(t.sub.len == 0 && !t.has_exp, "no sub, no exp");
	free(tok);
	tok = mint_hmac("{\"alg\":\"HS256\"}", "{\"scp\":\"x y\"}", &br_sha256_vtable, secret, sizeof secret);
	CHECK_INT(verify(tok, &keys, &open_policy, NOW, &t), IG_JWT_OK, "scp as a string passes");
	CHECK(ig_jwt_has_scope(&t, "y", 1) && !ig_jwt_has_scope(&t, "z", 1), "scp as a string");
	free(tok);
	tok = mint_hmac("{\"alg\":\"HS256\"}", "{\"sub\":7}", &br_sha256_vtable, secret, sizeof secret);
	CHECK_INT(verify(tok, &keys, &open_policy, NOW, &t), IG_JWT_MALFORMED, "a sub that is not a string");
	free(tok);
	/* A 32-byte secret serves HS256, not HS512 (RFC 7518 3.2). */
	struct ig_jwks short_keys;
	load(&short_keys, "{\"keys\":[{\"kty\":\"oct\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"}]}", "a 32-byte oct key");
	tok = mint_hmac("{\"alg\":\"HS256\"}", "{}", &br_sha256_vtable, secret, 32);
	CHECK_INT(verify(tok, &short_keys, &open_policy, NOW, &t), IG_JWT_OK, "HS256 with a 32-byte secret");
	free(tok);
	tok = mint_hmac("{\"alg\":\"HS512\"}", "{}", &br_sha512_vtable, secret, 32);
	CHECK_INT(verify(tok, &short_keys, &open_policy, NOW, &t), IG_JWT_ALG_KEY_MISMATCH,
		  "HS512 with a 32-byte secret: too short for the alg");
	free(tok);
	/* A 16-byte HMAC key that is not ours: the signature fails. */
	tok = mint_hmac("{\"alg\":\"HS256\"}", "{}", &br_sha256_vtable, "another secret!!", 16);
	CHECK_INT(verify(tok, &keys, &open_policy, NOW, &t), IG_JWT_BAD_SIGNATURE, "another key's HMAC");
	free(tok);
}

/* The cache in front: a repeated token is answered from the cache (a key
 * set of the same generation without its key still passes it, so no
 * signature was checked), with the same claims; a new generation, or the
 * token's exp passing, sends it through the full check again. */
static void test_cached(void)
{
	static struct ig_token_cache cache;
	ig_token_cache_init(&cache);
	struct ig_jwks keys, other;
	load(&keys, A3_JWKS, "A.3's key for the cache");
	load(&other, MIXED_JWKS, "a set without A.3's key");
	struct ig_jwt t;
	const int64_t then = RFC_EXP - 100;
	ig_arena_reset(&arena);
	CHECK_INT(ig_jwt_verify_cached(&cache, A3, strlen(A3), &other, &open_policy, then, &arena, &t),
		  IG_JWT_ALG_KEY_MISMATCH, "uncached, a set without the key refuses A.3");
	CHECK_INT(ig_jwt_verify_cached(&cache, A3, strlen(A3), &keys, &open_policy, then, &arena, &t), IG_JWT_OK,
		  "a miss: verified and stored");
	ig_arena_reset(&arena);
	memset(&t, 0, sizeof t);
	CHECK_INT(ig_jwt_verify_cached(&cache, A3, strlen(A3), &other, &open_policy, then, &arena, &t), IG_JWT_OK,
		  "a hit: no key needed (same generation)");
	ig_str iss;
	CHECK(t.alg == IG_JWT_ES256 && t.exp == RFC_EXP && ig_jwt_claim_str(&t, "iss", &iss) && iss.len == 3,
	      "a hit gives the alg and the claims");
	other.generation = 2;
	CHECK_INT(ig_jwt_verify_cached(&cache, A3, strlen(A3), &other, &open_policy, then, &arena, &t),
		  IG_JWT_ALG_KEY_MISMATCH, "a new key set's generation: checked again");
	other.generation = 1;
	CHECK_INT(ig_jwt_verify_cached(&cache, A3, strlen(A3), &other, &open_policy, RFC_EXP + 61, &arena, &t),
		  IG_JWT_ALG_KEY_MISMATCH, "past exp the cache no longer answers");
}

/* The fixture: its first line a JWKS, then "WANT NOW TOKEN" lines (WANT an
 * error's name, NOW the clock for it). */
static void test_fixture(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!check_that(f != NULL, "the jose fixture opens", "%s", path))
		return;
	static char line[16384];
	struct ig_jwks keys;
	if (!fgets(line, sizeof line, f)) {
		check_that(false, "the fixture has a JWKS", NULL);
		fclose(f);
		return;
	}
	line[strcspn(line, "\n")] = 0;
	load(&keys, line, "jose's JWKS parses");
	const struct ig_jwt_policy policy = { .issuer = IG_STR("https://jose.test"), .audience = IG_STR("ingot"),
					      .leeway_s = 60 };
	unsigned n = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char want[32], label[64];
		long long now;
		int off = 0;
		if (sscanf(line, "%31s %lld %63s %n", want, &now, label, &off) != 3 || !off)
			continue;
		struct ig_jwt t;
		enum ig_jwt_error got = verify(line + off, &keys, &policy, now, &t);
		char name[128];
		snprintf(name, sizeof name, "jose: %s", label);
		check_that(strcmp(ig_jwt_error_name(got), want) == 0, name, "got %s, want %s", ig_jwt_error_name(got),
			   want);
		n++;
	}
	fclose(f);
	CHECK(n >= 10, "the fixture held its tokens");
}

int main(int argc, char **argv)
{
	ig_pool_init(&blocks, 16 * 1024, 4, 64);
	ig_arena_init(&arena, &blocks, 256 * 1024);
	test_rfc7515();
	test_refusals();
	test_scopes();
	test_cached();
	if (argc > 1)
		test_fixture(argv[1]);
	ig_arena_reset(&arena);
	return check_done();
}
