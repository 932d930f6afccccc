/* Server-Sent Events (include/ingot/sse.h): the stream handle, from a
 * per-core pool (stream_core.c) made by the core's first stream, the event framing (the
 * HTML standard's), heartbeats, and the stream's end. The connection's
 * side (the head's place in the queue, writes, the end) is conn.c's
 * (internal.h's ig_http_stream_*), which tells a stream what happens
 * through http_stream_ops: conn.c links none of this. */
#include "ingot/sse.h"
#include "internal.h"
#include "wait.h"
#include "kernel/runtime/json.h"


struct ig_sse {
	struct http_stream base; /* first: conn.c's upcalls get this */
	struct http_core *core;
	ig_ctx *ctx; /* its handler's exchange, until the handler returns */
	struct ig_timer heartbeat;
	struct ig_deferred finish_later; /* a handler that returned inside its dispatch */
	struct ig_deferred writable_later; /* on_writable's call, after the batch */
	struct ig_wait_call *waiting; /* the handler waits for room */
	ig_sse_fn *on_close, *on_writable;
	void *close_arg, *writable_arg;
	uint64_t last_sent_ms;
	bool kept;     /* ig_sse_keep: it outlives its handler */
	bool released; /* ig_sse_close was called on a kept stream */
	bool closed;   /* sends fail from now on */
	bool chunked;  /* HTTP/1.1: chunks; else the close ends it */
	bool close_after; /* the connection closes after it (Connection: close) */
	bool writing;  /* inside frame's write: the owner hears of an end after it */
	bool notify;   /* it ended during that write */
	bool freed;    /* given back while writable_later was queued: it frees it */
};

/* Each core's streams and the scratch the generated sends encode in. */
static struct ig_loop_slot sse_slot;

static const struct http_stream_ops sse_ops;

static uint64_t now_ms(const ig_sse *s)
{
	return s->core->loop.clock.now_ms;
}

/* ---- heartbeats ---- */

static void heartbeat_arm(ig_sse *s)
{
	int64_t every = s->core->cfg->sse_heartbeat_ms;
	if (every > 0 && !s->closed)
		ig_timer_set_lazy(&s->core->loop.timers, &s->heartbeat, s->last_sent_ms + (uint64_t)every);
}

static enum ig_sse_result frame(ig_sse *s, const char *event, const char *id, const char *field, ig_str data);
static void notify(ig_sse *s);

static void on_heartbeat(struct ig_timer *t)
{
	ig_sse *s = (ig_sse *)((char *)t - offsetof(ig_sse, heartbeat));
	if (s->closed)
		return;
	uint64_t due = s->last_sent_ms + (uint64_t)s->core->cfg->sse_heartbeat_ms;
	/* Behind unsent output a comment would tell the client nothing: the
	   write timeout judges that one. */
	if (now_ms(s) >= due && ig_http_stream_unsent(&s->base) == 0 &&
	    frame(s, NULL, NULL, ":", IG_STR(" heartbeat")) != IG_SSE_OK)
		return; /* gone: its owner heard (and may have given s back) */
	if (now_ms(s) >= due) /* not sent: try again a period on */
		s->last_sent_ms = now_ms(s);
	heartbeat_arm(s);
}

/* ---- framing ---- */

static void put(struct http_conn *c, const char *p, size_t n)
{
	ig_http_out_append(c, p, n);
}

#define PUT_LIT(c, lit) put((c), (lit), sizeof(lit) - 1)

/* Whether text can be a field's value: no line break, no NUL. */
static bool one_line(const char *text)
{
	return !text[strcspn(text, "\r\n")];
}

/* The length of data's next line at p (up to CR, LF or the end), and
 * where the line after it starts (*next; end: none). */
static size_t line_at(const char *p, const char *end, const char **next)
{
	const char *q = p;
	while (q < end && *q != '\n' && *q != '\r')
		q++;
	size_t n = (size_t)(q - p);
	if (q < end && *q == '\r' && q + 1 < end && q[1] == '\n')
		q++;
	*next = q < end ? q + 1 : NULL;
	return n;
}

