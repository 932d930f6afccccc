/* In-process requests (net/http/inproc.h) and the Lambda events and
 * answers (net/lambda/event.h), without a socket: the reference service
 * on a core made by ig_http_inproc_core_init, each request run through the
 * connection engine and its response captured; then the event decoder's
 * requests and the answer encoder's JSON checked byte for byte, for what
 * the integration suite cannot reach through the reference routes (a
 * binary response body, Set-Cookie as cookies, the ALB's single Set-Cookie);
 * and a part's own requests (a worker and its slots, as the consumers and
 * the cron scheduler make them). Build: as tests/harness.h says. */
#include "tests/harness.h"
#include "tests/unit/check.h"
#include "net/http/inproc.h"
#include "net/lambda/event.h"

#include <stdlib.h>

static struct http_config config;
static struct http_core core;
static char buf[1 << 20];

/* ---- in-process requests ---- */

struct outcome {
	bool done;
	enum http_inproc_result result;
	int status;
	char body[4096];
	size_t body_len;
	char content_type[64];
	char request_id[160];
	size_t header_count;
};

static struct outcome got;
static struct http_inproc inproc;

static void copy_field(const struct http_inproc_response *res, const char *name, char *out, size_t cap)
{
	out[0] = 0;
	for (size_t i = 0; i < res->header_count; i++)
		if (ig_http_eq_nocase(res->headers[i].name.ptr, res->headers[i].name.len, name))
			snprintf(out, cap, "%.*s", (int)res->headers[i].value.len, res->headers[i].value.ptr);
}

static void on_done(void *arg, enum http_inproc_result result, const struct http_inproc_response *res)
{
	(void)arg;
	got.done = true;
	got.result = result;
	if (res) {
		got.status = res->status;
		got.body_len = res->body.len < sizeof got.body ? res->body.len : sizeof got.body;
		memcpy(got.body, res->body.ptr, got.body_len);
		copy_field(res, "content-type", got.content_type, sizeof got.content_type);
		copy_field(res, "x-request-id", got.request_id, sizeof got.request_id);
		got.header_count = res->header_count;
	}
	core.loop.running = false;
}

/* Runs one request to its end on the core's loop; the start's result. */
static int run(const char *method, const char *target, const ig_header *h, size_t n, const char *body, size_t cap,
	       enum http_inproc_result *start)
{
	memset(&got, 0, sizeof got);
	struct http_inproc_request r = { .method = { method, strlen(method) }, .target = { target, strlen(target) },
					 .headers = h, .header_count = n, .body = { body, body ? strlen(body) : 0 } };
	int rc = ig_http_inproc_run(&inproc, &core, buf, cap, &r, on_done, NULL, start);
	if (rc == 0)
		ig_loop_run(&core.loop);
	return rc;
}

static bool body_is(const char *s)
{
	return got.body_len == strlen(s) && memcmp(got.body, s, got.body_len) == 0;
}

