/* ig_lz: a small LZ77 byte format of ingot's own, for build-time data the
 * binary carries packed and unpacks when it is used (the OpenAPI document
 * served at GET /openapi.json). This side only unpacks; tools/schemac/lz_pack.c
 * packs. No entropy coding: what it saves is repeats, which JSON is full of.
 *
 * The format, a sequence of tokens:
 *   0x00-0x7f t: a literal run, t + 1 bytes (1-128) copied as they follow;
 *   0x80-0xff t: a match, (t & 0x7f) + 3 bytes (3-130), copied from
 *                d bytes back in the output, d the next two bytes, little
 *                endian, 1-65535 (a match may overlap what it writes). */
#ifndef KERNEL_RUNTIME_LZ_H
#define KERNEL_RUNTIME_LZ_H

#include <stddef.h>

#define IG_LZ_MIN_MATCH 3
#define IG_LZ_MAX_MATCH 130
#define IG_LZ_MAX_LITERALS 128
#define IG_LZ_MAX_DISTANCE 65535

/* Unpacks in[0..len) into out[0..cap). Returns the number of bytes
 * written, or (size_t)-1 when the input is malformed (a truncated token, a
 * distance before the start) or would write past cap. Never reads past
 * in + len nor writes past out + cap. */
size_t ig_lz_unpack(unsigned char *out, size_t cap, const unsigned char *in, size_t len);

#endif
