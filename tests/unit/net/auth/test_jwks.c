/* Unit tests of net/auth/jwks and the key set's file (auth_settings.c):
 * each key type's members decoded (kid, alg, curve, RSA's leading zeros
 * dropped); keys not for signatures or of other types skipped; malformed
 * sets refused with a message; and INGOT_JWKS_FILE loaded, kept when a
 * new version is bad, read again when it changes, each load a new
 * generation; SIGHUP reads it again, changed or not. A fetched document
 * (ig_jwks_load_json) is a new generation only when its keys changed; a
 * bad one keeps the set; discovery's issuer is the policy's default. */
#include "net/auth/settings.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "tests/unit/check.h"

#include <bearssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct ig_pool blocks;
static ig_arena arena;

/* A 2048-bit modulus with a leading zero byte (base64url "AL..."). */
#define N256 \
	"ALvnAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" \
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" \
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" \
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE"
#define P256_X "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
#define P256_Y "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"

static const char *parse(const char *json, struct ig_jwks *out)
{
	memset(out, 0, sizeof *out);
	const char *why = ig_jwks_parse(json, strlen(json), &arena, out);
	ig_arena_reset(&arena);
	return why;
}

static void test_parse(void)
{
	struct ig_jwks k;
	const char *why = parse("{\"keys\":["
				"{\"kty\":\"oct\",\"kid\":\"h\",\"alg\":\"HS384\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"},"
				"{\"kty\":\"RSA\",\"kid\":\"r\",\"n\":\"" N256 "\",\"e\":\"AAEAAQ\",\"d\":\"c2VjcmV0\"},"
				"{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"" P256_X "\",\"y\":\"" P256_Y "\",\"use\":\"sig\"},"
				"{\"kty\":\"RSA\",\"use\":\"enc\",\"n\":\"" N256 "\",\"e\":\"AQAB\"},"
				"{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"AAAA\"},"
				"{\"kty\":\"EC\",\"crv\":\"P-521\",\"x\":\"AA\",\"y\":\"AA\"},"
				"{\"kty\":\"oct\",\"key_ops\":[\"sign\"],\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"}"
				"]}",
				&k);
	CHECK(why == NULL, "a mixed set parses");
	CHECK_INT(k.count, 3, "three keys kept: enc, OKP, P-521 and sign-only skipped");
	CHECK(k.keys[0].type == IG_JWK_OCT && k.keys[0].alg == IG_JWT_HS384 && k.keys[0].len == 32 &&
		      memcmp(k.keys[0].material, "0123456789abcdef0123456789abcdef", 32) == 0 && k.keys[0].kid_len == 1,
	      "oct: secret, alg and kid");
	CHECK(k.keys[1].type == IG_JWK_RSA && k.keys[1].n_len == 256 && k.keys[1].material[0] == 0xbb &&
		      k.keys[1].e_len == 3 && memcmp(k.keys[1].material + 256, "\x01\x00\x01", 3) == 0,
	      "RSA: n and e without their leading zeros");
	CHECK(k.keys[2].type == IG_JWK_EC && k.keys[2].curve == BR_EC_secp256r1 && k.keys[2].len == 65 &&
		      k.keys[2].material[0] == 4 && k.keys[2].kid_len == 0,
	      "EC: the uncompressed point, no kid");

	static const struct {
		const char *json, *name;
	} bad[] = {
		{ "{\"keys\":[", "not JSON" },
		{ "{\"key\":[]}", "no keys array" },
		{ "{\"keys\":[1]}", "a key that is not an object" },
		{ "{\"keys\":[{\"k\":\"AAAA\"}]}", "no kty" },
		{ "{\"keys\":[{\"kty\":\"oct\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZg\"}]}", "an oct key under 32 bytes" },
		{ "{\"keys\":[{\"kty\":\"oct\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZg==\"}]}", "a padded k" },
		{ "{\"keys\":[{\"kty\":\"RSA\",\"n\":\"AQAB\",\"e\":\"AQAB\"}]}", "an RSA key under 2048 bits" },
		{ "{\"keys\":[{\"kty\":\"RSA\",\"n\":\"" N256 "\"}]}", "an RSA key without e" },
		{ "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"" P256_X "\",\"y\":\"AAAA\"}]}", "an EC y too short" },
		{ "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"alg\":\"ES384\",\"x\":\"" P256_X "\",\"y\":\"" P256_Y "\"}]}",
		  "ES384 on a P-256 key" },
		{ "{\"keys\":[{\"kty\":\"oct\",\"kid\":7,\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"}]}", "a kid that is no string" },
	};
	for (size_t i = 0; i < IG_COUNTOF(bad); i++) {
		why = parse(bad[i].json, &k);
		check_that(why != NULL, bad[i].name, "accepted");
	}
	/* 17 keys: one too many. */
	char many[2048] = "{\"keys\":[";
	for (int i = 0; i < 17; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "%s{\"kty\":\"oct\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"}",
			 i ? "," : "");
	strcat(many, "]}");
	CHECK(parse(many, &k) != NULL, "more than 16 keys refused");
	why = parse("{\"keys\":[{\"kty\":\"oct\",\"kid\":\"a\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"},"
		    "{\"kty\":\"RSA\",\"kid\":\"a\",\"n\":\"" N256 "\",\"e\":\"AQAB\"}]}", &k);
	CHECK(why == NULL && k.count == 2, "two keys may share a kid (RFC 7517 4.5)");
	/* The alg of an HS key on an RSA key: skipped, never used. */
	why = parse("{\"keys\":[{\"kty\":\"RSA\",\"alg\":\"HS256\",\"n\":\"" N256 "\",\"e\":\"AQAB\"}]}", &k);
	CHECK(why == NULL && k.count == 0, "an RSA key that says HS256 is skipped");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void test_file(void)
{
	char path[] = "/tmp/test_jwks_XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	write_file(path, "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"one\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"}]}\n");
	ig_auth_settings_values.jwks_file = path;
	char err[160];
	CHECK(ig_jwks_current() == NULL, "no set before a load");
	CHECK(ig_jwks_load_file(path, err, sizeof err) == NULL, "the file loads");
	const struct ig_jwks *first = ig_jwks_current();
	CHECK(first && first->count == 1 && first->keys[0].kid_len == 3, "the current set is the file's");
	CHECK(ig_jwks_file_refresh(100) == NULL && ig_jwks_current() == first, "unchanged: not read again");

	write_file(path, "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"twotwo\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"},"
			 "{\"kty\":\"oct\",\"kid\":\"three\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"}]}");
	CHECK(ig_jwks_file_refresh(100) == NULL && ig_jwks_current() == first, "a second refresh in the same second: not looked at");
	CHECK(ig_jwks_file_refresh(101) == NULL, "a changed file: read again");
	const struct ig_jwks *second = ig_jwks_current();
	CHECK(second != first && second->count == 2 && second->generation > first->generation,
	      "the new set is current, with a newer generation");

	write_file(path, "{\"keys\":[{\"kty\":\"oct\",\"k\":\"short\"}]}");
	CHECK(ig_jwks_file_refresh(102) != NULL && ig_jwks_current() == second, "a bad new file: refused, the old set stays");
	CHECK(ig_jwks_load_file("/nonexistent/jwks.json", err, sizeof err) != NULL && ig_jwks_current() == second,
	      "a missing file: refused, the old set stays");
	write_file(path, "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"four\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"}]}");
	ig_jwks_sighup();
	const struct ig_jwks *third = ig_jwks_current();
	CHECK(third != second && third->count == 1 && third->keys[0].kid_len == 4, "SIGHUP: read again");
	ig_jwks_sighup();
	CHECK(ig_jwks_current() != third && ig_jwks_current()->generation == third->generation + 1,
	      "SIGHUP: read again even when unchanged");
	unlink(path);
	ig_jwks_sighup();
	CHECK(ig_jwks_current()->generation == third->generation + 1, "SIGHUP with the file gone: the keys stay");

	ig_auth_settings_values = (struct ig_auth_settings_values){ .jwks_file = "", .issuer = "https://i", .audience = "",
								    .leeway_s = 30 };
	struct ig_jwt_policy p;
	ig_auth_policy(&p);
	CHECK(p.issuer.len == 9 && p.audience.len == 0 && p.leeway_s == 30 && p.max_len == IG_JWT_MAX_LEN,
	      "the policy the settings make");
}

