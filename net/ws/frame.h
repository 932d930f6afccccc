/* RFC 6455's framing as a server reads and writes it: no I/O, no
 * allocation. The reader turns a client's bytes into events (a message's
 * data in chunks, unmasked in place; a whole control frame; a protocol
 * error with the close code it calls for), resumable at any byte; the
 * writer puts a server frame's head and a close frame's payload. The
 * connection engine above owns the buffers and assembles the message. */
#ifndef NET_WS_FRAME_H
#define NET_WS_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ig_ws_opcode {
	IG_WS_OP_CONTINUATION = 0x0,
	IG_WS_OP_TEXT = 0x1,
	IG_WS_OP_BINARY = 0x2,
	IG_WS_OP_CLOSE = 0x8,
	IG_WS_OP_PING = 0x9,
	IG_WS_OP_PONG = 0xa,
};

/* Close codes (RFC 6455 section 7.4.1) the runtime sends or reads. */
enum ig_ws_close_code {
	IG_WS_CLOSE_NORMAL = 1000,
	IG_WS_CLOSE_GOING_AWAY = 1001,    /* the drain */
	IG_WS_CLOSE_PROTOCOL_ERROR = 1002,
	IG_WS_CLOSE_UNSUPPORTED = 1003,   /* binary where text is declared, or back */
	IG_WS_CLOSE_NO_STATUS = 1005,     /* never sent: a close frame without a code */
	IG_WS_CLOSE_INVALID_DATA = 1007,  /* text that is not UTF-8 */
	IG_WS_CLOSE_POLICY = 1008,        /* a message its schema refuses */
	IG_WS_CLOSE_TOO_BIG = 1009,       /* over the message limit */
	IG_WS_CLOSE_INTERNAL = 1011,
	IG_WS_CLOSE_TRY_AGAIN = 1013,     /* no memory or handler for a message now */
};

/* The largest head a frame has: 2 bytes, a 64-bit length, a mask. */
#define IG_WS_HEAD_MAX 14
/* A control frame's payload at most (a close frame's: a code and 123
 * bytes of reason). */
#define IG_WS_CONTROL_MAX 125

enum ig_ws_event_kind {
	IG_WS_NEED_MORE, /* nothing whole yet: call again with more bytes */
	IG_WS_DATA,      /* a chunk of the current message */
	IG_WS_PING,      /* answer with a pong of the same payload */
	IG_WS_PONG,
	IG_WS_CLOSE,     /* the client's close frame: answer with one, then close */
	IG_WS_ERROR,     /* a protocol error: close with code, reason */
};

struct ig_ws_event {
	enum ig_ws_event_kind kind;
	/* IG_WS_DATA: a chunk of the current message (text, or binary),
	   unmasked in place in the caller's input; first: the message's first
	   chunk; last: its final one, so the message is whole (a text
	   message's UTF-8 is the caller's to check, once whole). Chunks may be
	   empty. IG_WS_PING, IG_WS_PONG: the payload, in the input. */
	bool text, first, last;
	uint8_t *data;
	size_t len;
	/* IG_WS_CLOSE: the client's code (IG_WS_CLOSE_NO_STATUS when its frame
	   had none) and reason (UTF-8, checked), in the input. IG_WS_ERROR: the
	   code to close with and why, a literal (for the close frame's reason
	   and the log). */
	uint16_t code;
	const char *reason;
	size_t reason_len;
};

/* A client's stream. Zero it, then set max_message (the largest message in
 * bytes, all its frames together; 0: no limit). The rest is the reader's:
 * where it is in the current frame and message. */
struct ig_ws_reader {
	uint64_t max_message;
	uint64_t frame_left;   /* a data frame's payload bytes still to come */
	uint64_t message_len;  /* the current message's bytes so far */
	uint8_t mask[4];
	uint8_t mask_at;       /* the mask's offset for the next payload byte */
	bool in_frame;         /* inside a data frame's payload */
	bool frame_fin;        /* that frame ends its message */
	bool in_message;       /* a message began and has not ended */
	bool message_started;  /* its first chunk was given */
	bool text;             /* the message's type */
	bool done;             /* a close or an error was given: no more events */
};

/* Reads in[0..n) from where r left off: returns how many bytes it took
 * and the next event in *ev. The caller keeps the bytes it did not take
 * and calls again with them first, more after (a control frame is taken
 * only whole; a data frame's payload as it comes). Data chunks and control
 * payloads point into in, unmasked there: they stay valid as long as the
 * caller keeps those bytes. After IG_WS_CLOSE or IG_WS_ERROR nothing more
 * is read (IG_WS_NEED_MORE, every byte taken). */
size_t ig_ws_read(struct ig_ws_reader *r, uint8_t *in, size_t n, struct ig_ws_event *ev);

/* Writes the head of a server frame (never masked) whose payload is len
 * bytes into out (IG_WS_HEAD_MAX bytes at least); fin: the message's last
 * frame. Returns the head's length (2, 4 or 10). */
size_t ig_ws_put_head(uint8_t *out, enum ig_ws_opcode op, bool fin, uint64_t len);

/* A close frame's payload: code, then reason cut to fit
 * IG_WS_CONTROL_MAX at a UTF-8 character's start. out holds
 * IG_WS_CONTROL_MAX bytes. Returns the payload's length. */
size_t ig_ws_close_payload(uint8_t *out, uint16_t code, const char *reason, size_t reason_len);

/* Whether a close frame may carry code (RFC 6455 section 7.4: the
 * registered codes a peer sends, and 3000..4999). */
bool ig_ws_close_code_valid(uint16_t code);

#endif
