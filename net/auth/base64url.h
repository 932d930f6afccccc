/* base64url without padding (RFC 7515 section 2, RFC 4648 section 5): what
 * a JWS's three segments and a JWK's key members are written in. Strict:
 * no padding, no whitespace, no other alphabet, and the unused low bits of
 * the last character must be zero, so that one byte string has exactly one
 * encoding (a token cannot be varied without changing its bytes). */
#ifndef NET_AUTH_BASE64URL_H
#define NET_AUTH_BASE64URL_H

#include <stddef.h>
#include <stdint.h>

/* The most bytes n characters decode to. */
static inline size_t ig_b64url_max(size_t n)
{
	return n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
}

/* Decodes in[0..n) into out[cap]. Returns the bytes written, or -1 when in
 * is not canonical unpadded base64url or does not fit. */
long ig_b64url_decode(const char *in, size_t n, uint8_t *out, size_t cap);

#endif
