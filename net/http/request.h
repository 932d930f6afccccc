/* The request of an exchange as a handler reads it (ig_request) and the
 * exchange's callback types: the part of the handler API (exchange.h)
 * that the engine's own structures (internal.h) embed, so that both
 * include this and neither includes the other. */
#ifndef NET_HTTP_REQUEST_H
#define NET_HTTP_REQUEST_H

#include "kernel/runtime/ingot.h"

typedef struct ig_ctx ig_ctx;

typedef struct ig_request {
	ig_str method; /* "HEAD" is routed as GET; see head below */
	ig_str target, path, query; /* raw: path and query are not %-decoded */
	const ig_header *headers;
	size_t num_headers;
	ig_str body;
	int minor_version;
	bool head; /* a HEAD request: the body will not be sent */
} ig_request;

/* Turns the output struct into a body (exchange.h: ig_set_encoder). */
typedef void ig_encode_fn(ig_ctx *ctx, int status, const void *out);
/* Runs on the exchange's core (exchange.h: ig_after). */
typedef void ig_ctx_fn(ig_ctx *ctx, void *arg);

#endif
