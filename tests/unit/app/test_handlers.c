/* The reference service's handler tests, through the test API
 * (include/ingot/testing.h) as an app's own tests would run: GET and POST routes, a
 * validation error, HEAD, the health paths, the database routes when
 * DATABASE_URL is set, and the outbound handlers
 * (GET /proxy/json, GET /fanout) with the mock agent in place of the
 * network, which is forbidden; the mock's replies come from timers on the
 * test core's loop, so each handler really waits on its coroutine and is
 * resumed when the reply lands. The same core also checks the response head
 * writer (ig_http_out_head) byte for byte, including fields longer than its
 * stack buffer, which no route produces, and that a detached exchange
 * keeps its request when the parser's field array is reused. Build: the
 * Makefile's TEST_API_SRC with app/ and the generated api.c. */
#include "ingot/testing.h"
#include "net/http/health.h"
#include "net/http/inproc.h"
#include "net/http/internal.h"
#include "net/api/operation.h"
#include "ingot/log.h"
#include "tests/unit/check.h"

#include <stdlib.h>
#include <string.h>

#define UPSTREAM "http://upstream.test:8080"

static struct http_core *core; /* the test API's */

static struct ig_test_response r;

/* Sends a request without fields or body; false unless it got a response. */
static bool get(const char *method, const char *target)
{
	enum ig_test_error e = ig_test_request(method, target, NULL, 0, IG_STR(""), &r);
	if (e != IG_TEST_OK)
		printf("# %s %s: %s\n", method, target, ig_test_error_name(e));
	return e == IG_TEST_OK;
}

static bool body_has(const char *part)
{
	return memmem(r.body.ptr, r.body.len, part, strlen(part)) != NULL;
}

static bool type_is(const char *want)
{
	ig_str v = ig_test_header(&r, "content-type");
	return v.len >= strlen(want) && memcmp(v.ptr, want, strlen(want)) == 0;
}

/* Registers an interception; one that does not register fails the test
 * here rather than as a puzzling answer later. */
static void icept(ig_mock_agent *m, const struct ig_mock_match *match, const struct ig_mock_reply *reply,
		  uint32_t times)
{
	if (ig_mock_intercept(m, match, reply, times) < 0)
		check_that(false, "the test's interception registers", "%s", match->path ? match->path : "");
}

static void check_core_idle(const char *name)
{
	check_that(core->conns.in_use == 0 && core->ctxs.in_use == 0 && core->rbufs.in_use == 0 &&
			   core->blocks.in_use == 0 && core->live == NULL,
		   name, "conns %zu, exchanges %zu, rbufs %zu, blocks %zu", core->conns.in_use,
		   core->ctxs.in_use, core->rbufs.in_use, core->blocks.in_use);
}

/* ---- the cases ---- */

static const char validate_body[] = "{\"name\":\"Ada Lovelace\",\"nickname\":null,\"ref\":\"A-1\",\"status\":\"active\","
				    "\"scores\":[90,85,77,100,0],\"address\":{\"street\":\"12 Main St\",\"city\":"
				    "\"Springfield\",\"zip\":\"12345\"},\"active\":true}";

static const ig_header validate_fields[] = { { IG_STR_INIT("Content-Type"), IG_STR_INIT("application/json") },
					     { IG_STR_INIT("x-foo"), IG_STR_INIT("bar") } };

