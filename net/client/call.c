/* One call: its options checked once at dispatch, its request written
 * straight from the caller's memory (no copy: the request line, Host, the
 * caller's fields and the body are gathered into iovecs), and every
 * callback to the caller. Its slot goes back after the batch in which it
 * ended (internal.h), so a call ended inside its own callback is still
 * readable when that callback returns. */
#include "internal.h"
#include "kernel/runtime/clock.h"
#include "ingot/log.h"

#include <strings.h>

/* Fields the client writes itself; the caller's copies are dropped. */
static bool is_managed_field(ig_str name)
{
	return (name.len == 4 && strncasecmp(name.ptr, "host", 4) == 0) ||
	       (name.len == 14 && strncasecmp(name.ptr, "content-length", 14) == 0) ||
	       (name.len == 17 && strncasecmp(name.ptr, "transfer-encoding", 17) == 0);
}

static bool method_is(ig_str m, const char *lit)
{
	return m.len == strlen(lit) && memcmp(m.ptr, lit, m.len) == 0;
}

/* RFC 9110 9.2.2. */
static bool method_idempotent(ig_str m)
{
	return method_is(m, "GET") || method_is(m, "HEAD") || method_is(m, "PUT") ||
	       method_is(m, "DELETE") || method_is(m, "OPTIONS") || method_is(m, "TRACE");
}

/* Methods whose requests carry a body: they always get a Content-Length,
 * even 0, as servers may otherwise wait for one (411). */
static bool method_expects_body(ig_str m)
{
	return method_is(m, "POST") || method_is(m, "PUT") || method_is(m, "PATCH");
}

static bool contains_close(ig_str v)
{
	for (size_t i = 0; i + 5 <= v.len; i++)
		if (strncasecmp(v.ptr + i, "close", 5) == 0)
			return true;
	return false;
}

static bool is_token(ig_str s)
{
	return s.len && ig_http_skip_token(s.ptr, s.ptr + s.len) == s.ptr + s.len;
}

static bool is_field_value(ig_str s)
{
	return ig_http_skip_field_value(s.ptr, s.ptr + s.len) == s.ptr + s.len;
}

/* origin-form (or "*"): visible ASCII only, so nothing can end the
 * request line early. */
static bool is_target(ig_str s)
{
	if (!s.len || (s.ptr[0] != '/' && !(s.len == 1 && s.ptr[0] == '*')))
		return false;
	for (size_t i = 0; i < s.len; i++)
		if ((unsigned char)s.ptr[i] <= 0x20 || (unsigned char)s.ptr[i] >= 0x7f)
			return false;
	return true;
}

/* The trace fields a call adds for its parent (client.h), after the
 * caller's: name, value, CRLF each; an empty value drops the field. */
#define TRACE_PIECES 9

static bool trace_piece(const struct client_call *c, size_t i, const char **p, size_t *n)
{
	static const char *const names[] = { "X-Request-Id: ", "traceparent: ", "tracestate: " };
	const ig_str *values[] = { &c->request_id, &c->traceparent, &c->tracestate };
	const ig_str *v = values[i / 3];
	if (!v->len)
		return true;
	switch (i % 3) {
	case 0: *p = names[i / 3]; *n = strlen(names[i / 3]); break;
	case 1: *p = v->ptr; *n = v->len; break;
	case 2: *p = "\r\n"; *n = 2; break;
	}
	return true;
}

/* The request as pieces, in order; i runs from 0 until it returns false.
 * The pieces of a dropped field are empty. */
static bool piece(const struct client_call *c, size_t i, const char **p, size_t *n)
{
	const ig_dispatch_opts *o = &c->opts;
	static const char sp[] = " ", version_host[] = " HTTP/1.1\r\nHost: ", crlf[] = "\r\n",
			  colon[] = ": ";
	*p = NULL;
	*n = 0;
	switch (i) {
	case 0: *p = o->method; *n = strlen(o->method); return true;
	case 1: *p = sp; *n = 1; return true;
	case 2: *p = o->path.ptr; *n = o->path.len; return true;
	case 3: *p = version_host; *n = sizeof version_host - 1; return true;
	case 4: *p = c->origin->url.authority.ptr; *n = c->origin->url.authority.len; return true;
	case 5: *p = crlf; *n = 2; return true;
	}
	i -= 6;
	if (i < 4 * o->header_count) {
		const ig_header *h = &o->headers[i / 4];
		if (is_managed_field(h->name))
			return true;
		switch (i % 4) {
		case 0: *p = h->name.ptr; *n = h->name.len; break;
		case 1: *p = colon; *n = 2; break;
		case 2: *p = h->value.ptr; *n = h->value.len; break;
		case 3: *p = crlf; *n = 2; break;
		}
		return true;
	}
	i -= 4 * o->header_count;
	if (i < TRACE_PIECES)
		return trace_piece(c, i, p, n);
	i -= TRACE_PIECES;
	switch (i) {
	case 0: *p = c->length_line; *n = c->length_len; return true;
	case 1: *p = crlf; *n = 2; return true;
	case 2: *p = o->body.ptr; *n = o->body.len; return true;
	}
	return false;
}

