/* net/ws: RFC 6455's frames read from a client (its own examples, every
 * protocol error with its close code, the size limit, a stream fed one
 * byte at a time and cut everywhere) and written by the server, and the
 * handshake's accept value (the RFC's example). */
#include "net/ws/frame.h"
#include "net/ws/handshake.h"
#include "tests/unit/check.h"

#include <stdlib.h>

/* A client frame: op, fin, payload masked with mask. */
static size_t client_frame(uint8_t *out, uint8_t op, bool fin, const void *payload, size_t n, const uint8_t mask[4])
{
	size_t h = ig_ws_put_head(out, op, fin, n);
	out[1] |= 0x80;
	memcpy(out + h, mask, 4);
	h += 4;
	for (size_t i = 0; i < n; i++)
		out[h + i] = ((const uint8_t *)payload)[i] ^ mask[i & 3];
	return h + n;
}

/* What a stream gives when read in pieces of at most step bytes (the
 * unread rest handed back each time, as the engine does): the messages'
 * bytes back to back, and the events' kinds as letters (D data end of a
 * message, P ping, O pong, C close, E error). */
struct outcome {
	char kinds[64];
	uint8_t data[1 << 17];
	size_t data_len;
	uint16_t code;
	bool text;
};

static void read_all(const uint8_t *stream, size_t n, size_t step, uint64_t max, struct outcome *o)
{
	memset(o, 0, sizeof *o);
	struct ig_ws_reader r = { .max_message = max };
	uint8_t *buf = malloc(n + 1);
	size_t have = 0, fed = 0, k = 0;
	for (;;) {
		size_t more = n - fed < step ? n - fed : step;
		memcpy(buf + have, stream + fed, more);
		have += more;
		fed += more;
		struct ig_ws_event ev;
		for (;;) {
			size_t took = ig_ws_read(&r, buf, have, &ev);
			if (ev.kind == IG_WS_DATA) {
				memcpy(o->data + o->data_len, ev.data, ev.len);
				o->data_len += ev.len;
				o->text = ev.text;
				if (ev.last)
					o->kinds[k++] = 'D';
			} else if (ev.kind != IG_WS_NEED_MORE) {
				o->kinds[k++] = "??POCE"[ev.kind];
				if (ev.kind == IG_WS_CLOSE || ev.kind == IG_WS_ERROR)
					o->code = ev.code;
			}
			memmove(buf, buf + took, have - took); /* the event's bytes were in there */
			have -= took;
			if (ev.kind == IG_WS_NEED_MORE)
				break;
		}
		if (fed == n)
			break;
	}
	free(buf);
}

