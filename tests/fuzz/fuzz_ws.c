/* libFuzzer target for net/ws/frame.c, what a WebSocket client (or anyone
 * in its place) sends: the stream read whole, and again fed in two reads
 * cut where the control byte says, must give the same events and the same
 * message bytes (the reader's resumed state is its only memory); every
 * chunk and control payload lies inside the bytes handed in; an error's
 * code is one a server may send.
 *
 * Input: 1 control byte, then the stream.
 *   c bits 0-1  max_message: 0 (none), 16, 4096 or 1 MiB
 *     bits 2-7  where the second read starts, in 64ths of the stream
 * Build: FUZZ_SRC_ws in the Makefile (make fuzz-build). */
#include "net/ws/frame.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	uint8_t kinds[512];
	size_t nkinds;
	uint8_t *bytes; /* the messages' and control payloads' bytes, back to back */
	size_t nbytes;
	uint16_t code;
};

static void note(struct seen *s, const struct ig_ws_event *ev, const uint8_t *buf, size_t have)
{
	const uint8_t *p = ev->kind == IG_WS_CLOSE || ev->kind == IG_WS_ERROR ? NULL : ev->data;
	if (p && ev->len && (p < buf || p + ev->len > buf + have))
		abort(); /* outside what was handed in */
	if (ev->kind == IG_WS_CLOSE && ev->reason_len &&
	    ((const uint8_t *)ev->reason < buf || (const uint8_t *)ev->reason + ev->reason_len > buf + have))
		abort();
	if (ev->kind == IG_WS_ERROR && (ev->code < 1000 || ev->code > 1011 || !ev->reason_len))
		abort();
	if (s->nkinds < sizeof s->kinds)
		s->kinds[s->nkinds++] = (uint8_t)(ev->kind | (ev->kind == IG_WS_DATA && ev->last ? 0x80 : 0));
	if (p && ev->len) {
		memcpy(s->bytes + s->nbytes, p, ev->len);
		s->nbytes += ev->len;
	}
	if (ev->kind == IG_WS_CLOSE || ev->kind == IG_WS_ERROR)
		s->code = ev->code;
}

/* Reads stream[0..n) in reads of first bytes, then the rest. */
static void read_in_two(const uint8_t *stream, size_t n, size_t first, uint64_t max, struct seen *s)
{
	uint8_t *buf = malloc(n + 1);
	struct ig_ws_reader r = { .max_message = max };
	size_t have = 0;
	for (int round = 0; round < 2; round++) {
		size_t from = round ? first : 0, to = round ? n : first;
		memcpy(buf + have, stream + from, to - from);
		have += to - from;
		for (;;) {
			struct ig_ws_event ev;
			size_t took = ig_ws_read(&r, buf, have, &ev);
			if (took > have)
				abort();
			if (ev.kind != IG_WS_NEED_MORE)
				note(s, &ev, buf, have);
			memmove(buf, buf + took, have - took);
			have -= took;
			if (ev.kind == IG_WS_NEED_MORE)
				break;
		}
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const uint64_t limits[] = { 0, 16, 4096, 1 << 20 };
	uint64_t max = limits[data[0] & 3];
	const uint8_t *stream = data + 1;
	size_t n = size - 1, cut = n * (size_t)(data[0] >> 2) / 64;
	struct seen whole = { .bytes = malloc(n + 1) }, split = { .bytes = malloc(n + 1) };
	read_in_two(stream, n, n, max, &whole);
	read_in_two(stream, n, cut, max, &split);
	/* Cut, a data frame's chunk may come in two: compare what the
	   messages and controls add up to, and the events but data chunks. */
	uint8_t a[512], b[512];
	size_t na = 0, nb = 0;
	for (size_t i = 0; i < whole.nkinds; i++)
		if (whole.kinds[i] != IG_WS_DATA)
			a[na++] = whole.kinds[i];
	for (size_t i = 0; i < split.nkinds; i++)
		if (split.kinds[i] != IG_WS_DATA)
			b[nb++] = split.kinds[i];
	if (whole.nkinds < sizeof whole.kinds && split.nkinds < sizeof split.kinds &&
	    (na != nb || memcmp(a, b, na) || whole.nbytes != split.nbytes ||
	     memcmp(whole.bytes, split.bytes, whole.nbytes) || whole.code != split.code))
		abort();
	free(whole.bytes);
	free(split.bytes);
	return 0;
}
