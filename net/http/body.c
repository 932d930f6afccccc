/* Streamed response bodies (include/ingot/body.h): the stream handle, in
 * its exchange's arena, the head, the chunk framing or the Content-Length
 * count, the handler's wait for room in the client's window, and the end.
 * The connection's side is conn.c's (internal.h's ig_http_stream_*), which
 * tells a stream what happens through http_stream_ops, as for sse.c. */
#include "ingot/body.h"
#include "internal.h"
#include "wait.h"

/* The most a write queues before it waits for room again, so that one
 * large write holds no more than this past INGOT_MAX_OUTPUT. */
#define BODY_PIECE_MAX (64u * 1024)

struct ig_body_out {
	struct http_stream base; /* first: conn.c's upcalls get this */
	ig_ctx *ctx;             /* its handler's exchange, until the handler returns */
	struct ig_deferred finish_later; /* a handler that returned inside its dispatch */
	struct ig_wait_call *wait;       /* the record the handler waits for room on */
	bool waiting;                    /* wait is counted as running: room completes it */
	int64_t left;  /* bytes of the declared length still to write; -1: no length */
	bool chunked;  /* HTTP/1.1 without a length: chunks */
	bool head_only; /* a HEAD: the head leaves, writes are not sent */
	bool close_after; /* the connection closes after it (Connection: close, the drain) */
	bool closed;   /* writes fail from now on */
	bool ended;    /* ig_body_out_end ran */
	/* An in-process exchange's (Lambda's): the body is gathered in the
	   exchange's and answered whole (status) at its end; on_return
	   answers 500 for a handler that returned without ending it. */
	bool buffered;
	int status;
	struct ig_wait_hook on_return;
};

static void end_output(ig_body_out *s, bool whole);

/* ---- waiting for room ---- */

static void wake(ig_body_out *s)
{
	if (s->waiting) {
		s->waiting = false;
		ig_wait_call_done(s->wait);
	}
}

/* Until the window has room, on the handler's coroutine. */
static enum ig_body_result room(ig_body_out *s)
{
	size_t max = (size_t)s->ctx->core->cfg->max_output;
	while (!s->closed && ig_http_stream_unsent(&s->base) > max) {
		if (!s->wait) {
			s->wait = ig_wait_call_new(s->ctx, sizeof *s->wait, &ig_wait_plain_ops, false);
			if (!s->wait) { /* no request memory to wait with: the body is cut */
				end_output(s, false);
				return IG_BODY_CLOSED;
			}
		} else {
			ig_wait_call_again(s->wait);
		}
		s->waiting = true;
		if (ig_wait_for(s->wait) != IG_WAIT_OK) {
			/* Cancelled: the stream ends here, and its record with it
			   (no writable upcall will complete it once it has left
			   its connection). */
			wake(s);
			end_output(s, false);
			return IG_BODY_CLOSED;
		}
	}
	return s->closed ? IG_BODY_CLOSED : IG_BODY_OK;
}

/* ---- the end ---- */

/* The stream leaves its connection: whole (the last chunk, the connection
 * goes on) or cut (the connection closes, so the client cannot take what
 * it got for the whole body). */
static void end_output(ig_body_out *s, bool whole)
{
	struct http_conn *c = s->base.conn;
	s->closed = true;
	if (!c)
		return;
	if (whole && s->chunked && !s->head_only)
		ig_http_out_append(c, "0\r\n\r\n", 5);
	/* Without a length and without chunks, only the close ends the body. */
	bool delimited = s->chunked || s->left >= 0 || s->head_only;
	ig_http_stream_end(&s->base, !whole || s->close_after || !delimited);
}

/* The connection went away: the waiting handler resumes, cancelled. */
static void body_gone(struct http_stream *b)
{
	ig_body_out *s = (ig_body_out *)b;
	if (s->closed)
		return;
	s->closed = true;
	wake(s);
	if (s->ctx)
		ig_wait_cancel(s->ctx);
}

static void body_writable(struct http_stream *b)
{
	wake((ig_body_out *)b);
}

/* A download goes on through the drain (its grace period cuts it): the
 * connection closes after it. */
static void body_drain(struct http_stream *b)
{
	((ig_body_out *)b)->close_after = true;
}

static void finish(ig_body_out *s, ig_ctx *x)
{
	/* s lies in x's arena: it leaves its connection before x is freed. */
	s->ctx = NULL;
	if (!s->closed)
		end_output(s, false); /* the handler returned without ending it */
	if (x->metered)
		http_ctx_meter(x, ig_monotonic_us());
	ig_http_ctx_free(x);
}

