/* Exchanges (ig_ctx) and the handler API on them (include/ingot/http.h): taken from
 * the core's pool at dispatch, given back when the response has been
 * copied to the connection's output, or, for a pending exchange whose
 * client left, when the app finally calls ig_finish. Everything a request
 * allocates lives in its arena. */
#include "ingot/http.h"
#include "internal.h"
#include "wait.h"
#include "cors.h"
#include "hooks.h"
#include "client_addr.h"
#include "exchange.h"
#include "redact.h"
#include "kernel/runtime/config.h"
#include "kernel/runtime/json.h"
#include "ingot/log.h"
#include "ingot/auth.h"

#include <stddef.h>
#include <stdint.h>

IG_HOT struct ig_ctx *ig_http_ctx_new(struct http_core *core, struct http_conn *c)
{
	struct ig_ctx *x = ig_pool_take(&core->ctxs);
	if (!x)
		return NULL;
	memset(x, 0, offsetof(struct ig_ctx, arena));
	x->conn = c;
	x->core = core;
	x->state = CTX_RUNNING;
	ig_arena_init(&x->arena, &core->blocks, (size_t)core->cfg->max_body * 2 + (1u << 20));
	/* All but the trace's id buffers, which are written before read. */
	size_t after_trace = offsetof(struct ig_ctx, trace) + sizeof x->trace;
	memset(&x->req, 0, offsetof(struct ig_ctx, trace) - offsetof(struct ig_ctx, req));
	http_trace_reset(&x->trace);
	memset((char *)x + after_trace, 0, sizeof *x - after_trace);
	x->content_type = NULL; /* application/json once a body is written (conn.c) */
	x->body.arena = x->headers.arena = x->errors.arena = &x->arena;
	/* When the loop woke to the request's bytes: no clock read of its own,
	   and a pipelined request's wait behind the ones before it counts. */
	x->start_us = core->loop.clock.now_us;
	x->metered = c && c->metered; /* NULL: a test's exchange without a connection */
	x->admin = c && http_conn_is_admin(c);
	core->admin.ctxs += x->admin;
	if (c)
		x->deadline_ms = c->request_deadline_ms;
	if (x->metered)
		ig_counter_add(&core->meter.active_requests, 1);
	return x;
}

IG_HOT void ig_http_ctx_free(struct ig_ctx *x)
{
	ig_timer_cancel(&x->core->loop.timers, &x->timer);
	x->core->admin.ctxs -= x->admin;
	if (x->metered)
		ig_counter_add(&x->core->meter.active_requests, UINT64_MAX); /* - 1 */
	if (x->mem_charged)
		ig_membudget_give(&x->core->mem, x->mem_charged);
	ig_arena_reset(&x->arena);
	ig_pool_give(&x->core->ctxs, x);
}

__attribute__((cold, noinline)) static void ctx_begin_cors(struct ig_ctx *x, const struct http_request *r)
{
	char lines[IG_CORS_LINES_MAX];
	ig_wbuf_put(&x->headers, lines, ig_cors_request_lines(&x->req, lines, sizeof lines));
	ig_http_trace_begin(&x->trace, r);
}

IG_HOT void ig_http_ctx_set_request(struct ig_ctx *x, const struct http_request *r, const char *body, size_t body_len)
{
	ig_request *q = &x->req;
	q->method = (ig_str){ r->method, r->method_len };
	q->head = r->method_len == 4 && memcmp(r->method, "HEAD", 4) == 0;
	if (q->head)
		q->method = IG_STR("GET");
	q->target = (ig_str){ r->target, r->target_len };
	q->path = (ig_str){ r->path, r->path_len };
	q->query = (ig_str){ r->query, r->query_len };
	/* The parser's own array (the core's scratch space, reused by the
	   next parse): valid while the request is being dispatched; detach
	   copies it for a request that outlives that. */
	q->headers = r->headers;
	q->num_headers = r->num_headers;
	q->body = (ig_str){ body, body_len };
	q->minor_version = r->minor_version;
	x->keep_alive = r->keep_alive;
	/* Before any answer, so that the runtime's own errors carry it too.
	   Both ends are tail calls: CORS off costs a test and a branch. */
	if (__builtin_expect(ig_cors_on, 0)) {
		ctx_begin_cors(x, r);
		return;
	}
	ig_http_trace_begin(&x->trace, r);
}