static void test_rfc_examples(void)
{
	/* RFC 6455 section 5.7. */
	uint8_t hello[] = { 0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58 };
	struct ig_ws_reader r = { 0 };
	struct ig_ws_event ev;
	size_t took = ig_ws_read(&r, hello, sizeof hello, &ev);
	CHECK(took == sizeof hello && ev.kind == IG_WS_DATA && ev.text && ev.first && ev.last && ev.len == 5 &&
		      memcmp(ev.data, "Hello", 5) == 0,
	      "ws: the RFC's masked \"Hello\" is one whole text message");
	uint8_t out[IG_WS_HEAD_MAX];
	CHECK(ig_ws_put_head(out, IG_WS_OP_TEXT, true, 5) == 2 && out[0] == 0x81 && out[1] == 0x05,
	      "ws: a server's \"Hello\" head is 0x81 0x05");
	CHECK(ig_ws_put_head(out, IG_WS_OP_BINARY, true, 256) == 4 && out[0] == 0x82 && out[1] == 126 && out[2] == 1 &&
		      out[3] == 0,
	      "ws: 256 bytes take a 16-bit length");
	CHECK(ig_ws_put_head(out, IG_WS_OP_BINARY, true, 65536) == 10 && out[1] == 127 && out[7] == 1 && out[9] == 0,
	      "ws: 64 KiB take a 64-bit length");
	char accept[IG_WS_ACCEPT_LEN + 1] = { 0 };
	ig_ws_accept("dGhlIHNhbXBsZSBub25jZQ==", 24, accept);
	CHECK(strcmp(accept, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") == 0, "ws: the RFC's handshake example's accept value");
	CHECK(ig_ws_key_valid("dGhlIHNhbXBsZSBub25jZQ==", 24), "ws: a 16-byte nonce's key is valid");
	CHECK(!ig_ws_key_valid("dGhlIHNhbXBsZSBub25jZQ=", 23) && !ig_ws_key_valid("dGhlIHNhbXBsZSBub25jZQQQ", 24) &&
		      !ig_ws_key_valid("dGhlIHNhbXBsZSBub25jZ!==", 24),
	      "ws: keys of another length, decoded size or alphabet are not");
}

static void test_streams(void)
{
	static const uint8_t mask[4] = { 0x11, 0x22, 0x33, 0x44 };
	static uint8_t s[1 << 18];
	static struct outcome o, whole;
	size_t n = 0;
	/* "Hel" + ping + "lo" (a control frame between fragments), a
	   binary of 70,000 bytes, an empty text, a pong, then a close. */
	n += client_frame(s + n, IG_WS_OP_TEXT, false, "Hel", 3, mask);
	n += client_frame(s + n, IG_WS_OP_PING, true, "p", 1, mask);
	n += client_frame(s + n, IG_WS_OP_CONTINUATION, true, "lo", 2, mask);
	static uint8_t big[70000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (uint8_t)(i * 7);
	n += client_frame(s + n, IG_WS_OP_BINARY, true, big, sizeof big, mask);
	n += client_frame(s + n, IG_WS_OP_TEXT, true, "", 0, mask);
	n += client_frame(s + n, IG_WS_OP_PONG, true, "", 0, mask);
	uint8_t close[8] = { 0x03, 0xe8, 'b', 'y', 'e' };
	n += client_frame(s + n, IG_WS_OP_CLOSE, true, close, 5, mask);
	read_all(s, n, n, 0, &whole);
	CHECK(strcmp(whole.kinds, "PDDDOC") == 0 && whole.code == 1000, "ws: a stream read at once gives its events in order");
	CHECK(whole.data_len == 5 + sizeof big && memcmp(whole.data, "Hello", 5) == 0 &&
		      memcmp(whole.data + 5, big, sizeof big) == 0,
	      "ws: the messages' bytes come back unmasked");
	bool same = true;
	for (size_t step = 1; step <= 17; step++) {
		read_all(s, n, step, 0, &o);
		same &= strcmp(o.kinds, whole.kinds) == 0 && o.data_len == whole.data_len &&
			memcmp(o.data, whole.data, o.data_len) == 0 && o.code == whole.code;
	}
	CHECK(same, "ws: fed 1..17 bytes at a time, the same events and bytes");
	read_all(s, n, n, 60000, &o);
	CHECK(strcmp(o.kinds, "PDE") == 0 && o.code == IG_WS_CLOSE_TOO_BIG, "ws: a message over the limit closes 1009");
	/* The limit counts a message's frames together. */
	n = client_frame(s, IG_WS_OP_TEXT, false, "abcd", 4, mask);
	n += client_frame(s + n, IG_WS_OP_CONTINUATION, true, "efgh", 4, mask);
	read_all(s, n, n, 7, &o);
	CHECK(o.code == IG_WS_CLOSE_TOO_BIG, "ws: the limit counts every frame of a message");
	read_all(s, n, n, 8, &o);
	CHECK(strcmp(o.kinds, "D") == 0 && o.data_len == 8, "ws: a message of exactly the limit passes");
}

/* One frame's first bytes, hand-made: the close code it must give. */
static uint16_t error_of(const uint8_t *frame, size_t n)
{
	struct outcome o;
	read_all(frame, n, n, 0, &o);
	return strchr(o.kinds, 'E') ? o.code : 0;
}

static void test_errors(void)
{
	static const uint8_t mask[4] = { 1, 2, 3, 4 };
	uint8_t f[64];
	const uint8_t rsv[] = { 0xc1, 0x80, 1, 2, 3, 4 };
	CHECK(error_of(rsv, sizeof rsv) == IG_WS_CLOSE_PROTOCOL_ERROR, "ws: a reserved bit: 1002");
	const uint8_t unmasked[] = { 0x81, 0x01, 'a' };
	CHECK(error_of(unmasked, sizeof unmasked) == IG_WS_CLOSE_PROTOCOL_ERROR, "ws: an unmasked client frame: 1002");
	const uint8_t op3[] = { 0x83, 0x80, 1, 2, 3, 4 }, opb[] = { 0x8b, 0x80, 1, 2, 3, 4 };
	CHECK(error_of(op3, sizeof op3) == IG_WS_CLOSE_PROTOCOL_ERROR &&
		      error_of(opb, sizeof opb) == IG_WS_CLOSE_PROTOCOL_ERROR,
	      "ws: reserved data and control opcodes: 1002");
	const uint8_t frag_ping[] = { 0x09, 0x80, 1, 2, 3, 4 };
	CHECK(error_of(frag_ping, sizeof frag_ping) == IG_WS_CLOSE_PROTOCOL_ERROR, "ws: a fragmented ping: 1002");
	const uint8_t long_ping[] = { 0x89, 0xfe, 0, 126, 1, 2, 3, 4 };
	CHECK(error_of(long_ping, sizeof long_ping) == IG_WS_CLOSE_PROTOCOL_ERROR, "ws: a ping over 125 bytes: 1002");
	size_t n = client_frame(f, IG_WS_OP_CONTINUATION, true, "x", 1, mask);
	CHECK(error_of(f, n) == IG_WS_CLOSE_PROTOCOL_ERROR, "ws: a continuation with no message: 1002");
	n = client_frame(f, IG_WS_OP_TEXT, false, "x", 1, mask);
	n += client_frame(f + n, IG_WS_OP_TEXT, true, "y", 1, mask);
	CHECK(error_of(f, n) == IG_WS_CLOSE_PROTOCOL_ERROR, "ws: a new message inside a fragmented one: 1002");
	const uint8_t top_bit[] = { 0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4 };
	CHECK(error_of(top_bit, sizeof top_bit) == IG_WS_CLOSE_PROTOCOL_ERROR, "ws: a 64-bit length's top bit: 1002");
	n = client_frame(f, IG_WS_OP_CLOSE, true, "\x03", 1, mask);
	CHECK(error_of(f, n) == IG_WS_CLOSE_PROTOCOL_ERROR, "ws: a close frame of one byte: 1002");
	n = client_frame(f, IG_WS_OP_CLOSE, true, "\x03\xed", 2, mask); /* 1005 */
	size_t m = client_frame(f + 32, IG_WS_OP_CLOSE, true, "\x03\xe7", 2, mask); /* 999 */
	CHECK(error_of(f, n) == IG_WS_CLOSE_PROTOCOL_ERROR && error_of(f + 32, m) == IG_WS_CLOSE_PROTOCOL_ERROR,
	      "ws: close codes no peer may send (1005, 999): 1002");
	n = client_frame(f, IG_WS_OP_CLOSE, true, "\x0f\xa0\xff", 3, mask);
	CHECK(error_of(f, n) == IG_WS_CLOSE_INVALID_DATA, "ws: a close reason that is not UTF-8: 1007");
	n = client_frame(f, IG_WS_OP_CLOSE, true, "\x0f\xa0ok", 4, mask); /* 4000 */
	struct outcome o;
	read_all(f, n, n, 0, &o);
	CHECK(strcmp(o.kinds, "C") == 0 && o.code == 4000, "ws: an application's close code (4000) is read");
	n = client_frame(f, IG_WS_OP_CLOSE, true, "", 0, mask);
	read_all(f, n, n, 0, &o);
	CHECK(o.code == IG_WS_CLOSE_NO_STATUS, "ws: a close frame without a code reads as 1005");
	/* After a close, nothing more. */
	n += client_frame(f + n, IG_WS_OP_TEXT, true, "late", 4, mask);
	read_all(f, n, n, 0, &o);
	CHECK(strcmp(o.kinds, "C") == 0 && o.data_len == 0, "ws: nothing is read after a close");
}

static void test_close_payload(void)
{
	uint8_t out[IG_WS_CONTROL_MAX];
	char reason[200];
	memset(reason, 'a', sizeof reason);
	memcpy(reason + 122, "\xc3\xa9", 2); /* é across the 123-byte cut */
	size_t n = ig_ws_close_payload(out, 1008, reason, sizeof reason);
	CHECK(n == 2 + 122 && out[0] == 0x03 && out[1] == 0xf0, "ws: a long reason is cut before a character it would split");
	n = ig_ws_close_payload(out, 1001, NULL, 0);
	CHECK(n == 2 && out[0] == 0x03 && out[1] == 0xe9, "ws: a close payload without a reason is the code");
}

int main(void)
{
	test_rfc_examples();
	test_streams();
	test_errors();
	test_close_payload();
	return check_done();
}
