/* JWT verification cost (not a test): reads a fixture written by
 * tests/auth/jose_mint.mjs and, for each token it expects "ok" whose
 * label ends in -with-kid, times ig_jwt_verify (the signature check and
 * the claims) and a hit of the per-core token cache (ig_jwt_verify_cached
 * on a repeated token), in ns per call over ITERS calls, on one core:
 * the process's CPU time, so that other processes sharing the core (a
 * shared bench machine) do not count.
 * tools/bench/jwt_jose.mjs times npm's jose on the same fixture.
 * Usage: jwtbench FIXTURE [ITERS] */
#include "net/auth/jwt.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: jwtbench FIXTURE [ITERS]\n");
		return 2;
	}
	long iters = argc > 2 ? atol(argv[2]) : 2000;
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	static char line[16384], jwks[16384];
	static struct ig_pool blocks;
	static ig_arena arena;
	static struct ig_jwks keys;
	static struct ig_token_cache cache;
	ig_pool_init(&blocks, 16 * 1024, 4, 64);
	ig_arena_init(&arena, &blocks, 256 * 1024);
	ig_token_cache_init(&cache);
	if (!fgets(jwks, sizeof jwks, f)) {
		fprintf(stderr, "empty fixture\n");
		return 1;
	}
	const char *why = ig_jwks_parse(jwks, strlen(jwks), &arena, &keys);
	ig_arena_reset(&arena);
	if (why) {
		fprintf(stderr, "%s\n", why);
		return 1;
	}
	keys.generation = 1;
	const struct ig_jwt_policy policy = { .issuer = IG_STR("https://jose.test"), .audience = IG_STR("ingot"),
					      .leeway_s = 60 };
	printf("%-16s %12s %12s\n", "token", "verify ns", "cached ns");
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char want[32], label[64];
		long long at;
		int off = 0;
		if (sscanf(line, "%31s %lld %63s %n", want, &at, label, &off) != 3 || strcmp(want, "ok") != 0 ||
		    !strstr(label, "-with-kid"))
			continue;
		const char *tok = line + off;
		size_t len = strlen(tok);
		struct ig_jwt t;
		double t0 = now_ns();
		for (long i = 0; i < iters; i++) {
			ig_arena_reset(&arena);
			if (ig_jwt_verify(tok, len, &keys, &policy, at, &arena, &t) != IG_JWT_OK) {
				fprintf(stderr, "%s: refused\n", label);
				return 1;
			}
		}
		double full = (now_ns() - t0) / iters;
		long hits = iters * 50;
		t0 = now_ns();
		for (long i = 0; i < hits; i++) {
			ig_arena_reset(&arena);
			if (ig_jwt_verify_cached(&cache, tok, len, &keys, &policy, at, &arena, &t) != IG_JWT_OK)
				return 1;
		}
		double cached = (now_ns() - t0) / hits;
		uint32_t tag;
		t0 = now_ns();
		for (long i = 0; i < hits; i++)
			if (!ig_token_cache_get(&cache, tok, len, 1, at, 60, &tag))
				return 1;
		double lookup = (now_ns() - t0) / hits;
		printf("%-16s %12.0f %12.0f   (lookup alone %.0f ns, token %zu bytes)\n", label, full, cached, lookup, len);
	}
	fclose(f);
	return 0;
}
