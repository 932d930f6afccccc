/* The request API (client.h) on any dispatcher: ig_fetch gathers status,
 * headers and body into the caller's arena and calls done once; ig_stream
 * hands the body on piece by piece, with the caller's back-pressure. The
 * call's state lives in that arena too, so a call allocates nothing else. */
#include "ingot/client.h"
#include "net/client/url.h"

#define FETCH_MAX_BODY_DEFAULT ((uint64_t)1 << 20)

struct fetch {
	ig_dispatch_opts opts;
	struct ig_url url; /* opts.origin and opts.path point into it */
	ig_arena *arena;
	ig_response res;
	ig_wbuf body;
	uint64_t max_body;
	ig_response_fn *done;
	void *arg;
	const ig_stream_handler *stream; /* NULL: gather the body */
	const char *too_large;           /* why we aborted the call, if we did */
};

/* For a failure before the state could be placed in the arena. */
static _Thread_local ig_response no_state_response;

static char *arena_copy(ig_arena *a, const char *s, size_t n)
{
	char *d = ig_arena_alloc(a, n + 1);
	if (d) {
		if (n)
			memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static void counts(struct fetch *f, const ig_call *call)
{
	f->res.retries = call->retries;
	f->res.redirects = call->redirects;
}

/* Headers and their bytes, in one allocation. */
static bool copy_headers(struct fetch *f, const ig_header *headers, size_t count)
{
	size_t bytes = count * sizeof(ig_header);
	for (size_t i = 0; i < count; i++)
		bytes += headers[i].name.len + headers[i].value.len;
	ig_header *out = ig_arena_alloc(f->arena, bytes ? bytes : 1);
	if (!out)
		return false;
	char *p = (char *)(out + count);
	for (size_t i = 0; i < count; i++) {
		const ig_header *h = &headers[i];
		if (h->name.len)
			memcpy(p, h->name.ptr, h->name.len);
		out[i].name = (ig_str){ p, h->name.len };
		p += h->name.len;
		if (h->value.len)
			memcpy(p, h->value.ptr, h->value.len);
		out[i].value = (ig_str){ p, h->value.len };
		p += h->value.len;
	}
	f->res.headers = out;
	f->res.header_count = count;
	return true;
}

/* Ends the call from inside a callback; on_error reports why. */
static bool give_up(struct fetch *f, ig_call *call, const char *why)
{
	f->too_large = why;
	ig_call_abort(call);
	return false;
}

static bool on_headers(ig_call *call, int status, const ig_header *headers, size_t count, void *arg)
{
	struct fetch *f = arg;
	f->res.status = status;
	counts(f, call);
	if (!copy_headers(f, headers, count))
		return give_up(f, call, "the response headers do not fit in the arena");
	if (f->stream && f->stream->on_headers)
		return f->stream->on_headers(call, status, headers, count, f->arg);
	return true;
}

static bool on_data(ig_call *call, const char *data, size_t len, void *arg)
{
	struct fetch *f = arg;
	if (f->stream)
		return f->stream->on_data ? f->stream->on_data(call, data, len, f->arg) : true;
	if (len > f->max_body - f->body.len)
		return give_up(f, call, "the response body is over max_body_bytes");
	ig_wbuf_put(&f->body, data, len);
	if (f->body.failed)
		return give_up(f, call, "the response body does not fit in the arena");
	return true;
}

static void on_complete(ig_call *call, void *arg)
{
	struct fetch *f = arg;
	counts(f, call);
	f->res.error = IG_CLIENT_OK;
	f->res.body = (ig_str){ f->body.ptr, f->body.len };
	f->done(&f->res, f->arg);
}

static void on_error(ig_call *call, enum ig_client_error error, const char *message, void *arg)
{
	struct fetch *f = arg;
	counts(f, call);
	if (f->too_large) {
		f->res.error = IG_CLIENT_TOO_LARGE;
		f->res.error_message = f->too_large;
	} else {
		f->res.error = error;
		f->res.error_message = message ? arena_copy(f->arena, message, strlen(message)) : NULL;
		if (!f->res.error_message)
			f->res.error_message = ig_client_error_name(error);
	}
	f->res.body = (ig_str){ NULL, 0 };
	f->done(&f->res, f->arg);
}

static const ig_dispatch_handler fetch_handler = {
	.on_headers = on_headers,
	.on_data = on_data,
	.on_complete = on_complete,
	.on_error = on_error,
};

static void fail_now(ig_response *res, enum ig_client_error error, const char *message, ig_response_fn *done,
		     void *arg)
{
	*res = (ig_response){ .error = error, .error_message = message };
	done(res, arg);
}

static ig_call *start(ig_dispatcher *d, ig_arena *arena, const ig_fetch_opts *opts,
		      const ig_stream_handler *stream, ig_response_fn *done, void *arg)
{
	struct fetch *f = ig_arena_alloc(arena, sizeof *f);
	char *url = f && opts->url ? arena_copy(arena, opts->url, strlen(opts->url)) : NULL;
	if (!f || (opts->url && !url)) {
		fail_now(&no_state_response, IG_CLIENT_TOO_LARGE, "no room in the arena for the call", done,
			 arg);
		return NULL;
	}
	*f = (struct fetch){ .arena = arena, .done = done, .arg = arg, .stream = stream };
	f->body.arena = arena;
	if (!url || ig_url_parse(url, strlen(url), &f->url) != 0) {
		fail_now(&f->res, IG_CLIENT_BAD_REQUEST, "not an absolute http:// or https:// URL", done,
			 arg);
		return NULL;
	}
	f->max_body = opts->max_body_bytes ? opts->max_body_bytes
		      : d->max_body_bytes  ? d->max_body_bytes
					   : FETCH_MAX_BODY_DEFAULT;
	f->opts = (ig_dispatch_opts){
		.method = opts->method,
		.origin = f->url.origin,
		.path = f->url.path,
		.headers = opts->headers,
		.header_count = opts->header_count,
		.body = opts->body,
		.connect_timeout_ms = opts->connect_timeout_ms,
		.headers_timeout_ms = opts->headers_timeout_ms,
		.body_timeout_ms = opts->body_timeout_ms,
		.idempotent = -1,
		.parent = opts->parent,
	};
	/* f may be gone when this returns (done may reset the arena). */
	return ig_dispatch(d, &f->opts, &fetch_handler, f);
}

ig_call *ig_fetch(ig_dispatcher *d, ig_arena *arena, const ig_fetch_opts *opts, ig_response_fn *done,
		  void *arg)
{
	return start(d, arena, opts, NULL, done, arg);
}

ig_call *ig_stream(ig_dispatcher *d, ig_arena *arena, const ig_fetch_opts *opts, const ig_stream_handler *h,
		   void *arg)
{
	return start(d, arena, opts, h, h->done, arg);
}
