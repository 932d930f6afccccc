/* The request API, the retry and redirect interceptors and the mock agent,
 * on a real loop (kernel/runtime/loop.h) in this process: every reply comes from
 * the mock's timers, so the order of events is the loop's, and waits are
 * checked with the loop's clock as the mock recorded it, never with
 * sleeps. */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "ingot/client.h"
#include "ingot/client_interceptors.h"
#include "ingot/client_mock.h"
#include "tests/unit/check.h"

#include <stdlib.h>

static struct ig_loop loop;
static struct ig_pool blocks;
static int outstanding; /* calls whose done has not run */
static bool timed_out;

struct result {
	int calls;            /* how many times done ran */
	bool during_dispatch; /* done ran before ig_fetch returned */
	ig_response res;
	uint64_t at_ms;
};

static bool dispatching;

static void on_done(ig_response *res, void *arg)
{
	struct result *r = arg;
	r->calls++;
	r->during_dispatch = dispatching;
	r->res = *res;
	r->at_ms = loop.clock.now_ms;
	if (--outstanding == 0)
		loop.running = false;
}

static void on_guard(struct ig_timer *t)
{
	(void)t;
	timed_out = true;
	loop.running = false;
}

/* Runs the loop until every started call is done (or 20 s pass: a hang). */
static bool run(void)
{
	if (outstanding == 0)
		return true;
	struct ig_timer guard = { .fn = on_guard };
	ig_timer_set(&loop.timers, &guard, loop.clock.now_ms + 20000);
	ig_loop_run(&loop);
	ig_timer_cancel(&loop.timers, &guard);
	return !timed_out && outstanding == 0;
}

static ig_call *start(ig_dispatcher *d, ig_arena *a, const ig_fetch_opts *o, struct result *r)
{
	*r = (struct result){ 0 };
	outstanding++;
	dispatching = true;
	ig_call *call = ig_fetch(d, a, o, on_done, r);
	dispatching = false;
	return call;
}

/* One fetch, run to its end. */
static void fetch(ig_dispatcher *d, ig_arena *a, const ig_fetch_opts *o, struct result *r)
{
	start(d, a, o, r);
	run();
}

#define GET(u) (&(ig_fetch_opts){ .url = (u) })

static bool body_is(const ig_response *res, const char *want)
{
	return res->body.len == strlen(want) && memcmp(res->body.ptr, want, res->body.len) == 0;
}

static const ig_str *header(const ig_response *res, const char *name)
{
	return ig_header_find(res->headers, res->header_count, name);
}

static const ig_header json_type[] = { { IG_STR_INIT("content-type"), IG_STR_INIT("application/json") },
				       { IG_STR_INIT("x-served-by"), IG_STR_INIT("mock") } };

static struct ig_mock_reply reply(int status, const char *body)
{
	return (struct ig_mock_reply){ .status = status, .body = { body, strlen(body) } };
}

static struct ig_mock_reply fail(enum ig_client_error e, const char *message)
{
	return (struct ig_mock_reply){ .error = e, .error_message = message };
}

static struct ig_mock_match at(const char *method, const char *origin, const char *path)
{
	return (struct ig_mock_match){ .method = method, .origin = origin, .path = path };
}

/* Registers an interception; one that does not register fails the test
 * here rather than as a puzzling reply later. */
static int icept(ig_mock_agent *m, struct ig_mock_match match, struct ig_mock_reply rep, uint32_t times)
{
	int i = ig_mock_intercept(m, &match, &rep, times);
	if (i < 0)
		check_that(false, "mock: the test's interception registers", "%s", match.path ? match.path : "");
	return i;
}

static struct ig_retry_opts quick_retries(void)
{
	return (struct ig_retry_opts){ .min_delay_ms = 1, .max_delay_ms = 2, .seed = 42 };
}

/* ---- the request API through the mock ---- */

static void test_fetch_exact(ig_arena *a)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	struct ig_mock_reply rep = reply(200, "{\"a\":[1,2,3]}");
	rep.headers = json_type;
	rep.header_count = 2;
	CHECK(ig_mock_intercept(m, &(struct ig_mock_match){ .method = "GET", .origin = "http://api.test", .path = "/json" },
				&rep, 1) == 0,
	      "mock: the first interception is number 0");
	struct result r;
	fetch(ig_mock_dispatcher(m), a, &(ig_fetch_opts){ .url = "http://api.test:80/json" }, &r);
	CHECK_INT(r.calls, 1, "fetch: done runs once");
	CHECK(!r.during_dispatch, "fetch: the mock replies on the loop, not inside dispatch");
	CHECK_INT(r.res.error, IG_CLIENT_OK, "fetch: no error");
	CHECK_INT(r.res.status, 200, "fetch: the mocked status");
	CHECK(body_is(&r.res, "{\"a\":[1,2,3]}"), "fetch: the body exactly");
	CHECK_INT(r.res.header_count, 2, "fetch: every header");
	const ig_str *ct = header(&r.res, "Content-Type");
	CHECK(ct && ig_str_eq(*ct, "application/json", 16), "fetch: header values exactly");
	char msg[256];
	CHECK(ig_mock_assert_all_used(m, msg, sizeof msg), "mock: all used after the one call");
	size_t n;
	const struct ig_mock_record *h = ig_mock_history(m, &n);
	CHECK(n == 1 && strcmp(h[0].method, "GET") == 0 && strcmp(h[0].origin, "http://api.test:80") == 0 &&
		      strcmp(h[0].path, "/json") == 0 && h[0].interception == 0,
	      "mock: the history records method, origin and path");
	ig_mock_agent_free(m);
	ig_arena_reset(a);
}

