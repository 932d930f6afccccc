/* Unit tests of net/http/response_head: a table of valid and invalid response
 * heads, each named after the rule it exercises; every input is placed flush
 * against an unreadable page, parsed whole and fed byte by byte (a growing
 * buffer, parsed again at each byte, as a connection does), which must give
 * the same verdict. Then interim responses, a chunked body through the
 * server's decoder, and pipelined responses on one buffer. */
#define _DEFAULT_SOURCE
#include "net/http/response_head.h"
#include "tests/unit/check.h"
#include "tests/unit/fields.h"
#include "tests/unit/guard.h"

#include <stdint.h>
#include <stdlib.h>

#define IN(s) .in = (s), .len = sizeof(s) - 1
#define OK "HTTP/1.1 200 OK\r\n"
#define CL5 "Content-Length: 5\r\n"

static const struct http_limits default_limits = {
	.max_request_line = 8192,
	.max_header_bytes = 16384,
	.max_headers = 64,
};
static const struct http_limits line_24 = { 24, 16384, 64 };
static const struct http_limits head_64 = { 8192, 64, 64 };
static const struct http_limits fields_3 = { 8192, 16384, 3 };

enum ka { KA_DEFAULT, KA_YES, KA_NO }; /* default: yes unless 1.0 or until-close */

struct resp_case {
	const char *name;
	const char *in;
	size_t len;
	bool head_request;
	const struct http_limits *limits; /* NULL: default_limits */
	size_t capacity;                  /* header_capacity; 0: leave 0 */
	const char *error;                /* NULL: valid; else the error expected */
	/* For valid heads (0/NULL fields take the defaults noted): */
	size_t head_len;     /* 0: the whole input */
	int status;          /* 0: 200 */
	int minor;           /* 0: 1; -1: 0 */
	const char *reason;  /* NULL: "OK" */
	const char *headers; /* "name=value|..."; NULL: not checked */
	enum http_body_framing framing; /* BODY_NONE is 0: give it for 1xx etc. */
	uint64_t length;     /* content_length */
	enum ka ka;
};

