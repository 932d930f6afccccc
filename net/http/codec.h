/* The HTTP/1 codec (RFC 9112, 9110) that both directions use: the server's
 * request parser (parser.h) and the client's response parser
 * (response_head.h). One scanner, one version parser, one field-line
 * parser, one framing judgement (Content-Length / Transfer-Encoding) and
 * one chunked decoder, so that a smuggling defence is written once; what
 * differs between requests and responses is a struct http_direction.
 * picohttpparser's contract throughout: zero-copy, no allocation, no I/O,
 * a byte count or HTTP_ERROR / HTTP_INCOMPLETE, never reading past len. */
#ifndef NET_HTTP_CODEC_H
#define NET_HTTP_CODEC_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ingot/base.h" /* ig_header: the fields parsed */

#define HTTP_INCOMPLETE (-2)
#define HTTP_ERROR (-1)

/* Why a message was refused. Callers decide by the kind (the server's
 * status, the client's error class); the detail is a static phrase for
 * people and logs, never to be compared. */
enum http_error_kind {
	HTTP_ERR_NONE = 0,
	HTTP_ERR_SYNTAX,          /* outside the grammar */
	HTTP_ERR_LINE_TOO_LONG,   /* request or status line over its limit */
	HTTP_ERR_HEAD_TOO_LARGE,  /* the head over its limit */
	HTTP_ERR_TOO_MANY_FIELDS, /* more field lines than allowed */
	HTTP_ERR_VERSION,         /* a well-formed version this end does not speak */
	HTTP_ERR_FRAMING,         /* no single body length: CL/TE conflicts, bad chunks */
	HTTP_ERR_NOT_IMPLEMENTED, /* valid, but not done here: CONNECT, a coding, 101 */
};

struct http_error {
	enum http_error_kind kind;
	const char *detail; /* static */
};

struct http_limits {
	size_t max_request_line; /* request or status line, CRLF included */
	size_t max_header_bytes; /* the whole head, first line included */
	size_t max_headers;      /* field count (the caller's array may cap it) */
};

enum http_body_kind {
	HTTP_BODY_NONE,    /* no Content-Length and no Transfer-Encoding */
	HTTP_BODY_LENGTH,  /* Content-Length: content_length bytes follow */
	HTTP_BODY_CHUNKED, /* Transfer-Encoding: chunked */
};

/* What the rules of one direction add to the shared ones. */
struct http_direction {
	bool request;               /* Host and Expect are read; one Content-Length
				       field only, as a request smuggler's repeat
				       has no honest use */
	bool major_at_once;         /* judge the major version at its digit (a
				       reply that is not HTTP/1 fails early) */
	const char *not_http;       /* detail: the version's "HTTP/" is missing */
	const char *te_in_http10;   /* detail: Transfer-Encoding in an HTTP/1.0 message */
	const char *line_too_long;  /* detail for HTTP_ERR_LINE_TOO_LONG */
	const char *head_too_large; /* detail for HTTP_ERR_HEAD_TOO_LARGE */
};

/* ---- scanner ----------------------------------------------------------- */

/* The parser may look at [p, end). When `end` is a configured limit rather
 * than the end of the input, running into it is an error and not a wait
 * for more bytes: no future byte could fix the head. */
struct http_scan {
	const char *p;
	const char *end;
	bool end_is_limit;
	enum http_error_kind limit_kind;
	const char *limit_detail;
	struct http_error *error; /* where a failure is written */
};

static inline int http_fail(struct http_scan *s, enum http_error_kind kind, const char *detail)
{
	s->error->kind = kind;
	s->error->detail = detail;
	return HTTP_ERROR;
}

static inline int http_out_of_bytes(struct http_scan *s)
{
	return s->end_is_limit ? http_fail(s, s->limit_kind, s->limit_detail) : HTTP_INCOMPLETE;
}

/* Consumes the CRLF whose CR the caller found at `cr`. Strict: a CR not
 * followed by LF is an error (RFC 9112 2.2 allows rejecting it). */
static inline int http_expect_lf(struct http_scan *s, const char *cr)
{
	if (cr + 1 >= s->end)
		return http_out_of_bytes(s);
	if (cr[1] != '\n')
		return http_fail(s, HTTP_ERR_SYNTAX, "bare CR");
	s->p = cr + 2;
	return 0;
}