static void test_fetch_limits(ig_arena *a)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	struct ig_mock_reply big = reply(200, "0123456789");
	big.chunk_size = 3;
	icept(m, (struct ig_mock_match){ .path = "/big" }, big, IG_MOCK_PERSIST);
	struct result r;
	fetch(ig_mock_dispatcher(m), a, &(ig_fetch_opts){ .url = "http://api.test/big", .max_body_bytes = 4 },
	      &r);
	CHECK_INT(r.res.error, IG_CLIENT_TOO_LARGE, "fetch: a body over max_body_bytes fails the call");
	CHECK_INT(r.calls, 1, "fetch: too large still runs done once");
	fetch(ig_mock_dispatcher(m), a,
	      &(ig_fetch_opts){ .url = "http://api.test/big", .max_body_bytes = 10 }, &r);
	CHECK(r.res.error == IG_CLIENT_OK && body_is(&r.res, "0123456789"),
	      "fetch: a body of exactly max_body_bytes arrives whole, from pieces");

	outstanding++;
	dispatching = true;
	ig_call *call = ig_fetch(ig_mock_dispatcher(m), a, &(ig_fetch_opts){ .url = "ftp://api.test/x" },
				 on_done, &r);
	dispatching = false;
	CHECK(call == NULL && r.res.error == IG_CLIENT_BAD_REQUEST && r.during_dispatch,
	      "fetch: a bad URL fails at once with bad_request");
	r = (struct result){ 0 };
	outstanding++;
	call = ig_fetch(ig_mock_dispatcher(m), a, &(ig_fetch_opts){ .url = "http://api.test/big" }, on_done,
			&r);
	ig_call_abort(call);
	CHECK(r.calls == 1 && r.res.error == IG_CLIENT_ABORTED,
	      "fetch: ig_call_abort ends the call with aborted");
	run();
	CHECK_INT(r.calls, 1, "fetch: nothing after an abort");
	ig_mock_agent_free(m);
	ig_arena_reset(a);
}

/* ---- retry ---- */

static void test_retry_status(ig_arena *a)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	struct ig_retry_opts o = quick_retries();
	ig_dispatcher *d = ig_retry_new(ig_mock_dispatcher(m), &o);
	icept(m, at("GET", "http://api.test", "/flaky"), reply(503, "busy"), 1);
	icept(m, at("GET", "http://api.test", "/flaky"), reply(200, "fine"), 1);
	struct result r;
	fetch(d, a, &(ig_fetch_opts){ .url = "http://api.test/flaky" }, &r);
	CHECK(r.res.status == 200 && body_is(&r.res, "fine"),
	      "retry: 503 then 200 gives the 200 and its body only");
	CHECK_INT(r.res.retries, 1, "retry: one retry counted");
	CHECK_INT(r.calls, 1, "retry: done once");

	icept(m, at("GET", NULL, "/down"), reply(503, "still busy"), IG_MOCK_PERSIST);
	fetch(d, a, GET("http://api.test/down"), &r);
	size_t n;
	ig_mock_history(m, &n);
	CHECK(r.res.status == 503 && body_is(&r.res, "still busy"),
	      "retry: when the retries are used up, the last 503 reaches the caller");
	CHECK_INT(r.res.retries, 2, "retry: the default limit is 2 retries");
	CHECK_INT(n, 2 + 3, "retry: three attempts in all");

	icept(m, at("POST", NULL, "/post"), reply(503, "no"), IG_MOCK_PERSIST);
	fetch(d, a, &(ig_fetch_opts){ .method = "POST", .url = "http://api.test/post", .body = IG_STR("x") },
	      &r);
	CHECK(r.res.status == 503 && r.res.retries == 0 && ig_mock_times_used(m, 3) == 1,
	      "retry: POST is not retried by default");
	d->ops->destroy(d);

	/* methods: POST declared safe to repeat. */
	static const char *const post_too[] = { "GET", "POST", NULL };
	m = ig_mock_agent_new(&loop, NULL);
	o.methods = post_too;
	o.max_retries = 1;
	d = ig_retry_new(ig_mock_dispatcher(m), &o);
	icept(m, at("POST", NULL, "/post"), reply(503, "no"), IG_MOCK_PERSIST);
	fetch(d, a, &(ig_fetch_opts){ .method = "POST", .url = "http://api.test/post", .body = IG_STR("x") },
	      &r);
	CHECK(r.res.status == 503 && r.res.retries == 1 && ig_mock_times_used(m, 0) == 2,
	      "retry: methods lists POST: retried, up to max_retries 1");
	d->ops->destroy(d);
	ig_arena_reset(a);
}

static void test_retry_errors(ig_arena *a)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	struct ig_retry_opts o = quick_retries();
	ig_dispatcher *d = ig_retry_new(ig_mock_dispatcher(m), &o);
	icept(m, at(NULL, NULL, "/reset"), fail(IG_CLIENT_RESET, "connection reset by peer"), 1);
	icept(m, at(NULL, NULL, "/reset"), reply(200, "after reset"), 1);
	struct result r;
	fetch(d, a, GET("http://api.test/reset"), &r);
	CHECK(r.res.status == 200 && r.res.retries == 1 && body_is(&r.res, "after reset"),
	      "retry: a reset connection is retried");

	icept(m, at(NULL, NULL, "/refused"), fail(IG_CLIENT_CONNECT, "connection refused"), IG_MOCK_PERSIST);
	fetch(d, a, GET("http://api.test/refused"), &r);
	CHECK(r.res.error == IG_CLIENT_CONNECT && r.res.retries == 2 &&
		      strcmp(r.res.error_message, "connection refused") == 0,
	      "retry: the last error, with its message, once the retries are used up");

	icept(m, at(NULL, NULL, "/slow"), fail(IG_CLIENT_HEADERS_TIMEOUT, "no head"), IG_MOCK_PERSIST);
	fetch(d, a, GET("http://api.test/slow"), &r);
	CHECK(r.res.error == IG_CLIENT_HEADERS_TIMEOUT && r.res.retries == 0,
	      "retry: a headers timeout is not retried by default");

	struct ig_mock_reply cut = fail(IG_CLIENT_RESET, "closed in mid-body");
	cut.status = 200;
	cut.body = IG_STR("part");
	cut.error_after_body = true;
	icept(m, at(NULL, NULL, "/cut"), cut, IG_MOCK_PERSIST);
	fetch(d, a, GET("http://api.test/cut"), &r);
	CHECK(r.res.error == IG_CLIENT_RESET && r.res.retries == 0 && ig_mock_times_used(m, 4) == 1,
	      "retry: a reset after the head reached the caller is not retried");
	d->ops->destroy(d);

	m = ig_mock_agent_new(&loop, NULL);
	o.errors = IG_RETRY_ERRORS_DEFAULT | IG_RETRY_ON(IG_CLIENT_HEADERS_TIMEOUT);
	d = ig_retry_new(ig_mock_dispatcher(m), &o);
	icept(m, at(NULL, NULL, "/slow"), fail(IG_CLIENT_HEADERS_TIMEOUT, "no head"), 1);
	icept(m, at(NULL, NULL, "/slow"), reply(204, ""), 1);
	fetch(d, a, GET("http://api.test/slow"), &r);
	CHECK(r.res.status == 204 && r.res.retries == 1, "retry: errors opts in to headers timeouts");
	d->ops->destroy(d);
	ig_arena_reset(a);
}

