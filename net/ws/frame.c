/* RFC 6455's framing (frame.h): a client's frames read into events, a
 * server's frame heads written. The reader holds no bytes of its own: a
 * head it cannot finish is left to the caller to hand back with more, so
 * its state is where it is inside a data frame and a message. */
#include "net/ws/frame.h"
#include "ingot/json_read.h"

#include <string.h>

static size_t fail(struct ig_ws_reader *r, struct ig_ws_event *ev, uint16_t code, const char *why, size_t took)
{
	r->done = true;
	*ev = (struct ig_ws_event){ .kind = IG_WS_ERROR, .code = code, .reason = why, .reason_len = strlen(why) };
	return took;
}

static void unmask(uint8_t *p, size_t n, const uint8_t mask[4], uint8_t at)
{
	for (size_t i = 0; i < n; i++)
		p[i] ^= mask[(at + i) & 3];
}

bool ig_ws_close_code_valid(uint16_t code)
{
	return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

/* A whole control frame's payload p[0..len), unmasked: its event. */
static void control(struct ig_ws_reader *r, uint8_t op, uint8_t *p, size_t len, struct ig_ws_event *ev)
{
	if (op == IG_WS_OP_PING || op == IG_WS_OP_PONG) {
		*ev = (struct ig_ws_event){ .kind = op == IG_WS_OP_PING ? IG_WS_PING : IG_WS_PONG, .data = p, .len = len };
		return;
	}
	r->done = true;
	*ev = (struct ig_ws_event){ .kind = IG_WS_CLOSE, .code = IG_WS_CLOSE_NO_STATUS, .data = p, .len = len };
	if (len == 0)
		return;
	if (len == 1) {
		(void)fail(r, ev, IG_WS_CLOSE_PROTOCOL_ERROR, "a close frame of one byte", 0);
		return;
	}
	uint16_t code = (uint16_t)(p[0] << 8 | p[1]);
	const char *reason = (const char *)p + 2;
	if (!ig_ws_close_code_valid(code)) {
		(void)fail(r, ev, IG_WS_CLOSE_PROTOCOL_ERROR, "a close code that may not be sent", 0);
	} else if (!ig_utf8_valid(reason, len - 2)) {
		(void)fail(r, ev, IG_WS_CLOSE_INVALID_DATA, "a close reason that is not UTF-8", 0);
	} else {
		ev->code = code;
		ev->reason = reason;
		ev->reason_len = len - 2;
	}
}

/* Inside a data frame: the next chunk of its payload that is here. */
static size_t payload(struct ig_ws_reader *r, uint8_t *in, size_t n, struct ig_ws_event *ev)
{
	size_t take = r->frame_left < n ? (size_t)r->frame_left : n;
	if (take == 0 && r->frame_left > 0) {
		*ev = (struct ig_ws_event){ .kind = IG_WS_NEED_MORE };
		return 0;
	}
	unmask(in, take, r->mask, r->mask_at);
	r->mask_at = (uint8_t)((r->mask_at + take) & 3);
	r->frame_left -= take;
	bool last = r->frame_left == 0 && r->frame_fin;
	*ev = (struct ig_ws_event){ .kind = IG_WS_DATA, .text = r->text, .first = !r->message_started,
				    .last = last, .data = in, .len = take };
	r->message_started = true;
	if (r->frame_left == 0) {
		r->in_frame = false;
		if (last)
			r->in_message = r->message_started = false;
	}
	return take;
}

size_t ig_ws_read(struct ig_ws_reader *r, uint8_t *in, size_t n, struct ig_ws_event *ev)
{
	if (r->done) {
		*ev = (struct ig_ws_event){ .kind = IG_WS_NEED_MORE };
		return n;
	}
	if (r->in_frame)
		return payload(r, in, n, ev);
	*ev = (struct ig_ws_event){ .kind = IG_WS_NEED_MORE };
	if (n < 2)
		return 0;
	bool fin = in[0] & 0x80;
	uint8_t op = in[0] & 0x0f;
	uint64_t len = in[1] & 0x7f;
	size_t head = 2;
	if (in[0] & 0x70)
		return fail(r, ev, IG_WS_CLOSE_PROTOCOL_ERROR, "reserved bits set (no extension was agreed)", 0);
	if (!(in[1] & 0x80))
		return fail(r, ev, IG_WS_CLOSE_PROTOCOL_ERROR, "an unmasked frame from a client", 0);
	bool is_control = op & 0x8;
	if (is_control ? op > IG_WS_OP_PONG : op > IG_WS_OP_BINARY)
		return fail(r, ev, IG_WS_CLOSE_PROTOCOL_ERROR, "an unknown opcode", 0);
	if (is_control && (!fin || len > IG_WS_CONTROL_MAX))
		return fail(r, ev, IG_WS_CLOSE_PROTOCOL_ERROR, "a control frame fragmented or over 125 bytes", 0);
	if (len == 126) {
		if (n < 4)
			return 0;
		len = (uint64_t)in[2] << 8 | in[3];
		head = 4;
	} else if (len == 127) {
		if (n < 10)
			return 0;
		len = 0;
		for (int i = 2; i < 10; i++)
			len = len << 8 | in[i];
		if (len >> 63)
			return fail(r, ev, IG_WS_CLOSE_PROTOCOL_ERROR, "a frame length with its top bit set", 0);
		head = 10;
	}
	if (n < head + 4)
		return 0;
	uint8_t mask[4];
	memcpy(mask, in + head, 4);
	head += 4;
	if (is_control) {
		if (n - head < len)
			return 0; /* taken only whole: at most 131 bytes wait */
		unmask(in + head, (size_t)len, mask, 0);
		control(r, op, in + head, (size_t)len, ev);
		return head + (size_t)len;
	}
	if (op == IG_WS_OP_CONTINUATION && !r->in_message)
		return fail(r, ev, IG_WS_CLOSE_PROTOCOL_ERROR, "a continuation frame outside a message", 0);
	if (op != IG_WS_OP_CONTINUATION && r->in_message)
		return fail(r, ev, IG_WS_CLOSE_PROTOCOL_ERROR, "a new message before the last one ended", 0);
	if (r->max_message && len > r->max_message - r->message_len)
		return fail(r, ev, IG_WS_CLOSE_TOO_BIG, "a message over the size limit", 0);
	if (op != IG_WS_OP_CONTINUATION) {
		r->in_message = true;
		r->message_started = false;
		r->message_len = 0;
		r->text = op == IG_WS_OP_TEXT;
	}
	r->message_len += len;
	memcpy(r->mask, mask, 4);
	r->mask_at = 0;
	r->frame_left = len;
	r->frame_fin = fin;
	r->in_frame = true;
	if (len == 0) { /* an empty frame: an empty chunk, the message's end when fin */
		payload(r, in + head, 0, ev);
		return head;
	}
	return head + payload(r, in + head, n - head, ev);
}

size_t ig_ws_put_head(uint8_t *out, enum ig_ws_opcode op, bool fin, uint64_t len)
{
	out[0] = (uint8_t)((fin ? 0x80 : 0) | op);
	if (len <= 125) {
		out[1] = (uint8_t)len;
		return 2;
	}
	if (len <= 0xffff) {
		out[1] = 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		return 4;
	}
	out[1] = 127;
	for (int i = 0; i < 8; i++)
		out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
	return 10;
}

size_t ig_ws_close_payload(uint8_t *out, uint16_t code, const char *reason, size_t reason_len)
{
	size_t n = reason_len;
	if (n > IG_WS_CONTROL_MAX - 2) {
		n = IG_WS_CONTROL_MAX - 2;
		while (n > 0 && ((unsigned char)reason[n] & 0xc0) == 0x80)
			n--; /* not inside a character */
	}
	out[0] = (uint8_t)(code >> 8);
	out[1] = (uint8_t)code;
	if (n)
		memcpy(out + 2, reason, n);
	return n + 2;
}
