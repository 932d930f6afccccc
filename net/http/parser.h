/* HTTP/1.1 request-head parser (RFC 9112), in the style of picohttpparser:
 * zero-copy (every string is a slice of the caller's buffer), no allocation,
 * no I/O. It is called again from the start of the buffer each time more
 * bytes arrive, so it is correct for input split at any byte.
 * It also applies the message-framing rules that defend against request
 * smuggling, so that a request it accepts has exactly one body length. */
#ifndef NET_HTTP_PARSER_H
#define NET_HTTP_PARSER_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#define HTTP_INCOMPLETE (-2)
#define HTTP_ERROR (-1)

struct http_header {
	const char *name;
	size_t name_len;
	const char *value; /* leading and trailing OWS removed */
	size_t value_len;
};

enum http_body_kind {
	HTTP_BODY_NONE,    /* no Content-Length and no Transfer-Encoding */
	HTTP_BODY_LENGTH,  /* Content-Length: content_length bytes follow */
	HTTP_BODY_CHUNKED, /* Transfer-Encoding: chunked */
};

struct http_limits {
	size_t max_request_line; /* bytes incl. CRLF; beyond: 414 */
	size_t max_header_bytes; /* whole head incl. request line; beyond: 431 */
	size_t max_headers;      /* field count; beyond: 431 (<= capacity of headers[]) */
};

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

	struct http_header *headers; /* caller-provided array ... */
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

	/* On HTTP_ERROR: the status to answer (400, 414, 431, 501, 505) and a
	   short static reason for the problem+json detail. */
	int error_status;
	const char *error_detail;
};

/* Parses the request head at buf[0..len). Returns the number of bytes the
 * head occupies (through the blank line) on success; HTTP_INCOMPLETE if more
 * bytes are needed (after checking that what is there can still become a
 * valid head within the limits: 414 and 431 are reported as soon as len
 * reaches a limit without the line or head ending); HTTP_ERROR with
 * req->error_status set. Never reads buf[len] or beyond.
 * Up to 4 empty lines (CRLF) before the request line are skipped, as RFC
 * 9112 section 2.2 allows; they count toward max_header_bytes, not toward
 * max_request_line. Line ends are strictly CRLF: a bare CR or bare LF is 400.
 * The effective field limit is min(max_headers, header_capacity). On
 * HTTP_INCOMPLETE the other fields of *req are unspecified. */
int http_parse_request(const char *buf, size_t len, struct http_request *req,
		       const struct http_limits *limits);

/* Longest chunk-size line (size and extensions, before the LF) the
 * decoder accepts. */
#define HTTP_CHUNK_LINE_MAX 4096

/* Incremental chunked-body decoder, decoding in place (like
 * phr_decode_chunked). Trailer fields are parsed for validity and dropped.
 * Zero it (= { 0 }) and set max_trailer_bytes before the first call. */
struct http_chunked_decoder {
	uint64_t bytes_left_in_chunk;
	int state; /* private */
	size_t line_bytes; /* private: length of the current chunk-size line */
	size_t trailer_bytes; /* bytes of trailer fields (final CRLF excluded) */
	size_t max_trailer_bytes; /* set by the caller before the first call */
	uint64_t total; /* decoded body bytes so far */
	const char *error_detail; /* on HTTP_ERROR: short static reason */
};

/* Decodes buf[0..*len) in place: on return buf[0..*len) holds the body data
 * decoded by this call. When the body (last chunk and trailers) has ended,
 * returns the count of bytes that followed it (the next pipelined request),
 * moved to buf[*len .. *len + returned); HTTP_INCOMPLETE if the body has not
 * ended (call again with the next bytes); HTTP_ERROR (d->error_detail set)
 * for a malformed chunk size or one of more than 16 hex digits (leading
 * zeros included), a size line over HTTP_CHUNK_LINE_MAX, a missing CRLF, a
 * bad trailer field, or trailers beyond max_trailer_bytes. Line ends are
 * strictly CRLF. Errors are sticky; once the body has ended, every further
 * byte is returned as following it. */
ssize_t http_decode_chunked(struct http_chunked_decoder *d, char *buf, size_t *len);

/* Field syntax shared with the client's response parser
 * (net/client/response.c), so that both directions judge octets with the
 * same tables. Each returns the first octet in [p, end) outside its class,
 * or end. */
/* tchar (RFC 9110 5.6.2): field names, methods, transfer codings. */
const char *http_skip_token(const char *p, const char *end);
/* field-value octets: VCHAR, SP, HTAB, obs-text (no NUL, CR, LF or DEL);
 * also the class of a status line's reason-phrase. */
const char *http_skip_field_value(const char *p, const char *end);
/* One field line (RFC 9112 5: field-name ":" OWS field-value OWS CRLF)
 * starting at p, an octet that can start a name (not CR, LF, SP or HTAB).
 * Fills h (value trimmed of OWS) and returns the octets consumed through
 * the CRLF; HTTP_INCOMPLETE if end came first; HTTP_ERROR with *error set
 * to a static message. Requests and responses parse fields alike. */
int http_parse_field_line(const char *p, const char *end, struct http_header *h, const char **error);
/* Case-insensitive comparison of [s, s+n) against a lowercase literal. */
bool http_eq_nocase(const char *s, size_t n, const char *lower);
/* True iff a and b, n octets each, are equal ignoring ASCII case (field
 * names as the application spells them: either side may be upper case). */
bool http_same_nocase(const char *a, const char *b, size_t n);
/* One element of a comma-separated list (RFC 9110 5.6.1) starting at p:
 * [*e, *e_end) trimmed of OWS, possibly empty; returns the comma after it,
 * or NULL if it is the last. */
const char *http_list_element(const char *p, const char *end, const char **e, const char **e_end);
/* One transfer-coding of a Transfer-Encoding list: 1 for chunked (which
 * takes no parameters), 0 for another coding, -1 with *error if invalid. */
int http_transfer_coding(const char *e, size_t n, const char **error);

#endif
