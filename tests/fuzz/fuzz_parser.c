/* libFuzzer target for net/http/parser's resumed form: a request head fed in
 * pieces to ig_http_parse_request_resumed must get, at every call, what
 * ig_http_parse_request gives for the same bytes (the verdict, the error, and
 * on success every field), with the head moved between calls as a
 * compacted read buffer moves it; and the bytes scanned over all calls stay
 * linear in the head's length. */

/* Input: 2 control bytes, then the client's bytes.
 *   c[0] bits 0-1  limits: 0 defaults, 1 a 64-byte head, 2 3 fields,
 *                  3 a 24-byte request line
 *        bits 2-7  the first piece (1 + len * n / 64 bytes)
 *   c[1]           the size of each later piece (0: 1 byte)
 * Build: FUZZ_SRC_parser in the Makefile, or by hand:
 *   clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
 *     -fno-sanitize-recover=undefined -I. tests/fuzz/fuzz_parser.c \
 *     net/http/parser.c net/http/codec.c net/http/chunked.c -o /tmp/fuzz_parser
 *   /tmp/fuzz_parser -max_total_time=60 /tmp/corpus tests/fuzz/parser */
#include "net/http/parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FIELDS 64

static const struct http_limits limit_sets[4] = {
	{ 8192, 16384, 64 },
	{ 8192, 64, 64 },
	{ 8192, 16384, 3 },
	{ 24, 16384, 64 },
};

static void die(const char *what, size_t at)
{
	fprintf(stderr, "fuzz_parser: %s after %zu bytes\n", what, at);
	abort();
}

/* The slice [p, p+n) of buffer a, as an offset into it, must be the same
 * offset into buffer b as [q, q+m): the two parses saw the same bytes at
 * different places. Slices outside the buffer (the static "/") compare
 * as pointers. */
static bool same_slice(const char *a, size_t alen, const char *p, size_t n, const char *b, size_t blen,
		       const char *q, size_t m)
{
	bool in_a = p >= a && p <= a + alen, in_b = q >= b && q <= b + blen;
	if (!p || !q)
		return p == q && n == m;
	if (in_a != in_b)
		return false;
	return n == m && (in_a ? p - a == q - b : p == q);
}

static void compare(const char *rb, size_t len, int n, const struct http_request *r, const char *wb, int want,
		    const struct http_request *w)
{
	if (n != want)
		die("the verdict differs", len);
	if (n == HTTP_INCOMPLETE)
		return;
	if (n == HTTP_ERROR) {
		if (r->error.kind != w->error.kind || r->error.detail != w->error.detail)
			die("the error differs", len);
		return;
	}
#define SAME(f) same_slice(rb, len, r->f, r->f##_len, wb, len, w->f, w->f##_len)
	if (!SAME(method) || !SAME(target) || !SAME(path) || !SAME(query) || !SAME(host))
		die("a slice of the request line differs", len);
#undef SAME
	if (r->minor_version != w->minor_version || r->body_kind != w->body_kind ||
	    r->content_length != w->content_length || r->keep_alive != w->keep_alive ||
	    r->expect_continue != w->expect_continue || r->request_id_field != w->request_id_field ||
	    r->traceparent_field != w->traceparent_field || r->tracestate_field != w->tracestate_field ||
	    r->traceparents != w->traceparents || r->tracestates != w->tracestates)
		die("a derived field differs", len);
	if (r->num_headers != w->num_headers)
		die("the field count differs", len);
	for (size_t i = 0; i < r->num_headers; i++) {
		const ig_header *a = &r->headers[i], *b = &w->headers[i];
		if (!same_slice(rb, len, a->name.ptr, a->name.len, wb, len, b->name.ptr, b->name.len) ||
		    !same_slice(rb, len, a->value.ptr, a->value.len, wb, len, b->value.ptr, b->value.len))
			die("a field differs", len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return -1; /* not an input: keep it out of the corpus */
	const struct http_limits *limits = &limit_sets[data[0] & 3];
	const char *in = (const char *)data + 2;
	size_t len = size - 2;
	size_t first = 1 + len * (data[0] >> 2) / 64, step = data[1] ? data[1] : 1;
	if (first > len)
		first = len;

	/* Each call gets its bytes in a new allocation of exactly that size,
	   so ASan sees a read past the end and the head moves every time. */
	static ig_header headers[MAX_FIELDS], ref_headers[MAX_FIELDS];
	struct http_head_resume st = { 0 };
	int n = HTTP_INCOMPLETE;
	size_t at = first;
	for (;;) {
		char *rb = malloc(at), *wb = malloc(at);
		if (!rb || !wb)
			abort();
		memcpy(rb, in, at);
		memcpy(wb, in, at);
		struct http_request r = { .headers = headers, .header_capacity = MAX_FIELDS };
		struct http_request w = { .headers = ref_headers, .header_capacity = MAX_FIELDS };
		n = ig_http_parse_request_resumed(rb, at, &r, limits, &st);
		int want = ig_http_parse_request(wb, at, &w, limits);
		compare(rb, at, n, &r, wb, want, &w);
		free(rb);
		free(wb);
		if (n != HTTP_INCOMPLETE || at == len)
			break;
		at = len - at > step ? at + step : len;
	}
	/* The first piece is parsed whole; after it the scan passes each byte
	   once, and the whole parse that decides runs once. */
	if ((size_t)st.examined > first + 2 * at)
		die("the bytes scanned are not linear in the head", at);
	return 0;
}
