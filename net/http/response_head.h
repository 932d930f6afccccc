/* HTTP/1.x response-head parser, for the outbound client (RFC 9112, 9110),
 * in the style of parser.h and picohttpparser: zero-copy (every string is a
 * slice of the caller's buffer), no allocation, no I/O, called again from
 * the start of the buffer as bytes arrive. It decides the body's framing
 * with the codec's rules (codec.h), those the server applies to requests,
 * refusing every ambiguity a hostile upstream could use to make one
 * response swallow or forge the next. The body itself is read by the
 * caller: BODY_CHUNKED through codec.h's ig_http_decode_chunked. */
#ifndef NET_HTTP_RESPONSE_HEAD_H
#define NET_HTTP_RESPONSE_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingot/base.h"
#include "net/http/codec.h"

enum http_body_framing {
	BODY_NONE,        /* HEAD, 1xx, 204, 304: no body, whatever the fields say */
	BODY_LENGTH,      /* content_length bytes follow the head */
	BODY_CHUNKED,     /* Transfer-Encoding: chunked */
	BODY_UNTIL_CLOSE, /* neither: the body ends when the connection closes */
};

struct http_response_head {
	int minor_version; /* the x of "HTTP/1.x"; 2..9 are read as 1.1 (RFC 9110 2.5) */
	int status;        /* 100..599 */
	ig_str reason;     /* may be empty; never to be relied on (RFC 9112 4) */

	ig_header *headers;          /* caller-provided array ... */
	size_t header_capacity;      /* ... of this many entries; 0: limits->max_headers */
	size_t num_headers;          /* filled by the parser */

	enum http_body_framing framing;
	uint64_t content_length; /* BODY_LENGTH: the length; otherwise the
				    Content-Length seen (0 if none) */
	bool keep_alive; /* the connection can carry the next response after
			    this one's body: 1.1 unless "Connection: close",
			    1.0 only with "keep-alive"; never for BODY_UNTIL_CLOSE */
};

/* Parses the response head at buf[0..len) and returns the bytes it occupies
 * (through the blank line); HTTP_INCOMPLETE (-2) if more bytes are needed;
 * HTTP_ERROR (-1) with *error set: its kind classifies the failure, its
 * detail is a short static reason. Never reads
 * buf[len] or beyond. An incomplete head is reported as an error as soon as
 * what is there cannot become a valid head: a bad octet, or len reaching a
 * limit without the head ending.
 *
 * head_request: the request was HEAD, so no body follows whatever the
 * fields say. limits: max_request_line bounds the status line
 * (HTTP_ERR_LINE_TOO_LONG), max_header_bytes the whole head
 * (HTTP_ERR_HEAD_TOO_LARGE), max_headers the field count
 * (HTTP_ERR_TOO_MANY_FIELDS); the
 * field limit is min(max_headers, header_capacity) when header_capacity
 * is set. Set out->headers (and header_capacity) before the call; the other
 * fields of *out are unspecified unless a head is returned.
 *
 * Accepted: "HTTP/1." DIGIT SP 3DIGIT [SP reason-phrase] CRLF (a missing SP
 * before an empty reason is tolerated; the status must be 100..599), then
 * field lines as the request parser accepts them (tchar name, no space
 * before the colon, no obs-fold, no NUL/CR/LF/DEL in values, CRLF only).
 * Refused, as hostile or undecodable framing: both Content-Length and
 * Transfer-Encoding; Transfer-Encoding in an HTTP/1.0 response; any coding
 * but a single chunked, which must be last; a Content-Length that is not
 * digits only, is over INT64_MAX, or repeats (as a field or list element)
 * with a different value (identical repeats are accepted, RFC 9110 8.6).
 * These checks apply whether or not a body follows. A 101 is refused: the
 * client never asks for an upgrade.
 *
 * Interim responses (100, 102, 103 ...) are returned like any head, with
 * framing BODY_NONE: the caller discards them and parses again from
 * buf + the returned count; the final head comes after them. Each head is
 * limited separately; the caller's headers timeout bounds a stream of them. */
int ig_http_parse_response(const char *buf, size_t len, bool head_request,
			const struct http_limits *limits, struct http_response_head *out,
			struct http_error *error);

static inline bool http_response_is_interim(const struct http_response_head *h)
{
	return h->status < 200;
}

#endif
