/* The HTTP/1.1 connection engine: the transport lends it bytes, it parses
 * every complete request in them (pipelining), dispatches each to the app
 * in order, and writes the responses of a batch in one writev. Responses
 * leave in request order: a pending exchange holds back the ones after it.
 * States are explicit (enum conn_state); one timer per connection carries
 * whichever deadline the state needs, re-armed lazily. */
#include "health.h"
#include "internal.h"
#include "task.h"
#include "cors.h"
#include "hooks.h"
#include "kernel/process/fatal.h"
#include "kernel/runtime/membudget_log.h"
#include "kernel/runtime/list.h"
#include "net/rbuf.h"
#include "wait.h"
#include "ingot/body.h"

#include <stddef.h>

#define MAX_IOV 64

static const struct ig_stream_ops conn_stream_ops;

static uint64_t now_ms(const struct http_conn *c)
{
	return c->core->loop.clock.now_ms;
}

/* ---- output ---- */

/* Gives back the written blocks, and with them the budget's charge (any
 * block's: which of them went uncharged does not matter, only how many
 * are left). */
static void out_release_written(struct http_conn *c)
{
	while (c->out_head && c->out_head->off == c->out_head->len) {
		struct out_block *b = c->out_head;
		c->out_head = b->next;
		ig_pool_give(&c->core->blocks, b);
		if (c->out_charged) {
			c->out_charged--;
			ig_membudget_give(&c->core->mem, HTTP_BLOCK_SIZE);
		}
	}
	if (!c->out_head)
		c->out_tail = NULL;
	if (c->out_head == c->out_tail) /* down to its own block: may go on */
		c->out_over = false;
}

static void conn_destroy(struct http_conn *c, bool graceful);

/* A streamed body stops short of its end (end: how, for its reader): the
 * client went away, the handler answered first, the framing broke. Its
 * exchange's answer is the connection's last; the caller sets c->state. */
__attribute__((cold, noinline)) static void body_in_stop(struct http_conn *c, enum ig_body_result end)
{
	struct http_body_in *b = c->body_in;
	c->body_in = NULL;
	c->taking = false;
	b->conn = NULL;
	b->end = (uint8_t)end;
	b->ctx->keep_alive = false; /* its answer says that the connection closes */
	if (b->wake)
		b->wake(b);
}

/* The stream that holds c learns that c goes away. */
__attribute__((cold, noinline)) static void conn_stream_gone(struct http_conn *c)
{
	struct http_stream *s = c->stream;
	c->state = CONN_CLOSING;
	c->stream = NULL;
	s->conn = NULL;
	s->ops->gone(s);
}

/* A draining core's last connection has closed: its coroutine stacks go
 * back to the system (idle ones were kept for the next burst), then the
 * server's (or the test core's) drained. */
static void core_drained(struct http_core *core)
{
	ig_wait_release(&core->loop);
	core->drained(core);
}

/* Writes what is queued. Returns false if the connection was destroyed. */
IG_HOT static bool conn_flush(struct http_conn *c)
{
	while (c->out_head) {
		struct iovec iov[MAX_IOV];
		int n = 0;
		for (struct out_block *b = c->out_head; b && n < MAX_IOV; b = b->next)
			iov[n++] = (struct iovec){ b->data + b->off, b->len - b->off };
		ssize_t w = c->t->ops->writev(c->t, iov, n);
		if (w == IG_WOULD_BLOCK)
			return true;
		if (w < 0) {
			conn_destroy(c, false);
			return false;
		}
		c->out_bytes -= (size_t)w;
		for (struct out_block *b = c->out_head; b && w > 0; b = b->next) {
			size_t k = b->len - b->off;
			if ((size_t)w < k)
				k = (size_t)w;
			b->off += (uint32_t)k;
			w -= (ssize_t)k;
		}
		out_release_written(c);
	}
	if (c->state == CONN_CLOSING && !c->q_head) {
		conn_destroy(c, true);
		return false;
	}
	return true;
}

/* ---- timers ---- */

static void conn_set_deadline(struct http_conn *c, enum conn_timer kind, uint64_t deadline)
{
	c->timer_kind = kind;
	c->deadline_ms = deadline;
	if (kind != TIMER_NONE)
		ig_timer_set_lazy(&c->core->loop.timers, &c->timer, deadline);
}

/* A body waiting for memory tries again this often: room freed on another
 * core tells this one nothing. */
#define MEM_RETRY_MS 20

static uint64_t conn_mem_retry_at(const struct http_conn *c)
{
	uint64_t at = now_ms(c) + MEM_RETRY_MS;
	return at < c->mem_wait_until ? at : c->mem_wait_until;
}

/* A stream's output is all written: no idle timeout for a stream, and a
 * sender waiting for room goes on (a write that left nothing behind is
 * followed by no writable event). */
__attribute__((cold, noinline)) static void conn_stream_written(struct http_conn *c)
{
	conn_set_deadline(c, TIMER_NONE, 0);
	c->stream->ops->writable(c->stream);
}

/* Chooses the deadline for the connection's state after a batch. */
/* A streamed body's bytes fill the read buffer: reading stops until the
 * handler takes some (the client is held back by TCP). */
static bool conn_body_in_full(const struct http_conn *c)
{
	return c->rbuf && c->rlen - c->rpos >= c->core->rbuf_size;
}

