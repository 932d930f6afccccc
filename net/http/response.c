/* Response serialization into a connection's output chain: the status line
 * and head fields are appended straight into the output blocks, so the
 * responses of one batch sit contiguously and leave in one writev. */
#include "internal.h"
#include "kernel/runtime/json.h"
#include "kernel/runtime/membudget_log.h"

#include <stdio.h>

/* The reason phrases, by status: a table searched in order rather than a
 * switch, whose jump table over 100..505 was 1.6 KiB of the rodata that
 * every process maps at its start (a 200 never looks here:
 * ig_http_out_head writes "OK" itself). */
static const struct reason {
	uint16_t status;
	uint8_t len;
	const char *text;
} reasons[] = {
	{ 100, sizeof "Continue" - 1, "Continue" },
	{ 200, sizeof "OK" - 1, "OK" },
	{ 201, sizeof "Created" - 1, "Created" },
	{ 202, sizeof "Accepted" - 1, "Accepted" },
	{ 204, sizeof "No Content" - 1, "No Content" },
	{ 301, sizeof "Moved Permanently" - 1, "Moved Permanently" },
	{ 302, sizeof "Found" - 1, "Found" },
	{ 303, sizeof "See Other" - 1, "See Other" },
	{ 304, sizeof "Not Modified" - 1, "Not Modified" },
	{ 307, sizeof "Temporary Redirect" - 1, "Temporary Redirect" },
	{ 308, sizeof "Permanent Redirect" - 1, "Permanent Redirect" },
	{ 400, sizeof "Bad Request" - 1, "Bad Request" },
	{ 401, sizeof "Unauthorized" - 1, "Unauthorized" },
	{ 403, sizeof "Forbidden" - 1, "Forbidden" },
	{ 404, sizeof "Not Found" - 1, "Not Found" },
	{ 405, sizeof "Method Not Allowed" - 1, "Method Not Allowed" },
	{ 408, sizeof "Request Timeout" - 1, "Request Timeout" },
	{ 409, sizeof "Conflict" - 1, "Conflict" },
	{ 411, sizeof "Length Required" - 1, "Length Required" },
	{ 413, sizeof "Content Too Large" - 1, "Content Too Large" },
	{ 414, sizeof "URI Too Long" - 1, "URI Too Long" },
	{ 415, sizeof "Unsupported Media Type" - 1, "Unsupported Media Type" },
	{ 417, sizeof "Expectation Failed" - 1, "Expectation Failed" },
	{ 422, sizeof "Unprocessable Content" - 1, "Unprocessable Content" },
	{ 429, sizeof "Too Many Requests" - 1, "Too Many Requests" },
	{ 431, sizeof "Request Header Fields Too Large" - 1, "Request Header Fields Too Large" },
	{ 500, sizeof "Internal Server Error" - 1, "Internal Server Error" },
	{ 501, sizeof "Not Implemented" - 1, "Not Implemented" },
	{ 502, sizeof "Bad Gateway" - 1, "Bad Gateway" },
	{ 503, sizeof "Service Unavailable" - 1, "Service Unavailable" },
	{ 504, sizeof "Gateway Timeout" - 1, "Gateway Timeout" },
	{ 505, sizeof "HTTP Version Not Supported" - 1, "HTTP Version Not Supported" },
};

IG_HOT static const struct reason *reason_of(int status)
{
	for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
		if (reasons[i].status == status)
			return &reasons[i];
	return NULL;
}

IG_HOT const char *ig_http_reason(int status)
{
	const struct reason *r = reason_of(status);
	return r ? r->text : "Unknown";
}

/* A block past the connection's first: it waits on a slow reader, in the
 * budget (internal.h). Out of line: a response that fits the first block,
 * the usual one, pays a test and no more in ig_http_out_append. */
static __attribute__((noinline)) void out_charge_block(struct http_conn *c)
{
	if (c->out_charged < UINT16_MAX && ig_membudget_take(&c->core->mem, HTTP_BLOCK_SIZE))
		c->out_charged++;
	else if (!c->out_over) {
		c->out_over = true;
		ig_membudget_refused(IG_MEM_OUTPUT, c->core->loop.clock.now_ms,
				     "connection paused: the memory budget is spent (responses waiting to be sent)",
				     "paused_total", NULL, 0);
	}
}

