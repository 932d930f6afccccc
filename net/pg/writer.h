/* The byte writer under net/pg's wire builder (wire.c) and its value
 * encoder (types.c): big-endian integers and bytes appended to the
 * caller's fixed buffer, and length-prefixed frames. No I/O, no
 * allocation, nothing of PostgreSQL's messages but their framing: both
 * modules above write through it, so neither needs the other's header. */
#ifndef NET_PG_WRITER_H
#define NET_PG_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes into the caller's buffer buf[0..cap); len is what is written. A
 * write that does not fit writes nothing and sets overflow, which stays set
 * (the caller checks it once after a batch, then drops len back to where
 * the batch began and clears it, or fails); a whole frame (ig_pg_out_begin..
 * end) that overflows is taken back, so buf always ends with whole frames.
 * msg_begin and msg_start are the writer's own: where the open frame and
 * its length field start. */
struct pg_out {
	char *buf;
	size_t len, cap;
	bool overflow;
	size_t msg_begin, msg_start;
};

static inline void pg_out_init(struct pg_out *o, char *buf, size_t cap)
{
	*o = (struct pg_out){ .buf = buf, .cap = cap };
}

/* Opens a frame: the type byte (none when type is 0: the untyped
 * startup-phase messages) and a 32-bit length field that ig_pg_out_end
 * patches with the frame's length from that field on (PostgreSQL's rule:
 * the length counts itself, not the type). Frames do not nest. */
void ig_pg_out_begin(struct pg_out *o, char type);
void ig_pg_out_end(struct pg_out *o);
void ig_pg_out_u8(struct pg_out *o, uint8_t v);
void ig_pg_out_u16(struct pg_out *o, uint16_t v);
void ig_pg_out_u32(struct pg_out *o, uint32_t v);
void ig_pg_out_u64(struct pg_out *o, uint64_t v);
void ig_pg_out_bytes(struct pg_out *o, const void *p, size_t n);
void ig_pg_out_cstr(struct pg_out *o, const char *s); /* s and its NUL */

#endif