int ig_call_iov(const struct client_call *c, size_t skip, struct iovec *iov, int max, bool *more)
{
	int used = 0;
	const char *p;
	size_t n;
	*more = false;
	for (size_t i = 0; piece(c, i, &p, &n); i++) {
		if (n <= skip) {
			skip -= n;
			continue;
		}
		if (used == max) {
			*more = true;
			break;
		}
		iov[used++] = (struct iovec){ (char *)p + skip, n - skip };
		skip = 0;
	}
	return used;
}

static bool has_field(const ig_dispatch_opts *o, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < o->header_count; i++)
		if (o->headers[i].name.len == n && strncasecmp(o->headers[i].name.ptr, name, n) == 0)
			return true;
	return false;
}

/* The request id and trace context of the request the call is made for;
 * a new client span for each call (and each attempt: a retry is a call). */
static void take_parent(struct client_call *c, const ig_dispatch_opts *o)
{
	c->request_id = c->traceparent = c->tracestate = (ig_str){ NULL, 0 };
	if (!o->parent)
		return;
	if (!has_field(o, "x-request-id"))
		c->request_id = ig_request_id(o->parent);
	if (has_field(o, "traceparent"))
		return; /* the caller's own trace: its tracestate is its business */
	ig_traceparent_child(o->parent, c->traceparent_value);
	c->traceparent = (ig_str){ c->traceparent_value, IG_TRACEPARENT_LEN };
	if (!has_field(o, "tracestate"))
		c->tracestate = ig_tracestate(o->parent);
}

void ig_call_cap_to_deadline(struct client_call *c, uint64_t deadline_ms, uint64_t now_ms)
{
	if (!deadline_ms)
		return;
	uint64_t left = deadline_ms > now_ms ? deadline_ms - now_ms : 1;
	uint32_t *timeouts[] = { &c->connect_ms, &c->headers_ms, &c->body_ms };
	for (size_t i = 0; i < 3; i++)
		if (*timeouts[i] > left)
			*timeouts[i] = (uint32_t)left;
}

int ig_call_init(struct client_call *c, const ig_dispatch_opts *opts, const char **why)
{
	c->opts = *opts;
	ig_dispatch_opts *o = &c->opts;
	if (!o->method)
		o->method = "GET";
	ig_str method = { o->method, strlen(o->method) };
	if (!is_token(method)) {
		*why = "the method is not a token";
		return -1;
	}
	if (!is_target(o->path)) {
		*why = "the path is not an origin-form target (it must start with '/' and hold only visible ASCII)";
		return -1;
	}
	if (o->header_count && !o->headers) {
		*why = "header_count is set but headers is NULL";
		return -1;
	}
	if (o->body.len && !o->body.ptr) {
		*why = "body.len is set but body.ptr is NULL";
		return -1;
	}
	for (size_t i = 0; i < o->header_count; i++) {
		const ig_header *h = &o->headers[i];
		if (!is_token(h->name) || (h->value.len && !h->value.ptr) || !is_field_value(h->value)) {
			*why = "a request header has an invalid name or value";
			return -1;
		}
		if (h->name.len == 10 && strncasecmp(h->name.ptr, "connection", 10) == 0 &&
		    contains_close(h->value))
			c->conn_close = true;
	}
	take_parent(c, o);
	c->head_request = method_is(method, "HEAD");
	c->idempotent = o->idempotent >= 0 ? o->idempotent != 0 : method_idempotent(method);
	c->length_len = 0;
	if (o->body.len || method_expects_body(method)) {
		memcpy(c->length_line, "Content-Length: ", 16);
		size_t n = 16 + ig_fmt_u64(c->length_line + 16, o->body.len);
		memcpy(c->length_line + n, "\r\n", 2);
		c->length_len = (uint8_t)(n + 2);
	}
	c->request_bytes = 0;
	const char *p;
	size_t n;
	for (size_t i = 0; piece(c, i, &p, &n); i++)
		c->request_bytes += n;
	return 0;
}