/* Queues one event: `event:`, `id:`, then data's lines as `field` lines
 * ("data: " normally; ":" for a comment, "retry: " for retry), then the
 * blank line that dispatches it; in one chunk. Never waits. */
static enum ig_sse_result frame(ig_sse *s, const char *event, const char *id, const char *field, ig_str data)
{
	struct http_conn *c = s->base.conn;
	if (s->closed || !c)
		return IG_SSE_CLOSED;
	size_t fl = strlen(field), el = event ? strlen(event) : 0, il = id ? strlen(id) : 0;
	size_t total = (event ? 7 + el + 1 : 0) + (id ? 4 + il + 1 : 0) + 1;
	const char *end = data.ptr + data.len, *next;
	for (const char *p = data.ptr;; p = next) {
		total += fl + line_at(p, end, &next) + 1;
		if (!next)
			break;
	}
	if (s->chunked) {
		char head[24];
		put(c, head, ig_http_chunk_head(head, total));
	}
	if (event) {
		PUT_LIT(c, "event: ");
		put(c, event, el);
		PUT_LIT(c, "\n");
	}
	if (id) {
		PUT_LIT(c, "id: ");
		put(c, id, il);
		PUT_LIT(c, "\n");
	}
	for (const char *p = data.ptr;; p = next) {
		size_t n = line_at(p, end, &next);
		put(c, field, fl);
		put(c, p, n);
		PUT_LIT(c, "\n");
		if (!next)
			break;
	}
	if (s->chunked)
		PUT_LIT(c, "\n\r\n");
	else
		PUT_LIT(c, "\n");
	s->last_sent_ms = now_ms(s);
	s->writing = true;
	ig_http_stream_write(&s->base, NULL, 0);
	s->writing = false;
	if (s->notify) { /* the write failed: the owner may give s back here */
		notify(s);
		return IG_SSE_CLOSED;
	}
	return s->base.conn ? IG_SSE_OK : IG_SSE_CLOSED;
}

/* ---- waiting for room ---- */

static bool full(const ig_sse *s)
{
	return ig_http_stream_unsent(&s->base) > (size_t)s->core->cfg->max_output;
}

/* Until the window has room: waits on the stream's handler, else says
 * IG_SSE_FULL. */
static enum ig_sse_result room(ig_sse *s)
{
	while (!s->closed && full(s)) {
		if (!s->ctx || !ig_wait_in_handler(s->ctx))
			return IG_SSE_FULL;
		struct ig_wait_call *w = ig_wait_call_new(s->ctx, sizeof *w, &ig_wait_plain_ops, false);
		if (!w)
			return IG_SSE_INVALID;
		s->waiting = w;
		if (ig_wait_for(w) != IG_WAIT_OK)
			return IG_SSE_CLOSED;
	}
	return s->closed ? IG_SSE_CLOSED : IG_SSE_OK;
}

static void wake_waiting(ig_sse *s)
{
	struct ig_wait_call *w = s->waiting;
	s->waiting = NULL;
	if (w)
		ig_wait_call_done(w);
}

/* ---- the end ---- */

static void release(ig_sse *s)
{
	ig_timer_cancel(&s->core->loop.timers, &s->heartbeat);
	if (s->writable_later.queued) { /* it runs on s: it gives s back */
		s->freed = true;
		return;
	}
	ig_pool_give(&http_stream_core_of(s->core, &sse_slot)->handles, s);
}

/* The stream ends on its connection: the final chunk, then the connection
 * goes on (or closes). */
static void end_output(ig_sse *s)
{
	struct http_conn *c = s->base.conn;
	if (!c)
		return;
	if (s->chunked)
		PUT_LIT(c, "0\r\n\r\n");
	ig_http_stream_end(&s->base, s->close_after || !s->chunked);
}

