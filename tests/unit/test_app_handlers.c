/* The reference service's outbound handlers (GET /proxy/json, GET /fanout)
 * with the mock agent in place of the network, which is forbidden: the
 * real connection engine, generated router and app/service.c handlers run
 * on a core set up here (as tests/fuzz/fuzz_http.c does, standing in for
 * server.c), requests arrive through a memory transport, and the mock's
 * replies come from timers on that core's loop, so each handler really
 * goes pending and finishes from its completion callback. The same core
 * also checks the response head writer (http_out_head) byte for byte,
 * including fields longer than its stack buffer, which no route produces,
 * and that a detached exchange keeps its request when the parser's field
 * array is reused. Build: as tests/harness.h says. */
#include "tests/harness.h"
#include "tests/unit/check.h"
#include "net/http/health.h"

#include <stdlib.h>
#include <strings.h>

#define UPSTREAM "http://upstream.test:8080"
#define OUT_CAP (256 * 1024)

static struct http_config config; /* server.c's defaults, 8 connections */
static struct http_core core;

/* ---- a memory transport: the test is the client ---- */

struct mem_transport {
	struct ig_transport t; /* first: the engine's handle */
	bool open;
	char out[OUT_CAP];
	size_t out_len;
};

static struct mem_transport tr;

/* Length of the first complete response in out, or 0. */
static size_t response_length(void)
{
	const char *end = memmem(tr.out, tr.out_len, "\r\n\r\n", 4);
	if (!end)
		return 0;
	size_t head = (size_t)(end - tr.out) + 4, length = 0;
	for (const char *p = tr.out; p && p < end; p = memchr(p, '\n', (size_t)(end - p)), p = p ? p + 1 : p)
		if ((size_t)(end - p) > 15 && strncasecmp(p, "content-length:", 15) == 0)
			length = strtoul(p + 15, NULL, 10);
	return tr.out_len >= head + length ? head + length : 0;
}

static ssize_t mem_writev(struct ig_transport *t, const struct iovec *iov, int iovcnt)
{
	(void)t;
	size_t n = 0;
	for (int i = 0; i < iovcnt; i++) {
		size_t k = iov[i].iov_len;
		if (k > OUT_CAP - tr.out_len)
			k = OUT_CAP - tr.out_len;
		memcpy(tr.out + tr.out_len, iov[i].iov_base, k);
		tr.out_len += k;
		n += k;
	}
	if (response_length())
		core.loop.running = false; /* the answer is here */
	return (ssize_t)n;
}

static void mem_resume_read(struct ig_transport *t)
{
	(void)t;
}

static void mem_close(struct ig_transport *t, int graceful)
{
	(void)t;
	(void)graceful;
	tr.open = false;
	core.loop.running = false;
}

static const struct ig_transport_ops mem_ops = {
	.writev = mem_writev,
	.resume_read = mem_resume_read,
	.close = mem_close,
};

static bool feed(const char *bytes, size_t len)
{
	while (len && tr.open) {
		size_t cap = 0;
		char *buf = tr.t.engine_ops->lend(tr.t.engine, &cap);
		if (!buf || cap == 0)
			return false;
		size_t n = len < cap ? len : cap;
		memcpy(buf, bytes, n);
		tr.t.engine_ops->received(tr.t.engine, n);
		bytes += n;
		len -= n;
	}
	return len == 0;
}

static bool timed_out;

static void on_guard(struct ig_timer *t)
{
	(void)t;
	timed_out = true;
	core.loop.running = false;
}

/* ---- one request, one response ---- */

struct answer {
	int status;
	char content_type[64];
	const char *body;
	size_t body_len;
	bool went_pending; /* no answer before the loop ran */
};

