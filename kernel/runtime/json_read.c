/* The validating JSON reader (see json_read.h): pull calls for generated
 * decoders, and one iterative walker behind ig_jr_skip and ig_jr_value, so
 * nesting costs arena memory, never C stack. Reads only [start, end) of the
 * caller's buffer and allocates only in the reader's arena. Tree helpers
 * (equality, lookup, UTF-8 length) live in json_value.c. */
#include "json_read.h"
#include "kernel/runtime/arena.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* ---- errors ---- */

static const char E_EOF[] = "unexpected end of input";
static const char E_CHAR[] = "unexpected character";
static const char E_TRAILING[] = "unexpected data after the value";
static const char E_LITERAL[] = "invalid literal";
static const char E_DIGIT[] = "digit expected";
static const char E_FRAC[] = "digit expected after '.'";
static const char E_EXP[] = "digit expected in exponent";
static const char E_LEADING_ZERO[] = "leading zeros are not allowed";
static const char E_RANGE[] = "number out of range";
static const char E_UNTERMINATED[] = "unterminated string";
static const char E_CONTROL[] = "unescaped control character in string";
static const char E_ESCAPE[] = "invalid escape";
static const char E_HEX[] = "invalid \\u escape";
static const char E_SURROGATE[] = "lone surrogate in \\u escape";
static const char E_UTF8[] = "invalid UTF-8";
static const char E_DEPTH[] = "nesting too deep";
static const char E_KEY[] = "object key expected";
static const char E_COLON[] = "':' expected";
static const char E_OBJ_SEP[] = "',' or '}' expected";
static const char E_ARR_SEP[] = "',' or ']' expected";
static const char E_TRAILING_COMMA[] = "trailing comma";
static const char E_DUPLICATE[] = "duplicate key";
static const char E_MEMORY[] = "out of memory";
static const char E_NULL[] = "null expected";
static const char E_BOOL[] = "boolean expected";
static const char E_STRING[] = "string expected";
static const char E_NUMBER[] = "number expected";
static const char E_OBJECT[] = "object expected";
static const char E_ARRAY[] = "array expected";

/* Keeps the first error only: later failures are consequences of it. */
static bool fail_at(ig_json_reader *r, const char *at, const char *message)
{
	if (!r->error) {
		r->error = message;
		r->error_offset = (size_t)(at - r->start);
	}
	return false;
}

bool ig_jr_fail(ig_json_reader *r, const char *message)
{
	return fail_at(r, r->p, message);
}

IG_HOT void ig_jr_init(ig_json_reader *r, const char *buf, size_t len, ig_arena *arena, int max_depth)
{
	if (!buf) /* an absent body: no arithmetic on NULL later */
		buf = "", len = 0;
	*r = (ig_json_reader){
		.start = buf, .p = buf, .end = buf + len, .arena = arena, .max_depth = max_depth,
	};
}

static void *jr_alloc(ig_json_reader *r, const char *at, size_t size)
{
	void *p = r->arena ? ig_arena_alloc(r->arena, size) : NULL;
	if (!p)
		fail_at(r, at, E_MEMORY);
	return p;
}

/* ---- bytes ---- */

static inline bool is_ws(unsigned char c)
{
	/* SP HTAB LF CR as one bit test: no other byte is JSON whitespace. */
	return c <= ' ' && ((1ull << c) & ((1ull << ' ') | (1ull << '\t') | (1ull << '\n') |
					   (1ull << '\r')));
}

static inline const char *skip_ws(const char *p, const char *end)
{
	while (p < end && is_ws((unsigned char)*p))
		p++;
	return p;
}

static inline bool is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

/* Four hex digits at p (bounds checked by the caller), or -1. */
static long hex4(const char *p)
{
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int h = ig_hex_digit(p[i]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

/* ---- strings ---- */

/* Bytes a string may hold as they are: printable ASCII but '"' and '\\'. */
static const bool plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Flags (high bit per byte) the bytes of a word that need a closer look:
 * '"', '\\', a control byte, a byte >= 0x80. Borrows can flag bytes above
 * a flagged one, never below it, so the lowest flag is exact. */
static inline uint64_t word_special(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
	return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b) | x) & high;
}

