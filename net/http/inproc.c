/* In-process requests (inproc.h): the request written as HTTP/1.1 bytes
 * into the caller's buffer, fed to the connection engine over a memory
 * transport, the engine's output captured after it and read back with the
 * response parser once the engine closes the memory connection; or, with
 * a sink, read as it comes and passed on. */
#include "health.h"
#include "inproc.h"
#include "response_head.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- writing the request ---- */

struct req_writer {
	char *p, *end;
	bool overflow;
};

static void put(struct req_writer *w, const char *s, size_t n)
{
	if (!n) /* an empty slice may have no pointer */
		return;
	if ((size_t)(w->end - w->p) < n) {
		w->overflow = true;
		return;
	}
	memcpy(w->p, s, n);
	w->p += n;
}

static void put_str(struct req_writer *w, ig_str s)
{
	put(w, s.ptr, s.len);
}

static bool is_token(ig_str s)
{
	return s.len && ig_http_skip_token(s.ptr, s.ptr + s.len) == s.ptr + s.len;
}

static bool is_value(ig_str s)
{
	return ig_http_skip_field_value(s.ptr, s.ptr + s.len) == s.ptr + s.len;
}

/* Fields the memory connection frames itself. */
static bool dropped_field(ig_str name)
{
	return ig_http_eq_nocase(name.ptr, name.len, "content-length") ||
	       ig_http_eq_nocase(name.ptr, name.len, "transfer-encoding") ||
	       ig_http_eq_nocase(name.ptr, name.len, "connection") || ig_http_eq_nocase(name.ptr, name.len, "expect");
}

static enum http_inproc_result write_request(struct req_writer *w, const struct http_inproc_request *r)
{
	if (!is_token(r->method) || !r->target.len ||
	    ig_http_skip_target(r->target.ptr, r->target.ptr + r->target.len) != r->target.ptr + r->target.len)
		return HTTP_INPROC_BAD_FIELD;
	put_str(w, r->method);
	put(w, " ", 1);
	put_str(w, r->target);
	put(w, " HTTP/1.1\r\n", 11);
	bool host = false;
	for (size_t i = 0; i < r->header_count; i++) {
		const ig_header *h = &r->headers[i];
		if (!is_token(h->name) || !is_value(h->value))
			return HTTP_INPROC_BAD_FIELD;
		if (dropped_field(h->name))
			continue;
		host = host || ig_http_eq_nocase(h->name.ptr, h->name.len, "host");
		put_str(w, h->name);
		put(w, ": ", 2);
		put_str(w, h->value);
		put(w, "\r\n", 2);
	}
	if (!host)
		put(w, "Host: localhost\r\n", 17);
	char len[24];
	size_t n = ig_fmt_u64(len, r->body.len);
	put(w, "Content-Length: ", 16);
	put(w, len, n);
	put(w, "\r\nConnection: close\r\n\r\n", 23);
	put_str(w, r->body);
	return w->overflow ? HTTP_INPROC_NO_ROOM : HTTP_INPROC_OK;
}

/* ---- the memory transport ---- */

static struct http_inproc *of_transport(struct ig_transport *t)
{
	return (struct http_inproc *)t; /* t is the first member */
}

/* Hands the engine the request's bytes as far as it lends room; a pause
 * ends when it calls resume_read, which comes here again. */
static void feed(struct http_inproc *p)
{
	if (p->feeding) {
		p->refeed = true;
		return;
	}
	p->feeding = true;
	do {
		p->refeed = false;
		while (p->open && p->req_sent < p->req_len) {
			size_t cap = 0;
			char *dst = p->t.engine_ops->lend(p->t.engine, &cap);
			if (!dst || !cap)
				break;
			size_t n = p->req_len - p->req_sent < cap ? p->req_len - p->req_sent : cap;
			memcpy(dst, p->buf + p->req_sent, n);
			p->req_sent += n;
			p->t.engine_ops->received(p->t.engine, n); /* may close */
		}
	} while (p->refeed && p->open);
	p->feeding = false;
}

