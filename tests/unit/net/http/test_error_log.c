/* net/http/error_log.c: a 5xx's one error line and the storm bound. The
 * exchange's id, trace and route come from stubs; the core's loop clock is
 * set by hand and its timers run by hand, so a "second" passes without
 * waiting; the log's lines are captured (tests/unit/log_capture.h). */
#include "kernel/runtime/log_ring.h"
#include "net/http/internal.h"
#include "tests/unit/check.h"
#include "tests/unit/log_capture.h"

#include <stdlib.h>
#include <string.h>

/* ---- the exchange, stubbed ---- */

ig_str ig_request_id(const ig_ctx *x)
{
	(void)x;
	return IG_STR("rid-7");
}

const char *ig_trace_id(const ig_ctx *x)
{
	(void)x;
	return "0af7651916cd43dd8448eb211c80319c";
}

const char *ig_route_template(const ig_ctx *x)
{
	return x->route ? x->core->app->routes[x->route - 1] : "";
}

static int count_of(const char *needle)
{
	int n = 0;
	for (const char *p = lines; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* ---- a core ---- */

static const char *const routes[] = { "/a", "/b/{id}" };
static const struct ig_app app = { .name = "t", .routes = routes, .route_count = 2 };
static struct http_core core;
static struct http_error_log error_log;

static void set_now(uint64_t ms)
{
	core.loop.clock.now_ms = ms;
	ig_timers_run(&core.loop.timers, ms);
}

static struct ig_ctx exchange(uint32_t route, int status, const char *cause)
{
	return (struct ig_ctx){ .core = &core, .route = route, .status = status, .cause = cause,
				.req = { .method = IG_STR("GET") } };
}

static void answer(uint32_t route, int status, const char *cause)
{
	struct ig_ctx x = exchange(route, status, cause);
	ig_http_error_log_answer(&x);
	CHECK(x.error_logged, "the exchange is marked logged");
}

static void test_one_line_with_the_request(void)
{
	lines_clear();
	answer(1, 500, NULL);
	CHECK_INT(line_count, 1, "a 5xx: one line");
	CHECK(count_of("\"level\":\"error\",\"msg\":\"server error\"") == 1, "at error level");
	CHECK(strstr(lines, "\"request_id\":\"rid-7\"") && strstr(lines, "\"trace_id\":\"0af7651916cd43dd8448eb211c80319c\""),
	      "with the request and trace ids");
	CHECK(strstr(lines, "\"method\":\"GET\",\"route\":\"/a\",\"status\":500,\"cause\":\"handler\""),
	      "with the route, the status and the cause (the handler's own 500)");
}

static void test_a_storm_is_one_line_a_second_then_its_count(void)
{
	set_now(10000);
	lines_clear();
	for (int i = 0; i < 50; i++)
		answer(2, 502, "upstream down");
	CHECK_INT(line_count, 1, "50 identical failures within a second: one line");
	answer(2, 503, "upstream down");
	answer(1, 502, "upstream down");
	answer(2, 502, "another cause");
	CHECK_INT(line_count, 4, "another status, route or cause is another failure: its own line");
	set_now(10999);
	CHECK_INT(line_count, 4, "the count waits for the second to end");
	set_now(11000 + 20); /* the timer wheel's tick */
	CHECK_INT(line_count, 5, "then one line says how many were left out");
	CHECK(strstr(lines, "\"msg\":\"server errors suppressed\",\"route\":\"/b/{id}\",\"status\":502,"
			    "\"cause\":\"upstream down\",\"suppressed\":49"),
	      "with the route, status, cause and count");
	answer(2, 502, "upstream down");
	CHECK_INT(line_count, 6, "the next second logs the next one again");
	set_now(13000);
	CHECK_INT(line_count, 6, "no count when nothing was left out");
}

static void test_the_count_is_written_at_exit(void)
{
	set_now(20000);
	lines_clear();
	for (int i = 0; i < 5; i++)
		answer(1, 504, "timeout");
	CHECK_INT(line_count, 1, "one line");
	ig_http_error_log_flush(&core);
	CHECK_INT(line_count, 2, "the flush at exit writes the pending count");
	CHECK(strstr(lines, "\"suppressed\":4") != NULL, "4 left out");
	ig_http_error_log_flush(&core);
	CHECK_INT(line_count, 2, "once");
}

static void test_many_causes_keep_their_counts(void)
{
	set_now(30000);
	lines_clear();
	char causes[HTTP_ERROR_LOG_SLOTS + 2][24];
	for (int i = 0; i < HTTP_ERROR_LOG_SLOTS + 2; i++) {
		snprintf(causes[i], sizeof causes[i], "cause %d", i);
		answer(1, 500, causes[i]);
		answer(1, 500, causes[i]);
	}
	int logged = count_of("\"msg\":\"server error\"");
	CHECK_INT(logged, HTTP_ERROR_LOG_SLOTS + 2, "each cause once");
	ig_http_error_log_flush(&core);
	int total = 0;
	for (const char *p = lines; (p = strstr(p, "\"suppressed\":")); p++)
		total += atoi(p + strlen("\"suppressed\":"));
	CHECK_INT(total, HTTP_ERROR_LOG_SLOTS + 2, "and every repeat counted, even those whose slot was reused");
}

static void test_a_marked_exchange_writes_nothing_more(void)
{
	set_now(40000);
	lines_clear();
	struct ig_ctx x = exchange(1, 500, "x");
	struct ig_logline l;
	CHECK(ig_http_error_line_begin(&x, &l, "database error", 500, "database error (server 42P01)"),
	      "a module's own error line is begun");
	ig_log_end(&l);
	CHECK(x.error_logged, "and marks the exchange, so that ig_finish adds none");
	CHECK(!ig_http_error_line_begin(&x, &l, "database error", 500, "database error (server 42P01)"),
	      "an identical one within the second is not");
	CHECK_INT(line_count, 1, "one line");
	ig_http_error_log_flush(&core);
}

int main(void)
{
	atomic_store(&ig_log_queue, capture);
	core.app = &app;
	core.error_log = &error_log;
	ig_timers_init(&core.loop.timers, 0);
	test_one_line_with_the_request();
	test_a_storm_is_one_line_a_second_then_its_count();
	test_the_count_is_written_at_exit();
	test_many_causes_keep_their_counts();
	test_a_marked_exchange_writes_nothing_more();
	return check_done();
}