/* *s's bytes moved to *to, which advances past them; an empty slice stays
 * as it is (nothing reads its pointer). */
static void move_str(ig_str *s, char **to)
{
	if (!s->len)
		return;
	memcpy(*to, s->ptr, s->len);
	s->ptr = *to;
	*to += s->len;
}

/* Whether s lies within in (the path and the query in the target, unless
 * the path was decoded elsewhere). */
static bool lies_in(ig_str s, ig_str in)
{
	uintptr_t p = (uintptr_t)s.ptr, lo = (uintptr_t)in.ptr;
	return p >= lo && p - lo <= in.len && s.len <= in.len - (p - lo);
}

/* s, within the target once at from, at the same place in the target now
 * at to. */
static void rebase_str(ig_str *s, const char *from, const char *to)
{
	s->ptr = to + (s->ptr - from);
}

/* One allocation for the field array and every slice of the head (a
 * request that waits, every database route's, comes here once, and an
 * allocation costs more than the sum below), one more for a body: a large
 * body in the head's allocation would take it past an arena block's half,
 * to a mapping of its own. */
int ig_http_ctx_detach(struct ig_ctx *x)
{
	ig_request *q = &x->req;
	if (x->detached) /* a body read into the arena: the head moved first */
		return 0;
	const char *target = q->target.ptr;
	bool path_in = q->target.len && lies_in(q->path, q->target);
	bool query_in = q->target.len && lies_in(q->query, q->target);
	size_t array = sizeof(ig_header) * (q->num_headers ? q->num_headers : 1);
	size_t bytes = q->target.len + (path_in ? 0 : q->path.len) + (query_in ? 0 : q->query.len) +
		       (q->head ? 0 : q->method.len);
	for (size_t i = 0; i < q->num_headers; i++)
		bytes += q->headers[i].name.len + q->headers[i].value.len;
	ig_header *h = ig_arena_alloc(&x->arena, array + bytes);
	char *body = q->body.len ? ig_arena_alloc(&x->arena, q->body.len) : NULL;
	if (!h || (q->body.len && !body))
		return -1;
	char *to = (char *)h + array;
	for (size_t i = 0; i < q->num_headers; i++) {
		h[i] = q->headers[i];
		move_str(&h[i].name, &to);
		move_str(&h[i].value, &to);
	}
	q->headers = h;
	x->detached = true;
	move_str(&q->target, &to);
	if (path_in)
		rebase_str(&q->path, target, q->target.ptr);
	else
		move_str(&q->path, &to);
	if (query_in)
		rebase_str(&q->query, target, q->target.ptr);
	else
		move_str(&q->query, &to);
	move_str(&q->body, &body);
	if (!q->head) /* "GET" for HEAD is a static string already */
		move_str(&q->method, &to);
	return 0;
}

void ig_http_ctx_cancel(struct ig_ctx *x)
{
	x->conn = NULL;
	x->task = false;
	if (x->waiter)
		ig_wait_cancel(x); /* a waiting handler returns */
}

/* ---- public API: the request id and trace context (trace.c makes them
 * on first use) ---- */

_Static_assert(IG_TRACEPARENT_LEN == HTTP_TRACEPARENT_LEN, "one traceparent length");

IG_HOT ig_str ig_request_id(const ig_ctx *cx)
{
	struct ig_ctx *x = (struct ig_ctx *)cx; /* chosen once, then read-only */
	return ig_http_trace_request_id(&x->trace, x->req.headers, &x->core->rng);
}

static struct http_trace *trace_of(const ig_ctx *cx)
{
	struct ig_ctx *x = (struct ig_ctx *)cx; /* made once, then read-only */
	return ig_http_trace_context(&x->trace, x->req.headers, x->req.num_headers, &x->arena, &x->core->rng);
}

