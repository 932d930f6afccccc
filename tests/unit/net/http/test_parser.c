/* Unit tests of net/http/parser: a table of valid and invalid request heads,
 * each named after the rule it exercises, every input placed flush against
 * an unreadable page and also tried at every prefix, and resumed at every
 * split against the one-shot parse; the chunked decoder fed
 * whole, split at every byte, and byte by byte; pipelining; a mutation run. */
#define _DEFAULT_SOURCE
#include "net/http/parser.h"
#include "tests/unit/check.h"
#include "tests/unit/fields.h"
#include "tests/unit/guard.h"

#include <stdint.h>
#include <stdlib.h>

#define IN(s) .in = (s), .len = sizeof(s) - 1
#define RL "GET / HTTP/1.1\r\n"
#define H "Host: a\r\n"
#define X16 "xxxxxxxxxxxxxxxx"
#define Y16 "yyyyyyyyyyyyyyyy"

static const struct http_limits default_limits = {
	.max_request_line = 8192,
	.max_header_bytes = 16384,
	.max_headers = 64,
};
static const struct http_limits line_64 = { 64, 16384, 64 };
static const struct http_limits head_64 = { 8192, 64, 64 };
static const struct http_limits fields_3 = { 8192, 16384, 3 };

static const char NO_HOST[] = "(absent)"; /* expect req.host == NULL */

enum ka { KA_DEFAULT, KA_YES, KA_NO }; /* default: per version */

struct req_case {
	const char *name;
	const char *in;
	size_t len;
	const struct http_limits *limits; /* NULL: default_limits */
	size_t capacity;                  /* 0: 64 */
	int status;                       /* 0: valid; else the error status */
	const char *detail;               /* the error.detail expected with it */
	/* For valid requests (NULL/0 fields take the defaults noted): */
	size_t head_len;      /* 0: the whole input */
	const char *method;   /* NULL: "GET" */
	const char *target;   /* NULL: "/" */
	const char *path;     /* NULL: the target */
	const char *query;    /* NULL: none */
	bool http10;          /* minor version 0 */
	const char *headers;  /* "name=value|..."; NULL: not checked */
	enum http_body_kind body;
	uint64_t length;
	enum ka ka;
	bool expect;
	const char *host;     /* NULL: "a"; NO_HOST: absent */
};

