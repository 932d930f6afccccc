/* WebSockets (include/ingot/websocket.h): the upgrade's checks and 101,
 * then a connection's frames read with net/ws's reader, messages assembled
 * under a limit and handed, decoded, to the operation's type on a handler
 * coroutine (wait.h) in an exchange of their own; sends that wait for
 * room; pings, the close handshake, idle pings, the drain's 1001. The connection's side is
 * conn.c's stream (internal.h's ig_http_stream_*), as for Server-Sent
 * Events: conn.c links none of this. */
#include "ingot/websocket.h"
#include "internal.h"
#include "cors.h"
#include "wait.h"
#include "net/ws/frame.h"
#include "net/ws/handshake.h"
#include "ingot/json_read.h"

#include <stdlib.h>
#include <strings.h>

struct ig_ws {
	struct http_stream base; /* first: conn.c's upcalls get this */
	struct http_core *core;
	const struct ig_ws_type *type;
	ig_ctx *ctx; /* the upgrading handler's exchange, until it returns */
	struct ig_ws_reader rd;
	char *msg; /* the message being assembled (malloc: an idle socket holds none) */
	size_t msg_len, msg_cap;
	const char *why; /* the first violation of the message being decoded */
	ig_ctx *msg_ctx; /* the exchange its message handler runs in (and may wait in) */
	struct ig_wait_call *waiting; /* that handler waits for room to send */
	struct ig_timer ping;
	struct ig_deferred later; /* finish, or resume reading, after the batch */
	ig_ws_fn *on_close;
	void *close_arg, *data;
	uint64_t last_rx_ms;
	bool closed;     /* closing or closed: nothing more is sent */
	bool binary;     /* the message being assembled is binary: refused at its end */
	bool in_message; /* its type's handler runs, or waits */
	bool pending;    /* the next message, whole in msg, waits for that handler */
	bool held;       /* reading paused behind a full window */
	bool resume;     /* later hands on the bytes that wait (room again, a handler done) */
	bool finishing;  /* later finishes the exchange */
	bool gone;       /* given back by later, after the batch */
};

/* Each core's sockets and the scratch the generated sends encode in. */
static struct ig_loop_slot ws_slot;

static const struct http_stream_ops ws_ops;

/* INGOT_WS_MAX_MESSAGE, or INGOT_MAX_BODY when it is 0. */
static int64_t max_message(const struct http_core *core)
{
	return core->cfg->ws_max_message > 0 ? core->cfg->ws_max_message : core->cfg->max_body;
}

static uint64_t now_ms(const ig_ws *ws)
{
	return ws->core->loop.clock.now_ms;
}

/* ---- output ---- */

/* Queues one frame of ours: its head and payload p[0..n). */
static void put_frame(ig_ws *ws, enum ig_ws_opcode op, const void *p, size_t n)
{
	struct http_conn *c = ws->base.conn;
	uint8_t head[IG_WS_HEAD_MAX];
	size_t h = ig_ws_put_head(head, op, true, n);
	ig_http_out_append(c, (const char *)head, h);
	ig_http_stream_write(&ws->base, p, n);
	/* Over the window conn.c lends no read buffer: reading resumes once
	   the output has gone down (ws_writable). */
	if (ws->base.conn && ig_http_stream_unsent(&ws->base) > (size_t)ws->core->cfg->max_output)
		ws->held = true;
}

/* Given back once nothing holds it (closed, its exchange finished, no
 * message handler running), after the batch: whoever is on the stack
 * (a send whose write failed, a close callback) may still read it. */
static void maybe_release(ig_ws *ws)
{
	if (!ws->closed || ws->ctx || ws->in_message || ws->base.conn || ws->gone)
		return;
	ws->gone = true;
	ig_timer_cancel(&ws->core->loop.timers, &ws->ping);
	free(ws->msg);
	ws->msg = NULL;
	ig_loop_defer(&ws->core->loop, &ws->later);
}

/* ws has closed: its owner hears, once. */
static void notify(ig_ws *ws)
{
	ig_ws_fn *fn = ws->on_close;
	ws->on_close = NULL;
	if (fn)
		fn(ws->close_arg, ws);
}