IG_HOT static void conn_update_deadline(struct http_conn *c)
{
	const struct http_config *cfg = c->core->cfg;
	if (c->out_bytes) {
		/* Refreshed after every batch: a client that reads slowly is
		   fine, one that stops reading meets the deadline. */
		conn_set_deadline(c, TIMER_WRITE, now_ms(c) + (uint64_t)cfg->write_timeout_ms);
	} else if (c->mem_wait) {
		/* Behind unsent output, which keeps its deadline: the wait's end
		   is checked at the retry that follows the write. */
		conn_set_deadline(c, TIMER_MEMORY, conn_mem_retry_at(c));
	} else if (c->state == CONN_BODY || c->state == CONN_CHUNKED) {
		if (c->timer_kind != TIMER_BODY)
			conn_set_deadline(c, TIMER_BODY, now_ms(c) + (uint64_t)cfg->body_timeout_ms);
	} else if (__builtin_expect(c->state == CONN_BODY_IN, 0)) {
		/* No bytes for the body timeout: an idle timeout, refreshed as
		   bytes come; none while the handler has not taken what came
		   (the read buffer is full: the client is held back). */
		if (conn_body_in_full(c))
			conn_set_deadline(c, TIMER_NONE, 0);
		else
			conn_set_deadline(c, TIMER_BODY, now_ms(c) + (uint64_t)cfg->body_timeout_ms);
	} else if (c->q_head) {
		conn_set_deadline(c, TIMER_NONE, 0); /* the app owns the time now */
	} else if (__builtin_expect(c->state == CONN_STREAM, 0)) {
		conn_stream_written(c);
	} else if (c->rpos < c->rlen) {
		/* From the first byte of the head, not the latest: a client that
		   trickles bytes (slowloris) still meets the deadline. */
		if (c->timer_kind != TIMER_HEAD) {
			c->head_started_ms = now_ms(c);
			conn_set_deadline(c, TIMER_HEAD, now_ms(c) + (uint64_t)cfg->header_timeout_ms);
		}
	} else {
		conn_set_deadline(c, TIMER_IDLE, now_ms(c) + c->idle_timeout_ms);
	}
}

static void conn_fail_request(struct http_conn *c, int status, const char *detail);
static void conn_emit_ready(struct http_conn *c);
static bool conn_run(struct http_conn *c);
static bool conn_backpressure(const struct http_conn *c);
static void conn_mem_retry(struct http_conn *c);

/* At debug level, a timeout that ends a connection (an idle keep-alive one
 * excepted: that is the normal end), with the peer when it was kept. */
__attribute__((cold, noinline)) static void log_timeout(struct http_conn *c)
{
	static const char *const kinds[] = { [TIMER_HEAD] = "head", [TIMER_BODY] = "body", [TIMER_WRITE] = "write",
					     [TIMER_MEMORY] = "memory" };
	struct ig_logline l;
	if (!ig_log_begin(&l, IG_LOG_DEBUG, "connection timed out"))
		return;
	ig_log_cstr(&l, "waiting_for", kinds[c->timer_kind] ? kinds[c->timer_kind] : "write");
	char peer[64];
	size_t n = c->t && c->t->ops->peer ? c->t->ops->peer(c->t, peer, sizeof peer) : 0;
	if (n)
		ig_log_str(&l, "client", peer, n);
	ig_log_end(&l);
}

static void on_conn_timer(struct ig_timer *t)
{
	struct http_conn *c = (struct http_conn *)((char *)t - offsetof(struct http_conn, timer));
	if (c->timer_kind == TIMER_NONE)
		return;
	if (now_ms(c) < c->deadline_ms) {
		ig_timer_set(&c->core->loop.timers, &c->timer, c->deadline_ms);
		return;
	}
	if (c->timer_kind == TIMER_MEMORY) {
		conn_mem_retry(c);
		return;
	}
	if (c->timer_kind != TIMER_IDLE && ig_log_enabled(IG_LOG_DEBUG))
		log_timeout(c);
	switch (c->timer_kind) {
	case TIMER_IDLE: /* FIN first, as the drain's idle close (see there) */
		c->close_reason = HTTP_CLOSE_IDLE;
		conn_destroy(c, true);
		return;
	case TIMER_HEAD:
		conn_fail_request(c, 408, "the request head did not arrive in time");
		return;
	case TIMER_BODY:
		if (c->state == CONN_BODY_IN) { /* its handler runs: it learns, and no answer is due */
			c->close_reason = HTTP_CLOSE_BODY_TIMEOUT;
			conn_destroy(c, false);
			return;
		}
		conn_fail_request(c, 408, "the request body did not arrive in time");
		return;
	case TIMER_WRITE: /* the client does not read: no point writing more */
	case TIMER_MEMORY:
	case TIMER_NONE:
		c->close_reason = HTTP_CLOSE_WRITE_TIMEOUT;
		conn_destroy(c, false);
		return;
	}
}

/* ---- lifecycle ---- */

struct http_conn *ig_http_conn_take(struct http_core *core)
{
	if (core->draining)
		return NULL;
	struct http_conn *c = ig_pool_take(&core->conns);
	if (!c) /* INGOT_MAX_CONNS reached */
		ig_counter_add(&core->meter.rejected, 1);
	return c;
}

void *ig_http_conn_accept(void *core_arg, struct ig_transport *t)
{
	struct http_core *core = core_arg;
	struct http_conn *c = ig_http_conn_take(core);
	return c ? ig_http_conn_begin(core, c, t, (uint32_t)core->cfg->idle_timeout_ms) : NULL;
}

struct http_conn *ig_http_conn_begin(struct http_core *core, struct http_conn *c, struct ig_transport *t,
				  uint32_t idle_timeout_ms)
{
	return ig_http_conn_begin_app(core, c, t, idle_timeout_ms, core->app);
}

struct http_conn *ig_http_conn_begin_app(struct http_core *core, struct http_conn *c, struct ig_transport *t,
				      uint32_t idle_timeout_ms, const struct ig_app *app)
{
	/* Metered: the app's connections, when a scrape can read the meters. */
	*c = (struct http_conn){ .t = t, .core = core, .app = app, .state = CONN_HEAD,
				 .idle_timeout_ms = idle_timeout_ms };
	bool admin = http_conn_is_admin(c);
	c->metered = !admin && core->cfg->admin_port >= 0;
	if (c->metered)
		ig_counter_add(&core->meter.accepted, 1);
	c->timer.fn = on_conn_timer;
	IG_DLIST_PUSH(core->live, c);
	core->count++;
	core->admin.conns += admin;
	t->engine = c;
	t->engine_ops = &conn_stream_ops;
	conn_set_deadline(c, TIMER_IDLE, core->loop.clock.now_ms + idle_timeout_ms);
	return c;
}

static void rbuf_release(struct http_conn *c)
{
	if (c->rbuf) {
		ig_pool_give(&c->core->rbufs, c->rbuf);
		c->rbuf = NULL;
	}
	c->rpos = c->rlen = 0;
}

/* Frees the connection; exchanges still pending learn that their client
 * has gone and free themselves when they finish. */
