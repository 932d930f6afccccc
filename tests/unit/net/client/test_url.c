/* Unit tests of net/client/url: a table of accepted URLs with every part
 * checked, a table of rejected ones named after the rule they break, each
 * input placed flush against an unreadable page; origins; and a mutation
 * run (no input of a thousand mutated URLs may crash or yield an origin
 * that does not parse back to itself). */
#define _DEFAULT_SOURCE
#include "net/client/url.h"
#include "tests/unit/check.h"
#include "tests/unit/guard.h"

#include <stdlib.h>

struct good_case {
	const char *name, *in;
	bool https;
	const char *host;
	int port;
	const char *path, *origin, *authority;
};

static const struct good_case good[] = {
	{ "plain http with path", "http://example.com/a/b", false, "example.com", 80, "/a/b",
	  "http://example.com:80", "example.com" },
	{ "https default port", "https://example.com/", true, "example.com", 443, "/",
	  "https://example.com:443", "example.com" },
	{ "no path is /", "http://a", false, "a", 80, "/", "http://a:80", "a" },
	{ "explicit port kept in the authority", "http://127.0.0.1:8080/json", false, "127.0.0.1",
	  8080, "/json", "http://127.0.0.1:8080", "127.0.0.1:8080" },
	{ "explicit default port left out of the authority", "http://a:80/x", false, "a", 80, "/x",
	  "http://a:80", "a" },
	{ "empty port means the default", "https://a:/x", true, "a", 443, "/x", "https://a:443", "a" },
	{ "scheme and host are case-insensitive", "HTTPS://Ex.COM:8443/P", true, "ex.com", 8443, "/P",
	  "https://ex.com:8443", "ex.com:8443" },
	{ "query kept in the target", "http://a/p?x=1&y=2", false, "a", 80, "/p?x=1&y=2",
	  "http://a:80", "a" },
	{ "query without a path gets /", "http://a:81?x=1", false, "a", 81, "/?x=1", "http://a:81",
	  "a:81" },
	{ "fragment dropped", "http://a/p?q#frag", false, "a", 80, "/p?q", "http://a:80", "a" },
	{ "fragment without a path", "http://a#frag", false, "a", 80, "/", "http://a:80", "a" },
	{ "IPv6 literal", "http://[::1]:9000/x", false, "::1", 9000, "/x", "http://[::1]:9000",
	  "[::1]:9000" },
	{ "IPv6 literal default port", "https://[2001:DB8::1]/", true, "2001:db8::1", 443, "/",
	  "https://[2001:db8::1]:443", "[2001:db8::1]" },
	{ "underscore and trailing dot in a name", "http://my_host.local./", false, "my_host.local.",
	  80, "/", "http://my_host.local.:80", "my_host.local." },
	{ "highest port", "http://a:65535/", false, "a", 65535, "/", "http://a:65535", "a:65535" },
	{ "percent-encoded path kept as is", "http://a/%20b%2F", false, "a", 80, "/%20b%2F",
	  "http://a:80", "a" },
};

struct bad_case {
	const char *name, *in;
};

static const struct bad_case bad[] = {
	{ "empty", "" },
	{ "no scheme", "example.com/x" },
	{ "other scheme", "ftp://a/" },
	{ "one slash after the scheme", "http:/a/" },
	{ "empty host", "http:///x" },
	{ "empty host with port", "http://:80/x" },
	{ "user info", "http://user:pw@a/" },
	{ "user info without password", "http://user@a/" },
	{ "port zero", "http://a:0/" },
	{ "port too large", "http://a:65536/" },
	{ "port with six digits", "http://a:000080/" },
	{ "port not a number", "http://a:8o/" },
	{ "space in the path", "http://a/b c" },
	{ "tab in the path", "http://a/b\tc" },
	{ "CR LF in the path", "http://a/b\r\nX-Injected: 1" },
	{ "non-ASCII byte in the path", "http://a/caf\xc3\xa9" },
	{ "DEL in the path", "http://a/\x7f" },
	{ "percent in the host", "http://a%2eb/" },
	{ "bracket missing", "http://[::1/" },
	{ "not an IPv6 literal", "http://[zz::1]/" },
	{ "IPv6 zone", "http://[fe80::1%25eth0]/" },
	{ "garbage after the IPv6 literal", "http://[::1]x/" },
	{ "host with a comma", "http://a,b/" },
};

