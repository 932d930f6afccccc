/* The Runtime API's HTTP calls (runtime.c): one call at a time on one
 * kept-alive loopback connection to AWS_LAMBDA_RUNTIME_API (an IPv4
 * host:port), on the runtime's loop. Not net/client: a binary whose app
 * makes no outbound call links no client, no resolver and no TLS client,
 * and Lambda mode is in every binary. */
#ifndef NET_LAMBDA_API_CALL_H
#define NET_LAMBDA_API_CALL_H

#include "ingot/base.h"
#include "kernel/runtime/loop.h"
#include "net/http/codec.h"

#include <stddef.h>
#include <stdint.h>

#define LAMBDA_API_HEADERS_MAX 32

/* What a call ends with: error set (a static text: no connection, a reset,
 * a timeout, a malformed or too large answer) and nothing else, or the
 * status, fields and body, valid until the next call. */
struct lambda_api_answer {
	const char *error;
	int status;
	const ig_header *headers;
	size_t header_count;
	ig_str body;
};
typedef void lambda_api_fn(const struct lambda_api_answer *answer);

struct lambda_api {
	struct ig_loop *loop;
	struct ig_io io;
	struct ig_timer timer;
	const char *api;   /* host:port */
	int fd;            /* -1: no connection */
	bool connecting;
	bool reused;       /* the call went out on a connection an earlier one used */
	bool keep_alive_answer;
	bool again;        /* resent once already after a stale connection */
	lambda_api_fn *fn; /* NULL: no call under way */
	uint32_t timeout_ms;
	char head[1024];   /* the request's head, then its body */
	size_t head_len, head_sent;
	ig_str body;
	size_t body_sent;
	char *rbuf;        /* mapped once: the answer's head and body */
	size_t rcap, rlen;
	size_t head_end;   /* 0 until the answer's head is parsed */
	int status;
	int framing;      /* enum http_body_framing */
	uint64_t content_length;
	size_t body_end;   /* the decoded body is rbuf[head_end .. body_end) */
	struct http_chunked_decoder chunked;
	ig_header fields[LAMBDA_API_HEADERS_MAX];
	size_t field_count;
};

/* Maps the answer buffer (max_body bytes of body plus a head). 0 or -1
 * with errno. */
int ig_lambda_api_init(struct lambda_api *c, struct ig_loop *loop, size_t max_body);

/* Sends method path (with head fields h[0..n) and body) to api, host:port,
 * and calls fn once with the answer or the failure. timeout_ms bounds the
 * wait for the whole answer (UINT32_MAX: none, as for the next
 * invocation, which Lambda answers when there is one); a connection that
 * cannot be made in 10 s fails either way. */
void ig_lambda_api_call(struct lambda_api *c, const char *api, const char *method, const char *path,
		     const ig_header *h, size_t n, ig_str body, uint32_t timeout_ms, lambda_api_fn *fn);

#endif