static void conn_destroy(struct http_conn *c, bool graceful)
{
	struct http_core *core = c->core;
	if (__builtin_expect(c->state == CONN_STREAM, 0))
		conn_stream_gone(c);
	else if (__builtin_expect(c->state == CONN_BODY_IN, 0))
		body_in_stop(c, IG_BODY_CLOSED);
	for (struct ig_ctx *x = c->q_head, *next; x; x = next) {
		next = x->next;
		if (x->state == CTX_PENDING)
			ig_http_ctx_cancel(x);
		else
			ig_http_ctx_free(x);
	}
	if (c->reading)
		ig_http_ctx_free(c->reading);
	if (c->fail_id)
		ig_pool_give(&core->fail_ids, c->fail_id);
	c->q_head = c->q_tail = NULL;
	c->out_bytes = 0;
	for (struct out_block *b = c->out_head; b; b->off = b->len, b = b->next)
		;
	out_release_written(c);
	rbuf_release(c);
	ig_timer_cancel(&core->loop.timers, &c->timer);
	IG_DLIST_REMOVE(core->live, c);
	if (c->t)
		c->t->ops->close(c->t, graceful);
	if (c->metered)
		ig_counter_add(&core->meter.closed[c->close_reason], 1);
	core->admin.conns -= http_conn_is_admin(c);
	ig_pool_give(&core->conns, c);
	core->count--;
	ig_http_core_left(core);
}

void ig_http_core_left(struct http_core *core)
{
	if (core->draining && core->count == 0)
		core_drained(core);
}

/* Where a failed request's id is kept for its answer (HTTP_REQUEST_ID_MAX
 * bytes from the core's pool, taken on the first failure); NULL without
 * memory for it (the pool's mmap failed): the answer then has no id. */
static char *fail_id_buf(struct http_conn *c)
{
	if (!c->fail_id)
		c->fail_id = ig_pool_take(&c->core->fail_ids);
	return c->fail_id;
}

/* Answers an error that makes the rest of the stream meaningless: reading
 * stops, the problem is queued after the responses before it, and the
 * connection closes once they are written. */
/* CORS on: the allowed Origin of the failing request (r's, else the
 * reading exchange's), kept behind its id for the answer (conn_emit_ready);
 * a length of 0 there: none. */
__attribute__((cold)) static void conn_fail_cors(struct http_conn *c, const struct http_request *r)
{
	char *buf = fail_id_buf(c);
	if (!buf)
		return;
	const ig_header *h = r ? r->headers : c->reading ? c->reading->req.headers : NULL;
	size_t n = r ? r->num_headers : c->reading ? c->reading->req.num_headers : 0;
	buf[HTTP_REQUEST_ID_MAX] = (char)ig_cors_keep_origin(h, n, buf + HTTP_REQUEST_ID_MAX + 1);
}

static void conn_fail(struct http_conn *c, const struct http_request *r, int status, const char *detail)
{
	if (__builtin_expect(ig_cors_on, 0))
		conn_fail_cors(c, r);
	if (c->reading) { /* its id goes on the answer */
		ig_str id = ig_request_id(c->reading);
		char *buf = fail_id_buf(c);
		c->fail_id_len = buf ? (uint8_t)id.len : 0;
		if (buf)
			memcpy(buf, id.ptr, id.len);
		ig_http_ctx_free(c->reading);
		c->reading = NULL;
	}
	if (c->state == CONN_BODY_IN)
		body_in_stop(c, IG_BODY_CLOSED);
	c->state = CONN_CLOSING;
	c->mem_wait = false;
	c->fail_status = status;
	c->fail_detail = detail;
	c->close_reason = status != 408 ? HTTP_CLOSE_ERROR
			  : c->timer_kind == TIMER_BODY ? HTTP_CLOSE_BODY_TIMEOUT : HTTP_CLOSE_HEADER_TIMEOUT;
	if (c->metered)
		ig_http_meter_error(&c->core->meter, status);
	if (c->processing)
		return; /* the batch end answers it, after the responses before it */
	conn_emit_ready(c);
	if (conn_flush(c))
		conn_update_deadline(c);
}

static void conn_fail_request(struct http_conn *c, int status, const char *detail)
{
	conn_fail(c, NULL, status, detail);
}

/* The same for a request whose head was parsed but that got no exchange:
 * the answer still carries its id. */
static void conn_fail_parsed(struct http_conn *c, const struct http_request *r, int status, const char *detail)
{
	char *buf = fail_id_buf(c);
	c->fail_id_len = buf ? (uint8_t)ig_http_request_id_of(r, &c->core->rng, buf) : 0;
	conn_fail(c, r, status, detail);
}

/* ---- request dispatch ---- */

IG_HOT static void conn_dispatch(struct http_conn *c, struct ig_ctx *x)
{
	struct http_core *core = c->core;
	core->requests++;
	core->admin.requests += http_conn_is_admin(c);
	c->had_request = true;
	/* The next request's head or body gets a deadline of its own. */
	c->timer_kind = TIMER_NONE;
	if (x->keep_alive && core->draining)
		c->close_reason = HTTP_CLOSE_DRAIN;
	x->keep_alive = x->keep_alive && !core->draining;
	if (!x->keep_alive && c->state != CONN_BODY_IN)
		c->state = CONN_CLOSING; /* this is the last request we read (a streamed body's end says so) */
	IG_FIFO_PUSH(c->q_head, c->q_tail, x);
	c->queued++;
	/* The main port's /livez and /readyz (the admin app routes its own). */
	if (c->app != core->app || !core->health_paths || !http_health_path_possible(x->req.path) ||
	    !ig_http_health_answer_paths(x, core->health_paths)) {
		ig_fatal_running = x; /* a crash's log line names the request */
		c->app->route(x);
		ig_fatal_running = NULL;
	}
	if (x->state == CTX_RUNNING) {
		x->state = CTX_PENDING;
		/* The read buffer will move on; keep what the app may read. */
		if (x->conn && ig_http_ctx_detach(x) != 0)
			ig_respond_problem(x, 500, "out of request memory");
	} else if (x->body.len >= HTTP_BLOCK_SIZE - core->batch_ready) {
		/* Answers made during one batch (up to HTTP_MAX_QUEUED of them)
		   move to the output once they pass a block, not all at its end:
		   their bytes then count (INGOT_MAX_OUTPUT, the memory budget)
		   before the next request is parsed, and their arenas go. The
		   batch still leaves in one write. */
		core->batch_ready = 0;
		conn_emit_ready(c);
	} else {
		core->batch_ready += (uint32_t)x->body.len;
	}
}