/* One UTF-8 sequence at p (lead byte >= 0x80), strictly per Unicode table
 * 3-7: no overlongs, no encoded surrogates, nothing above U+10FFFF. */
static const char *scan_utf8(ig_json_reader *r, const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t left = (size_t)(r->end - p);
	unsigned c = u[0], lo = 0x80, hi = 0xbf;
	size_t n;
	if (c < 0xc2)
		n = 0;
	else if (c < 0xe0)
		n = 2;
	else if (c < 0xf0) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c < 0xf5) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else
		n = 0;
	if (n == 0 || left < n || u[1] < lo || u[1] > hi)
		return fail_at(r, p, E_UTF8), NULL;
	for (size_t i = 2; i < n; i++)
		if ((u[i] & 0xc0) != 0x80)
			return fail_at(r, p, E_UTF8), NULL;
	return p + n;
}

/* One escape at p ('\\'); checks it completely, surrogate pairs included. */
static const char *scan_escape(ig_json_reader *r, const char *p)
{
	if (r->end - p < 2)
		return fail_at(r, p, E_UNTERMINATED), NULL;
	switch (p[1]) {
	case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
		return p + 2;
	case 'u':
		break;
	default:
		return fail_at(r, p, E_ESCAPE), NULL;
	}
	long cp = r->end - p >= 6 ? hex4(p + 2) : -1;
	if (cp < 0)
		return fail_at(r, p, E_HEX), NULL;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail_at(r, p, E_SURROGATE), NULL;
	if (cp < 0xd800 || cp > 0xdbff)
		return p + 6;
	if (r->end - p < 12 || p[6] != '\\' || p[7] != 'u')
		return fail_at(r, p, E_SURROGATE), NULL;
	long lo = hex4(p + 8);
	if (lo < 0xdc00 || lo > 0xdfff)
		return fail_at(r, p, lo < 0 ? E_HEX : E_SURROGATE), NULL;
	return p + 12;
}

/* Validates the string body starting at p (after the opening quote) and
 * returns its closing quote; *escaped tells whether decoding is needed. */
static const char *scan_string(ig_json_reader *r, const char *p, bool *escaped)
{
	const char *end = r->end, *open = p - 1;
	bool esc = false;
	for (;;) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* Eight bytes at a time, straight to the first special one: no
		 * byte loop, no mispredicted exit at each string's end. */
		if (ig_likely(end - p >= 8)) {
			uint64_t x;
			memcpy(&x, p, 8);
			uint64_t m = word_special(x);
			if (!m) {
				p += 8;
				continue;
			}
			p += __builtin_ctzll(m) >> 3;
		} else
#endif
		{
			while (p < end && plain[(unsigned char)*p])
				p++;
			if (ig_unlikely(p == end))
				return fail_at(r, open, E_UNTERMINATED), NULL;
		}
		unsigned char c = (unsigned char)*p;
		if (ig_likely(c == '"')) {
			*escaped = esc;
			return p;
		}
		if (c == '\\') {
			esc = true;
			p = scan_escape(r, p);
		} else if (c < 0x20) {
			return fail_at(r, p, E_CONTROL), NULL;
		} else {
			p = scan_utf8(r, p);
		}
		if (!p)
			return NULL;
	}
}

bool ig_utf8_valid(const char *s, size_t n)
{
	if (!n) /* an empty slice may have no pointer */
		return true;
	ig_json_reader r = { .start = s, .p = s, .end = s + n };
	for (const char *p = s; p < s + n;) {
		if ((unsigned char)*p < 0x80)
			p++;
		else if (!(p = scan_utf8(&r, p)))
			return false;
	}
	return true;
}

