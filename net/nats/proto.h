/* NATS's client protocol, what a server sends (INFO, MSG, HMSG, PING, PONG,
 * +OK, -ERR): a parser that frames it out of a read buffer and keeps its
 * place across reads (a control line or a payload cut anywhere is resumed,
 * not rescanned), and the header block's reader (the NATS/1.0 status line
 * and its fields). No I/O, no allocation: net/nats/conn.c feeds it. */
#ifndef NET_NATS_PROTO_H
#define NET_NATS_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingot/base.h"

enum ig_nats_op {
	IG_NATS_OP_INFO = 1,
	IG_NATS_OP_MSG,  /* MSG and HMSG: headers is empty for MSG */
	IG_NATS_OP_PING,
	IG_NATS_OP_PONG,
	IG_NATS_OP_OK,
	IG_NATS_OP_ERR,
};

/* One frame; its slices point into the buffer given to ig_nats_parse and
 * are valid while those bytes are. */
struct ig_nats_frame {
	enum ig_nats_op op;
	ig_str subject, reply; /* MSG */
	uint64_t sid;          /* MSG */
	ig_str headers;        /* HMSG: the whole block, "NATS/1.0..." to its
				  blank line included */
	ig_str payload;        /* MSG; INFO: its JSON; -ERR: the text, quotes
				  removed */
};

/* Kept across calls: zero it (or ig_nats_parser_init) before the first. */
struct ig_nats_parser {
	size_t max_line;    /* a control line longer than this is an error */
	size_t max_payload; /* a message larger than this is an error */
	size_t scanned;     /* bytes of the current control line searched */
	size_t line_end;    /* a message's: its line with CRLF; 0: none parsed */
	size_t total;       /* its payload (headers included) + CRLF */
	struct ig_nats_frame pending; /* its fields as offsets from the line */
	const char *error;  /* after IG_NATS_PARSE_ERROR: why (static) */
};

#define IG_NATS_PARSE_MORE 0   /* the frame is not complete yet */
#define IG_NATS_PARSE_ERROR -1 /* a protocol error: the connection ends */

void ig_nats_parser_init(struct ig_nats_parser *p, size_t max_payload);

/* Frames the first frame of buf[0..len), which holds the unconsumed bytes
 * from where the last frame ended (the same bytes again, and more, after
 * IG_NATS_PARSE_MORE). Returns the bytes the frame took, with *f set;
 * IG_NATS_PARSE_MORE; or IG_NATS_PARSE_ERROR with p->error. After a
 * frame, the next call starts at the byte after it. */
IG_MUST_USE int ig_nats_parse(struct ig_nats_parser *p, const char *buf, size_t len, struct ig_nats_frame *f);

/* A decimal number of at most 19 digits, the whole of t (sizes, sids,
 * sequences and nanosecond times in subjects); false for anything else. */
bool ig_nats_uint(ig_str t, uint64_t *out);

/* The header block of an HMSG: its status ("NATS/1.0 503", 0 when the
 * line has none) and description ("No Responders"); false when the block
 * does not start with NATS/1.0. */
bool ig_nats_headers_status(ig_str headers, int *status, ig_str *description);
/* The first value of the header named name (case-insensitive), without
 * surrounding blanks; false when there is none. */
bool ig_nats_header_get(ig_str headers, const char *name, ig_str *value);

#endif
