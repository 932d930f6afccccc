/* A fast per-core pseudo-random source for identifiers (request ids, trace
 * and span ids): splitmix64, seeded once from getrandom when a core starts,
 * so that making an id costs no syscall. Not for keys: TLS has its own. */
#ifndef KERNEL_RNG_H
#define KERNEL_RNG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct ig_rng {
	uint64_t state;
};

/* Seeds r from the kernel's entropy (getrandom, not blocking); falls back
 * to the clock and r's address, which keeps ids distinct if not secret. */
void ig_rng_seed(struct ig_rng *r);

static inline uint64_t ig_rng_next(struct ig_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Eight nibbles of x, one per byte, the most significant in the highest
 * byte, then made digits: a dozen operations instead of a loop of eight
 * (ids are made for every request). */
static inline uint64_t ig_hex32_bytes(uint64_t x)
{
	x = (x | x << 16) & 0x0000ffff0000ffffu;
	x = (x | x << 8) & 0x00ff00ff00ff00ffu;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0fu;
	uint64_t letters = ((x + 0x0606060606060606u) >> 4) & 0x0101010101010101u; /* 1 where >= 10 */
	return __builtin_bswap64(x + 0x3030303030303030u + letters * ('a' - '0' - 10));
}

/* Writes v as 16 lowercase hex digits (no NUL). */
static inline void ig_hex64(char out[16], uint64_t v)
{
	uint64_t hi = ig_hex32_bytes(v >> 32), lo = ig_hex32_bytes(v & 0xffffffffu);
	memcpy(out, &hi, 8);
	memcpy(out + 8, &lo, 8);
}

/* Writes the 128 bits hi:lo as 32 lowercase hex digits (no NUL), hi's
 * most significant nibble first. With SSE2 (every x86-64) the 32 digits
 * are made in two registers at once: a made request id costs this on
 * every request that brought none. */
static inline void ig_hex128(char out[32], uint64_t hi, uint64_t lo)
{
#ifdef __SSE2__
	/* Bytes in reading order: byte 0 is hi's most significant. */
	__m128i v = _mm_set_epi64x((long long)__builtin_bswap64(lo), (long long)__builtin_bswap64(hi));
	__m128i low4 = _mm_set1_epi8(0x0f);
	__m128i high_nibbles = _mm_and_si128(_mm_srli_epi16(v, 4), low4);
	__m128i low_nibbles = _mm_and_si128(v, low4);
	__m128i first = _mm_unpacklo_epi8(high_nibbles, low_nibbles); /* digits of bytes 0..7 */
	__m128i second = _mm_unpackhi_epi8(high_nibbles, low_nibbles);
	__m128i nine = _mm_set1_epi8(9), zero = _mm_set1_epi8('0'), gap = _mm_set1_epi8('a' - '0' - 10);
	first = _mm_add_epi8(_mm_add_epi8(first, zero), _mm_and_si128(_mm_cmpgt_epi8(first, nine), gap));
	second = _mm_add_epi8(_mm_add_epi8(second, zero), _mm_and_si128(_mm_cmpgt_epi8(second, nine), gap));
	_mm_storeu_si128((__m128i *)out, first);
	_mm_storeu_si128((__m128i *)(out + 16), second);
#else
	ig_hex64(out, hi);
	ig_hex64(out + 16, lo);
#endif
}

#endif