IG_HOT static struct out_block *out_new_block(struct http_conn *c)
{
	struct out_block *b = ig_pool_take(&c->core->blocks);
	if (!b)
		return NULL;
	if (c->out_tail)
		out_charge_block(c);
	b->next = NULL;
	b->len = b->off = 0;
	if (c->out_tail)
		c->out_tail->next = b;
	else
		c->out_head = b;
	c->out_tail = b;
	return b;
}

IG_HOT static size_t block_room(const struct http_conn *c, const struct out_block *b)
{
	return c->core->blocks.obj_size - sizeof *b - b->len;
}

IG_HOT void ig_http_out_append(struct http_conn *c, const void *p, size_t n)
{
	const char *s = p;
	c->out_bytes += n;
	while (n) {
		struct out_block *b = c->out_tail;
		if (!b || block_room(c, b) == 0)
			b = out_new_block(c);
		if (!b) { /* pool exhausted: the response is lost; close */
			c->state = CONN_CLOSING;
			c->close_reason = HTTP_CLOSE_ERROR;
			c->out_bytes -= n;
			return;
		}
		size_t k = block_room(c, b) < n ? block_room(c, b) : n;
		memcpy(b->data + b->len, s, k);
		b->len += (uint32_t)k;
		s += k;
		n -= k;
	}
}

/* A head is composed on the stack and appended in one piece: the fixed
 * parts are copied with constant sizes the compiler inlines, and the
 * output chain is touched once rather than once per field. A piece that
 * does not fit (a long extra field) flushes what is composed so far. */
struct head {
	struct http_conn *c;
	size_t len;
	char buf[512];
};

/* Copies n bytes; at most 32 of them in two loads and two stores that may
 * overlap, inlined: the pieces of a head (a reason phrase, a media type,
 * Content-Length, a request id) are short, and a call to memcpy costs more
 * than the copy. Reads and writes stay within [0, n). */