static void test_inproc(void)
{
	enum http_inproc_result start;
	CHECK(run("GET", "/health", NULL, 0, NULL, sizeof buf, &start) == 0 && got.done, "a request runs to its end");
	CHECK(got.result == HTTP_INPROC_OK && got.status == 200 && body_is("{\"status\":\"ok\"}"),
	      "GET /health: 200 and its body");
	CHECK(strcmp(got.content_type, "application/json") == 0 && strlen(got.request_id) == 32,
	      "its fields: the content type and a made request id");

	const ig_header id[] = { { IG_STR_INIT("X-Request-Id"), IG_STR_INIT("inv-1") } };
	run("GET", "/delay/3", id, 1, NULL, sizeof buf, &start);
	CHECK(got.done && got.status == 200 && body_is("{\"delayed_ms\":3}") && strcmp(got.request_id, "inv-1") == 0,
	      "a pending handler (a timer) completes on the loop, with the given request id");

	const char *blog = "{\"title\":\"t\",\"body\":\"b\",\"likes\":1}";
	const ig_header json[] = { { IG_STR_INIT("Content-Type"), IG_STR_INIT("application/json") },
				   { IG_STR_INIT("Content-Length"), IG_STR_INIT("999") } };
	run("POST", "/blog", json, 2, blog, sizeof buf, &start);
	CHECK(got.status == 201, "a body: the event's own Content-Length is replaced by the body's");

	run("POST", "/validate", json, 1, "{\"name\":1}", sizeof buf, &start);
	CHECK(got.status == 400 && strcmp(got.content_type, "application/problem+json") == 0,
	      "a validation failure: 400 problem+json, as over HTTP");

	run("HEAD", "/health", NULL, 0, NULL, sizeof buf, &start);
	CHECK(got.status == 200 && got.body_len == 0, "HEAD: the status, no body");

	run("GET", "/nowhere", NULL, 0, NULL, sizeof buf, &start);
	CHECK(got.status == 404, "an unknown route: 404");

	const ig_header crlf[] = { { IG_STR_INIT("X-A"), IG_STR_INIT("a\r\nGET /json HTTP/1.1") } };
	got.done = false;
	CHECK(run("GET", "/health", crlf, 1, NULL, sizeof buf, &start) == -1 && start == HTTP_INPROC_BAD_FIELD &&
		      !got.done,
	      "a CR LF in a value is refused before the engine (no second request smuggled in)");
	CHECK(run("GET", "/a b", NULL, 0, NULL, sizeof buf, &start) == -1 && start == HTTP_INPROC_BAD_FIELD,
	      "a space in the target is refused");
	CHECK(run("GET", "/health", NULL, 0, NULL, 20, &start) == -1 && start == HTTP_INPROC_NO_ROOM,
	      "a request larger than the buffer: NO_ROOM");
	CHECK(run("GET", "/json", NULL, 0, NULL, 120, &start) == 0 && got.result == HTTP_INPROC_NO_ROOM,
	      "a response larger than the buffer: NO_ROOM, reported through done");
	CHECK_INT(core.count, 0, "every memory connection was closed");
}

/* ---- events ---- */

static ig_arena arena;

static ig_str field(const struct lambda_event *ev, const char *name)
{
	return ig_lambda_event_header(ev, name);
}