static const struct req_case valid_cases[] = {
	{ "simple GET", IN(RL H "\r\n"), .headers = "Host=a" },
	{ "one empty line before the request line is skipped", IN("\r\n" RL H "\r\n") },
	{ "four empty lines before the request line are skipped",
	  IN("\r\n\r\n\r\n\r\n" RL H "\r\n") },
	{ "HTTP/1.0 without Host is accepted", IN("GET / HTTP/1.0\r\n\r\n"), .http10 = true,
	  .host = NO_HOST, .headers = "" },
	{ "HTTP/1.0 is not keep-alive by default", IN("GET / HTTP/1.0\r\n" H "\r\n"),
	  .http10 = true, .ka = KA_NO },
	{ "HTTP/1.0 with Connection: keep-alive is keep-alive",
	  IN("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"), .http10 = true, .ka = KA_YES,
	  .host = NO_HOST },
	{ "HTTP/1.0 with keep-alive and close closes",
	  IN("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"), .http10 = true,
	  .ka = KA_NO, .host = NO_HOST },
	{ "HTTP/1.1 is keep-alive by default", IN(RL H "\r\n"), .ka = KA_YES },
	{ "Connection: close ends keep-alive", IN(RL H "Connection: close\r\n\r\n"), .ka = KA_NO },
	{ "Connection is case-insensitive", IN(RL H "connection: CLOSE\r\n\r\n"), .ka = KA_NO },
	{ "Connection close found in a list", IN(RL H "Connection: Upgrade ,, close \r\n\r\n"),
	  .ka = KA_NO },
	{ "Connection close found in a second field",
	  IN(RL H "Connection: upgrade\r\nConnection: close\r\n\r\n"), .ka = KA_NO },
	{ "unrelated Connection options keep-alive", IN(RL H "Connection: closed, upgrade\r\n\r\n"),
	  .ka = KA_YES },
	{ "query is split from the path", IN("GET /a/b?x=1&y=2 HTTP/1.1\r\n" H "\r\n"),
	  .target = "/a/b?x=1&y=2", .path = "/a/b", .query = "x=1&y=2" },
	{ "empty query is an empty slice", IN("GET /a? HTTP/1.1\r\n" H "\r\n"), .target = "/a?",
	  .path = "/a", .query = "" },
	{ "query may contain '?'", IN("GET /a?b?c HTTP/1.1\r\n" H "\r\n"), .target = "/a?b?c",
	  .path = "/a", .query = "b?c" },
	{ "target may use every visible character but '#'",
	  IN("GET /a%20b;c=d!$&'()*+,@:~[]{}|^`\"<>\\ HTTP/1.1\r\n" H "\r\n"),
	  .target = "/a%20b;c=d!$&'()*+,@:~[]{}|^`\"<>\\" },
	{ "absolute-form sets path, query and host",
	  IN("GET http://example.com/p/q?x=1 HTTP/1.1\r\nHost: other\r\n\r\n"),
	  .target = "http://example.com/p/q?x=1", .path = "/p/q", .query = "x=1",
	  .host = "example.com" },
	{ "absolute-form scheme is case-insensitive and https is known",
	  IN("GET HTTPS://Ex.com:8443/x HTTP/1.1\r\n" H "\r\n"), .target = "HTTPS://Ex.com:8443/x",
	  .path = "/x", .host = "Ex.com:8443" },
	{ "absolute-form without a path has path /", IN("GET http://a HTTP/1.1\r\n" H "\r\n"),
	  .target = "http://a", .path = "/" },
	{ "absolute-form with only a query has path /", IN("GET http://a?k=v HTTP/1.1\r\n" H "\r\n"),
	  .target = "http://a?k=v", .path = "/", .query = "k=v" },
	{ "absolute-form with an IPv6 literal", IN("GET http://[::1]:8080/ HTTP/1.1\r\n" H "\r\n"),
	  .target = "http://[::1]:8080/", .path = "/", .host = "[::1]:8080" },
	{ "absolute-form in HTTP/1.0", IN("GET http://a/x HTTP/1.0\r\n\r\n"), .http10 = true,
	  .target = "http://a/x", .path = "/x" },
	{ "OPTIONS * is asterisk-form", IN("OPTIONS * HTTP/1.1\r\n" H "\r\n"), .method = "OPTIONS",
	  .target = "*", .path = "*" },
	{ "extension method token", IN("M-SEARCH /x HTTP/1.1\r\n" H "\r\n"), .method = "M-SEARCH",
	  .target = "/x" },
	{ "method with every tchar punctuation", IN("!#$%&'*+-.^_`|~09azAZ / HTTP/1.1\r\n" H "\r\n"),
	  .method = "!#$%&'*+-.^_`|~09azAZ" },
	{ "Content-Length gives a length body with the body left unread",
	  IN("POST /u HTTP/1.1\r\n" H "Content-Length: 5\r\n\r\nhello"), .head_len = 48,
	  .method = "POST", .target = "/u", .body = HTTP_BODY_LENGTH, .length = 5 },
	{ "Content-Length zero is a length body", IN(RL H "Content-Length: 0\r\n\r\n"),
	  .body = HTTP_BODY_LENGTH, .length = 0 },
	{ "Content-Length with leading zeros", IN(RL H "Content-Length: 000000000000000000000007\r\n\r\n"),
	  .body = HTTP_BODY_LENGTH, .length = 7 },
	{ "Content-Length of INT64_MAX is accepted",
	  IN(RL H "Content-Length: 9223372036854775807\r\n\r\n"), .body = HTTP_BODY_LENGTH,
	  .length = INT64_MAX },
	{ "Content-Length surrounded by OWS", IN(RL H "Content-Length: \t 12 \t\r\n\r\n"),
	  .body = HTTP_BODY_LENGTH, .length = 12 },
	{ "Content-Length in HTTP/1.0", IN("POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\n"),
	  .method = "POST", .http10 = true, .body = HTTP_BODY_LENGTH, .length = 3, .host = NO_HOST },
	{ "field names are case-insensitive", IN(RL "HOST: a\r\ncontent-LENGTH: 4\r\n\r\n"),
	  .body = HTTP_BODY_LENGTH, .length = 4, .headers = "HOST=a|content-LENGTH=4" },
	{ "Transfer-Encoding chunked", IN("POST / HTTP/1.1\r\n" H "Transfer-Encoding: chunked\r\n\r\n"),
	  .method = "POST", .body = HTTP_BODY_CHUNKED },
	{ "Transfer-Encoding chunked is case-insensitive",
	  IN(RL H "transfer-encoding: ChUnKeD\r\n\r\n"), .body = HTTP_BODY_CHUNKED },
	{ "Transfer-Encoding empty list elements are ignored",
	  IN(RL H "Transfer-Encoding: , chunked ,\r\n\r\n"), .body = HTTP_BODY_CHUNKED },
	{ "field value OWS is trimmed, inner spaces kept",
	  IN(RL H "X-A: \t a  b \t\r\nX-B:c\r\n\r\n"), .headers = "Host=a|X-A=a  b|X-B=c" },
	{ "empty field value", IN(RL H "X-Empty:\r\nX-Blank:   \r\n\r\n"),
	  .headers = "Host=a|X-Empty=|X-Blank=" },
	{ "obs-text in a field value is accepted", IN(RL H "X-Latin: caf\xe9 \x80\xff\r\n\r\n"),
	  .headers = "Host=a|X-Latin=caf\xe9 \x80\xff" },
	{ "long field value with tabs and obs-text at word boundaries",
	  IN(RL H "X-Long: 0123456\t89abcdef\xc3\xa9ghijklmn\x80pqrstuvwxyz\t\r\n\r\n"),
	  .headers = "Host=a|X-Long=0123456\t89abcdef\xc3\xa9ghijklmn\x80pqrstuvwxyz" },
	{ "long target", IN("GET /0123456789/abcdefghijklmnopqrstuvwxyz?q=1 HTTP/1.1\r\n" H "\r\n"),
	  .target = "/0123456789/abcdefghijklmnopqrstuvwxyz?q=1",
	  .path = "/0123456789/abcdefghijklmnopqrstuvwxyz", .query = "q=1" },
	{ "colon inside a field value", IN(RL H "X-Url: http://b:1/\r\n\r\n"),
	  .headers = "Host=a|X-Url=http://b:1/" },
	{ "field name with every tchar punctuation", IN(RL H "X!#$%&'*+-.^_`|~: v\r\n\r\n"),
	  .headers = "Host=a|X!#$%&'*+-.^_`|~=v" },
	{ "Expect: 100-continue", IN(RL H "Expect: 100-continue\r\n\r\n"), .expect = true },
	{ "Expect 100-continue is case-insensitive", IN(RL H "expect: 100-Continue\r\n\r\n"),
	  .expect = true },
	{ "Expect in HTTP/1.0 is ignored", IN("GET / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n"),
	  .http10 = true, .host = NO_HOST },
	{ "other Expect values are ignored", IN(RL H "Expect: something\r\n\r\n") },
	{ "empty Host is allowed", IN(RL "Host:\r\n\r\n"), .host = "" },
	{ "Host with a port", IN(RL "Host: example.com:8080\r\n\r\n"), .host = "example.com:8080" },
	{ "Host with an IPv6 literal", IN(RL "Host: [2001:db8::1]:443\r\n\r\n"),
	  .host = "[2001:db8::1]:443" },
	{ "Host with reg-name punctuation", IN(RL "Host: a_b-c.d~e%41!$&'()*+,;=\r\n\r\n"),
	  .host = "a_b-c.d~e%41!$&'()*+,;=" },
	/* 5 + 48 + 11 = 64 bytes */
	{ "request line exactly at max_request_line", IN("GET /" X16 X16 X16 " HTTP/1.1\r\n" H "\r\n"),
	  .limits = &line_64, .target = "/" X16 X16 X16 },
	/* 16 + 9 + 3 + 32 + 2 + 2 = 64 bytes */
	{ "head exactly at max_header_bytes", IN(RL H "X: " Y16 Y16 "\r\n\r\n"),
	  .limits = &head_64 },
	{ "max_headers fields exactly", IN(RL H "A: 1\r\nB: 2\r\n\r\n"), .limits = &fields_3,
	  .headers = "Host=a|A=1|B=2" },
	{ "header_capacity fields exactly", IN(RL H "A: 1\r\n\r\n"), .capacity = 2 },
	{ "bytes after the head are left alone", IN(RL H "\r\nGET /next HTTP/1.1\r\n"),
	  .head_len = 27 },
};

