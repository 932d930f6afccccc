/* Unit tests of net/http/cors.c's pure parts: INGOT_CORS_ORIGINS's parse
 * (exact origins, *, patterns, and what it refuses), an Origin's judgement
 * against the list, and the head lines of an answer without an exchange.
 * The exchange's side (preflights, headers on answers) runs through the
 * binary in tests/integration/cors.test.mjs. */
#include "net/http/cors.h"
#include "tests/unit/check.h"

#include <stdlib.h>

/* cors.c's calls on an exchange: none is made by what is tested here. */
const ig_request *ig_req(const ig_ctx *ctx) { (void)ctx; abort(); }
void ig_add_header(ig_ctx *ctx, const char *name, ig_str value) { (void)ctx; (void)name; (void)value; abort(); }
void ig_finish(ig_ctx *ctx, int status) { (void)ctx; (void)status; abort(); }

static bool allows(const char *origin)
{
	return ig_cors_allows(&ig_cors_config, (ig_str){ origin, strlen(origin) });
}

static const char *parse(const char *origins)
{
	ig_cors_config = (struct ig_cors_config){ .origins = origins, .expose_headers = "" };
	return ig_cors_parse_origins(&ig_cors_config);
}

static void test_parse(void)
{
	CHECK(parse("") == NULL && ig_cors_config.count == 0 && !ig_cors_config.any, "empty: nothing allowed");
	CHECK(parse(" https://a.test , *,http://b.test:8080 ") == NULL, "a list with spaces and *");
	CHECK_INT(ig_cors_config.count, 2, "two origins, * apart");
	CHECK(ig_cors_config.any, "* is kept as any");
	static const char *const bad[] = {
		"a.test", "https:/a.test", "https://a.test/", "https://a.test/x/", "https://a.*.test",
		"https://*a.test", "https://*", "https://*.*.test", "*://a.test", "https://x,a.test",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		check_that(parse(bad[i]) != NULL, "a malformed origin is refused", "%s", bad[i]);
	char many[65 * 20] = "";
	for (int i = 0; i < 65; i++)
		sprintf(many + strlen(many), "http://h%d.test,", i);
	CHECK(parse(many) != NULL, "65 origins are too many");
}

static void test_allows(void)
{
	parse("https://app.example.com, http://localhost:3000, https://*.example.org");
	CHECK(allows("https://app.example.com"), "exact");
	CHECK(allows("HTTPS://App.Example.com"), "exact, whatever the case");
	CHECK(allows("http://localhost:3000"), "exact with a port");
	CHECK(!allows("http://localhost:3001"), "another port");
	CHECK(!allows("http://localhost"), "no port");
	CHECK(!allows("http://app.example.com"), "another scheme");
	CHECK(!allows("https://app.example.com.evil.test"), "a longer host");
	CHECK(!allows("https://app.example.co"), "a shorter host");
	CHECK(allows("https://a.example.org"), "a pattern: one label");
	CHECK(allows("https://a-1.b.example.org"), "a pattern: two labels");
	CHECK(!allows("https://example.org"), "a pattern needs a label");
	CHECK(!allows("https://.example.org"), "an empty label");
	CHECK(!allows("https://xexample.org"), "a pattern's dot stays");
	CHECK(!allows("https://a.example.org:8443"), "a pattern without a port takes none");
	CHECK(!allows("https://evil.test/.example.org"), "a path is no label");
	CHECK(!allows("https://a@b.example.org"), "userinfo is no label");
	CHECK(!allows("http://a.example.org"), "a pattern's scheme");
	CHECK(!allows("null"), "the opaque origin");
	CHECK(!allows(""), "an empty Origin");
	parse("*");
	CHECK(allows("null") && allows("http://anything.test"), "* allows any");
}

static void test_head_lines(void)
{
	char out[512];
	parse("*");
	size_t n = ig_cors_head_lines(out, sizeof out, IG_STR("http://a.test"));
	check_slice(out, n, "Vary: Origin\r\nAccess-Control-Allow-Origin: *\r\n", "* without credentials", "head");
	ig_cors_config.credentials = true;
	ig_cors_config.expose_headers = "X-Request-Id, ETag";
	n = ig_cors_head_lines(out, sizeof out, IG_STR("http://a.test"));
	check_slice(out, n,
		    "Vary: Origin\r\nAccess-Control-Allow-Origin: http://a.test\r\n"
		    "Access-Control-Allow-Credentials: true\r\nAccess-Control-Expose-Headers: X-Request-Id, ETag\r\n",
		    "credentials echo the origin; exposed headers", "head");
	CHECK_INT(ig_cors_head_lines(out, 40, IG_STR("http://a.test")), 0, "lines that do not fit: none");

	char kept[IG_CORS_ORIGIN_MAX];
	parse("http://a.test");
	ig_header h[] = { { IG_STR("Host"), IG_STR("x") }, { IG_STR("origin"), IG_STR("http://a.test") } };
	n = ig_cors_keep_origin(h, 2, kept);
	check_slice(kept, n, "http://a.test", "the allowed Origin is kept", "kept");
	h[1].value = IG_STR("http://b.test");
	CHECK_INT(ig_cors_keep_origin(h, 2, kept), 0, "a refused Origin is not");
	CHECK_INT(ig_cors_keep_origin(h, 1, kept), 0, "no Origin");
	char longer[IG_CORS_ORIGIN_MAX + 20];
	memset(longer, 'a', sizeof longer);
	parse("*");
	h[1].value = (ig_str){ longer, sizeof longer };
	CHECK_INT(ig_cors_keep_origin(h, 2, kept), 0, "an Origin too long to keep");
}

static void test_request_lines(void)
{
	char out[IG_CORS_LINES_MAX];
	parse("http://a.test");
	ig_cors_config.expose_headers = "X-Request-Id";
	ig_header h[] = { { IG_STR("ORIGIN"), IG_STR("http://a.test") },
			  { IG_STR("Access-Control-Request-Method"), IG_STR("GET") } };
	ig_request q = { .method = IG_STR("GET"), .headers = h, .num_headers = 1 };
	size_t n = ig_cors_request_lines(&q, out, sizeof out);
	check_slice(out, n,
		    "Vary: Origin\r\nAccess-Control-Allow-Origin: http://a.test\r\n"
		    "Access-Control-Expose-Headers: X-Request-Id\r\n",
		    "an allowed Origin", "lines");
	q.num_headers = 2;
	n = ig_cors_request_lines(&q, out, sizeof out);
	check_slice(out, n, "Vary: Origin\r\nAccess-Control-Allow-Origin: http://a.test\r\n"
		    "Access-Control-Expose-Headers: X-Request-Id\r\n", "a GET with the field is no preflight", "lines");
	q.method = IG_STR("OPTIONS");
	n = ig_cors_request_lines(&q, out, sizeof out);
	check_slice(out, n, "Vary: Origin\r\n", "a preflight: Vary alone (the router answers)", "lines");
	q.method = IG_STR("GET");
	h[0].value = IG_STR("http://b.test");
	n = ig_cors_request_lines(&q, out, sizeof out);
	check_slice(out, n, "Vary: Origin\r\n", "a refused Origin: Vary alone", "lines");
	q.num_headers = 0;
	n = ig_cors_request_lines(&q, out, sizeof out);
	check_slice(out, n, "Vary: Origin\r\n", "no Origin: Vary alone", "lines");
	h[0].value = IG_STR("http://a.test");
	q.num_headers = 1;
	n = ig_cors_request_lines(&q, out, 40);
	check_slice(out, n, "Vary: Origin\r\n", "lines that do not fit: Vary alone", "lines");
}

int main(void)
{
	test_request_lines();
	test_parse();
	test_allows();
	test_head_lines();
	return check_done();
}
