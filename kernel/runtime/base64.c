/* base64 both ways (base64.h): one table, a scalar loop; the inputs are
 * small (SCRAM's nonces and proofs) or bounded by Lambda's 6 MB payload. */
#include "kernel/runtime/base64.h"

#include <string.h>

static const char b64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t ig_base64_encode(const uint8_t *in, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);
		out[o++] = b64_alphabet[v >> 18 & 63];
		out[o++] = b64_alphabet[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64_alphabet[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64_alphabet[v & 63] : '=';
	}
	return o;
}

static int b64_value(char c)
{
	const char *p = c ? memchr(b64_alphabet, c, 64) : NULL;
	return p ? (int)(p - b64_alphabet) : -1;
}

long ig_base64_decode(const char *in, size_t n, uint8_t *out, size_t cap)
{
	if (n % 4)
		return -1;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 4) {
		int pad = (in[i + 3] == '=') + (in[i + 2] == '=' && in[i + 3] == '=');
		if (pad && i + 4 != n)
			return -1;
		uint32_t v = 0;
		for (int k = 0; k < 4 - pad; k++) {
			int d = b64_value(in[i + k]);
			if (d < 0)
				return -1;
			v |= (uint32_t)d << (18 - 6 * k);
		}
		size_t bytes = 3 - (size_t)pad;
		if (cap - o < bytes)
			return -1;
		out[o++] = (uint8_t)(v >> 16);
		if (bytes > 1)
			out[o++] = (uint8_t)(v >> 8);
		if (bytes > 2)
			out[o++] = (uint8_t)v;
	}
	return (long)o;
}