/* The window over a head at buf[0..len): bounded by max_header_bytes (and
 * by INT_MAX, as a head's length is returned as an int). */
static inline struct http_scan http_head_window(const char *buf, size_t len, const struct http_limits *limits,
						const struct http_direction *dir, struct http_error *error)
{
	size_t head_max = limits->max_header_bytes < (size_t)INT_MAX ? limits->max_header_bytes
								      : (size_t)INT_MAX;
	return (struct http_scan){
		.p = buf,
		.end = buf + (len < head_max ? len : head_max),
		.end_is_limit = len >= head_max,
		.limit_kind = HTTP_ERR_HEAD_TOO_LARGE,
		.limit_detail = dir->head_too_large,
		.error = error,
	};
}

/* The head window narrowed to the first line's limit when that is closer. */
static inline struct http_scan http_line_window(const struct http_scan *head, const struct http_limits *limits,
						const struct http_direction *dir)
{
	struct http_scan line = *head;
	if ((size_t)(head->end - head->p) >= limits->max_request_line) {
		line.end = head->p + limits->max_request_line;
		line.end_is_limit = true;
		line.limit_kind = HTTP_ERR_LINE_TOO_LONG;
		line.limit_detail = dir->line_too_long;
	}
	return line;
}

/* "HTTP/" DIGIT "." DIGIT at s->p, judged octet by octet; what follows it
 * is the caller's. Fills *major and *minor with the digits. */
int ig_http_scan_version(struct http_scan *s, const struct http_direction *dir, int *major, int *minor);

/* ---- fields and framing ------------------------------------------------ */

/* What the framing-relevant fields said, gathered during the scan and
 * judged once the head is complete, so that the verdict does not depend
 * on the order in which fields arrive. */
struct http_fields {
	bool host_seen; /* requests: Host, valid (an empty value is allowed) */
	const char *host;
	size_t host_len;
	bool expect_continue; /* requests: Expect: 100-continue */
	bool length_seen;
	uint64_t length;
	bool te_seen;
	bool te_unknown;      /* a coding other than chunked */
	bool te_chunked_last; /* the last coding listed so far is chunked */
	unsigned te_chunked;  /* how often chunked was listed */
	bool conn_close;
	bool conn_keep_alive;
	/* requests, for the trace context (net/http/trace.h): 1 + the index of
	   the first X-Request-Id, traceparent and tracestate field; 0 if none */
	uint16_t request_id_field, traceparent_field, tracestate_field;
	uint16_t traceparents, tracestates; /* how many of each */
};

/* Field lines at s->p up to and including the empty line that ends the
 * head, into headers[*count ..), at most max_fields in all; *f notes the
 * framing fields. Refuses obs-fold, bare CR or LF, and what
 * ig_http_parse_field_line refuses. */
int ig_http_parse_fields(struct http_scan *s, const struct http_direction *dir, ig_header *headers,
		      size_t max_fields, size_t *count, struct http_fields *f);

/* Notes one parsed field line, headers[index], in *f: what ig_http_parse_fields
 * does after each line, for a caller that delimits lines itself (the
 * request parser's resumed scan). In a request, only two of the errors it
 * reports depend on earlier lines: a second Host (f->host_seen) and a
 * second Content-Length (f->length_seen). */
int ig_http_note_field(struct http_scan *s, const struct http_direction *dir, struct http_fields *f,
		       const ig_header *h, size_t index);

/* RFC 9112 6.1-6.3, the rules both directions share: the body a message
 * with these fields has (NONE, LENGTH with f->length, or CHUNKED) and
 * whether the connection stays open after it. Refused: Transfer-Encoding
 * in 1.0, with Content-Length, chunked twice or not last (framing), and a
 * coding other than chunked (not implemented). */
int ig_http_judge_framing(struct http_scan *s, const struct http_direction *dir, int minor_version,
		       const struct http_fields *f, enum http_body_kind *body, bool *keep_alive);

/* uri-host [ ":" port ], as in Host and in an absolute-form target.
 * Userinfo ('@') is refused, as RFC 9110 4.2.4 recommends. */
