/* libFuzzer target for net/nats/proto.c, what a NATS server (or anyone in
 * its place) sends: the stream framed whole, and again fed in two reads
 * cut where the control byte says, must give the same frames (the
 * parser's resumed state is its only memory); every slice lies inside the
 * input; each HMSG's header block is read for its status and a field.
 *
 * Input: 1 control byte, then the stream.
 *   c bits 0-1  max_payload: 16, 256, 4096 or 1 MiB
 *     bits 2-7  where the second read starts, in 64ths of the stream
 * Build: FUZZ_SRC_nats in the Makefile (make fuzz-build). */
#include "net/nats/proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FRAMES 256

struct seen {
	enum ig_nats_op op;
	size_t subject, subject_len, reply, reply_len, headers, headers_len, payload, payload_len;
	uint64_t sid;
	size_t took;
};

static size_t off(const char *base, const char *p) { return p ? (size_t)(p - base) : 0; }

static void inside(const char *base, size_t len, ig_str s)
{
	if (s.len && (s.ptr < base || s.ptr + s.len > base + len))
		abort();
}

/* Frames s[0..n) with reads of at most first then the rest; returns the
 * frames and whether it ended in an error. */
static size_t frame_all(const char *s, size_t n, size_t first, size_t max_payload, struct seen *out, int *error)
{
	struct ig_nats_parser p;
	ig_nats_parser_init(&p, max_payload);
	size_t pos = 0, have = first < n ? first : n, count = 0;
	*error = 0;
	while (pos < n && count < MAX_FRAMES) {
		struct ig_nats_frame f;
		int r = ig_nats_parse(&p, s + pos, have - pos, &f);
		if (r == IG_NATS_PARSE_MORE) {
			if (have == n)
				break;
			have = n;
			continue;
		}
		if (r < 0) {
			*error = 1;
			break;
		}
		if ((size_t)r > have - pos)
			abort();
		inside(s + pos, (size_t)r, f.subject);
		inside(s + pos, (size_t)r, f.reply);
		inside(s + pos, (size_t)r, f.headers);
		inside(s + pos, (size_t)r, f.payload);
		if (f.op == IG_NATS_OP_MSG && f.payload.len + f.headers.len > max_payload)
			abort();
		if (f.headers.len) {
			int status;
			ig_str d, v;
			if (ig_nats_headers_status(f.headers, &status, &d))
				inside(f.headers.ptr, f.headers.len, d);
			if (ig_nats_header_get(f.headers, "Nats-Msg-Id", &v))
				inside(f.headers.ptr, f.headers.len, v);
		}
		out[count++] = (struct seen){
			.op = f.op, .sid = f.sid, .took = (size_t)r,
			.subject = off(s + pos, f.subject.ptr), .subject_len = f.subject.len,
			.reply = off(s + pos, f.reply.ptr), .reply_len = f.reply.len,
			.headers = off(s + pos, f.headers.ptr), .headers_len = f.headers.len,
			.payload = off(s + pos, f.payload.ptr), .payload_len = f.payload.len,
		};
		pos += (size_t)r;
	}
	return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const size_t limits[] = { 16, 256, 4096, 1 << 20 };
	size_t max_payload = limits[data[0] & 3];
	size_t n = size - 1;
	char *s = malloc(n ? n : 1);
	if (!s)
		return 0;
	memcpy(s, data + 1, n);
	static struct seen a[MAX_FRAMES], b[MAX_FRAMES];
	int ea, eb;
	size_t na = frame_all(s, n, n, max_payload, a, &ea);
	size_t nb = frame_all(s, n, n * (data[0] >> 2) / 64, max_payload, b, &eb);
	/* A cut can only delay a verdict, never change one. */
	if (na != nb || ea != eb || memcmp(a, b, na * sizeof a[0]) != 0)
		abort();
	free(s);
	return 0;
}