static void test_retry_after(ig_arena *a)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	struct ig_retry_opts o = quick_retries();
	o.max_retry_after_ms = 60;
	ig_dispatcher *d = ig_retry_new(ig_mock_dispatcher(m), &o);
	static const ig_header after_1[] = { { IG_STR_INIT("Retry-After"), IG_STR_INIT("1") } };
	static const ig_header after_100[] = { { IG_STR_INIT("retry-after"), IG_STR_INIT("100") } };
	struct ig_mock_reply wait = reply(503, "");
	wait.headers = after_100;
	wait.header_count = 1;
	icept(m, at(NULL, NULL, "/capped"), wait, 1);
	icept(m, at(NULL, NULL, "/capped"), reply(200, "ok"), 1);
	struct result r;
	fetch(d, a, GET("http://api.test/capped"), &r);
	size_t n;
	const struct ig_mock_record *h = ig_mock_history(m, &n);
	CHECK(r.res.status == 200 && n == 2, "retry-after: retried after a 503 with Retry-After");
	CHECK(n == 2 && h[1].at_ms - h[0].at_ms >= 60 && h[1].at_ms - h[0].at_ms < 100000,
	      "retry-after: a long Retry-After waits max_retry_after_ms");
	d->ops->destroy(d);

	m = ig_mock_agent_new(&loop, NULL);
	o.max_retry_after_ms = 0;
	d = ig_retry_new(ig_mock_dispatcher(m), &o);
	wait.headers = after_1;
	icept(m, at(NULL, NULL, "/later"), wait, 1);
	icept(m, at(NULL, NULL, "/later"), reply(200, "ok"), 1);
	fetch(d, a, GET("http://api.test/later"), &r);
	h = ig_mock_history(m, &n);
	CHECK(r.res.status == 200 && r.res.retries == 1, "retry-after: 1 second, then 200");
	check_that(n == 2 && h[1].at_ms - h[0].at_ms >= 1000,
		   "retry-after: the retry waited at least 1000 ms", "waited %llu ms",
		   n == 2 ? (unsigned long long)(h[1].at_ms - h[0].at_ms) : 0ull);
	d->ops->destroy(d);

	uint64_t ms = 0;
	time_t now = 784111777; /* Sun, 06 Nov 1994 08:49:37 GMT */
	CHECK(ig_retry_after_ms(IG_STR("120"), now, &ms) && ms == 120000, "Retry-After: delta-seconds");
	CHECK(ig_retry_after_ms(IG_STR("Sun, 06 Nov 1994 08:49:47 GMT"), now, &ms) && ms == 10000,
	      "Retry-After: IMF-fixdate 10 s ahead");
	CHECK(ig_retry_after_ms(IG_STR("Sunday, 06-Nov-94 08:50:37 GMT"), now, &ms) && ms == 60000,
	      "Retry-After: RFC 850 date");
	CHECK(ig_retry_after_ms(IG_STR("Sun Nov  6 08:49:39 1994"), now, &ms) && ms == 2000,
	      "Retry-After: asctime date");
	CHECK(ig_retry_after_ms(IG_STR("Sat, 05 Nov 1994 08:49:37 GMT"), now, &ms) && ms == 0,
	      "Retry-After: a date in the past waits 0");
	CHECK(!ig_retry_after_ms(IG_STR("soon"), now, &ms) && !ig_retry_after_ms(IG_STR("12s"), now, &ms) &&
		      !ig_retry_after_ms(IG_STR("Sun, 06 Nov 1994 08:49:37 UTC"), now, &ms) &&
		      !ig_retry_after_ms(IG_STR(""), now, &ms),
	      "Retry-After: anything else is refused");
	ig_arena_reset(a);
}

static void on_done_stop(ig_response *res, void *arg)
{
	(void)res;
	(void)arg;
	loop.running = false;
}

static void test_retry_abort(ig_arena *a)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	struct ig_retry_opts o = { .min_delay_ms = 10000, .max_delay_ms = 10000, .seed = 7 };
	ig_dispatcher *d = ig_retry_new(ig_mock_dispatcher(m), &o);
	icept(m, at(NULL, NULL, "/x"), reply(503, ""), IG_MOCK_PERSIST);
	struct ig_mock_reply later = reply(200, "");
	later.delay_ms = 20; /* after /x's 503, while it waits for its retry */
	icept(m, at(NULL, NULL, "/stop"), later, 1);
	struct result r;
	ig_call *call = start(d, a, GET("http://api.test/x"), &r);
	ig_fetch(ig_mock_dispatcher(m), a, GET("http://api.test/stop"), on_done_stop, NULL);
	ig_loop_run(&loop);
	CHECK(r.calls == 0 && ig_mock_times_used(m, 0) == 1 && ig_mock_times_used(m, 1) == 1,
	      "retry abort: the call waits for its retry");
	ig_call_abort(call);
	CHECK(r.calls == 1 && r.res.error == IG_CLIENT_ABORTED,
	      "retry abort: aborting a waiting call ends it");
	CHECK_INT(loop.timers.armed, 0, "retry abort: its timer is gone");
	d->ops->destroy(d);
	ig_arena_reset(a);
}

