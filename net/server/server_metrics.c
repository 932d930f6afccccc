/* The server's metrics source: every core's meter (meter.h) summed when
 * scraped, on core 0's loop, reading the other cores' counters with
 * relaxed loads only. A series a core has not seen is simply absent there;
 * the families of fixed labels (close reasons, error statuses, routes)
 * are written whole, zeros included. */
#include "server.h"
#include "ingot/http.h"
#include "kernel/runtime/log_ring.h"

#include <stdio.h>

static uint64_t sum_cores(size_t offset)
{
	uint64_t sum = 0;
	for (int i = 0; i < ig_http_server.core_count; i++)
		sum += ig_counter_get((const ig_counter *)((const char *)&ig_http_server.cores[i] + offset));
	return sum;
}
#define SUM_CORES(member) sum_cores(offsetof(struct http_core, member))

static uint64_t listeners_sum(uint64_t (*of)(const struct http_core *))
{
	uint64_t sum = 0;
	for (int i = 0; i < ig_http_server.core_count; i++)
		sum += of(&ig_http_server.cores[i]);
	return sum;
}

static void counter(struct ig_expo *e, const char *name, const char *type, const char *help, double v)
{
	ig_expo_family(e, name, type, help);
	ig_expo_sample(e, name, NULL, 0, v);
}

static struct ig_label label(const char *name, const char *value)
{
	return (struct ig_label){ name, value, strlen(value) };
}

/* The labels of a series' key; status is the caller's buffer. */
static size_t series_labels(uint32_t key, struct ig_label *l, char status[4])
{
	if (key == HTTP_SERIES_OVERFLOW) {
		l[0] = label("http_request_method", "_OTHER");
		l[1] = label("http_route", "_OTHER");
		l[2] = label("http_response_status_code", "_OTHER");
		return 3;
	}
	uint32_t route = key >> 16, method = key >> 12 & 0xf, code = key & 0xfff;
	const struct ig_app *app = ig_http_server.cores[0].app;
	l[0] = label("http_request_method", ig_http_method_names[method < HTTP_METHODS ? method : HTTP_METHODS - 1]);
	l[1] = label("http_route", route && route <= app->route_count ? app->routes[route - 1] : "");
	snprintf(status, 4, "%03u", code % 1000);
	l[2] = label("http_response_status_code", code ? status : "_OTHER");
	return 3;
}

/* One histogram family over every series any core has seen: each key once
 * (where it first appears), summed over the cores. */
static void series_family(struct ig_expo *e, const char *name, const char *help, size_t member,
			  const struct ig_histogram_bounds *b)
{
	ig_expo_family(e, name, "histogram", help);
	int n = ig_http_server.core_count;
	for (int i = 0; i < n; i++) {
		const struct http_meter *m = &ig_http_server.cores[i].meter;
		for (uint32_t j = 0, used = ig_http_meter_published(m); j < used; j++) {
			uint32_t key = m->series[j].key;
			bool seen = false;
			for (int k = 0; k < i && !seen; k++)
				seen = ig_http_meter_find(&ig_http_server.cores[k].meter, key) != NULL;
			if (seen)
				continue;
			struct ig_histogram sum = { 0 };
			for (int k = i; k < n; k++) {
				const struct http_series *s = k == i ? &m->series[j]
								     : ig_http_meter_find(&ig_http_server.cores[k].meter, key);
				if (s)
					ig_histogram_sum_into(&sum, (const struct ig_histogram *)((const char *)s + member));
			}
			struct ig_label l[3];
			char status[4];
			ig_expo_histogram(e, name, l, series_labels(key, l, status), &sum, b);
		}
	}
}

static void write_connections(struct ig_expo *e)
{
	uint64_t accepted = SUM_CORES(meter.accepted), closed = 0;
	counter(e, "ingot_connections_accepted_total", "counter", "Connections accepted on the API listeners.",
		(double)accepted);
	ig_expo_family(e, "ingot_connections_closed_total", "counter", "Connections closed, by reason.");
	for (int r = 0; r < HTTP_CLOSE_REASONS; r++) {
		uint64_t v = sum_cores(offsetof(struct http_core, meter.closed) + (size_t)r * sizeof(ig_counter));
		closed += v;
		struct ig_label l = label("reason", ig_http_close_reason_names[r]);
		ig_expo_sample(e, "ingot_connections_closed_total", &l, 1, (double)v);
	}
	/* Accepted less closed, read a moment apart: never below zero. */
	counter(e, "ingot_connections_active", "gauge", "Connections open on the API listeners.",
		accepted > closed ? (double)(accepted - closed) : 0);
	/* A label added to a family that had none: sum() over it is what
	   the family alone was. */
	ig_expo_family(e, "ingot_connections_rejected_total", "counter",
		       "Connections closed at once, by reason: INGOT_MAX_CONNS reached, or no descriptor left.");
	struct ig_label r = label("reason", "max_conns");
	ig_expo_sample(e, "ingot_connections_rejected_total", &r, 1,
		       (double)(SUM_CORES(meter.rejected) + listeners_sum(ig_server_refused)));
	r = label("reason", "fd_limit");
	ig_expo_sample(e, "ingot_connections_rejected_total", &r, 1, (double)listeners_sum(ig_server_shed));
	counter(e, "ingot_connections_limit", "gauge",
		"Connections the API listeners allow open, all cores (INGOT_MAX_CONNS per core, as in effect).",
		(double)ig_server_config.max_conns * ig_http_server.core_count);
	ig_expo_family(e, "ingot_memory_budget_bytes", "gauge",
		       "The memory budget for what clients make the process buffer (request bodies being "
		       "received, responses waiting to be sent, TLS buffers): reserved (cores' credit included) and "
		       "the limit (0: none).");
	struct ig_label m = label("state", "used");
	ig_expo_sample(e, "ingot_memory_budget_bytes", &m, 1, (double)ig_membudget_used());
	m = label("state", "limit");
	ig_expo_sample(e, "ingot_memory_budget_bytes", &m, 1, (double)ig_membudget_limit());
	/* A label added to a family that had none (as for connections
	   rejected above): sum() over it is what the family alone was. */
	ig_expo_family(e, "ingot_memory_budget_rejections_total", "counter",
		       "Refused for want of room in the memory budget, by cause: a request body (answered 503 after "
		       "INGOT_MEMORY_WAIT_MS) or a new TLS connection (its handshake refused).");
	struct ig_label cause = label("cause", "request_body");
	ig_expo_sample(e, "ingot_memory_budget_rejections_total", &cause, 1,
		       (double)ig_membudget_refusals(IG_MEM_BODY));
	cause = label("cause", "tls_handshake");
	ig_expo_sample(e, "ingot_memory_budget_rejections_total", &cause, 1, (double)ig_membudget_refusals(IG_MEM_TLS));
	counter(e, "ingot_memory_budget_paused_total", "counter",
		"Times a connection stopped reading because its unsent output found no room in the memory budget "
		"(it reads again once that output has left).",
		(double)ig_membudget_refusals(IG_MEM_OUTPUT));
}

