/* HTTP/1.1 request-head parser (RFC 9112, 9110): the request line and the
 * forms of its target; the version, the field lines and the framing
 * judgement are the codec's (codec.c), shared with the client's response
 * parser. Routing and decoding of the path, query and field values belong
 * to the callers. */
#include "parser.h"

#include <limits.h>
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

int ig_http_error_status(enum http_error_kind kind)
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
	const char *p = ig_http_skip_token(s->p, s->end);
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
	const char *p = ig_http_skip_target(s->p, s->end);
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
	int r = ig_http_scan_version(s, &request_rules, &major, &minor);
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
	if (n >= 7 && ig_http_eq_nocase(t, 7, "http://"))
		return 7;
	if (n >= 8 && ig_http_eq_nocase(t, 8, "https://"))
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
	if (!ig_http_valid_authority(a, (size_t)(p - a)))
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
	int r = ig_http_judge_framing(s, &request_rules, req->minor_version, f, &req->body_kind,
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

IG_HOT int ig_http_parse_request(const char *buf, size_t len, struct http_request *req,
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
	r = ig_http_parse_fields(&s, &request_rules, req->headers, max_fields, &req->num_headers, &f);
	if (r == 0)
		r = judge_request(&s, req, &f);
	if (r != 0)
		return r;
	return (int)(s.p - buf);
}

/* ---- resuming a head that arrives in pieces ------------------------------ */

/* The resumed scan walks the same grammar as the parse above, one state per
 * place a head can stop, and only ever answers "not yet": wherever a byte
 * could end the head, break it, or meet a limit, it hands the whole buffer
 * to ig_http_parse_request, whose verdict is then the answer. It is exact in
 * the other direction too (a valid prefix never hands over), so the whole
 * head is parsed once; the unit tests compare both at every split. */
enum {
	R_FRESH,        /* no call yet: parse whole */
	R_EMPTY,        /* before the request line */
	R_EMPTY_LF,     /* an empty line's CR seen */
	R_METHOD,
	R_TARGET_START, /* the SP after the method seen */
	R_TARGET,
	R_VERSION,      /* R_VERSION + i: i octets of "HTTP/d.d" seen */
	R_VERSION_CR = R_VERSION + 8,
	R_LINE_LF,
	R_FIELD_START,
	R_NAME,
	R_VALUE,
	R_FIELD_LF,
	R_END_LF,       /* the blank line's CR: the next octet decides */
};

static void add_examined(struct http_head_resume *st, size_t n)
{
	st->examined = n < UINT32_MAX - st->examined ? st->examined + (uint32_t)n : UINT32_MAX;
}

/* ig_http_parse_request, counted: the bytes it scans are the head on success,
 * else all it was given within the head's limit. */
static int parse_whole(const char *buf, size_t len, struct http_request *req, const struct http_limits *limits,
		       struct http_head_resume *st)
{
	int n = ig_http_parse_request(buf, len, req, limits);
	size_t head_max = limits->max_header_bytes < (size_t)INT_MAX ? limits->max_header_bytes : (size_t)INT_MAX;
	add_examined(st, n > 0 ? (size_t)n : len < head_max ? len : head_max);
	return n;
}

/* The request line buf[st->line .. lf] is complete and in the grammar, so
 * "HTTP/d.d" CR precedes its LF: true if what parse_version and
 * parse_request_line judge after the line has ended (the version's number,
 * CONNECT, the target's form) passes. */
static bool request_line_passes(const char *buf, const char *lf, const struct http_head_resume *st)
{
	const char *version = lf - 9;
	if (version[5] != '1' || version[7] > '1')
		return false;
	struct http_request tmp = { .method = buf + st->line, .method_len = st->mark - st->line,
				    .target = buf + st->mark + 1,
				    .target_len = (size_t)(version - 1 - (buf + st->mark + 1)) };
	struct http_error error;
	struct http_scan s = { .error = &error };
	return !eq_exact(tmp.method, tmp.method_len, "CONNECT") && classify_target(&s, &tmp) == 0;
}

/* The field line buf[st->line .. lf] is complete and in the grammar:
 * true if noting it, as ig_http_parse_fields does, passes. The value is
 * trimmed of OWS as ig_http_parse_field_line trims it. */
static bool field_line_passes(const char *buf, const char *lf, struct http_head_resume *st)
{
	const char *v = buf + st->mark + 1, *e = lf - 1;
	while (v < e && http_is_ows(*v))
		v++;
	while (e > v && http_is_ows(e[-1]))
		e--;
	ig_header h = { .name = { buf + st->line, st->mark - st->line }, .value = { v, (size_t)(e - v) } };
	struct http_fields f = { .host_seen = st->host_seen, .length_seen = st->length_seen };
	struct http_error error;
	struct http_scan s = { .error = &error };
	if (ig_http_note_field(&s, &request_rules, &f, &h, st->fields) != 0)
		return false;
	st->host_seen = f.host_seen;
	st->length_seen = f.length_seen;
	return true;
}

/* Scans buf[st->scanned .. len) on from where the last call stopped.
 * Returns HTTP_INCOMPLETE when every byte is a valid prefix that no limit
 * has cut, or 0 to hand over (st->scanned then at the deciding byte). The
 * head's own limit is the caller's: len is below it here. */
IG_HOT static int scan_on(const char *buf, size_t len, const struct http_request *req,
			  const struct http_limits *limits, struct http_head_resume *st)
{
	const char *p = buf + st->scanned, *end = buf + len;
	size_t max_fields = limits->max_headers < req->header_capacity ? limits->max_headers : req->header_capacity;
	/* The request line's window, as http_line_window draws it: cut at
	   max_request_line from its start when that is within the bytes. */
	const char *line_end = end;
	bool line_cut = false;
#define LINE_WINDOW()                                                                       \
	do {                                                                                \
		line_cut = len - st->line >= limits->max_request_line;                      \
		line_end = line_cut ? buf + st->line + limits->max_request_line : end;      \
	} while (0)
	if (st->state >= R_METHOD && st->state <= R_LINE_LF)
		LINE_WINDOW();
	int verdict = HTTP_INCOMPLETE;
	while (p < end) {
		if (st->state >= R_METHOD && st->state <= R_LINE_LF && p == line_end)
			goto hand_over; /* 414, unless an error came first */
		const char *q;
		switch (st->state) {
		case R_EMPTY:
			if (*p == '\r' && st->empty_lines < MAX_EMPTY_LINES) {
				st->state = R_EMPTY_LF;
				p++;
				continue;
			}
			if (*p == '\r' || *p == '\n')
				goto hand_over;
			st->line = (uint32_t)(p - buf);
			st->state = R_METHOD;
			LINE_WINDOW();
			continue;
		case R_EMPTY_LF:
			if (*p != '\n')
				goto hand_over;
			st->empty_lines++;
			st->state = R_EMPTY;
			p++;
			continue;
		case R_METHOD:
			q = ig_http_skip_token(p, line_end);
			if (q == line_end) {
				p = q;
				continue;
			}
			if (*q != ' ' || q == buf + st->line)
				goto hand_over;
			st->mark = (uint32_t)(q - buf);
			st->state = R_TARGET_START;
			p = q + 1;
			continue;
		case R_TARGET_START:
			if (!http_has_class(*p, HTTP_C_TARGET))
				goto hand_over;
			st->state = R_TARGET;
			continue;
		case R_TARGET:
			q = ig_http_skip_target(p, line_end);
			if (q == line_end) {
				p = q;
				continue;
			}
			if (*q != ' ')
				goto hand_over;
			st->state = R_VERSION;
			p = q + 1;
			continue;
		case R_VERSION_CR:
			if (*p != '\r')
				goto hand_over;
			st->state = R_LINE_LF;
			p++;
			continue;
		case R_LINE_LF:
			if (*p != '\n')
				goto hand_over;
			if (!request_line_passes(buf, p, st))
				goto hand_over;
			p++;
			st->line = (uint32_t)(p - buf);
			st->state = R_FIELD_START;
			continue;
		case R_FIELD_START:
			/* CR ends the head; LF, obs-fold, a field too many or a
			   name that cannot start here is an error. Past the
			   count's range (more than the settings allow) the whole
			   parse judges every line. */
			if (*p == '\r') {
				st->state = R_END_LF;
				p++;
				continue;
			}
			if (st->fields >= max_fields || st->fields == UINT16_MAX || !http_has_class(*p, HTTP_C_TCHAR))
				goto hand_over;
			st->line = (uint32_t)(p - buf);
			st->state = R_NAME;
			continue;
		case R_NAME:
			q = ig_http_skip_token(p, end);
			if (q == end) {
				p = q;
				continue;
			}
			if (*q != ':')
				goto hand_over;
			st->mark = (uint32_t)(q - buf);
			st->state = R_VALUE;
			p = q + 1;
			continue;
		case R_VALUE:
			q = ig_http_skip_field_value(p, end);
			if (q == end) {
				p = q;
				continue;
			}
			if (*q != '\r')
				goto hand_over;
			st->state = R_FIELD_LF;
			p = q + 1;
			continue;
		case R_FIELD_LF:
			if (*p != '\n' || !field_line_passes(buf, p, st))
				goto hand_over;
			st->fields++;
			st->state = R_FIELD_START;
			p++;
			continue;
		case R_END_LF:
			goto hand_over; /* the end of the head, or a bare CR */
		default: { /* R_VERSION + i, as ig_http_scan_version judges it */
			unsigned i = st->state - R_VERSION;
			bool ok = i < 5 ? *p == "HTTP/"[i] : i == 6 ? *p == '.' : *p >= '0' && *p <= '9';
			if (!ok)
				goto hand_over;
			st->state++;
			p++;
			continue;
		}
		}
	}
#undef LINE_WINDOW
	if (line_cut && st->state >= R_METHOD && st->state <= R_LINE_LF)
		verdict = 0; /* the line ran into its limit at the last byte */
	add_examined(st, (size_t)(p - buf) - st->scanned);
	st->scanned = (uint32_t)(p - buf);
	return verdict;
hand_over:
	add_examined(st, (size_t)(p - buf) - st->scanned);
	st->scanned = (uint32_t)(p - buf);
	return 0;
}

IG_HOT int ig_http_parse_request_resumed(const char *buf, size_t len, struct http_request *req,
					 const struct http_limits *limits, struct http_head_resume *st)
{
	if (st->state == R_FRESH) {
		int n = parse_whole(buf, len, req, limits, st);
		if (n == HTTP_INCOMPLETE)
			st->state = R_EMPTY; /* scanned from the start next time */
		return n;
	}
	/* At the head's limit the whole parse cannot answer "not yet". */
	if (len < limits->max_header_bytes && len < (size_t)INT_MAX &&
	    scan_on(buf, len, req, limits, st) == HTTP_INCOMPLETE)
		return HTTP_INCOMPLETE;
	return parse_whole(buf, len, req, limits, st);
}