/* ---- redirect ---- */

static struct ig_mock_reply moved(int status, const char *location, ig_header *slot)
{
	*slot = (ig_header){ IG_STR_INIT("Location"), { location, strlen(location) } };
	struct ig_mock_reply r = reply(status, "moved");
	r.headers = slot;
	r.header_count = 1;
	return r;
}

static void test_redirects(ig_arena *a)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	ig_dispatcher *d = ig_redirect_new(ig_mock_dispatcher(m), NULL);
	ig_header loc[8];
	icept(m, at("GET", "http://api.test", "/a/b"), moved(302, "c?x=1#frag", &loc[0]), 1);
	icept(m, at("GET", "http://api.test", "/a/c?x=1"), moved(301, "../d/./e", &loc[1]), 1);
	icept(m, at("GET", "http://api.test", "/d/e"), moved(308, "http://Other.test:8080/f", &loc[2]), 1);
	icept(m, at("GET", "http://other.test:8080", "/f"), moved(307, "/g", &loc[3]), 1);
	icept(m, at("GET", "http://other.test:8080", "/g"), moved(302, "?y=2", &loc[4]), 1);
	icept(m, at("GET", "http://other.test:8080", "/g?y=2"), reply(200, "landed"), 1);
	struct result r;
	fetch(d, a, GET("http://api.test/a/b"), &r);
	CHECK(r.res.status == 200 && body_is(&r.res, "landed"),
	      "redirect: relative, dot segments, absolute and query-only Locations lead to the end");
	CHECK_INT(r.res.redirects, 5, "redirect: five hops counted");
	char msg[512];
	check_that(ig_mock_assert_all_used(m, msg, sizeof msg), "redirect: every hop went where it should",
		   "%s", msg);
	d->ops->destroy(d);

	m = ig_mock_agent_new(&loop, NULL);
	d = ig_redirect_new(ig_mock_dispatcher(m), NULL);
	static const ig_header form[] = { { IG_STR_INIT("Content-Type"),
					    IG_STR_INIT("application/x-www-form-urlencoded") },
					  { IG_STR_INIT("X-Keep"), IG_STR_INIT("yes") } };
	icept(m, at("POST", NULL, "/form"), moved(303, "/done", &loc[0]), 1);
	icept(m, at("GET", NULL, "/done"), reply(200, "seen"), 1);
	icept(m, at("POST", NULL, "/keep"), moved(307, "/kept", &loc[1]), 1);
	icept(m, at("POST", NULL, "/kept"), reply(201, "created"), 1);
	icept(m, at("POST", NULL, "/old"), moved(302, "/new", &loc[2]), 1);
	icept(m, at("GET", NULL, "/new"), reply(200, "new"), 1);
	ig_fetch_opts post = { .method = "POST",
			       .url = "http://api.test/form",
			       .headers = form,
			       .header_count = 2,
			       .body = IG_STR("a=1") };
	fetch(d, a, &post, &r);
	size_t n;
	const struct ig_mock_record *h = ig_mock_history(m, &n);
	CHECK(r.res.status == 200 && body_is(&r.res, "seen") && r.res.redirects == 1,
	      "redirect: 303 after a POST is followed");
	CHECK(n == 2 && strcmp(h[1].method, "GET") == 0 && h[1].body_len == 0 &&
		      !strstr(h[1].headers, "Content-Type") && strstr(h[1].headers, "X-Keep: yes"),
	      "redirect: 303 turns POST into GET without body and Content-* headers");
	post.url = "http://api.test/keep";
	fetch(d, a, &post, &r);
	h = ig_mock_history(m, &n);
	CHECK(r.res.status == 201 && n == 4 && strcmp(h[3].method, "POST") == 0 && h[3].body_len == 3 &&
		      strstr(h[3].headers, "Content-Type"),
	      "redirect: 307 repeats the method, body and headers");
	post.url = "http://api.test/old";
	fetch(d, a, &post, &r);
	h = ig_mock_history(m, &n);
	CHECK(r.res.status == 200 && n == 6 && strcmp(h[5].method, "GET") == 0 && h[5].body_len == 0,
	      "redirect: 302 after a POST continues as GET");
	d->ops->destroy(d);
	ig_arena_reset(a);
}

static void test_redirect_limits(ig_arena *a)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	ig_dispatcher *d = ig_redirect_new(ig_mock_dispatcher(m), NULL);
	ig_header loc[4];
	icept(m, at(NULL, NULL, "/loop"), moved(302, "/loop", &loc[0]), IG_MOCK_PERSIST);
	struct result r;
	fetch(d, a, GET("http://api.test/loop"), &r);
	size_t n;
	ig_mock_history(m, &n);
	CHECK(r.res.error == IG_CLIENT_REDIRECT_LIMIT, "redirect: a loop ends with redirect_limit");
	CHECK(r.res.redirects == 5 && n == 6, "redirect: after the default 5 redirects (6 requests)");

	icept(m, at(NULL, NULL, "/nowhere"), reply(302, "no location"), 1);
	fetch(d, a, GET("http://api.test/nowhere"), &r);
	CHECK(r.res.status == 302 && body_is(&r.res, "no location") && r.res.redirects == 0,
	      "redirect: a 302 without Location reaches the caller");
	icept(m, at(NULL, NULL, "/ftp"), moved(301, "ftp://files.test/x", &loc[1]), 1);
	fetch(d, a, GET("http://api.test/ftp"), &r);
	CHECK(r.res.status == 301 && r.res.redirects == 0,
	      "redirect: a non-http Location reaches the caller");
	icept(m, at(NULL, NULL, "/space"), moved(302, "/a b", &loc[2]), 1);
	fetch(d, a, GET("http://api.test/space"), &r);
	CHECK(r.res.status == 302 && r.res.redirects == 0,
	      "redirect: a Location with a space reaches the caller");
	icept(m, at(NULL, NULL, "/scheme-relative"), moved(308, "//cdn.test:81/s?x#y", &loc[3]), 1);
	icept(m, at(NULL, "http://cdn.test:81", "/s?x"), reply(200, "cdn"), 1);
	fetch(d, a, GET("http://api.test/scheme-relative"), &r);
	CHECK(body_is(&r.res, "cdn") && r.res.redirects == 1,
	      "redirect: a scheme-relative Location keeps the scheme");
	d->ops->destroy(d);

	m = ig_mock_agent_new(&loop, NULL);
	d = ig_redirect_new(ig_mock_dispatcher(m), &(struct ig_redirect_opts){ .max_redirects = 2 });
	icept(m, at(NULL, NULL, "/loop"), moved(307, "/loop", &loc[0]), IG_MOCK_PERSIST);
	fetch(d, a, GET("http://api.test/loop"), &r);
	ig_mock_history(m, &n);
	CHECK(r.res.error == IG_CLIENT_REDIRECT_LIMIT && r.res.redirects == 2 && n == 3,
	      "redirect: max_redirects 2 follows two");
	d->ops->destroy(d);
	ig_arena_reset(a);
}

