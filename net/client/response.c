/* Response-head parser for the outbound client: one forward scan over the
 * caller's bytes, bounded by the limits, never past the end it was given.
 * Octet classes, list elements and transfer codings come from
 * net/http/parser.c, so a field the server would refuse in a request is
 * refused here in a response. It owns the framing
 * decision; reading the body belongs to the connection (net/client/conn.c). */
#include "response.h"

#include <limits.h>

#define IS_DIGIT(c) ((c) >= '0' && (c) <= '9')

static inline bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* ---- scanning window -------------------------------------------------- */

/* The parser may look at [p, end). When `end` is a limit rather than the
 * end of the input, running into it is an error, not a wait for more. */
struct scan {
	const char *p;
	const char *end;
	bool end_is_limit;
	const char *limit_error;
	const char **error;
};

static int fail(struct scan *s, const char *why)
{
	*s->error = why;
	return HTTP_ERROR;
}

static int out_of_bytes(struct scan *s)
{
	return s->end_is_limit ? fail(s, s->limit_error) : HTTP_INCOMPLETE;
}

/* Consumes the CRLF whose CR is at `cr`; a CR without LF is an error. */
static int expect_lf(struct scan *s, const char *cr)
{
	if (cr + 1 >= s->end)
		return out_of_bytes(s);
	if (cr[1] != '\n')
		return fail(s, "bare CR");
	s->p = cr + 2;
	return 0;
}

/* ---- status line ------------------------------------------------------ */

/* "HTTP/1." DIGIT, judged octet by octet so that a reply that is not HTTP
 * at all (a TLS alert, an HTML page) fails at its first octets. */
static int parse_version(struct scan *s, struct http_response_head *out)
{
	static const char name[] = "HTTP/";
	const char *p = s->p;
	for (size_t i = 0; i < 8; i++, p++) {
		if (p == s->end)
			return out_of_bytes(s);
		char c = *p;
		if (i < 5 && c != name[i])
			return fail(s, "not an HTTP/1.x response");
		if ((i == 5 || i == 7) && !IS_DIGIT(c))
			return fail(s, "malformed HTTP version");
		if (i == 5 && c != '1')
			return fail(s, "unsupported HTTP version");
		if (i == 6 && c != '.')
			return fail(s, "malformed HTTP version");
	}
	out->minor_version = s->p[7] - '0';
	s->p = p;
	return 0;
}

/* SP 3DIGIT, then SP or the CR of an empty reason. */
static int parse_status(struct scan *s, struct http_response_head *out)
{
	const char *p = s->p;
	int status = 0;
	for (size_t i = 0; i < 5; i++, p++) {
		if (p == s->end)
			return out_of_bytes(s);
		char c = *p;
		if (i == 0) {
			if (c != ' ')
				return fail(s, "malformed HTTP version");
		} else if (i < 4) {
			if (!IS_DIGIT(c))
				return fail(s, "invalid status code");
			status = status * 10 + (c - '0');
		} else if (c != ' ' && c != '\r') {
			return fail(s, IS_DIGIT(c) ? "invalid status code" : "malformed status line");
		}
	}
	if (status < 100 || status > 599)
		return fail(s, "invalid status code");
	if (status == 101)
		return fail(s, "unexpected 101 Switching Protocols");
	out->status = status;
	s->p = p[-1] == ' ' ? p : p - 1;
	return 0;
}

static int parse_reason(struct scan *s, struct http_response_head *out)
{
	const char *p = http_skip_field_value(s->p, s->end);
	if (p == s->end)
		return out_of_bytes(s);
	if (*p != '\r')
		return fail(s, *p == '\n' ? "bare LF" : "invalid character in reason phrase");
	out->reason = (ig_str){ s->p, (size_t)(p - s->p) };
	return expect_lf(s, p);
}

static int parse_status_line(struct scan *s, struct http_response_head *out)
{
	int r = parse_version(s, out);
	if (r == 0)
		r = parse_status(s, out);
	if (r == 0)
		r = parse_reason(s, out);
	return r;
}

/* ---- header fields ---------------------------------------------------- */

