/* The redirect interceptor (interceptors.h): one call state per outer call,
 * in explicit states. A followed 3xx has its body dropped, then the next
 * hop is dispatched from its on_complete with the Location resolved into
 * one of two URL buffers (the other still holds the current hop's). */
#include "ingot/client_interceptors.h"
#include "net/client/internal.h"
#include "net/client/url.h"

#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#define MAX_CALLS_PER_CORE 16384

struct redirect {
	struct wrap_owner w; /* first: what callers hold */
	ig_dispatcher *inner;
	uint32_t max_redirects;
	enum ig_redirect_cross_origin cross_origin;
};

/* Its states (internal.h): WRAP_TRY runs a hop, WRAP_DRAIN drops the body
 * of a 3xx that will be followed (or fail); it never waits. c->f.opts is
 * the current hop's, c->f.redirects counts the redirects followed here. */
struct redirect_call {
	struct wrap_fwd f; /* first: what the caller holds */
	struct redirect *r;
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
	ig_str origin = c->f.opts.origin, cur = c->f.opts.path;
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
	ig_str now = c->f.opts.origin;
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
	if (c->f.opts.header_count > IG_REDIRECT_MAX_HEADERS)
		return false;
	size_t n = 0;
	for (size_t i = 0; i < c->f.opts.header_count; i++) {
		ig_header h = c->f.opts.headers[i];
		if ((credentials && is_credential(h.name)) || (content && is_content_field(h.name)))
			continue;
		c->headers[n++] = h;
	}
	c->f.opts.headers = c->headers;
	c->f.opts.header_count = n;
	return true;
}

static void follow(struct redirect_call *c)
{
	const char *method = c->f.opts.method ? c->f.opts.method : "GET";
	bool to_get = (c->next_status == 303 && strcmp(method, "HEAD") != 0) ||
		      ((c->next_status == 301 || c->next_status == 302) && strcmp(method, "POST") == 0);
	bool strip = c->next_cross_origin && c->r->cross_origin == IG_REDIRECT_STRIP_CREDENTIALS;
	if ((strip || to_get) && !filter_headers(c, strip, to_get)) {
		ig_wrap_fwd_end_with_error(&c->f, IG_CLIENT_BAD_REQUEST,
					"too many request headers to filter for a redirect");
		return;
	}
	if (to_get) {
		c->f.opts.method = "GET";
		c->f.opts.body = (ig_str){ NULL, 0 };
		c->f.opts.idempotent = -1;
	}
	c->cur ^= 1;
	const char *url = c->url[c->cur];
	c->f.opts.origin = (ig_str){ url, c->next_origin_len };
	c->f.opts.path = (ig_str){ url + c->next_origin_len, c->next_len - c->next_origin_len };
	c->f.redirects++;
	ig_wrap_fwd_start(&c->f, c->r->inner);
}

/* ---- what redirect decides of a hop (struct wrap_fwd_kind) ---- */

/* Whether this head is followed: the decision and the next URL are kept
 * for on_complete. */
static bool decide(struct redirect_call *c, int status, const ig_header *headers, size_t count)
{
	const ig_str *loc = ig_header_find(headers, count, "location");
	if (!is_redirect(status) || !loc || !resolve(c, *loc))
		return false;
	c->next_cross_origin = cross_origin(c);
	if (c->next_cross_origin &&
	    (c->r->cross_origin == IG_REDIRECT_SAME_ORIGIN || c->f.opts.origin.len == 0))
		return false;
	c->next_status = status;
	c->next_error = IG_CLIENT_OK;
	if (c->f.redirects >= c->r->max_redirects) {
		c->next_error = IG_CLIENT_REDIRECT_LIMIT;
		c->next_error_message = "too many redirects";
	}
	return true;
}

static bool redirect_drop(struct wrap_fwd *f, int status, const ig_header *headers, size_t count)
{
	struct redirect_call *c = (struct redirect_call *)f;
	return !c->f.aborting && !c->r->w.destroying && decide(c, status, headers, count);
}

/* The 3xx is over (its body read, or lost: the head was enough). */
static void redirect_dropped(struct wrap_fwd *f)
{
	struct redirect_call *c = (struct redirect_call *)f;
	if (c->f.aborting || c->r->w.destroying)
		ig_wrap_fwd_end_with_error(&c->f, IG_CLIENT_ABORTED, "aborted during a redirect");
	else if (c->next_error)
		ig_wrap_fwd_end_with_error(&c->f, c->next_error, c->next_error_message);
	else
		follow(c);
}

static bool redirect_failed(struct wrap_fwd *f, enum ig_client_error error, const char *message)
{
	(void)error;
	(void)message;
	if (f->state != WRAP_DRAIN)
		return false;
	redirect_dropped(f);
	return true;
}

static const struct wrap_fwd_kind redirect_kind = {
	.destroyed_message = "the redirect dispatcher was destroyed",
	.busy_message = "too many calls in the redirect interceptor",
	.drop = redirect_drop,
	.dropped = redirect_dropped,
	.failed = redirect_failed,
};

/* ---- the dispatcher ---- */

static ig_call *redirect_dispatch(ig_dispatcher *d, const ig_dispatch_opts *opts,
				  const ig_dispatch_handler *h, void *arg)
{
	struct redirect *r = (struct redirect *)d;
	struct redirect_call *c = ig_wrap_fwd_take(&r->w, &call_slots, &redirect_kind, h, arg);
	if (!c)
		return NULL;
	/* Not a compound literal: the URL buffers need no zeroing. */
	memset(c, 0, offsetof(struct redirect_call, url));
	c->r = r;
	return ig_wrap_fwd_begin(&c->f, &r->w, &call_slots, &redirect_kind, r->inner, opts, h, arg);
}

static void redirect_destroy(ig_dispatcher *d)
{
	struct redirect *r = (struct redirect *)d;
	ig_wrap_destroy_begin(&r->w);
	ig_wrap_fwd_destroy_end(&r->w, &r->inner);
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
	ig_wrap_fwd_owner_init(&r->w, &redirect_ops, inner);
	r->inner = inner;
	r->max_redirects = o->max_redirects ? o->max_redirects : 5;
	r->cross_origin = o->cross_origin;
	return &r->w.d;
}