static bool answer_parse(struct answer *a)
{
	size_t total = response_length();
	if (total == 0 || tr.out_len < 12 || memcmp(tr.out, "HTTP/1.1 ", 9) != 0)
		return false;
	a->status = atoi(tr.out + 9);
	const char *end = memmem(tr.out, tr.out_len, "\r\n\r\n", 4);
	a->body = end + 4;
	a->body_len = total - (size_t)(a->body - tr.out);
	a->content_type[0] = 0;
	for (const char *p = tr.out; p && p < end;
	     p = memchr(p, '\n', (size_t)(end - p)), p = p ? p + 1 : p) {
		if ((size_t)(end - p) > 13 && strncasecmp(p, "content-type:", 13) == 0) {
			const char *v = p + 13;
			while (*v == ' ')
				v++;
			size_t n = strcspn(v, "\r");
			if (n >= sizeof a->content_type)
				n = sizeof a->content_type - 1;
			memcpy(a->content_type, v, n);
			a->content_type[n] = 0;
		}
	}
	return true;
}

/* Sends "GET target", runs the loop until the response is complete, then
 * ends the connection (FIN) and checks that the core is back to nothing. */
static bool get(const char *target, struct answer *a)
{
	*a = (struct answer){ 0 };
	tr.open = true;
	tr.out_len = 0;
	tr.t = (struct ig_transport){ .ops = &mem_ops, .loop = &core.loop };
	if (!http_conn_accept(&core, &tr.t))
		return false;
	char req[512];
	int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: service.test\r\n\r\n", target);
	if (!feed(req, (size_t)n))
		return false;
	a->went_pending = response_length() == 0;
	if (a->went_pending) {
		struct ig_timer guard = { .fn = on_guard };
		ig_timer_set(&core.loop.timers, &guard, core.loop.clock.now_ms + 20000);
		ig_loop_run(&core.loop);
		ig_timer_cancel(&core.loop.timers, &guard);
	}
	bool ok = answer_parse(a);
	if (tr.open) { /* the client finishes: FIN */
		size_t cap;
		if (tr.t.engine_ops->lend(tr.t.engine, &cap))
			tr.t.engine_ops->received(tr.t.engine, 0);
	}
	return ok && !tr.open;
}

static bool body_is(const struct answer *a, const char *want)
{
	return a->body_len == strlen(want) && memcmp(a->body, want, a->body_len) == 0;
}

static bool body_has(const struct answer *a, const char *part)
{
	return memmem(a->body, a->body_len, part, strlen(part)) != NULL;
}

static void check_core_idle(const char *name)
{
	check_that(core.conns.in_use == 0 && core.ctxs.in_use == 0 && core.rbufs.in_use == 0 &&
			   core.blocks.in_use == 0 && core.live == NULL,
		   name, "conns %zu, exchanges %zu, rbufs %zu, blocks %zu", core.conns.in_use,
		   core.ctxs.in_use, core.rbufs.in_use, core.blocks.in_use);
}

/* ---- the cases ---- */

static const char upstream_json[] = "{\"id\":7,\"name\":\"from the mock\",\"tags\":[],\"price\":1.5,"
				    "\"stock\":{\"warehouse\":\"south\",\"count\":3},\"active\":false}";

static const ig_header json_type[] = { { IG_STR_INIT("Content-Type"), IG_STR_INIT("application/json") } };

static void test_proxy_json(void)
{
	ig_mock_agent *m = harness_mock_network(&core);
	ig_mock_intercept(m, &(struct ig_mock_match){ .method = "GET", .origin = UPSTREAM, .path = "/json" },
			  &(struct ig_mock_reply){ .status = 200,
						   .headers = json_type,
						   .header_count = 1,
						   .body = { upstream_json, sizeof upstream_json - 1 } },
			  1);
	struct answer a;
	CHECK(get("/proxy/json", &a), "/proxy/json: a complete response");
	CHECK(a.went_pending, "/proxy/json: the handler went pending until the upstream answered");
	CHECK_INT(a.status, 200, "/proxy/json: 200");
	check_that(body_is(&a, upstream_json), "/proxy/json: the upstream's body exactly", "got %.*s",
		   (int)a.body_len, a.body);
	CHECK(strncmp(a.content_type, "application/json", 16) == 0, "/proxy/json: application/json");
	char msg[512];
	check_that(ig_mock_assert_all_used(m, msg, sizeof msg), "/proxy/json: it called the upstream once",
		   "%s", msg);
	size_t n;
	const struct ig_mock_record *h = ig_mock_history(m, &n);
	CHECK(n == 1 && h[0].interception == 0,
	      "/proxy/json: and nothing else (the network stayed forbidden)");
	check_core_idle("/proxy/json: the core holds nothing afterwards");
	harness_unmock_network(&core, m);
}

