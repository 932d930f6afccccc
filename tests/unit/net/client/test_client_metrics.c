/* Unit tests of the outbound client's metrics tables (net/client/
 * client_metrics.c) on two hand-made cores: series summed over the cores by
 * their labels, errors by host whatever the port, the connection gauges,
 * methods and statuses outside the bounded sets as "_OTHER", and the fixed
 * tables' bounds (origins beyond 16 as "_OTHER", series beyond 64 in one
 * overflow series), read through the exposition a scrape writes. */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/clock.h"
#include "kernel/runtime/pool.h"
#include "net/client/client_metrics.h"
#include "net/client/internal.h"
#include "tests/unit/check.h"

#include <stdio.h>
#include <string.h>

static struct client_core cores[2];

/* The scrape's walk over the cores (percore.c's, over these two). */
const struct client_core *ig_client_core_next(const struct client_core *prev)
{
	if (!prev)
		return &cores[0];
	return prev == &cores[0] ? &cores[1] : NULL;
}

static struct client_origin origin(int core, const char *host, uint16_t port)
{
	return (struct client_origin){ .core = &cores[core],
				       .metrics_origin = ig_client_metrics_origin(&cores[core], host, port) };
}

/* n calls of o ended with status (0: no response head) and error. */
static void calls(const struct client_origin *o, const char *method, int status, enum ig_client_error error, int n)
{
	for (int i = 0; i < n; i++) {
		struct client_call c = { .origin = o, .opts.method = method, .status = (uint16_t)status,
					 .start_us = ig_monotonic_us() };
		ig_client_metrics_call_end(&c, error);
	}
}

static struct ig_pool blocks;
static char text[1 << 20];

static void scrape(void)
{
	ig_arena a;
	ig_arena_init(&a, &blocks, 4 << 20);
	ig_wbuf w = { .arena = &a };
	ig_metrics_write(&w);
	snprintf(text, sizeof text, "%.*s", (int)w.len, w.ptr ? w.ptr : "");
	ig_arena_reset(&a);
}

/* The exposition's lines that start with prefix. */
static int lines_with(const char *prefix)
{
	int n = 0;
	size_t len = strlen(prefix);
	for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (strncmp(p, prefix, len) == 0)
			n++;
	return n;
}

static bool has_line(const char *line)
{
	size_t len = strlen(line);
	for (const char *p = text; (p = strstr(p, line)); p += len)
		if ((p == text || p[-1] == '\n') && (p[len] == '\n' || !p[len]))
			return true;
	return false;
}

#define COUNT "http_client_request_duration_seconds_count"