static void wake_waiting(ig_ws *ws);

/* ws has closed (closed is set): its timer stops, its handlers' waits
 * return cancelled, its owner hears. */
static void stopped(ig_ws *ws)
{
	ig_timer_cancel(&ws->core->loop.timers, &ws->ping);
	if (ws->ctx)
		ig_wait_cancel(ws->ctx);
	wake_waiting(ws);
	if (ws->msg_ctx)
		ig_wait_cancel(ws->msg_ctx);
	notify(ws);
}

/* Closes with code and reason: the close frame after what was queued,
 * then the connection's end. */
static void close_with(ig_ws *ws, uint16_t code, const char *reason, size_t reason_len)
{
	if (ws->closed)
		return;
	ws->closed = true; /* a write that fails below finds it closed */
	if (ws->base.conn) {
		uint8_t payload[IG_WS_CONTROL_MAX];
		size_t n = code == IG_WS_CLOSE_NO_STATUS ? 0 : ig_ws_close_payload(payload, code, reason, reason_len);
		put_frame(ws, IG_WS_OP_CLOSE, payload, n);
		if (ws->base.conn)
			ig_http_stream_end(&ws->base, true);
	}
	stopped(ws);
}

/* ---- idle pings ---- */

static void ping_arm(ig_ws *ws)
{
	int64_t every = ws->core->cfg->ws_ping_ms;
	if (every > 0 && !ws->closed)
		ig_timer_set_lazy(&ws->core->loop.timers, &ws->ping, ws->last_rx_ms + (uint64_t)every);
}

static void on_ping(struct ig_timer *t)
{
	ig_ws *ws = (ig_ws *)((char *)t - offsetof(ig_ws, ping));
	if (ws->closed || !ws->base.conn)
		return;
	uint64_t due = ws->last_rx_ms + (uint64_t)ws->core->cfg->ws_ping_ms;
	if (now_ms(ws) >= due) {
		/* Silence: a ping, whose pong (or anything) proves the client
		   is there; a client gone shows as a failed write. */
		put_frame(ws, IG_WS_OP_PING, NULL, 0);
		ws->last_rx_ms = now_ms(ws);
	}
	if (!ws->closed && ws->base.conn)
		ping_arm(ws);
}

/* ---- input ---- */

static void close_lit(ig_ws *ws, uint16_t code, const char *reason)
{
	close_with(ws, code, reason, strlen(reason));
}

static void message(ig_ws *ws);

/* A message's run: its exchange (what its handler may wait in, whose arena
 * holds the message and what is decoded from it) and the work that runs it. */
struct msg_run {
	struct ig_wait_work work;
	ig_ws *ws;
	const char *text;
	size_t len;
};

/* On the handler's coroutine: decodes, and calls the app's handler. */
static int run_message(ig_ctx *x, const void *in, void *out)
{
	(void)out;
	const struct msg_run *m = in;
	ig_json_reader r;
	ig_jr_init(&r, m->text, m->len, &x->arena, 64);
	m->ws->why = NULL;
	m->ws->type->message(x, m->ws, &r, true);
	return 0;
}

/* The handler has returned (and what it started has completed): the
 * exchange goes, the next message may come. */
static void message_end(ig_ws *ws, ig_ctx *x)
{
	ws->in_message = false;
	ws->msg_ctx = NULL;
	ig_http_ctx_free(x);
	if (ws->closed) {
		maybe_release(ws);
	}
}

static void message_waited(ig_ctx *x, void *arg)
{
	struct msg_run *m = (struct msg_run *)((char *)arg - offsetof(struct msg_run, work));
	ig_ws *ws = m->ws;
	message_end(ws, x);
	if (ws->closed)
		return;
	if (ws->pending) {
		ws->pending = false;
		message(ws);
	}
	if (!ws->closed && !ws->in_message) { /* the bytes that waited behind it */
		ws->resume = true;
		ig_loop_defer(&ws->core->loop, &ws->later);
	}
}

