/* Server-Sent Events (the HTML standard's text/event-stream): a stream an
 * operation's handler opens on its exchange and sends events to, typed
 * by the document (schemac generates ig_sse_send_<operationId>) or raw.
 * The response is 200, text/event-stream, Cache-Control: no-cache,
 * chunked over HTTP/1.1 (so the connection stays usable once the stream
 * ends); the stream takes the connection until it ends. All calls are made
 * on the core the stream was opened on (base.h's conventions). */
#ifndef INGOT_SSE_H
#define INGOT_SSE_H

#include "ingot/http.h"

/* A stream: the runtime's, from the core's pool; the handler borrows it,
 * or keeps it past its return (ig_sse_keep). */
typedef struct ig_sse ig_sse;

/* What a send returns. */
enum ig_sse_result {
	IG_SSE_OK = 0,
	/* The stream has ended: the client went away, the drain ended it, or
	   ig_sse_close was called. Nothing was sent; nothing will be. */
	IG_SSE_CLOSED,
	/* The client's window is full (INGOT_MAX_OUTPUT unsent bytes) and the
	   caller cannot wait (it is not the stream's handler on its
	   coroutine): nothing was sent; try later (ig_sse_on_writable). */
	IG_SSE_FULL,
	/* The event does not fit the memory a send may use (its encoding
	   failed, or an id or event name holds a line break or NUL): nothing
	   was sent. */
	IG_SSE_INVALID,
};

/* Opens the stream on ctx's exchange: the head is written at once (earlier
 * pipelined answers leave first) and each send after it leaves as it is
 * made. From ctx's handler, before it returns, once. The exchange then
 * belongs to the stream: the status the handler returns is not sent (it
 * still goes to the access log), and ig_cancelled(ctx) turns true when
 * the stream ends before the handler returns.
 * Returns: the stream, valid until the handler returns (or, after
 * ig_sse_keep, until ig_sse_close); NULL when no stream can be opened: a
 * HEAD request, an exchange without a connection (in-process, Lambda),
 * the client gone, the server draining, an earlier pipelined request
 * still unanswered, or the core's streams all in use. The handler then
 * answers as usual (a 503, say). */
IG_MUST_USE IG_NONNULL(1) ig_sse *ig_sse_open(ig_ctx *ctx);

/* Keeps s open after its handler returns, so that any code on this core
 * (a timer, another handler) sends to it later; an idle kept stream holds
 * no coroutine stack and no request memory. The caller then owns s and
 * must call ig_sse_close(s) exactly once, also after the client has gone
 * (ig_sse_on_close tells it). Without this call the stream ends when the
 * handler returns. */
IG_NONNULL(1) void ig_sse_keep(ig_sse *s);

/* Called once when s ends other than by ig_sse_close (the client went away,
 * the drain, the write timeout), on s's core, with the caller's arg: the
 * owner of a kept stream drops it from its lists there (and calls
 * ig_sse_close, which may be from inside fn). Replaces an earlier one. */
typedef void ig_sse_fn(void *arg, ig_sse *s);
IG_NONNULL(1) void ig_sse_on_close(ig_sse *s, ig_sse_fn *fn, void *arg);

/* Ends the stream if it is still open (what was sent leaves, then the
 * final chunk; the connection goes on with its next request), and, for a
 * kept stream, gives s back: nothing may use it afterwards. For a stream
 * its handler still runs, s stays valid until the handler returns. */
IG_NONNULL(1) void ig_sse_close(ig_sse *s);

/* Whether s has ended (sends return IG_SSE_CLOSED). */
IG_NONNULL(1) bool ig_sse_closed(const ig_sse *s);

/* Sends one event: `event:` when event is not NULL, `id:` when id is not
 * NULL (the client's Last-Event-ID on reconnect), and data, split on its
 * line breaks (CRLF, LF or CR) into `data:` lines, as the HTML standard
 * frames them. event and id are NUL-terminated and hold no line break.
 * From the stream's handler on its coroutine, a send waits while the
 * client's window is full (INGOT_MAX_OUTPUT unsent bytes): a slow client
 * holds back its producer. From anywhere else on the core it does not
 * wait. Returns: IG_SSE_OK (queued to leave); IG_SSE_CLOSED; IG_SSE_FULL
 * (only when it cannot wait); IG_SSE_INVALID. */
IG_MUST_USE IG_NONNULL(1) enum ig_sse_result ig_sse_send(ig_sse *s, const char *event, const char *id,
							  ig_str data);

/* Sends `retry: ms` (the client's reconnection delay). Returns as
 * ig_sse_send. */
IG_MUST_USE IG_NONNULL(1) enum ig_sse_result ig_sse_retry(ig_sse *s, uint32_t ms);

/* Sends a comment line (`: text`), which clients ignore: a heartbeat of
 * the app's own (the runtime sends one every INGOT_SSE_HEARTBEAT_MS of
 * silence). text holds no line break. Returns as ig_sse_send. */
IG_MUST_USE IG_NONNULL(1, 2) enum ig_sse_result ig_sse_comment(ig_sse *s, const char *text);

/* Called once, with arg, when the window of s, full when a send returned
 * IG_SSE_FULL, has room again (or s has ended: check ig_sse_closed). */
IG_NONNULL(1, 2) void ig_sse_on_writable(ig_sse *s, ig_sse_fn *fn, void *arg);

/* The request's Last-Event-ID (a reconnecting EventSource's last id).
 * Returns: a slice valid while ctx is, {NULL, 0} when absent. */
IG_NONNULL(1) ig_str ig_sse_last_event_id(const ig_ctx *ctx);

/* For the generated ig_sse_send_<operationId>: waits for room as a send
 * does, then sets *w to an empty writer on the core's scratch memory, for
 * the event's data, which ig_sse_send_buffered sends next (nothing else may
 * run between the two). Returns as ig_sse_send; *w is set whatever it
 * returns. */
IG_MUST_USE IG_NONNULL(1, 2) enum ig_sse_result ig_sse_buffer(ig_sse *s, ig_wbuf **w);
/* Sends what ig_sse_buffer's writer holds as the event's data (as
 * ig_sse_send, without waiting; IG_SSE_INVALID when its writes failed) and
 * empties it. */
IG_MUST_USE IG_NONNULL(1) enum ig_sse_result ig_sse_send_buffered(ig_sse *s, const char *event, const char *id);

#endif