static void test_summed_by_labels(void)
{
	struct client_origin a0 = origin(0, "a.example", 80), b0 = origin(0, "b.example", 443);
	struct client_origin b1 = origin(1, "b.example", 443), a1 = origin(1, "a.example", 8080);
	CHECK(a0.metrics_origin == 0 && b0.metrics_origin == 1 && b1.metrics_origin == 0 && a1.metrics_origin == 1,
	      "origin slots: in the order first seen, per core");
	CHECK(origin(0, "a.example", 80).metrics_origin == 0, "origin slots: the same origin, the same slot");
	calls(&a0, "GET", 200, IG_CLIENT_OK, 2);
	calls(&b0, "GET", 200, IG_CLIENT_OK, 3);
	calls(&b1, "GET", 200, IG_CLIENT_OK, 1);
	calls(&a1, "POST", 500, IG_CLIENT_OK, 1);
	calls(&a1, "BREW", 200, IG_CLIENT_OK, 1);
	calls(&a1, "GET", 700, IG_CLIENT_OK, 1);
	calls(&a0, "GET", 0, IG_CLIENT_CONNECT, 1);
	calls(&a1, "GET", 0, IG_CLIENT_CONNECT, 2);
	calls(&b1, "GET", 200, IG_CLIENT_BODY_TIMEOUT, 1); /* a head, then the body stalled */
	ig_client_metrics_conn_open(&a0, 1);
	ig_client_metrics_conn_open(&a0, 1);
	ig_client_metrics_conn_busy(&a0, 1);
	ig_client_metrics_conn_open(&b1, 1);
	ig_client_metrics_conn_busy(&b1, 1);
	ig_client_metrics_conn_busy(&b1, -1);
	ig_client_metrics_conn_open(&b0, 1);
	scrape();
	CHECK(has_line(COUNT "{server_address=\"a.example\",server_port=\"80\",http_request_method=\"GET\","
			     "http_response_status_code=\"200\"} 2"), "durations: one core's series");
	CHECK(has_line(COUNT "{server_address=\"b.example\",server_port=\"443\",http_request_method=\"GET\","
			     "http_response_status_code=\"200\"} 5"), "durations: summed over the cores (3 + 1 + 1)");
	CHECK(has_line(COUNT "{server_address=\"a.example\",server_port=\"8080\",http_request_method=\"POST\","
			     "http_response_status_code=\"500\"} 1"), "durations: the port and method tell series apart");
	CHECK(has_line(COUNT "{server_address=\"a.example\",server_port=\"8080\",http_request_method=\"_OTHER\","
			     "http_response_status_code=\"200\"} 1"), "durations: a method not standard is _OTHER");
	CHECK(has_line(COUNT "{server_address=\"a.example\",server_port=\"8080\",http_request_method=\"GET\","
			     "http_response_status_code=\"_OTHER\"} 1"), "durations: a status beyond 599 is _OTHER");
	CHECK_INT(lines_with(COUNT "{"), 5, "durations: five series, none for calls without a head");
	CHECK(has_line("ingot_client_errors_total{server_address=\"a.example\",kind=\"connect\"} 3"),
	      "errors: by host, the ports' counts summed");
	CHECK(has_line("ingot_client_errors_total{server_address=\"b.example\",kind=\"body_timeout\"} 1"),
	      "errors: another kind");
	CHECK_INT(lines_with("ingot_client_errors_total{"), 2, "errors: only kinds that happened");
	CHECK(has_line("ingot_client_connections{server_address=\"a.example\",server_port=\"80\",state=\"active\"} 1") &&
	      has_line("ingot_client_connections{server_address=\"a.example\",server_port=\"80\",state=\"idle\"} 1"),
	      "connections: one busy of two open");
	CHECK(has_line("ingot_client_connections{server_address=\"b.example\",server_port=\"443\",state=\"active\"} 0") &&
	      has_line("ingot_client_connections{server_address=\"b.example\",server_port=\"443\",state=\"idle\"} 2"),
	      "connections: summed over the cores");
	CHECK(!strstr(text, "\"_OTHER\",server_port"), "no _OTHER origin before the table is full");
}

static void test_bounds(void)
{
	/* Core 0 has 2 origins: 14 more fill its table, the rest are _OTHER. */
	char host[32];
	uint8_t slot = 0;
	for (int i = 0; i < 20; i++) {
		snprintf(host, sizeof host, "h%d.example", i);
		struct client_origin o = origin(0, host, 80);
		slot = o.metrics_origin;
		if (i == 13)
			CHECK_INT(slot, CLIENT_METRICS_ORIGINS - 1, "origins: the last slot of the table");
		calls(&o, "GET", 204, IG_CLIENT_OK, 1);
		calls(&o, "GET", 0, IG_CLIENT_DNS, 1);
	}
	CHECK_INT(slot, CLIENT_METRICS_ORIGINS, "origins: beyond the table, _OTHER's slot");
	/* Core 1 has 4 series: 60 more statuses fill its table, the next 10 overflow. */
	struct client_origin a1 = origin(1, "a.example", 8080);
	for (int status = 200; status < 270; status++)
		calls(&a1, "PUT", status, IG_CLIENT_OK, 2);
	scrape();
	CHECK(has_line(COUNT "{server_address=\"_OTHER\",server_port=\"_OTHER\",http_request_method=\"GET\","
			     "http_response_status_code=\"204\"} 6"), "origins: the 6 beyond the table, as one");
	CHECK(has_line("ingot_client_errors_total{server_address=\"_OTHER\",kind=\"dns\"} 6"), "origins: their errors too");
	CHECK(has_line(COUNT "{server_address=\"h13.example\",server_port=\"80\",http_request_method=\"GET\","
			     "http_response_status_code=\"204\"} 1"), "origins: the last in the table keeps its name");
	CHECK(has_line(COUNT "{server_address=\"a.example\",server_port=\"8080\",http_request_method=\"PUT\","
			     "http_response_status_code=\"259\"} 2"), "series: the last in the table");
	CHECK(!strstr(text, "http_response_status_code=\"260\""), "series: beyond the table, no series of its own");
	CHECK(has_line(COUNT "{server_address=\"_OTHER\",server_port=\"_OTHER\",http_request_method=\"_OTHER\","
			     "http_response_status_code=\"_OTHER\"} 20"), "series: the 10 beyond, in the overflow series");
}

int main(void)
{
	ig_pool_init(&blocks, 65536, 4, 256);
	ig_metrics_register(&ig_client_metrics_source);
	test_summed_by_labels();
	test_bounds();
	return check_done();
}