/* ---- a response passed on as it comes (a sink) ---- */

static void report(struct ig_deferred *d);

/* Reads the head once it is whole, then frames the body bytes that came:
 * decoded ones wait at body_at for the sink. */
static void sink_pump(struct http_inproc *p)
{
	if (p->sink_bad)
		return;
	if (!p->head_passed) {
		for (;;) {
			const char *b = p->buf + p->req_len + p->head_at;
			size_t len = p->resp_len - p->head_at;
			const struct http_limits limits = { .max_request_line = len, .max_header_bytes = len + 1,
							    .max_headers = HTTP_INPROC_MAX_HEADERS };
			struct http_response_head h = { .headers = p->headers,
							.header_capacity = HTTP_INPROC_MAX_HEADERS };
			struct http_error error;
			int n = ig_http_parse_response(b, len, p->head_request, &limits, &h, &error);
			if (n == HTTP_INCOMPLETE)
				return;
			if (n < 0) {
				p->sink_bad = true;
				return;
			}
			p->head_at += (size_t)n;
			if (http_response_is_interim(&h))
				continue;
			p->head_passed = true;
			p->body_at = p->req_len + p->head_at;
			p->framing = h.framing;
			p->left = h.content_length;
			p->chunked = (struct http_chunked_decoder){ .max_trailer_bytes = 4096 };
			const struct http_inproc_response res = { .status = h.status, .headers = p->headers,
								  .header_count = h.num_headers };
			p->sink->head(p->arg, &res);
			break;
		}
	}
	/* What came after the body bytes already framed. */
	char *raw = p->buf + p->body_at + p->dec_len;
	size_t raw_len = p->resp_len - p->head_at - p->dec_len;
	switch (p->framing) {
	case BODY_NONE:
		p->body_ended = true;
		break;
	case BODY_LENGTH: {
		size_t k = raw_len < p->left ? raw_len : (size_t)p->left;
		p->dec_len += k;
		p->left -= k;
		p->body_ended = !p->left;
		break;
	}
	case BODY_CHUNKED: {
		size_t n = raw_len;
		ssize_t r = ig_http_decode_chunked(&p->chunked, raw, &n);
		p->dec_len += n;
		if (r == HTTP_ERROR)
			p->sink_bad = true;
		p->body_ended = r >= 0;
		break;
	}
	default: /* until the close */
		p->dec_len += raw_len;
		break;
	}
	/* The framing's bytes, and any after the body's end, are dropped. */
	p->resp_len = p->head_at + p->dec_len;
	if (p->dec_len)
		p->sink->more(p->arg);
}

static void sink_wake(struct ig_deferred *d)
{
	struct http_inproc *p = (struct http_inproc *)((char *)d - offsetof(struct http_inproc, wake));
	if (p->open && p->blocked) {
		p->blocked = false;
		p->t.engine_ops->writable(p->t.engine);
	}
}

ig_str ig_http_inproc_body(const struct http_inproc *p, bool *end, bool *whole)
{
	*end = !p->open && p->dec_len == 0;
	*whole = *end && !p->sink_bad && (p->body_ended || p->framing == BODY_UNTIL_CLOSE);
	return (ig_str){ p->dec_len ? p->buf + p->body_at : NULL, p->dec_len };
}

void ig_http_inproc_taken(struct http_inproc *p, size_t n)
{
	memmove(p->buf + p->body_at, p->buf + p->body_at + n, p->dec_len - n);
	p->dec_len -= n;
	p->resp_len -= n;
	if (p->blocked && p->dec_len < HTTP_INPROC_SINK_HIGH / 2) {
		p->wake.fn = sink_wake;
		ig_loop_defer(p->t.loop, &p->wake);
	}
}