static bool str_is(ig_str s, const char *want)
{
	return s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

static int decode(const char *json, struct lambda_event *ev)
{
	const char *why;
	ig_arena_reset(&arena);
	return ig_lambda_event_decode(json, strlen(json), &arena, ev, &why);
}

/* ---- a part's own requests: a worker and its slots ---- */

static void test_worker(void)
{
	struct http_inproc_worker w;
	ig_http_inproc_worker_init(&w, &core.loop, 1);
	CHECK(w.core == &core, "a worker runs on the core whose loop it is given");

	struct http_inproc_slot slot, tiny;
	CHECK(ig_http_inproc_slot_init(&slot, &w, 64 * 1024, 5000) == 0 && slot.buf && slot.cap == 64 * 1024,
	      "a slot's buffer is taken when it is set up");
	CHECK(ig_http_inproc_slot_init(&tiny, &w, 16, 1000) == 0 && tiny.cap == 16, "a slot of 16 bytes");
	const struct http_inproc_request health = { .method = IG_STR_INIT("GET"), .target = IG_STR_INIT("/health") };
	enum http_inproc_result start;
	for (int i = 0; i < 2; i++) {
		memset(&got, 0, sizeof got);
		CHECK(ig_http_inproc_slot_run(&slot, &w, &health, on_done, NULL, &start) == 0, "a slot's request starts");
		ig_loop_run(&core.loop);
		CHECK(got.done && got.status == 200 && body_is("{\"status\":\"ok\"}"),
		      i ? "the slot runs its next request once its done has run" : "it runs to its end on the worker's core");
	}
	memset(&got, 0, sizeof got);
	CHECK(ig_http_inproc_slot_run(&tiny, &w, &health, on_done, NULL, &start) == -1 && start == HTTP_INPROC_NO_ROOM &&
		      !got.done,
	      "a request larger than the slot's buffer is not started: NO_ROOM, done not called");

	/* The arenas take blocks from the worker's pool (1 block here) and
	   keep to their own limits. */
	CHECK(ig_arena_alloc(&slot.arena, 1500) && ig_arena_alloc(&slot.arena, 1500), "a slot's arena gives memory");
	CHECK(!ig_arena_alloc(&slot.arena, 1500), "past the worker's blocks, under the arena's limit: nothing");
	CHECK(!ig_arena_alloc(&tiny.arena, 1500), "past the arena's limit: nothing");
	ig_arena_reset(&slot.arena);
	CHECK(ig_arena_alloc(&tiny.arena, 800) != NULL, "a reset gives the blocks back to the worker's pool");
	ig_arena_reset(&tiny.arena);
	free(slot.buf);
	free(tiny.buf);
}

static void test_events(void)
{
	struct lambda_event ev;
	CHECK(decode("{\"version\":\"2.0\",\"rawPath\":\"/a b/c\",\"rawQueryString\":\"x=1&x=2\","
		     "\"cookies\":[\"c1=1\",\"c2=2\"],\"headers\":{\"h\":\"v1,v2\"},"
		     "\"requestContext\":{\"http\":{\"method\":\"PUT\",\"sourceIp\":\"192.0.2.1\"}},"
		     "\"body\":\"aGk=\",\"isBase64Encoded\":true}",
		     &ev) == 0,
	      "2.0: decoded");
	CHECK(ev.kind == LAMBDA_EVENT_V2 && str_is(ev.req.method, "PUT") && str_is(ev.req.target, "/a%20b/c?x=1&x=2"),
	      "2.0: the method, rawPath (%-encoded where it must be) and rawQueryString as it is");
	CHECK(str_is(field(&ev, "cookie"), "c1=1; c2=2") && str_is(field(&ev, "h"), "v1,v2"),
	      "2.0: cookies as one Cookie field, joined headers as they came");
	CHECK(str_is(ev.req.body, "hi") && str_is(ev.req.peer, "192.0.2.1"), "2.0: the base64 body decoded, sourceIp");

	CHECK(decode("{\"version\":\"1.0\",\"httpMethod\":\"GET\",\"path\":\"/json\","
		     "\"requestContext\":{\"path\":\"/prod/json\",\"identity\":{\"sourceIp\":\"198.51.100.2\"}},"
		     "\"queryStringParameters\":{\"q\":\"last\"},"
		     "\"multiValueQueryStringParameters\":{\"q\":[\"a b\",\"c&d\"]},"
		     "\"headers\":{\"h\":\"2\"},\"multiValueHeaders\":{\"h\":[\"1\",\"2\"]},\"body\":null}",
		     &ev) == 0,
	      "1.0: decoded");
	CHECK(ev.kind == LAMBDA_EVENT_V1 && str_is(ev.req.target, "/json?q=a%20b&q=c%26d"),
	      "1.0: routed on path, not requestContext.path; the decoded multi-value query encoded again");
	CHECK(ev.req.header_count == 2 && str_is(ev.req.headers[0].value, "1") && str_is(ev.req.headers[1].value, "2"),
	      "1.0: multiValueHeaders as repeated fields");
	CHECK(ev.req.body.len == 0 && str_is(ev.req.peer, "198.51.100.2"), "1.0: a null body is empty; the source ip");

	CHECK(decode("{\"version\":\"1.0\",\"httpMethod\":\"GET\",\"path\":\"/json\","
		     "\"headers\":{\"h\":\"1\",\"accept\":\"*/*\"},\"multiValueHeaders\":{}}",
		     &ev) == 0 &&
		      ev.req.header_count == 2 && str_is(field(&ev, "h"), "1") && str_is(field(&ev, "accept"), "*/*"),
	      "1.0: an empty multiValueHeaders object leaves the fields to headers");
	CHECK(decode("{\"version\":\"1.0\",\"httpMethod\":\"GET\",\"path\":\"/json\","
		     "\"headers\":{\"h\":\"1\"},\"multiValueHeaders\":null}",
		     &ev) == 0 &&
		      ev.req.header_count == 1 && str_is(field(&ev, "h"), "1"),
	      "1.0: a null multiValueHeaders leaves the fields to headers");
	CHECK(decode("{\"requestContext\":{\"elb\":{\"targetGroupArn\":\"arn\"}},\"httpMethod\":\"GET\",\"path\":\"/x\","
		     "\"multiValueQueryStringParameters\":{\"q\":[\"a%20b\"]},\"multiValueHeaders\":{\"h\":[\"1\"]},"
		     "\"body\":\"\",\"isBase64Encoded\":false}",
		     &ev) == 0 &&
		      ev.kind == LAMBDA_EVENT_ALB && ev.multi_value && str_is(ev.req.target, "/x?q=a%20b"),
	      "ALB multi-value: the query as received (ALB does not decode it)");
	CHECK(decode("{\"requestContext\":{\"elb\":{}},\"httpMethod\":\"GET\",\"path\":\"/x\",\"headers\":{}}", &ev) == 0 &&
		      ev.kind == LAMBDA_EVENT_ALB && !ev.multi_value,
	      "ALB without multi-value headers");

	const char *why = NULL;
	ig_arena_reset(&arena);
	CHECK(ig_lambda_event_decode("{\"source\":\"aws.events\"}", 22, &arena, &ev, &why) == -1 && why,
	      "an event that is not HTTP is refused with a reason");
	CHECK(decode("{\"version\":\"2.0\",\"rawPath\":\"/\",\"requestContext\":{\"http\":{\"method\":\"GET\"}},"
		     "\"body\":\"@@@\",\"isBase64Encoded\":true}",
		     &ev) == -1,
	      "a body that is not base64 is refused");
}

/* ---- answers ---- */

static const ig_header answer_fields[] = {
	{ IG_STR_INIT("Content-Type"), IG_STR_INIT("application/octet-stream") },
	{ IG_STR_INIT("Date"), IG_STR_INIT("Sun, 06 Nov 1994 08:49:37 GMT") },
	{ IG_STR_INIT("Content-Length"), IG_STR_INIT("3") },
	{ IG_STR_INIT("Set-Cookie"), IG_STR_INIT("a=1; Path=/") },
	{ IG_STR_INIT("Vary"), IG_STR_INIT("x") },
	{ IG_STR_INIT("Set-Cookie"), IG_STR_INIT("b=2") },
	{ IG_STR_INIT("vary"), IG_STR_INIT("y") },
	{ IG_STR_INIT("Connection"), IG_STR_INIT("close") },
};

static bool encodes(enum lambda_event_kind kind, bool multi, ig_str body, const char *want)
{
	struct lambda_event ev = { .kind = kind, .multi_value = multi };
	struct http_inproc_response res = { .status = 200, .headers = answer_fields,
					    .header_count = IG_COUNTOF(answer_fields), .body = body };
	ig_arena_reset(&arena);
	ig_wbuf w = { .arena = &arena };
	bool ok = ig_lambda_reply_encode(&ev, &res, &w) && w.len == strlen(want) && memcmp(w.ptr, want, w.len) == 0;
	if (!ok)
		printf("# got  %.*s\n# want %s\n", (int)w.len, w.ptr, want);
	return ok;
}

static void test_answers(void)
{
	const ig_str binary = { "\xff\x00\x80", 3 }, text = { "h\"i", 3 };
	CHECK(encodes(LAMBDA_EVENT_V2, false, binary,
		      "{\"statusCode\":200,\"headers\":{\"Content-Type\":\"application/octet-stream\",\"Vary\":\"x, y\"},"
		      "\"cookies\":[\"a=1; Path=/\",\"b=2\"],\"body\":\"/wCA\",\"isBase64Encoded\":true}"),
	      "2.0: fields joined, Set-Cookie as cookies, Date/Content-Length/Connection left out, bytes as base64");
	CHECK(encodes(LAMBDA_EVENT_V1, false, text,
		      "{\"statusCode\":200,\"multiValueHeaders\":{\"Content-Type\":[\"application/octet-stream\"],"
		      "\"Set-Cookie\":[\"a=1; Path=/\",\"b=2\"],\"Vary\":[\"x\",\"y\"]},\"body\":\"h\\\"i\","
		      "\"isBase64Encoded\":false}"),
	      "1.0: multiValueHeaders; a UTF-8 body as text, escaped");
	CHECK(encodes(LAMBDA_EVENT_ALB, false, text,
		      "{\"statusCode\":200,\"statusDescription\":\"200 OK\",\"headers\":{\"Content-Type\":"
		      "\"application/octet-stream\",\"Set-Cookie\":\"a=1; Path=/\",\"Vary\":\"x, y\"},\"body\":\"h\\\"i\","
		      "\"isBase64Encoded\":false}"),
	      "ALB: statusDescription, and one Set-Cookie in the single-value form");
	const ig_header latin1[] = { { IG_STR_INIT("X-Name"), IG_STR_INIT("caf\xe9") },
				     { IG_STR_INIT("X-Ok"), IG_STR_INIT("caf\xc3\xa9") } };
	struct lambda_event ev = { .kind = LAMBDA_EVENT_V2 };
	struct http_inproc_response res = { .status = 204, .headers = latin1, .header_count = 2 };
	ig_arena_reset(&arena);
	ig_wbuf w = { .arena = &arena };
	const char *want = "{\"statusCode\":204,\"headers\":{\"X-Name\":\"caf\\u00e9\",\"X-Ok\":\"caf\xc3\xa9\"},"
			   "\"body\":\"\",\"isBase64Encoded\":false}";
	CHECK(ig_lambda_reply_encode(&ev, &res, &w) && w.len == strlen(want) && memcmp(w.ptr, want, w.len) == 0,
	      "a field value that is not UTF-8 is read as ISO-8859-1 (the JSON stays valid); UTF-8 stays as it is");
	CHECK(encodes(LAMBDA_EVENT_ALB, true, (ig_str){ "", 0 },
		      "{\"statusCode\":200,\"statusDescription\":\"200 OK\",\"multiValueHeaders\":{\"Content-Type\":"
		      "[\"application/octet-stream\"],\"Set-Cookie\":[\"a=1; Path=/\",\"b=2\"],\"Vary\":[\"x\",\"y\"]},"
		      "\"body\":\"\",\"isBase64Encoded\":false}"),
	      "ALB multi-value: every Set-Cookie");

	/* A big_text body costs memory in proportion to what it writes: 1.5 MB of
	 * plain big_text fits an arena of 6 MB (reserving six bytes a byte up
	 * front would ask for 9 MB, rounded up to 16). */
	size_t big = 3u << 19;
	char *big_text = malloc(big);
	memset(big_text, 'a', big);
	ig_arena small;
	ig_arena_init(&small, &core.blocks, 6u << 20);
	struct lambda_event ev2 = { .kind = LAMBDA_EVENT_V2 };
	struct http_inproc_response big_res = { .status = 200, .body = { big_text, big } };
	ig_wbuf bw = { .arena = &small };
	CHECK(ig_lambda_reply_encode(&ev2, &big_res, &bw) && bw.len > big && bw.ptr[bw.len - 1] == '}',
	      "a 1.5 MB text body is written in an arena of 6 MB");
	ig_arena_reset(&small);
	free(big_text);
}

int main(void)
{
	ig_log_threshold = -1; /* quiet: TAP on stdout */
	harness_config_defaults(&config);
	config.max_conns = 8;
	if (ig_http_inproc_core_init(&core, &config, harness_app) != 0) {
		printf("Bail out! no core\n");
		return 1;
	}
	ig_arena_init(&arena, &core.blocks, 1 << 20);
	test_inproc();
	test_worker();
	test_events();
	test_answers();
	return check_done();
}