const char *ig_trace_id(const ig_ctx *x)
{
	return trace_of(x)->trace_id;
}

const char *ig_span_id(const ig_ctx *x)
{
	return trace_of(x)->span_id;
}

uint8_t ig_trace_flags(const ig_ctx *x)
{
	return trace_of(x)->flags;
}

ig_str ig_tracestate(const ig_ctx *x)
{
	return trace_of(x)->tracestate;
}

void ig_traceparent_child(ig_ctx *x, char out[IG_TRACEPARENT_LEN])
{
	ig_http_trace_child(trace_of(x), &x->core->rng, out);
}

/* ---- public API: the request and the response ---- */

IG_HOT const ig_request *ig_req(const ig_ctx *x)
{
	return &x->req;
}

IG_HOT ig_str ig_req_header(const ig_ctx *x, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < x->req.num_headers; i++) {
		const ig_header *h = &x->req.headers[i];
		if (h->name.len == n && ig_http_same_nocase(h->name.ptr, name, n))
			return h->value;
	}
	return (ig_str){ NULL, 0 };
}

IG_HOT void *ig_alloc(ig_ctx *x, size_t size)
{
	return ig_arena_alloc(&x->arena, size);
}

IG_HOT ig_arena *ig_ctx_arena(ig_ctx *x)
{
	return &x->arena;
}

struct ig_loop *ig_ctx_loop(ig_ctx *x)
{
	return &x->core->loop;
}

IG_HOT void ig_set_route(ig_ctx *x, uint32_t index)
{
	if (index < x->core->app->route_count)
		x->route = index + 1;
}

const char *ig_route_template(const ig_ctx *x)
{
	return x->route ? x->core->app->routes[x->route - 1] : "";
}

__attribute__((cold)) void ig_http_log_exchange(const void *exchange, struct ig_logline *line)
{
	const ig_ctx *x = exchange;
	ig_str id = ig_request_id(x);
	ig_log_str(line, "request_id", id.ptr, id.len);
	ig_log_str(line, "method", x->req.method.ptr, x->req.method.len);
	ig_log_cstr(line, "route", ig_route_template(x));
	if (x->work && x->work->name)
		ig_log_cstr(line, "operation", x->work->name);
}

bool ig_log_req(const ig_ctx *x, struct ig_logline *l, enum ig_log_level level, const char *msg)
{
	if (!ig_log_begin(l, level, msg))
		return false;
	ig_str id = ig_request_id(x);
	ig_log_str(l, "request_id", id.ptr, id.len);
	ig_log_cstr(l, "trace_id", ig_trace_id(x));
	ig_log_cstr(l, "route", ig_route_template(x));
	return true;
}

void ig_count_rejected(ig_ctx *x, int status)
{
	if (!x->metered)
		return;
	if (status == 400 && x->core->meter.validation)
		ig_counter_add(&x->core->meter.validation[x->route], 1);
	else
		ig_http_meter_error(&x->core->meter, status);
}

void ig_count_rate_limited(ig_ctx *x)
{
	if (x->metered && x->core->meter.rate_limited)
		ig_counter_add(&x->core->meter.rate_limited[x->route], 1);
}

bool ig_http_peer_addr(const ig_ctx *x, uint8_t out[16])
{
	struct ig_transport *t = x->conn ? x->conn->t : NULL;
	if (!t)
		return false;
	if (t->ops->peer_addr && t->ops->peer_addr(t, out))
		return true;
	char text[IG_PEER_TEXT_MAX];
	size_t n = t->ops->peer ? t->ops->peer(t, text, sizeof text) : 0;
	return n && ig_addr_parse((ig_str){ text, n }, out);
}

const char *ig_http_peer_subject(const ig_ctx *x)
{
	struct ig_transport *t = x->conn ? x->conn->t : NULL;
	return t && t->ops->peer_subject ? t->ops->peer_subject(t) : NULL;
}