/* ---- the memory budget ---- */

/* Reserves n bytes of body for the request at rpos (r: its head, or NULL
 * for the one being read). Without room, reading stops and the request
 * waits (INGOT_MEMORY_WAIT_MS) for some, then is refused with 503. The
 * bytes at rpos stay unconsumed, so that the retry starts over there. */
static bool conn_mem_take(struct http_conn *c, const struct http_request *r, size_t n)
{
	if (__builtin_expect(ig_membudget_take(&c->core->mem, n), 1)) {
		c->mem_wait_until = 0;
		return true;
	}
	uint64_t now = now_ms(c);
	if (!c->mem_wait_until)
		c->mem_wait_until = now + (uint64_t)c->core->cfg->memory_wait_ms;
	if (now < c->mem_wait_until) {
		c->mem_wait = true;
		return false;
	}
	c->mem_wait_until = 0;
	ig_membudget_refused(IG_MEM_BODY, now, "request refused: the memory budget for request bodies is spent",
			     "rejections_total", NULL, 0);
	static const char detail[] = "no memory for the request body now: try again later";
	if (r)
		conn_fail_parsed(c, r, 503, detail);
	else
		conn_fail_request(c, 503, detail);
	return false;
}

/* The wait's timer: reads on, if the budget now has room (conn_run parses
 * the head again and takes it), or waits on, or refuses. */
static void conn_mem_retry(struct http_conn *c)
{
	c->mem_wait = false;
	if (conn_run(c) && !c->mem_wait && c->state != CONN_CLOSING && !conn_backpressure(c))
		c->t->ops->resume_read(c->t);
}

/* Starts a request whose body does not fit the read buffer: the head moves
 * into the exchange's arena and the body is read into the arena too. */
static bool conn_begin_arena_body(struct http_conn *c, const struct http_request *r, size_t head_len)
{
	size_t charge = r->body_kind == HTTP_BODY_LENGTH ? (size_t)r->content_length : 0;
	if (charge && !conn_mem_take(c, r, charge))
		return false;
	struct ig_ctx *x = ig_http_ctx_new(c->core, c);
	if (!x) {
		ig_membudget_give(&c->core->mem, charge);
		conn_fail_parsed(c, r, 503, "out of request slots");
		return false;
	}
	x->mem_charged = charge;
	ig_http_ctx_set_request(x, r, NULL, 0);
	if (ig_http_ctx_detach(x) != 0) {
		ig_http_ctx_free(x);
		conn_fail_parsed(c, r, 500, "out of request memory");
		return false;
	}
	c->reading = x;
	c->rpos += (uint32_t)head_len;
	c->body_len = 0;
	if (r->body_kind == HTTP_BODY_LENGTH) {
		c->body_need = r->content_length;
		char *body = ig_arena_alloc(&x->arena, c->body_need);
		if (!body) {
			conn_fail_request(c, 413, "the request body is too large");
			return false;
		}
		x->req.body = (ig_str){ body, c->body_need };
		size_t have = c->rlen - c->rpos;
		if (have > c->body_need)
			have = c->body_need;
		memcpy(body, c->rbuf + c->rpos, have);
		c->rpos += (uint32_t)have;
		c->body_len = have;
		c->state = CONN_BODY;
	} else {
		c->chunked = ig_arena_alloc(&x->arena, sizeof *c->chunked);
		if (!c->chunked) {
			conn_fail_request(c, 413, "the request body is too large");
			return false;
		}
		*c->chunked = (struct http_chunked_decoder){ .max_trailer_bytes = (size_t)c->core->cfg->max_header_bytes };
		x->body = (ig_wbuf){ .arena = &x->arena };
		c->state = CONN_CHUNKED;
	}
	return true;
}

IG_HOT static bool conn_body_complete(struct http_conn *c)
{
	struct ig_ctx *x = c->reading;
	c->reading = NULL;
	c->state = CONN_HEAD;
	if (x->body.ptr) { /* chunked: the decoded body was gathered in body */
		x->req.body = (ig_str){ x->body.ptr, x->body.len };
		x->body = (ig_wbuf){ .arena = &x->arena };
	}
	c->continue_sent = false;
	conn_dispatch(c, x);
	return c->state != CONN_CLOSING;
}

static void send_continue(struct http_conn *c)
{
	if (!c->continue_sent && !c->q_head) {
		static const char line[] = "HTTP/1.1 100 Continue\r\n\r\n";
		ig_http_out_append(c, line, sizeof line - 1);
	}
	c->continue_sent = true;
}

/* Starts a request whose operation reads its body as it arrives (max:
 * its maxBytes): dispatched at once, with no body; its handler takes the
 * bytes from the read buffer (ig_http_body_in_take) and nothing more is
 * parsed until the body has ended. Returns whether parsing goes on (the
 * handler took the whole body at once). */
__attribute__((cold, noinline)) static bool conn_begin_body_in(struct http_conn *c, const struct http_request *r,
							     size_t head_len, uint64_t max)
{
	if (r->body_kind == HTTP_BODY_LENGTH && r->content_length > max) {
		conn_fail_parsed(c, r, 413, "the request body is too large");
		return false;
	}
	struct ig_ctx *x = ig_http_ctx_new(c->core, c);
	if (!x) {
		conn_fail_parsed(c, r, 503, "out of request slots");
		return false;
	}
	ig_http_ctx_set_request(x, r, NULL, 0);
	struct http_body_in *b = NULL;
	struct http_chunked_decoder *chunked = NULL;
	/* The head's bytes stay behind in the read buffer, which moves on. */
	if (ig_http_ctx_detach(x) == 0)
		b = ig_arena_alloc(&x->arena, sizeof *b);
	if (b && r->body_kind == HTTP_BODY_CHUNKED) {
		chunked = ig_arena_alloc(&x->arena, sizeof *chunked);
		if (chunked)
			*chunked = (struct http_chunked_decoder){ .max_trailer_bytes = (size_t)c->core->cfg->max_header_bytes };
		else
			b = NULL;
	}
	if (!b) {
		ig_http_ctx_free(x);
		conn_fail_parsed(c, r, 500, "out of request memory");
		return false;
	}
	*b = (struct http_body_in){ .conn = c, .ctx = x, .chunked = chunked, .max = max,
				    .length = chunked ? -1 : (int64_t)r->content_length,
				    .left = chunked ? 0 : r->content_length };
	x->body_in = b;
	c->rpos += (uint32_t)head_len;
	c->body_in = b;
	c->state = CONN_BODY_IN;
	if (r->expect_continue && c->rpos == c->rlen)
		send_continue(c);
	c->continue_sent = false;
	conn_dispatch(c, x);
	return c->state == CONN_HEAD;
}