static const struct resp_case valid_cases[] = {
	/* status line */
	{ "200 with Content-Length", IN(OK CL5 "\r\n"), .headers = "Content-Length=5",
	  .framing = BODY_LENGTH, .length = 5 },
	{ "the body is not part of the head", IN(OK CL5 "\r\nhello"), .head_len = 38,
	  .framing = BODY_LENGTH, .length = 5 },
	{ "reason phrase with spaces, tab and obs-text",
	  IN("HTTP/1.1 404 Not \tFound \xc3\xa9\r\n" CL5 "\r\n"), .status = 404,
	  .reason = "Not \tFound \xc3\xa9", .framing = BODY_LENGTH, .length = 5 },
	{ "empty reason after SP", IN("HTTP/1.1 200 \r\n" CL5 "\r\n"), .reason = "",
	  .framing = BODY_LENGTH, .length = 5 },
	{ "missing SP before an empty reason is tolerated", IN("HTTP/1.1 200\r\n" CL5 "\r\n"),
	  .reason = "", .framing = BODY_LENGTH, .length = 5 },
	{ "status 599 is the highest", IN("HTTP/1.1 599 X\r\n" CL5 "\r\n"), .status = 599,
	  .reason = "X", .framing = BODY_LENGTH, .length = 5 },
	{ "HTTP/1.2 is read as 1.1", IN("HTTP/1.2 200 OK\r\n" CL5 "\r\n"), .minor = 2,
	  .framing = BODY_LENGTH, .length = 5 },
	{ "head with no fields", IN("HTTP/1.1 204 No Content\r\n\r\n"), .status = 204,
	  .reason = "No Content", .headers = "", .framing = BODY_NONE },
	/* keep-alive */
	{ "HTTP/1.0 is not keep-alive by default", IN("HTTP/1.0 200 OK\r\n" CL5 "\r\n"), .minor = -1,
	  .framing = BODY_LENGTH, .length = 5, .ka = KA_NO },
	{ "HTTP/1.0 with Connection: keep-alive is keep-alive",
	  IN("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n" CL5 "\r\n"), .minor = -1,
	  .framing = BODY_LENGTH, .length = 5, .ka = KA_YES },
	{ "HTTP/1.0 with keep-alive and close closes",
	  IN("HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\n" CL5 "\r\n"), .minor = -1,
	  .framing = BODY_LENGTH, .length = 5, .ka = KA_NO },
	{ "Connection: close ends keep-alive", IN(OK "Connection: close\r\n" CL5 "\r\n"),
	  .framing = BODY_LENGTH, .length = 5, .ka = KA_NO },
	{ "Connection close in a list, any case", IN(OK "connection: Upgrade ,, CLOSE \r\n" CL5 "\r\n"),
	  .framing = BODY_LENGTH, .length = 5, .ka = KA_NO },
	{ "Connection close in a second field",
	  IN(OK "Connection: upgrade\r\nConnection: close\r\n" CL5 "\r\n"),
	  .framing = BODY_LENGTH, .length = 5, .ka = KA_NO },
	{ "unrelated Connection options keep-alive", IN(OK "Connection: closed\r\n" CL5 "\r\n"),
	  .framing = BODY_LENGTH, .length = 5, .ka = KA_YES },
	/* framing */
	{ "no Content-Length nor Transfer-Encoding: until close, not keep-alive",
	  IN(OK "X-A: 1\r\n\r\n"), .framing = BODY_UNTIL_CLOSE, .ka = KA_NO },
	{ "chunked", IN(OK "Transfer-Encoding: chunked\r\n\r\n"), .framing = BODY_CHUNKED },
	{ "chunked is case-insensitive, empty list elements ignored",
	  IN(OK "Transfer-Encoding: , CHUNKED ,\r\n\r\n"), .framing = BODY_CHUNKED },
	{ "Content-Length zero", IN(OK "Content-Length: 0\r\n\r\n"), .framing = BODY_LENGTH },
	{ "Content-Length with leading zeros", IN(OK "Content-Length: 0000000000000000000000007\r\n\r\n"),
	  .framing = BODY_LENGTH, .length = 7 },
	{ "Content-Length of INT64_MAX", IN(OK "Content-Length: 9223372036854775807\r\n\r\n"),
	  .framing = BODY_LENGTH, .length = INT64_MAX },
	{ "identical repeated Content-Length fields are one length",
	  IN(OK CL5 "content-length: 5\r\n\r\n"), .framing = BODY_LENGTH, .length = 5 },
	{ "identical Content-Length list elements are one length",
	  IN(OK "Content-Length: 5 , 5,5\r\n\r\n"), .framing = BODY_LENGTH, .length = 5 },
	{ "HEAD response: no body despite Content-Length", IN(OK "Content-Length: 100\r\n\r\n"),
	  .head_request = true, .framing = BODY_NONE, .length = 100 },
	{ "HEAD response: no body despite chunked", IN(OK "Transfer-Encoding: chunked\r\n\r\n"),
	  .head_request = true, .framing = BODY_NONE },
	{ "HEAD response without length is keep-alive", IN(OK "\r\n"), .head_request = true,
	  .framing = BODY_NONE },
	{ "204: no body despite Content-Length", IN("HTTP/1.1 204 No Content\r\n" CL5 "\r\n"),
	  .status = 204, .reason = "No Content", .framing = BODY_NONE, .length = 5 },
	{ "304: no body despite Content-Length", IN("HTTP/1.1 304 Not Modified\r\nContent-Length: 500\r\n\r\n"),
	  .status = 304, .reason = "Not Modified", .framing = BODY_NONE, .length = 500 },
	{ "304 without length is keep-alive", IN("HTTP/1.1 304 Not Modified\r\n\r\n"), .status = 304,
	  .reason = "Not Modified", .framing = BODY_NONE },
	{ "100 Continue is an interim head", IN("HTTP/1.1 100 Continue\r\n\r\n"), .status = 100,
	  .reason = "Continue", .framing = BODY_NONE },
	{ "103 Early Hints with fields", IN("HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"),
	  .status = 103, .reason = "Early Hints", .headers = "Link=</a>; rel=preload",
	  .framing = BODY_NONE },
	/* fields */
	{ "OWS around values is trimmed, empty values kept",
	  IN(OK "X-A: \t 1 2 \t\r\nX-B:\r\nX-C:   \r\n" CL5 "\r\n"),
	  .headers = "X-A=1 2|X-B=|X-C=|Content-Length=5", .framing = BODY_LENGTH, .length = 5 },
	{ "field name with every tchar punctuation", IN(OK "!#$%&'*+-.^_`|~09azAZ: v\r\n" CL5 "\r\n"),
	  .headers = "!#$%&'*+-.^_`|~09azAZ=v|Content-Length=5", .framing = BODY_LENGTH, .length = 5 },
	{ "long value with obs-text", IN(OK "X-A: \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 abcdefghijkl\r\n" CL5 "\r\n"),
	  .framing = BODY_LENGTH, .length = 5 },
	/* limits */
	{ "exactly max_headers fields", IN(OK "A: 1\r\nB: 2\r\n" "Content-Length: 1\r\n\r\n"),
	  .limits = &fields_3, .framing = BODY_LENGTH, .length = 1 },
	{ "head of exactly max_header_bytes", IN(OK "X: 0123456789012345678901234567890123456789\r\n\r\n"),
	  .limits = &head_64, .framing = BODY_UNTIL_CLOSE, .ka = KA_NO },
	{ "status line of exactly max_request_line", IN("HTTP/1.1 200 abcdefghi\r\n" CL5 "\r\n"),
	  .limits = &line_24, .reason = "abcdefghi", .framing = BODY_LENGTH, .length = 5 },
};

