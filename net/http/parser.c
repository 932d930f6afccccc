/* HTTP/1.1 request-head parser and chunked-body decoder (RFC 9112, 9110).
 * One forward scan over the caller's bytes, bounded by the configured limits,
 * never reading past the end it was given; no allocation, no I/O. It owns
 * the framing decisions (body length, smuggling defences); routing and
 * decoding of the path, query and field values belong to the callers. */
#include "parser.h"
#include "kernel/ingot.h"
#include "net/ascii.h"

#include <limits.h>
#include <string.h>

/* ---- character classes ------------------------------------------------ */

/* One table lookup per byte on the hot path. The table is built by the
 * compiler from the grammar below, so the rules stay readable. */
#define C_TCHAR 0x01  /* token octet (RFC 9110 5.6.2) */
#define C_VALUE 0x02  /* field-value octet: VCHAR, SP, HTAB, obs-text */
#define C_TARGET 0x04 /* request-target octet: VCHAR except '#' */
#define C_HOST 0x08   /* reg-name octet: unreserved, sub-delims, '%' */

#define IS_DIGIT(c) ((c) >= '0' && (c) <= '9')
#define IS_ALPHA(c) (((c) >= 'A' && (c) <= 'Z') || ((c) >= 'a' && (c) <= 'z'))
#define IS_VCHAR(c) ((c) >= 0x21 && (c) <= 0x7e)
#define IS_TSPECIAL(c)                                                      \
	((c) == '!' || (c) == '#' || (c) == '$' || (c) == '%' || (c) == '&' || \
	 (c) == '\'' || (c) == '*' || (c) == '+' || (c) == '-' || (c) == '.' || \
	 (c) == '^' || (c) == '_' || (c) == '`' || (c) == '|' || (c) == '~')
#define IS_SUBDELIM(c)                                                      \
	((c) == '!' || (c) == '$' || (c) == '&' || (c) == '\'' || (c) == '(' || \
	 (c) == ')' || (c) == '*' || (c) == '+' || (c) == ',' || (c) == ';' || \
	 (c) == '=')
#define IS_UNRESERVED(c) \
	(IS_ALPHA(c) || IS_DIGIT(c) || (c) == '-' || (c) == '.' || (c) == '_' || (c) == '~')

#define CLASS(c)                                                              \
	((IS_ALPHA(c) || IS_DIGIT(c) || IS_TSPECIAL(c) ? C_TCHAR : 0) |        \
	 (IS_VCHAR(c) || (c) == ' ' || (c) == '\t' || (c) >= 0x80 ? C_VALUE : 0) | \
	 (IS_VCHAR(c) && (c) != '#' ? C_TARGET : 0) |                          \
	 (IS_UNRESERVED(c) || IS_SUBDELIM(c) || (c) == '%' ? C_HOST : 0))
#define CLASS4(c) CLASS(c), CLASS((c) + 1), CLASS((c) + 2), CLASS((c) + 3)
#define CLASS16(c) CLASS4(c), CLASS4((c) + 4), CLASS4((c) + 8), CLASS4((c) + 12)
#define CLASS64(c) CLASS16(c), CLASS16((c) + 16), CLASS16((c) + 32), CLASS16((c) + 48)

static const unsigned char char_class[256] = {
	CLASS64(0), CLASS64(64), CLASS64(128), CLASS64(192),
};

static inline bool has_class(char c, unsigned cls)
{
	return (char_class[(unsigned char)c] & cls) != 0;
}

static inline bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

bool http_eq_nocase(const char *s, size_t n, const char *lower)
{
	size_t i = 0;
	for (; i < n; i++)
		if (lower[i] == '\0' || ig_ascii_lower(s[i]) != lower[i])
			return false;
	return lower[i] == '\0';
}

bool http_same_nocase(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ig_ascii_lower(a[i]) != ig_ascii_lower(b[i]))
			return false;
	return true;
}