/* What the framing fields said, judged once the head is complete so that
 * the verdict does not depend on their order. */
struct framing {
	bool length_seen;
	uint64_t length;
	bool te_seen;
	bool te_unknown;      /* a coding other than chunked */
	bool te_chunked_last; /* the last coding listed so far is chunked */
	unsigned te_chunked;  /* how often chunked was listed */
	bool conn_close;
	bool conn_keep_alive;
};

/* Calls `fn` on each element of a comma-separated list, trimmed of OWS;
 * empty elements are skipped (RFC 9110 5.6.1). Returns how many it saw,
 * or -1 when fn failed. */
typedef int element_fn(struct scan *s, struct framing *f, const char *e, size_t n);

static int for_each_element(struct scan *s, struct framing *f, const struct http_header *h,
			    element_fn *fn)
{
	int count = 0;
	const char *p = h->value, *end = h->value + h->value_len;
	while (p < end) {
		const char *e, *e_end, *comma = http_list_element(p, end, &e, &e_end);
		if (e < e_end) {
			count++;
			if (fn(s, f, e, (size_t)(e_end - e)) != 0)
				return -1;
		}
		p = comma ? comma + 1 : end;
	}
	return count;
}

/* Content-Length = 1*DIGIT, at most INT64_MAX. RFC 9110 8.6 lets a
 * recipient accept a repeat of the same value, as a field or as a list
 * element ("5, 5"); a different value claims two bodies and is refused,
 * and so is an empty element, which no sender writes by mistake. */
static int note_length(struct scan *s, struct framing *f, const char *e, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!IS_DIGIT(e[i]))
			return fail(s, "invalid Content-Length");
		unsigned d = (unsigned)(e[i] - '0');
		if (v > ((uint64_t)INT64_MAX - d) / 10)
			return fail(s, "Content-Length too large");
		v = v * 10 + d;
	}
	if (f->length_seen && f->length != v)
		return fail(s, "conflicting Content-Length values");
	f->length_seen = true;
	f->length = v;
	return 0;
}

static int note_content_length(struct scan *s, struct framing *f, const struct http_header *h)
{
	if (h->value_len == 0)
		return fail(s, "empty Content-Length");
	const char *p = h->value, *end = h->value + h->value_len;
	for (;;) {
		const char *e, *e_end, *comma = http_list_element(p, end, &e, &e_end);
		if (e == e_end)
			return fail(s, "invalid Content-Length");
		int r = note_length(s, f, e, (size_t)(e_end - e));
		if (r != 0 || comma == NULL)
			return r;
		p = comma + 1;
	}
}

static int note_coding(struct scan *s, struct framing *f, const char *e, size_t n)
{
	const char *error;
	int coding = http_transfer_coding(e, n, &error);
	if (coding < 0)
		return fail(s, error);
	if (coding == 1) {
		f->te_chunked++;
		f->te_chunked_last = true;
	} else {
		f->te_unknown = true;
		f->te_chunked_last = false;
	}
	return 0;
}

static int note_connection_option(struct scan *s, struct framing *f, const char *e, size_t n)
{
	(void)s;
	if (http_eq_nocase(e, n, "close"))
		f->conn_close = true;
	else if (http_eq_nocase(e, n, "keep-alive"))
		f->conn_keep_alive = true;
	return 0;
}

static int note_field(struct scan *s, struct framing *f, const struct http_header *h)
{
	int count = 0;
	if (h->name_len == 14 && http_eq_nocase(h->name, 14, "content-length")) {
		return note_content_length(s, f, h);
	} else if (h->name_len == 17 && http_eq_nocase(h->name, 17, "transfer-encoding")) {
		f->te_seen = true;
		count = for_each_element(s, f, h, note_coding);
		if (count == 0)
			return fail(s, "empty Transfer-Encoding");
	} else if (h->name_len == 10 && http_eq_nocase(h->name, 10, "connection")) {
		count = for_each_element(s, f, h, note_connection_option);
	}
	return count < 0 ? HTTP_ERROR : 0;
}

