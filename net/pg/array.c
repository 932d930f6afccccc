/* One-dimensional arrays for generated query code: a result column of an
 * array type arrives as its text ("{1,2,NULL}", pg.h), which is split here
 * into elements decoded as columns of the element type (types.c); and a
 * parameter's elements are written as such a literal, for the server to
 * read as the statement's array type. Pure work in the caller's arena. */
#include "ingot/pg.h"
#include "net/pg/types.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static bool array_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool ig_pg_array_decode(const ig_pg_value *v, uint32_t elem_oid, ig_arena *arena, ig_pg_value **items, size_t *n)
{
	*items = NULL;
	*n = 0;
	if (v->null)
		return false;
	const char *p = v->s.ptr, *end = v->s.ptr + v->s.len;
	if (p == end || *p != '{') /* "[1:3]={...}" (a lower bound other than 1) is refused too */
		return false;
	/* Count the elements first (an upper bound: separators outside quotes). */
	size_t cap = 1;
	bool quoted = false;
	for (const char *q = p + 1; q < end; q++) {
		if (quoted && *q == '\\')
			q++;
		else if (*q == '"')
			quoted = !quoted;
		else if (!quoted && *q == '{')
			return false; /* more than one dimension */
		else if (!quoted && *q == ',')
			cap++;
	}
	ig_pg_value *out = ig_arena_alloc(arena, sizeof *out * cap);
	/* An element's unescaped text: at most the array's length. */
	char *buf = ig_arena_alloc(arena, v->s.len + 1);
	if (!out || !buf)
		return false;
	p++;
	while (p < end && array_space(*p))
		p++;
	if (p < end && *p == '}') {
		*items = out;
		return p + 1 == end;
	}
	size_t count = 0;
	for (;;) {
		while (p < end && array_space(*p))
			p++;
		if (p >= end || count == cap)
			return false;
		size_t len = 0;
		bool was_quoted = *p == '"';
		if (was_quoted) {
			for (p++; p < end && *p != '"'; p++) {
				if (*p == '\\' && ++p >= end)
					return false;
				buf[len++] = *p;
			}
			if (p >= end)
				return false;
			p++;
		} else {
			while (p < end && *p != ',' && *p != '}') {
				if (*p == '\\' && ++p >= end)
					return false;
				buf[len++] = *p++;
			}
			while (len && array_space(buf[len - 1]))
				len--;
		}
		if (!was_quoted && len == 4 && strncmp(buf, "NULL", 4) == 0) {
			out[count++] = (ig_pg_value){ .oid = elem_oid, .null = true };
		} else if (!ig_pg_value_decode(elem_oid, 0, buf, (int32_t)len, arena, &out[count++])) {
			return false;
		}
		while (p < end && array_space(*p))
			p++;
		if (p >= end)
			return false;
		if (*p == '}') {
			if (p + 1 != end)
				return false;
			*items = out;
			*n = count;
			return true;
		}
		if (*p != ',')
			return false;
		p++;
	}
}

