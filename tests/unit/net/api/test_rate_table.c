/* Unit tests of the rate limits' parts below the request: GCRA on one
 * bucket (a burst at once, then one request an interval, no second
 * allowance at a period's boundary, the wait it names; a peek that
 * spends nothing), the shared table (a key keeps its bucket, a lookup
 * claims none, a full window evicts without giving an allowance, threads taking from one bucket at once never pass more than
 * its burst), and the client's address (net/http/client_addr.h): address
 * and CIDR parsing and the walk over Forwarded / X-Forwarded-For. */
#include "net/api/rate_table.h"
#include "net/http/client_addr.h"
#include "tests/unit/check.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define S 1000000ull

static void test_gcra(void)
{
	_Atomic uint64_t tat = 0;
	struct ig_gcra_verdict v;
	uint64_t now = 5 * S;
	int passed = 0;
	for (int i = 0; i < 100; i++) {
		ig_gcra_take(&tat, now, S / 5, 5, &v);
		passed += v.allowed;
	}
	CHECK(passed == 5, "5 per second, burst 5: 100 requests at once, 5 pass");
	CHECK(!v.allowed && v.wait_us == S / 5, "the refused wait one interval (200 ms)");
	ig_gcra_take(&tat, now + S / 5 - 1, S / 5, 5, &v);
	CHECK(!v.allowed && v.wait_us == 1, "a microsecond early, still refused, 1 us to wait");
	ig_gcra_take(&tat, now + S / 5, S / 5, 5, &v);
	CHECK(v.allowed && v.remaining == 0, "one interval later one passes, none left");
	/* Drained over a second boundary: no fixed window resets it. */
	ig_gcra_take(&tat, now + S, S / 5, 5, &v);
	CHECK(v.allowed && v.remaining == 3, "at the next second: the bucket has refilled by what the time gave");
	passed = 0;
	for (int i = 0; i < 10; i++) {
		ig_gcra_take(&tat, now + S + 1, S / 5, 5, &v);
		passed += v.allowed;
	}
	CHECK(passed == 3, "across a period's boundary no double allowance (3, not 5 more)");
	tat = 0;
	ig_gcra_take(&tat, now, S / 5, 5, &v);
	CHECK(v.allowed && v.remaining == 4 && v.reset_us == S / 5, "a fresh bucket: 4 left, full again in one interval");
}

struct taker {
	_Atomic uint64_t *bucket;
	int passed;
};

static void *take_many(void *arg)
{
	struct taker *t = arg;
	for (int i = 0; i < 100000; i++) {
		struct ig_gcra_verdict v;
		ig_gcra_take(t->bucket, 10 * S, S, 50, &v);
		t->passed += v.allowed;
	}
	return NULL;
}

static void test_table(void)
{
	ig_rate_table_clear();
	uint64_t a = ig_rate_hash(1, "k", 1), b = ig_rate_hash(2, "k", 1);
	CHECK(a != b && a != 0, "two limits' same key hash apart");
	CHECK(ig_rate_bucket(a) == ig_rate_bucket(a) && ig_rate_bucket(a) != ig_rate_bucket(b),
	      "a key keeps its bucket; another key has its own");

	/* Threads on one bucket at one instant: the CAS lets exactly burst pass. */
	struct taker t[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		t[i] = (struct taker){ .bucket = ig_rate_bucket(ig_rate_hash(3, "shared", 6)) };
		pthread_create(&th[i], NULL, take_many, &t[i]);
	}
	int total = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		total += t[i].passed;
	}
	CHECK(total == 50, "4 threads, 400000 requests at once on one bucket of burst 50: 50 pass");

	/* A full window: keys whose hashes start at one slot. */
	ig_rate_table_clear();
	uint64_t base = (uint64_t)12 << 20;
	for (unsigned k = 0; k < IG_RATE_PROBE; k++) {
		_Atomic uint64_t *bk = ig_rate_bucket(base + k + 1);
		*bk = 100 * S + k; /* key k's debt; key 0 the oldest */
	}
	_Atomic uint64_t *n = ig_rate_bucket(base + 99);
	CHECK(n == ig_rate_bucket(base + 99) && *n == 100 * S, "a full window: the newcomer takes the oldest bucket, its tat kept");
	CHECK(ig_rate_bucket(base + 2) != n, "the other keys keep theirs");
}