static int parse_field(struct scan *s, struct http_header *h)
{
	const char *error;
	int n = http_parse_field_line(s->p, s->end, h, &error);
	if (n == HTTP_INCOMPLETE)
		return out_of_bytes(s);
	if (n == HTTP_ERROR)
		return fail(s, error);
	s->p += n;
	return 0;
}

/* Field lines up to and including the empty line that ends the head. */
static int parse_fields(struct scan *s, struct http_response_head *out, size_t max_fields,
			struct framing *f)
{
	for (;;) {
		if (s->p == s->end)
			return out_of_bytes(s);
		char c = *s->p;
		if (c == '\r')
			return expect_lf(s, s->p);
		if (c == '\n')
			return fail(s, "bare LF");
		if (is_ows(c)) /* RFC 9112 5.2: obs-fold is refused */
			return fail(s, "obsolete line folding");
		if (out->num_headers == max_fields)
			return fail(s, "too many header fields");
		struct http_header *h = &out->headers[out->num_headers];
		int r = parse_field(s, h);
		if (r == 0)
			r = note_field(s, f, h);
		if (r != 0)
			return r;
		out->num_headers++;
	}
}

/* ---- framing (RFC 9112 6.3) ------------------------------------------- */

static bool has_no_body(int status, bool head_request)
{
	return head_request || status < 200 || status == 204 || status == 304;
}

static int judge_framing(struct scan *s, struct http_response_head *out, bool head_request,
			 const struct framing *f)
{
	out->content_length = f->length_seen ? f->length : 0;
	if (f->te_seen) {
		/* RFC 9112 6.1: faulty framing in 1.0; 6.3: CL with TE is the
		 * classic smuggling shape, so it is refused, not resolved. */
		if (out->minor_version == 0)
			return fail(s, "Transfer-Encoding in an HTTP/1.0 response");
		if (f->length_seen)
			return fail(s, "both Transfer-Encoding and Content-Length");
		if (f->te_chunked > 1)
			return fail(s, "chunked applied more than once");
		if (f->te_chunked == 1 && !f->te_chunked_last)
			return fail(s, "chunked is not the final transfer coding");
		if (f->te_unknown)
			return fail(s, "unsupported transfer coding");
	}
	if (has_no_body(out->status, head_request))
		out->framing = BODY_NONE;
	else if (f->te_seen)
		out->framing = BODY_CHUNKED;
	else if (f->length_seen)
		out->framing = BODY_LENGTH;
	else
		out->framing = BODY_UNTIL_CLOSE;
	if (out->minor_version >= 1)
		out->keep_alive = !f->conn_close;
	else
		out->keep_alive = f->conn_keep_alive && !f->conn_close;
	if (out->framing == BODY_UNTIL_CLOSE)
		out->keep_alive = false;
	return 0;
}

int http_parse_response(const char *buf, size_t len, bool head_request,
			const struct http_limits *limits, struct http_response_head *out,
			const char **error)
{
	out->num_headers = 0;
	out->reason = (ig_str){ 0 };
	/* The head's length is returned as an int. */
	size_t head_max = limits->max_header_bytes < (size_t)INT_MAX ? limits->max_header_bytes
								      : (size_t)INT_MAX;
	struct scan s = {
		.p = buf,
		.end = buf + (len < head_max ? len : head_max),
		.end_is_limit = len >= head_max,
		.limit_error = "response head too large",
		.error = error,
	};
	/* The status line sees a narrower window when its limit is closer. */
	struct scan line = s;
	if ((size_t)(s.end - s.p) >= limits->max_request_line) {
		line.end = s.p + limits->max_request_line;
		line.end_is_limit = true;
		line.limit_error = "status line too long";
	}
	int r = parse_status_line(&line, out);
	if (r != 0)
		return r;
	s.p = line.p;

	size_t max_fields = limits->max_headers;
	if (out->header_capacity != 0 && out->header_capacity < max_fields)
		max_fields = out->header_capacity;
	struct framing f = { 0 };
	r = parse_fields(&s, out, max_fields, &f);
	if (r == 0)
		r = judge_framing(&s, out, head_request, &f);
	if (r != 0)
		return r;
	return (int)(s.p - buf);
}
