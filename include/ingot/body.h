/* Streamed bodies: a response an operation's handler sends as a stream of
 * bytes as it produces them (a file, an export), instead of one whole
 * body, with the client's pace holding the handler back; and a request
 * body the handler reads as it arrives (an upload), for an operation the
 * document marks with x-ingot-stream-body, with the handler's pace
 * holding the client back. JSON bodies stay whole and validated (the
 * generated decoders and encoders). All calls are made by the handler, on
 * its coroutine, before it returns (base.h's conventions). */
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
	/* A streamed request body went past its operation's maxBytes
	   (chunked: a Content-Length past it is answered 413 before the
	   handler runs). Answer 413. */
	IG_BODY_TOO_LARGE,
	/* A streamed request body's chunked framing is broken. Answer 400. */
	IG_BODY_MALFORMED,
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
 * In-process (Lambda's events, inproc.h), there is no connection: the body
 * is gathered in the request's memory and answered whole, with status and
 * content_type, at ig_body_out_end (past that memory, short of its length,
 * or never ended: 500 instead).
 * Returns: the stream; NULL when none can be opened: the client gone,
 * the server draining, an earlier pipelined request still unanswered, a
 * bad content_type or length, a second stream. The handler then answers
 * as usual. */
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

/* ---- the request body, read as it arrives ---- */

/* Reads the next bytes of ctx's request body into p, at most cap (cap > 0),
 * waiting until some have arrived. On an operation with
 * x-ingot-stream-body, the body streams: the server holds about one read
 * buffer of it (INGOT_MAX_HEADER_BYTES + 16 KiB), and a handler that does
 * not read holds the client back; the client may pause up to
 * INGOT_BODY_TIMEOUT_MS between bytes (an idle timeout, not a deadline).
 * On any other operation, and for an in-process exchange (Lambda's event
 * holds the body), it reads the whole body the server already has.
 * A handler that answers before it read the whole body has the connection
 * closed after its answer (the rest is not read).
 * Returns: IG_BODY_OK with *n > 0 bytes read; IG_BODY_OK with *n == 0 at
 * the body's end (every later call says so again); IG_BODY_CLOSED (the
 * client went away, sent nothing for INGOT_BODY_TIMEOUT_MS, or the
 * exchange was cancelled: nothing to answer); IG_BODY_TOO_LARGE;
 * IG_BODY_MALFORMED; IG_BODY_INVALID (not ctx's handler on its
 * coroutine, or cap 0). After an error, *n is 0 and the same error
 * comes again. */
IG_MUST_USE IG_NONNULL(1, 2, 4) enum ig_body_result ig_body_in_read(ig_ctx *ctx, void *p, size_t cap, size_t *n);

/* The request body's declared length (Content-Length), or -1 when the
 * client sends it chunked (its length is known at its end). */
IG_NONNULL(1) int64_t ig_body_in_length(const ig_ctx *ctx);

#endif