static void test_json(void)
{
	static const char one[] = "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"url\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"}]}";
	static const char two[] = "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"url2\",\"k\":\"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY\"}]}";
	bool changed = false;
	CHECK(ig_jwks_load_json(one, sizeof one - 1, &changed) == NULL && changed, "a fetched set is published");
	const struct ig_jwks *a = ig_jwks_current();
	CHECK(a->count == 1 && a->keys[0].kid_len == 3, "its keys are current");
	changed = true;
	CHECK(ig_jwks_load_json(one, sizeof one - 1, &changed) == NULL && !changed && ig_jwks_current() == a,
	      "the same keys again: no new generation (the token caches stay warm)");
	changed = true;
	CHECK(ig_jwks_load_json("{\"keys\":7}", 11, &changed) != NULL && !changed && ig_jwks_current() == a,
	      "a bad document: refused, the set stays");
	CHECK(ig_jwks_load_json(two, sizeof two - 1, &changed) == NULL && changed && ig_jwks_current() != a &&
		      ig_jwks_current()->generation == a->generation + 1,
	      "other keys: a new generation");

	ig_auth_settings_values = (struct ig_auth_settings_values){ .jwks_file = "", .issuer = "", .audience = "" };
	struct ig_jwt_policy p;
	ig_auth_policy(&p);
	CHECK(p.issuer.len == 0, "no issuer set or discovered: not checked");
	ig_auth_set_discovered_issuer("https://disc");
	ig_auth_set_discovered_issuer("https://later");
	ig_auth_policy(&p);
	CHECK(p.issuer.len == 12 && memcmp(p.issuer.ptr, "https://disc", 12) == 0, "the first discovered issuer is the default");
	ig_auth_settings_values.issuer = "https://i";
	ig_auth_policy(&p);
	CHECK(p.issuer.len == 9, "INGOT_JWT_ISSUER wins over discovery's");
}

int main(void)
{
	ig_pool_init(&blocks, 16 * 1024, 4, 64);
	ig_arena_init(&arena, &blocks, 256 * 1024);
	test_parse();
	test_file();
	test_json();
	return check_done();
}
