/* Request ids and W3C Trace Context (level 1) for one exchange: what the
 * request brought (X-Request-Id, traceparent, tracestate, found by the
 * parser's scan of the fields) and the ids made for it. Everything is
 * worked out on first use, from the fields (which stay reachable after a
 * request is detached into its arena) and the core's rng, so a request
 * whose trace nobody reads costs only its request id. ig_finish chooses
 * the id at the latest, while the request's bytes are still there. The handler API is
 * in include/ingot/http.h (ig_request_id, ig_trace_id, ...). */
#ifndef NET_HTTP_TRACE_H
#define NET_HTTP_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel/runtime/arena.h"
#include "ingot/base.h"
#include "kernel/runtime/rng.h"

#define HTTP_REQUEST_ID_MAX 128  /* longer X-Request-Id values are replaced */
#define HTTP_MADE_ID_LEN 32      /* a made id: 128 random bits in hex */
#define HTTP_TRACESTATE_MAX 512  /* longer tracestate is dropped, not cut */
#define HTTP_TRACEPARENT_LEN 55  /* version 00's; ingot/http.h: IG_TRACEPARENT_LEN */

struct http_request;

struct http_trace {
	/* from the parser (struct http_request): 1 + the index of the first
	   field in the request's field array; 0: none */
	uint16_t request_id_field, traceparent_field, tracestate_field;
	uint16_t traceparents, tracestates;
	bool trace_ready; /* trace_id, span_id, flags and tracestate are set */
	uint8_t flags;
	uint8_t id_len;   /* 0 until the request id is chosen */
	/* Copies, never slices of the request: a response is written after
	   the read buffer it was parsed from has gone. */
	char id[HTTP_REQUEST_ID_MAX];
	ig_str tracestate; /* in the exchange's arena */
	char trace_id[33], span_id[17]; /* hex, NUL-terminated */
};

/* A new exchange's: nothing chosen yet. Only the head of the struct is
 * cleared; the ids are written before they are read. */
static inline void http_trace_reset(struct http_trace *t)
{
	memset(t, 0, offsetof(struct http_trace, id));
}

/* Takes note of r's trace fields for an exchange starting now. */
void ig_http_trace_begin(struct http_trace *t, const struct http_request *r);

/* True for a usable incoming X-Request-Id: 1 to 128 characters from 0x21
 * to 0x7e (quotes and backslashes included: JSON output escapes them). */
bool ig_http_request_id_valid(ig_str v);

/* The id of a request that was parsed but gets no exchange (an engine
 * error such as 413): its own X-Request-Id if valid, else a made one.
 * Written into out; returns its length. */
size_t ig_http_request_id_of(const struct http_request *r, struct ig_rng *rng, char out[HTTP_REQUEST_ID_MAX]);

/* W3C traceparent: version 00 exactly 55 characters; a higher version
 * (not ff) at least 55, its first 55 read as 00's, and a '-' after them
 * if longer; lowercase hex; trace and parent ids not all zeros. On
 * success writes the trace id (32 hex, no NUL) and the flags. */
bool ig_http_traceparent_parse(ig_str v, char trace_id[32], uint8_t *flags);

/* An exchange's ids, made on first use from its request's fields (the
 * field indexes ig_http_trace_begin noted point into them) and the core's
 * rng; each is chosen once, then only read. */
/* The request id: the valid X-Request-Id, else a made one. */
ig_str ig_http_trace_request_id(struct http_trace *t, const ig_header *fields, struct ig_rng *rng);
/* Fills the trace context (trace and span ids, flags, tracestate copied
 * into arena) unless it is filled already; returns t. */
struct http_trace *ig_http_trace_context(struct http_trace *t, const ig_header *fields, size_t num_fields,
					 ig_arena *arena, struct ig_rng *rng);
/* The traceparent of a child of t's span (t's context filled): "00-<trace
 * id>-<a new span id>-<flags>", no NUL. */
void ig_http_trace_child(const struct http_trace *t, struct ig_rng *rng, char out[HTTP_TRACEPARENT_LEN]);

/* 64-bit FNV-1a of the id, for sampling decisions that agree for every
 * line (and every service) that sees the same id. */
uint64_t ig_http_request_id_hash(ig_str id);

#endif
