/* Values to and from PostgreSQL's wire formats (see types.h): parameters
 * binary where the type has a fixed binary form, text otherwise; columns in
 * either format, checked against what the type allows, because the bytes
 * come from the network. */
#include "net/pg/types.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- calendar ---- */

/* Days from 1970-01-01 of a proleptic Gregorian date, counted in 400-year
 * eras of 146097 days with March as the first month, so that the leap day
 * falls at the end of the year. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t year_of_era = y - era * 400;
	int64_t day_of_year = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
	return era * 146097 + day_of_era - 719468;
}

#define DAYS_1970_TO_2000 10957

int32_t ig_pg_date_from_ymd(int32_t y, unsigned m, unsigned d)
{
	return (int32_t)(days_from_civil(y, m, d) - DAYS_1970_TO_2000);
}

void ig_pg_date_to_ymd(int32_t days, int32_t *y, unsigned *m, unsigned *d)
{
	int64_t z = (int64_t)days + DAYS_1970_TO_2000 + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t day_of_era = z - era * 146097;
	int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
	int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
	int64_t mp = (5 * day_of_year + 2) / 153;
	*d = (unsigned)(day_of_year - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int32_t)(year_of_era + era * 400 + (*m <= 2));
}

/* ---- parameters ---- */

/* The binary length of the fixed-size types, 0 for the others. */
static size_t fixed_len(uint32_t oid)
{
	switch (oid) {
	case IG_PG_BOOL: return 1;
	case IG_PG_INT2: return 2;
	case IG_PG_INT4: case IG_PG_FLOAT4: case IG_PG_DATE: return 4;
	case IG_PG_INT8: case IG_PG_FLOAT8: case IG_PG_TIMESTAMP: case IG_PG_TIMESTAMPTZ: return 8;
	case IG_PG_UUID: return 16;
	default: return 0;
	}
}


int16_t ig_pg_param_format(const ig_pg_value *v)
{
	switch (v->oid) {
	case IG_PG_BOOL:
	case IG_PG_INT2:
	case IG_PG_INT4:
	case IG_PG_INT8:
	case IG_PG_FLOAT4:
	case IG_PG_FLOAT8:
	case IG_PG_BYTEA:
	case IG_PG_UUID:
	case IG_PG_DATE:
	case IG_PG_TIMESTAMP:
	case IG_PG_TIMESTAMPTZ:
	case IG_PG_JSONB:
		return 1;
	default:
		return 0;
	}
}

bool ig_pg_param_valid(const ig_pg_value *v)
{
	if (v->null)
		return true;
	switch (v->oid) {
	case IG_PG_INT2:
		return v->i >= INT16_MIN && v->i <= INT16_MAX;
	case IG_PG_INT4:
		return v->i >= INT32_MIN && v->i <= INT32_MAX;
	case IG_PG_BOOL:
	case IG_PG_INT8:
	case IG_PG_FLOAT4:
	case IG_PG_FLOAT8:
	case IG_PG_UUID:
	case IG_PG_DATE:
	case IG_PG_TIMESTAMP:
	case IG_PG_TIMESTAMPTZ:
		return true;
	case IG_PG_BYTEA:
		return v->s.len <= INT32_MAX && (v->s.len == 0 || v->s.ptr);
	default: /* text: the server refuses a NUL in it */
		return v->s.len < INT32_MAX && (v->s.len == 0 || (v->s.ptr && !memchr(v->s.ptr, 0, v->s.len)));
	}
}