static bool eq_exact(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* Eight octets at a time: long values and targets are the bulk of a head,
 * and almost all their octets are plain printable ASCII. A word that fails
 * the test is rescanned octet by octet, so the tests only need to be exact
 * about "every octet qualifies", never about where the first miss is. */
#define ONES ((uint64_t)0x0101010101010101u)
#define HIGHS (ONES * 0x80)

static inline uint64_t load8(const char *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	return x;
}

/* Non-zero iff some octet of x is below n (n <= 0x80). */
static inline uint64_t any_below(uint64_t x, unsigned n)
{
	return (x - ONES * n) & ~x & HIGHS;
}

static inline uint64_t any_equal(uint64_t x, unsigned char c)
{
	return any_below(x ^ (ONES * c), 1);
}

static inline bool word_is_value(uint64_t x)
{
	return (any_below(x, 0x20) | any_equal(x, 0x7f)) == 0;
}

static inline bool word_is_target(uint64_t x)
{
	return (any_below(x, 0x21) | (x & HIGHS) | any_equal(x, 0x7f) | any_equal(x, '#')) == 0;
}

/* Returns the first octet in [p, end) outside `cls` (or end). */
static inline const char *skip_class(const char *p, const char *end, unsigned cls,
				     bool (*word_ok)(uint64_t))
{
	for (;;) {
		while (end - p >= 8 && word_ok(load8(p)))
			p += 8;
		const char *stop = end - p > 8 ? p + 8 : end;
		while (p < stop && has_class(*p, cls))
			p++;
		if (p != stop || p == end)
			return p;
	}
}

/* ---- scanning window -------------------------------------------------- */

/* The parser may look at [p, end). When `end` is a configured limit rather
 * than the end of the input, running into it is an error (414 or 431) and
 * not a request for more bytes: no future bytes could fix the head. */
struct scan {
	const char *p;
	const char *end;
	bool end_is_limit;
	int limit_status;
	const char *limit_detail;
};

static int fail(struct http_request *req, int status, const char *detail)
{
	req->error_status = status;
	req->error_detail = detail;
	return HTTP_ERROR;
}

static int out_of_bytes(const struct scan *s, struct http_request *req)
{
	if (s->end_is_limit)
		return fail(req, s->limit_status, s->limit_detail);
	return HTTP_INCOMPLETE;
}

/* Consumes the CRLF whose CR the caller found at `cr`. Strict: a CR not
 * followed by LF is an error (RFC 9112 2.2 allows rejecting it). */
static int expect_lf(struct scan *s, struct http_request *req, const char *cr)
{
	if (cr + 1 >= s->end)
		return out_of_bytes(s, req);
	if (cr[1] != '\n')
		return fail(req, 400, "bare CR");
	s->p = cr + 2;
	return 0;
}

/* ---- request line ----------------------------------------------------- */

#define MAX_EMPTY_LINES 4

/* RFC 9112 2.2: a server SHOULD ignore at least one empty line before the
 * request line (clients once sent a CRLF after a POST body). */
static int skip_empty_lines(struct scan *s, struct http_request *req)
{
	for (int n = 0; s->p < s->end; n++) {
		char c = *s->p;
		if (c == '\n')
			return fail(req, 400, "bare LF");
		if (c != '\r')
			return 0;
		if (n == MAX_EMPTY_LINES)
			return fail(req, 400, "too many empty lines before the request line");
		int r = expect_lf(s, req, s->p);
		if (r != 0)
			return r;
	}
	return out_of_bytes(s, req);
}

static int parse_method(struct scan *s, struct http_request *req)
{
	const char *p = s->p;
	while (p < s->end && has_class(*p, C_TCHAR))
		p++;
	if (p == s->end)
		return out_of_bytes(s, req);
	if (*p != ' ' || p == s->p)
		return fail(req, 400, "invalid method");
	req->method = s->p;
	req->method_len = (size_t)(p - s->p);
	s->p = p + 1;
	return 0;
}

static int parse_target(struct scan *s, struct http_request *req)
{
	const char *p = skip_class(s->p, s->end, C_TARGET, word_is_target);
	if (p == s->end)
		return out_of_bytes(s, req);
	if (*p != ' ')
		return fail(req, 400, *p == '#' ? "fragment in request-target"
						 : "invalid character in request-target");
	if (p == s->p)
		return fail(req, 400, "extra space before request-target");
	req->target = s->p;
	req->target_len = (size_t)(p - s->p);
	s->p = p + 1;
	return 0;
}

/* "HTTP/" DIGIT "." DIGIT CRLF. Decided as soon as a ninth octet shows up,
 * so a garbage version does not wait for the line limit. */
static int parse_version(struct scan *s, struct http_request *req)
{
	const char *v = s->p, *q = v;
	while (q < s->end && *q != '\r' && *q != '\n') {
		if (q - v == 8)
			return fail(req, 400, "malformed HTTP version");
		q++;
	}
	if (q == s->end)
		return out_of_bytes(s, req);
	if (*q == '\n')
		return fail(req, 400, "bare LF");
	int r = expect_lf(s, req, q);
	if (r != 0)
		return r;
	if (q - v != 8 || memcmp(v, "HTTP/", 5) != 0 || !IS_DIGIT(v[5]) || v[6] != '.' ||
	    !IS_DIGIT(v[7]))
		return fail(req, 400, "malformed HTTP version");
	if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
		return fail(req, 505, "HTTP version not supported");
	req->minor_version = v[7] - '0';
	return 0;
}

/* ---- request-target forms (RFC 9112 3.2) ------------------------------ */

/* uri-host [ ":" port ], as in Host and in an absolute-form target.
 * Userinfo ('@') is rejected, as RFC 9110 4.2.4 recommends. */
static bool valid_authority(const char *a, size_t n)
{
	size_t i = 0;
	if (n > 0 && a[0] == '[') { /* IP-literal */
		for (i = 1; i < n && a[i] != ']'; i++)
			if (!has_class(a[i], C_HOST) && a[i] != ':')
				return false;
		if (i == n || i == 1)
			return false;
		i++;
	} else {
		while (i < n && has_class(a[i], C_HOST))
			i++;
		if (i == 0)
			return false;
	}
	if (i == n)
		return true;
	if (a[i] != ':')
		return false;
	for (i++; i < n; i++)
		if (!IS_DIGIT(a[i]))
			return false;
	return true;
}

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
static int parse_absolute_form(struct http_request *req, size_t scheme_len)
{
	const char *a = req->target + scheme_len, *end = req->target + req->target_len;
	const char *p = a;
	while (p < end && *p != '/' && *p != '?')
		p++;
	if (!valid_authority(a, (size_t)(p - a)))
		return fail(req, 400, "invalid authority in request-target");
	req->host = a;
	req->host_len = (size_t)(p - a);
	split_query(req, p, (size_t)(end - p));
	if (req->path_len == 0) {
		req->path = "/";
		req->path_len = 1;
	}
	return 0;
}

static int classify_target(struct http_request *req)
{
	const char *t = req->target;
	size_t n = req->target_len;
	if (t[0] == '/') {
		split_query(req, t, n);
		return 0;
	}
	if (n == 1 && t[0] == '*') {
		if (!eq_exact(req->method, req->method_len, "OPTIONS"))
			return fail(req, 400, "asterisk-form is only allowed with OPTIONS");
		req->path = t;
		req->path_len = 1;
		return 0;
	}
	size_t scheme_len = http_scheme_len(t, n);
	if (scheme_len != 0)
		return parse_absolute_form(req, scheme_len);
	return fail(req, 400, "request-target must be origin-form or absolute-form");
}

static int parse_request_line(struct scan *s, struct http_request *req)
{
	int r = parse_method(s, req);
	if (r == 0)
		r = parse_target(s, req);
	if (r == 0)
		r = parse_version(s, req);
	if (r != 0)
		return r;
	if (eq_exact(req->method, req->method_len, "CONNECT"))
		return fail(req, 501, "CONNECT is not supported");
	return classify_target(req);
}

/* ---- header fields ---------------------------------------------------- */

/* What the framing-relevant fields said, gathered during the scan and
 * judged once the head is complete (so the verdict does not depend on the
 * order in which fields arrive). */
struct framing {
	bool host_seen;
	bool length_seen;
	bool te_seen;
	bool te_unknown;      /* a coding other than chunked */
	bool te_chunked_last; /* the last coding listed so far is chunked */
	unsigned te_chunked;  /* how often chunked was listed */
	bool conn_close;
	bool conn_keep_alive;
	bool expect_continue;
};

/* Calls `fn` on each non-empty element of a comma-separated list, trimmed
 * of OWS, and counts them. RFC 9110 5.6.1: empty elements are ignored. */
typedef int list_fn(struct http_request *req, struct framing *f, const char *e, size_t n);

const char *http_list_element(const char *p, const char *end, const char **e, const char **e_end)
{
	const char *comma = memchr(p, ',', (size_t)(end - p));
	*e = p;
	*e_end = comma ? comma : end;
	while (*e < *e_end && is_ows(**e))
		++*e;
	while (*e_end > *e && is_ows((*e_end)[-1]))
		--*e_end;
	return comma;
}

static int for_each_element(struct http_request *req, struct framing *f,
			    const struct http_header *h, list_fn *fn, size_t *count)
{
	*count = 0;
	const char *p = h->value, *end = h->value + h->value_len;
	while (p < end) {
		const char *e, *e_end, *comma = http_list_element(p, end, &e, &e_end);
		if (e < e_end) {
			++*count;
			int r = fn(req, f, e, (size_t)(e_end - e));
			if (r != 0)
				return r;
		}
		p = comma ? comma + 1 : end;
	}
	return 0;
}

/* transfer-coding = token *( OWS ";" OWS transfer-parameter ) */
int http_transfer_coding(const char *e, size_t n, const char **error)
{
	size_t tok = (size_t)(http_skip_token(e, e + n) - e);
	size_t i = tok;
	while (i < n && is_ows(e[i]))
		i++;
	bool params = i < n;
	if (tok == 0 || (params && e[i] != ';')) {
		*error = "invalid Transfer-Encoding";
		return -1;
	}
	if (!http_eq_nocase(e, tok, "chunked"))
		return 0;
	if (params) {
		*error = "chunked takes no parameters";
		return -1;
	}
	return 1;
}

static int note_coding(struct http_request *req, struct framing *f, const char *e, size_t n)
{
	const char *error;
	int coding = http_transfer_coding(e, n, &error);
	if (coding < 0)
		return fail(req, 400, error);
	if (coding == 1) {
		f->te_chunked++;
		f->te_chunked_last = true;
	} else {
		f->te_unknown = true;
		f->te_chunked_last = false;
	}
	return 0;
}

static int note_connection_option(struct http_request *req, struct framing *f, const char *e,
				  size_t n)
{
	(void)req;
	if (http_eq_nocase(e, n, "close"))
		f->conn_close = true;
	else if (http_eq_nocase(e, n, "keep-alive"))
		f->conn_keep_alive = true;
	return 0;
}

/* Content-Length = 1*DIGIT, at most INT64_MAX. One field only: a list or a
 * repeat, even of the same value, is refused rather than reconciled. */
static int note_content_length(struct http_request *req, struct framing *f,
			       const struct http_header *h)
{
	if (f->length_seen)
		return fail(req, 400, "more than one Content-Length");
	f->length_seen = true;
	if (h->value_len == 0)
		return fail(req, 400, "empty Content-Length");
	uint64_t v = 0;
	for (size_t i = 0; i < h->value_len; i++) {
		char c = h->value[i];
		if (!IS_DIGIT(c))
			return fail(req, 400, "invalid Content-Length");
		unsigned d = (unsigned)(c - '0');
		if (v > ((uint64_t)INT64_MAX - d) / 10)
			return fail(req, 400, "Content-Length too large");
		v = v * 10 + d;
	}
	req->content_length = v;
	return 0;
}

static int note_transfer_encoding(struct http_request *req, struct framing *f,
				  const struct http_header *h)
{
	size_t codings;
	f->te_seen = true;
	int r = for_each_element(req, f, h, note_coding, &codings);
	if (r == 0 && codings == 0)
		r = fail(req, 400, "empty Transfer-Encoding");
	return r;
}

/* RFC 9110 7.2 / RFC 9112 3.2: one Host, with a valid value. An empty value
 * is allowed (it is what a client sends for a target without authority). */
static int note_host(struct http_request *req, struct framing *f, const struct http_header *h)
{
	if (f->host_seen)
		return fail(req, 400, "more than one Host");
	f->host_seen = true;
	if (h->value_len != 0 && !valid_authority(h->value, h->value_len))
		return fail(req, 400, "invalid Host");
	if (req->host == NULL) { /* an absolute-form target's authority wins */
		req->host = h->value;
		req->host_len = h->value_len;
	}
	return 0;
}

/* Expect values other than 100-continue are ignored rather than answered
 * with 417: the request is simply processed without the interim response. */
static int note_field(struct http_request *req, struct framing *f, const struct http_header *h)
{
	size_t count;
	switch (h->name_len) {
	case 4:
		if (http_eq_nocase(h->name, 4, "host"))
			return note_host(req, f, h);
		break;
	case 6:
		if (http_eq_nocase(h->name, 6, "expect") &&
		    http_eq_nocase(h->value, h->value_len, "100-continue"))
			f->expect_continue = true;
		break;
	case 10:
		if (http_eq_nocase(h->name, 10, "connection"))
			return for_each_element(req, f, h, note_connection_option, &count);
		break;
	case 14:
		if (http_eq_nocase(h->name, 14, "content-length"))
			return note_content_length(req, f, h);
		break;
	case 17:
		if (http_eq_nocase(h->name, 17, "transfer-encoding"))
			return note_transfer_encoding(req, f, h);
		break;
	}
	return 0;
}

static int parse_field(struct scan *s, struct http_request *req, struct http_header *h)
{
	const char *detail;
	int n = http_parse_field_line(s->p, s->end, h, &detail);
	if (n == HTTP_INCOMPLETE)
		return out_of_bytes(s, req);
	if (n == HTTP_ERROR)
		return fail(req, 400, detail);
	s->p += n;
	return 0;
}

/* Field lines up to and including the empty line that ends the head. */
static int parse_fields(struct scan *s, struct http_request *req, size_t max_fields,
			struct framing *f)
{
	for (;;) {
		if (s->p == s->end)
			return out_of_bytes(s, req);
		char c = *s->p;
		if (c == '\r')
			return expect_lf(s, req, s->p);
		if (c == '\n')
			return fail(req, 400, "bare LF");
		if (is_ows(c)) /* RFC 9112 5.2: obs-fold is rejected */
			return fail(req, 400, "obsolete line folding");
		if (req->num_headers == max_fields)
			return fail(req, 431, "too many header fields");
		struct http_header *h = &req->headers[req->num_headers];
		int r = parse_field(s, req, h);
		if (r == 0)
			r = note_field(req, f, h);
		if (r != 0)
			return r;
		req->num_headers++;
	}
}

/* RFC 9112 6.1-6.3: a message accepted here has exactly one body length.
 * Conflicts are 400 (faulty framing, the connection must close); a coding
 * we cannot decode is 501. */
static int judge_framing(struct http_request *req, const struct framing *f)
{
	if (req->minor_version == 1 && !f->host_seen)
		return fail(req, 400, "missing Host");
	if (f->te_seen) {
		if (req->minor_version == 0)
			return fail(req, 400, "Transfer-Encoding in an HTTP/1.0 request");
		if (f->length_seen)
			return fail(req, 400, "both Transfer-Encoding and Content-Length");
		if (f->te_chunked > 1)
			return fail(req, 400, "chunked applied more than once");
		if (f->te_chunked == 1 && !f->te_chunked_last)
			return fail(req, 400, "chunked is not the final transfer coding");
		if (f->te_unknown)
			return fail(req, 501, "unsupported transfer coding");
		req->body_kind = HTTP_BODY_CHUNKED;
	} else if (f->length_seen) {
		req->body_kind = HTTP_BODY_LENGTH;
	}
	if (req->minor_version == 1)
		req->keep_alive = !f->conn_close;
	else
		req->keep_alive = f->conn_keep_alive && !f->conn_close;
	/* RFC 9110 10.1.1: a 100-continue in an HTTP/1.0 request is ignored. */
	req->expect_continue = f->expect_continue && req->minor_version == 1;
	return 0;
}

static void reset_request(struct http_request *req)
{
	struct http_header *headers = req->headers;
	size_t capacity = req->header_capacity;
	*req = (struct http_request){ 0 };
	req->headers = headers;
	req->header_capacity = capacity;
	req->body_kind = HTTP_BODY_NONE;
}

int http_parse_request(const char *buf, size_t len, struct http_request *req,
		       const struct http_limits *limits)
{
	reset_request(req);
	/* The head's length is returned as an int. */
	size_t head_max = limits->max_header_bytes < (size_t)INT_MAX ? limits->max_header_bytes
								      : (size_t)INT_MAX;
	struct scan s = {
		.p = buf,
		.end = buf + (len < head_max ? len : head_max),
		.end_is_limit = len >= head_max,
		.limit_status = 431,
		.limit_detail = "request header too large",
	};
	int r = skip_empty_lines(&s, req);
	if (r != 0)
		return r;

	/* The request line sees a narrower window when its own limit is
	 * closer than the head's. */
	struct scan line = s;
	if ((size_t)(s.end - s.p) >= limits->max_request_line) {
		line.end = s.p + limits->max_request_line;
		line.end_is_limit = true;
		line.limit_status = 414;
		line.limit_detail = "request line too long";
	}
	r = parse_request_line(&line, req);
	if (r != 0)
		return r;
	s.p = line.p;

	size_t max_fields = limits->max_headers < req->header_capacity ? limits->max_headers
									: req->header_capacity;
	struct framing f = { 0 };
	r = parse_fields(&s, req, max_fields, &f);
	if (r == 0)
		r = judge_framing(req, &f);
	if (r != 0)
		return r;
	return (int)(s.p - buf);
}

/* ---- chunked body (RFC 9112 7.1) -------------------------------------- */

enum chunk_state {
	CS_SIZE = 0,      /* hex digits; line_bytes counts them */
	CS_SIZE_WS,       /* BWS after the size */
	CS_EXT,           /* chunk-ext, checked for stray controls, then skipped */
	CS_SIZE_LF,       /* CR that ends the size line seen */
	CS_DATA,          /* bytes_left_in_chunk data octets to copy */
	CS_DATA_CR,       /* the CRLF that must follow the data */
	CS_DATA_LF,
	CS_TRAILER_START, /* start of a trailer field, or of the final CRLF */
	CS_TRAILER_NAME,
	CS_TRAILER_VALUE,
	CS_TRAILER_LF,
	CS_END_LF, /* CR of the final empty line seen */
	CS_DONE,
	CS_ERROR,
};

static bool chunk_fail(struct http_chunked_decoder *d, const char *detail)
{
	d->state = CS_ERROR;
	d->error_detail = detail;
	return false;
}

/* After the digits: chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS
 * ext-val ] ). Extensions are only checked for stray controls and skipped;
 * whitespace is allowed only before a ';', so "5 5" or "5 " is refused.
 * The line's length is bounded, so a peer cannot stream an endless run of
 * zeros or extensions that no body limit would ever count. */
static bool size_line_byte(struct http_chunked_decoder *d, unsigned char c)
{
	if (++d->line_bytes > HTTP_CHUNK_LINE_MAX)
		return chunk_fail(d, "chunk size line too long");
	if (d->state == CS_EXT) {
		if (c == '\r')
			d->state = CS_SIZE_LF;
		else if (!has_class((char)c, C_VALUE))
			return chunk_fail(d, "invalid character in chunk extension");
		return true;
	}
	if (c == '\r' && d->state == CS_SIZE)
		d->state = CS_SIZE_LF;
	else if (c == '\n')
		return chunk_fail(d, "bare LF after chunk size");
	else if (c == ';')
		d->state = CS_EXT;
	else if (is_ows((char)c))
		d->state = CS_SIZE_WS;
	else
		return chunk_fail(d, "invalid character after chunk size");
	return true;
}

static bool size_byte(struct http_chunked_decoder *d, unsigned char c)
{
	int v = ig_hex_digit((char)c);
	if (v < 0) {
		if (d->line_bytes == 0)
			return chunk_fail(d, "missing chunk size");
		return size_line_byte(d, c);
	}
	if (d->line_bytes == 16) /* 16 hex digits fill a uint64_t */
		return chunk_fail(d, "chunk size too large");
	d->line_bytes++;
	d->bytes_left_in_chunk = d->bytes_left_in_chunk << 4 | (uint64_t)v;
	return true;
}

static bool trailer_byte(struct http_chunked_decoder *d, unsigned char c)
{
	if (++d->trailer_bytes > d->max_trailer_bytes)
		return chunk_fail(d, "trailer section too large");
	switch (d->state) {
	case CS_TRAILER_START:
		if (has_class((char)c, C_TCHAR)) {
			d->state = CS_TRAILER_NAME;
			return true;
		}
		return chunk_fail(d, is_ows((char)c) ? "obsolete line folding in trailer"
						      : "invalid trailer field name");
	case CS_TRAILER_NAME:
		if (c == ':')
			d->state = CS_TRAILER_VALUE;
		else if (!has_class((char)c, C_TCHAR))
			return chunk_fail(d, "invalid trailer field name");
		return true;
	case CS_TRAILER_VALUE:
		if (c == '\r')
			d->state = CS_TRAILER_LF;
		else if (!has_class((char)c, C_VALUE))
			return chunk_fail(d, "invalid trailer field value");
		return true;
	default: /* CS_TRAILER_LF */
		if (c != '\n')
			return chunk_fail(d, "bare CR in trailer");
		d->state = CS_TRAILER_START;
		return true;
	}
}

/* Advances the decoder by one framing octet (anything but chunk data). */
static bool chunk_step(struct http_chunked_decoder *d, unsigned char c)
{
	switch (d->state) {
	case CS_SIZE:
		return size_byte(d, c);
	case CS_SIZE_WS:
	case CS_EXT:
		return size_line_byte(d, c);
	case CS_SIZE_LF:
		if (c != '\n')
			return chunk_fail(d, "bare CR after chunk size");
		d->line_bytes = 0;
		d->state = d->bytes_left_in_chunk == 0 ? CS_TRAILER_START : CS_DATA;
		return true;
	case CS_DATA_CR:
		if (c != '\r')
			return chunk_fail(d, "missing CRLF after chunk data");
		d->state = CS_DATA_LF;
		return true;
	case CS_DATA_LF:
		if (c != '\n')
			return chunk_fail(d, "missing CRLF after chunk data");
		d->state = CS_SIZE;
		return true;
	case CS_TRAILER_START:
		if (c == '\r') { /* the empty line: no trailer byte */
			d->state = CS_END_LF;
			return true;
		}
		if (c == '\n')
			return chunk_fail(d, "bare LF in trailer section");
		return trailer_byte(d, c);
	case CS_TRAILER_NAME:
	case CS_TRAILER_VALUE:
	case CS_TRAILER_LF:
		return trailer_byte(d, c);
	case CS_END_LF:
		if (c != '\n')
			return chunk_fail(d, "bare CR after trailer section");
		d->state = CS_DONE;
		return true;
	default:
		return chunk_fail(d, "decoder in an invalid state");
	}
}

ssize_t http_decode_chunked(struct http_chunked_decoder *d, char *buf, size_t *len)
{
	char *dst = buf;
	const char *src = buf, *end = buf + *len;
	if (d->state == CS_ERROR) {
		*len = 0;
		return HTTP_ERROR;
	}
	while (src < end && d->state != CS_DONE) {
		if (d->state == CS_DATA) {
			size_t n = (size_t)(end - src);
			if (d->bytes_left_in_chunk < n)
				n = (size_t)d->bytes_left_in_chunk;
			memmove(dst, src, n);
			dst += n;
			src += n;
			d->bytes_left_in_chunk -= n;
			d->total += n;
			if (d->bytes_left_in_chunk == 0)
				d->state = CS_DATA_CR;
		} else if (!chunk_step(d, (unsigned char)*src++)) {
			*len = (size_t)(dst - buf);
			return HTTP_ERROR;
		}
	}
	*len = (size_t)(dst - buf);
	if (d->state != CS_DONE)
		return HTTP_INCOMPLETE;
	size_t rest = (size_t)(end - src);
	memmove(dst, src, rest);
	return (ssize_t)rest;
}

/* ---- field syntax for other parsers ----------------------------------- */

const char *http_skip_token(const char *p, const char *end)
{
	while (p < end && has_class(*p, C_TCHAR))
		p++;
	return p;
}

const char *http_skip_field_value(const char *p, const char *end)
{
	return skip_class(p, end, C_VALUE, word_is_value);
}

static int field_error(const char **error, const char *message)
{
	*error = message;
	return HTTP_ERROR;
}

int http_parse_field_line(const char *start, const char *end, struct http_header *h, const char **error)
{
	const char *p = http_skip_token(start, end);
	if (p == end)
		return HTTP_INCOMPLETE;
	if (p == start)
		return field_error(error, *p == ':' ? "empty field name" : "invalid character in field name");
	if (*p != ':')
		return field_error(error, is_ows(*p) ? "whitespace before colon" : "invalid character in field name");
	h->name = start;
	h->name_len = (size_t)(p - start);
	for (p++; p < end && is_ows(*p); p++)
		;
	const char *value = p;
	p = http_skip_field_value(p, end);
	if (p == end)
		return HTTP_INCOMPLETE;
	if (*p != '\r')
		return field_error(error, *p == '\n' ? "bare LF" : "invalid character in field value");
	if (p + 1 == end)
		return HTTP_INCOMPLETE;
	if (p[1] != '\n')
		return field_error(error, "bare CR");
	const char *next = p + 2;
	while (p > value && is_ows(p[-1]))
		p--;
	h->value = value;
	h->value_len = (size_t)(p - value);
	return (int)(next - start);
}
