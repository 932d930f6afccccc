/* The redirect interceptor (interceptors.h): one call state per outer call,
 * in explicit states. A followed 3xx has its body dropped, then the next
 * hop is dispatched from its on_complete with the Location resolved into
 * one of two URL buffers (the other still holds the current hop's). */
#include "net/client/interceptors.h"
#include "net/client/internal.h"
#include "net/client/url.h"

#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#define MAX_CALLS_PER_CORE 16384

enum redirect_state {
	REDIRECT_HOP,   /* an inner call runs; nothing has reached the caller */
	REDIRECT_DRAIN, /* its 3xx will be followed (or fail): dropping its body */
	REDIRECT_PASS,  /* the caller has the head: the rest is forwarded */
	REDIRECT_ENDED, /* the caller has had on_complete or on_error */
};

struct redirect {
	struct wrap_owner w; /* first: what callers hold */
	ig_dispatcher *inner;
	uint32_t max_redirects;
	enum ig_redirect_cross_origin cross_origin;
};

struct redirect_call {
	struct wrap_call w; /* first: what the caller holds */
	struct redirect *r;
	ig_dispatch_opts opts; /* the current hop's */
	const ig_dispatch_handler *h;
	void *arg;
	ig_call *inner; /* valid while inner_live */
	bool inner_live;
	bool connected;
	bool aborting;
	enum redirect_state state;
	uint64_t drained; /* 3xx body bytes dropped in REDIRECT_DRAIN */
	uint32_t redirects;
	uint32_t done_retries, done_redirects; /* reported by ended inner calls */
	/* The next hop, decided from the 3xx head: */
	int next_status;
	bool next_cross_origin;
	enum ig_client_error next_error; /* instead of a next hop */
	const char *next_error_message;
	size_t next_origin_len, next_len;
	unsigned cur; /* url[cur] holds the current hop's origin and path */
	char url[2][IG_REDIRECT_MAX_URL];
	ig_header headers[IG_REDIRECT_MAX_HEADERS]; /* once filtered */
};

static _Thread_local struct wrap_slots call_slots = WRAP_SLOTS(struct redirect_call, 16, MAX_CALLS_PER_CORE);

static const ig_dispatch_handler redirect_handler;
static const struct ig_call_ops redirect_call_ops;

/* ---- lifetime (internal.h) ---- */

static void redirect_free(struct wrap_owner *o)
{
	free(o);
}

static void hold(struct redirect_call *c)
{
	wrap_hold(&c->w);
}

static void let_go(struct redirect_call *c)
{
	wrap_let_go(&c->w, c->state == REDIRECT_ENDED);
}

static void sync_counts(struct redirect_call *c, const ig_call *inner)
{
	c->w.call.redirects = c->redirects + c->done_redirects + (inner ? inner->redirects : 0);
	c->w.call.retries = c->done_retries + (inner ? inner->retries : 0);
}

static void inner_ended(struct redirect_call *c, const ig_call *inner)
{
	c->inner_live = false;
	c->done_retries += inner->retries;
	c->done_redirects += inner->redirects;
}

static void end_with_error(struct redirect_call *c, enum ig_client_error error, const char *message)
{
	c->state = REDIRECT_ENDED;
	sync_counts(c, NULL);
	if (c->h->on_error)
		c->h->on_error(&c->w.call, c->arg, error, message);
}

/* ---- resolving a Location ---- */

