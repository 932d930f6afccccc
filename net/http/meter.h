/* The server's per-core meters: request series (duration, request and
 * response body sizes per route, method and status) in a fixed table sized
 * at start, and the connection and protocol-error counters. Written only by
 * the core that owns them (net/metrics counters: no locks, no
 * read-modify-write); read by the scrape on core 0 (server_metrics.c).
 * Label values are bounded by construction: a route index (0: no path
 * matched), one of HTTP_METHODS, a status 100-599 (else "_OTHER"); a full
 * table counts further series in one overflow series. */
#ifndef NET_HTTP_METER_H
#define NET_HTTP_METER_H

#include "ingot/base.h"
#include "net/metrics/metrics.h"

/* Why a connection closed: ingot_connections_closed_total{reason}. */
enum http_close_reason {
	HTTP_CLOSE_CLIENT,         /* the client closed, reset or asked to close */
	HTTP_CLOSE_IDLE,           /* keep-alive idle timeout */
	HTTP_CLOSE_HEADER_TIMEOUT, /* 408: the head did not arrive in time */
	HTTP_CLOSE_BODY_TIMEOUT,   /* 408: the body did not arrive in time */
	HTTP_CLOSE_WRITE_TIMEOUT,  /* the client left responses unread */
	HTTP_CLOSE_ERROR,          /* a protocol error or a resource limit */
	HTTP_CLOSE_DRAIN,          /* closed by the drain (SIGTERM/SIGINT) */
	HTTP_CLOSE_REASONS
};
extern const char *const ig_http_close_reason_names[HTTP_CLOSE_REASONS];

/* http_request_method's values: the standard methods, then "_OTHER". */
#define HTTP_METHODS 10
extern const char *const ig_http_method_names[HTTP_METHODS];
/* The method's index; HEAD (routed as GET, head set) is HEAD. */
uint32_t ig_http_method_index(ig_str method, bool head);

/* ingot_http_errors_total{status}: the statuses the engine answers before
 * any handler, then one slot for any other. */
#define HTTP_ERROR_STATUSES 11
extern const int ig_http_error_statuses[HTTP_ERROR_STATUSES - 1];

/* A series' key: route (0 none, 1 + index) << 16 | method << 12 | status
 * (100-599, 0 for any other). */
#define HTTP_SERIES_OVERFLOW UINT32_MAX
struct http_series {
	uint32_t key;
	struct ig_histogram duration, request_size, response_size;
};

struct http_meter {
	ig_counter active_requests; /* a gauge, per core */
	ig_counter accepted, rejected;
	ig_counter closed[HTTP_CLOSE_REASONS];
	ig_counter errors[HTTP_ERROR_STATUSES];
	/* wait.c: handlers suspended now (a gauge, per core), and requests
	   answered 503 because no coroutine could be had */
	ig_counter handlers_waiting, stack_rejected;
	ig_counter *validation; /* [route_count + 1]: by route, 0 none */
	ig_counter *rate_limited; /* [route_count + 1]: 429s of a rate limit, by route */
	/* The series in the order first seen; used is published with release
	   after an entry's key is written, so the scrape sees whole keys. The
	   index (the owning core's open addressing, entry + 1, 0 empty) is
	   atomic only so that the scrape may probe it too. */
	struct http_series *series;
	_Atomic uint32_t used;
	uint32_t cap, route_count;
	_Atomic uint16_t *index;
	uint32_t index_mask;
	struct http_series *last; /* the owner's: the series of the last request
				     (most requests repeat it: no probe) */
};

/* Maps the table for route_count routes (untouched until used). Without
 * memory the meter counts nothing (series NULL). */
void ig_http_meter_init(struct http_meter *m, uint32_t route_count);

/* One answered request. route: 1 + index, 0 when no path matched. */
void ig_http_meter_request(struct http_meter *m, uint32_t route, uint32_t method, int status, uint64_t duration_us,
			size_t request_bytes, size_t response_bytes);
/* A status the engine answered without an exchange (conn_fail_request),
 * or the typed-API runtime before the handler (415). */
void ig_http_meter_error(struct http_meter *m, int status);

/* ---- for the scrape (any thread) ---- */
/* The entries published so far. */
uint32_t ig_http_meter_published(const struct http_meter *m);
/* m's series with key, or NULL. */
const struct http_series *ig_http_meter_find(const struct http_meter *m, uint32_t key);

#endif
