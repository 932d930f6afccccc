/* libFuzzer target for net/auth: a bearer token as any client could send
 * it, verified against a fixed key set (RFC 7515's A.1 oct, A.2 RSA and
 * A.3 P-256 keys, with and without kid) at the examples' time, with the
 * per-core cache in front; or, by the control byte, a JWKS document as
 * INGOT_JWKS_FILE could hold it. Neither may read outside its input
 * (ASan), and the verdicts must be sane: a known error kind; on success a
 * claims object and an alg of the token's key type, every listed scope
 * one that ig_jwt_has_scope grants; a cache hit only for
 * a token verified before, with the same verdict; a parsed set within its
 * bounds, each key's lengths within its storage. */

/* Input: 1 control byte, then the token (or the JWKS).
 *   c bit 0  the rest is a JWKS for ig_jwks_parse
 *     bit 1  a policy with issuer "joe" and audience "aud"
 *     bit 2  the harness signs: the rest is a signing input (header.payload)
 *            and gets A.1's HS256 signature, so that the claims' checks
 *            and readers are reached with any header and payload
 * Build: FUZZ_SRC_jwt in the Makefile (make fuzz-build). Seeds: tests/fuzz/jwt/. */
#include "net/auth/jwt.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "tests/unit/net/auth/b64url.h"

#include <bearssl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_jwt: %s\n", what);
	abort();
}

#define RFC_EXP 1300819380
static const char keys_json[] =
	"{\"keys\":[{\"kty\":\"oct\",\"k\":\"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjA"
	"zZr1Z9CAow\"},{\"kty\":\"oct\",\"kid\":\"h\",\"k\":\"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3"
	"Yj0iPS4hcgUuTwjAzZr1Z9CAow\"},{\"kty\":\"RSA\",\"kid\":\"r\",\"n\":\"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji"
	"9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OM"
	"g0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7a"
	"GhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ\",\"e\":\"AQAB\"},{\"kty\":\"EC\",\"crv\":"
	"\"P-256\",\"x\":\"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU\",\"y\":\"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0\"}]}";

static struct ig_pool blocks;
static ig_arena arena;
static struct ig_jwks keys;
/* One cache a policy: a service has one policy, and a token verified
 * under one need not pass the other. */
static struct ig_token_cache caches[2];

static void setup(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	ig_pool_init(&blocks, 16 * 1024, 4, 256);
	ig_arena_init(&arena, &blocks, 1 << 20);
	if (ig_jwks_parse(keys_json, sizeof keys_json - 1, &arena, &keys) || keys.count != 4)
		die("the fixed key set does not parse");
	ig_arena_reset(&arena);
	keys.generation = 1;
	ig_token_cache_init(&caches[0]);
	ig_token_cache_init(&caches[1]);
}

static void check_set(const struct ig_jwks *s)
{
	if (s->count > IG_JWKS_MAX_KEYS)
		die("more keys than the set holds");
	for (size_t i = 0; i < s->count; i++) {
		const struct ig_jwk *k = &s->keys[i];
		if (k->kid_len > IG_JWK_KID_MAX)
			die("a kid longer than its room");
		if (k->type == IG_JWK_RSA && (k->n_len < IG_JWK_RSA_MIN_BYTES || k->n_len + k->e_len > IG_JWK_MATERIAL_MAX ||
					      k->material[0] == 0))
			die("an RSA key out of bounds or with a leading zero");
		if (k->type == IG_JWK_EC && k->len != 65 && k->len != 97)
			die("an EC point of the wrong size");
		if (k->type == IG_JWK_OCT && (k->len < 32 || k->len > IG_JWK_MATERIAL_MAX))
			die("an oct key out of bounds");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	setup();
	uint8_t c = data[0];
	size_t n = size - 1;
	/* An exact-size copy: a read one past the end is an ASan report. */
	size_t room = n + ((c & 5) == 4 ? 1 + ig_base64_len(32) : 0);
	char *in = malloc(room ? room : 1);
	if (!in)
		return 0;
	memcpy(in, data + 1, n);
	if ((c & 5) == 4) {
		static const uint8_t a1_key[] = { 3, 35, 53, 75, 43, 15, 165, 188, 131, 126, 6, 101, 119, 123, 166, 143, 90, 179, 40,
						  230, 240, 84, 201, 40, 169, 15, 132, 178, 210, 80, 46, 191, 211, 251, 90, 146, 210, 6,
						  71, 239, 150, 138, 180, 195, 119, 98, 61, 34, 61, 46, 33, 114, 5, 46, 79, 8, 192, 205,
						  154, 245, 103, 208, 128, 163 };
		br_hmac_key_context kc;
		br_hmac_context hc;
		uint8_t tag[32];
		br_hmac_key_init(&kc, &br_sha256_vtable, a1_key, sizeof a1_key);
		br_hmac_init(&hc, &kc, 0);
		br_hmac_update(&hc, in, n);
		br_hmac_out(&hc, tag);
		in[n++] = '.';
		char enc[ig_base64_len(32) + 1];
		size_t m = b64url_encode(tag, sizeof tag, enc);
		memcpy(in + n, enc, m);
		n += m;
	}
	ig_arena_reset(&arena);
	if (c & 1) {
		static struct ig_jwks parsed;
		if (!ig_jwks_parse(in, n, &arena, &parsed))
			check_set(&parsed);
		free(in);
		return 0;
	}
	const struct ig_jwt_policy policy = {
		.issuer = (c & 2) ? IG_STR("joe") : (ig_str){ NULL, 0 },
		.audience = (c & 2) ? IG_STR("aud") : (ig_str){ NULL, 0 },
		.leeway_s = 60,
	};
	struct ig_token_cache *cache = &caches[(c >> 1) & 1];
	struct ig_jwt t;
	enum ig_jwt_error e = ig_jwt_verify(in, n, &keys, &policy, RFC_EXP - 10, &arena, &t);
	if ((unsigned)e >= IG_JWT_ERROR_COUNT)
		die("an error kind out of range");
	if (e == IG_JWT_OK && (!t.claims || t.claims->type != IG_JSON_OBJECT || t.alg < IG_JWT_HS256 || t.alg > IG_JWT_ES384))
		die("a verified token without claims or alg");
	if (e == IG_JWT_OK) {
		ig_str scopes[8];
		size_t ns = ig_jwt_scopes(&t, scopes, 8);
		for (size_t i = 0; i < ns && i < 8; i++)
			if (scopes[i].len == 0 || memchr(scopes[i].ptr, ' ', scopes[i].len) ||
			    !ig_jwt_has_scope(&t, scopes[i].ptr, scopes[i].len))
				die("a listed scope that has_scope denies");
	}
	uint32_t tag;
	bool hit = ig_token_cache_get(cache, in, n, keys.generation, RFC_EXP - 10, 60, &tag);
	if (hit && e != IG_JWT_OK)
		die("a cache hit for a token that does not verify");
	ig_arena_reset(&arena);
	struct ig_jwt tc;
	enum ig_jwt_error ec = ig_jwt_verify_cached(cache, in, n, &keys, &policy, RFC_EXP - 10, &arena, &tc);
	if (ec != e)
		die("the cached verify disagrees with the verify");
	free(in);
	return 0;
}
