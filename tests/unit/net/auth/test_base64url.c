/* Unit tests of net/auth/base64url: RFC 4648's test vectors in the url
 * alphabet, both ways; the strictness a token relies on (no padding, no
 * standard-alphabet characters, no stray bits, no length 4k+1); and that
 * the output never exceeds its capacity. */
#include "net/auth/base64url.h"
#include "tests/unit/net/auth/b64url.h"
#include "tests/unit/check.h"

static void roundtrip(const char *plain, const char *enc)
{
	char out[64];
	uint8_t back[64];
	size_t n = b64url_encode((const uint8_t *)plain, strlen(plain), out);
	check_slice(out, n, enc, "encodes as RFC 4648 (url, unpadded)", plain);
	long m = ig_b64url_decode(enc, strlen(enc), back, sizeof back);
	check_slice(m < 0 ? NULL : (const char *)back, m < 0 ? 0 : (size_t)m, plain, "decodes back", enc);
}

int main(void)
{
	roundtrip("", "");
	roundtrip("f", "Zg");
	roundtrip("fo", "Zm8");
	roundtrip("foo", "Zm9v");
	roundtrip("foob", "Zm9vYg");
	roundtrip("fooba", "Zm9vYmE");
	roundtrip("foobar", "Zm9vYmFy");
	uint8_t all[48], back[48];
	for (int i = 0; i < 48; i++)
		all[i] = (uint8_t)(i * 37 + 11);
	char enc[64];
	size_t n = b64url_encode(all, sizeof all, enc);
	CHECK(n == 64 && ig_b64url_decode(enc, n, back, sizeof back) == 48 && memcmp(all, back, 48) == 0,
	      "48 bytes round-trip");
	const char *alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	uint8_t a[48];
	CHECK(ig_b64url_decode(alpha, 64, a, sizeof a) == 48, "the whole url alphabet decodes");
	char re[64];
	CHECK(b64url_encode(a, 48, re) == 64 && memcmp(re, alpha, 64) == 0, "and encodes back to itself");
	uint8_t out[8];
	CHECK_INT(ig_b64url_decode("Zg==", 4, out, sizeof out), -1, "padding refused");
	CHECK_INT(ig_b64url_decode("Zm+v", 4, out, sizeof out), -1, "'+' (standard alphabet) refused");
	CHECK_INT(ig_b64url_decode("Zm/v", 4, out, sizeof out), -1, "'/' (standard alphabet) refused");
	CHECK_INT(ig_b64url_decode("Zm 9", 4, out, sizeof out), -1, "whitespace refused");
	CHECK_INT(ig_b64url_decode("Zh", 2, out, sizeof out), -1, "non-zero stray bits refused (Zh for Zg)");
	CHECK_INT(ig_b64url_decode("Zm9", 3, out, sizeof out), -1, "non-zero stray bits refused (Zm9 for Zm8)");
	CHECK_INT(ig_b64url_decode("Zm9vY", 5, out, sizeof out), -1, "a length of 4k+1 refused");
	CHECK_INT(ig_b64url_decode("Zm9v\0g", 6, out, sizeof out), -1, "a NUL refused");
	CHECK_INT(ig_b64url_decode("Zm9vYmFy", 8, out, 5), -1, "output over the capacity refused");
	CHECK_INT(ig_b64url_max(7), 5, "7 characters: at most 5 bytes");
	return check_done();
}