static void test_proxy_errors(void)
{
	ig_mock_agent *m = harness_mock_network(&core);
	ig_mock_intercept(m, &(struct ig_mock_match){ .origin = UPSTREAM, .path = "/json" },
			  &(struct ig_mock_reply){ .status = 503, .body = IG_STR_INIT("overloaded") }, 1);
	struct answer a;
	get("/proxy/json", &a);
	CHECK_INT(a.status, 502, "/proxy/json: an upstream 503 gives 502");
	CHECK(strncmp(a.content_type, "application/problem+json", 24) == 0, "/proxy/json: as problem+json");
	check_that(body_has(&a, "\"upstream_status\":503"),
		   "/proxy/json: the problem names the upstream status", "%.*s", (int)a.body_len, a.body);

	ig_mock_intercept(
		m, &(struct ig_mock_match){ .origin = UPSTREAM, .path = "/json" },
		&(struct ig_mock_reply){ .error = IG_CLIENT_CONNECT, .error_message = "connection refused" },
		1);
	get("/proxy/json", &a);
	CHECK(a.status == 502 && body_has(&a, "\"error\":\"connect\"") && body_has(&a, "connection refused"),
	      "/proxy/json: a refused connection gives 502 naming it");

	ig_mock_intercept(
		m, &(struct ig_mock_match){ .origin = UPSTREAM, .path = "/json" },
		&(struct ig_mock_reply){ .error = IG_CLIENT_HEADERS_TIMEOUT, .error_message = "no head" }, 1);
	get("/proxy/json", &a);
	CHECK(a.status == 504 && body_has(&a, "\"error\":\"headers_timeout\""),
	      "/proxy/json: an upstream timeout gives 504");

	get("/proxy/json", &a); /* no interception left: the network is forbidden */
	check_that(a.status == 502 && body_has(&a, "\"error\":\"net_forbidden\""),
		   "/proxy/json: with no interception, the forbidden network shows as 502 net_forbidden",
		   "status %d: %.*s", a.status, (int)a.body_len, a.body);
	char msg[512];
	check_that(ig_mock_assert_all_used(m, msg, sizeof msg), "/proxy/json errors: every interception used",
		   "%s", msg);
	check_core_idle("/proxy/json errors: the core holds nothing afterwards");
	harness_unmock_network(&core, m);
}

/* Stops the loop once no exchange is left (checked every tick). */
static void on_idle_check(struct ig_timer *t)
{
	if (core.ctxs.in_use == 0)
		core.loop.running = false;
	else
		ig_timer_set(&core.loop.timers, t, core.loop.clock.now_ms + IG_TICK_MS);
}

static void test_client_leaves(void)
{
	ig_mock_agent *m = harness_mock_network(&core);
	struct ig_mock_reply slow = { .status = 200, .body = IG_STR_INIT("{}"), .delay_ms = 20 };
	ig_mock_intercept(m, &(struct ig_mock_match){ .path = "/json" }, &slow, 1);
	tr = (struct mem_transport){ .t = { .ops = &mem_ops, .loop = &core.loop }, .open = true };
	http_conn_accept(&core, &tr.t);
	static const char req[] = "GET /proxy/json HTTP/1.1\r\nHost: service.test\r\n\r\n";
	feed(req, sizeof req - 1);
	CHECK(core.ctxs.in_use == 1 && ig_mock_times_used(m, 0) == 1, "client leaves: the call is out");
	tr.open = false;
	tr.t.engine_ops->closed(tr.t.engine); /* a reset while the handler is pending */
	struct ig_timer idle = { .fn = on_idle_check }, guard = { .fn = on_guard };
	ig_timer_set(&core.loop.timers, &idle, core.loop.clock.now_ms + IG_TICK_MS);
	ig_timer_set(&core.loop.timers, &guard, core.loop.clock.now_ms + 20000);
	ig_loop_run(&core.loop);
	ig_timer_cancel(&core.loop.timers, &idle);
	ig_timer_cancel(&core.loop.timers, &guard);
	CHECK(tr.out_len == 0, "client leaves: nothing is written to a gone client");
	check_core_idle("client leaves: the upstream's late answer finishes the exchange, and the core holds "
			"nothing");
	harness_unmock_network(&core, m);
}