static void test_routes(void)
{
	CHECK(get("GET", "/json") && r.status == 200 && type_is("application/json") && body_has("\"id\":"),
	      "GET /json: 200 application/json from the handler");
	size_t get_len = r.body.len;
	ig_str length = ig_test_header(&r, "Content-Length");
	CHECK(length.len && (size_t)strtoul(length.ptr, NULL, 10) == get_len, "GET /json: its Content-Length");
	CHECK(get("HEAD", "/json") && r.status == 200 && r.body.len == 0, "HEAD /json: 200 without a body");
	length = ig_test_header(&r, "content-length");
	CHECK(length.len && (size_t)strtoul(length.ptr, NULL, 10) == get_len,
	      "HEAD /json: the Content-Length GET would have");
	CHECK(get("GET", "/no/such/route") && r.status == 404, "an unknown path: 404");

	enum ig_test_error e = ig_test_request("POST", "/validate?page=2&tags=a", validate_fields, 2,
					       (ig_str){ validate_body, sizeof validate_body - 1 }, &r);
	check_that(e == IG_TEST_OK && r.status == 200 && body_has("\"name\":\"Ada Lovelace\"") &&
			   body_has("\"page\":2"),
		   "POST /validate: the handler echoes the decoded values", "%s, status %d: %.*s",
		   ig_test_error_name(e), r.status, (int)r.body.len, r.body.ptr);
	e = ig_test_request("POST", "/validate", validate_fields, 2, IG_STR("{}"), &r);
	check_that(e == IG_TEST_OK && r.status == 400 && type_is("application/problem+json") &&
			   body_has("\"status\":400"),
		   "POST /validate {}: 400 problem+json from the validator", "status %d: %.*s", r.status,
		   (int)r.body.len, r.body.ptr);
	e = ig_test_request("POST", "/validate", validate_fields, 1,
			    (ig_str){ validate_body, sizeof validate_body - 1 }, &r);
	CHECK(e == IG_TEST_OK && r.status == 400 && body_has("x-foo"),
	      "POST /validate without x-foo: 400 naming the header");

	static const ig_header bad[] = { { IG_STR_INIT("X-Bad"), IG_STR_INIT("a\r\nX-Smuggled: 1") } };
	e = ig_test_request("GET", "/json", bad, 1, IG_STR(""), &r);
	CHECK(e == IG_TEST_BAD_REQUEST && r.status == 0, "a CR LF in a field value: bad_request, nothing sent");
	CHECK(strcmp(ig_test_error_name(e), "bad_request") == 0, "the kind has a name");
	check_core_idle("routes: the core holds nothing afterwards");
}

/* The database routes on the test core's pool (net/pg), when DATABASE_URL
 * names a migrated database (tests/integration/testapi_db.test.mjs runs
 * this binary so); skipped without one. */
static void test_database(void)
{
	if (!getenv("DATABASE_URL")) {
		check_skip("GET /db and /queries through the test core's database pool", "no DATABASE_URL");
		return;
	}
	CHECK(get("GET", "/db") && r.status == 200 && body_has("\"randomNumber\":"),
	      "GET /db: a row of the database, the handler pending on its pool");
	check_that(get("GET", "/queries?queries=3") && r.status == 200 && r.body.len && r.body.ptr[0] == '[' &&
			   body_has("},{") && !body_has("},{\"id\":0"),
		   "GET /queries?queries=3: three rows", "status %d: %.*s", r.status, (int)r.body.len, r.body.ptr);
	CHECK(get("GET", "/readyz") && r.status == 200, "/readyz: 200 with the database up");
	check_core_idle("database: the core holds no exchange afterwards");
}

static const char upstream_json[] = "{\"id\":7,\"name\":\"from the mock\",\"tags\":[],\"price\":1.5,"
				    "\"stock\":{\"warehouse\":\"south\",\"count\":3},\"active\":false}";

static const ig_header json_type[] = { { IG_STR_INIT("Content-Type"), IG_STR_INIT("application/json") } };

static void test_proxy_json(void)
{
	ig_mock_agent *m = ig_test_mock();
	CHECK(m != NULL, "the test core has a mock agent");
	if (!m)
		return;
	icept(m, &(struct ig_mock_match){ .method = "GET", .origin = UPSTREAM, .path = "/json" },
			  &(struct ig_mock_reply){ .status = 200,
						   .headers = json_type,
						   .header_count = 1,
						   .body = { upstream_json, sizeof upstream_json - 1 } },
			  1);
	CHECK(get("GET", "/proxy/json"), "/proxy/json: a complete response");
	CHECK_INT(r.status, 200, "/proxy/json: 200");
	check_that(ig_test_body_is(&r, upstream_json), "/proxy/json: the upstream's body exactly", "got %.*s",
		   (int)r.body.len, r.body.ptr);
	CHECK(type_is("application/json"), "/proxy/json: application/json");
	char msg[512];
	check_that(ig_mock_assert_all_used(m, msg, sizeof msg), "/proxy/json: it called the upstream once",
		   "%s", msg);
	size_t n;
	const struct ig_mock_record *h = ig_mock_history(m, &n);
	CHECK(n == 1 && h[0].interception == 0,
	      "/proxy/json: and nothing else (the network stayed forbidden)");
	check_core_idle("/proxy/json: the core holds nothing afterwards");
	ig_test_mock_reset();
}

