/* Helpers for generated decoders and encoders (params.h): percent-decoding
 * and strict parsing of parameter values, the query string's pairs, the
 * JSON body's media type and reader, held validation errors, and a writer
 * for free-form values. Only public
 * runtime calls: no knowledge of connections or of ig_ctx's layout. */
#include "params.h"
#include "net/http/parser.h"

#include <math.h>
#include <stdlib.h>

/* ---- percent-decoding ---- */

static bool needs_decoding(ig_str raw, enum ig_param_in in)
{
	if (in == IG_IN_HEADER)
		return false;
	for (size_t i = 0; i < raw.len; i++)
		if (raw.ptr[i] == '%' || (in == IG_IN_QUERY && raw.ptr[i] == '+'))
			return true;
	return false;
}

/* Decodes raw into d (room for raw.len bytes); returns the length or -1. */
static long percent_decode(ig_str raw, enum ig_param_in in, char *d)
{
	bool query = in == IG_IN_QUERY;
	size_t n = 0;
	if (in == IG_IN_HEADER) {
		if (raw.len)
			memcpy(d, raw.ptr, raw.len);
		return (long)raw.len;
	}
	for (size_t i = 0; i < raw.len; i++) {
		char c = raw.ptr[i];
		if (c == '%') {
			int hi = i + 2 < raw.len ? ig_hex_digit(raw.ptr[i + 1]) : -1;
			int lo = hi >= 0 ? ig_hex_digit(raw.ptr[i + 2]) : -1;
			if (lo < 0)
				return -1;
			c = (char)(hi << 4 | lo);
			i += 2;
		} else if (query && c == '+') {
			c = ' ';
		}
		d[n++] = c;
	}
	return (long)n;
}

/* UTF-8 without overlong forms, surrogates or values past U+10FFFF. */
static bool valid_utf8(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		unsigned c = p[i];
		size_t more;
		uint32_t cp, min;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			more = 1, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			more = 2, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			more = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return false;
		}
		if (n - i - 1 < more)
			return false;
		for (size_t k = 1; k <= more; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += more + 1;
	}
	return true;
}

/* raw %-decoded into the arena. */
static int decode_copy(ig_ctx *ctx, ig_str raw, enum ig_param_in in, ig_str *out)
{
	char *d = ig_alloc(ctx, raw.len ? raw.len : 1);
	if (!d)
		return IG_PARAM_NO_MEMORY;
	long n = percent_decode(raw, in, d);
	if (n < 0)
		return IG_PARAM_BAD_ESCAPE;
	*out = (ig_str){ d, (size_t)n };
	return IG_PARAM_OK;
}

/* Always a copy: the handler may keep the string after the read buffer
 * has moved on (a pending handler). */
int ig_param_string(ig_ctx *ctx, ig_str raw, enum ig_param_in in, ig_str *out)
{
	int rc = decode_copy(ctx, raw, in, out);
	if (rc == IG_PARAM_OK && !valid_utf8(out->ptr, out->len))
		return IG_PARAM_BAD_UTF8;
	return rc;
}

/* The decoded text of a number or boolean: raw itself when it has no
 * escapes (it is only read before the decoder returns). */
static int decoded(ig_ctx *ctx, ig_str raw, enum ig_param_in in, ig_str *out)
{
	if (!needs_decoding(raw, in)) {
		*out = raw;
		return IG_PARAM_OK;
	}
	return decode_copy(ctx, raw, in, out);
}

int ig_param_int64(ig_ctx *ctx, ig_str raw, enum ig_param_in in, int64_t *out, ig_str *literal)
{
	ig_str s;
	int rc = decoded(ctx, raw, in, &s);
	if (rc != IG_PARAM_OK)
		return rc;
	if (literal)
		*literal = s;
	bool neg = s.len && s.ptr[0] == '-';
	size_t i = neg;
	if (i == s.len || (s.ptr[i] == '0' && s.len - i > 1))
		return IG_PARAM_SYNTAX;
	uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	uint64_t v = 0;
	bool over = false;
	for (; i < s.len; i++) {
		unsigned d = (unsigned)(unsigned char)s.ptr[i] - '0';
		if (d > 9)
			return IG_PARAM_SYNTAX;
		if (over || v > (limit - d) / 10)
			over = true; /* keep scanning: "9...9x" is still not a number */
		else
			v = v * 10 + d;
	}
	if (over)
		return neg ? IG_PARAM_BELOW : IG_PARAM_ABOVE;
	*out = neg && v ? -(int64_t)(v - 1) - 1 : (int64_t)v;
	return IG_PARAM_OK;
}

/* JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool json_number_syntax(ig_str s)
{
	size_t i = 0, n = s.len;
	const char *p = s.ptr;
	if (i < n && p[i] == '-')
		i++;
	if (i < n && p[i] == '0')
		i++;
	else if (i < n && p[i] >= '1' && p[i] <= '9')
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	else
		return false;
	if (i < n && p[i] == '.') {
		size_t start = ++i;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
		if (i == start)
			return false;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		size_t start = i;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
		if (i == start)
			return false;
	}
	return i == n;
}

int ig_param_double(ig_ctx *ctx, ig_str raw, enum ig_param_in in, double *out, ig_str *literal)
{
	ig_str s;
	int rc = decoded(ctx, raw, in, &s);
	if (rc != IG_PARAM_OK)
		return rc;
	if (!json_number_syntax(s))
		return IG_PARAM_SYNTAX;
	if (literal)
		*literal = s;
	/* strtod needs a terminated string; it rounds correctly (C locale). */
	char stack[64], *z = s.len < sizeof stack ? stack : ig_alloc(ctx, s.len + 1);
	if (!z)
		return IG_PARAM_NO_MEMORY;
	memcpy(z, s.ptr, s.len);
	z[s.len] = 0;
	double d = strtod(z, NULL);
	if (isinf(d))
		return d > 0 ? IG_PARAM_ABOVE : IG_PARAM_BELOW;
	*out = d;
	return IG_PARAM_OK;
}

int ig_param_bool(ig_ctx *ctx, ig_str raw, enum ig_param_in in, bool *out)
{
	ig_str s;
	int rc = decoded(ctx, raw, in, &s);
	if (rc != IG_PARAM_OK)
		return rc;
	if (ig_str_eq(s, "true", 4))
		*out = true;
	else if (ig_str_eq(s, "false", 5))
		*out = false;
	else
		return IG_PARAM_SYNTAX;
	return IG_PARAM_OK;
}

/* ---- the query string ---- */

void ig_query_init(ig_query *q, ig_str query)
{
	q->p = query.ptr;
	q->end = query.ptr ? query.ptr + query.len : NULL;
}

bool ig_query_next(ig_query *q, ig_str *name, ig_str *value)
{
	while (q->p && q->p < q->end) {
		const char *amp = memchr(q->p, '&', (size_t)(q->end - q->p));
		const char *stop = amp ? amp : q->end;
		const char *start = q->p;
		q->p = amp ? amp + 1 : q->end;
		if (stop == start)
			continue; /* "a=1&&b=2" */
		const char *eq = memchr(start, '=', (size_t)(stop - start));
		*name = (ig_str){ start, (size_t)((eq ? eq : stop) - start) };
		*value = eq ? (ig_str){ eq + 1, (size_t)(stop - eq - 1) } : (ig_str){ stop, 0 };
		return true;
	}
	return false;
}

bool ig_query_name_is(ig_str raw, const char *name, size_t len)
{
	size_t k = 0;
	for (size_t i = 0; i < raw.len; i++, k++) {
		char c = raw.ptr[i];
		if (c == '%') {
			int hi = i + 2 < raw.len ? ig_hex_digit(raw.ptr[i + 1]) : -1;
			int lo = hi >= 0 ? ig_hex_digit(raw.ptr[i + 2]) : -1;
			if (lo < 0)
				return false;
			c = (char)(hi << 4 | lo);
			i += 2;
		} else if (c == '+') {
			c = ' ';
		}
		if (k >= len || name[k] != c)
			return false;
	}
	return k == len;
}

size_t ig_query_count(ig_str query)
{
	size_t n = 1;
	for (size_t i = 0; i < query.len; i++)
		n += query.ptr[i] == '&';
	return n;
}

bool ig_param_next_item(ig_str *rest, ig_str *item)
{
	if (!rest->ptr)
		return false;
	const char *comma = memchr(rest->ptr, ',', rest->len);
	if (!comma) {
		*item = *rest;
		*rest = (ig_str){ NULL, 0 };
		return true;
	}
	*item = (ig_str){ rest->ptr, (size_t)(comma - rest->ptr) };
	*rest = (ig_str){ comma + 1, rest->len - item->len - 1 };
	return true;
}

size_t ig_param_count_items(ig_str value)
{
	size_t n = 1;
	for (size_t i = 0; i < value.len; i++)
		n += value.ptr[i] == ',';
	return n;
}

/* ---- the JSON body ---- */

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