void ig_pg_param_encode(struct pg_out *o, const ig_pg_value *v)
{
	if (v->null) {
		ig_pg_out_u32(o, UINT32_MAX); /* -1 */
		return;
	}
	if (!ig_pg_param_valid(v)) {
		o->overflow = true;
		return;
	}
	switch (v->oid) {
	case IG_PG_BOOL:
		ig_pg_out_u32(o, 1);
		ig_pg_out_u8(o, v->b ? 1 : 0);
		return;
	case IG_PG_INT2:
		ig_pg_out_u32(o, 2);
		ig_pg_out_u16(o, (uint16_t)v->i);
		return;
	case IG_PG_INT4:
		ig_pg_out_u32(o, 4);
		ig_pg_out_u32(o, (uint32_t)v->i);
		return;
	case IG_PG_INT8:
		ig_pg_out_u32(o, 8);
		ig_pg_out_u64(o, (uint64_t)v->i);
		return;
	case IG_PG_FLOAT4: {
		float f = (float)v->f;
		uint32_t bits;
		memcpy(&bits, &f, 4);
		ig_pg_out_u32(o, 4);
		ig_pg_out_u32(o, bits);
		return;
	}
	case IG_PG_FLOAT8: {
		uint64_t bits;
		memcpy(&bits, &v->f, 8);
		ig_pg_out_u32(o, 8);
		ig_pg_out_u64(o, bits);
		return;
	}
	case IG_PG_UUID:
		ig_pg_out_u32(o, 16);
		ig_pg_out_bytes(o, v->uuid, 16);
		return;
	case IG_PG_DATE:
		ig_pg_out_u32(o, 4);
		ig_pg_out_u32(o, (uint32_t)v->date);
		return;
	case IG_PG_TIMESTAMP:
	case IG_PG_TIMESTAMPTZ:
		ig_pg_out_u32(o, 8);
		ig_pg_out_u64(o, (uint64_t)v->ts);
		return;
	case IG_PG_JSONB: /* binary jsonb: a version byte, then the text */
		ig_pg_out_u32(o, (uint32_t)v->s.len + 1);
		ig_pg_out_u8(o, 1);
		ig_pg_out_bytes(o, v->s.ptr, v->s.len);
		return;
	default: /* bytea's raw bytes, or the text of the others */
		ig_pg_out_u32(o, (uint32_t)v->s.len);
		ig_pg_out_bytes(o, v->s.ptr, v->s.len);
		return;
	}
}

size_t ig_pg_param_size(const ig_pg_value *v)
{
	if (v->null)
		return 4;
	size_t fixed = fixed_len(v->oid);
	if (fixed)
		return 4 + fixed;
	return 4 + v->s.len + (v->oid == IG_PG_JSONB); /* jsonb's version byte */
}

int16_t ig_pg_result_format(uint32_t oid)
{
	switch (oid) {
	case IG_PG_JSONB: /* asked as text: its text is what the API hands out */
		return 0;
	default: {
		ig_pg_value probe = { .oid = oid };
		return ig_pg_param_format(&probe);
	}
	}
}

/* ---- columns ---- */

static uint64_t be_n(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static bool copy_str(ig_arena *arena, const char *p, size_t len, ig_str *out)
{
	if (len == 0) {
		*out = (ig_str){ "", 0 };
		return true;
	}
	char *d = ig_arena_alloc(arena, len);
	if (!d)
		return false;
	memcpy(d, p, len);
	*out = (ig_str){ d, len };
	return true;
}

/* A cursor over a column's text. */
struct txt {
	const char *p, *end;
};

static bool txt_lit(struct txt *t, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(t->end - t->p) < n || memcmp(t->p, lit, n) != 0)
		return false;
	t->p += n;
	return true;
}

/* Exactly `digits` decimal digits (1 to 18), or, with digits 0, one or more
 * (at most 18). */
static bool txt_uint(struct txt *t, int digits, int64_t *v)
{
	int n = 0;
	int64_t x = 0;
	while (t->p < t->end && *t->p >= '0' && *t->p <= '9' && n < 18 && (digits == 0 || n < digits)) {
		x = x * 10 + (*t->p++ - '0');
		n++;
	}
	if (n == 0 || (digits && n != digits) || (t->p < t->end && *t->p >= '0' && *t->p <= '9' && digits == 0))
		return false;
	*v = x;
	return true;
}

