/* libFuzzer target for net/http/response_head: a stream of pipelined
 * responses as an upstream could send them. Each head is parsed whole and
 * from a prefix (the verdicts must agree: a prefix is incomplete or decides
 * the same), its result checked for sanity (slices inside the head, no
 * CR/LF/NUL in values, framing and keep-alive consistent), and its body
 * skipped: Content-Length bytes, or the chunked body through
 * net/http/codec.h's decoder, fed whole and again in pieces, which must
 * decode to the same bytes and end at the same place. */

/* Input: 2 control bytes, then the upstream's byte stream.
 *   c[0] bit 0     the first request was HEAD
 *        bits 1-2  limits: 0 defaults, 1 a 64-byte head, 2 3 fields,
 *                  3 a 24-byte status line
 *        bits 3-7  the prefix parsed besides the whole (len * n / 32)
 *   c[1]           piece size for the second chunked decode (0: 1 byte)
 * Build: FUZZ_SRC_response in the Makefile, or by hand:
 *   clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
 *     -fno-sanitize-recover=undefined -I. tests/fuzz/fuzz_response.c \
 *     net/http/response_head.c net/http/codec.c net/http/chunked.c -o /tmp/fuzz_response
 *   /tmp/fuzz_response -max_total_time=60 /tmp/corpus tests/fuzz/response */
#include "net/http/response_head.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RESPONSES 32

static const struct http_limits limit_sets[4] = {
	{ 8192, 16384, 64 },
	{ 8192, 64, 64 },
	{ 8192, 16384, 3 },
	{ 24, 16384, 64 },
};

static void die(const char *what)
{
	fprintf(stderr, "fuzz_response: %s\n", what);
	abort();
}

static void check_head(const char *buf, int r, const struct http_response_head *h,
		       const struct http_limits *lim)
{
	const char *end = buf + r;
	if ((size_t)r > lim->max_header_bytes)
		die("head longer than max_header_bytes");
	if (h->status < 100 || h->status > 599 || h->status == 101)
		die("status out of range");
	if (h->minor_version < 0 || h->minor_version > 9)
		die("minor version out of range");
	if (h->num_headers > lim->max_headers)
		die("more fields than max_headers");
	if (h->reason.len && (h->reason.ptr < buf || h->reason.ptr + h->reason.len > end))
		die("reason outside the head");
	for (size_t i = 0; i < h->num_headers; i++) {
		const ig_header *f = &h->headers[i];
		if (f->name.len == 0 || f->name.ptr < buf || f->name.ptr + f->name.len > end ||
		    (f->value.len && (f->value.ptr < buf || f->value.ptr + f->value.len > end)))
			die("field outside the head");
		for (size_t j = 0; j < f->value.len; j++)
			if (f->value.ptr[j] == '\r' || f->value.ptr[j] == '\n' || f->value.ptr[j] == '\0')
				die("CR, LF or NUL in a value");
		if (memchr(f->name.ptr, ':', f->name.len))
			die("colon in a field name");
	}
	if (h->framing == BODY_UNTIL_CLOSE && h->keep_alive)
		die("keep-alive with a close-delimited body");
	if (h->status < 200 && h->framing != BODY_NONE)
		die("interim head with a body");
	if (h->framing == BODY_LENGTH && h->content_length > INT64_MAX)
		die("length over INT64_MAX");
	if (r < 16 || memcmp(end - 4, "\r\n\r\n", 4) != 0)
		die("head does not end with an empty line");
}

/* Decodes the chunked body at body[0..len) whole and in pieces; returns
 * the bytes it used (body and trailers), or -1 if it did not end. */
static ssize_t skip_chunked(const char *body, size_t len, size_t piece)
{
	char *whole = malloc(len ? len : 1), *pieces = malloc(len ? len : 1);
	if (!whole || !pieces)
		die("out of memory");
	memcpy(whole, body, len);
	struct http_chunked_decoder a = { .max_trailer_bytes = 256 };
	size_t a_len = len;
	ssize_t a_rest = ig_http_decode_chunked(&a, whole, &a_len);

	struct http_chunked_decoder b = { .max_trailer_bytes = 256 };
	size_t b_out = 0, at = 0;
	ssize_t b_rest = HTTP_INCOMPLETE;
	while (at < len && b_rest == HTTP_INCOMPLETE) {
		size_t n = len - at < piece ? len - at : piece;
		memcpy(pieces + b_out, body + at, n);
		size_t got = n;
		b_rest = ig_http_decode_chunked(&b, pieces + b_out, &got);
		b_out += got;
		/* what followed the body is not the body's */
		at += b_rest >= 0 ? n - (size_t)b_rest : n;
	}
	if (a_rest != b_rest && !(a_rest >= 0 && b_rest >= 0))
		die("chunked verdict depends on the pieces");
	if (a_rest != HTTP_ERROR && (a_len != b_out || memcmp(whole, pieces, a_len) != 0 ||
				     a.total != b.total || a.total != a_len))
		die("chunked body depends on the pieces");
	ssize_t used = a_rest >= 0 ? (ssize_t)(len - (size_t)a_rest) : -1;
	if (a_rest >= 0 && (size_t)used != at)
		die("chunked body ends at different places");
	free(whole);
	free(pieces);
	return used;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	bool head_request = data[0] & 1;
	const struct http_limits *lim = &limit_sets[(data[0] >> 1) & 3];
	unsigned prefix_32 = data[0] >> 3;
	size_t piece = data[1] ? data[1] : 1;
	/* A copy of exactly the stream, so ASan sees any read past its end. */
	size_t len = size - 2;
	char *stream = malloc(len ? len : 1);
	if (!stream)
		die("out of memory");
	memcpy(stream, data + 2, len);

	ig_header fields[64], again_fields[64];
	size_t pos = 0;
	for (int n = 0; n < MAX_RESPONSES && pos <= len; n++) {
		const char *buf = stream + pos;
		size_t left = len - pos;
		struct http_response_head h = { .headers = fields };
		struct http_error error = { 0 };
		int r = ig_http_parse_response(buf, left, head_request, lim, &h, &error);

		size_t cut = left * prefix_32 / 32;
		struct http_response_head p = { .headers = again_fields };
		struct http_error p_error = { 0 };
		int pr = ig_http_parse_response(buf, cut, head_request, lim, &p, &p_error);
		if (pr != HTTP_INCOMPLETE &&
		    !(pr == r && (r != HTTP_ERROR || (error.kind == p_error.kind &&
						      strcmp(error.detail, p_error.detail) == 0))))
			die("a prefix decided differently");

		if (r == HTTP_INCOMPLETE)
			break;
		if (r == HTTP_ERROR) {
			if (error.kind == HTTP_ERR_NONE || !error.detail || !*error.detail)
				die("error without a kind or a reason");
			break;
		}
		if (r <= 0 || (size_t)r > left)
			die("head length out of range");
		check_head(buf, r, &h, lim);
		pos += (size_t)r;
		if (h.framing == BODY_NONE)
			continue;
		if (h.framing == BODY_UNTIL_CLOSE)
			break;
		if (h.framing == BODY_LENGTH) {
			if (h.content_length > len - pos)
				break;
			pos += (size_t)h.content_length;
		} else {
			ssize_t used = skip_chunked(stream + pos, len - pos, piece);
			if (used < 0)
				break;
			pos += (size_t)used;
		}
		head_request = false; /* only the first request was HEAD */
	}
	free(stream);
	return 0;
}