static void test_proxy_errors(void)
{
	ig_mock_agent *m = ig_test_mock();
	icept(m, &(struct ig_mock_match){ .origin = UPSTREAM, .path = "/json" },
			  &(struct ig_mock_reply){ .status = 503, .body = IG_STR_INIT("overloaded") }, 1);
	get("GET", "/proxy/json");
	CHECK_INT(r.status, 502, "/proxy/json: an upstream 503 gives 502");
	CHECK(type_is("application/problem+json"), "/proxy/json: as problem+json");
	check_that(body_has("\"upstream_status\":503"), "/proxy/json: the problem names the upstream status",
		   "%.*s", (int)r.body.len, r.body.ptr);

	icept(
		m, &(struct ig_mock_match){ .origin = UPSTREAM, .path = "/json" },
		&(struct ig_mock_reply){ .error = IG_CLIENT_CONNECT, .error_message = "connect to " UPSTREAM ": refused" },
		1);
	get("GET", "/proxy/json");
	CHECK(r.status == 502 && body_has("\"error\":\"connect\""), "/proxy/json: a refused connection gives 502 naming its kind");
	CHECK(!body_has(UPSTREAM) && !body_has("connect to"), "and not the upstream, nor the client's message (the log has it)");

	icept(
		m, &(struct ig_mock_match){ .origin = UPSTREAM, .path = "/json" },
		&(struct ig_mock_reply){ .error = IG_CLIENT_HEADERS_TIMEOUT, .error_message = "no head" }, 1);
	get("GET", "/proxy/json");
	CHECK(r.status == 504 && body_has("\"error\":\"headers_timeout\""),
	      "/proxy/json: an upstream timeout gives 504");

	get("GET", "/proxy/json"); /* no interception left: the network is forbidden */
	check_that(r.status == 502 && body_has("\"error\":\"net_forbidden\""),
		   "/proxy/json: with no interception, the forbidden network shows as 502 net_forbidden",
		   "status %d: %.*s", r.status, (int)r.body.len, r.body.ptr);
	char msg[512];
	check_that(ig_mock_assert_all_used(m, msg, sizeof msg), "/proxy/json errors: every interception used",
		   "%s", msg);
	check_core_idle("/proxy/json errors: the core holds nothing afterwards");
	ig_test_mock_reset();
}

/* ---- a client that leaves while its handler waits: below the API ---- */

static bool leaves_reported;

static void on_leaves_done(void *arg, enum http_inproc_result result, const struct http_inproc_response *res)
{
	(void)arg;
	(void)result;
	(void)res;
	leaves_reported = true;
}

static bool timed_out;

static void on_guard(struct ig_timer *t)
{
	(void)t;
	timed_out = true;
	core->loop.running = false;
}

/* Stops the loop once no exchange is left (checked every tick). */
static void on_idle_check(struct ig_timer *t)
{
	if (core->ctxs.in_use == 0)
		core->loop.running = false;
	else
		ig_timer_set(&core->loop.timers, t, core->loop.clock.now_ms + IG_TICK_MS);
}