void ig_http_inproc_cut(struct http_inproc *p)
{
	if (!p->open)
		return;
	p->open = false;
	p->dec_len = 0;
	p->sink_bad = true;
	p->t.engine_ops->closed(p->t.engine); /* no call on the transport after this: no close either */
	p->report.fn = report;
	ig_loop_defer(p->t.loop, &p->report);
}

static ssize_t mem_writev(struct ig_transport *t, const struct iovec *iov, int iovcnt)
{
	struct http_inproc *p = of_transport(t);
	if (p->sink && p->dec_len >= HTTP_INPROC_SINK_HIGH) {
		p->blocked = true;
		return IG_WOULD_BLOCK;
	}
	size_t total = 0;
	for (int i = 0; i < iovcnt; i++) {
		if (p->cap - p->req_len - p->resp_len < iov[i].iov_len) {
			p->overflow = true;
			return -1; /* the engine closes */
		}
		memcpy(p->buf + p->req_len + p->resp_len, iov[i].iov_base, iov[i].iov_len);
		p->resp_len += iov[i].iov_len;
		total += iov[i].iov_len;
		if (p->sink)
			sink_pump(p);
	}
	return (ssize_t)total;
}

static void mem_resume_read(struct ig_transport *t)
{
	feed(of_transport(t));
}

/* The response, read from what the engine wrote (interim heads skipped). */
static enum http_inproc_result read_response(struct http_inproc *p, bool head, struct http_inproc_response *res)
{
	if (p->overflow)
		return HTTP_INPROC_NO_ROOM;
	const char *b = p->buf + p->req_len;
	size_t len = p->resp_len;
	const struct http_limits limits = { .max_request_line = len, .max_header_bytes = len + 1,
					    .max_headers = HTTP_INPROC_MAX_HEADERS };
	for (;;) {
		struct http_response_head h = { .headers = p->headers, .header_capacity = HTTP_INPROC_MAX_HEADERS };
		struct http_error error;
		int n = ig_http_parse_response(b, len, head, &limits, &h, &error);
		if (n < 0)
			return HTTP_INPROC_NO_RESPONSE;
		b += n;
		len -= (size_t)n;
		if (http_response_is_interim(&h))
			continue;
		uint64_t body = h.framing == BODY_LENGTH ? h.content_length : 0;
		if ((h.framing != BODY_LENGTH && h.framing != BODY_NONE) || body > len)
			return HTTP_INPROC_NO_RESPONSE;
		*res = (struct http_inproc_response){ .status = h.status, .headers = p->headers,
						      .header_count = h.num_headers,
						      .body = { b, (size_t)body } };
		return HTTP_INPROC_OK;
	}
}

static void report(struct ig_deferred *d)
{
	struct http_inproc *p = (struct http_inproc *)((char *)d - offsetof(struct http_inproc, report));
	struct http_inproc_response res = { 0 };
	if (p->sink) {
		p->done(p->arg, p->head_passed ? HTTP_INPROC_OK : p->overflow ? HTTP_INPROC_NO_ROOM : HTTP_INPROC_NO_RESPONSE,
			NULL);
		return;
	}
	enum http_inproc_result r = read_response(p, p->head_request, &res);
	p->done(p->arg, r, r == HTTP_INPROC_OK ? &res : NULL);
}

/* The engine's close after its one response (or on an error): the
 * report waits for the end of the batch, as the engine is still inside
 * its own teardown here. */
static void mem_close(struct ig_transport *t, int graceful)
{
	(void)graceful;
	struct http_inproc *p = of_transport(t);
	p->open = false;
	p->report.fn = report;
	ig_loop_defer(t->loop, &p->report);
}

static size_t mem_peer(struct ig_transport *t, char *out, size_t cap)
{
	struct http_inproc *p = of_transport(t);
	size_t n = p->peer.len < cap - 1 ? p->peer.len : cap - 1;
	memcpy(out, p->peer.ptr, n);
	out[n] = 0;
	return n;
}

static const struct ig_transport_ops mem_ops = {
	.writev = mem_writev,
	.resume_read = mem_resume_read,
	.close = mem_close,
	.peer = mem_peer,
};