static void write_waiting(struct ig_expo *e)
{
	/* Up and down by one core, read a moment apart: never below zero. */
	counter(e, "ingot_handlers_waiting", "gauge",
		"Handlers suspended on their coroutine, waiting for a call (a query, an outbound call, a sleep).",
		(double)(int64_t)SUM_CORES(meter.handlers_waiting));
	counter(e, "ingot_waiting_rejections_total", "counter",
		"Requests answered 503 because their core had INGOT_MAX_WAITING handlers alive (or no stack could "
		"be mapped).",
		(double)SUM_CORES(meter.stack_rejected));
}

static void write_errors(struct ig_expo *e)
{
	ig_expo_family(e, "ingot_http_errors_total", "counter",
		       "Requests the engine refused before any handler, by status.");
	for (int i = 0; i < HTTP_ERROR_STATUSES; i++) {
		char status[8];
		if (i < HTTP_ERROR_STATUSES - 1)
			snprintf(status, sizeof status, "%d", ig_http_error_statuses[i]);
		else
			snprintf(status, sizeof status, "_OTHER");
		struct ig_label l = label("status", status);
		ig_expo_sample(e, "ingot_http_errors_total", &l, 1,
			       (double)sum_cores(offsetof(struct http_core, meter.errors) + (size_t)i * sizeof(ig_counter)));
	}
	ig_expo_family(e, "ingot_validation_failures_total", "counter",
		       "Requests whose decoding failed (400 before the handler), by route.");
	const struct ig_app *app = ig_http_server.cores[0].app;
	for (uint32_t r = 0; r <= app->route_count; r++) {
		uint64_t v = 0;
		for (int i = 0; i < ig_http_server.core_count; i++)
			if (ig_http_server.cores[i].meter.validation)
				v += ig_counter_get(&ig_http_server.cores[i].meter.validation[r]);
		struct ig_label l = label("http_route", r ? app->routes[r - 1] : "");
		ig_expo_sample(e, "ingot_validation_failures_total", &l, 1, (double)v);
	}
	ig_expo_family(e, "ingot_rate_limited_total", "counter",
		       "Requests a rate limit refused (429 before the handler), by route; a route none was refused on is left out.");
	for (uint32_t r = 1; r <= app->route_count; r++) {
		uint64_t v = 0;
		for (int i = 0; i < ig_http_server.core_count; i++)
			if (ig_http_server.cores[i].meter.rate_limited)
				v += ig_counter_get(&ig_http_server.cores[i].meter.rate_limited[r]);
		struct ig_label l = label("http_route", app->routes[r - 1]);
		if (v)
			ig_expo_sample(e, "ingot_rate_limited_total", &l, 1, (double)v);
	}
}

static void write_server(struct ig_expo *e, void *arg)
{
	(void)arg;
	series_family(e, "http_server_request_duration_seconds", "Duration of HTTP server requests.",
		      offsetof(struct http_series, duration), &ig_duration_bounds);
	counter(e, "http_server_active_requests", "gauge", "Number of active HTTP server requests.",
		(double)(int64_t)SUM_CORES(meter.active_requests));
	series_family(e, "http_server_request_body_size_bytes", "Size of HTTP server request bodies.",
		      offsetof(struct http_series, request_size), &ig_size_bounds);
	series_family(e, "http_server_response_body_size_bytes", "Size of HTTP server response bodies.",
		      offsetof(struct http_series, response_size), &ig_size_bounds);
	write_connections(e);
	write_waiting(e);
	write_errors(e);
	counter(e, "ingot_log_lines_dropped_total", "counter",
		"Log lines dropped because stdout was not read fast enough.", (double)ig_log_ring_dropped());
}

struct ig_metrics_source ig_server_metrics_source = { write_server, NULL, NULL };