static void test_fanout(void)
{
	ig_mock_agent *m = harness_mock_network(&core);
	static const char health[] = "{\"status\":\"ok\"}";
	struct ig_mock_reply ok = { .status = 200,
				    .headers = json_type,
				    .header_count = 1,
				    .body = { health, sizeof health - 1 },
				    .delay_ms = 5 };
	ig_mock_intercept(
		m, &(struct ig_mock_match){ .method = "GET", .origin = UPSTREAM, .path = "/health" }, &ok, 2);
	ig_mock_intercept(
		m, &(struct ig_mock_match){ .method = "GET", .origin = UPSTREAM, .path = "/health" },
		&(struct ig_mock_reply){ .error = IG_CLIENT_RESET, .error_message = "reset by peer" }, 1);
	struct answer a;
	CHECK(get("/fanout?n=3", &a), "/fanout: a complete response");
	CHECK(a.went_pending && a.status == 200, "/fanout?n=3: 200 once every call has ended");
	check_that(body_has(&a, "\"requested\":3") && body_has(&a, "\"succeeded\":2") &&
			   body_has(&a, "\"slowest_ms\":"),
		   "/fanout?n=3: two of three succeed with one mocked error", "%.*s", (int)a.body_len,
		   a.body);
	size_t n;
	ig_mock_history(m, &n);
	CHECK_INT(n, 3, "/fanout?n=3: three upstream calls");
	char msg[512];
	check_that(ig_mock_assert_all_used(m, msg, sizeof msg), "/fanout: every interception used", "%s",
		   msg);

	ig_mock_intercept(m, &(struct ig_mock_match){ .path = "/health" }, &ok, IG_MOCK_PERSIST);
	get("/fanout?n=10", &a);
	check_that(a.status == 200 && body_has(&a, "\"requested\":10") && body_has(&a, "\"succeeded\":10"),
		   "/fanout?n=10: all ten succeed", "%.*s", (int)a.body_len, a.body);
	get("/fanout?n=0", &a);
	CHECK_INT(a.status, 400, "/fanout?n=0: refused by the schema before the handler");
	ig_mock_history(m, &n);
	CHECK_INT(n, 13, "/fanout?n=0: no upstream call");
	check_core_idle("/fanout: the core holds nothing afterwards");
	harness_unmock_network(&core, m);
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
	int n = http_parse_request(buf, sizeof buf - 1, &r, &core.limits);
	struct ig_ctx *x = http_ctx_new(&core, NULL);
	CHECK(n == (int)sizeof buf - 1 && x, "detach: a parsed head and an exchange");
	if (!x)
		return;
	http_ctx_set_request(x, &r, NULL, 0);
	CHECK(ig_req(x)->headers == fields, "detach: before it, the request is the parser's array");
	CHECK(http_ctx_detach(x) == 0, "detach: the arena holds the request");
	memset(buf, 'z', sizeof buf - 1);
	for (size_t i = 0; i < 8; i++)
		fields[i] = (ig_header){ IG_STR_INIT("X-Trace"), IG_STR_INIT("clobbered") };
	ig_str v = ig_req_header(x, "x-trace");
	const ig_request *q = ig_req(x);
	check_that(q->num_headers == 2 && ig_str_eq(v, "t-1", 3) && ig_str_eq(q->path, "/a", 2) &&
			   ig_str_eq(q->headers[0].value, "h", 1),
		   "detach: fields and bytes survive the next parse", "%zu fields, X-Trace \"%.*s\"",
		   q->num_headers, (int)v.len, v.ptr ? v.ptr : "");
	http_ctx_free(x);
	check_core_idle("detach: the exchange given back");
}