static bool text_int(const char *p, size_t len, int64_t lo, int64_t hi, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	if (i < len && (p[i] == '-' || p[i] == '+'))
		neg = p[i++] == '-';
	if (i == len)
		return false;
	uint64_t v = 0, limit = neg ? (uint64_t)-(lo + 1) + 1 : (uint64_t)hi;
	for (; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		unsigned d = (unsigned)(p[i] - '0');
		if (v > (limit - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

static bool text_float(const char *p, size_t len, double *out)
{
	char buf[64];
	if (len == 0 || len >= sizeof buf)
		return false;
	memcpy(buf, p, len);
	buf[len] = 0;
	char *end;
	*out = strtod(buf, &end);
	return end == buf + len;
}

static bool text_uuid(const char *p, size_t len, uint8_t u[16])
{
	size_t j = 0;
	for (size_t i = 0; i < len; i++) {
		if (p[i] == '-' && (i == 8 || i == 13 || i == 18 || i == 23) && len == 36)
			continue;
		int hi = ig_hex_digit(p[i]), lo = i + 1 < len ? ig_hex_digit(p[i + 1]) : -1;
		if (hi < 0 || lo < 0 || j == 16)
			return false;
		u[j++] = (uint8_t)(hi << 4 | lo);
		i++;
	}
	return j == 16;
}

/* bytea's text: hex ("\x" then pairs) or the old escape form (bytes as
 * they are but '\\' and "\ooo" octal). */
static bool text_bytea(const char *p, size_t len, ig_arena *arena, ig_str *out)
{
	size_t cap = len;
	char *d = ig_arena_alloc(arena, cap ? cap : 1);
	if (!d)
		return false;
	size_t n = 0;
	if (len >= 2 && p[0] == '\\' && p[1] == 'x') {
		if ((len - 2) % 2)
			return false;
		for (size_t i = 2; i < len; i += 2) {
			int hi = ig_hex_digit(p[i]), lo = ig_hex_digit(p[i + 1]);
			if (hi < 0 || lo < 0)
				return false;
			d[n++] = (char)(hi << 4 | lo);
		}
	} else {
		for (size_t i = 0; i < len; i++) {
			if (p[i] != '\\') {
				d[n++] = p[i];
			} else if (i + 1 < len && p[i + 1] == '\\') {
				d[n++] = '\\';
				i++;
			} else if (i + 3 < len && p[i + 1] >= '0' && p[i + 1] <= '3' && p[i + 2] >= '0' &&
				   p[i + 2] <= '7' && p[i + 3] >= '0' && p[i + 3] <= '7') {
				d[n++] = (char)((p[i + 1] - '0') << 6 | (p[i + 2] - '0') << 3 | (p[i + 3] - '0'));
				i += 3;
			} else {
				return false;
			}
		}
	}
	*out = (ig_str){ d, n };
	return true;
}

/* The date part of ISO text: "YYYY-MM-DD" (4 or more year digits), with
 * the " BC" suffix read by the caller. */
static bool txt_date(struct txt *t, int64_t *y, int64_t *m, int64_t *d)
{
	return txt_uint(t, 0, y) && *y >= 1 && *y <= 5874897 && txt_lit(t, "-") && txt_uint(t, 2, m) &&
	       *m >= 1 && *m <= 12 && txt_lit(t, "-") && txt_uint(t, 2, d) && *d >= 1 && *d <= 31;
}

static bool valid_day(int64_t y, int64_t m, int64_t d)
{
	static const unsigned char mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return d <= mdays[m - 1] && !(m == 2 && d == 29 && !leap);
}

/* " BC" turns year y into the astronomical year 1 - y. */
static bool bc_year(struct txt *t, int64_t *y)
{
	if (txt_lit(t, " BC"))
		*y = 1 - *y;
	return true;
}

/* 1 for "infinity", -1 for "-infinity", else 0. */
static int infinity_sign(const char *p, size_t len)
{
	if (len == 8 && memcmp(p, "infinity", 8) == 0)
		return 1;
	return len == 9 && memcmp(p, "-infinity", 9) == 0 ? -1 : 0;
}

static bool text_date(const char *p, size_t len, int32_t *out)
{
	int inf = infinity_sign(p, len);
	if (inf) {
		*out = inf > 0 ? IG_PG_DATE_INFINITY : IG_PG_DATE_NEG_INFINITY;
		return true;
	}
	struct txt t = { p, p + len };
	int64_t y, m, d;
	if (!txt_date(&t, &y, &m, &d) || !bc_year(&t, &y) || t.p != t.end || !valid_day(y, m, d))
		return false;
	*out = ig_pg_date_from_ymd((int32_t)y, (unsigned)m, (unsigned)d);
	return true;
}

/* "YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM[:SS]]][ BC]": the offset only with
 * tz (PostgreSQL writes the offset before " BC"). */
static bool text_timestamp(const char *p, size_t len, bool tz, int64_t *out)
{
	int inf = infinity_sign(p, len);
	if (inf) {
		*out = inf > 0 ? IG_PG_TS_INFINITY : IG_PG_TS_NEG_INFINITY;
		return true;
	}
	struct txt t = { p, p + len };
	int64_t y, mo, d, h, mi, s, frac = 0;
	if (!txt_date(&t, &y, &mo, &d) || !txt_lit(&t, " ") || !txt_uint(&t, 2, &h) || h > 24 ||
	    !txt_lit(&t, ":") || !txt_uint(&t, 2, &mi) || mi > 59 || !txt_lit(&t, ":") || !txt_uint(&t, 2, &s) ||
	    s > 60)
		return false;
	if (txt_lit(&t, ".")) {
		int n = 0;
		while (t.p < t.end && *t.p >= '0' && *t.p <= '9') {
			if (n == 6)
				return false;
			frac = frac * 10 + (*t.p++ - '0');
			n++;
		}
		if (n == 0)
			return false;
		for (; n < 6; n++)
			frac *= 10;
	}
	int64_t offset = 0;
	if (tz) {
		if (t.p == t.end || (*t.p != '+' && *t.p != '-'))
			return false;
		int sign = *t.p++ == '-' ? -1 : 1;
		int64_t oh, om = 0, os = 0;
		if (!txt_uint(&t, 2, &oh) || oh > 15)
			return false;
		if (txt_lit(&t, ":") && (!txt_uint(&t, 2, &om) || om > 59))
			return false;
		if (txt_lit(&t, ":") && (!txt_uint(&t, 2, &os) || os > 59))
			return false;
		offset = sign * (oh * 3600 + om * 60 + os);
	}
	bc_year(&t, &y);
	if (t.p != t.end || !valid_day(y, mo, d))
		return false;
	int64_t days = days_from_civil(y, (unsigned)mo, (unsigned)d) - DAYS_1970_TO_2000;
	int64_t secs = days * 86400 + h * 3600 + mi * 60 + s - offset;
	/* days is within +-2^31 and secs within +-2^48: the product fits. */
	if (secs > INT64_MAX / 1000000 - 1 || secs < INT64_MIN / 1000000 + 1)
		return false;
	*out = secs * 1000000 + frac;
	return true;
}

/* A binary numeric as its text: base-10000 digits with a weight (the power
 * of the first) and a display scale (the digits after the point). */
static bool numeric_text(const unsigned char *p, size_t len, ig_arena *arena, ig_str *out)
{
	if (len < 8)
		return false;
	uint16_t ndigits = (uint16_t)be_n(p, 2);
	int16_t weight = (int16_t)be_n(p + 2, 2);
	uint16_t sign = (uint16_t)be_n(p + 4, 2), dscale = (uint16_t)be_n(p + 6, 2);
	if (len != 8 + 2 * (size_t)ndigits || dscale > 0x3fff)
		return false;
	switch (sign) {
	case 0xc000: *out = IG_STR("NaN"); return true;
	case 0xd000: *out = IG_STR("Infinity"); return true;
	case 0xf000: *out = IG_STR("-Infinity"); return true;
	case 0x0000: case 0x4000: break;
	default: return false;
	}
	for (uint16_t i = 0; i < ndigits; i++)
		if (be_n(p + 8 + 2 * i, 2) > 9999)
			return false;
	size_t int_groups = weight >= 0 ? (size_t)weight + 1 : 0;
	size_t cap = 1 + (int_groups ? int_groups * 4 : 1) + 1 + dscale + 4;
	char *d = ig_arena_alloc(arena, cap);
	if (!d)
		return false;
	size_t n = 0;
	if (sign == 0x4000)
		d[n++] = '-';
	if (int_groups == 0) {
		d[n++] = '0';
	} else {
		for (size_t g = 0; g < int_groups; g++) {
			unsigned v = g < ndigits ? (unsigned)be_n(p + 8 + 2 * g, 2) : 0;
			char four[4] = { (char)('0' + v / 1000), (char)('0' + v / 100 % 10), (char)('0' + v / 10 % 10),
					 (char)('0' + v % 10) };
			int skip = 0;
			if (g == 0) /* the first group without its leading zeros */
				while (skip < 3 && four[skip] == '0')
					skip++;
			memcpy(d + n, four + skip, (size_t)(4 - skip));
			n += (size_t)(4 - skip);
		}
	}
	if (dscale) {
		d[n++] = '.';
		size_t written = 0;
		for (int64_t g = (int64_t)weight + 1; written < dscale; g++) {
			unsigned v = g >= 0 && g < ndigits ? (unsigned)be_n(p + 8 + 2 * g, 2) : 0;
			unsigned div = 1000;
			for (int k = 0; k < 4 && written < dscale; k++, div /= 10, written++)
				d[n++] = (char)('0' + v / div % 10);
		}
	}
	*out = (ig_str){ d, n };
	return true;
}

static bool decode_text(uint32_t oid, const char *p, size_t len, ig_arena *arena, ig_pg_value *out)
{
	switch (oid) {
	case IG_PG_BOOL:
		if (len != 1 || (p[0] != 't' && p[0] != 'f'))
			return false;
		out->b = p[0] == 't';
		return true;
	case IG_PG_INT2:
		return text_int(p, len, INT16_MIN, INT16_MAX, &out->i);
	case IG_PG_INT4:
		return text_int(p, len, INT32_MIN, INT32_MAX, &out->i);
	case IG_PG_INT8:
		return text_int(p, len, INT64_MIN, INT64_MAX, &out->i);
	case IG_PG_FLOAT4:
	case IG_PG_FLOAT8:
		return text_float(p, len, &out->f);
	case IG_PG_BYTEA:
		return text_bytea(p, len, arena, &out->s);
	case IG_PG_UUID:
		return text_uuid(p, len, out->uuid);
	case IG_PG_DATE:
		return text_date(p, len, &out->date);
	case IG_PG_TIMESTAMP:
	case IG_PG_TIMESTAMPTZ:
		return text_timestamp(p, len, oid == IG_PG_TIMESTAMPTZ, &out->ts);
	default:
		return copy_str(arena, p, len, &out->s);
	}
}

static bool decode_binary(uint32_t oid, const char *p, size_t len, ig_arena *arena, ig_pg_value *out)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t fixed = fixed_len(oid);
	if (fixed && len != fixed)
		return false;
	uint64_t bits = fixed && fixed <= 8 ? be_n(u, (int)fixed) : 0;
	switch (oid) {
	case IG_PG_BOOL:
		out->b = bits == 1;
		return bits <= 1;
	case IG_PG_INT2:
		out->i = (int16_t)bits;
		return true;
	case IG_PG_INT4:
		out->i = (int32_t)bits;
		return true;
	case IG_PG_INT8:
		out->i = (int64_t)bits;
		return true;
	case IG_PG_FLOAT4: {
		uint32_t b32 = (uint32_t)bits;
		float f;
		memcpy(&f, &b32, 4);
		out->f = f;
		return true;
	}
	case IG_PG_FLOAT8:
		memcpy(&out->f, &bits, 8);
		return true;
	case IG_PG_UUID:
		memcpy(out->uuid, u, 16);
		return true;
	case IG_PG_DATE:
		out->date = (int32_t)bits;
		return true;
	case IG_PG_TIMESTAMP:
	case IG_PG_TIMESTAMPTZ:
		out->ts = (int64_t)bits;
		return true;
	case IG_PG_NUMERIC:
		return numeric_text(u, len, arena, &out->s);
	case IG_PG_JSONB:
		if (len < 1 || u[0] != 1)
			return false;
		return copy_str(arena, p + 1, len - 1, &out->s);
	default: /* bytea, text, varchar, json and unknown oids: the bytes as sent */
		return copy_str(arena, p, len, &out->s);
	}
}

bool ig_pg_value_decode(uint32_t oid, int16_t format, const char *p, int32_t len, ig_arena *arena,
		     ig_pg_value *out)
{
	*out = (ig_pg_value){ .oid = oid };
	if (len == -1) {
		out->null = true;
		return true;
	}
	if (len < 0 || (format != 0 && format != 1))
		return false;
	return format ? decode_binary(oid, p, (size_t)len, arena, out)
		      : decode_text(oid, p, (size_t)len, arena, out);
}