IG_HOT bool ig_is_json(ig_str ct)
{
	static const char type[] = "application/json";
	size_t i = 0, n = ct.len;
	const char *p = ct.ptr;
	while (i < n && is_ows(p[i]))
		i++;
	if (n - i < sizeof type - 1 || !ig_http_eq_nocase(p + i, sizeof type - 1, type))
		return false;
	i += sizeof type - 1;
	for (;;) {
		while (i < n && is_ows(p[i]))
			i++;
		if (i == n)
			return true;
		if (p[i] != ';')
			return false; /* application/jsonx, application/json-seq ... */
		i++;
		while (i < n && is_ows(p[i]))
			i++;
		size_t name = i;
		while (i < n && p[i] != '=' && p[i] != ';')
			i++;
		size_t name_len = i;
		while (name_len > name && is_ows(p[name_len - 1]))
			name_len--;
		if (i == n || p[i] == ';')
			continue;
		i++; /* '=' */
		bool quoted = i < n && p[i] == '"';
		size_t value = i + quoted;
		i = value;
		while (i < n && (quoted ? p[i] != '"' : p[i] != ';' && !is_ows(p[i])))
			i++;
		size_t value_len = i - value;
		if (quoted && i < n)
			i++;
		if (name_len - name == 7 && ig_http_eq_nocase(p + name, 7, "charset") &&
		    !ig_http_eq_nocase(p + value, value_len, "utf-8") &&
		    !ig_http_eq_nocase(p + value, value_len, "utf8"))
			return false;
	}
}

struct ig_held_error {
	struct ig_held_error *next;
	const char *pointer, *keyword, *message;
};

/* What the runtime keeps of a request's errors; more are not held. */
#define HELD_MAX 20

IG_HOT bool ig_body_begin(ig_ctx *ctx, ig_body_reader *b, int max_depth)
{
	ig_str body = ig_req(ctx)->body;
	char *copy = ig_alloc(ctx, body.len ? body.len : 1);
	if (!copy)
		return false;
	if (body.len)
		memcpy(copy, body.ptr, body.len);
	*b = (ig_body_reader){ .ctx = ctx };
	b->tail = &b->held;
	ig_jr_init(&b->r, copy, body.len, ig_ctx_arena(ctx), max_depth);
	return true;
}

void ig_body_error(void *arg, const char *pointer, const char *keyword, const char *message)
{
	ig_body_reader *b = arg;
	if (b->nheld >= HELD_MAX)
		return;
	size_t n = strlen(pointer);
	struct ig_held_error *e = ig_alloc(b->ctx, sizeof *e);
	char *p = ig_alloc(b->ctx, n + 1);
	if (!e || !p)
		return;
	memcpy(p, pointer, n + 1);
	*e = (struct ig_held_error){ NULL, p, keyword, message };
	*b->tail = e;
	b->tail = &e->next;
	b->nheld++;
}

IG_HOT bool ig_body_end(ig_body_reader *b)
{
	if (!b->r.error)
		ig_jr_finish(&b->r);
	if (b->r.error) {
		char msg[200];
		size_t n = strlen(b->r.error);
		if (n > 150)
			n = 150;
		memcpy(msg, b->r.error, n);
		memcpy(msg + n, " at byte ", 9);
		n += 9;
		n += ig_fmt_u64(msg + n, b->r.error_offset);
		msg[n] = 0;
		ig_error_add(b->ctx, "body", "", "json", msg);
		return false;
	}
	for (struct ig_held_error *e = b->held; e; e = e->next)
		ig_error_add(b->ctx, "body", e->pointer, e->keyword, e->message);
	return true;
}

/* ---- responses ---- */

void ig_json_write_value(ig_wbuf *w, const ig_json_value *v)
{
	if (!v) {
		ig_wbuf_lit(w, "null");
		return;
	}
	switch (v->type) {
	case IG_JSON_NULL:
		ig_wbuf_lit(w, "null");
		break;
	case IG_JSON_BOOL:
		ig_json_bool(w, v->b);
		break;
	case IG_JSON_INT:
		ig_json_int(w, v->i);
		break;
	case IG_JSON_NUMBER:
		/* The literal as read keeps every digit; a built value has none. */
		if (v->raw.len)
			ig_wbuf_put(w, v->raw.ptr, v->raw.len);
		else
			ig_json_double(w, v->d);
		break;
	case IG_JSON_STRING:
		ig_json_string(w, v->s.ptr, v->s.len);
		break;
	case IG_JSON_ARRAY:
		ig_wbuf_lit(w, "[");
		for (size_t i = 0; i < v->array.len; i++) {
			if (i)
				ig_wbuf_lit(w, ",");
			ig_json_write_value(w, v->array.items[i]);
		}
		ig_wbuf_lit(w, "]");
		break;
	case IG_JSON_OBJECT:
		ig_wbuf_lit(w, "{");
		for (size_t i = 0; i < v->object.len; i++) {
			if (i)
				ig_wbuf_lit(w, ",");
			ig_json_string(w, v->object.members[i].key.ptr, v->object.members[i].key.len);
			ig_wbuf_lit(w, ":");
			ig_json_write_value(w, v->object.members[i].value);
		}
		ig_wbuf_lit(w, "}");
		break;
	}
}
