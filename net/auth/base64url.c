/* base64url decoding (base64url.h): a 256-entry table, so that decoding
 * a token's segments is one lookup per character. The runtime never
 * encodes base64url (tests do, with kernel/runtime/base64.c). */
#include "net/auth/base64url.h"

/* 0..63, or 64 for a byte outside the alphabet. */
#define X 64
static const uint8_t value[256] = {
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, 62, X, X, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, X, X, X, X, X, X,
	X, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, X, X, X, X, 63,
	X, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
};
#undef X

long ig_b64url_decode(const char *in, size_t n, uint8_t *out, size_t cap)
{
	if (n % 4 == 1 || ig_b64url_max(n) > cap)
		return -1;
	const uint8_t *s = (const uint8_t *)in;
	size_t o = 0, i = 0;
	for (; i + 4 <= n; i += 4) {
		uint8_t a = value[s[i]], b = value[s[i + 1]], c = value[s[i + 2]], d = value[s[i + 3]];
		if ((a | b | c | d) & 64)
			return -1;
		uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | d;
		out[o++] = (uint8_t)(v >> 16);
		out[o++] = (uint8_t)(v >> 8);
		out[o++] = (uint8_t)v;
	}
	size_t rest = n - i;
	if (rest) {
		uint8_t a = value[s[i]], b = value[s[i + 1]], c = rest == 3 ? value[s[i + 2]] : 0;
		if ((a | b | c) & 64)
			return -1;
		/* The bits past the last whole byte must be zero: else two
		 * encodings would decode alike. */
		if (rest == 2 ? (b & 15) : (c & 3))
			return -1;
		out[o++] = (uint8_t)(a << 2 | b >> 4);
		if (rest == 3)
			out[o++] = (uint8_t)(b << 4 | c >> 2);
	}
	return (long)o;
}