static void test_redirect_cross_origin(ig_arena *a)
{
	static const ig_header creds[] = { { IG_STR_INIT("Authorization"), IG_STR_INIT("Bearer t") },
					   { IG_STR_INIT("Cookie"), IG_STR_INIT("s=1") },
					   { IG_STR_INIT("Accept"), IG_STR_INIT("text/plain") } };
	ig_fetch_opts o = { .url = "http://api.test/go", .headers = creds, .header_count = 3 };
	enum ig_redirect_cross_origin policies[] = { IG_REDIRECT_STRIP_CREDENTIALS, IG_REDIRECT_FOLLOW,
						     IG_REDIRECT_SAME_ORIGIN };
	for (int i = 0; i < 3; i++) {
		ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
		ig_dispatcher *d = ig_redirect_new(ig_mock_dispatcher(m),
						   &(struct ig_redirect_opts){ .cross_origin = policies[i] });
		ig_header loc[2];
		icept(m, at(NULL, "http://api.test", "/go"), moved(302, "/same", &loc[0]), 1);
		icept(m, at(NULL, "http://api.test", "/same"),
		      moved(302, "https://elsewhere.test/x", &loc[1]), 1);
		icept(m, at(NULL, "https://elsewhere.test:443", "/x"), reply(200, "elsewhere"), 1);
		struct result r;
		fetch(d, a, &o, &r);
		size_t n;
		const struct ig_mock_record *h = ig_mock_history(m, &n);
		bool same_kept = n >= 2 && strstr(h[1].headers, "Authorization: Bearer t") &&
				 strstr(h[1].headers, "Cookie: s=1");
		if (i == 0) {
			CHECK(r.res.status == 200 && n == 3 && same_kept,
			      "cross-origin strip: same-origin hops keep credentials");
			CHECK(n == 3 && !strstr(h[2].headers, "Authorization") &&
				      !strstr(h[2].headers, "Cookie") &&
				      strstr(h[2].headers, "Accept: text/plain"),
			      "cross-origin strip: Authorization and Cookie dropped for another origin, "
			      "others kept");
		} else if (i == 1) {
			CHECK(r.res.status == 200 && n == 3 &&
				      strstr(h[2].headers, "Authorization: Bearer t"),
			      "cross-origin follow: every header goes along");
		} else {
			const ig_str *l = header(&r.res, "location");
			CHECK(r.res.status == 302 && n == 2 && same_kept && r.res.redirects == 1 && l &&
				      ig_str_eq(*l, "https://elsewhere.test/x", 24),
			      "cross-origin same-origin: the cross-origin 302 reaches the caller");
		}
		d->ops->destroy(d);
	}
	ig_arena_reset(a);
}

/* The dispatch API itself, with a raw handler. */
struct raw {
	int connects, status, completes, errors;
	size_t body_len;
	uint32_t redirects;
};

static void raw_connect(ig_call *call, void *arg)
{
	(void)call;
	((struct raw *)arg)->connects++;
}

static bool raw_headers(ig_call *call, int status, const ig_header *h, size_t n, void *arg)
{
	(void)call;
	(void)h;
	(void)n;
	((struct raw *)arg)->status = status;
	return true;
}

static bool raw_data(ig_call *call, const char *data, size_t len, void *arg)
{
	(void)call;
	(void)data;
	((struct raw *)arg)->body_len += len;
	return true;
}

static void raw_end(struct raw *r, ig_call *call)
{
	r->redirects = call->redirects;
	if (--outstanding == 0)
		loop.running = false;
}

static void raw_complete(ig_call *call, void *arg)
{
	((struct raw *)arg)->completes++;
	raw_end(arg, call);
}

static void raw_error(ig_call *call, enum ig_client_error e, const char *message, void *arg)
{
	(void)e;
	(void)message;
	((struct raw *)arg)->errors++;
	raw_end(arg, call);
}

static const ig_dispatch_handler raw_handler = { raw_connect, raw_headers, raw_data, raw_complete,
						 raw_error };

static void test_redirect_without_origin(void)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	ig_dispatcher *d = ig_redirect_new(ig_mock_dispatcher(m), NULL);
	ig_header loc[2];
	icept(m, at(NULL, NULL, "/p"), moved(302, "q", &loc[0]), 1);
	icept(m, at(NULL, NULL, "/q"), moved(302, "http://api.test/r", &loc[1]), 1);
	struct raw r = { 0 };
	outstanding++;
	ig_dispatch(d, &(ig_dispatch_opts){ .path = IG_STR("/p"), .idempotent = -1 }, &raw_handler, &r);
	run();
	CHECK(r.connects == 1 && r.completes == 1 && r.errors == 0,
	      "dispatch: on_connect once, then on_complete");
	CHECK(r.status == 302 && r.redirects == 1 && r.body_len == 5,
	      "redirect without an origin (a Client or Pool): paths are followed, absolute URLs reach the "
	      "caller");
	d->ops->destroy(d);
}