/* A whole message: checked, then decoded and handed to the operation's
 * type on a handler coroutine, in an exchange of its own. */
static void message(ig_ws *ws)
{
	const char *text = ws->msg ? ws->msg : "";
	ig_ctx *x = NULL;
	struct msg_run *m = NULL;
	char *copy = NULL;
	if (ws->binary) {
		close_lit(ws, IG_WS_CLOSE_UNSUPPORTED, "binary messages are not accepted: text (JSON) only");
	} else if (!ig_utf8_valid(text, ws->msg_len)) {
		close_lit(ws, IG_WS_CLOSE_INVALID_DATA, "a text message that is not UTF-8");
	} else if (!(x = ig_http_ctx_new(ws->core, NULL)) || !(m = ig_arena_alloc(&x->arena, sizeof *m)) ||
		   !(copy = ig_arena_alloc(&x->arena, ws->msg_len + 1))) {
		close_lit(ws, IG_WS_CLOSE_TRY_AGAIN, "no memory for the message now");
	} else {
		memcpy(copy, text, ws->msg_len);
		*m = (struct msg_run){ .work = { .handle = run_message, .name = "websocket message", .in = m,
						 .finish = message_waited },
				       .ws = ws, .text = copy, .len = ws->msg_len };
		ws->in_message = true;
		ws->msg_ctx = x;
		x = NULL;
		switch (ig_wait_run(ws->msg_ctx, &m->work)) {
		case 1:
			message_end(ws, ws->msg_ctx);
			break;
		case 0: /* it waits: message_waited ends it */
			break;
		default:
			message_end(ws, ws->msg_ctx);
			close_lit(ws, IG_WS_CLOSE_TRY_AGAIN, "no handler can run now");
		}
	}
	if (x)
		ig_http_ctx_free(x);
	/* Its memory goes back at once: an idle socket holds none. */
	free(ws->msg);
	ws->msg = NULL;
	ws->msg_len = ws->msg_cap = 0;
}

static bool append(ig_ws *ws, const uint8_t *p, size_t n)
{
	if (ws->msg_len + n > ws->msg_cap) {
		size_t cap = ws->msg_cap ? ws->msg_cap : 256;
		while (cap < ws->msg_len + n)
			cap *= 2;
		char *m = realloc(ws->msg, cap);
		if (!m)
			return false;
		ws->msg = m;
		ws->msg_cap = cap;
	}
	if (n)
		memcpy(ws->msg + ws->msg_len, p, n);
	ws->msg_len += n;
	return true;
}

static void event(ig_ws *ws, const struct ig_ws_event *ev)
{
	switch (ev->kind) {
	case IG_WS_DATA:
		if (ev->first)
			ws->binary = !ev->text;
		if (!ws->binary && !append(ws, ev->data, ev->len)) {
			close_lit(ws, IG_WS_CLOSE_INTERNAL, "out of memory for the message");
			return;
		}
		if (ev->last && ws->in_message)
			ws->pending = true; /* read, not handled, until the handler returns */
		else if (ev->last)
			message(ws);
		return;
	case IG_WS_PING:
		put_frame(ws, IG_WS_OP_PONG, ev->data, ev->len);
		return;
	case IG_WS_PONG:
	case IG_WS_NEED_MORE:
		return;
	case IG_WS_CLOSE: /* answered with its code, as RFC 6455 section 5.5.1 asks */
		close_with(ws, ev->code, ev->reason, ev->reason_len);
		return;
	case IG_WS_ERROR:
		close_with(ws, ev->code, ev->reason, ev->reason_len);
		return;
	}
}

static size_t ws_received(struct http_stream *b, char *p, size_t n)
{
	ig_ws *ws = (ig_ws *)b;
	ws->last_rx_ms = now_ms(ws);
	size_t at = 0;
	/* Behind a full window the next message waits (its answer would find
	   no room): its bytes stay in conn.c's buffer until ws_writable. While
	   a handler waits, control frames are still read (a close, a ping),
	   and one more message, which then waits for it. */
	while (!ws->closed && !ws->held && !ws->pending && at < n) {
		struct ig_ws_event ev;
		at += ig_ws_read(&ws->rd, (uint8_t *)p + at, n - at, &ev);
		if (ev.kind == IG_WS_NEED_MORE)
			break;
		event(ws, &ev);
	}
	if (ws->closed) {
		maybe_release(ws);
		return n; /* nothing more is read */
	}
	return at;
}