/* Handles one parsed head. Returns true to keep parsing. */
static bool conn_on_head(struct http_conn *c, const struct http_request *r, size_t head_len)
{
	const struct http_config *cfg = c->core->cfg;
	size_t after_head = c->rlen - c->rpos - head_len;
	/* An operation that reads its body as it arrives (x-ingot-stream-body);
	   an in-process request (Lambda's) has its body whole already. */
	if ((r->body_kind == HTTP_BODY_CHUNKED || (r->body_kind == HTTP_BODY_LENGTH && r->content_length)) &&
	    __builtin_expect(c->app->stream_body_limit != NULL, 0) && !c->in_process) {
		uint64_t max = c->app->stream_body_limit((ig_str){ r->method, r->method_len },
							 (ig_str){ r->path, r->path_len });
		if (max)
			return conn_begin_body_in(c, r, head_len, max);
	}
	if (r->body_kind == HTTP_BODY_LENGTH && r->content_length > (uint64_t)cfg->max_body) {
		conn_fail_parsed(c, r, 413, "the request body is too large");
		return false;
	}
	if (r->body_kind == HTTP_BODY_CHUNKED) {
		if (!conn_begin_arena_body(c, r, head_len))
			return false;
		if (r->expect_continue && c->rpos == c->rlen)
			send_continue(c);
		return true;
	}
	size_t body_len = r->body_kind == HTTP_BODY_LENGTH ? (size_t)r->content_length : 0;
	if (after_head < body_len) {
		if (head_len + body_len > c->core->rbuf_size) {
			if (!conn_begin_arena_body(c, r, head_len))
				return false;
			if (r->expect_continue && c->body_len == 0)
				send_continue(c);
			return true;
		}
		/* The body will fit: wait for it, re-parsing the head then. */
		if (r->expect_continue && after_head == 0)
			send_continue(c);
		return false;
	}
	struct ig_ctx *x = ig_http_ctx_new(c->core, c);
	if (!x) {
		conn_fail_parsed(c, r, 503, "out of request slots");
		return false;
	}
	ig_http_ctx_set_request(x, r, c->rbuf + c->rpos + head_len, body_len);
	c->rpos += (uint32_t)(head_len + body_len);
	c->continue_sent = false;
	conn_dispatch(c, x);
	return c->state == CONN_HEAD;
}

static bool conn_decode_chunked(struct http_conn *c)
{
	struct ig_ctx *x = c->reading;
	size_t len = c->rlen - c->rpos;
	/* Reserved before decoding (which cannot be undone), what the bytes
	   could decode to at most; the rest goes back below. */
	size_t avail = len;
	if (!conn_mem_take(c, NULL, avail))
		return false;
	x->mem_charged += avail;
	ssize_t left = ig_http_decode_chunked(c->chunked, c->rbuf + c->rpos, &len);
	if (left == HTTP_ERROR) {
		conn_fail_request(c, 400, "malformed chunked body");
		return false;
	}
	x->mem_charged -= avail - len;
	ig_membudget_give(&c->core->mem, avail - len);
	if (x->body.len + len > (size_t)c->core->cfg->max_body) {
		conn_fail_request(c, 413, "the request body is too large");
		return false;
	}
	ig_wbuf_put(&x->body, c->rbuf + c->rpos, len);
	if (x->body.failed) {
		conn_fail_request(c, 413, "the request body is too large");
		return false;
	}
	c->rpos += (uint32_t)len;
	if (left == HTTP_INCOMPLETE) {
		c->rlen = c->rpos;
		return false;
	}
	c->rlen = c->rpos + (uint32_t)left;
	return conn_body_complete(c);
}

IG_HOT static bool conn_backpressure(const struct http_conn *c)
{
	return c->out_bytes > (size_t)c->core->cfg->max_output || c->queued >= HTTP_MAX_QUEUED || c->out_over;
}

/* A stream that reads (a WebSocket) takes the client's bytes. */
__attribute__((cold, noinline)) static void conn_stream_input(struct http_conn *c)
{
	struct http_stream *s = c->stream;
	if (s->ops->received && c->rpos < c->rlen)
		c->rpos += (uint32_t)s->ops->received(s, c->rbuf + c->rpos, c->rlen - c->rpos);
}

/* Parses and dispatches every complete request in the read buffer. */
IG_HOT static void conn_process(struct http_conn *c)
{
	struct http_core *core = c->core;
	c->processing = true;
	core->batch_ready = 0;
	for (;;) {
		if (c->state == CONN_CHUNKED) {
			if (c->rpos == c->rlen || !conn_decode_chunked(c))
				break;
			continue;
		}
		if (c->state != CONN_HEAD) {
			if (__builtin_expect(c->state == CONN_STREAM, 0))
				conn_stream_input(c);
			else if (__builtin_expect(c->state == CONN_BODY_IN, 0) && c->rpos < c->rlen && c->body_in->wake)
				c->body_in->wake(c->body_in); /* its handler takes them */
			break;
		}
		if (c->rpos == c->rlen || conn_backpressure(c))
			break;
		struct http_request r = { .headers = core->scratch_headers,
					  .header_capacity = core->limits.max_headers };
		int n = ig_http_parse_request_resumed(c->rbuf + c->rpos, c->rlen - c->rpos, &r, &core->limits,
						      &c->head);
		if (n == HTTP_INCOMPLETE)
			break;
		c->head = (struct http_head_resume){ 0 };
		if (n == HTTP_ERROR) {
			conn_fail_request(c, ig_http_error_status(r.error.kind), r.error.detail);
			break;
		}
		if (!conn_on_head(c, &r, (size_t)n))
			break;
	}
	c->processing = false;
	if (c->state != CONN_CLOSING && c->rpos == c->rlen && c->state != CONN_BODY)
		rbuf_release(c);
	else if (c->rpos > 0 && c->rpos == c->rlen)
		c->rpos = c->rlen = 0;
}

