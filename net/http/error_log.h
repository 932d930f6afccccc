/* The one error line of a 5xx (error_log.c): what every answer at 500 or
 * above writes, once per request, and the per-core bound that keeps a storm
 * of identical failures to one line a second and a count. Inside net/http,
 * and for the modules that log a request's failure in their own words (a
 * database error, a failed upstream call) through net/http/internal.h. */
#ifndef NET_HTTP_ERROR_LOG_H
#define NET_HTTP_ERROR_LOG_H

#include "kernel/runtime/timer.h"

#include <stdint.h>

#define HTTP_ERROR_LOG_SLOTS 8
#define HTTP_ERROR_CAUSE_MAX 64

/* One failure that was logged recently on a core: its route, status and
 * cause, when its second began, and how many identical ones were not
 * logged since. */
struct http_error_slot {
	uint64_t key; /* 0: free */
	uint64_t since_ms;
	uint32_t suppressed;
	uint32_t route;
	int status;
	char cause[HTTP_ERROR_CAUSE_MAX];
};

/* A core's table, touched only by its own thread: no lock, no atomic. */
struct http_error_log {
	struct http_error_slot slots[HTTP_ERROR_LOG_SLOTS];
	struct ig_timer tick; /* armed while a slot has a count to write */
};

#endif