/* s has ended other than by ig_sse_close: its waiting handler returns, its
 * owner hears. The owner's callback may release s: nothing touches s
 * after it. */
static void ended(ig_sse *s)
{
	if (s->closed)
		return;
	s->closed = true;
	ig_timer_cancel(&s->core->loop.timers, &s->heartbeat);
	wake_waiting(s);
	if (s->ctx)
		ig_wait_cancel(s->ctx);
	if (s->writing) /* frame tells the owner once its write is over */
		s->notify = true;
	else
		notify(s);
}

static void notify(ig_sse *s)
{
	s->notify = false;
	ig_sse_fn *wfn = s->on_writable, *cfn = s->on_close;
	void *warg = s->writable_arg, *carg = s->close_arg;
	s->on_writable = s->on_close = NULL;
	if (wfn)
		wfn(warg, s);
	if (cfn)
		cfn(carg, s);
}

/* ---- conn.c's upcalls ---- */

static void writable_later(struct ig_deferred *d)
{
	ig_sse *s = (ig_sse *)((char *)d - offsetof(ig_sse, writable_later));
	if (s->freed) {
		release(s);
		return;
	}
	ig_sse_fn *fn = s->on_writable;
	s->on_writable = NULL;
	if (fn)
		fn(s->writable_arg, s);
}

/* Told inside the connection's writes: the waiting handler resumes after
 * the batch, and the owner's callback (which may send) runs then too. */
static void sse_writable(struct http_stream *b)
{
	ig_sse *s = (ig_sse *)b;
	wake_waiting(s);
	if (s->on_writable) {
		s->writable_later.fn = writable_later;
		ig_loop_defer(&s->core->loop, &s->writable_later);
	}
}

static void sse_gone(struct http_stream *b)
{
	ended((ig_sse *)b);
}

static void sse_drain(struct http_stream *b)
{
	ig_sse *s = (ig_sse *)b;
	/* What was queued leaves first, then this line, then the end. */
	if (frame(s, NULL, NULL, ":", IG_STR(" closing")) != IG_SSE_OK)
		return; /* gone: its owner heard (and may have given s back) */
	s->close_after = true;
	end_output(s);
	ended(s);
}

static void finish(ig_sse *s, ig_ctx *x)
{
	s->ctx = NULL;
	if (x->metered)
		http_ctx_meter(x, ig_monotonic_us());
	ig_http_ctx_free(x);
	if (s->kept && !s->released)
		return;
	s->closed = true;
	end_output(s);
	release(s);
}

static void finish_later(struct ig_deferred *d)
{
	ig_sse *s = (ig_sse *)((char *)d - offsetof(ig_sse, finish_later));
	/* The exchange, kept from its dispatch until now. */
	ig_ctx *x = s->ctx;
	finish(s, x);
}

static void sse_finished(struct http_stream *b, ig_ctx *x)
{
	ig_sse *s = (ig_sse *)b;
	if (!ig_http_stream_finish_later(x, &s->finish_later, finish_later))
		finish(s, x);
}

static const struct http_stream_ops sse_ops = {
	.writable = sse_writable,
	.gone = sse_gone,
	.drain = sse_drain,
	.finished = sse_finished,
};

/* ---- the public calls ---- */

static void head_put(ig_wbuf *w, const char *p, size_t n)
{
	ig_wbuf_put(w, p, n);
}

#define HEAD_LIT(w, lit) head_put((w), (lit), sizeof(lit) - 1)