/* Appends the responses at the head of the queue that are ready. */
IG_HOT static void conn_emit_ready(struct http_conn *c)
{
	/* A request's duration ends when its response is written: the
	   responses written together share one clock read (0: not read yet). */
	uint64_t now_us = 0;
	/* Over the budget, the rest wait (in their arenas, where they are
	   already) for this output to leave. */
	while (c->q_head && c->q_head->state == CTX_READY && !c->out_over) {
		struct ig_ctx *x = c->q_head;
		if (x->metered) {
			if (!now_us)
				now_us = ig_monotonic_us();
			http_ctx_meter(x, now_us);
		}
		c->q_head = x->next;
		if (!c->q_head)
			c->q_tail = NULL;
		c->queued--;
		/* While draining, the last queued response closes the stream. */
		bool last = !x->keep_alive || (c->core->draining && !c->q_head && !c->fail_status);
		if (__builtin_expect(c->state == CONN_BODY_IN, 0) && c->body_in->ctx == x) {
			/* Answered before its body ended: the rest is not read. */
			body_in_stop(c, IG_BODY_CLOSED);
			c->close_reason = HTTP_CLOSE_ERROR;
			last = true;
		}
		if (last && x->keep_alive)
			c->close_reason = HTTP_CLOSE_DRAIN;
		if (last)
			c->state = CONN_CLOSING;
		/* A body is JSON unless the handler said otherwise; an empty one
		   (a redirect, a 202) has no type at all. */
		const char *ct = x->content_type ? x->content_type : x->body.len ? ig_http_json_type : NULL;
		ig_http_out_head(c, x->status, ct, x->body.len, &x->headers, http_ctx_chosen_id(x), last,
			      x->req.minor_version, x->req.head);
		if (!x->req.head)
			ig_http_out_append(c, x->body.ptr, x->body.len);
		ig_http_ctx_free(x);
		if (last)
			break;
	}
	if (!c->q_head && c->fail_status) {
		ig_str id = { c->fail_id, c->fail_id_len };
		/* Its extra fields: CORS's, then the after-hooks'. */
		char lines[HTTP_EXTRA_LINES_MAX];
		size_t k = 0;
		if (ig_cors_on && c->fail_id && c->fail_id[HTTP_REQUEST_ID_MAX]) {
			ig_str origin = { c->fail_id + HTTP_REQUEST_ID_MAX + 1, (uint8_t)c->fail_id[HTTP_REQUEST_ID_MAX] };
			k = ig_cors_head_lines(lines, sizeof lines - IG_HOOKS_LINES_MAX, origin);
		}
		if (ig_hooks_on && !http_conn_is_admin(c))
			k += ig_http_hooks_after_lines(c->fail_status, c->tls, lines + k, sizeof lines - k);
		ig_str extra = { lines, k };
		size_t n = ig_http_out_problem(c, c->fail_status, c->fail_detail, id, true, extra);
		if (c->core->cfg->access_log) /* errors are always logged */
			ig_http_access_log_engine_error(c, c->fail_status, id, n);
		c->fail_status = 0;
		c->fail_id_len = 0;
		if (c->fail_id)
			ig_pool_give(&c->core->fail_ids, c->fail_id);
		c->fail_id = NULL;
	}
}

IG_HOT static bool conn_idle(const struct http_conn *c)
{
	return !c->q_head && !c->reading && c->rpos == c->rlen && !c->out_bytes;
}

/* After the client's FIN, once every complete request buffered has been
 * dispatched, what remains is a partial request that can never complete:
 * drop it and close when the queue has been answered. Returns false if the
 * connection was destroyed. */
IG_HOT static bool conn_after_eof(struct http_conn *c)
{
	if (!c->peer_eof || c->state == CONN_CLOSING)
		return true;
	if (c->state == CONN_HEAD && c->rpos < c->rlen && conn_backpressure(c))
		return true; /* complete requests may still be waiting their turn */
	if (c->reading) {
		ig_http_ctx_free(c->reading);
		c->reading = NULL;
	}
	if (c->state == CONN_BODY_IN) /* its handler answered: the rest never comes */
		body_in_stop(c, IG_BODY_CLOSED);
	c->rpos = c->rlen = 0;
	c->head = (struct http_head_resume){ 0 };
	c->state = CONN_CLOSING;
	c->mem_wait = false;
	if (!c->q_head && !c->out_bytes) {
		conn_destroy(c, false);
		return false;
	}
	return conn_flush(c);
}

static void drain_sweep(struct ig_deferred *d)
{
	ig_http_conn_drain((struct http_core *)((char *)d - offsetof(struct http_core, drain_sweep)));
}

/* Processes, answers and writes until nothing more can move. Returns false
 * if the connection was destroyed. */
IG_HOT static bool conn_run(struct http_conn *c)
{
	for (;;) {
		uint64_t dispatched = c->core->requests;
		uint32_t queued = c->queued;
		conn_process(c);
		conn_emit_ready(c);
		if (!conn_flush(c))
			return false;
		/* A response held back by the memory budget (out_over) can go
		   once the write took the output down to one block. */
		if (c->q_head && c->q_head->state == CTX_READY && !c->out_over)
			continue;
		/* Requests still buffered behind a queue that was full (more than
		   HTTP_MAX_QUEUED pipelined): go again while anything moved. */
		bool moved = c->core->requests != dispatched || c->queued < queued;
		if (!moved || c->state != CONN_HEAD || c->rpos == c->rlen || conn_backpressure(c))
			break;
	}
	if (!conn_after_eof(c))
		return false;
	if (c->core->draining && c->had_request && conn_idle(c)) {
		/* Idle to the engine, but not closed here: the next request may
		   wait below (TLS reads nothing while it sends; a stream's event
		   may come later in this batch). The sweep after the batch reads
		   it, or closes. */
		c->core->drain_sweep.fn = drain_sweep;
		ig_loop_defer(&c->core->loop, &c->core->drain_sweep);
	}
	conn_update_deadline(c);
	return true;
}

