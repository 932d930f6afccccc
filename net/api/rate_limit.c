/* The check ig_run_operation makes for an operation with a rate limit
 * (rate_limit.h): the key, its bucket's GCRA step, and the 429. Only
 * limited operations come here: the others pay one branch on a NULL. */
#include "rate_limit.h"
#include "net/http/exchange.h"
#include "rate_table.h"
#include "net/http/client_addr.h"
#include "ingot/auth.h"

#include <stdio.h>
#include <string.h>

bool ig_rate_client(ig_ctx *ctx, uint8_t out[16])
{
	uint8_t peer[16];
	if (!ig_http_peer_addr(ctx, peer)) {
		memset(out, 0, 16);
		return false;
	}
	const ig_request *q = ig_req(ctx);
	ig_client_addr(&ig_trusted_proxies, peer, q->headers, q->num_headers, out);
	return true;
}

static uint64_t key_hash(ig_ctx *ctx, const struct ig_rate_limit *l)
{
	if (l->key == IG_RATE_KEY_HEADER) {
		ig_str v = ig_req_header(ctx, l->header);
		return ig_rate_hash(l->id, v.ptr, v.len);
	}
	uint8_t client[17];
	if (l->key == IG_RATE_KEY_SUBJECT) {
		/* A subject's key is a 1 and its bytes, the fallback's a 0 and
		   the address: the two never meet in a bucket. */
		const struct ig_principal *p = ig_principal(ctx);
		char *k = p && p->subject.len ? ig_alloc(ctx, p->subject.len + 1) : NULL;
		if (k) {
			k[0] = 1;
			memcpy(k + 1, p->subject.ptr, p->subject.len);
			return ig_rate_hash(l->id, k, p->subject.len + 1);
		}
		client[0] = 0;
		ig_rate_client(ctx, client + 1);
		return ig_rate_hash(l->id, client, sizeof client);
	}
	ig_rate_client(ctx, client);
	return ig_rate_hash(l->id, client, 16);
}

static uint64_t seconds_up(uint64_t us)
{
	return (us + 999999) / 1000000;
}

__attribute__((cold, noinline)) static void refuse(ig_ctx *ctx, const struct ig_rate_limit *l,
						   const struct ig_gcra_verdict *v)
{
	ig_count_rate_limited(ctx);
	uint64_t wait = seconds_up(v->wait_us);
	wait = wait ? wait : 1;
	char buf[160];
	int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)wait);
	ig_add_header(ctx, "Retry-After", (ig_str){ buf, (size_t)n });
	ig_add_header(ctx, "RateLimit-Policy", (ig_str){ l->policy, strlen(l->policy) });
	n = snprintf(buf, sizeof buf, "%s;r=0;t=%llu", l->policy_name, (unsigned long long)wait);
	ig_add_header(ctx, "RateLimit", (ig_str){ buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1 });
	ig_respond_problem(ctx, 429, "too many requests: try again after the Retry-After seconds");
}

bool ig_rate_limit_admit(ig_ctx *ctx, const struct ig_rate_limit *l)
{
	struct ig_gcra_verdict v;
	ig_gcra_take(ig_rate_bucket(key_hash(ctx, l)), ig_http_start_us(ctx), l->interval_us, l->burst, &v);
	if (__builtin_expect(v.allowed, 1))
		return true;
	refuse(ctx, l, &v);
	return false;
}
