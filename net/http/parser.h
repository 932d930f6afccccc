/* HTTP/1.1 request-head parser (RFC 9112), in the style of picohttpparser:
 * zero-copy (every string is a slice of the caller's buffer), no allocation,
 * no I/O. A head that arrives in pieces is scanned once: the resumed form
 * keeps, in a struct http_head_resume, where its scan stopped, and parses
 * the whole head only when its end (or an error, or a limit) is in sight.
 * Its framing rules, those that defend against request smuggling, are the
 * codec's (codec.h), so that a request it accepts has exactly one body
 * length and a response the client accepts is judged by the same code. */
#ifndef NET_HTTP_PARSER_H
#define NET_HTTP_PARSER_H

#include "codec.h"

struct http_request {
	const char *method;
	size_t method_len;
	const char *target; /* origin-form, absolute-form, or "*" (OPTIONS only);
	                       visible ASCII except '#' */
	size_t target_len;
	const char *path; /* target's path part, query excluded; "*" for
	                     OPTIONS *; for an absolute-form target without a
	                     path, the static string "/" (not in the buffer) */
	size_t path_len;
	const char *query; /* after '?', excluding it; NULL if none */
	size_t query_len;
	int minor_version; /* 0 or 1; any other well-formed version is 505 */

	ig_header *headers;          /* caller-provided array ... */
	size_t header_capacity;      /* ... of this many entries */
	size_t num_headers;          /* filled by the parser */

	/* Derived from the headers: */
	enum http_body_kind body_kind;
	uint64_t content_length; /* valid when body_kind == HTTP_BODY_LENGTH */
	bool keep_alive;         /* 1.1: unless "close"; 1.0: only with "keep-alive" */
	bool expect_continue;    /* Expect: 100-continue in a 1.1 request; other
	                            expectations are ignored, not answered 417 */
	const char *host;        /* Host value, or the authority of an absolute-form
	                            target (RFC 9112 3.2.2); NULL if absent (only
	                            allowed in 1.0); may be empty */
	size_t host_len;
	/* 1 + the index in headers of the first X-Request-Id, traceparent and
	   tracestate field (0: none), and how many traceparent and tracestate
	   fields there are: for net/http/trace.h, found during the scan. */
	uint16_t request_id_field, traceparent_field, tracestate_field;
	uint16_t traceparents, tracestates;

	struct http_error error; /* on HTTP_ERROR; ig_http_error_status() answers it */
};

/* Parses the request head at buf[0..len). Returns the number of bytes the
 * head occupies (through the blank line) on success; HTTP_INCOMPLETE if more
 * bytes are needed (after checking that what is there can still become a
 * valid head within the limits: 414 and 431 are reported as soon as len
 * reaches a limit without the line or head ending); HTTP_ERROR with
 * req->error set. Never reads buf[len] or beyond.
 * Up to 4 empty lines (CRLF) before the request line are skipped, as RFC
 * 9112 section 2.2 allows; they count toward max_header_bytes, not toward
 * max_request_line. Line ends are strictly CRLF: a bare CR or bare LF is 400.
 * The effective field limit is min(max_headers, header_capacity). On
 * HTTP_INCOMPLETE the other fields of *req are unspecified. */
int ig_http_parse_request(const char *buf, size_t len, struct http_request *req,
		       const struct http_limits *limits);

/* Where a resumed parse of one head stopped. Offsets, not pointers, from
 * the head's first byte, so the caller may move the head (compact its read
 * buffer) between calls. Zero it before a head's first call, and again
 * once a call has returned anything but HTTP_INCOMPLETE. Private but for
 * `examined`. */
struct http_head_resume {
	uint32_t scanned; /* the next byte the scan looks at */
	uint32_t line;    /* the request line's or the current field line's start */
	uint32_t mark;    /* the end of the method, or the field line's colon */
	uint32_t examined; /* the work of all calls for this head, for tests:
			      how far the resumed scan moved, plus how far each
			      whole-head parse scanned (saturating) */
	uint16_t fields;  /* field lines complete so far */
	uint8_t state;
	uint8_t empty_lines : 3; /* empty lines before the request line */
	uint8_t host_seen : 1, length_seen : 1; /* what later lines' errors depend on */
};

/* ig_http_parse_request for a head that may arrive in pieces: buf[0..len) is
 * the same head as in the previous call for *st, with more bytes. Returns
 * exactly what ig_http_parse_request(buf, len, req, limits) returns, with the
 * same *req on success and the same req->error on HTTP_ERROR, so a head's
 * verdict and the moment it comes never depend on how the bytes were split
 * (414 and 431 as soon as len reaches a limit). The cost over all calls is
 * linear in the head's length: each call scans the bytes that arrived
 * since the last, and the whole head is parsed once, when its end (or an
 * error, or a limit) is in them. A first call parses at once, as most
 * heads arrive whole. */
int ig_http_parse_request_resumed(const char *buf, size_t len, struct http_request *req,
				  const struct http_limits *limits, struct http_head_resume *st);

/* The status a server answers a refused request with: 414 for a long
 * request line, 431 for a large head or too many fields, 505 for a version,
 * 501 for what is not implemented, 400 for the rest. */
int ig_http_error_status(enum http_error_kind kind);

#endif