/* An exchange became ready. Inside a batch the batch end writes it; after
 * an asynchronous completion, write now and resume the pipeline. */
IG_HOT void ig_http_conn_ctx_ready(struct http_conn *c)
{
	if (c->processing || c->taking) /* a batch's end, or the body's reader's return, runs it */
		return;
	if (conn_run(c) && c->state != CONN_CLOSING && !conn_backpressure(c))
		c->t->ops->resume_read(c->t);
}

/* ---- transport callbacks ---- */

IG_HOT static char *conn_lend(void *engine, size_t *cap)
{
	struct http_conn *c = engine;
	if (c->state == CONN_CLOSING || c->peer_eof || c->mem_wait || conn_backpressure(c))
		return NULL;
	if (c->state == CONN_BODY) {
		*cap = c->body_need - c->body_len;
		return (char *)c->reading->req.body.ptr + c->body_len;
	}
	return ig_rbuf_lend(&c->core->rbufs, &c->rbuf, &c->rpos, &c->rlen, c->core->rbuf_size, cap);
}

IG_HOT static void conn_received(void *engine, size_t n)
{
	struct http_conn *c = engine;
	if (__builtin_expect(c->taking, 0)) { /* on a streamed body's handler's coroutine */
		if (n)
			c->rlen += (uint32_t)n;
		else
			c->peer_eof = true;
		return;
	}
	if (n == 0) {
		/* The client closed its side. With work pending, take it as gone
		   (as most clients close both sides at once) and cancel that
		   work; otherwise answer the complete requests it sent, then
		   close. A stream's client that closes has gone. */
		if (c->state == CONN_STREAM) {
			conn_destroy(c, false);
			return;
		}
		for (struct ig_ctx *x = c->q_head; x; x = x->next) {
			if (x->state == CTX_PENDING) {
				conn_destroy(c, false);
				return;
			}
		}
		c->peer_eof = true;
		conn_run(c);
		return;
	}
	if (c->state == CONN_BODY) {
		c->body_len += n;
		if (c->body_len == c->body_need) {
			/* As a batch: an exchange that finishes at once is written
			   by conn_run below, not inside its own dispatch. */
			c->processing = true;
			conn_body_complete(c);
			c->processing = false;
		}
	} else {
		c->rlen += (uint32_t)n;
	}
	conn_run(c);
}

/* Part of a stream's output was written: its sender may go on once it is
 * down to INGOT_MAX_OUTPUT. */
__attribute__((cold, noinline)) static void conn_stream_writable(struct http_conn *c)
{
	conn_update_deadline(c);
	if (c->out_bytes && c->out_bytes <= (size_t)c->core->cfg->max_output)
		c->stream->ops->writable(c->stream);
}

static void conn_writable(void *engine)
{
	struct http_conn *c = engine;
	if (!c->out_bytes)
		return;
	bool pressured = conn_backpressure(c);
	if (!conn_flush(c) || c->taking) /* taking: on a body's reader's coroutine, no batch */
		return;
	if (__builtin_expect(c->state == CONN_STREAM, 0)) {
		conn_stream_writable(c);
		return;
	}
	if (pressured && !conn_backpressure(c))
		ig_http_conn_ctx_ready(c); /* buffered requests first, then new bytes */
	else
		conn_update_deadline(c);
}

static void conn_closed(void *engine)
{
	struct http_conn *c = engine;
	c->t = NULL; /* the transport is gone already */
	conn_destroy(c, false);
}

static const struct ig_stream_ops conn_stream_ops = {
	.lend = conn_lend,
	.received = conn_received,
	.writable = conn_writable,
	.closed = conn_closed,
};

/* ---- streams (internal.h) ---- */

bool ig_http_stream_begin(struct ig_ctx *x, struct http_stream *s, const char *head, size_t n)
{
	struct http_conn *c = x->conn;
	if (!c || http_conn_gathers(c) || c->core->draining || c->peer_eof || c->reading || c->fail_status ||
	    (c->state != CONN_HEAD && c->state != CONN_CLOSING))
		return false;
	conn_emit_ready(c); /* the answers ahead leave first */
	if (c->q_head != x || c->out_over)
		return false;
	/* The request's bytes are in the read buffer, which moves on while
	   the handler streams: its slices move into the arena. */
	if (!x->detached && ig_http_ctx_detach(x) != 0)
		return false;
	c->q_head = x->next;
	if (!c->q_head)
		c->q_tail = NULL;
	c->queued--;
	if (c->state == CONN_CLOSING)
		x->keep_alive = false;
	x->conn = NULL;
	x->stream = s;
	s->conn = c;
	c->stream = s;
	c->state = CONN_STREAM;
	ig_http_out_append(c, head, n);
	ig_http_stream_write(s, NULL, 0);
	return true;
}

void ig_http_stream_write(struct http_stream *s, const void *p, size_t n)
{
	struct http_conn *c = s->conn;
	if (n)
		ig_http_out_append(c, p, n);
	if (!c->processing && conn_flush(c))
		conn_update_deadline(c);
}

size_t ig_http_stream_unsent(const struct http_stream *s)
{
	return s->conn ? s->conn->out_bytes : 0;
}

void ig_http_stream_resume(struct http_stream *s)
{
	struct http_conn *c = s->conn;
	if (c->processing || conn_backpressure(c))
		return;
	if (conn_run(c) && c->state == CONN_STREAM && !conn_backpressure(c))
		c->t->ops->resume_read(c->t);
}

void ig_http_stream_end(struct http_stream *s, bool close)
{
	struct http_conn *c = s->conn;
	s->conn = NULL;
	c->stream = NULL;
	c->chunked = NULL;
	bool last = close || c->core->draining;
	if (last)
		c->close_reason = c->core->draining ? HTTP_CLOSE_DRAIN : HTTP_CLOSE_CLIENT;
	c->state = last ? CONN_CLOSING : CONN_HEAD;
	if (c->processing)
		return; /* the batch's end writes, and parses what follows */
	if (conn_run(c) && c->state != CONN_CLOSING && !conn_backpressure(c))
		c->t->ops->resume_read(c->t);
}

/* ---- streamed request bodies (internal.h, body.c) ---- */