/* ---- callbacks ---- */

void ig_call_connected(struct client_call *c)
{
	if (c->h->on_connect)
		c->h->on_connect(&c->base, c->arg);
}

/* After a callback that returns a verdict: whether the call goes on. */
static enum call_verdict settle(struct client_call *c, bool go)
{
	if (c->state != CALL_ON_CONN)
		return CALL_GONE;
	if (!go)
		c->paused = true;
	return go ? CALL_GO : CALL_PAUSE;
}

enum call_verdict ig_call_headers(struct client_call *c, int status, const ig_header *h, size_t n)
{
	c->status = (uint16_t)status;
	if (!c->h->on_headers)
		return CALL_GO;
	/* The parser's own array, valid during the callback (no parser runs
	   inside one: resumes wait for the batch's end). */
	return settle(c, c->h->on_headers(&c->base, status, h, n, c->arg));
}

enum call_verdict ig_call_data(struct client_call *c, const char *data, size_t len)
{
	if (!c->h->on_data || len == 0)
		return CALL_GO;
	return settle(c, c->h->on_data(&c->base, data, len, c->arg));
}

static void tell_end(struct client_call *c, enum ig_client_error error, const char *message)
{
	if (error == IG_CLIENT_OK) {
		if (c->h->on_complete)
			c->h->on_complete(&c->base, c->arg);
	} else if (c->h->on_error) {
		c->h->on_error(&c->base, error, message, c->arg);
	}
}

/* At debug level, one line per outbound call: where, what came back, how
 * long it took, and why it failed. At info level, one load and compare. */
__attribute__((cold, noinline)) static void log_call(const struct client_call *c, enum ig_client_error error,
						      const char *message)
{
	const struct client_origin *o = c->origin;
	struct ig_logline l;
	if (!ig_log_begin(&l, IG_LOG_DEBUG, "outbound call"))
		return;
	ig_log_cstr(&l, "method", c->opts.method);
	ig_log_str(&l, "origin", o->url.origin.ptr, o->url.origin.len);
	if (c->status)
		ig_log_int(&l, "status", c->status);
	ig_log_int(&l, "duration_us", (int64_t)(ig_monotonic_us() - c->start_us));
	if (error != IG_CLIENT_OK) {
		ig_log_cstr(&l, "error", ig_client_error_name(error));
		if (message)
			ig_log_cstr(&l, "reason", message);
	}
	ig_log_end(&l);
}

void ig_call_end(struct client_call *c, enum ig_client_error error, const char *message)
{
	if (ig_unlikely(ig_log_enabled(IG_LOG_DEBUG)))
		log_call(c, error, message);
	ig_client_metrics_call_end(c, error);
	ig_call_free(c);
	c->next = NULL;
	tell_end(c, error, message);
}

void ig_call_end_zombie(struct client_call *c, enum ig_client_error error, const char *message)
{
	c->state = CALL_ZOMBIE;
	if (ig_unlikely(ig_log_enabled(IG_LOG_DEBUG)))
		log_call(c, error, message);
	ig_client_metrics_call_end(c, error);
	tell_end(c, error, message);
}

void ig_call_free(struct client_call *c)
{
	c->state = CALL_DONE;
	ig_loop_defer(c->origin->core->loop, &c->release);
}

void ig_call_fail_now(const ig_dispatch_handler *h, void *arg, enum ig_client_error error, const char *message)
{
	struct client_call spare = { .base.ops = &ig_client_call_ops, .h = h, .arg = arg, .state = CALL_DONE };
	if (h->on_error)
		h->on_error(&spare.base, error, message, arg);
}

/* ---- ig_call_abort, ig_call_resume: the holder acts ---- */

static void call_abort(ig_call *call)
{
	struct client_call *c = (struct client_call *)call;
	/* A zombie or a done call has ended for the caller already. */
	if (c->state == CALL_QUEUED || c->state == CALL_ON_CONN)
		c->holder_ops->abort(c->holder, c);
}

static void call_resume(ig_call *call)
{
	struct client_call *c = (struct client_call *)call;
	if (c->state == CALL_ON_CONN && c->paused && c->holder_ops->resume)
		c->holder_ops->resume(c->holder, c);
}

const struct ig_call_ops ig_client_call_ops = {
	.abort = call_abort,
	.resume = call_resume,
};
