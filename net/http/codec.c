/* The shared half of the HTTP/1 codec: octet classes, the scanning windows,
 * the version, field lines and the framing judgement that requests
 * (parser.c) and responses (response_head.c) go through alike. One forward
 * scan over the caller's bytes, never past the end it was given. */
#include "codec.h"
#include "net/ascii.h"

#include <string.h>

/* ---- character classes ------------------------------------------------ */

/* One table lookup per byte on the hot path. The table is built by the
 * compiler from the grammar below, so the rules stay readable. */
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
/* qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text */
#define IS_QDTEXT(c) \
	((c) == '\t' || (c) == ' ' || (c) >= 0x80 || (IS_VCHAR(c) && (c) != '"' && (c) != '\\'))

#define CLASS(c)                                                                     \
	((IS_ALPHA(c) || IS_DIGIT(c) || IS_TSPECIAL(c) ? HTTP_C_TCHAR : 0) |          \
	 (IS_VCHAR(c) || (c) == ' ' || (c) == '\t' || (c) >= 0x80 ? HTTP_C_VALUE : 0) | \
	 (IS_VCHAR(c) && (c) != '#' ? HTTP_C_TARGET : 0) |                             \
	 (IS_UNRESERVED(c) || IS_SUBDELIM(c) || (c) == '%' ? HTTP_C_HOST : 0) |        \
	 (IS_QDTEXT(c) ? HTTP_C_QDTEXT : 0))
#define CLASS4(c) CLASS(c), CLASS((c) + 1), CLASS((c) + 2), CLASS((c) + 3)
#define CLASS16(c) CLASS4(c), CLASS4((c) + 4), CLASS4((c) + 8), CLASS4((c) + 12)
#define CLASS64(c) CLASS16(c), CLASS16((c) + 16), CLASS16((c) + 32), CLASS16((c) + 48)

const unsigned char ig_http_char_class[256] = {
	CLASS64(0), CLASS64(64), CLASS64(128), CLASS64(192),
};

IG_HOT bool ig_http_eq_nocase(const char *s, size_t n, const char *lower)
{
	size_t i = 0;
	for (; i < n; i++)
		if (lower[i] == '\0' || ig_ascii_lower(s[i]) != lower[i])
			return false;
	return lower[i] == '\0';
}

IG_HOT bool ig_http_same_nocase(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ig_ascii_lower(a[i]) != ig_ascii_lower(b[i]))
			return false;
	return true;
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
		while (p < stop && http_has_class(*p, cls))
			p++;
		if (p != stop || p == end)
			return p;
	}
}

IG_HOT const char *ig_http_skip_token(const char *p, const char *end)
{
	while (p < end && http_has_class(*p, HTTP_C_TCHAR))
		p++;
	return p;
}

const char *ig_http_skip_field_value(const char *p, const char *end)
{
	return skip_class(p, end, HTTP_C_VALUE, word_is_value);
}

IG_HOT const char *ig_http_skip_target(const char *p, const char *end)
{
	return skip_class(p, end, HTTP_C_TARGET, word_is_target);
}

/* ---- version ----------------------------------------------------------- */

/* Judged octet by octet, so that a reply that is not HTTP at all (a TLS
 * alert, an HTML page) or a garbage version fails at once. */
IG_HOT int ig_http_scan_version(struct http_scan *s, const struct http_direction *dir, int *major, int *minor)
{
	static const char name[] = "HTTP/";
	const char *p = s->p;
	if (s->end - p >= 8 && memcmp(p, "HTTP/1.", 7) == 0 && IS_DIGIT(p[7])) {
		p += 8; /* the common case, for which the loop would decide the same */
		goto done;
	}
	for (size_t i = 0; i < 8; i++, p++) {
		if (p == s->end)
			return http_out_of_bytes(s);
		char c = *p;
		if (i < 5 && c != name[i])
			return http_fail(s, HTTP_ERR_SYNTAX, dir->not_http);
		if ((i == 5 || i == 7) && !IS_DIGIT(c))
			return http_fail(s, HTTP_ERR_SYNTAX, "malformed HTTP version");
		if (i == 5 && c != '1' && dir->major_at_once)
			return http_fail(s, HTTP_ERR_VERSION, "unsupported HTTP version");
		if (i == 6 && c != '.')
			return http_fail(s, HTTP_ERR_SYNTAX, "malformed HTTP version");
	}
done:
	*major = s->p[5] - '0';
	*minor = s->p[7] - '0';
	s->p = p;
	return 0;
}

