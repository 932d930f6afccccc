/* The per-core cache of verified tokens (jwt.h): set-associative, fixed
 * size, no lock (one core's). On the request path of every authenticated
 * request, so -O2: a keyed multiply hash of the token picks the set (the
 * key is secret, so a client cannot aim tokens at one set), then the
 * stored token is compared whole, in constant time. */
#include "net/auth/jwt.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>

/* Folds the 128-bit product: the mixing step of a multiply hash. */
static inline uint64_t mix(uint64_t a, uint64_t b)
{
	unsigned __int128 p = (unsigned __int128)a * b;
	return (uint64_t)p ^ (uint64_t)(p >> 64);
}

static inline uint64_t load64(const char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint64_t token_hash(const uint64_t key[2], const char *s, size_t n)
{
	uint64_t h = key[0] ^ (n * 0x9e3779b97f4a7c15u);
	size_t i = 0;
	for (; i + 16 <= n; i += 16)
		h = mix(load64(s + i) ^ key[0] ^ h, load64(s + i + 8) ^ key[1]);
	uint64_t a = 0, b = 0;
	if (n - i > 8) {
		a = load64(s + i);
		memcpy(&b, s + i + 8, n - i - 8);
	} else {
		memcpy(&a, s + i, n - i);
	}
	h = mix(a ^ key[0] ^ h, b ^ key[1]);
	return mix(h ^ key[1], 0x94d049bb133111ebu ^ key[0]);
}

/* Every byte is read, eight at a time; the empty asm keeps the compiler
 * from turning the accumulation into an early exit. */
static bool equal_ct(const char *a, const char *b, size_t n)
{
	uint64_t d = 0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		d |= load64(a + i) ^ load64(b + i);
	for (; i < n; i++)
		d |= (uint64_t)(unsigned char)(a[i] ^ b[i]);
	__asm__("" : "+r"(d));
	return d == 0;
}

void ig_token_cache_init(struct ig_token_cache *c)
{
	memset(c, 0, sizeof *c);
	if (getrandom(c->key, sizeof c->key, GRND_NONBLOCK) != (ssize_t)sizeof c->key) {
		/* No entropy yet (early boot): the clock and the address still
		 * vary the sets; the full comparison keeps hits correct. */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		c->key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)(uintptr_t)c;
		c->key[1] = mix(c->key[0], 0xbf58476d1ce4e5b9u) | 1;
	}
}

bool ig_token_cache_get(struct ig_token_cache *c, const char *token, size_t len, uint64_t generation, int64_t now_s,
			int64_t leeway_s, uint32_t *tag)
{
	if (len == 0 || len > IG_TOKEN_CACHE_TOKEN_MAX)
		return false;
	uint64_t h = token_hash(c->key, token, len);
	struct ig_token_cache_entry *set = c->entries[h & (IG_TOKEN_CACHE_SETS - 1)];
	for (int w = 0; w < IG_TOKEN_CACHE_WAYS; w++) {
		struct ig_token_cache_entry *e = &set[w];
		if (e->hash != h || e->len != len || e->generation != generation || !equal_ct(e->token, token, len))
			continue;
		if (now_s - leeway_s >= e->exp) {
			e->len = 0; /* expired: the slot is free again */
			return false;
		}
		e->used = ++c->clock;
		*tag = e->tag;
		return true;
	}
	return false;
}

void ig_token_cache_put(struct ig_token_cache *c, const char *token, size_t len, uint64_t generation, int64_t exp,
			uint32_t tag)
{
	if (len == 0 || len > IG_TOKEN_CACHE_TOKEN_MAX)
		return;
	uint64_t h = token_hash(c->key, token, len);
	struct ig_token_cache_entry *set = c->entries[h & (IG_TOKEN_CACHE_SETS - 1)];
	struct ig_token_cache_entry *victim = &set[0];
	for (int w = 0; w < IG_TOKEN_CACHE_WAYS; w++) {
		if (set[w].len == 0) {
			victim = &set[w];
			break;
		}
		if ((int32_t)(set[w].used - victim->used) < 0)
			victim = &set[w];
	}
	victim->hash = h;
	victim->generation = generation;
	victim->exp = exp;
	victim->len = (uint32_t)len;
	victim->used = ++c->clock;
	victim->tag = tag;
	memcpy(victim->token, token, len);
}