/* ---- conn.c's upcalls ---- */

static void finish(ig_ws *ws)
{
	ig_ctx *x = ws->ctx;
	ws->ctx = NULL;
	if (x->metered)
		http_ctx_meter(x, ig_monotonic_us());
	ig_http_ctx_free(x);
	maybe_release(ws);
}

static void later(struct ig_deferred *d)
{
	ig_ws *ws = (ig_ws *)((char *)d - offsetof(ig_ws, later));
	if (ws->gone) {
		ig_pool_give(&http_stream_core_of(ws->core, &ws_slot)->handles, ws);
		return;
	}
	if (ws->finishing) {
		ws->finishing = false;
		finish(ws); /* may give ws back: later again, queued */
		if (ws->gone)
			return;
	}
	if (ws->resume) {
		ws->resume = false;
		if (ws->base.conn)
			ig_http_stream_resume(&ws->base);
	}
}

static void wake_waiting(ig_ws *ws)
{
	struct ig_wait_call *w = ws->waiting;
	ws->waiting = NULL;
	if (w)
		ig_wait_call_done(w);
}

static void ws_writable(struct http_stream *b)
{
	ig_ws *ws = (ig_ws *)b;
	wake_waiting(ws);
	if (ws->held) {
		ws->held = false;
		ws->resume = true;
		ig_loop_defer(&ws->core->loop, &ws->later);
	}
}

static void ws_gone(struct http_stream *b)
{
	ig_ws *ws = (ig_ws *)b;
	if (!ws->closed) {
		ws->closed = true;
		stopped(ws);
	}
	maybe_release(ws);
}

static void ws_drain(struct http_stream *b)
{
	close_lit((ig_ws *)b, IG_WS_CLOSE_GOING_AWAY, "the server is shutting down");
}

static void ws_finished(struct http_stream *b, ig_ctx *x)
{
	ig_ws *ws = (ig_ws *)b;
	if (x->state == CTX_RUNNING) { /* inside its dispatch, which still reads x */
		x->state = CTX_READY;
		ws->finishing = true;
		ig_loop_defer(&ws->core->loop, &ws->later);
		return;
	}
	finish(ws);
}

static const struct http_stream_ops ws_ops = {
	.writable = ws_writable,
	.gone = ws_gone,
	.drain = ws_drain,
	.finished = ws_finished,
	.received = ws_received,
};

/* ---- the upgrade ---- */

/* Whether the comma-separated list v holds token (any case). */
static bool has_token(ig_str v, const char *token)
{
	size_t tl = strlen(token), i = 0;
	while (i < v.len) {
		while (i < v.len && (v.ptr[i] == ' ' || v.ptr[i] == '\t' || v.ptr[i] == ','))
			i++;
		size_t s = i;
		while (i < v.len && v.ptr[i] != ',')
			i++;
		size_t e = i;
		while (e > s && (v.ptr[e - 1] == ' ' || v.ptr[e - 1] == '\t'))
			e--;
		if (e - s == tl && strncasecmp(v.ptr + s, token, tl) == 0)
			return true;
	}
	return false;
}

/* Origin: with CORS configured, an allowed origin; without, Host's own.
 * None at all (not a browser) passes. */
static bool origin_ok(ig_ctx *ctx)
{
	ig_str o = ig_req_header(ctx, "Origin");
	if (!o.ptr)
		return true;
	if (ig_cors_on)
		return ig_cors_allows(&ig_cors_config, o);
	ig_str host = ig_req_header(ctx, "Host");
	const char *sep = memmem(o.ptr, o.len, "://", 3);
	if (!sep || !host.len)
		return false;
	size_t at = (size_t)(sep + 3 - o.ptr);
	return o.len - at == host.len && strncasecmp(o.ptr + at, host.ptr, host.len) == 0;
}