/* ---- fields ------------------------------------------------------------ */

IG_HOT bool ig_http_valid_authority(const char *a, size_t n)
{
	size_t i = 0;
	if (n > 0 && a[0] == '[') { /* IP-literal */
		for (i = 1; i < n && a[i] != ']'; i++)
			if (!http_has_class(a[i], HTTP_C_HOST) && a[i] != ':')
				return false;
		if (i == n || i == 1)
			return false;
		i++;
	} else {
		while (i < n && http_has_class(a[i], HTTP_C_HOST))
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

const char *ig_http_list_element(const char *p, const char *end, const char **e, const char **e_end)
{
	const char *comma = memchr(p, ',', (size_t)(end - p));
	*e = p;
	*e_end = comma ? comma : end;
	while (*e < *e_end && http_is_ows(**e))
		++*e;
	while (*e_end > *e && http_is_ows((*e_end)[-1]))
		--*e_end;
	return comma;
}

/* Calls `fn` on each non-empty element of a comma-separated list, trimmed
 * of OWS (RFC 9110 5.6.1: empty elements are ignored), and counts them. */
typedef int element_fn(struct http_scan *s, struct http_fields *f, const char *e, size_t n);

static int for_each_element(struct http_scan *s, struct http_fields *f, const ig_header *h,
			    element_fn *fn, size_t *count)
{
	*count = 0;
	const char *p = h->value.ptr, *end = h->value.ptr + h->value.len;
	while (p < end) {
		const char *e, *e_end, *comma = ig_http_list_element(p, end, &e, &e_end);
		if (e < e_end) {
			++*count;
			int r = fn(s, f, e, (size_t)(e_end - e));
			if (r != 0)
				return r;
		}
		p = comma ? comma + 1 : end;
	}
	return 0;
}

/* transfer-coding = token *( OWS ";" OWS transfer-parameter ) */
int ig_http_transfer_coding(const char *e, size_t n, const char **error)
{
	size_t tok = (size_t)(ig_http_skip_token(e, e + n) - e);
	size_t i = tok;
	while (i < n && http_is_ows(e[i]))
		i++;
	bool params = i < n;
	if (tok == 0 || (params && e[i] != ';')) {
		*error = "invalid Transfer-Encoding";
		return -1;
	}
	if (!ig_http_eq_nocase(e, tok, "chunked"))
		return 0;
	if (params) {
		*error = "chunked takes no parameters";
		return -1;
	}
	return 1;
}

static int note_coding(struct http_scan *s, struct http_fields *f, const char *e, size_t n)
{
	const char *error;
	int coding = ig_http_transfer_coding(e, n, &error);
	if (coding < 0)
		return http_fail(s, HTTP_ERR_FRAMING, error);
	if (coding == 1) {
		f->te_chunked++;
		f->te_chunked_last = true;
	} else {
		f->te_unknown = true;
		f->te_chunked_last = false;
	}
	return 0;
}

static int note_connection_option(struct http_scan *s, struct http_fields *f, const char *e, size_t n)
{
	(void)s;
	if (ig_http_eq_nocase(e, n, "close"))
		f->conn_close = true;
	else if (ig_http_eq_nocase(e, n, "keep-alive"))
		f->conn_keep_alive = true;
	return 0;
}

/* 1*DIGIT, at most INT64_MAX; a repeat must say the same. */
static inline int note_length(struct http_scan *s, struct http_fields *f, const char *e, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!IS_DIGIT(e[i]))
			return http_fail(s, HTTP_ERR_FRAMING, "invalid Content-Length");
		unsigned d = (unsigned)(e[i] - '0');
		if (v > ((uint64_t)INT64_MAX - d) / 10)
			return http_fail(s, HTTP_ERR_FRAMING, "Content-Length too large");
		v = v * 10 + d;
	}
	if (f->length_seen && f->length != v)
		return http_fail(s, HTTP_ERR_FRAMING, "conflicting Content-Length values");
	f->length_seen = true;
	f->length = v;
	return 0;
}

/* A request's Content-Length is one field, never a list or a repeat, even
 * of the same value: refused rather than reconciled. RFC 9110 8.6 lets a
 * recipient accept a repeat of one value, as a field or as a list element
 * ("5, 5"), which responses may carry; an empty element is still refused,
 * as no sender writes one by mistake. */