static void test_client_leaves(void)
{
	ig_mock_agent *m = ig_test_mock();
	struct ig_mock_reply slow = { .status = 200, .body = IG_STR_INIT("{}"), .delay_ms = 20 };
	icept(m, &(struct ig_mock_match){ .path = "/json" }, &slow, 1);
	static struct http_inproc p;
	static char buf[64 * 1024];
	enum http_inproc_result result;
	const struct http_inproc_request req = { .method = IG_STR("GET"), .target = IG_STR("/proxy/json") };
	CHECK(ig_http_inproc_run(&p, core, buf, sizeof buf, &req, on_leaves_done, NULL, &result) == 0,
	      "client leaves: the request is in");
	CHECK(core->ctxs.in_use == 1 && ig_mock_times_used(m, 0) == 1, "client leaves: the call is out");
	p.open = false;
	p.t.engine_ops->closed(p.t.engine); /* a reset while the handler waits */
	struct ig_timer idle = { .fn = on_idle_check }, guard = { .fn = on_guard };
	ig_timer_set(&core->loop.timers, &idle, core->loop.clock.now_ms + IG_TICK_MS);
	ig_timer_set(&core->loop.timers, &guard, core->loop.clock.now_ms + 20000);
	ig_loop_run(&core->loop);
	ig_timer_cancel(&core->loop.timers, &idle);
	ig_timer_cancel(&core->loop.timers, &guard);
	CHECK(p.resp_len == 0, "client leaves: nothing is written to a gone client");
	check_core_idle("client leaves: the waiting call ends cancelled, the exchange with it, and the core holds "
			"nothing");
	ig_test_mock_reset();
}

static void test_fanout(void)
{
	ig_mock_agent *m = ig_test_mock();
	static const char health[] = "{\"status\":\"ok\"}";
	struct ig_mock_reply ok = { .status = 200,
				    .headers = json_type,
				    .header_count = 1,
				    .body = { health, sizeof health - 1 },
				    .delay_ms = 5 };
	icept(
		m, &(struct ig_mock_match){ .method = "GET", .origin = UPSTREAM, .path = "/health" }, &ok, 2);
	icept(
		m, &(struct ig_mock_match){ .method = "GET", .origin = UPSTREAM, .path = "/health" },
		&(struct ig_mock_reply){ .error = IG_CLIENT_RESET, .error_message = "reset by peer" }, 1);
	CHECK(get("GET", "/fanout?n=3"), "/fanout: a complete response");
	CHECK_INT(r.status, 200, "/fanout?n=3: 200 once every call has ended");
	check_that(body_has("\"requested\":3") && body_has("\"succeeded\":2") && body_has("\"slowest_ms\":"),
		   "/fanout?n=3: two of three succeed with one mocked error", "%.*s", (int)r.body.len,
		   r.body.ptr);
	size_t n;
	ig_mock_history(m, &n);
	CHECK_INT(n, 3, "/fanout?n=3: three upstream calls");
	char msg[512];
	check_that(ig_mock_assert_all_used(m, msg, sizeof msg), "/fanout: every interception used", "%s",
		   msg);

	icept(m, &(struct ig_mock_match){ .path = "/health" }, &ok, IG_MOCK_PERSIST);
	get("GET", "/fanout?n=10");
	check_that(r.status == 200 && body_has("\"requested\":10") && body_has("\"succeeded\":10"),
		   "/fanout?n=10: all ten succeed", "%.*s", (int)r.body.len, r.body.ptr);
	get("GET", "/fanout?n=0");
	CHECK_INT(r.status, 400, "/fanout?n=0: refused by the schema before the handler");
	ig_mock_history(m, &n);
	CHECK_INT(n, 13, "/fanout?n=0: no upstream call");
	check_core_idle("/fanout: the core holds nothing afterwards");
	ig_test_mock_reset();
}

/* An exchange points at the parser's field array and read buffer without
 * a copy; one that outlives them (pending, or with its body read into the
 * arena) must hold its own copy of both after detach, since the next parse
 * overwrites the array. */
static void test_detach(void)
{
	char buf[] = "GET /a?b HTTP/1.1\r\nHost: h\r\nX-Trace: t-1\r\n\r\n";
	ig_header fields[8];
	struct http_request r = { .headers = fields, .header_capacity = 8 };
	int n = ig_http_parse_request(buf, sizeof buf - 1, &r, &core->limits);
	struct ig_ctx *x = ig_http_ctx_new(core, NULL);
	CHECK(n == (int)sizeof buf - 1 && x, "detach: a parsed head and an exchange");
	if (!x)
		return;
	ig_http_ctx_set_request(x, &r, NULL, 0);
	CHECK(ig_req(x)->headers == fields, "detach: before it, the request is the parser's array");
	CHECK(ig_http_ctx_detach(x) == 0, "detach: the arena holds the request");
	memset(buf, 'z', sizeof buf - 1);
	for (size_t i = 0; i < 8; i++)
		fields[i] = (ig_header){ IG_STR_INIT("X-Trace"), IG_STR_INIT("clobbered") };
	ig_str v = ig_req_header(x, "x-trace");
	const ig_request *q = ig_req(x);
	check_that(q->num_headers == 2 && ig_str_eq(v, "t-1", 3) && ig_str_eq(q->path, "/a", 2) &&
			   ig_str_eq(q->headers[0].value, "h", 1),
		   "detach: fields and bytes survive the next parse", "%zu fields, X-Trace \"%.*s\"",
		   q->num_headers, (int)v.len, v.ptr ? v.ptr : "");
	ig_http_ctx_free(x);
	check_core_idle("detach: the exchange given back");
}