static void test_composition(ig_arena *a)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	struct ig_retry_opts ro = quick_retries();
	ig_dispatcher *d = ig_redirect_new(ig_retry_new(ig_mock_dispatcher(m), &ro), NULL);
	ig_header loc[2];
	icept(m, at(NULL, NULL, "/start"), moved(302, "/next", &loc[0]), 1);
	icept(m, at(NULL, NULL, "/next"), reply(503, ""), 1);
	icept(m, at(NULL, NULL, "/next"), reply(200, "composed"), 1);
	struct result r;
	fetch(d, a, GET("http://api.test/start"), &r);
	size_t n;
	const struct ig_mock_record *h = ig_mock_history(m, &n);
	CHECK(r.res.status == 200 && body_is(&r.res, "composed"), "redirect(retry(mock)): reaches the end");
	CHECK(r.res.redirects == 1 && r.res.retries == 1,
	      "redirect(retry(mock)): both counts reach the response");
	CHECK(n == 3 && strcmp(h[2].path, "/next") == 0,
	      "redirect(retry(mock)): only the failing hop is repeated");
	d->ops->destroy(d); /* destroys the chain, mock included */

	m = ig_mock_agent_new(&loop, NULL);
	d = ig_retry_new(ig_redirect_new(ig_mock_dispatcher(m), NULL), &ro);
	icept(m, at(NULL, NULL, "/start"), moved(302, "/next", &loc[0]), IG_MOCK_PERSIST);
	icept(m, at(NULL, NULL, "/next"), reply(503, ""), 1);
	icept(m, at(NULL, NULL, "/next"), reply(200, "composed"), 1);
	fetch(d, a, GET("http://api.test/start"), &r);
	h = ig_mock_history(m, &n);
	CHECK(r.res.status == 200 && r.res.retries == 1 && r.res.redirects == 2 && n == 4 &&
		      strcmp(h[2].path, "/start") == 0,
	      "retry(redirect(mock)): a failure restarts the chain from the first URL");
	d->ops->destroy(d);
	ig_arena_reset(a);
}

/* ---- the mock agent itself ---- */

static void test_mock_net(ig_arena *a)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	struct result r;
	fetch(ig_mock_dispatcher(m), a, GET("http://api.test/none"), &r);
	CHECK(r.res.error == IG_CLIENT_MOCK_UNMATCHED &&
		      strstr(r.res.error_message, "GET http://api.test:80/none"),
	      "mock: an unmatched call fails with mock_unmatched, naming it");
	CHECK(!r.during_dispatch, "mock: even the failure arrives on the loop");
	ig_mock_disable_net_connect(m);
	fetch(ig_mock_dispatcher(m), a, GET("http://api.test/none"), &r);
	CHECK_INT(r.res.error, IG_CLIENT_NET_FORBIDDEN, "mock: with the network disabled, net_forbidden");

	/* A second mock stands in for the real network. */
	ig_mock_agent *net = ig_mock_agent_new(&loop, NULL);
	icept(net, at(NULL, NULL, "/real"), reply(200, "from the network"), IG_MOCK_PERSIST);
	ig_mock_agent *m2 = ig_mock_agent_new(&loop, ig_mock_dispatcher(net));
	static const ig_header key[] = { { IG_STR_INIT("x-api-key"), IG_STR_INIT("k1") } };
	icept(m2, (struct ig_mock_match){ .path = "/real", .headers = key, .header_count = 1 },
	      (struct ig_mock_reply){ .status = 200, .body = IG_STR_INIT("mocked") }, 1);
	fetch(ig_mock_dispatcher(m2), a,
	      &(ig_fetch_opts){ .url = "http://api.test/real", .headers = key, .header_count = 1 }, &r);
	CHECK(body_is(&r.res, "mocked"), "mock: a header matcher picks the interception");
	fetch(ig_mock_dispatcher(m2), a, GET("http://api.test/real"), &r);
	CHECK(body_is(&r.res, "from the network"),
	      "mock: unmatched goes to the real dispatcher when allowed");
	ig_mock_disable_net_connect(m2);
	CHECK_INT(ig_mock_enable_net_connect(m2, "http://api.test:80"), 0, "mock: enable_net_connect takes an origin");
	fetch(ig_mock_dispatcher(m2), a, GET("http://api.test/real"), &r);
	CHECK(body_is(&r.res, "from the network"), "mock: enable_net_connect for one origin lets it through");
	fetch(ig_mock_dispatcher(m2), a, GET("http://other.test/real"), &r);
	CHECK_INT(r.res.error, IG_CLIENT_NET_FORBIDDEN, "mock: ...and no other");

	icept(m, at("GET", "http://api.test", "/used"), reply(200, ""), 1);
	icept(m, (struct ig_mock_match){ .method = "DELETE", .path = "/items/", .path_prefix = true },
	      (struct ig_mock_reply){ .status = 204 }, 2);
	icept(m, at(NULL, NULL, "/always"), reply(200, ""), IG_MOCK_PERSIST);
	fetch(ig_mock_dispatcher(m), a, GET("http://api.test/used"), &r);
	fetch(ig_mock_dispatcher(m), a,
	      &(ig_fetch_opts){ .method = "DELETE", .url = "http://api.test/items/7" }, &r);
	CHECK_INT(r.res.status, 204, "mock: a path prefix matches");
	char msg[512], list[512];
	CHECK(!ig_mock_assert_all_used(m, msg, sizeof msg),
	      "mock: assert_all_used fails with unused interceptions");
	check_that(strstr(msg, "DELETE") && strstr(msg, "/items/") && strstr(msg, "used 1 of 2") &&
			   strstr(msg, "/always") && !strstr(msg, "/used"),
		   "mock: its message names each unused one", "%s", msg);
	CHECK_INT(ig_mock_pending(m, list, sizeof list), 2, "mock: pending counts them");
	fetch(ig_mock_dispatcher(m), a,
	      &(ig_fetch_opts){ .method = "DELETE", .url = "http://api.test/items/8" }, &r);
	fetch(ig_mock_dispatcher(m), a, GET("http://api.test/always"), &r);
	fetch(ig_mock_dispatcher(m), a, GET("http://api.test/always"), &r);
	CHECK(ig_mock_assert_all_used(m, msg, sizeof msg) && r.res.status == 200,
	      "mock: all used once each is used (a persistent one stays)");
	fetch(ig_mock_dispatcher(m), a,
	      &(ig_fetch_opts){ .method = "DELETE", .url = "http://api.test/items/9" }, &r);
	CHECK_INT(r.res.error, IG_CLIENT_NET_FORBIDDEN, "mock: an interception used up matches no more");

	struct ig_mock_reply late = reply(200, "late");
	late.delay_ms = 30;
	icept(m, at(NULL, NULL, "/late"), late, 1);
	fetch(ig_mock_dispatcher(m), a, GET("http://api.test/late"), &r);
	size_t n;
	const struct ig_mock_record *h = ig_mock_history(m, &n);
	CHECK(body_is(&r.res, "late") && r.at_ms - h[n - 1].at_ms >= 30,
	      "mock: a delayed reply comes no sooner");
	ig_mock_agent_free(m);
	ig_mock_agent_free(m2);
	ig_mock_agent_free(net);
	ig_arena_reset(a);
}

