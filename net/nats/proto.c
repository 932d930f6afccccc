/* The NATS protocol parser (proto.h): control lines found once (the scan
 * resumes where the last read ended), a message's line parsed once and its
 * payload awaited by length, and the header block's reader. */
#include "proto.h"

#include <string.h>

#include "net/ascii.h"

void ig_nats_parser_init(struct ig_nats_parser *p, size_t max_payload)
{
	/* INFO is the longest line: a cluster's connect_urls can fill kilobytes. */
	*p = (struct ig_nats_parser){ .max_line = 65536, .max_payload = max_payload };
}

static int fail(struct ig_nats_parser *p, const char *why)
{
	p->error = why;
	return IG_NATS_PARSE_ERROR;
}

static bool word_is(const char *s, size_t n, const char *lit)
{
	size_t m = strlen(lit);
	if (n != m)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ig_ascii_lower(s[i]) != ig_ascii_lower(lit[i]))
			return false;
	return true;
}

bool ig_nats_uint(ig_str t, uint64_t *out)
{
	if (t.len == 0 || t.len > 19)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < t.len; i++) {
		if (t.ptr[i] < '0' || t.ptr[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(t.ptr[i] - '0');
	}
	*out = v;
	return true;
}

static bool parse_size(ig_str t, size_t *out)
{
	uint64_t v;
	if (!ig_nats_uint(t, &v))
		return false;
	*out = (size_t)v;
	return true;
}

/* Splits line[0..n) at blanks into at most max tokens; returns how many,
 * or max + 1 when there are more. */
static size_t split(const char *line, size_t n, ig_str *tok, size_t max)
{
	size_t k = 0, i = 0;
	while (i < n) {
		while (i < n && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == n)
			break;
		size_t s = i;
		while (i < n && line[i] != ' ' && line[i] != '\t')
			i++;
		if (k == max)
			return max + 1;
		tok[k++] = (ig_str){ line + s, i - s };
	}
	return k;
}

/* A MSG or HMSG line (tokens after the op): the frame's fields as offsets
 * from buf, and the payload's size. */
static int message_line(struct ig_nats_parser *p, const char *buf, bool hmsg, const ig_str *tok, size_t n)
{
	size_t need = hmsg ? 4 : 3;
	if (n != need && n != need + 1)
		return fail(p, hmsg ? "a malformed HMSG line" : "a malformed MSG line");
	struct ig_nats_frame *f = &p->pending;
	*f = (struct ig_nats_frame){ .op = IG_NATS_OP_MSG };
	f->subject = (ig_str){ (const char *)(uintptr_t)(tok[0].ptr - buf), tok[0].len };
	size_t sid;
	if (!parse_size(tok[1], &sid))
		return fail(p, "a message's sid is not a number");
	f->sid = sid;
	size_t i = 2;
	if (n == need + 1) {
		f->reply = (ig_str){ (const char *)(uintptr_t)(tok[2].ptr - buf), tok[2].len };
		i = 3;
	}
	size_t hdr = 0, total;
	if (hmsg && !parse_size(tok[i++], &hdr))
		return fail(p, "a message's header size is not a number");
	if (!parse_size(tok[i], &total))
		return fail(p, "a message's size is not a number");
	if (hdr > total)
		return fail(p, "a message's headers are larger than the message");
	if (total > p->max_payload)
		return fail(p, "a message is larger than the payload limit");
	f->headers.len = hdr;
	p->total = total + 2;
	return 0;
}

int ig_nats_parse(struct ig_nats_parser *p, const char *buf, size_t len, struct ig_nats_frame *f)
{
	if (!p->line_end) {
		const char *nl = memchr(buf + p->scanned, '\n', len - p->scanned);
		if (!nl) {
			p->scanned = len;
			return len > p->max_line ? fail(p, "a control line is too long") : IG_NATS_PARSE_MORE;
		}
		size_t end = (size_t)(nl - buf) + 1;
		if (end > p->max_line)
			return fail(p, "a control line is too long");
		size_t n = end - 1;
		if (n > 0 && buf[n - 1] == '\r')
			n--;
		p->scanned = 0;
		ig_str tok[6];
		size_t op_end = 0;
		while (op_end < n && buf[op_end] != ' ' && buf[op_end] != '\t')
			op_end++;
		const char *rest = buf + op_end;
		size_t rest_n = n - op_end;
		*f = (struct ig_nats_frame){ 0 };
		if (word_is(buf, op_end, "PING")) {
			f->op = IG_NATS_OP_PING;
			return (int)end;
		}
		if (word_is(buf, op_end, "PONG")) {
			f->op = IG_NATS_OP_PONG;
			return (int)end;
		}
		if (word_is(buf, op_end, "+OK")) {
			f->op = IG_NATS_OP_OK;
			return (int)end;
		}
		if (word_is(buf, op_end, "INFO") || word_is(buf, op_end, "-ERR")) {
			f->op = ig_ascii_lower(buf[0]) == 'i' ? IG_NATS_OP_INFO : IG_NATS_OP_ERR;
			while (rest_n && (*rest == ' ' || *rest == '\t'))
				rest++, rest_n--;
			if (f->op == IG_NATS_OP_ERR && rest_n >= 2 && rest[0] == '\'' && rest[rest_n - 1] == '\'')
				rest++, rest_n -= 2;
			f->payload = (ig_str){ rest, rest_n };
			return (int)end;
		}
		bool hmsg = word_is(buf, op_end, "HMSG");
		if (!hmsg && !word_is(buf, op_end, "MSG"))
			return fail(p, "an unknown protocol operation");
		size_t k = split(rest, rest_n, tok, 5);
		if (message_line(p, buf, hmsg, tok, k) < 0)
			return IG_NATS_PARSE_ERROR;
		p->line_end = end;
	}
	if (len - p->line_end < p->total)
		return IG_NATS_PARSE_MORE;
	const char *body = buf + p->line_end;
	size_t size = p->total - 2;
	if (body[size] != '\r' || body[size + 1] != '\n')
		return fail(p, "a message's payload does not end with CRLF");
	*f = p->pending;
	f->subject.ptr = buf + (uintptr_t)f->subject.ptr;
	if (f->reply.len)
		f->reply.ptr = buf + (uintptr_t)f->reply.ptr;
	else
		f->reply.ptr = NULL;
	f->headers.ptr = body;
	f->payload = (ig_str){ body + f->headers.len, size - f->headers.len };
	size_t took = p->line_end + p->total;
	p->line_end = 0;
	p->total = 0;
	return (int)took;
}

/* The next line of a header block from *pos: false at its end. */
static bool next_line(ig_str h, size_t *pos, ig_str *line)
{
	if (*pos >= h.len)
		return false;
	const char *s = h.ptr + *pos;
	const char *nl = memchr(s, '\n', h.len - *pos);
	size_t n = nl ? (size_t)(nl - s) : h.len - *pos;
	*pos += n + (nl ? 1 : 0);
	if (n && s[n - 1] == '\r')
		n--;
	*line = (ig_str){ s, n };
	return true;
}

static ig_str trim(ig_str s)
{
	while (s.len && (s.ptr[0] == ' ' || s.ptr[0] == '\t'))
		s.ptr++, s.len--;
	while (s.len && (s.ptr[s.len - 1] == ' ' || s.ptr[s.len - 1] == '\t'))
		s.len--;
	return s;
}

bool ig_nats_headers_status(ig_str headers, int *status, ig_str *description)
{
	size_t pos = 0;
	ig_str line;
	*status = 0;
	*description = (ig_str){ NULL, 0 };
	if (!next_line(headers, &pos, &line) || line.len < 8 || memcmp(line.ptr, "NATS/1.0", 8) != 0)
		return false;
	ig_str rest = trim((ig_str){ line.ptr + 8, line.len - 8 });
	size_t i = 0;
	int code = 0;
	while (i < rest.len && i < 3 && rest.ptr[i] >= '0' && rest.ptr[i] <= '9')
		code = code * 10 + (rest.ptr[i++] - '0');
	if (i == 3)
		*status = code;
	*description = trim((ig_str){ rest.ptr + i, rest.len - i });
	return true;
}

bool ig_nats_header_get(ig_str headers, const char *name, ig_str *value)
{
	size_t pos = 0;
	ig_str line;
	if (!next_line(headers, &pos, &line)) /* the status line */
		return false;
	while (next_line(headers, &pos, &line) && line.len) {
		const char *colon = memchr(line.ptr, ':', line.len);
		if (!colon || !word_is(line.ptr, (size_t)(colon - line.ptr), name))
			continue;
		*value = trim((ig_str){ colon + 1, line.len - (size_t)(colon - line.ptr) - 1 });
		return true;
	}
	return false;
}
