/* The packing side of the ig_lz format (tools/schemac/lz_pack.h): hash
 * chains over three-byte prefixes, a greedy choice of the longest match,
 * literal runs flushed in tokens of at most 128 bytes. */
#include "tools/schemac/lz_pack.h"

#include "kernel/runtime/lz.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HASH_BITS 14
/* How many earlier positions of a chain are tried: the document is small,
   so a deep search costs little at build time. */
#define CHAIN_DEPTH 512

static unsigned hash3(const unsigned char *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
	return (v * 2654435761u) >> (32 - HASH_BITS);
}

static size_t flush_literals(unsigned char *o, const unsigned char *lit, size_t n)
{
	size_t w = 0;
	while (n) {
		size_t k = n > IG_LZ_MAX_LITERALS ? IG_LZ_MAX_LITERALS : n;
		o[w++] = (unsigned char)(k - 1);
		memcpy(o + w, lit, k);
		w += k;
		lit += k;
		n -= k;
	}
	return w;
}

size_t sc_lz_pack(const unsigned char *in, size_t len, unsigned char **out)
{
	/* Worst case: a match writes 3 bytes for at least 3, and each literal
	   run a token byte per 128 bytes; runs between matches of 3 are at
	   most len / 4 + 1 (one byte, then a match). */
	unsigned char *o = malloc(len + len / 4 + len / IG_LZ_MAX_LITERALS + 2);
	long *head = malloc(sizeof *head << HASH_BITS);
	long *prev = malloc(sizeof *prev * (len ? len : 1));
	if (!o || !head || !prev) {
		free(o), free(head), free(prev);
		*out = NULL;
		return (size_t)-1;
	}
	for (size_t h = 0; h < (size_t)1 << HASH_BITS; h++)
		head[h] = -1;
	size_t w = 0, i = 0, lit = 0; /* lit: where the pending literals start */
	while (i < len) {
		size_t best = 0, dist = 0;
		if (len - i >= IG_LZ_MIN_MATCH) {
			unsigned h = hash3(in + i);
			size_t max = len - i < IG_LZ_MAX_MATCH ? len - i : IG_LZ_MAX_MATCH;
			int depth = CHAIN_DEPTH;
			for (long c = head[h]; c >= 0 && i - (size_t)c <= IG_LZ_MAX_DISTANCE && depth--; c = prev[c]) {
				size_t n = 0;
				while (n < max && in[(size_t)c + n] == in[i + n])
					n++;
				if (n > best) {
					best = n;
					dist = i - (size_t)c;
					if (n == max)
						break;
				}
			}
		}
		size_t step = best >= IG_LZ_MIN_MATCH ? best : 1;
		if (best >= IG_LZ_MIN_MATCH) {
			w += flush_literals(o + w, in + lit, i - lit);
			o[w++] = (unsigned char)(0x80 | (best - IG_LZ_MIN_MATCH));
			o[w++] = (unsigned char)(dist & 0xff);
			o[w++] = (unsigned char)(dist >> 8);
		}
		for (size_t k = 0; k < step; k++, i++) {
			if (len - i >= IG_LZ_MIN_MATCH) {
				unsigned h = hash3(in + i);
				prev[i] = head[h];
				head[h] = (long)i;
			}
		}
		if (best >= IG_LZ_MIN_MATCH)
			lit = i;
	}
	w += flush_literals(o + w, in + lit, len - lit);
	free(head);
	free(prev);
	*out = o;
	return w;
}
