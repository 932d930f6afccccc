/* WebSockets (RFC 6455) typed by the document: an operation with
 * x-ingot-websocket is upgraded by its handler (ig_ws_open_<operationId>,
 * generated), after the door's checks; each inbound text message is decoded
 * and validated against the declared schema before the app's
 * <operationId>_message sees it, and ig_ws_send_<operationId> sends typed
 * outbound messages. All calls are made on the core the socket was opened on
 * (base.h's conventions). */
#ifndef INGOT_WEBSOCKET_H
#define INGOT_WEBSOCKET_H

#include "ingot/http.h"

/* A socket: the runtime's, from the core's pool. Valid from its open until
 * its close callback has returned (ig_ws_on_close), or, without one, while
 * its handlers run. */
typedef struct ig_ws ig_ws;

/* What a send returns. */
enum ig_ws_result {
	IG_WS_OK = 0,
	/* The socket is closing or closed: nothing was sent. */
	IG_WS_CLOSED,
	/* The client's window is full (INGOT_MAX_OUTPUT unsent bytes) and the
	   caller cannot wait (it is not the socket's own message handler, which
	   waits for room instead): nothing was sent; try later. */
	IG_WS_FULL,
	/* The message could not be encoded in the memory a send may use. */
	IG_WS_INVALID,
};

/* Called once when ws closes (the client's close, a protocol error, the
 * drain, the client gone, ig_ws_close), on its core, with arg: the owner of
 * a kept handle drops it there; ws is given back after fn returns. Replaces
 * an earlier one. */
typedef void ig_ws_fn(void *arg, ig_ws *ws);
IG_NONNULL(1) void ig_ws_on_close(ig_ws *ws, ig_ws_fn *fn, void *arg);

/* Closes ws with code (1000 normally, or 3000..4999) and reason (UTF-8, cut
 * to fit 123 bytes): the close frame leaves after what was sent, then the
 * connection closes. The close callback runs. Nothing is sent after it. */
IG_NONNULL(1) void ig_ws_close(ig_ws *ws, uint16_t code, const char *reason);

/* Whether ws is closing or closed (sends return IG_WS_CLOSED). */
IG_NONNULL(1) bool ig_ws_closed(const ig_ws *ws);

/* The app's pointer, kept with the socket for its message handler. */
IG_NONNULL(1) void ig_ws_set_data(ig_ws *ws, void *data);
IG_NONNULL(1) void *ig_ws_data(const ig_ws *ws);

/* Sends one text message (data need not be JSON: an untyped send). From
 * the socket's own message handler a send waits while the window is full;
 * from anywhere else it does not. Returns IG_WS_OK, IG_WS_CLOSED or
 * IG_WS_FULL (only when it cannot wait). */
IG_MUST_USE IG_NONNULL(1) enum ig_ws_result ig_ws_send_text(ig_ws *ws, ig_str data);

/* ---- for the generated code ---- */

struct ig_json_reader;
/* An operation's socket type: decodes one whole inbound message (valid
 * UTF-8) with r, in ctx's arena, then calls the app's handler with ctx
 * unless ig_ws_decoded says no. */
struct ig_ws_type {
	void (*message)(ig_ctx *ctx, ig_ws *ws, struct ig_json_reader *r, bool check);
};
/* The upgrade: checks the handshake (Upgrade and Connection tokens,
 * Sec-WebSocket-Version 13, the key, Origin) and answers 101. Returns the
 * socket; NULL after answering the refusal (400, 403 or 426; 501 for an
 * in-process request, Lambda's; 503: no socket can be opened now), whose
 * status is *status for the handler to return. */
IG_MUST_USE IG_NONNULL(1, 2, 3) ig_ws *ig_ws_open(ig_ctx *ctx, const struct ig_ws_type *type, int *status);
/* The decoders' report callback (arg is the socket): the first violation
 * becomes the 1008 close's reason. */
void ig_ws_violation(void *arg, const char *pointer, const char *keyword, const char *message);
/* After the decode: whether the message was whole JSON that its schema
 * accepts; if not the socket is closing with 1008 and the reason. */
IG_NONNULL(1, 2) bool ig_ws_decoded(ig_ws *ws, struct ig_json_reader *r);
/* For the typed send: an empty writer on the core's scratch memory (*w),
 * then ig_ws_send_buffered sends it as one text message. */
IG_MUST_USE IG_NONNULL(1, 2) enum ig_ws_result ig_ws_buffer(ig_ws *ws, ig_wbuf **w);
IG_MUST_USE IG_NONNULL(1) enum ig_ws_result ig_ws_send_buffered(ig_ws *ws);

#endif
