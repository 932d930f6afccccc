/* Response-head parser for the outbound client: the status line, then the
 * codec's field lines and framing judgement (codec.c), the ones the server
 * applies to requests, so a field the server would refuse in a request is
 * refused here in a response, by the same code. It owns what only a
 * response has: the status, the statuses without a body, a body delimited
 * by the close. Reading the body belongs to the client's connection. */
#include "response_head.h"

#define IS_DIGIT(c) ((c) >= '0' && (c) <= '9')

/* A response's direction: a repeated Content-Length of one value is
 * accepted (RFC 9110 8.6), and the version is judged at its first digit,
 * so that a reply that is not HTTP/1 fails early. */
static const struct http_direction response_rules = {
	.major_at_once = true,
	.not_http = "not an HTTP/1.x response",
	.te_in_http10 = "Transfer-Encoding in an HTTP/1.0 response",
	.line_too_long = "status line too long",
	.head_too_large = "response head too large",
};

/* ---- status line ------------------------------------------------------ */

/* SP 3DIGIT, then SP or the CR of an empty reason. */
static int parse_status(struct http_scan *s, struct http_response_head *out)
{
	const char *p = s->p;
	int status = 0;
	for (size_t i = 0; i < 5; i++, p++) {
		if (p == s->end)
			return http_out_of_bytes(s);
		char c = *p;
		if (i == 0) {
			if (c != ' ')
				return http_fail(s, HTTP_ERR_SYNTAX, "malformed HTTP version");
		} else if (i < 4) {
			if (!IS_DIGIT(c))
				return http_fail(s, HTTP_ERR_SYNTAX, "invalid status code");
			status = status * 10 + (c - '0');
		} else if (c != ' ' && c != '\r') {
			return http_fail(s, HTTP_ERR_SYNTAX,
					 IS_DIGIT(c) ? "invalid status code" : "malformed status line");
		}
	}
	if (status < 100 || status > 599)
		return http_fail(s, HTTP_ERR_SYNTAX, "invalid status code");
	if (status == 101)
		return http_fail(s, HTTP_ERR_NOT_IMPLEMENTED, "unexpected 101 Switching Protocols");
	out->status = status;
	s->p = p[-1] == ' ' ? p : p - 1;
	return 0;
}

static int parse_reason(struct http_scan *s, struct http_response_head *out)
{
	const char *p = ig_http_skip_field_value(s->p, s->end);
	if (p == s->end)
		return http_out_of_bytes(s);
	if (*p != '\r')
		return http_fail(s, HTTP_ERR_SYNTAX, *p == '\n' ? "bare LF" : "invalid character in reason phrase");
	out->reason = (ig_str){ s->p, (size_t)(p - s->p) };
	return http_expect_lf(s, p);
}

static int parse_status_line(struct http_scan *s, struct http_response_head *out)
{
	int major;
	int r = ig_http_scan_version(s, &response_rules, &major, &out->minor_version);
	if (r == 0)
		r = parse_status(s, out);
	if (r == 0)
		r = parse_reason(s, out);
	return r;
}

/* ---- framing (RFC 9112 6.3) ------------------------------------------- */

static bool has_no_body(int status, bool head_request)
{
	return head_request || status < 200 || status == 204 || status == 304;
}

/* The codec's verdict applies whether or not a body follows; then the
 * status decides whether one does, and without a length the close ends it. */
static int judge_response(struct http_scan *s, struct http_response_head *out, bool head_request,
			  const struct http_fields *f)
{
	enum http_body_kind body;
	int r = ig_http_judge_framing(s, &response_rules, out->minor_version, f, &body, &out->keep_alive);
	if (r != 0)
		return r;
	out->content_length = f->length;
	if (has_no_body(out->status, head_request))
		out->framing = BODY_NONE;
	else if (body == HTTP_BODY_CHUNKED)
		out->framing = BODY_CHUNKED;
	else if (body == HTTP_BODY_LENGTH)
		out->framing = BODY_LENGTH;
	else
		out->framing = BODY_UNTIL_CLOSE;
	if (out->framing == BODY_UNTIL_CLOSE)
		out->keep_alive = false;
	return 0;
}

int ig_http_parse_response(const char *buf, size_t len, bool head_request,
			const struct http_limits *limits, struct http_response_head *out,
			struct http_error *error)
{
	out->num_headers = 0;
	out->reason = (ig_str){ 0 };
	struct http_scan s = http_head_window(buf, len, limits, &response_rules, error);
	/* The status line sees a narrower window when its limit is closer. */
	struct http_scan line = http_line_window(&s, limits, &response_rules);
	int r = parse_status_line(&line, out);
	if (r != 0)
		return r;
	s.p = line.p;

	size_t max_fields = limits->max_headers;
	if (out->header_capacity != 0 && out->header_capacity < max_fields)
		max_fields = out->header_capacity;
	struct http_fields f = { 0 };
	r = ig_http_parse_fields(&s, &response_rules, out->headers, max_fields, &out->num_headers, &f);
	if (r == 0)
		r = judge_response(&s, out, head_request, &f);
	if (r != 0)
		return r;
	return (int)(s.p - buf);
}
