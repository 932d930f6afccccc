/* The byte writer (see writer.h): a fixed buffer that flags overflow
 * instead of growing, big-endian integers, and frames taken back whole
 * when they do not fit. */
#include "net/pg/writer.h"

#include <string.h>

static char *out_room(struct pg_out *o, size_t n)
{
	if (o->overflow || o->cap - o->len < n) {
		o->overflow = true;
		return NULL;
	}
	char *p = o->buf + o->len;
	o->len += n;
	return p;
}

static void put_be32(char *p, uint32_t v)
{
	p[0] = (char)(v >> 24);
	p[1] = (char)(v >> 16);
	p[2] = (char)(v >> 8);
	p[3] = (char)v;
}

void ig_pg_out_u8(struct pg_out *o, uint8_t v)
{
	char *p = out_room(o, 1);
	if (p)
		p[0] = (char)v;
}

void ig_pg_out_u16(struct pg_out *o, uint16_t v)
{
	char *p = out_room(o, 2);
	if (p) {
		p[0] = (char)(v >> 8);
		p[1] = (char)v;
	}
}

void ig_pg_out_u32(struct pg_out *o, uint32_t v)
{
	char *p = out_room(o, 4);
	if (p)
		put_be32(p, v);
}

void ig_pg_out_u64(struct pg_out *o, uint64_t v)
{
	char *p = out_room(o, 8);
	if (p) {
		put_be32(p, (uint32_t)(v >> 32));
		put_be32(p + 4, (uint32_t)v);
	}
}

void ig_pg_out_bytes(struct pg_out *o, const void *src, size_t n)
{
	char *p = out_room(o, n);
	if (p && n)
		memcpy(p, src, n);
}

/* Copied as it is scanned: mostly a portal's or a statement's name ("",
 * "s12"), for which strlen and then memcpy cost more than the bytes. */
void ig_pg_out_cstr(struct pg_out *o, const char *s)
{
	size_t room = o->overflow ? 0 : o->cap - o->len;
	char *d = o->buf + o->len;
	for (size_t i = 0; i < room; i++) {
		if ((d[i] = s[i]) == 0) {
			o->len += i + 1;
			return;
		}
	}
	o->overflow = true; /* the bytes past len are not the buffer's */
}

void ig_pg_out_begin(struct pg_out *o, char type)
{
	o->msg_begin = o->len;
	if (type)
		ig_pg_out_u8(o, (uint8_t)type);
	o->msg_start = o->len; /* the length field counts itself, not the type */
	ig_pg_out_u32(o, 0);
}

void ig_pg_out_end(struct pg_out *o)
{
	if (o->overflow)
		o->len = o->msg_begin; /* no half frame: the buffer ends with whole ones */
	else
		put_be32(o->buf + o->msg_start, (uint32_t)(o->len - o->msg_start));
}