bool ig_http_valid_authority(const char *a, size_t n);

/* ---- field syntax ------------------------------------------------------ */

/* Each returns the first octet in [p, end) outside its class, or end. */
/* tchar (RFC 9110 5.6.2): field names, methods, transfer codings. */
const char *ig_http_skip_token(const char *p, const char *end);
/* field-value octets: VCHAR, SP, HTAB, obs-text (no NUL, CR, LF or DEL);
 * also the class of a status line's reason-phrase. */
const char *ig_http_skip_field_value(const char *p, const char *end);
/* request-target octets: VCHAR except '#'. */
const char *ig_http_skip_target(const char *p, const char *end);
/* One field line (RFC 9112 5: field-name ":" OWS field-value OWS CRLF)
 * starting at p, an octet that can start a name (not CR, LF, SP or HTAB).
 * Fills h (value trimmed of OWS) and returns the octets consumed through
 * the CRLF; HTTP_INCOMPLETE if end came first; HTTP_ERROR with *error set
 * to a static detail (the kind is HTTP_ERR_SYNTAX). */
int ig_http_parse_field_line(const char *p, const char *end, ig_header *h, const char **error);
/* Case-insensitive comparison of [s, s+n) against a lowercase literal. */
bool ig_http_eq_nocase(const char *s, size_t n, const char *lower);
/* True iff a and b, n octets each, are equal ignoring ASCII case (field
 * names as the application spells them: either side may be upper case). */
bool ig_http_same_nocase(const char *a, const char *b, size_t n);
/* One element of a comma-separated list (RFC 9110 5.6.1) starting at p:
 * [*e, *e_end) trimmed of OWS, possibly empty; returns the comma after it,
 * or NULL if it is the last. */
const char *ig_http_list_element(const char *p, const char *end, const char **e, const char **e_end);
/* One transfer-coding of a Transfer-Encoding list: 1 for chunked (which
 * takes no parameters), 0 for another coding, -1 with *error if invalid. */
int ig_http_transfer_coding(const char *e, size_t n, const char **error);

/* ---- chunked body (RFC 9112 7.1; chunked.c) ------------------------------ */

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
	struct http_error error; /* on HTTP_ERROR: kind HTTP_ERR_FRAMING */
};

/* Decodes buf[0..*len) in place: on return buf[0..*len) holds the body data
 * decoded by this call. When the body (last chunk and trailers) has ended,
 * returns the count of bytes that followed it (the next pipelined message),
 * moved to buf[*len .. *len + returned); HTTP_INCOMPLETE if the body has not
 * ended (call again with the next bytes); HTTP_ERROR (d->error set) for a
 * malformed chunk size or one of more than 16 hex digits (leading zeros
 * included), a chunk extension outside its grammar (RFC 9112 7.1.1: a token
 * name, an optional token or quoted-string value, BWS only around ';' and
 * '='), a size line over HTTP_CHUNK_LINE_MAX, a missing CRLF, a bad trailer
 * field, or trailers beyond max_trailer_bytes. Line ends are strictly CRLF.
 * Errors are sticky; once the body has ended, every further byte is
 * returned as following it. */
ssize_t ig_http_decode_chunked(struct http_chunked_decoder *d, char *buf, size_t *len);

/* ---- character classes (codec.c), for the parsers of both directions --- */

#define HTTP_C_TCHAR 0x01  /* token octet (RFC 9110 5.6.2) */
#define HTTP_C_VALUE 0x02  /* field-value octet: VCHAR, SP, HTAB, obs-text */
#define HTTP_C_TARGET 0x04 /* request-target octet: VCHAR except '#' */
#define HTTP_C_HOST 0x08   /* reg-name octet: unreserved, sub-delims, '%' */
#define HTTP_C_QDTEXT 0x10 /* quoted-string octet: qdtext (RFC 9110 5.6.4) */

extern const unsigned char ig_http_char_class[256];

static inline bool http_has_class(char c, unsigned cls)
{
	return (ig_http_char_class[(unsigned char)c] & cls) != 0;
}

static inline bool http_is_ows(char c)
{
	return c == ' ' || c == '\t';
}

#endif