static bool parses(const char *s, const char *want_hex)
{
	uint8_t a[16];
	if (!ig_addr_parse((ig_str){ s, strlen(s) }, a))
		return want_hex == NULL;
	char hex[33];
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", a[i]);
	return want_hex && strcmp(hex, want_hex) == 0;
}

#define V4(h) "00000000000000000000ffff" h

static void test_addr_parse(void)
{
	CHECK(parses("192.0.2.7", V4("c0000207")), "IPv4");
	CHECK(parses("192.0.2.7:51234", V4("c0000207")), "IPv4 with a port");
	CHECK(parses("2001:db8::1", "20010db8000000000000000000000001"), "IPv6");
	CHECK(parses("[2001:db8::1]:8080", "20010db8000000000000000000000001"), "IPv6 in brackets with a port");
	CHECK(parses("[::1]", "00000000000000000000000000000001"), "IPv6 in brackets");
	CHECK(parses("unknown", NULL) && parses("_hidden", NULL) && parses("", NULL) && parses("1.2.3", NULL) &&
		      parses("[::1", NULL) && parses("[::1]x", NULL) && parses("1.2.3.4.5", NULL),
	      "not addresses: unknown, an obfuscated name, empty, short, open bracket, trailing text");

	struct ig_trusted_proxies p = { .list = "10.0.0.0/8, 192.0.2.1,2001:db8::/32", .cidr = (struct ig_cidr[IG_TRUSTED_PROXIES_MAX]){ { { 0 }, 0 } } };
	CHECK(ig_trusted_parse(&p) == NULL && p.count == 3, "three CIDRs, spaces allowed");
	uint8_t a[16];
	ig_addr_parse(IG_STR("10.200.3.4"), a);
	CHECK(ig_trusted(&p, a), "10.200.3.4 is in 10.0.0.0/8");
	ig_addr_parse(IG_STR("11.0.0.1"), a);
	CHECK(!ig_trusted(&p, a), "11.0.0.1 is not");
	ig_addr_parse(IG_STR("192.0.2.1"), a);
	CHECK(ig_trusted(&p, a), "a bare address is a /32");
	ig_addr_parse(IG_STR("192.0.2.2"), a);
	CHECK(!ig_trusted(&p, a), "its neighbour is not");
	ig_addr_parse(IG_STR("2001:db8:ffff::9"), a);
	CHECK(ig_trusted(&p, a), "IPv6 in its /32");
	static const char *const bad[] = { "10.0.0.0/33", "2001:db8::/129", "10.0.0.0/", "10.0.0.0/x", "example.com",
					   "1.2.3.4/8/8" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct ig_trusted_proxies q = { .list = bad[i], .cidr = (struct ig_cidr[IG_TRUSTED_PROXIES_MAX]){ { { 0 }, 0 } } };
		char name[80];
		snprintf(name, sizeof name, "INGOT_TRUSTED_PROXIES=%s is refused", bad[i]);
		CHECK(ig_trusted_parse(&q) != NULL, name);
	}
	struct ig_trusted_proxies none = { .list = "", .cidr = (struct ig_cidr[IG_TRUSTED_PROXIES_MAX]){ { { 0 }, 0 } } };
	CHECK(ig_trusted_parse(&none) == NULL && none.count == 0, "not set: no proxy");
}

static struct ig_trusted_proxies proxies = { .list = "127.0.0.1/32,10.0.0.0/8", .cidr = (struct ig_cidr[IG_TRUSTED_PROXIES_MAX]){ { { 0 }, 0 } } };

/* The client of peer with the fields given as name, value pairs. */
static bool client_is(const char *peer, const char *want, const ig_header *h, size_t n)
{
	uint8_t p[16], w[16], got[16];
	ig_addr_parse((ig_str){ peer, strlen(peer) }, p);
	ig_addr_parse((ig_str){ want, strlen(want) }, w);
	ig_client_addr(&proxies, p, h, n, got);
	return memcmp(got, w, 16) == 0;
}

#define H(n, v) { IG_STR(n), IG_STR(v) }