/* The body has ended whole: the connection parses what follows once its
 * exchange has been answered (its batch, or its completion's conn_run). */
__attribute__((cold)) static void body_in_ended(struct http_conn *c, struct http_body_in *b)
{
	c->body_in = NULL;
	b->conn = NULL;
	b->end = IG_BODY_OK;
	c->state = b->ctx->keep_alive ? CONN_HEAD : CONN_CLOSING;
}

/* Chunked: decodes, in place, what arrived after the decoded bytes at rpos.
 * Returns false when the body stopped (b->end says why). */
__attribute__((cold)) static bool body_in_decode(struct http_conn *c, struct http_body_in *b)
{
	uint32_t from = c->rpos + b->decoded;
	if (b->last_chunk || from >= c->rlen)
		return true;
	size_t len = c->rlen - from;
	ssize_t left = ig_http_decode_chunked(b->chunked, c->rbuf + from, &len);
	if (left == HTTP_ERROR) {
		body_in_stop(c, IG_BODY_MALFORMED);
		c->state = CONN_CLOSING;
		return false;
	}
	b->decoded += (uint32_t)len;
	if (left == HTTP_INCOMPLETE) {
		c->rlen = from + (uint32_t)len;
	} else { /* what follows the body (a pipelined request) moved up behind it */
		c->rlen = from + (uint32_t)len + (uint32_t)left;
		b->last_chunk = true;
	}
	if (b->taken + b->decoded > b->max) {
		body_in_stop(c, IG_BODY_TOO_LARGE);
		c->state = CONN_CLOSING;
		return false;
	}
	return true;
}

__attribute__((cold)) size_t ig_http_body_in_take(struct http_body_in *b, char *p, size_t cap)
{
	struct http_conn *c = b->conn;
	if (!c)
		return 0;
	/* Full, reading paused: the room this take makes lets it go on. */
	bool full = conn_body_in_full(c);
	if (b->chunked && !body_in_decode(c, b))
		return 0;
	uint64_t have = b->chunked ? b->decoded : c->rlen - c->rpos;
	if (!b->chunked && have > b->left)
		have = b->left;
	size_t k = have < cap ? (size_t)have : cap;
	if (k) /* none: the read buffer may have gone back to its pool */
		memcpy(p, c->rbuf + c->rpos, k);
	c->rpos += (uint32_t)k;
	b->taken += k;
	if (b->chunked)
		b->decoded -= (uint32_t)k;
	else
		b->left -= k;
	if (b->chunked ? b->last_chunk && !b->decoded : !b->left) {
		body_in_ended(c, b);
		return k;
	}
	if (c->rpos == c->rlen)
		c->rpos = c->rlen = 0;
	if (!k && c->peer_eof) { /* the client stopped sending half-way */
		body_in_stop(c, IG_BODY_CLOSED);
		c->state = CONN_CLOSING;
		return 0;
	}
	if (full && k && c->t) {
		/* What arrives meanwhile is only buffered (conn_received): no
		   batch runs on the handler's coroutine. The transport may fail
		   in there, and c go with it (b->conn NULL then). */
		c->taking = true;
		c->t->ops->resume_read(c->t);
		if (b->conn) {
			c->taking = false;
			conn_update_deadline(c);
		}
	}
	return k;
}

/* ---- drain ---- */

void ig_http_conn_drain(struct http_core *core)
{
	uint64_t by = core->loop.clock.now_ms + (uint64_t)core->cfg->header_timeout_ms;
	for (struct http_conn *c = core->live, *next; c; c = next) {
		next = c->next;
		if (c->state == CONN_STREAM) { /* it ends itself, cleanly */
			c->stream->ops->drain(c->stream);
			continue;
		}
		if (!conn_idle(c))
			continue;
		/* Kept (below) or not, an idle connection now waits at most the
		   header timeout for a request: set before read_now, after which
		   c may be gone. */
		if (c->deadline_ms > by)
			conn_set_deadline(c, TIMER_IDLE, by);
		/* Bytes that arrived but were not delivered yet (an event later
		   in the batch, records below TLS) are a request that reached
		   us: read them; conn_run then answers it with Connection: close.
		   Only a connection with nothing unread is closed idle. */
		if (c->t && c->t->ops->read_now && c->t->ops->read_now(c->t))
			continue; /* it heard what had arrived (and may be gone) */
		/* One that has not had its first request yet (accepted from the
		   backlog, or in its TLS handshake) is kept for it. The close is
		   graceful, FIN first: a request that reaches the socket between
		   the peek above and the close would otherwise turn close() into
		   a reset, which tells the client nothing of whether it was
		   served; after a FIN the client knows it was not. */
		if (c->had_request) {
			c->close_reason = HTTP_CLOSE_DRAIN;
			conn_destroy(c, true);
		}
	}
	if (core->count == 0)
		core_drained(core);
}

/* One warning line for each request the grace period cut: the exit status
 * says that some were (kernel/process/exit_codes.h), these say which. */
__attribute__((cold)) static void log_cut(struct http_conn *c)
{
	struct ig_logline l;
	for (struct ig_ctx *x = c->q_head; x; x = x->next) {
		if (!ig_log_begin(&l, IG_LOG_WARN, "request cut"))
			return;
		ig_http_log_exchange(x, &l);
		ig_log_end(&l);
	}
	/* One still arriving has no id, method or route yet. */
	if ((c->reading || c->rpos < c->rlen) && ig_log_begin(&l, IG_LOG_WARN, "request cut")) {
		ig_log_cstr(&l, "stage", "receiving");
		ig_log_end(&l);
	}
}

void ig_http_conn_force_close_all(struct http_core *core)
{
	while (core->live) {
		struct http_conn *c = core->live;
		log_cut(c);
		core->cut += c->queued + (c->reading || c->rpos < c->rlen ? 1 : 0);
		c->close_reason = HTTP_CLOSE_DRAIN;
		conn_destroy(c, false);
	}
	/* The runtime's own exchanges (task.h) end with the process: said
	   and counted as a connection's requests are. */
	for (struct http_task *t = core->tasks; t; t = t->next) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_WARN, "request cut")) {
			ig_http_log_exchange(t->ctx, &l);
			ig_log_end(&l);
		}
		core->cut++;
	}
	core->loop.running = false;
}