static const struct resp_case invalid_cases[] = {
	/* status line */
	{ "an HTML page is not HTTP", IN("<html>\r\n"), .error = "not an HTTP/1.x response" },
	{ "lowercase protocol name", IN("http/1.1 200 OK\r\n\r\n"), .error = "not an HTTP/1.x response" },
	{ "empty line before the status line", IN("\r\n" OK "\r\n"), .error = "not an HTTP/1.x response" },
	{ "HTTP/2.0", IN("HTTP/2.0 200 OK\r\n\r\n"), .error = "unsupported HTTP version" },
	{ "HTTP/2 without minor", IN("HTTP/2 200\r\n\r\n"), .error = "unsupported HTTP version" },
	{ "HTTP/1.x", IN("HTTP/1.x 200 OK\r\n\r\n"), .error = "malformed HTTP version" },
	{ "HTTP/1,1", IN("HTTP/1,1 200 OK\r\n\r\n"), .error = "malformed HTTP version" },
	{ "HTTP/1.10 is not a version", IN("HTTP/1.10 200 OK\r\n\r\n"), .error = "malformed HTTP version" },
	{ "tab after the version", IN("HTTP/1.1\t200 OK\r\n\r\n"), .error = "malformed HTTP version" },
	{ "two spaces before the status", IN("HTTP/1.1  200 OK\r\n\r\n"), .error = "invalid status code" },
	{ "two-digit status", IN("HTTP/1.1 20 OK\r\n\r\n"), .error = "invalid status code" },
	{ "four-digit status", IN("HTTP/1.1 2000 OK\r\n\r\n"), .error = "invalid status code" },
	{ "status below 100", IN("HTTP/1.1 099 X\r\n\r\n"), .error = "invalid status code" },
	{ "status above 599", IN("HTTP/1.1 600 X\r\n\r\n"), .error = "invalid status code" },
	{ "status with a sign", IN("HTTP/1.1 +20 X\r\n\r\n"), .error = "invalid status code" },
	{ "reason glued to the status", IN("HTTP/1.1 200OK\r\n\r\n"), .error = "malformed status line" },
	{ "101 is never asked for", IN("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n"),
	  .error = "unexpected 101 Switching Protocols" },
	{ "NUL in the reason", IN("HTTP/1.1 200 O\0K\r\n\r\n"), .error = "invalid character in reason phrase" },
	{ "DEL in the reason", IN("HTTP/1.1 200 O\x7fK\r\n\r\n"), .error = "invalid character in reason phrase" },
	{ "bare LF ending the status line", IN("HTTP/1.1 200 OK\n" CL5 "\r\n"), .error = "bare LF" },
	{ "bare LF right after the status", IN("HTTP/1.1 200\n\r\n"), .error = "malformed status line" },
	{ "bare CR in the status line", IN("HTTP/1.1 200 OK\rX\r\n\r\n"), .error = "bare CR" },
	/* fields */
	{ "obs-fold", IN(OK "X-A: 1\r\n 2\r\n\r\n"), .error = "obsolete line folding" },
	{ "obs-fold with a tab", IN(OK "X-A: 1\r\n\t2\r\n\r\n"), .error = "obsolete line folding" },
	{ "whitespace before the first field", IN(OK " X-A: 1\r\n\r\n"), .error = "obsolete line folding" },
	{ "whitespace before the colon", IN(OK "Content-Length : 5\r\n\r\n"), .error = "whitespace before colon" },
	{ "empty field name", IN(OK ": v\r\n\r\n"), .error = "empty field name" },
	{ "invalid character in a field name", IN(OK "X(A): v\r\n\r\n"),
	  .error = "invalid character in field name" },
	{ "field line without colon", IN(OK "X-A\r\n\r\n"), .error = "invalid character in field name" },
	{ "NUL in a field value", IN(OK "X-A: a\0b\r\n\r\n"), .error = "invalid character in field value" },
	{ "DEL deep in a long field value", IN(OK "X-A: 0123456789a\x7f" "bcdefghij\r\n\r\n"),
	  .error = "invalid character in field value" },
	{ "escape in a field value", IN(OK "X-A: a\x1b[0m\r\n\r\n"), .error = "invalid character in field value" },
	{ "bare CR in a field value", IN(OK "X-A: a\rb\r\n\r\n"), .error = "bare CR" },
	{ "bare LF ending a field line", IN(OK "X-A: a\n\r\n"), .error = "bare LF" },
	{ "bare LF ending the head", IN(OK "X-A: a\r\n\n"), .error = "bare LF" },
	{ "bare CR ending the head", IN(OK "\rX"), .error = "bare CR" },
	/* Content-Length */
	{ "Content-Length with a plus sign", IN(OK "Content-Length: +5\r\n\r\n"), .error = "invalid Content-Length" },
	{ "Content-Length with a minus sign", IN(OK "Content-Length: -1\r\n\r\n"), .error = "invalid Content-Length" },
	{ "Content-Length in hex", IN(OK "Content-Length: 0x5\r\n\r\n"), .error = "invalid Content-Length" },
	{ "Content-Length with an inner space", IN(OK "Content-Length: 1 2\r\n\r\n"), .error = "invalid Content-Length" },
	{ "Content-Length with a fraction", IN(OK "Content-Length: 5.0\r\n\r\n"), .error = "invalid Content-Length" },
	{ "empty Content-Length", IN(OK "Content-Length:  \r\n\r\n"), .error = "empty Content-Length" },
	{ "Content-Length list with an empty element", IN(OK "Content-Length: 5,\r\n\r\n"),
	  .error = "invalid Content-Length" },
	{ "Content-Length list of different values", IN(OK "Content-Length: 5, 6\r\n\r\n"),
	  .error = "conflicting Content-Length values" },
	{ "Content-Length fields of different values", IN(OK CL5 "Content-Length: 50\r\n\r\n"),
	  .error = "conflicting Content-Length values" },
	{ "Content-Length of INT64_MAX+1", IN(OK "Content-Length: 9223372036854775808\r\n\r\n"),
	  .error = "Content-Length too large" },
	{ "Content-Length overflowing 64 bits", IN(OK "Content-Length: 99999999999999999999999\r\n\r\n"),
	  .error = "Content-Length too large" },
	/* Transfer-Encoding */
	{ "Transfer-Encoding and Content-Length", IN(OK "Transfer-Encoding: chunked\r\n" CL5 "\r\n"),
	  .error = "both Transfer-Encoding and Content-Length" },
	{ "Content-Length and Transfer-Encoding", IN(OK CL5 "Transfer-Encoding: chunked\r\n\r\n"),
	  .error = "both Transfer-Encoding and Content-Length" },
	{ "Transfer-Encoding and Content-Length in a HEAD response",
	  IN(OK CL5 "Transfer-Encoding: chunked\r\n\r\n"), .head_request = true,
	  .error = "both Transfer-Encoding and Content-Length" },
	{ "Transfer-Encoding and Content-Length in a 304",
	  IN("HTTP/1.1 304 Not Modified\r\n" CL5 "Transfer-Encoding: chunked\r\n\r\n"),
	  .error = "both Transfer-Encoding and Content-Length" },
	{ "Transfer-Encoding in HTTP/1.0", IN("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
	  .error = "Transfer-Encoding in an HTTP/1.0 response" },
	{ "Transfer-Encoding gzip", IN(OK "Transfer-Encoding: gzip\r\n\r\n"), .error = "unsupported transfer coding" },
	{ "Transfer-Encoding gzip, chunked", IN(OK "Transfer-Encoding: gzip, chunked\r\n\r\n"),
	  .error = "unsupported transfer coding" },
	{ "chunked not final", IN(OK "Transfer-Encoding: chunked, gzip\r\n\r\n"),
	  .error = "chunked is not the final transfer coding" },
	{ "chunked not final across two fields",
	  IN(OK "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n"),
	  .error = "chunked is not the final transfer coding" },
	{ "chunked twice", IN(OK "Transfer-Encoding: chunked, chunked\r\n\r\n"),
	  .error = "chunked applied more than once" },
	{ "chunked in two fields", IN(OK "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"),
	  .error = "chunked applied more than once" },
	{ "empty Transfer-Encoding", IN(OK "Transfer-Encoding:\r\n\r\n"), .error = "empty Transfer-Encoding" },
	{ "Transfer-Encoding of commas only", IN(OK "Transfer-Encoding: , ,\r\n\r\n"),
	  .error = "empty Transfer-Encoding" },
	{ "chunked with parameters", IN(OK "Transfer-Encoding: chunked;q=1\r\n\r\n"),
	  .error = "chunked takes no parameters" },
	{ "transfer coding that is not a token", IN(OK "Transfer-Encoding: chu@nked\r\n\r\n"),
	  .error = "invalid Transfer-Encoding" },
	{ "transfer coding with a space inside", IN(OK "Transfer-Encoding: chunk ed\r\n\r\n"),
	  .error = "invalid Transfer-Encoding" },
	/* limits */
	{ "more than max_headers fields", IN(OK "A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n"),
	  .limits = &fields_3, .error = "too many header fields" },
	{ "more than header_capacity fields", IN(OK "A: 1\r\nB: 2\r\nC: 3\r\n\r\n"), .capacity = 2,
	  .error = "too many header fields" },
	{ "head one byte over max_header_bytes",
	  IN(OK "X: 01234567890123456789012345678901234567890\r\n\r\n"), .limits = &head_64,
	  .error = "response head too large" },
	{ "endless field value reaches max_header_bytes",
	  IN(OK "X: 0123456789012345678901234567890123456789012345678901234567890123456789"),
	  .limits = &head_64, .error = "response head too large" },
	{ "status line one byte over max_request_line", IN("HTTP/1.1 200 abcdefghij\r\n" CL5 "\r\n"),
	  .limits = &line_24, .error = "status line too long" },
	{ "endless reason reaches max_request_line", IN("HTTP/1.1 200 abcdefghijklmnopqrstuvwxyz"),
	  .limits = &line_24, .error = "status line too long" },
};

/* ---- helpers ------------------------------------------------------------ */

static struct guard g;
static ig_header headers[64];

static enum http_error_kind last_kind; /* of the last parse_at */

static int parse_at(const struct resp_case *c, size_t len, struct http_response_head *out,
		    const char **error)
{
	const char *p = guard_put(&g, c->in, len);
	*out = (struct http_response_head){ .headers = headers, .header_capacity = c->capacity };
	struct http_error e = { 0 };
	int r = ig_http_parse_response(p, len, c->head_request, c->limits ? c->limits : &default_limits,
				    out, &e);
	*error = e.detail;
	last_kind = e.kind;
	return r;
}

static bool slice_is(ig_str s, const char *want)
{
	return s.len == strlen(want) && (s.len == 0 || memcmp(s.ptr, want, s.len) == 0);
}

/* NULL when the parsed head matches the case, else what differs. */
static const char *head_mismatch(const struct resp_case *c, const struct http_response_head *h)
{
	static char why[600];
	int minor = c->minor == 0 ? 1 : c->minor < 0 ? 0 : c->minor;
	bool ka = c->ka == KA_DEFAULT ? (minor >= 1 && c->framing != BODY_UNTIL_CLOSE)
				      : c->ka == KA_YES;
	if (h->status != (c->status ? c->status : 200))
		return "status";
	if (h->minor_version != minor)
		return "minor_version";
	if (!slice_is(h->reason, c->reason ? c->reason : "OK"))
		return "reason";
	if (h->framing != c->framing)
		return "framing";
	if (h->content_length != c->length)
		return "content_length";
	if (h->keep_alive != ka)
		return "keep_alive";
	if (c->headers) {
		char dump[512];
		fields_dump(h->headers, h->num_headers, dump, sizeof dump);
		if (strcmp(dump, c->headers) != 0) {
			snprintf(why, sizeof why, "headers \"%s\"", dump);
			return why;
		}
	}
	return NULL;
}

/* Grows the input one byte at a time, parsing at each length as a
 * connection does when bytes trickle in; returns the first length at which
 * the parser decided (and its verdict), or len + 1 if it never did. */
static size_t feed_bytewise(const struct resp_case *c, int *r, struct http_response_head *out,
			    const char **error)
{
	for (size_t n = 0; n <= c->len; n++) {
		*r = parse_at(c, n, out, error);
		if (*r != HTTP_INCOMPLETE)
			return n;
	}
	return c->len + 1;
}

static void test_valid(const struct resp_case *c)
{
	struct http_response_head out;
	const char *error;
	size_t head_len = c->head_len ? c->head_len : c->len;
	int r = parse_at(c, c->len, &out, &error);
	const char *why = r == (int)head_len ? head_mismatch(c, &out) : "return value";
	check_that(why == NULL, c->name, "%s: returned %d (%s), want %zu", why, r,
		   error ? error : "no error", head_len);

	char name[200];
	size_t at = feed_bytewise(c, &r, &out, &error);
	why = at != head_len || r != (int)head_len ? "decided at another length" : head_mismatch(c, &out);
	snprintf(name, sizeof name, "%s: same when fed byte by byte", c->name);
	check_that(why == NULL, name, "%s: at %zu returned %d (%s)", why, at, r, error ? error : "");
}

static void test_invalid(const struct resp_case *c)
{
	struct http_response_head out;
	const char *error;
	int r = parse_at(c, c->len, &out, &error);
	check_that(r == HTTP_ERROR && error && strcmp(error, c->error) == 0, c->name,
		   "returned %d, error \"%s\", want \"%s\"", r, error ? error : "(none)", c->error);

	char name[200];
	size_t at = feed_bytewise(c, &r, &out, &error);
	snprintf(name, sizeof name, "%s: same error when fed byte by byte", c->name);
	check_that(at <= c->len && r == HTTP_ERROR && error && strcmp(error, c->error) == 0, name,
		   "at %zu returned %d, error \"%s\"", at, r, error ? error : "(none)");
}

/* Errors are classified by kind, which is what the client maps: the limits
 * to "too large", everything else to a protocol error. */
static void test_error_kinds(void)
{
	static const struct {
		struct resp_case c;
		enum http_error_kind kind;
	} cases[] = {
		{ { "fields", IN(OK "A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n"), .limits = &fields_3 },
		  HTTP_ERR_TOO_MANY_FIELDS },
		{ { "head", IN(OK "X: 01234567890123456789012345678901234567890\r\n\r\n"), .limits = &head_64 },
		  HTTP_ERR_HEAD_TOO_LARGE },
		{ { "line", IN("HTTP/1.1 200 abcdefghij\r\n" CL5 "\r\n"), .limits = &line_24 },
		  HTTP_ERR_LINE_TOO_LONG },
		{ { "version", IN("HTTP/2.0 200 OK\r\n\r\n") }, HTTP_ERR_VERSION },
		{ { "framing", IN(OK "Content-Length: 1\r\nContent-Length: 2\r\n\r\n") }, HTTP_ERR_FRAMING },
		{ { "syntax", IN("HTTP/1.1 2x0 OK\r\n\r\n") }, HTTP_ERR_SYNTAX },
	};
	for (size_t i = 0; i < IG_COUNTOF(cases); i++) {
		struct http_response_head out;
		const char *error;
		int r = parse_at(&cases[i].c, cases[i].c.len, &out, &error);
		check_that(r == HTTP_ERROR && last_kind == cases[i].kind, cases[i].c.name,
			   "error kind %d, want %d", (int)last_kind, (int)cases[i].kind);
	}
}

static void test_empty_input(void)
{
	struct http_response_head out = { .headers = headers };
	struct http_error error = { 0 };
	char *p = guard_put(&g, "", 0);
	CHECK_INT(ig_http_parse_response(p, 0, false, &default_limits, &out, &error), HTTP_INCOMPLETE,
		  "empty input is incomplete");
}

/* Interim heads come first; the caller skips them and parses again. */
static void test_interim_skipped(void)
{
	static const char in[] = "HTTP/1.1 100 Continue\r\n\r\n"
				 "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
				 "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nhi";
	const char *buf = guard_put(&g, in, sizeof in - 1), *end = buf + sizeof in - 1;
	struct http_response_head out = { .headers = headers };
	struct http_error error = { 0 };
	int interim = 0, r;
	while ((r = ig_http_parse_response(buf, (size_t)(end - buf), false, &default_limits, &out,
					&error)) > 0 &&
	       http_response_is_interim(&out)) {
		CHECK(out.framing == BODY_NONE, "an interim head has no body");
		interim++;
		buf += r;
	}
	CHECK_INT(interim, 2, "two interim heads are skipped");
	CHECK(r > 0 && out.status == 201 && out.framing == BODY_LENGTH && out.content_length == 2 &&
		      end - (buf + r) == 2 && memcmp(buf + r, "hi", 2) == 0,
	      "the final head follows the interim ones, its body after it");
}

/* A chunked body after the head goes through the server's decoder, and the
 * next pipelined response starts where the decoder says the body ended. */
static void test_chunked_then_next(void)
{
	static const char in[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				 "5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nT: v\r\n\r\n"
				 "HTTP/1.1 204 No Content\r\n\r\n"
				 "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc";
	char *buf = guard_put(&g, in, sizeof in - 1);
	size_t len = sizeof in - 1;
	struct http_response_head out = { .headers = headers };
	struct http_error error = { 0 };
	int r = ig_http_parse_response(buf, len, false, &default_limits, &out, &error);
	CHECK(r > 0 && out.framing == BODY_CHUNKED, "first head is chunked");
	if (r <= 0)
		return;
	struct http_chunked_decoder d = { .max_trailer_bytes = 64 };
	size_t body_len = len - (size_t)r;
	ssize_t rest = ig_http_decode_chunked(&d, buf + r, &body_len);
	CHECK(rest > 0 && body_len == 11 && memcmp(buf + r, "hello world", 11) == 0,
	      "the chunked body decodes to its data");
	if (rest <= 0)
		return;
	char *next = buf + r + body_len;
	size_t next_len = (size_t)rest;
	r = ig_http_parse_response(next, next_len, false, &default_limits, &out, &error);
	CHECK(r > 0 && out.status == 204 && out.framing == BODY_NONE && out.keep_alive,
	      "the 204 after it has no body");
	if (r <= 0)
		return;
	next += r;
	next_len -= (size_t)r;
	r = ig_http_parse_response(next, next_len, false, &default_limits, &out, &error);
	CHECK(r > 0 && out.framing == BODY_LENGTH && out.content_length == 3 &&
		      next_len - (size_t)r == 3 && memcmp(next + r, "abc", 3) == 0,
	      "the third response follows the 204 at once");
}

/* The header array the caller gave is the only one written to. */
static void test_fields_are_slices(void)
{
	static const char in[] = OK "Server: x\r\n" CL5 "\r\n";
	const char *buf = guard_put(&g, in, sizeof in - 1);
	ig_header two[2];
	struct http_response_head out = { .headers = two, .header_capacity = 2 };
	struct http_error error = { 0 };
	int r = ig_http_parse_response(buf, sizeof in - 1, false, &default_limits, &out, &error);
	CHECK(r == (int)sizeof in - 1 && out.num_headers == 2 && two[0].name.ptr == buf + 17 &&
		      two[1].value.ptr == buf + 44 && out.reason.ptr == buf + 13,
	      "names, values and the reason are slices of the input");
}

/* Random octet mutations of valid heads: whatever the verdict, it must not
 * depend on how the bytes arrived (a prefix is incomplete or the same). */
static void test_mutations(void)
{
	static const char alphabet[] = "\r\n :,;\t\0\x7f\x80/?#*aZ09-";
	unsigned seed = 12345, failures = 0;
	char in[256];
	for (int i = 0; i < 3000; i++) {
		const struct resp_case *base = &valid_cases[(size_t)i % IG_COUNTOF(valid_cases)];
		if (base->len > sizeof in)
			continue;
		memcpy(in, base->in, base->len);
		for (int m = 0; m < 1 + i % 3; m++) {
			seed = seed * 1103515245u + 12345u;
			in[(seed >> 8) % base->len] = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
		}
		struct resp_case c = *base;
		c.in = in;
		struct http_response_head out;
		const char *whole_error, *error;
		int whole = parse_at(&c, c.len, &out, &whole_error);
		int r;
		size_t at = feed_bytewise(&c, &r, &out, &error);
		bool same = whole == HTTP_INCOMPLETE ? at == c.len + 1
			    : whole == HTTP_ERROR    ? r == HTTP_ERROR && strcmp(error, whole_error) == 0
						     : r == whole && at == (size_t)whole;
		if (!same && failures++ < 3)
			printf("# mutation %d of \"%s\": whole %d, bytewise %d at %zu\n", i, base->name,
			       whole, r, at);
	}
	check_that(failures == 0, "3000 mutated heads give the same verdict whole and byte by byte",
		   "%u differ", failures);
}

int main(void)
{
	if (!guard_init(&g, 64 * 1024)) {
		printf("Bail out! cannot map the guard page\n");
		return 1;
	}
	/* It must fault, or the tests prove nothing. */
	CHECK(guard_faults(&g), "reading the guard page faults");
	for (size_t i = 0; i < IG_COUNTOF(valid_cases); i++)
		test_valid(&valid_cases[i]);
	for (size_t i = 0; i < IG_COUNTOF(invalid_cases); i++)
		test_invalid(&invalid_cases[i]);
	test_error_kinds();
	test_empty_input();
	test_interim_skipped();
	test_chunked_then_next();
	test_fields_are_slices();
	test_mutations();
	guard_free(&g);
	return check_done();
}