static void test_client(void)
{
	ig_trusted_parse(&proxies);
	const ig_header xff[] = { H("X-Forwarded-For", "203.0.113.9, 10.1.1.1") };
	CHECK(client_is("198.51.100.1", "198.51.100.1", xff, 1), "an untrusted peer's X-Forwarded-For is ignored");
	CHECK(client_is("127.0.0.1", "203.0.113.9", xff, 1), "a trusted peer: the nearest untrusted hop (past a trusted one)");
	const ig_header spoof[] = { H("x-forwarded-for", "6.6.6.6, 203.0.113.9") };
	CHECK(client_is("127.0.0.1", "203.0.113.9", spoof, 1), "a hop the client wrote itself, farther, is not taken");
	const ig_header all[] = { H("X-Forwarded-For", "10.0.0.2, 10.0.0.3") };
	CHECK(client_is("127.0.0.1", "10.0.0.2", all, 1), "every hop trusted: the farthest");
	const ig_header junk[] = { H("X-Forwarded-For", "203.0.113.9, garbage, 10.0.0.3") };
	CHECK(client_is("127.0.0.1", "10.0.0.3", junk, 1), "a hop that is no address: the trusted proxy that wrote it");
	const ig_header two[] = { H("X-Forwarded-For", "203.0.113.9"), H("X-Forwarded-For", "10.0.0.4") };
	CHECK(client_is("127.0.0.1", "203.0.113.9", two, 2), "two fields are one list, in order");
	const ig_header fwd[] = { H("Forwarded", "for=192.0.2.60;proto=http, for=\"[2001:db8:cafe::17]:4711\";by=x"),
				  H("X-Forwarded-For", "203.0.113.9") };
	CHECK(client_is("127.0.0.1", "2001:db8:cafe::17", fwd, 2), "Forwarded wins over X-Forwarded-For; a quoted IPv6 with a port");
	const ig_header fwd2[] = { H("forwarded", "For=192.0.2.60, for=10.9.9.9") };
	CHECK(client_is("127.0.0.1", "192.0.2.60", fwd2, 1), "Forwarded's hops walked past a trusted one");
	const ig_header hidden[] = { H("Forwarded", "for=_hidden, for=10.9.9.9") };
	CHECK(client_is("127.0.0.1", "10.9.9.9", hidden, 1), "an obfuscated for=: the trusted hop before it");
	const ig_header nofor[] = { H("Forwarded", "proto=https") };
	CHECK(client_is("127.0.0.1", "127.0.0.1", nofor, 1), "an element without for=: the peer");
	CHECK(client_is("127.0.0.1", "127.0.0.1", NULL, 0), "a trusted peer without the fields: the peer");
	char many[1024] = "203.0.113.9";
	for (int i = 0; i < 60; i++)
		strcat(many, ", 10.0.0.1");
	const ig_header deep[] = { { IG_STR("X-Forwarded-For"), { many, strlen(many) } } };
	CHECK(client_is("127.0.0.1", "10.0.0.1", deep, 1), "more hops than kept, all trusted: the farthest kept one");
}

static void test_peek(void)
{
	ig_rate_table_clear();
	uint64_t h = ig_rate_hash(3, "peek", 4);
	CHECK(ig_rate_bucket_find(h) == NULL, "a key never taken has no bucket to find");
	_Atomic uint64_t *b = ig_rate_bucket(h);
	CHECK(ig_rate_bucket_find(h) == b, "once claimed, the lookup finds its bucket");
	struct ig_gcra_verdict v;
	for (int i = 0; i < 3; i++)
		ig_gcra_peek(b, 10 * S, S, 2, &v);
	CHECK(v.allowed && atomic_load(b) == 0, "peeks spend nothing");
	ig_gcra_take(b, 10 * S, S, 2, &v);
	ig_gcra_take(b, 10 * S, S, 2, &v);
	ig_gcra_peek(b, 10 * S, S, 2, &v);
	CHECK(!v.allowed && v.wait_us == S, "after the burst a peek gives take's verdict: refused, an interval to wait");
	ig_gcra_peek(b, 11 * S, S, 2, &v);
	CHECK(v.allowed, "an interval later it would pass");
}

int main(void)
{
	test_gcra();
	test_peek();
	test_table();
	test_addr_parse();
	test_client();
	return check_done();
}