uint64_t ig_http_start_us(const ig_ctx *x)
{
	return x->start_us;
}

void ig_http_set_op_hooks(ig_ctx *x, const struct ig_op_hooks *hooks)
{
	x->hooks = hooks;
}

bool ig_http_answered(const ig_ctx *x)
{
	return x->finished;
}

IG_HOT void ig_set_status(ig_ctx *x, int status)
{
	x->status = status;
}

IG_HOT uint32_t ig_core_index(const ig_ctx *x)
{
	return x->core->index;
}

IG_HOT uint32_t ig_core_count(const ig_ctx *x)
{
	return x->core->cfg->threads > 0 ? (uint32_t)x->core->cfg->threads : 1;
}

uint16_t ig_listen_port(const ig_ctx *x)
{
	return (uint16_t)x->core->cfg->port;
}

IG_HOT ig_wbuf *ig_body(ig_ctx *x)
{
	return &x->body;
}

IG_HOT void ig_set_content_type(ig_ctx *x, const char *ct)
{
	x->content_type = ct;
}

IG_HOT void ig_add_header(ig_ctx *x, const char *name, ig_str value)
{
	/* Reserved whole: out of memory, no half line breaks the head. */
	size_t n = strlen(name);
	char *d = ig_wbuf_reserve(&x->headers, n + value.len + 4);
	if (!d)
		return;
	ig_http_field_line(d, name, n, value);
	x->headers.len += n + value.len + 4;
}

IG_HOT void ig_set_encoder(ig_ctx *x, ig_encode_fn *encode, const void *out)
{
	x->encode = encode;
	x->out = out;
}

/* INGOT_ACCESS_LOG_SAMPLE thins 2xx lines only, by the request id's hash:
 * every line about one id (and every service passing it on) agrees. */
static bool access_log_keeps(const struct ig_ctx *x)
{
	uint32_t sample = x->core->cfg->access_log_sample;
	if (sample >= IG_FRACTION_ONE || x->status < 200 || x->status > 299)
		return true;
	return ig_http_request_id_hash(ig_request_id(x)) % IG_FRACTION_ONE < sample;
}

/* One access log line; what is not known is empty (or 0). */
struct access_entry {
	ig_str request_id, method;
	const char *trace_id, *span_id, *route;
	int status;
	int64_t duration_us, bytes_in, bytes_out;
	struct ig_transport *t; /* for the peer; NULL once the client left */
	ig_str subject; /* the door's principal's (never a token or key); empty: none */
	ig_str target;  /* the request's, written at debug level only; empty: none */
};

/* The concrete target, only when debugging (a query may hold what a log
 * should not keep), and never an access_token's value. Apart, so that its
 * copy does not grow the frame of every access line (handlers' stacks). */
__attribute__((cold, noinline)) static void log_target(struct ig_logline *l, ig_str target)
{
	char buf[1024];
	ig_str t = ig_http_target_loggable(target, buf, sizeof buf);
	ig_log_str(l, "target", t.ptr, t.len);
}

static void access_log_write(const struct access_entry *e)
{
	struct ig_logline l;
	if (!ig_log_begin(&l, IG_LOG_INFO, "request"))
		return;
	ig_log_str(&l, "request_id", e->request_id.ptr, e->request_id.len);
	ig_log_cstr(&l, "trace_id", e->trace_id);
	ig_log_cstr(&l, "span_id", e->span_id);
	ig_log_str(&l, "method", e->method.ptr, e->method.len);
	ig_log_cstr(&l, "route", e->route);
	ig_log_int(&l, "status", e->status);
	ig_log_int(&l, "duration_us", e->duration_us);
	ig_log_int(&l, "bytes_in", e->bytes_in);
	ig_log_int(&l, "bytes_out", e->bytes_out);
	char peer[IG_PEER_TEXT_MAX];
	size_t n = e->t && e->t->ops->peer ? e->t->ops->peer(e->t, peer, sizeof peer) : 0;
	ig_log_str(&l, "client", peer, n);
	if (e->subject.len)
		ig_log_str(&l, "subject", e->subject.ptr, e->subject.len);
	if (e->target.len && ig_log_enabled(IG_LOG_DEBUG))
		log_target(&l, e->target);
	ig_log_end(&l);
}