ig_sse *ig_sse_open(ig_ctx *x)
{
	if (x->req.head || !x->conn || x->stream || x->finished)
		return NULL;
	struct http_stream_core *sc = ig_http_stream_core(x->core, &sse_slot, sizeof(struct ig_sse));
	ig_sse *s = sc ? ig_pool_take(&sc->handles) : NULL;
	if (!s)
		return NULL;
	*s = (ig_sse){ .base.ops = &sse_ops, .core = x->core, .ctx = x, .chunked = x->req.minor_version >= 1 };
	s->close_after = !x->keep_alive || !s->chunked;
	s->heartbeat.fn = on_heartbeat;
	ig_wbuf h = { .arena = &x->arena };
	HEAD_LIT(&h, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n");
	if (s->chunked)
		HEAD_LIT(&h, "Transfer-Encoding: chunked\r\n");
	ig_http_stream_head_end(x, &h, s->close_after);
	s->last_sent_ms = now_ms(s);
	if (h.failed || !ig_http_stream_begin(x, &s->base, h.ptr, h.len)) {
		ig_pool_give(&sc->handles, s);
		return NULL;
	}
	x->status = 200;
	if (!s->base.conn) /* the head's write failed: the client has gone */
		ended(s);
	heartbeat_arm(s);
	return s;
}

void ig_sse_keep(ig_sse *s)
{
	s->kept = true;
}

void ig_sse_on_close(ig_sse *s, ig_sse_fn *fn, void *arg)
{
	s->on_close = fn;
	s->close_arg = arg;
}

void ig_sse_on_writable(ig_sse *s, ig_sse_fn *fn, void *arg)
{
	s->on_writable = fn;
	s->writable_arg = arg;
}

void ig_sse_close(ig_sse *s)
{
	s->on_close = s->on_writable = NULL; /* the caller knows */
	if (!s->closed) {
		s->closed = true;
		ig_timer_cancel(&s->core->loop.timers, &s->heartbeat);
		end_output(s);
	}
	if (s->kept && !s->ctx)
		release(s);
	else
		s->released = true;
}

bool ig_sse_closed(const ig_sse *s)
{
	return s->closed;
}

enum ig_sse_result ig_sse_send(ig_sse *s, const char *event, const char *id, ig_str data)
{
	if ((event && !one_line(event)) || (id && !one_line(id)))
		return IG_SSE_INVALID;
	enum ig_sse_result r = room(s);
	if (r != IG_SSE_OK)
		return r;
	if (!data.ptr)
		data = IG_STR("");
	return frame(s, event, id, "data: ", data);
}

enum ig_sse_result ig_sse_retry(ig_sse *s, uint32_t ms)
{
	char n[16];
	size_t len = ig_fmt_u64(n, ms);
	enum ig_sse_result r = room(s);
	return r != IG_SSE_OK ? r : frame(s, NULL, NULL, "retry: ", (ig_str){ n, len });
}

enum ig_sse_result ig_sse_comment(ig_sse *s, const char *text)
{
	if (!one_line(text))
		return IG_SSE_INVALID;
	enum ig_sse_result r = room(s);
	if (r != IG_SSE_OK)
		return r;
	char line[256];
	size_t n = strlen(text) < sizeof line - 1 ? strlen(text) : sizeof line - 1;
	line[0] = ' ';
	memcpy(line + 1, text, n);
	return frame(s, NULL, NULL, ":", (ig_str){ line, n + 1 });
}

ig_str ig_sse_last_event_id(const ig_ctx *ctx)
{
	return ig_req_header(ctx, "Last-Event-ID");
}

enum ig_sse_result ig_sse_buffer(ig_sse *s, ig_wbuf **out)
{
	enum ig_sse_result r = room(s);
	*out = http_stream_core_buf(http_stream_core_of(s->core, &sse_slot));
	return r;
}

enum ig_sse_result ig_sse_send_buffered(ig_sse *s, const char *event, const char *id)
{
	struct http_stream_core *sc = http_stream_core_of(s->core, &sse_slot);
	enum ig_sse_result r = IG_SSE_INVALID;
	if (!sc->buf.failed && (!event || one_line(event)) && (!id || one_line(id)))
		r = frame(s, event, id, "data: ", (ig_str){ sc->buf.ptr ? sc->buf.ptr : "", sc->buf.len });
	/* The scratch memory goes back at once: an idle core holds none. */
	http_stream_core_reset(sc);
	return r;
}