IG_HOT static __attribute__((noinline)) void copy_short(char *d, const char *s, size_t n)
{
	if (n > 32) {
		memcpy(d, s, n);
	} else if (n >= 16) {
		char a[16], b[16];
		memcpy(a, s, 16);
		memcpy(b, s + n - 16, 16);
		memcpy(d, a, 16);
		memcpy(d + n - 16, b, 16);
	} else if (n >= 8) {
		uint64_t a, b;
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else if (n) {
		char first = s[0], middle = s[n / 2], last = s[n - 1];
		d[0] = first;
		d[n / 2] = middle;
		d[n - 1] = last;
	}
}

static inline void head_put(struct head *h, const void *s, size_t n)
{
	if (n > sizeof h->buf - h->len) {
		ig_http_out_append(h->c, h->buf, h->len);
		h->len = 0;
		if (n > sizeof h->buf) {
			ig_http_out_append(h->c, s, n);
			return;
		}
	}
	if (__builtin_constant_p(n))
		memcpy(h->buf + h->len, s, n);
	else
		copy_short(h->buf + h->len, s, n);
	h->len += n;
}

#define HEAD_LIT(h, lit) head_put((h), (lit), sizeof(lit) - 1)

const char ig_http_json_type[] = "application/json";

IG_HOT void ig_http_out_head(struct http_conn *c, int status, const char *ctype, size_t body_len,
		   const ig_wbuf *extra, ig_str request_id, bool close, int minor, bool head_only)
{
	(void)head_only;
	struct head h; /* buf is not zero-filled: only [0, len) is ever read */
	h.c = c;
	memcpy(h.buf, "HTTP/1.1 ", 9);
	h.buf[9] = (char)('0' + status / 100);
	h.buf[10] = (char)('0' + status / 10 % 10);
	h.buf[11] = (char)('0' + status % 10);
	h.buf[12] = ' ';
	h.len = 13;
	if (status == 200) { /* most answers: no lookup, no strlen */
		HEAD_LIT(&h, "OK\r\n");
	} else {
		const struct reason *r = reason_of(status);
		if (r)
			head_put(&h, r->text, r->len);
		else
			HEAD_LIT(&h, "Unknown");
		HEAD_LIT(&h, "\r\n");
	}
	bool bodiless = status < 200 || status == 204 || status == 304;
	if (ctype && !bodiless) {
		HEAD_LIT(&h, "Content-Type: ");
		if (ctype == ig_http_json_type)
			HEAD_LIT(&h, "application/json\r\n");
		else {
			head_put(&h, ctype, strlen(ctype));
			HEAD_LIT(&h, "\r\n");
		}
	}
	if (!bodiless) {
		char cl[40] = "Content-Length: ";
		size_t n = 16 + ig_fmt_u64(cl + 16, body_len);
		cl[n++] = '\r';
		cl[n++] = '\n';
		head_put(&h, cl, n);
	}
	head_put(&h, c->core->loop.clock.date_line, IG_DATE_LINE_LEN);
	if (request_id.len == HTTP_MADE_ID_LEN && sizeof h.buf - h.len >= 16 + HTTP_MADE_ID_LEN) {
		/* The usual id (made, or a client's of that length): one room
		   check, and copies of constant sizes, inlined. */
		char *d = h.buf + h.len;
		memcpy(d, "X-Request-Id: ", 14);
		memcpy(d + 14, request_id.ptr, HTTP_MADE_ID_LEN);
		memcpy(d + 14 + HTTP_MADE_ID_LEN, "\r\n", 2);
		h.len += 16 + HTTP_MADE_ID_LEN;
	} else if (request_id.len) { /* visible ASCII only (trace.h): safe in a head */
		HEAD_LIT(&h, "X-Request-Id: ");
		head_put(&h, request_id.ptr, request_id.len);
		HEAD_LIT(&h, "\r\n");
	}
	if (extra && extra->len)
		head_put(&h, extra->ptr, extra->len);
	if (close)
		HEAD_LIT(&h, "Connection: close\r\n");
	else if (minor == 0)
		HEAD_LIT(&h, "Connection: keep-alive\r\n");
	HEAD_LIT(&h, "\r\n");
	ig_http_out_append(c, h.buf, h.len);
}

size_t ig_http_problem_body(char *out, size_t cap, int status, const char *detail, const char *error_kind,
			    ig_str request_id)
{
	char esc[6 * 200], rid[6 * HTTP_REQUEST_ID_MAX];
	const char *d = detail ? detail : ig_http_reason(status);
	size_t dl = strlen(d);
	size_t el = ig_json_escape(esc, d, dl < 200 ? dl : 200);
	size_t rl = ig_json_escape(rid, request_id.ptr, request_id.len < HTTP_REQUEST_ID_MAX ? request_id.len
											   : HTTP_REQUEST_ID_MAX);
	int n = snprintf(out, cap,
			 "{\"type\":\"about:blank\",\"title\":\"%s\",\"status\":%d,\"detail\":\"%.*s\"%s%.32s%s%s%.*s%s}",
			 ig_http_reason(status), status, (int)el, esc, error_kind ? ",\"error\":\"" : "",
			 error_kind ? error_kind : "", error_kind ? "\"" : "", rl ? ",\"request_id\":\"" : "", (int)rl, rid,
			 rl ? "\"" : "");
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* A connection-level error (no exchange exists): the parser's details are
 * static strings without characters that need escaping. */
size_t ig_http_out_problem(struct http_conn *c, int status, const char *detail, ig_str request_id, bool close,
			   ig_str extra)
{
	char body[HTTP_PROBLEM_MAX];
	size_t n = ig_http_problem_body(body, sizeof body, status, detail, NULL, request_id);
	/* The engine's 503s (no request slot, no memory for the body) pass
	   once load falls: a client may try again. */
	static const char retry[] = "Retry-After: 1\r\n";
	char lines[sizeof retry - 1 + HTTP_EXTRA_LINES_MAX];
	size_t k = 0;
	if (status == 503) {
		memcpy(lines, retry, sizeof retry - 1);
		k = sizeof retry - 1;
	}
	if (extra.len <= sizeof lines - k) {
		memcpy(lines + k, extra.ptr, extra.len);
		k += extra.len;
	}
	const ig_wbuf fields = { .ptr = lines, .len = k }; /* read only */
	ig_http_out_head(c, status, "application/problem+json", n, &fields, request_id, close, 1, false);
	ig_http_out_append(c, body, n);
	return n;
}
