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

/* A streamed call's body (ig_lambda_api_stream), pulled as the socket
 * takes it and sent chunked. */
struct lambda_api_source {
	/* The bytes ready now ({NULL, 0}: none yet; the source calls
	   ig_lambda_api_more when there are). *end: none will follow them;
	   *trailers then holds the trailer fields, each "Name: value\r\n"
	   (may be empty), valid until the call ends. */
	ig_str (*peek)(void *arg, bool *end, ig_str *trailers);
	/* n of the bytes peek gave were sent. */
	void (*taken)(void *arg, size_t n);
};

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
	const struct lambda_api_source *src; /* a streamed call's; NULL otherwise */
	void *src_arg;
	bool src_started;  /* some of the source's bytes were sent: no resend */
	bool src_done;     /* the last chunk and trailers went */
	bool src_blocked;  /* the socket is full: EPOLLOUT watched */
	uint32_t answer_timeout_ms; /* after the end */
	char chunk_head[20]; /* the current chunk's size line */
	size_t chunk_head_len, chunk_head_sent;
	size_t chunk_left;   /* of its data, still to send */
	size_t chunk_tail_sent; /* of its CRLF */
	char last[512];      /* "0\r\n", the trailers, "\r\n" */
	size_t last_len, last_sent;
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

/* As ig_lambda_api_call, but the body is src's, sent chunked
 * (Transfer-Encoding: chunked is added to h) as it is made, with no
 * timeout until its end (the function's own deadline bounds it), then
 * timeout_ms for the answer. An answer that comes
 * before the end ends the call. A kept-alive connection found closed is
 * used again only if none of src's bytes had gone. */
void ig_lambda_api_stream(struct lambda_api *c, const char *api, const char *path, const ig_header *h, size_t n,
			  const struct lambda_api_source *src, void *arg, uint32_t timeout_ms, lambda_api_fn *fn);

/* The source has more bytes, or its end: sends what the socket takes.
 * Nothing when no streamed call is under way or the socket is full. */
void ig_lambda_api_more(struct lambda_api *c);

#endif