/* http_out_head composes a head on the stack and appends it once; a field
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
	struct http_conn c = { .core = &core };
	http_out_head(&c, status, ctype, body_len, &extra, (ig_str){ request_id, strlen(request_id) }, close, minor,
		      false);
	size_t n = 0;
	for (struct out_block *b = c.out_head, *next; b; b = next) {
		next = b->next;
		if (n + b->len <= sizeof got)
			memcpy(got + n, b->data, b->len);
		n += b->len;
		ig_pool_give(&core.blocks, b);
	}
	bool bodiless = status < 200 || status == 204 || status == 304;
	int w = snprintf(want, sizeof want, "HTTP/1.1 %d %s\r\n", status, http_reason(status));
	if (ctype && !bodiless)
		w += snprintf(want + w, sizeof want - (size_t)w, "Content-Type: %s\r\n", ctype);
	if (!bodiless)
		w += snprintf(want + w, sizeof want - (size_t)w, "Content-Length: %zu\r\n", body_len);
	w += snprintf(want + w, sizeof want - (size_t)w, "%s%s%s%s%.*s%s\r\n", core.loop.clock.date_line,
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

static bool head_has(const char *field)
{
	const char *end = memmem(tr.out, tr.out_len, "\r\n\r\n", 4);
	return end && memmem(tr.out, (size_t)(end - tr.out), field, strlen(field));
}

/* /livez and /readyz as the engine answers them on the main port, and a
 * document that defines /readyz itself keeping it. */
static void test_health(void)
{
	struct answer a;
	CHECK_INT(http_health_free_paths(harness_app), HTTP_HEALTH_LIVEZ | HTTP_HEALTH_READYZ,
		  "the reference document leaves /livez and /readyz to the engine");
	static const char *const own_routes[] = { "/items", "/readyz" };
	struct ig_app own = *harness_app;
	own.routes = own_routes;
	own.route_count = 2;
	CHECK_INT(http_health_free_paths(&own), HTTP_HEALTH_LIVEZ, "a document's own /readyz is not taken");

	core.health_paths = http_health_free_paths(harness_app);
	CHECK(get("/livez", &a) && a.status == 200 && body_is(&a, "{\"status\":\"ok\"}"), "/livez: 200");
	CHECK(head_has("Cache-Control: no-store"), "/livez: Cache-Control: no-store");
	CHECK(get("/readyz", &a) && a.status == 503 && body_is(&a, "{\"status\":\"starting\"}"),
	      "/readyz before the listeners are up: 503 starting");
	http_health_set_listening();
	CHECK(get("/readyz?verbose", &a) && a.status == 200 && body_is(&a, "{\"status\":\"ready\"}"),
	      "/readyz with the listeners up: 200 ready (the query is not the path)");
	CHECK(head_has("Cache-Control: no-store"), "/readyz: Cache-Control: no-store");
	int db = ig_backend_register("db");
	CHECK(db >= 0, "a backend registers");
	CHECK(get("/readyz", &a) && a.status == 503 &&
		      body_is(&a, "{\"status\":\"backend down\",\"backend\":\"db\"}"),
	      "a registered backend not up yet: 503 naming it");
	ig_backend_set_up(db, true);
	CHECK(get("/readyz", &a) && a.status == 200, "the backend up: 200");
	CHECK(get("/readyzz", &a) && a.status == 404, "a longer path is the app's (404)");

	core.health_paths = HTTP_HEALTH_LIVEZ; /* as for a document with its own /readyz */
	CHECK(get("/readyz", &a) && a.status == 404, "a path the document owns goes to its router");
	CHECK(get("/livez", &a) && a.status == 200, "/livez still the engine's");

	core.health_paths = http_health_free_paths(harness_app);
	http_health_set_draining();
	CHECK(get("/readyz", &a) && a.status == 503 && body_is(&a, "{\"status\":\"draining\"}"),
	      "draining: 503");
	CHECK(get("/livez", &a) && a.status == 200, "draining: /livez still 200");
	check_core_idle("health answers leave the core idle");
}

int main(void)
{
	ig_log_threshold = -1; /* quiet: TAP on stdout */
	setenv("INGOT_UPSTREAM", UPSTREAM, 1);
	harness_config_defaults(&config);
	config.max_conns = 8;
	harness_core_init(&core, &config, harness_app);
	test_proxy_json();
	test_proxy_errors();
	test_client_leaves();
	test_fanout();
	test_response_head();
	test_detach();
	test_health();
	CHECK(!timed_out, "no request hung");
	CHECK_INT(core.loop.timers.armed, 0, "no timer left armed");
	return check_done();
}