static ig_ws *refuse(ig_ctx *ctx, int *status, int code, const char *why)
{
	ig_respond_problem(ctx, code, why);
	*status = code;
	return NULL;
}

static void head_put(ig_wbuf *w, const char *p, size_t n)
{
	ig_wbuf_put(w, p, n);
}

#define HEAD_LIT(w, lit) head_put((w), (lit), sizeof(lit) - 1)

ig_ws *ig_ws_open(ig_ctx *x, const struct ig_ws_type *type, int *status)
{
	/* Lambda, cron, Pub/Sub: no connection to upgrade, whatever the
	   request says (an in-process request carries no Connection field). */
	if (!x->conn || x->conn->in_process)
		return refuse(x, status, 501, "a WebSocket needs a connection of its own (not in Lambda mode)");
	ig_str key = ig_req_header(x, "Sec-WebSocket-Key");
	if (x->req.head || !has_token(ig_req_header(x, "Upgrade"), "websocket") || !has_token(ig_req_header(x, "Connection"), "upgrade"))
		return refuse(x, status, 400, "a WebSocket request needs Upgrade: websocket and Connection: Upgrade");
	ig_str version = ig_req_header(x, "Sec-WebSocket-Version");
	if (version.len != 2 || memcmp(version.ptr, IG_WS_VERSION, 2) != 0) {
		ig_add_header(x, "Sec-WebSocket-Version", IG_STR(IG_WS_VERSION));
		return refuse(x, status, 426, "Sec-WebSocket-Version must be 13");
	}
	if (!ig_ws_key_valid(key.ptr ? key.ptr : "", key.len))
		return refuse(x, status, 400, "Sec-WebSocket-Key must be the base64 of 16 bytes");
	if (!origin_ok(x))
		return refuse(x, status, 403, "this Origin may not open a WebSocket here");
	struct http_stream_core *wc =
		x->conn && !x->stream && !x->finished ? ig_http_stream_core(x->core, &ws_slot, sizeof(struct ig_ws)) : NULL;
	ig_ws *ws = wc ? ig_pool_take(&wc->handles) : NULL;
	if (!ws)
		return refuse(x, status, 503, "no WebSocket can be opened now");
	*ws = (ig_ws){ .base.ops = &ws_ops, .core = x->core, .type = type, .ctx = x };
	ws->rd.max_message = (uint64_t)max_message(x->core);
	ws->ping.fn = on_ping;
	ws->later.fn = later;
	char accept[IG_WS_ACCEPT_LEN];
	ig_ws_accept(key.ptr, key.len, accept);
	ig_wbuf h = { .arena = &x->arena };
	HEAD_LIT(&h, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		     "Sec-WebSocket-Accept: ");
	head_put(&h, accept, sizeof accept);
	HEAD_LIT(&h, "\r\n");
	head_put(&h, x->core->loop.clock.date_line, IG_DATE_LINE_LEN);
	ig_str id = ig_request_id(x);
	HEAD_LIT(&h, "X-Request-Id: ");
	head_put(&h, id.ptr, id.len);
	HEAD_LIT(&h, "\r\n\r\n");
	ws->last_rx_ms = now_ms(ws);
	if (h.failed || !ig_http_stream_begin(x, &ws->base, h.ptr, h.len)) {
		ig_pool_give(&wc->handles, ws);
		return refuse(x, status, 503, "no WebSocket can be opened now");
	}
	x->status = 101;
	*status = 101;
	if (!ws->base.conn) { /* the head's write failed: the client has gone */
		ws->closed = true;
		return ws;
	}
	ping_arm(ws);
	/* Frames the client sent right behind its request wait in conn.c's
	   buffer, where the batch that dispatched the upgrade stopped: after
	   it, they are read. */
	ws->resume = true;
	ig_loop_defer(&ws->core->loop, &ws->later);
	return ws;
}

/* ---- the public calls ---- */