static void access_log(const struct ig_ctx *x)
{
	if (!access_log_keeps(x))
		return;
	access_log_write(&(struct access_entry){
		.request_id = ig_request_id(x),
		.method = x->req.head ? IG_STR("HEAD") : x->req.method,
		.trace_id = ig_trace_id(x),
		.span_id = ig_span_id(x),
		.route = ig_route_template(x),
		.status = x->status,
		.duration_us = (int64_t)(ig_monotonic_us() - x->start_us),
		.bytes_in = (int64_t)x->req.body.len,
		.bytes_out = x->req.head ? 0 : (int64_t)x->body.len,
		.t = x->conn ? x->conn->t : x->stream && x->stream->conn ? x->stream->conn->t : NULL,
		.subject = x->principal ? x->principal->subject : (ig_str){ NULL, 0 },
		.target = x->req.target,
	});
}

void ig_http_access_log_engine_error(struct http_conn *c, int status, ig_str request_id, size_t bytes_out)
{
	access_log_write(&(struct access_entry){
		.request_id = request_id, .trace_id = "", .span_id = "", .route = "", .status = status,
		.bytes_out = (int64_t)bytes_out, .t = c->t,
	});
}

/* The answer leaves: queued on its connection, or dropped (and the
 * exchange freed) when the client has gone. */
static void hand_off(struct ig_ctx *x)
{
	struct http_conn *c = x->conn;
	if (!c) {
		if (x->stream) { /* its answer was the stream: it ends the exchange */
			x->stream->ops->finished(x->stream, x);
			return;
		}
		/* The client left while this was pending: drop the result. */
		struct ig_logline l;
		if (x->metered)
			http_ctx_meter(x, ig_monotonic_us());
		x->core->dropped++;
		if (ig_log_begin(&l, IG_LOG_DEBUG, "response dropped: client gone")) {
			ig_str id = ig_request_id(x);
			ig_log_str(&l, "request_id", id.ptr, id.len);
			ig_log_int(&l, "status", x->status);
			ig_log_end(&l);
		}
		ig_http_ctx_free(x);
		return;
	}
	x->state = CTX_READY;
	x->core->ctx_ready(c);
}

IG_HOT void ig_finish(ig_ctx *x, int status)
{
	if (x->finished) {
		/* Finished twice: the first answer stands. A held one leaves
		   once wait.c lets go of the exchange and calls again. */
		if (!x->held && x->state != CTX_READY)
			hand_off(x);
		return;
	}
	x->finished = true;
	ig_timer_cancel(&x->core->loop.timers, &x->timer);
	if (!x->trace.id_len)
		(void)ig_request_id(x); /* chosen now: the response is written later */
	if (x->metered)
		x->method_index = (uint8_t)ig_http_method_index(x->req.method, x->req.head);
	x->status = status;
	if (x->encode && x->conn)
		x->encode(x, status, x->out);
	if (x->body.failed) {
		x->body.len = 0;
		x->body.failed = false;
		x->status = 500;
		x->content_type = "application/problem+json";
		x->cause = "the response exceeded the request memory limit";
		char tmp[HTTP_PROBLEM_MAX];
		size_t n = ig_http_problem_body(tmp, sizeof tmp, 500, x->cause, NULL, ig_request_id(x));
		ig_wbuf_put(&x->body, tmp, n);
	}
	/* After the encoder (its status stands), before the logs. */
	if (__builtin_expect(ig_hooks_on, 0))
		ig_http_hooks_after(x);
	if (__builtin_expect(x->status >= 500, 0) && !x->error_logged)
		ig_http_error_log_answer(x);
	if (x->core->cfg->access_log)
		access_log(x);
	if (!x->held)
		hand_off(x);
}