/* ig_http_out_head composes a head on the stack and appends it once; a field
 * that does not fit flushes what is composed and goes in by itself. Either
 * way the bytes in the output chain must be exactly the head. */
static void head_case(const char *name, int status, const char *ctype, size_t body_len, size_t extra_len,
		      bool close, int minor, const char *request_id)
{
	static char extra_bytes[3000], want[4096], got[4096];
	ig_wbuf extra = { 0 };
	if (extra_len) {
		/* One field "X-Long: aaa...\r\n" of extra_len octets in all. */
		memcpy(extra_bytes, "X-Long: ", 8);
		memset(extra_bytes + 8, 'a', extra_len - 10);
		memcpy(extra_bytes + extra_len - 2, "\r\n", 2);
		extra.ptr = extra_bytes;
		extra.len = extra_len;
	}
	struct http_conn c = { .core = core };
	ig_http_out_head(&c, status, ctype, body_len, &extra, (ig_str){ request_id, strlen(request_id) }, close, minor,
		      false);
	size_t n = 0;
	for (struct out_block *b = c.out_head, *next; b; b = next) {
		next = b->next;
		if (n + b->len <= sizeof got)
			memcpy(got + n, b->data, b->len);
		n += b->len;
		ig_pool_give(&core->blocks, b);
	}
	bool bodiless = status < 200 || status == 204 || status == 304;
	int w = snprintf(want, sizeof want, "HTTP/1.1 %d %s\r\n", status, ig_http_reason(status));
	if (ctype && !bodiless)
		w += snprintf(want + w, sizeof want - (size_t)w, "Content-Type: %s\r\n", ctype);
	if (!bodiless)
		w += snprintf(want + w, sizeof want - (size_t)w, "Content-Length: %zu\r\n", body_len);
	w += snprintf(want + w, sizeof want - (size_t)w, "%s%s%s%s%.*s%s\r\n", core->loop.clock.date_line,
		      *request_id ? "X-Request-Id: " : "", request_id, *request_id ? "\r\n" : "", (int)extra_len,
		      extra_bytes, close ? "Connection: close\r\n" : minor == 0 ? "Connection: keep-alive\r\n" : "");
	check_that(n == (size_t)w && n == c.out_bytes && memcmp(got, want, n) == 0, name,
		   "got %zu bytes (out_bytes %zu), want %d: %.*s", n, c.out_bytes, w, (int)(n < 400 ? n : 400), got);
}