/* ---- ig_stream with back-pressure ---- */

struct streamed {
	int heads;
	char body[64];
	size_t len;
	int pieces, paused;
	bool waiting;   /* paused and not resumed yet */
	int violations; /* data that came while paused */
	ig_call *call;
	struct ig_timer resume_timer;
	struct result done;
};

static struct streamed st;

static void resume_later(struct ig_timer *t)
{
	(void)t;
	st.waiting = false;
	ig_call_resume(st.call);
}

static bool st_headers(ig_call *call, int status, const ig_header *h, size_t n, void *arg)
{
	(void)arg;
	(void)h;
	(void)n;
	st.heads++;
	st.call = call;
	return status == 200;
}

static bool st_data(ig_call *call, const char *data, size_t len, void *arg)
{
	(void)arg;
	if (st.waiting)
		st.violations++;
	if (st.len + len <= sizeof st.body) {
		memcpy(st.body + st.len, data, len);
		st.len += len;
	}
	st.pieces++;
	/* Pause after every piece; resume from a timer, as a slow consumer. */
	st.call = call;
	st.paused++;
	st.waiting = true;
	st.resume_timer.fn = resume_later;
	ig_timer_set(&loop.timers, &st.resume_timer, loop.clock.now_ms + 1);
	return false;
}

static void test_stream(ig_arena *a)
{
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	struct ig_mock_reply big = reply(200, "abcdefghij");
	big.chunk_size = 4;
	icept(m, at(NULL, NULL, "/stream"), big, 1);
	static const ig_stream_handler sh = { .on_headers = st_headers, .on_data = st_data, .done = on_done };
	st = (struct streamed){ 0 };
	outstanding++;
	ig_call *call = ig_stream(ig_mock_dispatcher(m), a, GET("http://api.test/stream"), &sh, &st.done);
	CHECK(call != NULL, "stream: the call is returned");
	run();
	CHECK(st.heads == 1 && st.pieces == 3, "stream: the head once, then the body in three pieces");
	CHECK(st.len == 10 && memcmp(st.body, "abcdefghij", 10) == 0,
	      "stream: the pieces in order, nothing lost");
	CHECK(st.paused == 3 && st.violations == 0, "stream: no data while paused, until ig_call_resume");
	CHECK_INT(st.done.calls, 1, "stream: done once");
	CHECK(st.done.res.status == 200 && st.done.res.body.len == 0,
	      "stream: done has the status and no body");
	ig_mock_agent_free(m);
	ig_arena_reset(a);
}

/* ---- an abort while the inner dispatch runs ----
 * In a real pool, dispatching can run other calls' callbacks (pool_drive
 * writes queued requests and tells their on_connect), and that user code
 * may abort the very call being dispatched. This dispatcher stands in
 * front of the mock and runs such an abort from inside its dispatch, on
 * its nth dispatch. */
struct abort_in_dispatch {
	ig_dispatcher d; /* first */
	ig_dispatcher *next;
	ig_call *victim;
	int dispatches, when;
};

static ig_call *aid_dispatch(ig_dispatcher *d, const ig_dispatch_opts *o, const ig_dispatch_handler *h, void *arg)
{
	struct abort_in_dispatch *x = (struct abort_in_dispatch *)d;
	if (++x->dispatches == x->when && x->victim)
		ig_call_abort(x->victim);
	return ig_dispatch(x->next, o, h, arg);
}

static void aid_destroy(ig_dispatcher *d)
{
	struct abort_in_dispatch *x = (struct abort_in_dispatch *)d;
	x->next->ops->destroy(x->next);
}

static const struct ig_dispatcher_ops aid_ops = { .dispatch = aid_dispatch, .destroy = aid_destroy };

static void test_abort_during_inner_dispatch(ig_arena *a)
{
	/* retry: the second attempt's dispatch aborts the call. */
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	struct abort_in_dispatch x = { .d = { .ops = &aid_ops, .loop = &loop }, .next = ig_mock_dispatcher(m), .when = 2 };
	struct ig_retry_opts o = quick_retries();
	ig_dispatcher *d = ig_retry_new(&x.d, &o);
	icept(m, at(NULL, NULL, "/x"), reply(503, "busy"), IG_MOCK_PERSIST);
	struct result r;
	x.victim = start(d, a, GET("http://api.test/x"), &r);
	run();
	CHECK(r.calls == 1 && r.res.error == IG_CLIENT_ABORTED,
	      "retry: aborted while its next attempt is being dispatched: ends aborted, not with that attempt's response");
	d->ops->destroy(d);

	/* redirect: the second hop's dispatch aborts the call. */
	m = ig_mock_agent_new(&loop, NULL);
	x = (struct abort_in_dispatch){ .d = { .ops = &aid_ops, .loop = &loop }, .next = ig_mock_dispatcher(m), .when = 2 };
	d = ig_redirect_new(&x.d, &(struct ig_redirect_opts){ .max_redirects = 3 });
	ig_header loc;
	icept(m, at(NULL, NULL, "/a"), moved(302, "/b", &loc), IG_MOCK_PERSIST);
	icept(m, at(NULL, NULL, "/b"), reply(200, "b"), IG_MOCK_PERSIST);
	x.victim = start(d, a, GET("http://api.test/a"), &r);
	run();
	CHECK(r.calls == 1 && r.res.error == IG_CLIENT_ABORTED,
	      "redirect: aborted while its next hop is being dispatched: ends aborted, not with that hop's response");
	d->ops->destroy(d);
	ig_arena_reset(a);
}