void ig_ws_on_close(ig_ws *ws, ig_ws_fn *fn, void *arg)
{
	ws->on_close = fn;
	ws->close_arg = arg;
}

void ig_ws_close(ig_ws *ws, uint16_t code, const char *reason)
{
	close_lit(ws, ig_ws_close_code_valid(code) ? code : IG_WS_CLOSE_NORMAL, reason ? reason : "");
	maybe_release(ws);
}

bool ig_ws_closed(const ig_ws *ws)
{
	return ws->closed;
}

void ig_ws_set_data(ig_ws *ws, void *data)
{
	ws->data = data;
}

void *ig_ws_data(const ig_ws *ws)
{
	return ws->data;
}

static bool full(const ig_ws *ws)
{
	return ig_http_stream_unsent(&ws->base) > (size_t)ws->core->cfg->max_output;
}

/* Until the window has room: the socket's own message handler waits on
 * its coroutine; anyone else hears IG_WS_FULL. */
static enum ig_ws_result can_send(ig_ws *ws)
{
	while (!ws->closed && ws->base.conn && full(ws)) {
		ig_ctx *x = ws->msg_ctx;
		if (!x || !ig_wait_in_handler(x))
			return IG_WS_FULL;
		struct ig_wait_call *w = ig_wait_call_new(x, sizeof *w, &ig_wait_plain_ops, false);
		if (!w)
			return IG_WS_INVALID;
		ws->waiting = w;
		if (ig_wait_for(w) != IG_WAIT_OK)
			return IG_WS_CLOSED;
	}
	return ws->closed || !ws->base.conn ? IG_WS_CLOSED : IG_WS_OK;
}

enum ig_ws_result ig_ws_send_text(ig_ws *ws, ig_str data)
{
	enum ig_ws_result r = can_send(ws);
	if (r == IG_WS_OK)
		put_frame(ws, IG_WS_OP_TEXT, data.ptr, data.len);
	return r;
}

void ig_ws_violation(void *arg, const char *pointer, const char *keyword, const char *message)
{
	(void)keyword;
	ig_ws *ws = arg;
	if (ws->why)
		return;
	size_t pl = strlen(pointer), ml = strlen(message);
	char *why = ws->msg_ctx ? ig_arena_alloc(&ws->msg_ctx->arena, pl + ml + 3) : NULL;
	if (!why) {
		ws->why = message;
		return;
	}
	memcpy(why, pointer, pl);
	memcpy(why + pl, ": ", 2);
	memcpy(why + pl + 2, message, ml + 1);
	ws->why = why;
}

bool ig_ws_decoded(ig_ws *ws, ig_json_reader *r)
{
	if (!r->error)
		ig_jr_finish(r);
	if (r->error) {
		char why[IG_WS_CONTROL_MAX];
		size_t n = strlen(r->error);
		if (n > 100)
			n = 100;
		memcpy(why, "invalid JSON: ", 14);
		memcpy(why + 14, r->error, n);
		close_with(ws, IG_WS_CLOSE_POLICY, why, n + 14);
		return false;
	}
	if (ws->why) {
		close_lit(ws, IG_WS_CLOSE_POLICY, ws->why);
		return false;
	}
	return !ws->closed;
}

enum ig_ws_result ig_ws_buffer(ig_ws *ws, ig_wbuf **out)
{
	enum ig_ws_result r = can_send(ws); /* first: others may use the writer while it waits */
	*out = http_stream_core_buf(http_stream_core_of(ws->core, &ws_slot));
	return r;
}

enum ig_ws_result ig_ws_send_buffered(ig_ws *ws)
{
	struct http_stream_core *wc = http_stream_core_of(ws->core, &ws_slot);
	enum ig_ws_result r = wc->buf.failed ? IG_WS_INVALID : can_send(ws);
	if (r == IG_WS_OK)
		put_frame(ws, IG_WS_OP_TEXT, wc->buf.ptr, wc->buf.len);
	/* The scratch memory goes back at once: an idle core holds none. */
	http_stream_core_reset(wc);
	return r;
}