static void finish_later(struct ig_deferred *d)
{
	ig_body_out *s = (ig_body_out *)((char *)d - offsetof(ig_body_out, finish_later));
	finish(s, s->ctx);
}

static void body_finished(struct http_stream *b, ig_ctx *x)
{
	ig_body_out *s = (ig_body_out *)b;
	if (!ig_http_stream_finish_later(x, &s->finish_later, finish_later))
		finish(s, x);
}

static const struct http_stream_ops body_ops = {
	.writable = body_writable,
	.gone = body_gone,
	.drain = body_drain,
	.finished = body_finished,
};

/* ---- an in-process exchange's body, gathered whole ---- */

/* The handler returned without ending its body: no answer that looks
 * whole. */
static void buffered_returned(struct ig_wait_hook *h, ig_ctx *x)
{
	ig_body_out *s = (ig_body_out *)((char *)h - offsetof(ig_body_out, on_return));
	if (!s->ended)
		ig_respond_problem(x, 500, "the response body was not ended");
}

/* In-process without a sink (Lambda's API Gateway and ALB events, a
 * buffered function URL): there is nothing to stream to, so the body is
 * gathered in the exchange's memory and leaves whole, at most the
 * request's memory. */
static ig_body_out *buffered_begin(ig_ctx *x, int status, const char *ctype, int64_t length)
{
	if (ig_wait_hook_find(x, buffered_returned))
		return NULL; /* one stream per exchange */
	ig_body_out *s = ig_arena_alloc(&x->arena, sizeof *s);
	size_t n = strlen(ctype);
	char *type = ig_arena_alloc(&x->arena, n + 1);
	if (!s || !type)
		return NULL;
	memcpy(type, ctype, n + 1);
	*s = (ig_body_out){ .ctx = x, .left = length, .head_only = x->req.head, .buffered = true, .status = status,
			    .on_return.on_return = buffered_returned };
	if (!ig_wait_hook_add(x, &s->on_return))
		return NULL;
	x->body.len = 0;
	ig_set_content_type(x, type);
	return s;
}

static enum ig_body_result buffered_write(ig_body_out *s, const void *p, size_t n)
{
	if (s->closed)
		return IG_BODY_CLOSED;
	ig_wbuf *b = &s->ctx->body;
	ig_wbuf_put(b, p, n);
	if (b->failed) {
		s->closed = true; /* the end answers 500 */
		return IG_BODY_CLOSED;
	}
	if (s->left >= 0)
		s->left -= (int64_t)n;
	return IG_BODY_OK;
}

static enum ig_body_result buffered_end(ig_body_out *s)
{
	ig_ctx *x = s->ctx;
	if (s->closed) {
		ig_respond_problem(x, 500, "the response body is larger than the request's memory");
		return IG_BODY_CLOSED;
	}
	if (s->left > 0 && !s->head_only) {
		ig_respond_problem(x, 500, "the response body was cut short");
		return IG_BODY_INVALID;
	}
	ig_finish(x, s->status);
	return IG_BODY_OK;
}

/* ---- the public calls ---- */

#define HEAD_LIT(w, lit) ig_wbuf_put((w), (lit), sizeof(lit) - 1)

ig_body_out *ig_body_out_begin(ig_ctx *x, int status, const char *ctype, int64_t length)
{
	if (!x->conn || x->stream || x->finished || status < 200 || status > 599 || status == 204 ||
	    status == 304 || length < -1 || ctype[strcspn(ctype, "\r\n")] || !ig_wait_in_handler(x))
		return NULL;
	if (http_conn_gathers(x->conn))
		return buffered_begin(x, status, ctype, length);
	ig_body_out *s = ig_arena_alloc(&x->arena, sizeof *s);
	if (!s)
		return NULL;
	*s = (ig_body_out){ .base.ops = &body_ops, .ctx = x, .left = length,
			    .chunked = length < 0 && x->req.minor_version >= 1, .head_only = x->req.head };
	s->close_after = !x->keep_alive || (length < 0 && !s->chunked && !s->head_only);
	ig_wbuf h = { .arena = &x->arena };
	char num[24];
	HEAD_LIT(&h, "HTTP/1.1 ");
	ig_wbuf_put(&h, num, ig_fmt_u64(num, (uint64_t)status));
	HEAD_LIT(&h, " ");
	ig_wbuf_put(&h, ig_http_reason(status), strlen(ig_http_reason(status)));
	HEAD_LIT(&h, "\r\nContent-Type: ");
	ig_wbuf_put(&h, ctype, strlen(ctype));
	if (length >= 0) {
		HEAD_LIT(&h, "\r\nContent-Length: ");
		ig_wbuf_put(&h, num, ig_fmt_u64(num, (uint64_t)length));
	} else if (s->chunked) {
		HEAD_LIT(&h, "\r\nTransfer-Encoding: chunked");
	}
	HEAD_LIT(&h, "\r\n");
	ig_http_stream_head_end(x, &h, s->close_after);
	if (h.failed || !ig_http_stream_begin(x, &s->base, h.ptr, h.len))
		return NULL;
	x->status = status;
	if (!s->base.conn) /* the head's write failed: the client has gone */
		s->closed = true;
	return s;
}