static void test_response_head(void)
{
	head_case("head: 201 with a type and a short field", 201, "application/json", 97, 30, false, 1, "");
	head_case("head: 204 has no type or length", 204, "application/json", 0, 0, false, 1, "");
	head_case("head: HTTP/1.0 keep-alive", 200, "text/plain", 5, 0, false, 0, "");
	head_case("head: close", 400, "application/problem+json", 120, 0, true, 1, "");
	head_case("head: the request id echoed after Date", 200, "application/json", 2, 0, false, 1, "a\"b\\c-1");
	head_case("head: a field that overflows the stack buffer", 200, "application/json", 10, 480, true, 0,
		  "0123456789abcdef0123456789abcdef");
	head_case("head: a field longer than the stack buffer", 200, "application/json", 12345, 2500, false, 1, "");
	/* Every length a piece's short copy treats apart (1-3, 4-7, 8-15,
	   16-32, more), as a request id and as an extra field. */
	static const char id_chars[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN";
	char id[sizeof id_chars], name[80];
	for (size_t n = 1; n < sizeof id_chars; n++) {
		memcpy(id, id_chars, n);
		id[n] = 0;
		snprintf(name, sizeof name, "head: a request id of %zu characters, an extra field of %zu", n, n + 10);
		head_case(name, 200, "application/json", n, n + 10, false, 1, id);
	}
	check_core_idle("head: every output block returned");
}

static bool no_store(void)
{
	ig_str v = ig_test_header(&r, "cache-control");
	return ig_str_eq(v, "no-store", 8);
}

/* /livez and /readyz as the engine answers them on the main port, and a
 * document that defines /readyz itself keeping it. */
static void test_health(void)
{
	CHECK_INT(ig_http_health_free_paths(&ig_api_app), HTTP_HEALTH_LIVEZ | HTTP_HEALTH_READYZ,
		  "the reference document leaves /livez and /readyz to the engine");
	static const char *const own_routes[] = { "/items", "/readyz" };
	struct ig_app own = ig_api_app;
	own.routes = own_routes;
	own.route_count = 2;
	CHECK_INT(ig_http_health_free_paths(&own), HTTP_HEALTH_LIVEZ, "a document's own /readyz is not taken");

	CHECK(get("GET", "/livez") && r.status == 200 && ig_test_body_is(&r, "{\"status\":\"ok\"}"), "/livez: 200");
	CHECK(no_store(), "/livez: Cache-Control: no-store");
	CHECK(get("GET", "/readyz?verbose") && r.status == 200 && ig_test_body_is(&r, "{\"status\":\"ready\"}"),
	      "/readyz on the test core: 200 ready (the query is not the path)");
	CHECK(no_store(), "/readyz: Cache-Control: no-store");
	int db = ig_backend_register("db");
	CHECK(db >= 0, "a backend registers");
	CHECK(get("GET", "/readyz") && r.status == 503 &&
		      ig_test_body_is(&r, "{\"status\":\"backend down\",\"backend\":\"db\"}"),
	      "a registered backend not up yet: 503 naming it");
	ig_backend_set_up(db, true);
	CHECK(get("GET", "/readyz") && r.status == 200, "the backend up: 200");
	CHECK(get("GET", "/readyzz") && r.status == 404, "a longer path is the app's (404)");

	unsigned paths = core->health_paths;
	core->health_paths = HTTP_HEALTH_LIVEZ; /* as for a document with its own /readyz */
	CHECK(get("GET", "/readyz") && r.status == 404, "a path the document owns goes to its router");
	CHECK(get("GET", "/livez") && r.status == 200, "/livez still the engine's");

	core->health_paths = paths;
	ig_http_health_set_draining();
	CHECK(get("GET", "/readyz") && r.status == 503 && ig_test_body_is(&r, "{\"status\":\"draining\"}"),
	      "draining: 503");
	CHECK(get("GET", "/livez") && r.status == 200, "draining: /livez still 200");
	check_core_idle("health answers leave the core idle");
}

int main(void)
{
	setenv("UPSTREAM", UPSTREAM, 1);
	setenv("INGOT_LOG_LEVEL", "error", 1);
	setenv("INGOT_MAX_CONNS", "8", 1);
	CHECK(ig_test_request("GET", "/json", NULL, 0, IG_STR(""), &r) == IG_TEST_NOT_READY,
	      "before ig_test_init: not_ready");
	CHECK(!ig_http_health_ready(), "before the test core is up, the process is not ready");
	enum ig_test_error e = ig_test_init(&ig_api_app);
	check_that(e == IG_TEST_OK, "the test core is set up", "%s", ig_test_error_name(e));
	if (e != IG_TEST_OK)
		return check_done();
	core = ig_test_core();
	ig_log_threshold = -1; /* quiet: TAP on stdout */
	test_routes();
	test_database();
	test_proxy_json();
	test_proxy_errors();
	test_client_leaves();
	test_fanout();
	test_response_head();
	test_detach();
	test_health();
	CHECK(!timed_out, "no request hung");
	CHECK_INT(core->loop.timers.armed, 0, "no timer left armed");
	return check_done();
}
