/* Packing into the ig_lz format (kernel/runtime/lz.h, which unpacks it in
 * the binary): schemac packs the embedded OpenAPI document with it. Host
 * code, build time only. */
#ifndef TOOLS_SCHEMAC_LZ_PACK_H
#define TOOLS_SCHEMAC_LZ_PACK_H

#include <stddef.h>

/* Packs in[0..len) into a malloc'd buffer (*out, to free); returns its
 * length. Greedy: at each position the longest match among the last
 * positions with the same three bytes, within 65535 bytes back. Returns
 * (size_t)-1 with *out NULL when out of memory. */
size_t sc_lz_pack(const unsigned char *in, size_t len, unsigned char **out);

#endif
