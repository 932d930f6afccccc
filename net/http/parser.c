/* HTTP/1.1 request-head parser (RFC 9112, 9110): the request line and the
 * forms of its target; the version, the field lines and the framing
 * judgement are the codec's (codec.c), shared with the client's response
 * parser. Routing and decoding of the path, query and field values belong
 * to the callers. */
#include "parser.h"

#include <string.h>

/* A request's direction: Host and Expect matter, one Content-Length field
 * only, the version judged once its line has ended. */
static const struct http_direction request_rules = {
	.request = true,
	.not_http = "malformed HTTP version",
	.te_in_http10 = "Transfer-Encoding in an HTTP/1.0 request",
	.line_too_long = "request line too long",
	.head_too_large = "request header too large",
};

int http_error_status(enum http_error_kind kind)
{
	switch (kind) {
	case HTTP_ERR_LINE_TOO_LONG: return 414;
	case HTTP_ERR_HEAD_TOO_LARGE:
	case HTTP_ERR_TOO_MANY_FIELDS: return 431;
	case HTTP_ERR_VERSION: return 505;
	case HTTP_ERR_NOT_IMPLEMENTED: return 501;
	default: return 400;
	}
}

static bool eq_exact(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* ---- request line ----------------------------------------------------- */

#define MAX_EMPTY_LINES 4

/* RFC 9112 2.2: a server SHOULD ignore at least one empty line before the
 * request line (clients once sent a CRLF after a POST body). */
static int skip_empty_lines(struct http_scan *s)
{
	for (int n = 0; s->p < s->end; n++) {
		char c = *s->p;
		if (c == '\n')
			return http_fail(s, HTTP_ERR_SYNTAX, "bare LF");
		if (c != '\r')
			return 0;
		if (n == MAX_EMPTY_LINES)
			return http_fail(s, HTTP_ERR_SYNTAX, "too many empty lines before the request line");
		int r = http_expect_lf(s, s->p);
		if (r != 0)
			return r;
	}
	return http_out_of_bytes(s);
}

static int parse_method(struct http_scan *s, struct http_request *req)
{
	const char *p = http_skip_token(s->p, s->end);
	if (p == s->end)
		return http_out_of_bytes(s);
	if (*p != ' ' || p == s->p)
		return http_fail(s, HTTP_ERR_SYNTAX, "invalid method");
	req->method = s->p;
	req->method_len = (size_t)(p - s->p);
	s->p = p + 1;
	return 0;
}

static int parse_target(struct http_scan *s, struct http_request *req)
{
	const char *p = http_skip_target(s->p, s->end);
	if (p == s->end)
		return http_out_of_bytes(s);
	if (*p != ' ')
		return http_fail(s, HTTP_ERR_SYNTAX, *p == '#' ? "fragment in request-target"
							      : "invalid character in request-target");
	if (p == s->p)
		return http_fail(s, HTTP_ERR_SYNTAX, "extra space before request-target");
	req->target = s->p;
	req->target_len = (size_t)(p - s->p);
	s->p = p + 1;
	return 0;
}

/* HTTP-version CRLF; a well-formed version other than 1.0 and 1.1 is 505. */
static int parse_version(struct http_scan *s, struct http_request *req)
{
	int major, minor;
	int r = http_scan_version(s, &request_rules, &major, &minor);
	if (r != 0)
		return r;
	if (s->p == s->end)
		return http_out_of_bytes(s);
	if (*s->p != '\r')
		return http_fail(s, HTTP_ERR_SYNTAX, *s->p == '\n' ? "bare LF" : "malformed HTTP version");
	r = http_expect_lf(s, s->p);
	if (r != 0)
		return r;
	if (major != 1 || minor > 1)
		return http_fail(s, HTTP_ERR_VERSION, "HTTP version not supported");
	req->minor_version = minor;
	return 0;
}

/* ---- request-target forms (RFC 9112 3.2) ------------------------------ */

/* Splits [t, t+n) at the first '?' into path and query. */
static void split_query(struct http_request *req, const char *t, size_t n)
{
	const char *q = memchr(t, '?', n);
	req->path = t;
	req->path_len = q ? (size_t)(q - t) : n;
	req->query = q ? q + 1 : NULL;
	req->query_len = q ? n - req->path_len - 1 : 0;
}

static size_t http_scheme_len(const char *t, size_t n)
{
	if (n >= 7 && http_eq_nocase(t, 7, "http://"))
		return 7;
	if (n >= 8 && http_eq_nocase(t, 8, "https://"))
		return 8;
	return 0;
}

/* RFC 9112 3.2.2: the target's authority replaces Host for the request's
 * identity, so req->host points at it. */
static int parse_absolute_form(struct http_scan *s, struct http_request *req, size_t scheme_len)
{
	const char *a = req->target + scheme_len, *end = req->target + req->target_len;
	const char *p = a;
	while (p < end && *p != '/' && *p != '?')
		p++;
	if (!http_valid_authority(a, (size_t)(p - a)))
		return http_fail(s, HTTP_ERR_SYNTAX, "invalid authority in request-target");
	req->host = a;
	req->host_len = (size_t)(p - a);
	split_query(req, p, (size_t)(end - p));
	if (req->path_len == 0) {
		req->path = "/";
		req->path_len = 1;
	}
	return 0;
}

static int classify_target(struct http_scan *s, struct http_request *req)
{
	const char *t = req->target;
	size_t n = req->target_len;
	if (t[0] == '/') {
		split_query(req, t, n);
		return 0;
	}
	if (n == 1 && t[0] == '*') {
		if (!eq_exact(req->method, req->method_len, "OPTIONS"))
			return http_fail(s, HTTP_ERR_SYNTAX, "asterisk-form is only allowed with OPTIONS");
		req->path = t;
		req->path_len = 1;
		return 0;
	}
	size_t scheme_len = http_scheme_len(t, n);
	if (scheme_len != 0)
		return parse_absolute_form(s, req, scheme_len);
	return http_fail(s, HTTP_ERR_SYNTAX, "request-target must be origin-form or absolute-form");
}

static int parse_request_line(struct http_scan *s, struct http_request *req)
{
	int r = parse_method(s, req);
	if (r == 0)
		r = parse_target(s, req);
	if (r == 0)
		r = parse_version(s, req);
	if (r != 0)
		return r;
	if (eq_exact(req->method, req->method_len, "CONNECT"))
		return http_fail(s, HTTP_ERR_NOT_IMPLEMENTED, "CONNECT is not supported");
	return classify_target(s, req);
}

/* ---- the head ----------------------------------------------------------- */

/* RFC 9112 3.2: a 1.1 request names its Host; the rest of the framing
 * verdict is the codec's. A 100-continue in an HTTP/1.0 request is
 * ignored (RFC 9110 10.1.1). */
static int judge_request(struct http_scan *s, struct http_request *req, const struct http_fields *f)
{
	if (req->minor_version == 1 && !f->host_seen)
		return http_fail(s, HTTP_ERR_SYNTAX, "missing Host");
	int r = http_judge_framing(s, &request_rules, req->minor_version, f, &req->body_kind,
				   &req->keep_alive);
	if (r != 0)
		return r;
	req->content_length = f->length;
	req->request_id_field = f->request_id_field;
	req->traceparent_field = f->traceparent_field;
	req->tracestate_field = f->tracestate_field;
	req->traceparents = f->traceparents;
	req->tracestates = f->tracestates;
	req->expect_continue = f->expect_continue && req->minor_version == 1;
	if (req->host == NULL && f->host_seen) { /* an absolute-form target's authority wins */
		req->host = f->host;
		req->host_len = f->host_len;
	}
	return 0;
}

static void reset_request(struct http_request *req)
{
	ig_header *headers = req->headers;
	size_t capacity = req->header_capacity;
	*req = (struct http_request){ 0 };
	req->headers = headers;
	req->header_capacity = capacity;
	req->body_kind = HTTP_BODY_NONE;
}

IG_HOT int http_parse_request(const char *buf, size_t len, struct http_request *req,
		       const struct http_limits *limits)
{
	reset_request(req);
	struct http_scan s = http_head_window(buf, len, limits, &request_rules, &req->error);
	int r = skip_empty_lines(&s);
	if (r != 0)
		return r;

	/* The request line sees a narrower window when its own limit is
	 * closer than the head's. */
	struct http_scan line = http_line_window(&s, limits, &request_rules);
	r = parse_request_line(&line, req);
	if (r != 0)
		return r;
	s.p = line.p;

	size_t max_fields = limits->max_headers < req->header_capacity ? limits->max_headers
									: req->header_capacity;
	struct http_fields f = { 0 };
	r = http_parse_fields(&s, &request_rules, req->headers, max_fields, &req->num_headers, &f);
	if (r == 0)
		r = judge_request(&s, req, &f);
	if (r != 0)
		return r;
	return (int)(s.p - buf);
}
