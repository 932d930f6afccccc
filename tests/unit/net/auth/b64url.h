/* base64url encoding for net/auth's tests (tokens minted in C, vectors
 * checked both ways): kernel/runtime/base64.c's standard base64 with the
 * alphabet's last two characters swapped and the padding dropped, so that
 * it shares no code with the decoder under test. */
#ifndef TESTS_UNIT_NET_AUTH_B64URL_H
#define TESTS_UNIT_NET_AUTH_B64URL_H

#include "kernel/runtime/base64.h"

/* Writes the base64url of in[0..n) into out (room for ig_base64_len(n));
 * returns its length. */
static inline size_t b64url_encode(const uint8_t *in, size_t n, char *out)
{
	size_t m = ig_base64_encode(in, n, out);
	while (m && out[m - 1] == '=')
		m--;
	for (size_t i = 0; i < m; i++)
		out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
	return m;
}

#endif