static const struct req_case invalid_cases[] = {
	/* request line */
	{ "invalid character in method is 400", IN("GE@T / HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid method" },
	{ "empty method is 400", IN(" / HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid method" },
	{ "two spaces after the method are 400", IN("GET  / HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "extra space before request-target" },
	{ "two spaces before the version are 400", IN("GET /  HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "malformed HTTP version" },
	{ "tab as request-line separator is 400", IN("GET\t/ HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid method" },
	{ "control character in target is 400", IN("GET /a\x01 HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid character in request-target" },
	{ "NUL in target is 400", IN("GET /a\0b HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid character in request-target" },
	{ "DEL in target is 400", IN("GET /a\x7f HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid character in request-target" },
	{ "obs-text in target is 400", IN("GET /caf\xc3\xa9 HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid character in request-target" },
	{ "fragment in target is 400", IN("GET /a#frag HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "fragment in request-target" },
	{ "DEL deep in a long target is 400",
	  IN("GET /0123456789abcdef\x7fxyzwvuts HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid character in request-target" },
	{ "obs-text deep in a long target is 400",
	  IN("GET /0123456789abcdef\xffxyzwvuts HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid character in request-target" },
	{ "fragment deep in a long target is 400",
	  IN("GET /0123456789abcdef#xyzwvuts HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "fragment in request-target" },
	{ "missing target is 400", IN("GET HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid character in request-target" },
	{ "missing version is 400", IN("GET /\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid character in request-target" },
	{ "asterisk-form with GET is 400", IN("GET * HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "asterisk-form is only allowed with OPTIONS" },
	{ "asterisk followed by more is 400", IN("OPTIONS *x HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "request-target must be origin-form or absolute-form" },
	{ "authority-form with GET is 400", IN("GET example.com:80 HTTP/1.1\r\n" H "\r\n"),
	  .status = 400, .detail = "request-target must be origin-form or absolute-form" },
	{ "relative target is 400", IN("GET a/b HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "request-target must be origin-form or absolute-form" },
	{ "CONNECT is 501", IN("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
	  .status = 501, .detail = "CONNECT is not supported" },
	{ "unsupported scheme in absolute-form is 400", IN("GET ftp://a/x HTTP/1.1\r\n" H "\r\n"),
	  .status = 400, .detail = "request-target must be origin-form or absolute-form" },
	{ "absolute-form with empty host is 400", IN("GET http:///x HTTP/1.1\r\n" H "\r\n"),
	  .status = 400, .detail = "invalid authority in request-target" },
	{ "absolute-form with userinfo is 400", IN("GET http://u:p@a/x HTTP/1.1\r\n" H "\r\n"),
	  .status = 400, .detail = "invalid authority in request-target" },
	{ "absolute-form with a bad port is 400", IN("GET http://a:8x/ HTTP/1.1\r\n" H "\r\n"),
	  .status = 400, .detail = "invalid authority in request-target" },
	{ "absolute-form with an unclosed IPv6 literal is 400",
	  IN("GET http://[::1/ HTTP/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "invalid authority in request-target" },
	{ "HTTP/2.0 is 505", IN("GET / HTTP/2.0\r\n" H "\r\n"), .status = 505,
	  .detail = "HTTP version not supported" },
	{ "HTTP/1.2 is 505", IN("GET / HTTP/1.2\r\n" H "\r\n"), .status = 505,
	  .detail = "HTTP version not supported" },
	{ "HTTP/3.0 is 505", IN("GET / HTTP/3.0\r\n" H "\r\n"), .status = 505,
	  .detail = "HTTP version not supported" },
	{ "HTTP/0.9 is 505", IN("GET / HTTP/0.9\r\n" H "\r\n"), .status = 505,
	  .detail = "HTTP version not supported" },
	{ "version without minor is 400", IN("GET / HTTP/1\r\n" H "\r\n"), .status = 400,
	  .detail = "malformed HTTP version" },
	{ "lowercase http version is 400", IN("GET / http/1.1\r\n" H "\r\n"), .status = 400,
	  .detail = "malformed HTTP version" },
	{ "space after the version is 400", IN("GET / HTTP/1.1 \r\n" H "\r\n"), .status = 400,
	  .detail = "malformed HTTP version" },
	{ "two-digit major version is 400", IN("GET / HTTP/11.1\r\n" H "\r\n"), .status = 400,
	  .detail = "malformed HTTP version" },
	{ "two-digit minor version is 400", IN("GET / HTTP/1.10\r\n" H "\r\n"), .status = 400,
	  .detail = "malformed HTTP version" },
	{ "non-digit minor version is 400", IN("GET / HTTP/1.x\r\n" H "\r\n"), .status = 400,
	  .detail = "malformed HTTP version" },
	{ "long garbage version is 400 before its line ends", IN("GET / HTTP/1.1xxxxxxxx"),
	  .status = 400, .detail = "malformed HTTP version" },
	{ "bare LF after the request line is 400", IN("GET / HTTP/1.1\n" H "\r\n"), .status = 400,
	  .detail = "bare LF" },
	{ "bare CR after the request line is 400", IN("GET / HTTP/1.1\rHost: a\r\n\r\n"),
	  .status = 400, .detail = "bare CR" },
	{ "bare LF as a leading empty line is 400", IN("\n" RL H "\r\n"), .status = 400,
	  .detail = "bare LF" },
	{ "bare CR as a leading empty line is 400", IN("\rGET / HTTP/1.1\r\n" H "\r\n"),
	  .status = 400, .detail = "bare CR" },
	{ "five leading empty lines are 400", IN("\r\n\r\n\r\n\r\n\r\n" RL H "\r\n"), .status = 400,
	  .detail = "too many empty lines before the request line" },
	{ "request line over max_request_line is 414",
	  IN("GET /x" X16 X16 X16 " HTTP/1.1\r\n" H "\r\n"),
	  .limits = &line_64, .status = 414,
	  .detail = "request line too long" },
	{ "request line over the limit is 414 while incomplete",
	  IN("GET /" X16 X16 X16 X16 X16),
	  .limits = &line_64, .status = 414,
	  .detail = "request line too long" },
	{ "request line whose LF passes the limit is 414",
	  IN("GET /x" X16 X16 X16 " HTTP/1.1\r"),
	  .limits = &line_64, .status = 414,
	  .detail = "request line too long" },
	{ "bad character beyond max_request_line is 414",
	  IN("GET /" X16 X16 X16 "xxxxxxxxxxx\x01"),
	  .limits = &line_64, .status = 414,
	  .detail = "request line too long" },
	/* header limits */
	{ "head over max_header_bytes is 431", IN(RL H "X: y" Y16 Y16 "\r\n\r\n"),
	  .limits = &head_64, .status = 431,
	  .detail = "request header too large" },
	{ "head over max_header_bytes is 431 while incomplete",
	  IN(RL H "X: " Y16 Y16 Y16), .limits = &head_64,
	  .status = 431, .detail = "request header too large" },
	{ "request line over max_header_bytes is 431",
	  IN("GET /" X16 X16 X16 X16 X16),
	  .limits = &head_64, .status = 431,
	  .detail = "request header too large" },
	{ "more than max_headers fields is 431", IN(RL H "A: 1\r\nB: 2\r\nC: 3\r\n\r\n"),
	  .limits = &fields_3, .status = 431,
	  .detail = "too many header fields" },
	{ "more than header_capacity fields is 431", IN(RL H "A: 1\r\nB: 2\r\n\r\n"), .capacity = 2,
	  .status = 431, .detail = "too many header fields" },
	/* field syntax */
	{ "whitespace between field name and colon is 400", IN(RL "Host : a\r\n\r\n"), .status = 400,
	  .detail = "whitespace before colon" },
	{ "obs-fold is 400", IN(RL H "X-A: 1\r\n 2\r\n\r\n"), .status = 400,
	  .detail = "obsolete line folding" },
	{ "obs-fold with a tab is 400", IN(RL H "X-A: 1\r\n\t2\r\n\r\n"), .status = 400,
	  .detail = "obsolete line folding" },
	{ "whitespace before the first field is 400", IN(RL " Host: a\r\n\r\n"), .status = 400,
	  .detail = "obsolete line folding" },
	{ "empty field name is 400", IN(RL H ": v\r\n\r\n"), .status = 400,
	  .detail = "empty field name" },
	{ "invalid character in field name is 400", IN(RL H "X(A): v\r\n\r\n"), .status = 400,
	  .detail = "invalid character in field name" },
	{ "field line without colon is 400", IN(RL H "X-A\r\n\r\n"), .status = 400,
	  .detail = "invalid character in field name" },
	{ "NUL in field value is 400", IN(RL H "X-A: a\0b\r\n\r\n"), .status = 400,
	  .detail = "invalid character in field value" },
	{ "control character deep in a long field value is 400",
	  IN(RL H "X-A: 0123456789abcdefghijklm\x01nop\r\n\r\n"), .status = 400,
	  .detail = "invalid character in field value" },
	{ "NUL after obs-text in a long field value is 400",
	  IN(RL H "X-A: \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\0abcdefgh\r\n\r\n"), .status = 400,
	  .detail = "invalid character in field value" },
	{ "DEL deep in a long field value is 400",
	  IN(RL H "X-A: 0123456789a\x7f" "bcdefghij\r\n\r\n"), .status = 400,
	  .detail = "invalid character in field value" },
	{ "DEL in field value is 400", IN(RL H "X-A: a\x7f\r\n\r\n"), .status = 400,
	  .detail = "invalid character in field value" },
	{ "control character in field value is 400", IN(RL H "X-A: a\x1b[0m\r\n\r\n"), .status = 400,
	  .detail = "invalid character in field value" },
	{ "bare CR in field value is 400", IN(RL H "X-A: a\rb\r\n\r\n"), .status = 400,
	  .detail = "bare CR" },
	{ "bare LF ending a field line is 400", IN(RL H "X-A: a\n\r\n"), .status = 400,
	  .detail = "bare LF" },
	{ "bare LF ending the head is 400", IN(RL H "\n"), .status = 400,
	  .detail = "bare LF" },
	{ "bare CR ending the head is 400", IN(RL H "\rX"), .status = 400,
	  .detail = "bare CR" },
	/* Host */
	{ "missing Host in HTTP/1.1 is 400", IN(RL "X-A: 1\r\n\r\n"), .status = 400,
	  .detail = "missing Host" },
	{ "two Host fields are 400", IN(RL H "Host: a\r\n\r\n"), .status = 400,
	  .detail = "more than one Host" },
	{ "two Host fields in HTTP/1.0 are 400", IN("GET / HTTP/1.0\r\n" H "host: b\r\n\r\n"),
	  .status = 400, .detail = "more than one Host" },
	{ "Host with a space is 400", IN(RL "Host: a b\r\n\r\n"), .status = 400,
	  .detail = "invalid Host" },
	{ "Host with userinfo is 400", IN(RL "Host: u@a\r\n\r\n"), .status = 400,
	  .detail = "invalid Host" },
	{ "Host with a bad port is 400", IN(RL "Host: a:80x\r\n\r\n"), .status = 400,
	  .detail = "invalid Host" },
	{ "Host with only a port is 400", IN(RL "Host: :80\r\n\r\n"), .status = 400,
	  .detail = "invalid Host" },
	/* Content-Length */
	{ "content-length with plus sign is 400", IN(RL H "Content-Length: +5\r\n\r\n"), .status = 400,
	  .detail = "invalid Content-Length" },
	{ "content-length with minus sign is 400", IN(RL H "Content-Length: -5\r\n\r\n"), .status = 400,
	  .detail = "invalid Content-Length" },
	{ "content-length with inner space is 400", IN(RL H "Content-Length: 1 2\r\n\r\n"),
	  .status = 400, .detail = "invalid Content-Length" },
	{ "empty content-length is 400", IN(RL H "Content-Length:\r\n\r\n"), .status = 400,
	  .detail = "empty Content-Length" },
	{ "content-length list is 400", IN(RL H "Content-Length: 5, 5\r\n\r\n"), .status = 400,
	  .detail = "invalid Content-Length" },
	{ "repeated identical content-length is 400",
	  IN(RL H "Content-Length: 5\r\nContent-Length: 5\r\n\r\n"), .status = 400,
	  .detail = "more than one Content-Length" },
	{ "content-length of INT64_MAX+1 is 400",
	  IN(RL H "Content-Length: 9223372036854775808\r\n\r\n"), .status = 400,
	  .detail = "Content-Length too large" },
	{ "content-length overflowing uint64 is 400",
	  IN(RL H "Content-Length: 99999999999999999999999\r\n\r\n"), .status = 400,
	  .detail = "Content-Length too large" },
	{ "hex content-length is 400", IN(RL H "Content-Length: 0x5\r\n\r\n"), .status = 400,
	  .detail = "invalid Content-Length" },
	/* Transfer-Encoding */
	{ "transfer-encoding gzip is 501", IN(RL H "Transfer-Encoding: gzip\r\n\r\n"), .status = 501,
	  .detail = "unsupported transfer coding" },
	{ "transfer-encoding identity is 501", IN(RL H "Transfer-Encoding: identity\r\n\r\n"),
	  .status = 501, .detail = "unsupported transfer coding" },
	{ "transfer-encoding gzip, chunked is 501", IN(RL H "Transfer-Encoding: gzip, chunked\r\n\r\n"),
	  .status = 501, .detail = "unsupported transfer coding" },
	{ "transfer-encoding chunked, chunked is 400",
	  IN(RL H "Transfer-Encoding: chunked, chunked\r\n\r\n"), .status = 400,
	  .detail = "chunked applied more than once" },
	{ "two transfer-encoding chunked fields are 400",
	  IN(RL H "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"), .status = 400,
	  .detail = "chunked applied more than once" },
	{ "transfer-encoding with chunked not final is 400",
	  IN(RL H "Transfer-Encoding: chunked, gzip\r\n\r\n"), .status = 400,
	  .detail = "chunked is not the final transfer coding" },
	{ "chunked not final across two fields is 400",
	  IN(RL H "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n"), .status = 400,
	  .detail = "chunked is not the final transfer coding" },
	{ "transfer-encoding and content-length is 400",
	  IN(RL H "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"), .status = 400,
	  .detail = "both Transfer-Encoding and Content-Length" },
	{ "content-length and transfer-encoding is 400",
	  IN(RL H "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"), .status = 400,
	  .detail = "both Transfer-Encoding and Content-Length" },
	{ "transfer-encoding in HTTP/1.0 is 400",
	  IN("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), .status = 400,
	  .detail = "Transfer-Encoding in an HTTP/1.0 request" },
	{ "empty transfer-encoding is 400", IN(RL H "Transfer-Encoding:\r\n\r\n"), .status = 400,
	  .detail = "empty Transfer-Encoding" },
	{ "transfer-encoding of only commas is 400", IN(RL H "Transfer-Encoding: , ,\r\n\r\n"),
	  .status = 400, .detail = "empty Transfer-Encoding" },
	{ "chunked with parameters is 400", IN(RL H "Transfer-Encoding: chunked;q=1\r\n\r\n"),
	  .status = 400, .detail = "chunked takes no parameters" },
	{ "transfer coding that is not a token is 400", IN(RL H "Transfer-Encoding: chu@nked\r\n\r\n"),
	  .status = 400, .detail = "invalid Transfer-Encoding" },
	{ "transfer-encoding chunked with a space inside is 400",
	  IN(RL H "Transfer-Encoding: chunk ed\r\n\r\n"), .status = 400,
	  .detail = "invalid Transfer-Encoding" },
};

/* ---- request helpers ---------------------------------------------------- */

static struct guard g;
static ig_header headers[64];

static int parse_at(const struct req_case *c, size_t len, struct http_request *req)
{
	const char *p = guard_put(&g, c->in, len);
	*req = (struct http_request){ .headers = headers,
				      .header_capacity = c->capacity ? c->capacity : 64 };
	return ig_http_parse_request(p, len, req, c->limits ? c->limits : &default_limits);
}

static bool slice_is(const char *s, size_t n, const char *want)
{
	return want == NULL ? s == NULL : s != NULL && n == strlen(want) && memcmp(s, want, n) == 0;
}

/* Returns NULL when the parsed request matches the case, else what differs. */
static const char *request_mismatch(const struct req_case *c, const struct http_request *r)
{
	static char why[600];
	const char *target = c->target ? c->target : "/";
	const char *host = c->host ? c->host : "a";
	bool ka = c->ka == KA_DEFAULT ? !c->http10 : c->ka == KA_YES;
	char dump[512];
	if (!slice_is(r->method, r->method_len, c->method ? c->method : "GET"))
		return "method";
	if (!slice_is(r->target, r->target_len, target))
		return "target";
	if (!slice_is(r->path, r->path_len, c->path ? c->path : target))
		return "path";
	if (!slice_is(r->query, r->query_len, c->query))
		return "query";
	if (r->minor_version != (c->http10 ? 0 : 1))
		return "minor_version";
	if (host == NO_HOST ? r->host != NULL : !slice_is(r->host, r->host_len, host))
		return "host";
	if (r->body_kind != c->body || (c->body == HTTP_BODY_LENGTH && r->content_length != c->length))
		return "body";
	if (r->keep_alive != ka)
		return "keep_alive";
	if (r->expect_continue != c->expect)
		return "expect_continue";
	if (c->headers) {
		fields_dump(r->headers, r->num_headers, dump, sizeof dump);
		if (strcmp(dump, c->headers) != 0) {
			snprintf(why, sizeof why, "headers \"%s\"", dump);
			return why;
		}
	}
	return NULL;
}

static void test_valid(const struct req_case *c)
{
	struct http_request req;
	size_t head = c->head_len ? c->head_len : c->len;
	int n = parse_at(c, c->len, &req);
	const char *why = n == (int)head ? request_mismatch(c, &req) : "return value";
	check_that(why == NULL, c->name, "%s: returned %d (want %zu), status %d %s", why, n, head,
		   ig_http_error_status(req.error.kind), req.error.detail ? req.error.detail : "");

	size_t bad = SIZE_MAX;
	for (size_t k = 0; k < c->len && bad == SIZE_MAX; k++) {
		n = parse_at(c, k, &req);
		if (n != (k < head ? HTTP_INCOMPLETE : (int)head))
			bad = k;
	}
	char name[200];
	snprintf(name, sizeof name, "%s: every prefix is incomplete", c->name);
	check_that(bad == SIZE_MAX, name, "prefix of %zu bytes returned %d", bad, n);
}

static void test_invalid(const struct req_case *c)
{
	struct http_request req;
	int n = parse_at(c, c->len, &req);
	check_that(n == HTTP_ERROR && ig_http_error_status(req.error.kind) == c->status && req.error.detail != NULL &&
			   strcmp(req.error.detail, c->detail) == 0,
		   c->name, "returned %d, status %d, detail \"%s\"", n, ig_http_error_status(req.error.kind),
		   req.error.detail ? req.error.detail : "NULL");

	/* A prefix either needs more bytes or already proves the same error. */
	size_t bad = SIZE_MAX;
	for (size_t k = 0; k < c->len && bad == SIZE_MAX; k++) {
		n = parse_at(c, k, &req);
		if (n != HTTP_INCOMPLETE && (n != HTTP_ERROR || ig_http_error_status(req.error.kind) != c->status))
			bad = k;
	}
	char name[200];
	snprintf(name, sizeof name, "%s: every prefix is incomplete or the same error", c->name);
	check_that(bad == SIZE_MAX, name, "prefix of %zu bytes returned %d (status %d)", bad, n,
		   ig_http_error_status(req.error.kind));
}

static void test_pipelined(void)
{
	static const char in[] = "GET /a HTTP/1.1\r\nHost: a\r\n\r\n"
				 "POST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
				 "GET /c?d HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
	const char *buf = guard_put(&g, in, sizeof in - 1), *end = buf + sizeof in - 1;
	const char *want[] = { "/a", "/b", "/c" };
	struct http_request req = { .headers = headers, .header_capacity = 64 };
	bool ok = true;
	for (int i = 0; i < 3 && ok; i++) {
		int n = ig_http_parse_request(buf, (size_t)(end - buf), &req, &default_limits);
		ok = n > 0 && slice_is(req.path, req.path_len, want[i]);
		buf += n > 0 ? n : 0;
		if (ok && req.body_kind == HTTP_BODY_LENGTH)
			buf += req.content_length;
	}
	ok = ok && buf == end && !req.keep_alive && slice_is(req.query, req.query_len, "d");
	CHECK(ok, "three pipelined requests in one buffer parse in turn");
}

static void test_empty_input(void)
{
	struct http_request req = { .headers = headers, .header_capacity = 64 };
	char *p = guard_put(&g, "", 0);
	CHECK(ig_http_parse_request(p, 0, &req, &default_limits) == HTTP_INCOMPLETE,
	      "empty input is incomplete");
}

/* The i-th valid case with three octets replaced, in in[] (x: the
 * xorshift state). */
static struct req_case mutated(unsigned i, char in[512], uint64_t *x)
{
	static const char alphabet[] = "\r\n :,;\t\0\x7f\x80/?#*aZ09-";
	struct req_case c = valid_cases[i % (sizeof valid_cases / sizeof valid_cases[0])];
	memcpy(in, c.in, c.len);
	for (int m = 0; m < 3; m++) {
		*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
		in[*x % c.len] = alphabet[(*x >> 32) % (sizeof alphabet - 1)];
	}
	c.in = in;
	return c;
}

/* Mutated valid requests: whatever the verdict, it must not depend on how
 * much of the input has arrived, and nothing may read past the end. */
static void test_mutations(void)
{
	uint64_t x = 0x9e3779b97f4a7c15u;
	unsigned failures = 0, runs = 3000;
	for (unsigned i = 0; i < runs; i++) {
		char in[512];
		struct req_case c = mutated(i, in, &x);
		struct http_request req;
		int full = parse_at(&c, c.len, &req);
		int status = ig_http_error_status(req.error.kind);
		for (size_t k = 0; k < c.len; k++) {
			int n = parse_at(&c, k, &req);
			bool same = full >= 0 ? n == HTTP_INCOMPLETE || (k >= (size_t)full && n == full)
					      : n == HTTP_INCOMPLETE ||
							(n == HTTP_ERROR && ig_http_error_status(req.error.kind) == status);
			if (!same) {
				failures++;
				break;
			}
		}
	}
	check_that(failures == 0, "3000 mutated requests give prefix-consistent verdicts",
		   "%u inconsistent", failures);
}

/* ---- the resumed form ------------------------------------------------------ */

static ig_header ref_headers[64];

/* Returns NULL when two parses of the same bytes agree in every field the
 * parser fills, else the first that differs. Pointers are compared, not
 * contents: both must point at the same bytes of the same buffer. */
static const char *parse_mismatch(int n, const struct http_request *r, int want_n,
				  const struct http_request *w)
{
	if (n != want_n)
		return "return value";
	if (n == HTTP_INCOMPLETE)
		return NULL; /* the other fields are unspecified */
	if (n == HTTP_ERROR)
		return r->error.kind != w->error.kind || r->error.detail != w->error.detail ? "error" : NULL;
	if (r->method != w->method || r->method_len != w->method_len || r->target != w->target ||
	    r->target_len != w->target_len || r->path != w->path || r->path_len != w->path_len ||
	    r->query != w->query || r->query_len != w->query_len || r->minor_version != w->minor_version)
		return "request line";
	if (r->host != w->host || r->host_len != w->host_len || r->body_kind != w->body_kind ||
	    r->content_length != w->content_length || r->keep_alive != w->keep_alive ||
	    r->expect_continue != w->expect_continue)
		return "derived fields";
	if (r->request_id_field != w->request_id_field || r->traceparent_field != w->traceparent_field ||
	    r->tracestate_field != w->tracestate_field || r->traceparents != w->traceparents ||
	    r->tracestates != w->tracestates)
		return "trace fields";
	if (r->num_headers != w->num_headers)
		return "num_headers";
	for (size_t i = 0; i < r->num_headers; i++)
		if (r->headers[i].name.ptr != w->headers[i].name.ptr || r->headers[i].name.len != w->headers[i].name.len ||
		    r->headers[i].value.ptr != w->headers[i].value.ptr || r->headers[i].value.len != w->headers[i].value.len)
			return "headers";
	return NULL;
}

/* One resumed call with the first len bytes of c, placed afresh (so the
 * head moves between calls, as a compacted read buffer does), against
 * ig_http_parse_request on the same bytes. Returns what differs, or NULL;
 * *n is the resumed call's result. */
static const char *resume_step(const struct req_case *c, size_t len, struct http_head_resume *st, int *n)
{
	const struct http_limits *limits = c->limits ? c->limits : &default_limits;
	size_t capacity = c->capacity ? c->capacity : 64;
	const char *p = guard_put(&g, c->in, len);
	struct http_request r = { .headers = headers, .header_capacity = capacity };
	struct http_request w = { .headers = ref_headers, .header_capacity = capacity };
	*n = ig_http_parse_request_resumed(p, len, &r, limits, st);
	int want = ig_http_parse_request(p, len, &w, limits);
	return parse_mismatch(*n, &r, want, &w);
}

/* A parse resumed at any split (the first k bytes, then all of them) and
 * one fed byte by byte answer every call as the one-shot parse of the same
 * bytes does; fed byte by byte, a head is scanned at most twice in all. */
static void test_resumed(const struct req_case *c)
{
	const char *why = NULL;
	size_t at = 0;
	int n = 0;
	for (size_t k = 1; k < c->len && !why; k++) {
		struct http_head_resume st = { 0 };
		why = resume_step(c, k, &st, &n);
		if (!why && n == HTTP_INCOMPLETE)
			why = resume_step(c, c->len, &st, &n);
		at = k;
	}
	char name[200];
	snprintf(name, sizeof name, "%s: resumed at every split, as parsed whole", c->name);
	check_that(why == NULL, name, "split at %zu: %s differs", at, why);

	struct http_head_resume st = { 0 };
	why = NULL;
	n = HTTP_INCOMPLETE;
	for (at = 1; at <= c->len && n == HTTP_INCOMPLETE && !why; at++)
		why = resume_step(c, at, &st, &n);
	snprintf(name, sizeof name, "%s: resumed byte by byte, as parsed whole", c->name);
	check_that(why == NULL, name, "after %zu bytes: %s differs", at - 1, why);
	if (n > 0) {
		snprintf(name, sizeof name, "%s: byte by byte, the head is scanned at most twice", c->name);
		check_that(st.examined <= 2 * (size_t)n, name, "%u bytes scanned for a head of %d", st.examined, n);
	}
}

/* A head of 60 fields arriving one byte per call, as a slow client sends
 * it: the bytes scanned over all calls stay within twice its length
 * (parsed from the start on every call, it would be about len^2 / 2). */
static void test_resumed_scan_is_linear(void)
{
	char in[4096];
	size_t len = (size_t)snprintf(in, sizeof in, "GET /resume?q=1 HTTP/1.1\r\nHost: example.com\r\n");
	for (int i = 0; i < 60; i++)
		len += (size_t)snprintf(in + len, sizeof in - len, "X-Field-%02d: value %d of a long head\r\n", i, i);
	len += (size_t)snprintf(in + len, sizeof in - len, "\r\n");
	struct req_case c = { .name = "60 fields", .in = in, .len = len };
	struct http_head_resume st = { 0 };
	const char *why = NULL;
	int n = HTTP_INCOMPLETE;
	for (size_t k = 1; k <= len && n == HTTP_INCOMPLETE && !why; k++)
		why = resume_step(&c, k, &st, &n);
	check_that(why == NULL && n == (int)len, "a 60-field head fed byte by byte parses as whole",
		   "returned %d for %zu bytes (%s)", n, len, why ? why : "same as whole");
	check_that(st.examined <= 2 * len, "a 60-field head fed byte by byte is scanned at most twice",
		   "%u bytes scanned for a head of %zu", st.examined, len);
	printf("# 60-field head of %zu bytes fed byte by byte: %u bytes scanned\n", len, st.examined);
}

/* The mutation run's inputs, resumed at a random split and then byte by
 * byte: the verdicts of heads outside the grammar, which the tables cannot
 * all list, match the one-shot parse's too. */
static void test_resumed_mutations(void)
{
	uint64_t x = 0x2545f4914f6cdd1du;
	unsigned failures = 0, runs = 3000;
	for (unsigned i = 0; i < runs; i++) {
		char in[512];
		struct req_case c = mutated(i, in, &x);
		struct http_head_resume st = { 0 };
		int n = HTTP_INCOMPLETE;
		const char *why = NULL;
		size_t k = 1 + (x >> 16) % c.len;
		for (; k <= c.len && n == HTTP_INCOMPLETE && !why; k++)
			why = resume_step(&c, k, &st, &n);
		failures += why != NULL;
	}
	check_that(failures == 0, "3000 mutated requests resumed byte by byte, as parsed whole",
		   "%u differ", failures);
}

/* ---- chunked decoder ------------------------------------------------------ */

struct chunk_case {
	const char *name;
	const char *in;
	size_t len;
	size_t max_trailer; /* 0: 256 */
	ssize_t result;     /* 0: done; HTTP_INCOMPLETE; HTTP_ERROR */
	const char *body;   /* decoded bytes (for done and incomplete) */
	size_t body_len;
	const char *rest;   /* bytes after the body ("" if none) */
	const char *detail; /* error.detail expected with HTTP_ERROR */
};

#define BODY(s) .body = (s), .body_len = sizeof(s) - 1

static const struct chunk_case chunk_cases[] = {
	{ "single chunk", IN("5\r\nhello\r\n0\r\n\r\n"), BODY("hello"), .rest = "" },
	{ "two chunks", IN("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"), BODY("hello world"), .rest = "" },
	{ "hex sizes in either case", IN("A\r\n0123456789\r\nb\r\nabcdefghijk\r\n0\r\n\r\n"),
	  BODY("0123456789abcdefghijk"), .rest = "" },
	{ "sixteen hex digits with leading zeros", IN("0000000000000003\r\nabc\r\n0\r\n\r\n"),
	  BODY("abc"), .rest = "" },
	{ "empty body", IN("0\r\n\r\n"), BODY(""), .rest = "" },
	{ "several zeros as last chunk", IN("000\r\n\r\n"), BODY(""), .rest = "" },
	{ "chunk extensions are skipped", IN("5;name=value\r\nhello\r\n0;last\r\n\r\n"),
	  BODY("hello"), .rest = "" },
	{ "chunk extension with BWS and a quoted string",
	  IN("5 ;\ta = \"b c;d\"\r\nhello\r\n0\r\n\r\n"), BODY("hello"), .rest = "" },
	{ "chunk data may hold CRLF and NUL", IN("4\r\n\r\n\0x\r\n0\r\n\r\n"), BODY("\r\n\0x"),
	  .rest = "" },
	{ "trailer fields are validated and dropped",
	  IN("5\r\nhello\r\n0\r\nX-Sum: 1\r\nY:\r\n\r\n"), BODY("hello"), .rest = "" },
	{ "trailer section exactly at max_trailer_bytes", IN("0\r\nX: 1\r\n\r\n"),
	  .max_trailer = 6, BODY(""), .rest = "" },
	{ "bytes after the body are returned as the next request",
	  IN("3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n"), BODY("abc"), .rest = "GET / HTTP/1.1\r\n" },
	{ "bytes after trailers are returned", IN("0\r\nT: v\r\n\r\nXY"), BODY(""), .rest = "XY" },
	{ "partial chunk is incomplete with its data decoded", IN("5\r\nhel"),
	  .result = HTTP_INCOMPLETE, BODY("hel") },
	{ "huge declared chunk is incomplete, not an error", IN("ffffffffffffffff\r\nabc"),
	  .result = HTTP_INCOMPLETE, BODY("abc") },
	{ "missing final CRLF is incomplete", IN("0\r\n"), .result = HTTP_INCOMPLETE, BODY("") },
	{ "seventeen hex digits are an error", IN("00000000000000005\r\nhello\r\n0\r\n\r\n"),
	  .result = HTTP_ERROR,
	  .detail = "chunk size too large" },
	{ "chunk size overflowing uint64 is an error", IN("10000000000000000\r\n"),
	  .result = HTTP_ERROR,
	  .detail = "chunk size too large" },
	{ "missing chunk size is an error", IN("\r\nhello\r\n0\r\n\r\n"), .result = HTTP_ERROR,
	  .detail = "missing chunk size" },
	{ "non-hex chunk size is an error", IN("g\r\n"), .result = HTTP_ERROR,
	  .detail = "missing chunk size" },
	{ "negative chunk size is an error", IN("-5\r\nhello\r\n"), .result = HTTP_ERROR,
	  .detail = "missing chunk size" },
	{ "0x prefix in chunk size is an error", IN("0x5\r\nhello\r\n"), .result = HTTP_ERROR,
	  .detail = "invalid character after chunk size" },
	{ "space inside chunk size is an error", IN("5 5\r\nhello\r\n"), .result = HTTP_ERROR,
	  .detail = "invalid character after chunk size" },
	{ "whitespace after chunk size without extension is an error", IN("5 \r\nhello\r\n"),
	  .result = HTTP_ERROR,
	  .detail = "invalid character after chunk size" },
	{ "bare LF after chunk size is an error", IN("5\nhello\r\n0\r\n\r\n"), .result = HTTP_ERROR,
	  .detail = "bare LF after chunk size" },
	{ "bare CR after chunk size is an error", IN("5\rhello\r\n0\r\n\r\n"), .result = HTTP_ERROR,
	  .detail = "bare CR after chunk size" },
	{ "data longer than the chunk size is an error", IN("5\r\nhelloX\r\n0\r\n\r\n"),
	  .result = HTTP_ERROR,
	  .detail = "missing CRLF after chunk data" },
	{ "bare LF after chunk data is an error", IN("5\r\nhello\n0\r\n\r\n"), .result = HTTP_ERROR,
	  .detail = "missing CRLF after chunk data" },
	{ "CR without LF after chunk data is an error", IN("5\r\nhello\r0\r\n\r\n"),
	  .result = HTTP_ERROR,
	  .detail = "missing CRLF after chunk data" },
	{ "control character in chunk extension is an error", IN("5;a\x01\r\nhello\r\n"),
	  .result = HTTP_ERROR,
	  .detail = "invalid character in chunk extension" },
	{ "bare LF in chunk extension is an error", IN("5;a\nhello\r\n"), .result = HTTP_ERROR,
	  .detail = "invalid character in chunk extension" },
	{ "invalid trailer field name is an error", IN("0\r\nX Y: 1\r\n\r\n"), .result = HTTP_ERROR,
	  .detail = "invalid trailer field name" },
	{ "empty trailer field name is an error", IN("0\r\n: 1\r\n\r\n"), .result = HTTP_ERROR,
	  .detail = "invalid trailer field name" },
	{ "trailer without colon is an error", IN("0\r\nXY\r\n\r\n"), .result = HTTP_ERROR,
	  .detail = "invalid trailer field name" },
	{ "obs-fold in trailers is an error", IN("0\r\nX: 1\r\n 2\r\n\r\n"), .result = HTTP_ERROR,
	  .detail = "obsolete line folding in trailer" },
	{ "NUL in trailer value is an error", IN("0\r\nX: a\0b\r\n\r\n"), .result = HTTP_ERROR,
	  .detail = "invalid trailer field value" },
	{ "bare CR in trailer is an error", IN("0\r\nX: 1\rY\r\n\r\n"), .result = HTTP_ERROR,
	  .detail = "bare CR in trailer" },
	{ "trailer section over max_trailer_bytes is an error", IN("0\r\nX: 1\r\n\r\n"),
	  .max_trailer = 5, .result = HTTP_ERROR,
	  .detail = "trailer section too large" },
	{ "bare CR ending the trailer section is an error", IN("0\r\n\rX"), .result = HTTP_ERROR,
	  .detail = "bare CR after trailer section" },
	{ "bare LF ending the trailer section is an error", IN("0\r\n\n"), .result = HTTP_ERROR,
	  .detail = "bare LF in trailer section" },
	/* chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ) */
	{ "several chunk extensions, with BWS around ';' and '='",
	  IN("2;a;b=c ; d = \"e\";f=g\r\nab\r\n0;z\r\n\r\n"), BODY("ab"), .rest = "" },
	{ "quoted-pair and obs-text in a quoted chunk extension value",
	  IN("2;a=\"x\\\"y\\\\\xe9\"\r\nab\r\n0\r\n\r\n"), BODY("ab"), .rest = "" },
	{ "chunk extension with an empty name is an error", IN("2;\r\nab\r\n0\r\n\r\n"),
	  .result = HTTP_ERROR, .detail = "empty chunk extension name" },
	{ "chunk extension with only BWS after ';' is an error", IN("2; \r\nab\r\n"),
	  .result = HTTP_ERROR, .detail = "empty chunk extension name" },
	{ "chunk extension value without a name is an error", IN("2;=x\r\nab\r\n"),
	  .result = HTTP_ERROR, .detail = "empty chunk extension name" },
	{ "two ';' in a row is an error", IN("2;;a\r\nab\r\n"), .result = HTTP_ERROR,
	  .detail = "empty chunk extension name" },
	{ "chunk extension with '=' and no value is an error", IN("2;a=\r\nab\r\n"),
	  .result = HTTP_ERROR, .detail = "empty chunk extension value" },
	{ "unterminated quoted chunk extension value is an error", IN("2;a=\"x\r\nab\r\n0\r\n\r\n"),
	  .result = HTTP_ERROR, .detail = "unterminated quoted string in chunk extension" },
	{ "quoted-pair escaping the CR is an error", IN("2;a=\"x\\\r\nab\r\n"),
	  .result = HTTP_ERROR, .detail = "unterminated quoted string in chunk extension" },
	{ "non-token octet in a chunk extension name is an error", IN("2;a@b\r\nab\r\n"),
	  .result = HTTP_ERROR, .detail = "invalid character in chunk extension" },
	{ "non-token octet in a chunk extension value is an error", IN("2;a=b/c\r\nab\r\n"),
	  .result = HTTP_ERROR, .detail = "invalid character in chunk extension" },
	{ "octets after a quoted chunk extension value are an error", IN("2;a=\"b\"c\r\nab\r\n"),
	  .result = HTTP_ERROR, .detail = "invalid character in chunk extension" },
	{ "whitespace before the end of a chunk extension is an error", IN("2;a \r\nab\r\n"),
	  .result = HTTP_ERROR, .detail = "invalid character in chunk extension" },
	{ "space inside a chunk extension value is an error", IN("2;a=b c\r\nab\r\n"),
	  .result = HTTP_ERROR, .detail = "invalid character in chunk extension" },
	{ "whitespace after a chunk extension value before CRLF is an error",
	  IN("2;a=\"b\" \r\nab\r\n"), .result = HTTP_ERROR,
	  .detail = "invalid character in chunk extension" },
	{ "DEL in a quoted chunk extension value is an error", IN("2;a=\"\x7f\"\r\nab\r\n"),
	  .result = HTTP_ERROR, .detail = "invalid character in chunk extension" },
};

struct fed {
	ssize_t status;
	char out[256];
	size_t out_len;
	char rest[256];
	size_t rest_len;
	struct http_chunked_decoder d;
};

/* Feeds the case in pieces: the first of `first` bytes, then `step` bytes
 * each (0: all that is left), each piece flush against the guard page. */
static void feed(const struct chunk_case *c, size_t first, size_t step, struct fed *f)
{
	*f = (struct fed){ .status = HTTP_INCOMPLETE };
	f->d.max_trailer_bytes = c->max_trailer ? c->max_trailer : 256;
	for (size_t at = 0, n = first; at < c->len; at += n, n = step ? step : c->len - at) {
		if (n > c->len - at)
			n = c->len - at;
		if (f->status >= 0) { /* ended: the rest is the next request's */
			memcpy(f->rest + f->rest_len, c->in + at, n);
			f->rest_len += n;
			continue;
		}
		char *p = guard_put(&g, c->in + at, n);
		size_t len = n;
		f->status = ig_http_decode_chunked(&f->d, p, &len);
		if (f->status == HTTP_ERROR)
			return;
		memcpy(f->out + f->out_len, p, len);
		f->out_len += len;
		if (f->status > 0) {
			memcpy(f->rest, p + len, (size_t)f->status);
			f->rest_len = (size_t)f->status;
		}
	}
}

static const char *fed_mismatch(const struct chunk_case *c, const struct fed *f)
{
	if (c->result == HTTP_ERROR)
		return f->status == HTTP_ERROR && f->d.error.detail &&
				       strcmp(f->d.error.detail, c->detail) == 0
			       ? NULL
			       : "status or detail";
	if (c->result == HTTP_INCOMPLETE ? f->status != HTTP_INCOMPLETE : f->status < 0)
		return "status";
	if (f->out_len != c->body_len || memcmp(f->out, c->body, c->body_len) != 0)
		return "body";
	if (f->d.total != c->body_len)
		return "total";
	if (c->result == 0 && (f->rest_len != strlen(c->rest) || memcmp(f->rest, c->rest, f->rest_len)))
		return "rest";
	return NULL;
}

static void test_chunk_case(const struct chunk_case *c)
{
	struct fed f;
	feed(c, c->len, 0, &f);
	const char *why = fed_mismatch(c, &f);
	check_that(why == NULL, c->name, "%s: status %zd, %zu bytes out, %s", why, f.status,
		   f.out_len, f.d.error.detail ? f.d.error.detail : "");

	size_t bad = SIZE_MAX;
	for (size_t i = 1; i < c->len && bad == SIZE_MAX; i++) {
		feed(c, i, 0, &f);
		if (fed_mismatch(c, &f))
			bad = i;
	}
	char name[200];
	snprintf(name, sizeof name, "%s: same when split at any byte", c->name);
	check_that(bad == SIZE_MAX, name, "split at %zu differs", bad);

	feed(c, 1, 1, &f);
	snprintf(name, sizeof name, "%s: same when fed byte by byte", c->name);
	check_that(fed_mismatch(c, &f) == NULL, name, "%s", fed_mismatch(c, &f));
}

static void test_chunk_errors_are_sticky(void)
{
	struct http_chunked_decoder d = { .max_trailer_bytes = 64 };
	char a[] = "x\r\n", b[] = "5\r\nhello\r\n0\r\n\r\n";
	size_t la = 3, lb = sizeof b - 1;
	ssize_t r1 = ig_http_decode_chunked(&d, a, &la);
	ssize_t r2 = ig_http_decode_chunked(&d, b, &lb);
	CHECK(r1 == HTTP_ERROR && r2 == HTTP_ERROR && lb == 0, "chunked decoder errors are sticky");
}

static void test_chunk_after_end(void)
{
	struct http_chunked_decoder d = { .max_trailer_bytes = 64 };
	char a[] = "0\r\n\r\n", b[] = "GET";
	size_t la = 5, lb = 3;
	ssize_t r1 = ig_http_decode_chunked(&d, a, &la);
	ssize_t r2 = ig_http_decode_chunked(&d, b, &lb);
	CHECK(r1 == 0 && la == 0 && r2 == 3 && lb == 0 && memcmp(b, "GET", 3) == 0,
	      "bytes fed after the body ended are all returned as following");
}

static void test_chunk_line_limit(void)
{
	static char in[HTTP_CHUNK_LINE_MAX + 16];
	size_t n = 0;
	in[n++] = '5';
	in[n++] = ';';
	while (n < HTTP_CHUNK_LINE_MAX + 8)
		in[n++] = 'a';
	struct chunk_case c = { .name = "ext", .in = in, .len = n, .result = HTTP_ERROR };
	struct fed f;
	feed(&c, n, 0, &f);
	CHECK(f.status == HTTP_ERROR, "chunk size line over HTTP_CHUNK_LINE_MAX is an error");

	memcpy(in + 2, "ab\r\nhello\r\n0\r\n\r\n", 16);
	c = (struct chunk_case){ .in = in, .len = 18, BODY("hello"), .rest = "" };
	feed(&c, c.len, 0, &f);
	CHECK(fed_mismatch(&c, &f) == NULL, "short chunk extension stays under the line limit");
}

static void test_trailer_bytes_counted(void)
{
	static const struct chunk_case c = { .in = "0\r\nAb: cd\r\n\r\n", .len = 13, BODY(""),
					     .rest = "" };
	struct fed f;
	feed(&c, c.len, 0, &f);
	CHECK(f.status == 0 && f.d.trailer_bytes == 8,
	      "trailer_bytes counts trailer field lines without the final CRLF");
}

int main(void)
{
	if (!guard_init(&g, 64 * 1024)) {
		printf("Bail out! cannot map the guard page\n");
		return 1;
	}
	/* It must fault, or the tests prove nothing. */
	CHECK(guard_faults(&g), "reading the guard page faults");
	for (size_t i = 0; i < sizeof valid_cases / sizeof valid_cases[0]; i++)
		test_valid(&valid_cases[i]);
	for (size_t i = 0; i < sizeof invalid_cases / sizeof invalid_cases[0]; i++)
		test_invalid(&invalid_cases[i]);
	test_empty_input();
	test_pipelined();
	test_mutations();
	for (size_t i = 0; i < sizeof valid_cases / sizeof valid_cases[0]; i++)
		test_resumed(&valid_cases[i]);
	for (size_t i = 0; i < sizeof invalid_cases / sizeof invalid_cases[0]; i++)
		test_resumed(&invalid_cases[i]);
	test_resumed_scan_is_linear();
	test_resumed_mutations();
	for (size_t i = 0; i < sizeof chunk_cases / sizeof chunk_cases[0]; i++)
		test_chunk_case(&chunk_cases[i]);
	test_chunk_errors_are_sticky();
	test_chunk_after_end();
	test_chunk_line_limit();
	test_trailer_bytes_counted();
	printf("# %zu valid and %zu invalid request cases, %zu chunked cases\n",
	       sizeof valid_cases / sizeof valid_cases[0],
	       sizeof invalid_cases / sizeof invalid_cases[0],
	       sizeof chunk_cases / sizeof chunk_cases[0]);
	guard_free(&g);
	return check_done();
}