/* Appends one element's text (quoted where it is a string) to w. */
static bool put_elem(ig_wbuf *w, const ig_pg_value *e, ig_arena *arena)
{
	char b[48];
	if (e->null) {
		ig_wbuf_lit(w, "NULL");
		return true;
	}
	switch (e->oid) {
	case IG_PG_BOOL:
		ig_wbuf_put(w, e->b ? "t" : "f", 1);
		return true;
	case IG_PG_INT2:
	case IG_PG_INT4:
	case IG_PG_INT8: { /* the common case (ids, counts): in place, no copy */
		char *d = ig_wbuf_reserve(w, 20);
		if (d)
			w->len += ig_fmt_i64(d, e->i);
		return true;
	}
	case IG_PG_FLOAT4:
	case IG_PG_FLOAT8:
		if (isnan(e->f))
			ig_wbuf_lit(w, "NaN");
		else if (isinf(e->f))
			ig_wbuf_put(w, e->f > 0 ? "Infinity" : "-Infinity", e->f > 0 ? 8 : 9);
		else
			ig_wbuf_put(w, b, (size_t)snprintf(b, sizeof b, "%.17g", e->f));
		return true;
	case IG_PG_UUID:
	case IG_PG_DATE:
	case IG_PG_TIMESTAMP:
	case IG_PG_TIMESTAMPTZ: {
		ig_str s;
		if (!ig_pg_value_text(e, arena, &s))
			return false;
		ig_wbuf_lit(w, "\"");
		ig_wbuf_put(w, s.ptr, s.len);
		ig_wbuf_lit(w, "\"");
		return true;
	}
	case IG_PG_BYTEA: {
		static const char hex[] = "0123456789abcdef";
		ig_wbuf_lit(w, "\"\\\\x"); /* "\\x: the array's escape of bytea's \x */
		for (size_t i = 0; i < e->s.len; i++) {
			unsigned char c = (unsigned char)e->s.ptr[i];
			char two[2] = { hex[c >> 4], hex[c & 15] };
			ig_wbuf_put(w, two, 2);
		}
		ig_wbuf_lit(w, "\"");
		return true;
	}
	default: /* text, varchar, numeric, json(b), oid 0: a quoted string */
		if (e->s.len && memchr(e->s.ptr, 0, e->s.len))
			return false;
		ig_wbuf_lit(w, "\"");
		for (size_t i = 0; i < e->s.len; i++) {
			char c = e->s.ptr[i];
			if (c == '"' || c == '\\')
				ig_wbuf_lit(w, "\\");
			ig_wbuf_put(w, &c, 1);
		}
		ig_wbuf_lit(w, "\"");
		return true;
	}
}

bool ig_pg_array_text(const ig_pg_value *items, size_t n, ig_arena *arena, ig_str *out)
{
	ig_wbuf w = { .arena = arena };
	ig_wbuf_lit(&w, "{");
	for (size_t i = 0; i < n; i++) {
		if (i)
			ig_wbuf_lit(&w, ",");
		if (!put_elem(&w, &items[i], arena))
			return false;
	}
	ig_wbuf_lit(&w, "}");
	if (w.failed)
		return false;
	*out = (ig_str){ w.ptr, w.len };
	return true;
}

/* items[0..n), each width bytes (2, 4 or 8), signed: one allocation of the
 * longest literal they can make (the width's longest number, "-32768",
 * "-2147483648" or "-9223372036854775808", and a comma each), every
 * element written in place. */
static bool ints_text(const void *items, size_t width, size_t n, ig_arena *arena, ig_str *out)
{
	size_t each = width == 2 ? 7 : width == 4 ? 12 : 21;
	if (n > (SIZE_MAX - 2) / each)
		return false;
	char *d = ig_arena_alloc(arena, n * each + 2), *p = d;
	if (!d)
		return false;
	*p++ = '{';
	for (size_t i = 0; i < n; i++) {
		int64_t v = width == 2 ? ((const int16_t *)items)[i] :
			    width == 4 ? ((const int32_t *)items)[i] : ((const int64_t *)items)[i];
		if (i)
			*p++ = ',';
		p += ig_fmt_i64(p, v);
	}
	*p++ = '}';
	*out = (ig_str){ d, (size_t)(p - d) };
	return true;
}

bool ig_pg_array_text_int16(const int16_t *items, size_t n, ig_arena *arena, ig_str *out)
{
	return ints_text(items, sizeof *items, n, arena, out);
}

bool ig_pg_array_text_int32(const int32_t *items, size_t n, ig_arena *arena, ig_str *out)
{
	return ints_text(items, sizeof *items, n, arena, out);
}

bool ig_pg_array_text_int64(const int64_t *items, size_t n, ig_arena *arena, ig_str *out)
{
	return ints_text(items, sizeof *items, n, arena, out);
}