static int note_content_length(struct http_scan *s, const struct http_direction *dir,
			       struct http_fields *f, const ig_header *h)
{
	if (dir->request && f->length_seen)
		return http_fail(s, HTTP_ERR_FRAMING, "more than one Content-Length");
	if (h->value.len == 0)
		return http_fail(s, HTTP_ERR_FRAMING, "empty Content-Length");
	if (dir->request)
		return note_length(s, f, h->value.ptr, h->value.len);
	const char *p = h->value.ptr, *end = h->value.ptr + h->value.len;
	for (;;) {
		const char *e, *e_end, *comma = ig_http_list_element(p, end, &e, &e_end);
		if (e == e_end)
			return http_fail(s, HTTP_ERR_FRAMING, "invalid Content-Length");
		int r = note_length(s, f, e, (size_t)(e_end - e));
		if (r != 0 || comma == NULL)
			return r;
		p = comma + 1;
	}
}

static int note_transfer_encoding(struct http_scan *s, struct http_fields *f, const ig_header *h)
{
	size_t codings;
	f->te_seen = true;
	int r = for_each_element(s, f, h, note_coding, &codings);
	if (r == 0 && codings == 0)
		r = http_fail(s, HTTP_ERR_FRAMING, "empty Transfer-Encoding");
	return r;
}

/* RFC 9110 7.2 / RFC 9112 3.2: one Host, with a valid value. An empty value
 * is allowed (it is what a client sends for a target without authority). */
static int note_host(struct http_scan *s, struct http_fields *f, const ig_header *h)
{
	if (f->host_seen)
		return http_fail(s, HTTP_ERR_SYNTAX, "more than one Host");
	f->host_seen = true;
	if (h->value.len != 0 && !ig_http_valid_authority(h->value.ptr, h->value.len))
		return http_fail(s, HTTP_ERR_SYNTAX, "invalid Host");
	f->host = h->value.ptr;
	f->host_len = h->value.len;
	return 0;
}

/* Expect values other than 100-continue are ignored rather than answered
 * with 417: the request is simply processed without the interim response. */
/* The trace fields are noted while the fields are scanned anyway, so that
 * finding them costs the request path no second pass; their first letter
 * is tested first because Content-Type and Connection share their lengths. */
static void note_trace_field(uint16_t *first, uint16_t *count, size_t index)
{
	if (!*first && index < UINT16_MAX)
		*first = (uint16_t)(index + 1);
	if (*count < UINT16_MAX)
		++*count;
}

int ig_http_note_field(struct http_scan *s, const struct http_direction *dir, struct http_fields *f,
		       const ig_header *h, size_t index)
{
	size_t count;
	switch (h->name.len) {
	case 4:
		if (dir->request && ig_http_eq_nocase(h->name.ptr, 4, "host"))
			return note_host(s, f, h);
		break;
	case 6:
		if (dir->request && ig_http_eq_nocase(h->name.ptr, 6, "expect") &&
		    ig_http_eq_nocase(h->value.ptr, h->value.len, "100-continue"))
			f->expect_continue = true;
		break;
	case 10:
		if (ig_http_eq_nocase(h->name.ptr, 10, "connection"))
			return for_each_element(s, f, h, note_connection_option, &count);
		if (dir->request && (h->name.ptr[0] | 0x20) == 't' && ig_http_eq_nocase(h->name.ptr, 10, "tracestate"))
			note_trace_field(&f->tracestate_field, &f->tracestates, index);
		break;
	case 11:
		if (dir->request && (h->name.ptr[0] | 0x20) == 't' && ig_http_eq_nocase(h->name.ptr, 11, "traceparent"))
			note_trace_field(&f->traceparent_field, &f->traceparents, index);
		break;
	case 12:
		if (dir->request && (h->name.ptr[0] | 0x20) == 'x' && ig_http_eq_nocase(h->name.ptr, 12, "x-request-id")) {
			uint16_t ignored = 0;
			note_trace_field(&f->request_id_field, &ignored, index);
		}
		break;
	case 14:
		if (ig_http_eq_nocase(h->name.ptr, 14, "content-length"))
			return note_content_length(s, dir, f, h);
		break;
	case 17:
		if (ig_http_eq_nocase(h->name.ptr, 17, "transfer-encoding"))
			return note_transfer_encoding(s, f, h);
		break;
	}
	return 0;
}