static bool slice_is(ig_str s, const char *want)
{
	return s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

static void test_good(struct guard *g)
{
	for (size_t i = 0; i < IG_COUNTOF(good); i++) {
		const struct good_case *c = &good[i];
		size_t len = strlen(c->in);
		const char *in = guard_put(g, c->in, len);
		struct ig_url u;
		if (!check_that(ig_url_parse(in, len, &u) == 0, c->name, "rejected \"%s\"", c->in))
			continue;
		bool ok = u.https == c->https && slice_is(u.host, c->host) && u.port == c->port &&
			  slice_is(u.path, c->path) && slice_is(u.origin, c->origin) &&
			  slice_is(u.authority, c->authority);
		check_that(ok, c->name, "got https=%d host=%.*s port=%u path=%.*s origin=%.*s authority=%.*s",
			   u.https, (int)u.host.len, u.host.ptr, u.port, (int)u.path.len, u.path.ptr,
			   (int)u.origin.len, u.origin.ptr, (int)u.authority.len, u.authority.ptr);
	}
}

static void test_bad(struct guard *g)
{
	for (size_t i = 0; i < IG_COUNTOF(bad); i++) {
		size_t len = strlen(bad[i].in);
		const char *in = guard_put(g, bad[i].in, len);
		struct ig_url u;
		check_that(ig_url_parse(in, len, &u) == -1, bad[i].name, "accepted \"%s\"", bad[i].in);
	}
}

static void test_host_length(struct guard *g)
{
	char in[300] = "http://";
	memset(in + 7, 'a', 253);
	memcpy(in + 7 + 253, "/", 2);
	struct ig_url u;
	size_t len = strlen(in);
	CHECK(ig_url_parse(guard_put(g, in, len), len, &u) == 0 && u.host.len == 253,
	      "a host of 253 characters is accepted");
	memmove(in + 8, in + 7, len - 7 + 1);
	len++;
	CHECK(ig_url_parse(guard_put(g, in, len), len, &u) == -1, "a host of 254 characters is refused");
}

static void test_origins(void)
{
	struct ig_url a, b;
	CHECK(ig_url_parse_origin("http://a:8080", 13, &a) == 0, "origin without a slash");
	CHECK(ig_url_parse_origin("http://a:8080/", 14, &b) == 0, "origin with a slash");
	CHECK(ig_url_same_origin(&a, &b), "the two spellings are one origin");
	CHECK(ig_url_parse_origin("http://a/x", 10, &a) == -1, "origin with a path is refused");
	CHECK(ig_url_parse_origin("http://a?x", 10, &a) == -1, "origin with a query is refused");
	CHECK(ig_url_parse_origin("http://a/?x", 11, &a) == -1, "origin with / and a query is refused");
	CHECK(ig_url_parse_origin("http://a/#f", 11, &a) == -1, "origin with a fragment is refused");
	ig_url_parse("http://A:80/x", 13, &a);
	ig_url_parse("http://a/y", 10, &b);
	CHECK(ig_url_same_origin(&a, &b), "default port and case do not split an origin");
	ig_url_parse("https://a/y", 11, &b);
	CHECK(!ig_url_same_origin(&a, &b), "the scheme splits an origin");
	ig_url_parse("http://a:81/y", 13, &b);
	CHECK(!ig_url_same_origin(&a, &b), "the port splits an origin");
}

/* Mutations of valid URLs: whatever is accepted has an origin that parses
 * back to the same origin, and a path that starts with '/'. */
static void test_mutations(struct guard *g)
{
	static const char alphabet[] = "aZ09:/?#[]@%.-_ \r\n\x80\x7f";
	unsigned seed = 12345, accepted = 0, broken = 0;
	char buf[128];
	for (int n = 0; n < 20000; n++) {
		const char *base = good[(unsigned)n % IG_COUNTOF(good)].in;
		size_t len = strlen(base);
		memcpy(buf, base, len);
		for (int k = 0; k < 3; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % len;
			seed = seed * 1103515245u + 12345u;
			buf[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
		}
		const char *in = guard_put(g, buf, len);
		struct ig_url u, back;
		if (ig_url_parse(in, len, &u) != 0)
			continue;
		accepted++;
		if (u.path.len == 0 || u.path.ptr[0] != '/' ||
		    ig_url_parse_origin(u.origin.ptr, u.origin.len, &back) != 0 || !ig_url_same_origin(&u, &back))
			broken++;
	}
	CHECK(accepted > 0, "some mutated URLs are still accepted");
	CHECK_INT(broken, 0, "every accepted mutated URL has a consistent origin and target");
}

int main(void)
{
	struct guard g;
	if (!guard_init(&g, 4096))
		return 1;
	test_good(&g);
	test_bad(&g);
	test_host_length(&g);
	test_origins();
	test_mutations(&g);
	return check_done();
}