enum ig_body_result ig_body_out_write(ig_body_out *s, const void *p, size_t n)
{
	if (!s->ctx || s->ended || (s->left >= 0 && (uint64_t)s->left < n))
		return IG_BODY_INVALID;
	if (s->head_only) /* nothing goes after a HEAD's head */
		return s->closed ? IG_BODY_CLOSED : IG_BODY_OK;
	if (s->buffered)
		return buffered_write(s, p, n);
	const char *q = p;
	while (n) {
		enum ig_body_result r = room(s);
		if (r != IG_BODY_OK)
			return r;
		size_t k = n < BODY_PIECE_MAX ? n : BODY_PIECE_MAX;
		struct http_conn *c = s->base.conn;
		if (s->chunked) {
			char head[24];
			ig_http_out_append(c, head, ig_http_chunk_head(head, k));
		}
		ig_http_out_append(c, q, k);
		if (s->chunked)
			ig_http_out_append(c, "\r\n", 2);
		if (s->left >= 0)
			s->left -= (int64_t)k;
		ig_http_stream_write(&s->base, NULL, 0);
		if (!s->base.conn) /* the write failed: gone (body_gone ran) */
			return IG_BODY_CLOSED;
		q += k;
		n -= k;
	}
	return s->closed ? IG_BODY_CLOSED : IG_BODY_OK;
}

enum ig_body_result ig_body_out_end(ig_body_out *s)
{
	if (!s->ctx || s->ended)
		return IG_BODY_INVALID;
	s->ended = true;
	if (s->buffered)
		return buffered_end(s);
	if (s->closed)
		return IG_BODY_CLOSED;
	bool whole = s->left <= 0 || s->head_only;
	end_output(s, whole);
	return whole ? IG_BODY_OK : IG_BODY_INVALID;
}

/* ---- the request body, read as it arrives ---- */

static void body_in_wake(struct http_body_in *b)
{
	if (b->waiting) {
		b->waiting = false;
		ig_wait_call_done(b->wait);
	}
}

/* The reader of ctx's body: the engine's, for a streamed one; for a whole
 * one (req.body), made on the first read. NULL without request memory. */
static struct http_body_in *body_in_of(ig_ctx *x)
{
	if (!x->body_in) {
		struct http_body_in *b = ig_arena_alloc(&x->arena, sizeof *b);
		if (!b)
			return NULL;
		*b = (struct http_body_in){ .ctx = x, .whole = true, .length = (int64_t)x->req.body.len };
		x->body_in = b;
	}
	x->body_in->wake = body_in_wake;
	return x->body_in;
}

enum ig_body_result ig_body_in_read(ig_ctx *x, void *p, size_t cap, size_t *n)
{
	*n = 0;
	if (!cap || !ig_wait_in_handler(x))
		return IG_BODY_INVALID;
	struct http_body_in *b = body_in_of(x);
	if (!b)
		return IG_BODY_CLOSED;
	if (b->whole) {
		size_t left = x->req.body.len - (size_t)b->taken;
		*n = left < cap ? left : cap;
		memcpy(p, x->req.body.ptr + b->taken, *n);
		b->taken += *n;
		return IG_BODY_OK;
	}
	for (;;) {
		if (!b->conn)
			return (enum ig_body_result)b->end; /* OK: the end, *n 0 */
		*n = ig_http_body_in_take(b, p, cap);
		if (*n)
			return IG_BODY_OK;
		if (!b->conn)
			continue;
		/* Nothing has arrived: wait for the connection's wake. */
		if (!b->wait) {
			b->wait = ig_wait_call_new(x, sizeof *b->wait, &ig_wait_plain_ops, false);
			if (!b->wait)
				return IG_BODY_CLOSED;
		} else {
			ig_wait_call_again(b->wait);
		}
		b->waiting = true;
		if (ig_wait_for(b->wait) != IG_WAIT_OK) {
			body_in_wake(b); /* its record is done: nothing completes it now */
			return IG_BODY_CLOSED; /* cancelled: the client went away */
		}
	}
}

int64_t ig_body_in_length(const ig_ctx *x)
{
	return x->body_in ? x->body_in->length : (int64_t)x->req.body.len;
}