static bool is_redirect(int status)
{
	return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

struct text {
	char *p;
	size_t len, cap;
	bool overflow;
};

static void add(struct text *t, const char *s, size_t n)
{
	if (n == 0)
		return; /* s may be NULL: an empty origin */
	if (t->overflow || t->cap - t->len < n) {
		t->overflow = true;
		return;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
}

/* RFC 3986 5.2.4 over the path p[0..*len) (no query), in place. */
static void remove_dot_segments(char *p, size_t *len)
{
	size_t in = 0, out = 0, n = *len;
	while (in < n) {
		/* the segment starting at in: "/seg" up to the next '/' */
		size_t end = in + 1;
		while (end < n && p[end] != '/')
			end++;
		size_t seg = end - in - 1;
		const char *s = p + in + 1;
		if (seg == 1 && s[0] == '.') {
			if (end == n)
				p[out++] = '/'; /* "/a/." -> "/a/" */
		} else if (seg == 2 && s[0] == '.' && s[1] == '.') {
			while (out > 0 && p[--out] != '/')
				;
			if (end == n)
				p[out++] = '/';
		} else {
			memmove(p + out, p + in, end - in);
			out += end - in;
		}
		in = end;
	}
	if (out == 0)
		p[out++] = '/';
	*len = out;
}

/* The current hop's path without its query; "/" rather than nothing. */
static ig_str path_only(ig_str path)
{
	const char *q = path.len ? memchr(path.ptr, '?', path.len) : NULL;
	size_t n = q ? (size_t)(q - path.ptr) : path.len;
	return n ? (ig_str){ path.ptr, n } : IG_STR("/");
}

/* Resolves loc against the current hop into url[cur ^ 1]. False if the
 * Location cannot be followed (not http(s), malformed, too long, or
 * absolute while the call has no origin). */
static bool resolve(struct redirect_call *c, ig_str loc)
{
	while (loc.len && (loc.ptr[0] == ' ' || loc.ptr[0] == '\t'))
		loc.ptr++, loc.len--;
	while (loc.len && (loc.ptr[loc.len - 1] == ' ' || loc.ptr[loc.len - 1] == '\t'))
		loc.len--;
	const char *hash = memchr(loc.ptr, '#', loc.len);
	if (hash)
		loc.len = (size_t)(hash - loc.ptr);
	if (loc.len == 0 || loc.len >= IG_REDIRECT_MAX_URL)
		return false;
	for (size_t i = 0; i < loc.len; i++)
		if (loc.ptr[i] <= 0x20 || loc.ptr[i] >= 0x7f)
			return false; /* it would break the request line */

	struct text t = { c->url[c->cur ^ 1], 0, IG_REDIRECT_MAX_URL, false };
	ig_str origin = c->opts.origin, cur = c->opts.path;
	size_t scheme_end = 0;
	while (scheme_end < loc.len && !strchr("/?:", loc.ptr[scheme_end]))
		scheme_end++;
	bool absolute = scheme_end < loc.len && loc.ptr[scheme_end] == ':';
	bool scheme_relative = loc.len >= 2 && loc.ptr[0] == '/' && loc.ptr[1] == '/';
	if (absolute || scheme_relative) {
		char joined[IG_REDIRECT_MAX_URL + 8];
		struct text j = { joined, 0, sizeof joined, false };
		if (scheme_relative) {
			if (origin.len == 0)
				return false;
			const char *colon = memchr(origin.ptr, ':', origin.len);
			add(&j, origin.ptr, colon ? (size_t)(colon - origin.ptr) + 1 : 0);
		}
		add(&j, loc.ptr, loc.len);
		struct ig_url u;
		if (j.overflow || origin.len == 0 || ig_url_parse(joined, j.len, &u) != 0)
			return false;
		add(&t, u.origin.ptr, u.origin.len);
		c->next_origin_len = t.len;
		add(&t, u.path.ptr, u.path.len);
	} else {
		add(&t, origin.ptr, origin.len);
		c->next_origin_len = t.len;
		if (loc.ptr[0] == '?') {
			ig_str p = path_only(cur);
			add(&t, p.ptr, p.len);
		} else if (loc.ptr[0] != '/') {
			ig_str p = path_only(cur);
			const char *slash = p.len ? memrchr(p.ptr, '/', p.len) : NULL;
			if (slash)
				add(&t, p.ptr, (size_t)(slash - p.ptr) + 1);
			else
				add(&t, "/", 1);
		}
		add(&t, loc.ptr, loc.len);
	}
	if (t.overflow)
		return false;
	char *path = t.p + c->next_origin_len;
	size_t path_len = t.len - c->next_origin_len;
	const char *q = memchr(path, '?', path_len);
	size_t before_query = q ? (size_t)(q - path) : path_len, cleaned = before_query;
	remove_dot_segments(path, &cleaned);
	memmove(path + cleaned, path + before_query, path_len - before_query);
	c->next_len = c->next_origin_len + cleaned + (path_len - before_query);
	return true;
}

static bool cross_origin(const struct redirect_call *c)
{
	ig_str now = c->opts.origin;
	ig_str next = { c->url[c->cur ^ 1], c->next_origin_len };
	if (now.len == 0)
		return next.len != 0;
	struct ig_url a;
	if (ig_url_parse_origin(now.ptr, now.len, &a) != 0)
		return true; /* unknown: treat as another origin, the safe side */
	return !(a.origin.len == next.len && memcmp(a.origin.ptr, next.ptr, next.len) == 0);
}

/* ---- the next hop ---- */

static bool is_credential(ig_str name)
{
	return (name.len == 13 && strncasecmp(name.ptr, "authorization", 13) == 0) ||
	       (name.len == 19 && strncasecmp(name.ptr, "proxy-authorization", 19) == 0) ||
	       (name.len == 6 && strncasecmp(name.ptr, "cookie", 6) == 0);
}

static bool is_content_field(ig_str name)
{
	return name.len > 8 && strncasecmp(name.ptr, "content-", 8) == 0;
}

/* Drops the headers that strip says into c->headers (in place once they
 * are there already). False if there are too many to hold. */
static bool filter_headers(struct redirect_call *c, bool credentials, bool content)
{
	if (c->opts.header_count > IG_REDIRECT_MAX_HEADERS)
		return false;
	size_t n = 0;
	for (size_t i = 0; i < c->opts.header_count; i++) {
		ig_header h = c->opts.headers[i];
		if ((credentials && is_credential(h.name)) || (content && is_content_field(h.name)))
			continue;
		c->headers[n++] = h;
	}
	c->opts.headers = c->headers;
	c->opts.header_count = n;
	return true;
}

static void start_hop(struct redirect_call *c)
{
	c->state = REDIRECT_HOP;
	c->inner_live = true;
	c->inner = NULL; /* not the last hop's: known once dispatch returns */
	c->drained = 0;
	hold(c);
	ig_call *inner = ig_dispatch(c->r->inner, &c->opts, &redirect_handler, c);
	if (c->inner_live) {
		c->inner = inner;
		if (c->aborting) /* asked while the dispatch ran */
			ig_call_abort(inner);
	}
	let_go(c);
}

static void follow(struct redirect_call *c)
{
	const char *method = c->opts.method ? c->opts.method : "GET";
	bool to_get = (c->next_status == 303 && strcmp(method, "HEAD") != 0) ||
		      ((c->next_status == 301 || c->next_status == 302) && strcmp(method, "POST") == 0);
	bool strip = c->next_cross_origin && c->r->cross_origin == IG_REDIRECT_STRIP_CREDENTIALS;
	if ((strip || to_get) && !filter_headers(c, strip, to_get)) {
		end_with_error(c, IG_CLIENT_BAD_REQUEST, "too many request headers to filter for a redirect");
		return;
	}
	if (to_get) {
		c->opts.method = "GET";
		c->opts.body = (ig_str){ NULL, 0 };
		c->opts.idempotent = -1;
	}
	c->cur ^= 1;
	const char *url = c->url[c->cur];
	c->opts.origin = (ig_str){ url, c->next_origin_len };
	c->opts.path = (ig_str){ url + c->next_origin_len, c->next_len - c->next_origin_len };
	c->redirects++;
	start_hop(c);
}

/* ---- the inner call's callbacks ---- */

static void inner_on_connect(ig_call *inner, void *arg)
{
	struct redirect_call *c = arg;
	c->inner = inner;
	if (c->aborting) {
		ig_call_abort(inner); /* asked before the inner call was known */
		return;
	}
	if (c->state != REDIRECT_HOP || c->connected || !c->h->on_connect)
		return;
	c->connected = true;
	hold(c);
	sync_counts(c, inner);
	c->h->on_connect(&c->w.call, c->arg);
	let_go(c);
}

/* Whether this head is followed: the decision and the next URL are kept
 * for on_complete. */
static bool decide(struct redirect_call *c, int status, const ig_header *headers, size_t count)
{
	const ig_str *loc = ig_header_find(headers, count, "location");
	if (!is_redirect(status) || !loc || !resolve(c, *loc))
		return false;
	c->next_cross_origin = cross_origin(c);
	if (c->next_cross_origin &&
	    (c->r->cross_origin == IG_REDIRECT_SAME_ORIGIN || c->opts.origin.len == 0))
		return false;
	c->next_status = status;
	c->next_error = IG_CLIENT_OK;
	if (c->redirects >= c->r->max_redirects) {
		c->next_error = IG_CLIENT_REDIRECT_LIMIT;
		c->next_error_message = "too many redirects";
	}
	return true;
}

static bool inner_on_headers(ig_call *inner, void *arg, int status, const ig_header *headers, size_t count)
{
	struct redirect_call *c = arg;
	c->inner = inner;
	if (c->aborting) {
		ig_call_abort(inner); /* asked before the inner call was known */
		return false;
	}
	if (c->state != REDIRECT_HOP)
		return true;
	if (!c->aborting && !c->r->w.destroying && decide(c, status, headers, count)) {
		c->state = REDIRECT_DRAIN;
		return true; /* read the 3xx body to its end, and drop it */
	}
	c->state = REDIRECT_PASS;
	if (!c->h->on_headers)
		return true;
	hold(c);
	sync_counts(c, inner);
	bool more = c->h->on_headers(&c->w.call, c->arg, status, headers, count);
	bool ended = c->state == REDIRECT_ENDED;
	let_go(c);
	return more && !ended;
}

static bool inner_on_data(ig_call *inner, void *arg, const char *data, size_t len)
{
	struct redirect_call *c = arg;
	if (c->state == REDIRECT_DRAIN) {
		c->drained += len;
		if (c->drained <= WRAP_DRAIN_MAX)
			return true;
		/* Enough dropped: its on_error (REDIRECT_DRAIN) follows the hop. */
		ig_call_abort(inner);
		return false;
	}
	if (c->state != REDIRECT_PASS || !c->h->on_data)
		return true;
	hold(c);
	sync_counts(c, inner);
	bool more = c->h->on_data(&c->w.call, c->arg, data, len);
	bool ended = c->state == REDIRECT_ENDED;
	let_go(c);
	return more && !ended;
}

/* The 3xx is over (its body read, or lost: the head was enough). */
static void after_drain(struct redirect_call *c)
{
	if (c->aborting || c->r->w.destroying)
		end_with_error(c, IG_CLIENT_ABORTED, "aborted during a redirect");
	else if (c->next_error)
		end_with_error(c, c->next_error, c->next_error_message);
	else
		follow(c);
}

static void inner_on_complete(ig_call *inner, void *arg)
{
	struct redirect_call *c = arg;
	inner_ended(c, inner);
	hold(c);
	if (c->state == REDIRECT_DRAIN) {
		after_drain(c);
	} else if (c->state == REDIRECT_PASS) {
		c->state = REDIRECT_ENDED;
		sync_counts(c, NULL);
		if (c->h->on_complete)
			c->h->on_complete(&c->w.call, c->arg);
	}
	let_go(c);
}

static void inner_on_error(ig_call *inner, void *arg, enum ig_client_error error, const char *message)
{
	struct redirect_call *c = arg;
	inner_ended(c, inner);
	hold(c);
	if (c->aborting)
		end_with_error(c, IG_CLIENT_ABORTED, message);
	else if (c->state == REDIRECT_DRAIN)
		after_drain(c);
	else if (c->state != REDIRECT_ENDED)
		end_with_error(c, error, message);
	let_go(c);
}

static const ig_dispatch_handler redirect_handler = {
	.on_connect = inner_on_connect,
	.on_headers = inner_on_headers,
	.on_data = inner_on_data,
	.on_complete = inner_on_complete,
	.on_error = inner_on_error,
};

/* ---- the caller's side ---- */

static void redirect_call_abort(ig_call *call)
{
	struct redirect_call *c = (struct redirect_call *)call;
	if (c->state == REDIRECT_ENDED)
		return;
	hold(c);
	c->aborting = true;
	if (!c->inner_live)
		end_with_error(c, IG_CLIENT_ABORTED, "aborted");
	else if (c->inner)
		ig_call_abort(c->inner); /* its on_error ends ours */
	/* else it is being dispatched: start_hop or its first callback
	   aborts it once it is known. */
	let_go(c);
}

static void redirect_call_resume(ig_call *call)
{
	struct redirect_call *c = (struct redirect_call *)call;
	if (c->state == REDIRECT_PASS && c->inner_live)
		ig_call_resume(c->inner);
}

static const struct ig_call_ops redirect_call_ops = {
	.abort = redirect_call_abort,
	.resume = redirect_call_resume,
};

static ig_call *redirect_dispatch(ig_dispatcher *d, const ig_dispatch_opts *opts,
				  const ig_dispatch_handler *h, void *arg)
{
	struct redirect *r = (struct redirect *)d;
	if (r->w.destroying) {
		if (h->on_error)
			h->on_error(&ig_ended_call, arg, IG_CLIENT_ABORTED, "the redirect dispatcher was destroyed");
		return NULL;
	}
	struct redirect_call *c = wrap_call_take(&call_slots);
	if (!c) {
		if (h->on_error)
			h->on_error(&ig_ended_call, arg, IG_CLIENT_BUSY,
				    "too many calls in the redirect interceptor");
		return NULL;
	}
	/* Not a compound literal: the URL buffers need no zeroing. */
	memset(c, 0, offsetof(struct redirect_call, url));
	c->w.call.ops = &redirect_call_ops;
	c->r = r;
	c->opts = *opts;
	c->h = h;
	c->arg = arg;
	wrap_call_link(&r->w, &call_slots, &c->w);
	hold(c);
	start_hop(c);
	bool ended = c->state == REDIRECT_ENDED;
	let_go(c);
	return ended ? NULL : &c->w.call;
}

static void redirect_destroy(ig_dispatcher *d)
{
	struct redirect *r = (struct redirect *)d;
	wrap_destroy_begin(&r->w);
	ig_dispatcher *inner = r->inner;
	r->inner = NULL;
	inner->ops->destroy(inner);
	wrap_destroy_end(&r->w);
}

static const struct ig_dispatcher_ops redirect_ops = {
	.dispatch = redirect_dispatch,
	.destroy = redirect_destroy,
};

ig_dispatcher *ig_redirect_new(ig_dispatcher *inner, const struct ig_redirect_opts *opts)
{
	static const struct ig_redirect_opts no_opts;
	const struct ig_redirect_opts *o = opts ? opts : &no_opts;
	if (!inner || (unsigned)o->cross_origin > IG_REDIRECT_SAME_ORIGIN) {
		errno = EINVAL;
		return NULL;
	}
	struct redirect *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->w.d = (ig_dispatcher){ .ops = &redirect_ops,
				  .loop = inner->loop,
				  .max_body_bytes = inner->max_body_bytes };
	r->w.free = redirect_free;
	r->inner = inner;
	r->max_redirects = o->max_redirects ? o->max_redirects : 5;
	r->cross_origin = o->cross_origin;
	return &r->w.d;
}