int ig_http_inproc_run(struct http_inproc *p, struct http_core *core, char *buf, size_t cap,
		    const struct http_inproc_request *req, http_inproc_done_fn *done, void *arg,
		    enum http_inproc_result *result)
{
	struct req_writer w = { buf, buf + cap, false };
	*result = write_request(&w, req);
	if (*result != HTTP_INPROC_OK)
		return -1;
	struct http_conn *c = ig_http_conn_take(core);
	if (!c) {
		*result = HTTP_INPROC_NO_SLOT;
		return -1;
	}
	memset(p, 0, offsetof(struct http_inproc, headers)); /* the fields' slots are written before read */
	p->t = (struct ig_transport){ .ops = &mem_ops, .loop = &core->loop };
	p->core = core;
	p->buf = buf;
	p->cap = cap;
	p->req_len = (size_t)(w.p - buf);
	p->peer = req->peer;
	p->done = done;
	p->arg = arg;
	p->open = true;
	p->sink = req->sink;
	p->req_body_len = req->body.len;
	/* Exactly HEAD: methods are case-sensitive, and "head" is another
	   method whose 405 or 501 has a body. */
	p->head_request = req->method.len == 4 && !memcmp(req->method.ptr, "HEAD", 4);
	ig_http_conn_begin(core, c, &p->t, (uint32_t)core->cfg->idle_timeout_ms);
	c->request_deadline_ms = req->deadline_ms;
	c->in_process = true;
	c->in_process_streams = req->sink != NULL;
	feed(p);
	return 0;
}

ig_str ig_http_inproc_request_body(const struct http_inproc *p)
{
	return (ig_str){ p->buf + p->req_len - p->req_body_len, p->req_body_len };
}

/* ---- the core ---- */

static void inproc_on_drained(struct http_core *core)
{
	(void)core; /* nothing listens: nothing waits for the drain */
}

/* Runs once per process, at the start: cold. */
__attribute__((cold)) int ig_http_inproc_core_init(struct http_core *core, const struct http_config *cfg,
						const struct ig_app *app)
{
	core->cfg = cfg;
	core->app = app;
	core->listener = core->tls_listener = NULL;
	core->count = 0;
	core->drained = inproc_on_drained;
	static struct http_error_log error_log; /* one core a process */
	core->error_log = &error_log;
	if (ig_loop_init(&core->loop, 0) != 0)
		return -1;
	ig_http_core_init_pools(core);
	ig_rng_seed(&core->rng);
	core->health_paths = ig_http_health_free_paths(app);
	ig_http_meter_init(&core->meter, app->route_count);
	size_t bytes = (size_t)cfg->max_headers * sizeof(ig_header);
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	core->scratch_headers = m;
	return 0;
}

/* ---- a part's own requests ---- */

void ig_http_inproc_worker_init(struct http_inproc_worker *w, struct ig_loop *loop, size_t max_blocks)
{
	w->core = (struct http_core *)loop; /* the loop is its core's first member */
	ig_pool_init(&w->blocks, IG_HTTP_INPROC_BLOCK, 4, max_blocks);
}

/* At a core's start: cold. */
__attribute__((cold)) int ig_http_inproc_slot_init(struct http_inproc_slot *s, struct http_inproc_worker *w,
						  size_t cap, size_t arena_limit)
{
	ig_arena_init(&s->arena, &w->blocks, arena_limit);
	s->buf = malloc(cap);
	s->cap = s->buf ? cap : 0;
	return s->buf ? 0 : -1;
}

int ig_http_inproc_slot_run(struct http_inproc_slot *s, struct http_inproc_worker *w,
			    const struct http_inproc_request *req, http_inproc_done_fn *done, void *arg,
			    enum http_inproc_result *result)
{
	return ig_http_inproc_run(&s->run, w->core, s->buf, s->cap, req, done, arg, result);
}
