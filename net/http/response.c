/* Response serialization into a connection's output chain: the status line
 * and head fields are appended straight into the output blocks, so the
 * responses of one batch sit contiguously and leave in one writev. */
#include "internal.h"
#include "kernel/json.h"

#include <stdio.h>

const char *http_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 417: return "Expectation Failed";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}

static struct out_block *out_new_block(struct http_conn *c)
{
	struct out_block *b = ig_pool_take(&c->core->blocks);
	if (!b)
		return NULL;
	b->next = NULL;
	b->len = b->off = 0;
	if (c->out_tail)
		c->out_tail->next = b;
	else
		c->out_head = b;
	c->out_tail = b;
	return b;
}

static size_t block_room(const struct http_conn *c, const struct out_block *b)
{
	return c->core->blocks.obj_size - sizeof *b - b->len;
}

void http_out_append(struct http_conn *c, const void *p, size_t n)
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

static inline void head_put(struct head *h, const void *s, size_t n)
{
	if (n > sizeof h->buf - h->len) {
		http_out_append(h->c, h->buf, h->len);
		h->len = 0;
		if (n > sizeof h->buf) {
			http_out_append(h->c, s, n);
			return;
		}
	}
	memcpy(h->buf + h->len, s, n);
	h->len += n;
}

#define HEAD_LIT(h, lit) head_put((h), (lit), sizeof(lit) - 1)

void http_out_head(struct http_conn *c, int status, const char *ctype, size_t body_len,
		   const ig_wbuf *extra, bool close, int minor, bool head_only)
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
	const char *reason = http_reason(status);
	head_put(&h, reason, strlen(reason));
	HEAD_LIT(&h, "\r\n");
	bool bodiless = status < 200 || status == 204 || status == 304;
	if (ctype && !bodiless) {
		HEAD_LIT(&h, "Content-Type: ");
		head_put(&h, ctype, strlen(ctype));
		HEAD_LIT(&h, "\r\n");
	}
	if (!bodiless) {
		char cl[40] = "Content-Length: ";
		size_t n = 16 + ig_fmt_u64(cl + 16, body_len);
		cl[n++] = '\r';
		cl[n++] = '\n';
		head_put(&h, cl, n);
	}
	head_put(&h, c->core->loop.clock.date_line, IG_DATE_LINE_LEN);
	if (extra && extra->len)
		head_put(&h, extra->ptr, extra->len);
	if (close)
		HEAD_LIT(&h, "Connection: close\r\n");
	else if (minor == 0)
		HEAD_LIT(&h, "Connection: keep-alive\r\n");
	HEAD_LIT(&h, "\r\n");
	http_out_append(c, h.buf, h.len);
}

/* cap must be at least 6 * 200 + 128: details are cut at 200 bytes. */
size_t http_problem_body(char *out, size_t cap, int status, const char *detail)
{
	char esc[6 * 200];
	const char *d = detail ? detail : http_reason(status);
	size_t dl = strlen(d);
	size_t el = ig_json_escape(esc, d, dl < 200 ? dl : 200);
	int n = snprintf(out, cap,
			 "{\"type\":\"about:blank\",\"title\":\"%s\",\"status\":%d,\"detail\":\"%.*s\"}",
			 http_reason(status), status, (int)el, esc);
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* A connection-level error (no exchange exists): the parser's details are
 * static strings without characters that need escaping. */
void http_out_problem(struct http_conn *c, int status, const char *detail, bool close)
{
	char body[6 * 200 + 128];
	size_t n = http_problem_body(body, sizeof body, status, detail);
	http_out_head(c, status, "application/problem+json", n, NULL, close, 1, false);
	http_out_append(c, body, n);
}