IG_HOT int ig_http_parse_field_line(const char *start, const char *end, ig_header *h, const char **error)
{
	const char *p = ig_http_skip_token(start, end);
	if (p == end)
		return HTTP_INCOMPLETE;
	if (p == start) {
		*error = *p == ':' ? "empty field name" : "invalid character in field name";
		return HTTP_ERROR;
	}
	if (*p != ':') {
		*error = http_is_ows(*p) ? "whitespace before colon" : "invalid character in field name";
		return HTTP_ERROR;
	}
	h->name = (ig_str){ start, (size_t)(p - start) };
	for (p++; p < end && http_is_ows(*p); p++)
		;
	const char *value = p;
	p = ig_http_skip_field_value(p, end);
	if (p == end)
		return HTTP_INCOMPLETE;
	if (*p != '\r') {
		*error = *p == '\n' ? "bare LF" : "invalid character in field value";
		return HTTP_ERROR;
	}
	if (p + 1 == end)
		return HTTP_INCOMPLETE;
	if (p[1] != '\n') {
		*error = "bare CR";
		return HTTP_ERROR;
	}
	const char *next = p + 2;
	while (p > value && http_is_ows(p[-1]))
		p--;
	h->value = (ig_str){ value, (size_t)(p - value) };
	return (int)(next - start);
}

static int parse_field(struct http_scan *s, ig_header *h)
{
	const char *detail;
	int n = ig_http_parse_field_line(s->p, s->end, h, &detail);
	if (n == HTTP_INCOMPLETE)
		return http_out_of_bytes(s);
	if (n == HTTP_ERROR)
		return http_fail(s, HTTP_ERR_SYNTAX, detail);
	s->p += n;
	return 0;
}

IG_HOT int ig_http_parse_fields(struct http_scan *s, const struct http_direction *dir, ig_header *headers,
		      size_t max_fields, size_t *count, struct http_fields *f)
{
	for (;;) {
		if (s->p == s->end)
			return http_out_of_bytes(s);
		char c = *s->p;
		if (c == '\r')
			return http_expect_lf(s, s->p);
		if (c == '\n')
			return http_fail(s, HTTP_ERR_SYNTAX, "bare LF");
		if (http_is_ows(c)) /* RFC 9112 5.2: obs-fold is refused */
			return http_fail(s, HTTP_ERR_SYNTAX, "obsolete line folding");
		if (*count == max_fields)
			return http_fail(s, HTTP_ERR_TOO_MANY_FIELDS, "too many header fields");
		ig_header *h = &headers[*count];
		int r = parse_field(s, h);
		if (r == 0)
			r = ig_http_note_field(s, dir, f, h, *count);
		if (r != 0)
			return r;
		++*count;
	}
}

/* ---- framing ----------------------------------------------------------- */

/* Conflicts are faulty framing (the connection must close); CL with TE is
 * the classic smuggling shape, so it is refused, not resolved. */
IG_HOT int ig_http_judge_framing(struct http_scan *s, const struct http_direction *dir, int minor_version,
		       const struct http_fields *f, enum http_body_kind *body, bool *keep_alive)
{
	*body = HTTP_BODY_NONE;
	if (f->te_seen) {
		if (minor_version == 0)
			return http_fail(s, HTTP_ERR_FRAMING, dir->te_in_http10);
		if (f->length_seen)
			return http_fail(s, HTTP_ERR_FRAMING, "both Transfer-Encoding and Content-Length");
		if (f->te_chunked > 1)
			return http_fail(s, HTTP_ERR_FRAMING, "chunked applied more than once");
		if (f->te_chunked == 1 && !f->te_chunked_last)
			return http_fail(s, HTTP_ERR_FRAMING, "chunked is not the final transfer coding");
		if (f->te_unknown)
			return http_fail(s, HTTP_ERR_NOT_IMPLEMENTED, "unsupported transfer coding");
		*body = HTTP_BODY_CHUNKED;
	} else if (f->length_seen) {
		*body = HTTP_BODY_LENGTH;
	}
	/* 1.1 (and a response's 1.2..1.9, read as 1.1): open unless "close";
	   1.0: only with "keep-alive". */
	if (minor_version >= 1)
		*keep_alive = !f->conn_close;
	else
		*keep_alive = f->conn_keep_alive && !f->conn_close;
	return 0;
}
