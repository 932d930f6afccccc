/* base64 (RFC 4648 section 4, the standard alphabet, with padding): what
 * SCRAM writes its binary in (net/pg) and what Lambda events carry binary
 * bodies in (net/lambda). No allocation: the caller sizes the output. */
#ifndef KERNEL_BASE64_H
#define KERNEL_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* The encoded length of n bytes: 4 * ceil(n / 3). */
static inline size_t ig_base64_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

/* Writes the base64 of in[0..n) (ig_base64_len(n) characters, no NUL)
 * into out; returns that length. */
size_t ig_base64_encode(const uint8_t *in, size_t n, char *out);

/* Decodes in[0..n) (a multiple of 4, padded) into out[cap]; returns the
 * bytes written, or -1 when it is not base64 or does not fit. At most
 * n / 4 * 3 bytes. */
long ig_base64_decode(const char *in, size_t n, uint8_t *out, size_t cap);

#endif
