/* Unit tests of net/nats/url.c: a server's URL with a token, a user and
 * password (percent-decoded, '@' in the password), a default and an
 * explicit port, IPv6, tls://, a list of servers; and what is refused
 * (another scheme, no host, ports 0 and 65536, a bad escape, a NUL, too
 * many servers). */
#include "net/nats/url.h"
#include "tests/unit/check.h"

#include <string.h>

static struct ig_nats_server sv[4];
static const char *why;

static size_t parse(const char *url)
{
	why = NULL;
	return ig_nats_url_parse(url, sv, 4, &why);
}

#define STR_IS(got, want, name) check_slice((got), strlen(got), (want), (name), #got)

static void test_one(void)
{
	CHECK_INT(parse("nats://127.0.0.1"), 1, "a bare host");
	STR_IS(sv[0].host, "127.0.0.1", "its host");
	CHECK_INT(sv[0].port, 4222, "NATS's port by default");
	CHECK(!sv[0].tls_url && !sv[0].token_auth && !sv[0].user[0], "no TLS, no credentials");

	CHECK_INT(parse("nats://s3cret@nats.example:4333"), 1, "a token");
	STR_IS(sv[0].user, "s3cret", "the token");
	CHECK(sv[0].token_auth, "is a token");
	CHECK_INT(sv[0].port, 4333, "an explicit port");

	CHECK_INT(parse("tls://bob:p@ss%3Aw%40rd@host"), 1, "a user and a password with '@' and escapes");
	STR_IS(sv[0].user, "bob", "the user");
	STR_IS(sv[0].pass, "p@ss:w@rd", "the password, split at the last '@' and decoded");
	STR_IS(sv[0].host, "host", "the host after it");
	CHECK(sv[0].tls_url && !sv[0].token_auth, "tls:// requires TLS");

	CHECK_INT(parse("nats://[::1]:4223/"), 1, "IPv6 in brackets");
	STR_IS(sv[0].host, "::1", "without them");
	CHECK_INT(sv[0].port, 4223, "and its port");
}

static void test_list(void)
{
	CHECK_INT(parse("nats://a:1,tls://t@b:2,nats://c"), 3, "a list of three");
	STR_IS(sv[1].host, "b", "the second's host");
	CHECK(sv[1].tls_url && sv[1].token_auth && !sv[0].token_auth && !sv[2].user[0],
	      "each with its own scheme and credentials");
	CHECK_INT(sv[2].port, 4222, "the third's default port");
	CHECK_INT(parse("nats://a,nats://b,nats://c,nats://d,nats://e"), 0, "more servers than room");
	CHECK(why != NULL, "says why");
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"http://host", "host:4222", "nats://", "nats://:4222", "nats://h:0", "nats://h:65536",
		"nats://h:", "nats://h:12x", "nats://u:p%4@h", "nats://u:p%00@h", "nats://[::1", "nats://[::1]x",
		"nats://a,", "nats://a,,nats://b",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char name[80];
		snprintf(name, sizeof name, "refused: %s", bad[i]);
		check_that(parse(bad[i]) == 0 && why != NULL, name, "parsed as %s:%u", sv[0].host, sv[0].port);
	}
}

int main(void)
{
	test_one();
	test_list();
	test_refused();
	return check_done();
}