void ig_encode_problem(ig_ctx *x, int status)
{
	char tmp[HTTP_PROBLEM_MAX];
	size_t n = ig_http_problem_body(tmp, sizeof tmp, status, NULL, NULL, ig_request_id(x));
	x->body.len = 0;
	ig_wbuf_put(&x->body, tmp, n);
	x->content_type = "application/problem+json";
}

void ig_http_problem_set(ig_ctx *x, int status, const char *detail, const char *error_kind)
{
	char tmp[HTTP_PROBLEM_MAX];
	size_t n = ig_http_problem_body(tmp, sizeof tmp, status, detail, error_kind, ig_request_id(x));
	x->body.len = 0;
	ig_wbuf_put(&x->body, tmp, n);
	x->content_type = "application/problem+json";
	x->encode = NULL;
}

void ig_respond_problem(ig_ctx *x, int status, const char *detail)
{
	if (x->finished) { /* the first answer stands: its body too */
		ig_finish(x, status);
		return;
	}
	ig_http_problem_set(x, status, detail, NULL);
	if (x->state != CTX_READY)
		x->cause = detail; /* read by the ig_finish below only */
	ig_finish(x, status);
}

int ig_redirect(ig_ctx *x, int status, ig_str location)
{
	if (status < 300 || status > 399)
		return 500;
	ig_add_header(x, "Location", location);
	x->body.len = 0;
	x->content_type = NULL;
	x->encode = NULL; /* no out struct's body for a redirect */
	return status;
}

static void json_key_str(ig_wbuf *w, const char *key, const char *v)
{
	ig_wbuf_put(w, key, strlen(key));
	ig_json_string(w, v, strlen(v));
}

void ig_error_add(ig_ctx *x, const char *in, const char *name_or_pointer,
		  const char *keyword, const char *message)
{
	uint32_t count = x->error_count;
	if (count >= HTTP_MAX_ERRORS)
		return;
	ig_wbuf *w = &x->errors;
	ig_wbuf_put(w, count ? ",{" : "{", count ? 2 : 1);
	if (in && strcmp(in, "body") != 0) {
		json_key_str(w, "\"in\":", in);
		json_key_str(w, ",\"name\":", name_or_pointer);
	} else {
		json_key_str(w, "\"pointer\":", name_or_pointer);
	}
	json_key_str(w, ",\"keyword\":", keyword);
	json_key_str(w, ",\"message\":", message);
	ig_wbuf_lit(w, "}");
	x->error_count++;
}

IG_HOT bool ig_has_errors(const ig_ctx *x)
{
	return x->error_count != 0;
}

void ig_respond_errors(ig_ctx *x, const char *detail)
{
	ig_wbuf *b = &x->body;
	b->len = 0;
	ig_wbuf_lit(b, "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":");
	ig_json_string(b, detail, strlen(detail));
	ig_str id = ig_request_id(x);
	ig_wbuf_lit(b, ",\"request_id\":");
	ig_json_string(b, id.ptr, id.len);
	ig_wbuf_lit(b, ",\"errors\":[");
	ig_wbuf_put(b, x->errors.ptr, x->errors.len);
	ig_wbuf_lit(b, "]}");
	x->content_type = "application/problem+json";
	x->encode = NULL;
	ig_finish(x, 400);
}

uint64_t ig_deadline_ms(const ig_ctx *x)
{
	return x->deadline_ms;
}

bool ig_cancelled(const ig_ctx *x)
{
	return !x->task && x->conn == NULL && (!x->stream || !x->stream->conn);
}

static void on_ctx_timer(struct ig_timer *t)
{
	struct ig_ctx *x = (struct ig_ctx *)((char *)t - offsetof(struct ig_ctx, timer));
	x->timer_fn(x, x->timer_arg);
}

void ig_after(ig_ctx *x, uint32_t ms, ig_ctx_fn *fn, void *arg)
{
	x->timer_fn = fn;
	x->timer_arg = arg;
	x->timer.fn = on_ctx_timer;
	ig_timer_set(&x->core->loop.timers, &x->timer, x->core->loop.clock.now_ms + ms);
}