static size_t put_utf8(char *d, unsigned long cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | cp >> 6);
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | cp >> 12);
		d[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | cp >> 18);
	d[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	d[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decodes an already validated body [p, q) into d; returns the length.
 * Every escape is at least as long as its UTF-8, so d needs q - p bytes. */
static size_t decode_string(char *d, const char *p, const char *q)
{
	char *d0 = d;
	while (p < q) {
		const char *bs = memchr(p, '\\', (size_t)(q - p));
		size_t run = (size_t)((bs ? bs : q) - p);
		memcpy(d, p, run);
		d += run;
		p += run;
		if (!bs)
			break;
		char e = p[1];
		p += 2;
		switch (e) {
		case 'b': *d++ = '\b'; break;
		case 'f': *d++ = '\f'; break;
		case 'n': *d++ = '\n'; break;
		case 'r': *d++ = '\r'; break;
		case 't': *d++ = '\t'; break;
		case 'u': {
			unsigned long cp = (unsigned long)hex4(p);
			p += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				unsigned long lo = (unsigned long)hex4(p + 2);
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			d += put_utf8(d, cp);
			break;
		}
		default: *d++ = e; break; /* '"', '\\', '/' */
		}
	}
	return (size_t)(d - d0);
}

/* The string whose opening quote is at p: a slice of the input when it has
 * no escapes, else decoded into the arena (decode = false only validates). */
IG_HOT static const char *read_string(ig_json_reader *r, const char *p, ig_str *out, bool decode)
{
	bool escaped;
	const char *q = scan_string(r, p + 1, &escaped);
	if (!q)
		return NULL;
	if (!escaped || !decode) {
		*out = (ig_str){ p + 1, (size_t)(q - p - 1) };
		return q + 1;
	}
	char *d = jr_alloc(r, p, (size_t)(q - p - 1));
	if (!d)
		return NULL;
	*out = (ig_str){ d, decode_string(d, p + 1, q) };
	return q + 1;
}

/* ---- numbers ---- */

/* A scanned number literal: value = mant * 10^exp10 when exact. */
struct num {
	uint64_t mant;    /* the first 19 significant digits */
	int64_t exp10;    /* exponent applying to mant */
	int64_t mag;      /* value is 0.ddd * 10^mag (valid when sig > 0) */
	size_t sig;       /* significant digits (from the first non-zero one) */
	bool neg, integer, exact; /* exact: no digit was dropped from mant */
};

/* Scans the literal at p (a '-' or digit) per RFC 8259; returns its end. */
IG_HOT static const char *scan_number(ig_json_reader *r, const char *p, struct num *n)
{
	const char *end = r->end;
	uint64_t m = 0;
	size_t sig = 0, frac = 0, dropped = 0;
	int64_t e = 0;
	*n = (struct num){ .integer = true };
	if (*p == '-') {
		n->neg = true;
		p++;
	}
	if (p == end || !is_digit(*p))
		return fail_at(r, p, E_DIGIT), NULL;
	if (*p == '0') {
		p++;
		if (p < end && is_digit(*p))
			return fail_at(r, p - 1, E_LEADING_ZERO), NULL;
	} else {
		for (; p < end && is_digit(*p); p++) {
			if (sig < 19)
				m = m * 10 + (uint64_t)(*p - '0');
			else
				dropped++;
			sig++;
		}
	}
	if (p < end && *p == '.') {
		n->integer = false;
		p++;
		if (p == end || !is_digit(*p))
			return fail_at(r, p, E_FRAC), NULL;
		for (; p < end && is_digit(*p); p++) {
			frac++;
			if (sig == 0 && *p == '0')
				continue; /* leading zeros of 0.000x carry no precision */
			if (sig < 19)
				m = m * 10 + (uint64_t)(*p - '0');
			else
				dropped++;
			sig++;
		}
	}
	if (p < end && (*p | 0x20) == 'e') {
		n->integer = false;
		p++;
		bool eneg = false;
		if (p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		if (p == end || !is_digit(*p))
			return fail_at(r, p, E_EXP), NULL;
		/* Saturates far beyond any exponent that matters but far below
		 * overflow, even after adding an input-sized digit count. */
		for (; p < end && is_digit(*p); p++)
			if (e < 1000000000000000000 / 10)
				e = e * 10 + (*p - '0');
		if (eneg)
			e = -e;
	}
	n->mant = m;
	n->sig = sig;
	n->exact = dropped == 0;
	/* Digits dropped from the integer part scale mant up; dropped fraction
	 * digits were counted in frac, so they cancel out. */
	n->exp10 = e - (int64_t)frac + (int64_t)dropped;
	n->mag = (int64_t)sig + e - (int64_t)frac;
	return p;
}

static const double pow10_exact[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* strtod on a NUL-terminated copy of [s, e): musl's is correctly rounded. */
static bool strtod_copy(ig_json_reader *r, const char *s, const char *e, double *out)
{
	char small[64], *buf = small;
	size_t len = (size_t)(e - s);
	if (len >= sizeof small && !(buf = jr_alloc(r, s, len + 1)))
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	*out = strtod(buf, NULL);
	return true;
}

/* The literal's double, correctly rounded; fails when it overflows. */
static bool number_double(ig_json_reader *r, const char *s, const char *e, const struct num *n,
			  double *out)
{
	if (n->sig == 0) {
		*out = n->neg ? -0.0 : 0.0;
		return true;
	}
#if FLT_EVAL_METHOD == 0
	/* Clinger's fast path: an exact mantissa and an exact power of ten,
	 * one IEEE operation, hence one correct rounding. */
	if (n->exact && n->mant <= (1ull << 53) && n->exp10 >= -22 && n->exp10 <= 22) {
		double d = (double)n->mant;
		d = n->exp10 < 0 ? d / pow10_exact[-n->exp10] : d * pow10_exact[n->exp10];
		*out = n->neg ? -d : d;
		return true;
	}
#endif
	if (!strtod_copy(r, s, e, out))
		return false;
	if (isinf(*out))
		return fail_at(r, s, E_RANGE);
	return true;
}

/* Whether the literal's magnitude overflows a double, decided from its
 * decimal magnitude alone except near DBL_MAX (0.1797...e309). */
static bool number_fits(ig_json_reader *r, const char *s, const char *e, const struct num *n)
{
	if (n->sig == 0 || n->mag <= 308)
		return true;
	if (n->mag >= 310)
		return fail_at(r, s, E_RANGE);
	double d;
	if (!strtod_copy(r, s, e, &d))
		return false;
	return isinf(d) ? fail_at(r, s, E_RANGE) : true;
}

/* The number at p into *v (INT or NUMBER, raw set); returns its end. */
IG_HOT static const char *read_number(ig_json_reader *r, const char *p, ig_json_value *v)
{
	struct num n;
	const char *e = scan_number(r, p, &n);
	if (!e)
		return NULL;
	v->raw = (ig_str){ p, (size_t)(e - p) };
	/* 19 digits always fit a uint64; int64 allows one more below zero. */
	if (n.integer && n.sig <= 19 && n.mant <= (uint64_t)INT64_MAX + n.neg) {
		v->type = IG_JSON_INT;
		/* -(m - 1) - 1 reaches INT64_MIN without overflow. */
		v->i = !n.neg ? (int64_t)n.mant : n.mant ? -(int64_t)(n.mant - 1) - 1 : 0;
		return e;
	}
	v->type = IG_JSON_NUMBER;
	return number_double(r, p, e, &n, &v->d) ? e : NULL;
}

/* ---- pull API ---- */

/* The first byte of a value tells its kind. */
IG_HOT static enum ig_json_next kind_of(char c)
{
	switch (c) {
	case '{': return IG_JN_OBJECT;
	case '[': return IG_JN_ARRAY;
	case '"': return IG_JN_STRING;
	case 't': return IG_JN_TRUE;
	case 'f': return IG_JN_FALSE;
	case 'n': return IG_JN_NULL;
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9': return IG_JN_NUMBER;
	default: return IG_JN_ERROR;
	}
}

IG_HOT enum ig_json_next ig_jr_peek(ig_json_reader *r)
{
	if (r->error)
		return IG_JN_ERROR;
	const char *p = r->p = skip_ws(r->p, r->end);
	if (p == r->end)
		return IG_JN_END;
	enum ig_json_next k = kind_of(*p);
	if (k == IG_JN_ERROR)
		fail_at(r, p, E_CHAR);
	return k;
}

/* Skips whitespace and returns the next byte's position, or NULL (error
 * set) at the end of input or after an earlier error. */
IG_HOT static const char *next_token(ig_json_reader *r)
{
	if (r->error)
		return NULL;
	const char *p = r->p = skip_ws(r->p, r->end);
	if (ig_unlikely(p == r->end))
		return fail_at(r, p, E_EOF), NULL;
	return p;
}

/* The value's first byte does not match what the caller asked for. */
static bool wrong_type(ig_json_reader *r, const char *p, const char *expected)
{
	return fail_at(r, p, kind_of(*p) == IG_JN_ERROR ? E_CHAR : expected);
}

/* Whether the last token before the current position is `open`: then the
 * container has just begun and its first member needs no separator. The
 * reader keeps no per-level state, so the input itself records it. */
static bool just_opened(const ig_json_reader *r, char open)
{
	const char *q = r->p;
	while (q > r->start && is_ws((unsigned char)q[-1]))
		q--;
	return q > r->start && q[-1] == open;
}

static bool open_container(ig_json_reader *r, const char *p, char open, const char *expected)
{
	if (*p != open)
		return wrong_type(r, p, expected);
	if (r->depth >= r->max_depth)
		return fail_at(r, p, E_DEPTH);
	r->depth++;
	r->p = p + 1;
	return true;
}

IG_HOT bool ig_jr_object_begin(ig_json_reader *r)
{
	const char *p = next_token(r);
	return p && open_container(r, p, '{', E_OBJECT);
}

IG_HOT bool ig_jr_array_begin(ig_json_reader *r)
{
	const char *p = next_token(r);
	return p && open_container(r, p, '[', E_ARRAY);
}

IG_HOT bool ig_jr_object_next_key(ig_json_reader *r, ig_str *key)
{
	const char *p = next_token(r);
	if (!p)
		return false;
	if (*p == '}') {
		r->depth--;
		r->p = p + 1;
		return false;
	}
	if (!just_opened(r, '{')) {
		if (*p != ',')
			return fail_at(r, p, E_OBJ_SEP);
		p = skip_ws(p + 1, r->end);
		if (p < r->end && *p == '}')
			return fail_at(r, p, E_TRAILING_COMMA);
	}
	if (p == r->end)
		return fail_at(r, p, E_EOF);
	if (*p != '"')
		return fail_at(r, p, E_KEY);
	if (!(p = read_string(r, p, key, true)))
		return false;
	p = skip_ws(p, r->end);
	if (p == r->end || *p != ':')
		return fail_at(r, p, p == r->end ? E_EOF : E_COLON);
	r->p = p + 1;
	return true;
}

IG_HOT bool ig_jr_array_next(ig_json_reader *r)
{
	const char *p = next_token(r);
	if (!p)
		return false;
	bool first = just_opened(r, '[');
	if (*p == ']') {
		r->depth--;
		r->p = p + 1;
		return false;
	}
	if (!first) {
		if (*p != ',')
			return fail_at(r, p, E_ARR_SEP);
		p = skip_ws(p + 1, r->end);
		if (p < r->end && *p == ']')
			return fail_at(r, p, E_TRAILING_COMMA);
		r->p = p;
	}
	return true;
}

static bool read_literal(ig_json_reader *r, const char *p, const char *lit, size_t n)
{
	if ((size_t)(r->end - p) < n || memcmp(p, lit, n) != 0)
		return fail_at(r, p, E_LITERAL);
	r->p = p + n;
	return true;
}

bool ig_jr_null(ig_json_reader *r)
{
	const char *p = next_token(r);
	if (!p)
		return false;
	return *p == 'n' ? read_literal(r, p, "null", 4) : wrong_type(r, p, E_NULL);
}

bool ig_jr_bool(ig_json_reader *r, bool *out)
{
	const char *p = next_token(r);
	if (!p)
		return false;
	if (*p == 't' && read_literal(r, p, "true", 4)) {
		*out = true;
		return true;
	}
	if (*p == 'f' && read_literal(r, p, "false", 5)) {
		*out = false;
		return true;
	}
	return r->error ? false : wrong_type(r, p, E_BOOL);
}

IG_HOT bool ig_jr_string(ig_json_reader *r, ig_str *out)
{
	const char *p = next_token(r);
	if (!p)
		return false;
	if (*p != '"')
		return wrong_type(r, p, E_STRING);
	if (!(p = read_string(r, p, out, true)))
		return false;
	r->p = p;
	return true;
}

IG_HOT bool ig_jr_number(ig_json_reader *r, ig_json_value *out)
{
	const char *p = next_token(r);
	if (!p)
		return false;
	if (kind_of(*p) != IG_JN_NUMBER)
		return wrong_type(r, p, E_NUMBER);
	if (!(p = read_number(r, p, out)))
		return false;
	r->p = p;
	return true;
}

IG_HOT bool ig_jr_finish(ig_json_reader *r)
{
	if (r->error)
		return false;
	r->p = skip_ws(r->p, r->end);
	return r->p == r->end || fail_at(r, r->p, E_TRAILING);
}

/* ---- the walker behind ig_jr_skip and ig_jr_value ---- */

/* A member (or element, key empty) of a container still open. */
struct slot {
	ig_str key;
	size_t key_off; /* where the key's literal starts, for the error */
	ig_json_value *value;
};

struct walk {
	ig_json_reader *r;
	bool build;
	int base;             /* r->depth when the walk began */
	/* Kind of each open level (bit set: object), so skipping needs no
	 * arena for the first 256 levels. */
	uint64_t kinds_local[4], *kinds;
	size_t kinds_cap;     /* in bits */
	/* Building only: the open containers and their pending members, one
	 * stack for all levels; a level's members start at node->array.len
	 * (reused as the start index until the container closes). */
	ig_json_value **open;
	size_t open_cap;
	struct slot *slots;
	size_t nslots, slots_cap;
};

static bool grow(ig_json_reader *r, const char *at, void **p, size_t *cap, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	void *n = r->arena ? ig_arena_grow(r->arena, *p, *cap * elem, ncap * elem) : NULL;
	if (!n)
		return fail_at(r, at, E_MEMORY);
	*p = n;
	*cap = ncap;
	return true;
}

static bool level_is_object(const struct walk *w, size_t level)
{
	return w->kinds[level / 64] >> (level % 64) & 1;
}

static bool push_slot(struct walk *w, const char *at, ig_str key, size_t key_off)
{
	if (w->nslots == w->slots_cap &&
	    !grow(w->r, at, (void **)&w->slots, &w->slots_cap, sizeof *w->slots))
		return false;
	w->slots[w->nslots++] = (struct slot){ key, key_off, NULL };
	return true;
}

/* Opens a container at p ('{' or '['); level is its index from 0. */
static bool walk_open(struct walk *w, const char *p, bool object, ig_json_value **node)
{
	ig_json_reader *r = w->r;
	if (r->depth >= r->max_depth)
		return fail_at(r, p, E_DEPTH);
	size_t level = (size_t)(r->depth - w->base);
	if (level >= w->kinds_cap) {
		size_t words = w->kinds_cap / 64;
		uint64_t *k = jr_alloc(r, p, 2 * words * sizeof *k);
		if (!k)
			return false;
		memcpy(k, w->kinds, words * sizeof *k);
		w->kinds = k;
		w->kinds_cap *= 2;
	}
	uint64_t bit = 1ull << (level % 64);
	w->kinds[level / 64] = object ? w->kinds[level / 64] | bit : w->kinds[level / 64] & ~bit;
	r->depth++;
	if (!w->build)
		return true;
	ig_json_value *v = jr_alloc(r, p, sizeof *v);
	if (!v)
		return false;
	*v = (ig_json_value){ .type = object ? IG_JSON_OBJECT : IG_JSON_ARRAY, .raw = { p, 0 } };
	v->array.len = w->nslots;
	if (level >= w->open_cap && !grow(r, p, (void **)&w->open, &w->open_cap, sizeof *w->open))
		return false;
	w->open[level] = v;
	*node = v;
	return true;
}

static int key_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	if (x->key.len != y->key.len)
		return x->key.len < y->key.len ? -1 : 1;
	int c = memcmp(x->key.ptr, y->key.ptr, x->key.len);
	if (c)
		return c;
	return x->key_off < y->key_off ? -1 : x->key_off > y->key_off;
}

static bool same_key(const struct slot *a, const struct slot *b)
{
	return a->key.len == b->key.len && memcmp(a->key.ptr, b->key.ptr, a->key.len) == 0;
}

/* Fails at the earliest repeated key among the n members at s: pairwise
 * for small objects, by sorting a copy for large ones (no hash to flood). */
static bool check_unique(ig_json_reader *r, const struct slot *s, size_t n, const char *close)
{
	if (n <= 16) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (same_key(&s[i], &s[j]))
					return fail_at(r, r->start + s[i].key_off, E_DUPLICATE);
		return true;
	}
	struct slot *t = jr_alloc(r, close, n * sizeof *t);
	if (!t)
		return false;
	memcpy(t, s, n * sizeof *t);
	qsort(t, n, sizeof *t, key_cmp);
	size_t first = SIZE_MAX;
	for (size_t i = 1; i < n; i++)
		if (same_key(&t[i], &t[i - 1]) && t[i].key_off < first)
			first = t[i].key_off;
	return first == SIZE_MAX || fail_at(r, r->start + first, E_DUPLICATE);
}

/* Closes the innermost container at p (its closing byte); returns it. */
static ig_json_value *walk_close(struct walk *w, const char *p)
{
	ig_json_reader *r = w->r;
	r->depth--;
	if (!w->build)
		return NULL;
	ig_json_value *v = w->open[r->depth - w->base];
	size_t start = v->array.len, n = w->nslots - start;
	struct slot *s = n ? w->slots + start : NULL; /* slots is NULL until a first member */
	v->raw.len = (size_t)(p + 1 - v->raw.ptr);
	w->nslots = start;
	if (v->type == IG_JSON_ARRAY) {
		ig_json_value **items = n ? jr_alloc(r, p, n * sizeof *items) : NULL;
		if (n && !items)
			return NULL;
		for (size_t i = 0; i < n; i++)
			items[i] = s[i].value;
		v->array.items = items;
		v->array.len = n;
		return v;
	}
	if (!check_unique(r, s, n, p))
		return NULL;
	ig_json_member *m = n ? jr_alloc(r, p, n * sizeof *m) : NULL;
	if (n && !m)
		return NULL;
	for (size_t i = 0; i < n; i++)
		m[i] = (ig_json_member){ s[i].key, s[i].value };
	v->object.members = m;
	v->object.len = n;
	return v;
}

/* A scalar at p; in build mode *node gets its tree node. Returns its end. */
static const char *walk_scalar(struct walk *w, const char *p, ig_json_value **node)
{
	ig_json_reader *r = w->r;
	ig_json_value tmp, *v = &tmp;
	if (w->build && !(v = *node = jr_alloc(r, p, sizeof *v)))
		return NULL;
	const char *e = NULL;
	switch (*p) {
	case '"':
		v->type = IG_JSON_STRING;
		e = read_string(r, p, &v->s, w->build);
		break;
	case 't':
	case 'f':
		v->type = IG_JSON_BOOL;
		v->b = *p == 't';
		if (read_literal(r, p, v->b ? "true" : "false", v->b ? 4 : 5))
			e = r->p;
		break;
	case 'n':
		v->type = IG_JSON_NULL;
		if (read_literal(r, p, "null", 4))
			e = r->p;
		break;
	default:
		if (kind_of(*p) != IG_JN_NUMBER) {
			fail_at(r, p, E_CHAR);
		} else if (w->build) {
			e = read_number(r, p, v);
		} else {
			/* Skipping needs no double, only whether one exists. */
			struct num n;
			e = scan_number(r, p, &n);
			if (e && !number_fits(r, p, e, &n))
				e = NULL;
		}
		return e;
	}
	if (e)
		v->raw = (ig_str){ p, (size_t)(e - p) };
	return e;
}

/* The one grammar loop for skip and value: explicit states instead of
 * recursion, so max_depth is policy, not a stack-size hazard. */
static bool walk(ig_json_reader *r, bool build, ig_json_value **root)
{
	struct walk w = { .r = r, .build = build, .base = r->depth, .kinds_cap = 256 };
	w.kinds = w.kinds_local;
	const char *p = r->p, *end = r->end;
	ig_json_value *node = NULL;
	size_t level;
	if (r->error)
		return false;

value:
	p = skip_ws(p, end);
	if (p == end)
		return fail_at(r, p, E_EOF);
	level = (size_t)(r->depth - w.base);
	if (build && level > 0 && !level_is_object(&w, level - 1) &&
	    !push_slot(&w, p, (ig_str){ 0 }, 0))
		return false;
	if (*p == '{' || *p == '[') {
		bool object = *p == '{';
		if (!walk_open(&w, p, object, &node))
			return false;
		const char *q = skip_ws(p + 1, end);
		if (q < end && *q == (object ? '}' : ']')) {
			p = q;
			node = walk_close(&w, p++);
			if (build && !node)
				return false;
			goto after;
		}
		p = q;
		if (object)
			goto key;
		goto value;
	}
	if (!(p = walk_scalar(&w, p, &node)))
		return false;
	goto after;

key:
	/* p: after whitespace, the start of a member */
	if (p == end)
		return fail_at(r, p, E_EOF);
	if (*p != '"')
		return fail_at(r, p, E_KEY);
	{
		ig_str k;
		const char *ks = p;
		if (!(p = read_string(r, p, &k, build)))
			return false;
		if (build && !push_slot(&w, ks, k, (size_t)(ks - r->start)))
			return false;
	}
	p = skip_ws(p, end);
	if (p == end)
		return fail_at(r, p, E_EOF);
	if (*p != ':')
		return fail_at(r, p, E_COLON);
	p++;
	goto value;

after:
	/* A value ended at p; node is it (building). */
	level = (size_t)(r->depth - w.base);
	if (level == 0) {
		r->p = p;
		if (root)
			*root = node;
		return true;
	}
	if (build)
		w.slots[w.nslots - 1].value = node;
	p = skip_ws(p, end);
	if (p == end)
		return fail_at(r, p, E_EOF);
	{
		bool object = level_is_object(&w, level - 1);
		char close = object ? '}' : ']';
		if (*p == ',') {
			p = skip_ws(p + 1, end);
			if (p < end && *p == close)
				return fail_at(r, p, E_TRAILING_COMMA);
			if (object)
				goto key;
			goto value;
		}
		if (*p != close)
			return fail_at(r, p, object ? E_OBJ_SEP : E_ARR_SEP);
		node = walk_close(&w, p++);
		if (build && !node)
			return false;
		goto after;
	}
}

bool ig_jr_skip(ig_json_reader *r)
{
	return walk(r, false, NULL);
}

ig_json_value *ig_jr_value(ig_json_reader *r)
{
	ig_json_value *v = NULL;
	return walk(r, true, &v) ? v : NULL;
}