/* ---- handlers without on_complete / on_error ---- */

static int headers_seen;

static bool count_headers(ig_call *call, int status, const ig_header *h, size_t n, void *arg)
{
	(void)call, (void)arg, (void)status, (void)h, (void)n;
	headers_seen++;
	return true;
}

static void test_null_callbacks(ig_arena *a)
{
	/* call.c tolerates a NULL on_complete and on_error: so do the
	   interceptors and the mock. */
	static const ig_dispatch_handler only_headers = { .on_headers = count_headers };
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	ig_dispatcher *mock = ig_mock_dispatcher(m);
	ig_dispatcher *retry = ig_retry_new(mock, &(struct ig_retry_opts){ .max_retries = 1, .min_delay_ms = 1, .max_delay_ms = 1 });
	ig_dispatcher *redirect = ig_redirect_new(retry, &(struct ig_redirect_opts){ .max_redirects = 1 });
	ig_header loc;
	icept(m, at(NULL, NULL, "/ok"), reply(200, "fine"), IG_MOCK_PERSIST);
	icept(m, at(NULL, NULL, "/fail"), fail(IG_CLIENT_RESET, "gone"), IG_MOCK_PERSIST);
	icept(m, at(NULL, NULL, "/loop"), moved(302, "/loop", &loc), IG_MOCK_PERSIST);
	struct ig_mock_reply last = reply(200, "");
	last.delay_ms = 50; /* after the others have ended */
	icept(m, at(NULL, NULL, "/stop"), last, 1);
	headers_seen = 0;
	ig_dispatcher *ds[] = { mock, retry, redirect };
	const char *paths[] = { "/ok", "/fail", "/loop" };
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 3; j++) {
			ig_dispatch_opts o = { .origin = IG_STR("http://api.test"),
					       .path = { paths[j], strlen(paths[j]) }, .idempotent = -1 };
			ig_dispatch(ds[i], &o, &only_headers, NULL);
		}
	ig_fetch(mock, a, GET("http://api.test/stop"), on_done_stop, NULL);
	ig_loop_run(&loop);
	/* /ok three times; /loop's 302 through the mock and the retry (the
	   redirect follows it until its limit, an error); /fail never. */
	CHECK_INT(headers_seen, 3 + 2, "NULL on_complete/on_error: every call ends without a crash");
	redirect->ops->destroy(redirect); /* and, through it, retry and the mock */
	ig_arena_reset(a);
}

static int released_errors;

static void count_complete(ig_call *call, void *arg)
{
	(void)call, (void)arg;
	if (--outstanding == 0)
		loop.running = false;
}

static void count_error(ig_call *call, enum ig_client_error error, const char *message, void *arg)
{
	(void)call, (void)arg, (void)error, (void)message;
	released_errors++;
	count_complete(call, arg);
}

static void test_states_released(void)
{
	/* An ended call's state goes back to its pool after the loop's batch
	   (ig_loop_defer): more calls in turn than the pools hold (65536 of
	   each kind) all get one. */
	static const ig_dispatch_handler counting = { .on_complete = count_complete, .on_error = count_error };
	ig_mock_agent *m = ig_mock_agent_new(&loop, NULL);
	ig_dispatcher *retry = ig_retry_new(ig_mock_dispatcher(m), NULL);
	icept(m, at(NULL, NULL, "/ok"), reply(200, "fine"), IG_MOCK_PERSIST);
	released_errors = 0;
	bool ran = true;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 30000; i++) {
			ig_dispatch_opts o = { .origin = IG_STR("http://api.test"), .path = IG_STR("/ok"), .idempotent = -1 };
			outstanding++;
			ig_dispatch(retry, &o, &counting, NULL);
		}
		ran = run() && ran;
	}
	CHECK(ran && released_errors == 0, "call states are released after the batch: 90000 calls in turn, none refused");
	CHECK(loop.after_batch == NULL, "nothing deferred is left once the loop has run");
	retry->ops->destroy(retry); /* and the mock */
}

int main(void)
{
	if (ig_loop_init(&loop, 0) != 0) {
		perror("loop");
		return 1;
	}
	ig_pool_init(&blocks, 16384, 16, 4096);
	ig_arena arena;
	ig_arena_init(&arena, &blocks, 8u << 20);

	CHECK(strcmp(ig_client_error_name(IG_CLIENT_CONNECT_TIMEOUT), "connect_timeout") == 0 &&
		      strcmp(ig_client_error_name(IG_CLIENT_NET_FORBIDDEN), "net_forbidden") == 0 &&
		      strcmp(ig_client_error_name((enum ig_client_error)999), "unknown") == 0,
	      "error names: stable identifiers");
	test_fetch_exact(&arena);
	test_fetch_limits(&arena);
	test_retry_status(&arena);
	test_retry_errors(&arena);
	test_retry_after(&arena);
	test_retry_abort(&arena);
	test_redirects(&arena);
	test_redirect_limits(&arena);
	test_redirect_cross_origin(&arena);
	test_redirect_without_origin();
	test_composition(&arena);
	test_mock_net(&arena);
	test_stream(&arena);
	test_abort_during_inner_dispatch(&arena);
	test_null_callbacks(&arena);
	test_states_released();
	CHECK(!timed_out, "no call hung");
	CHECK_INT(loop.timers.armed, 0, "no timer left armed");
	ig_loop_close(&loop);
	return check_done();
}
