/* Streamed bodies: a response an operation's handler sends as a stream of
 * bytes as it produces them (a file, an export), instead of one whole
 * body, with the client's pace holding the handler back. JSON bodies stay
 * whole (the generated encoders). All calls are made by the handler, on its
 * coroutine, before it returns (base.h's conventions). */
#ifndef INGOT_BODY_H
#define INGOT_BODY_H

#include "ingot/http.h"

#include <stdint.h>

/* A response being streamed: the runtime's, in the exchange's memory;
 * valid until the handler returns. */
typedef struct ig_body_out ig_body_out;

/* What a streamed body's calls return. */
enum ig_body_result {
	IG_BODY_OK = 0,
	/* The stream has ended: the client went away or stopped reading for
	   INGOT_WRITE_TIMEOUT_MS, the exchange was cancelled, or the grace
	   period of a drain ran out. Nothing was sent; nothing will be. */
	IG_BODY_CLOSED,
	/* A call the stream's state refuses: bytes past the length given to
	   ig_body_out_begin, an end before all of them were written, or the
	   caller is not the stream's handler on its coroutine. */
	IG_BODY_INVALID,
};

/* Answers ctx with status and content_type (NUL-terminated, no line
 * break), then a body the handler writes in pieces: length bytes exactly
 * (Content-Length), or, with length -1, as many as it writes (chunked
 * over HTTP/1.1; over HTTP/1.0 the connection's close ends it). For a
 * HEAD request the head alone leaves: writes send nothing, and the end
 * needs none (the handler may skip them: ig_req(ctx)->head).
 * The head leaves at once (earlier pipelined answers first), with the handler's
 * headers (ig_add_header) and CORS's. The exchange then belongs to the
 * stream: the status the handler returns is not sent. From ctx's handler,
 * once, before it returns.
 * Returns: the stream; NULL when none can be opened: an exchange without a connection (in-process, Lambda), the client gone,
 * the server draining, an earlier pipelined request still unanswered, a
 * bad content_type or length. The handler then answers as usual. */
IG_MUST_USE IG_NONNULL(1, 3) ig_body_out *ig_body_out_begin(ig_ctx *ctx, int status, const char *content_type,
							     int64_t length);

/* Writes p[0..n): it leaves as the client reads. While INGOT_MAX_OUTPUT
 * bytes are unsent the handler waits (a slow client holds back its
 * producer; the server holds at most about that much of the body).
 * Returns: IG_BODY_OK (queued to leave); IG_BODY_CLOSED; IG_BODY_INVALID
 * (past the declared length: nothing was written). */
IG_MUST_USE IG_NONNULL(1) enum ig_body_result ig_body_out_write(ig_body_out *s, const void *p, size_t n);

/* Ends the body: what was written leaves, then (chunked) the last chunk,
 * and the connection goes on with its next request. A handler that
 * returns without ending its body, or ends it short of its declared
 * length, has the connection closed instead, so that the client sees a
 * cut body rather than a short one that looks whole (a file that failed
 * to read half-way).
 * Returns: IG_BODY_OK; IG_BODY_CLOSED (the client had gone);
 * IG_BODY_INVALID (short of the length: the connection closes). */
IG_MUST_USE IG_NONNULL(1) enum ig_body_result ig_body_out_end(ig_body_out *s);

#endif
