/* Unit tests of net/pg/types: every type's parameter encoded in its format
 * and decoded back; the server's text output of each type (as PostgreSQL
 * 15 writes it with DateStyle=ISO and TimeZone=UTC) decoded; binary numeric
 * turned into text; the calendar; and what must be refused (wrong lengths,
 * bad text, out-of-range numbers). Expected day and microsecond counts were
 * computed with Python's datetime. */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "net/pg/types.h"
#include "tests/unit/check.h"

#include <math.h>
#include <string.h>

static struct ig_pool blocks;
static ig_arena arena;

/* Encodes v as a Bind parameter (exactly ig_pg_param_size bytes), then
 * decodes those bytes as a column of the same type in the same format. */
static bool round_trip(const ig_pg_value *v, ig_pg_value *back)
{
	char buf[256];
	struct pg_out o;
	pg_out_init(&o, buf, sizeof buf);
	ig_pg_param_encode(&o, v);
	if (o.overflow || o.len < 4)
		return false;
	int32_t len = (int32_t)((uint32_t)(unsigned char)buf[0] << 24 | (uint32_t)(unsigned char)buf[1] << 16 |
				(uint32_t)(unsigned char)buf[2] << 8 | (unsigned char)buf[3]);
	if (len != -1 && (size_t)len != o.len - 4)
		return false;
	if (ig_pg_param_size(v) != o.len)
		return false;
	return ig_pg_value_decode(v->oid, ig_pg_param_format(v), buf + 4, len, &arena, back);
}

static void test_round_trips(void)
{
	ig_pg_value back;
	static const uint8_t u[16] = { 0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11 };
	struct {
		ig_pg_value v;
		int16_t format;
		const char *name;
	} cases[] = {
		{ ig_pg_bool(true), 1, "bool true, binary" },
		{ ig_pg_bool(false), 1, "bool false, binary" },
		{ ig_pg_int2(-32768), 1, "int2 minimum, binary" },
		{ ig_pg_int4(2147483647), 1, "int4 maximum, binary" },
		{ ig_pg_int8(INT64_MIN), 1, "int8 minimum, binary" },
		{ ig_pg_float4(1.5f), 1, "float4, binary" },
		{ ig_pg_float8(-0.1), 1, "float8, binary" },
		{ ig_pg_text(IG_STR("héllo")), 0, "text, text format" },
		{ ig_pg_varchar(IG_STR("")), 0, "empty varchar" },
		{ ig_pg_numeric(IG_STR("-12345.6789")), 0, "numeric as text" },
		{ ig_pg_json(IG_STR("{\"a\":[1,2]}")), 0, "json, text" },
		{ ig_pg_jsonb(IG_STR("{\"a\": 1}")), 1, "jsonb, binary with its version byte" },
		{ ig_pg_bytea((ig_str){ "\0\1\xff", 3 }), 1, "bytea with a NUL and 0xff, binary" },
		{ ig_pg_uuid(u), 1, "uuid, binary" },
		{ ig_pg_date(-730485), 1, "date 1 BC, binary" },
		{ ig_pg_timestamp(768294489123456), 1, "timestamp, binary" },
		{ ig_pg_timestamptz(IG_PG_TS_NEG_INFINITY), 1, "timestamptz -infinity, binary" },
		{ ig_pg_null(IG_PG_INT4), 1, "NULL int4" },
		{ ig_pg_untyped(IG_STR("42")), 0, "an untyped parameter goes as text" },
	};
	for (size_t i = 0; i < IG_COUNTOF(cases); i++) {
		const ig_pg_value *v = &cases[i].v;
		bool ok = ig_pg_param_format(v) == cases[i].format && round_trip(v, &back) && back.oid == v->oid &&
			  back.null == v->null;
		if (ok && !v->null) {
			switch (v->oid) {
			case IG_PG_BOOL: ok = back.b == v->b; break;
			case IG_PG_INT2: case IG_PG_INT4: case IG_PG_INT8: ok = back.i == v->i; break;
			case IG_PG_FLOAT4: case IG_PG_FLOAT8: ok = back.f == v->f; break;
			case IG_PG_UUID: ok = memcmp(back.uuid, v->uuid, 16) == 0; break;
			case IG_PG_DATE: ok = back.date == v->date; break;
			case IG_PG_TIMESTAMP: case IG_PG_TIMESTAMPTZ: ok = back.ts == v->ts; break;
			default:
				ok = back.s.len == v->s.len && memcmp(back.s.ptr, v->s.ptr, v->s.len) == 0 &&
				     (back.s.len == 0 || back.s.ptr != v->s.ptr);
			}
		}
		CHECK(ok, cases[i].name);
	}
}

static bool text_is(uint32_t oid, const char *text, ig_pg_value *out)
{
	return ig_pg_value_decode(oid, 0, text, (int32_t)strlen(text), &arena, out);
}

static void test_text(void)
{
	ig_pg_value v;
	CHECK(text_is(IG_PG_BOOL, "t", &v) && v.b, "bool 't'");
	CHECK(text_is(IG_PG_BOOL, "f", &v) && !v.b, "bool 'f'");
	CHECK(!text_is(IG_PG_BOOL, "true", &v), "bool: only t and f are the server's text");
	CHECK(text_is(IG_PG_INT2, "-32768", &v) && v.i == -32768, "int2 minimum");
	CHECK(!text_is(IG_PG_INT2, "32768", &v), "int2 over its range");
	CHECK(text_is(IG_PG_INT4, "2147483647", &v) && v.i == 2147483647, "int4 maximum");
	CHECK(!text_is(IG_PG_INT4, "-2147483649", &v), "int4 under its range");
	CHECK(text_is(IG_PG_INT8, "-9223372036854775808", &v) && v.i == INT64_MIN, "int8 minimum");
	CHECK(!text_is(IG_PG_INT8, "9223372036854775808", &v), "int8 over its range");
	CHECK(!text_is(IG_PG_INT4, "", &v) && !text_is(IG_PG_INT4, "-", &v) && !text_is(IG_PG_INT4, "1x", &v),
	      "int: empty, a lone sign, trailing garbage");
	CHECK(text_is(IG_PG_FLOAT8, "3.14159", &v) && v.f == 3.14159, "float8");
	CHECK(text_is(IG_PG_FLOAT4, "1e+10", &v) && v.f == 1e10, "float4 with an exponent");
	CHECK(text_is(IG_PG_FLOAT8, "NaN", &v) && isnan(v.f), "float8 NaN");
	CHECK(text_is(IG_PG_FLOAT8, "-Infinity", &v) && isinf(v.f) && v.f < 0, "float8 -Infinity");
	CHECK(!text_is(IG_PG_FLOAT8, "1.5x", &v), "float8 with trailing garbage");
	CHECK(text_is(IG_PG_NUMERIC, "123.4500", &v) && ig_str_eq(v.s, "123.4500", 8), "numeric stays text");
	CHECK(text_is(IG_PG_BYTEA, "\\x00ff41", &v) && v.s.len == 3 && memcmp(v.s.ptr, "\0\xff" "A", 3) == 0,
	      "bytea in hex");
	CHECK(text_is(IG_PG_BYTEA, "a\\\\b\\001", &v) && v.s.len == 4 && memcmp(v.s.ptr, "a\\b\1", 4) == 0,
	      "bytea in the escape form");
	CHECK(!text_is(IG_PG_BYTEA, "\\x0", &v) && !text_is(IG_PG_BYTEA, "\\xzz", &v), "bytea: odd or bad hex");
	CHECK(text_is(IG_PG_UUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", &v) && v.uuid[0] == 0xa0 &&
		      v.uuid[15] == 0x11 && v.uuid[4] == 0x9c,
	      "uuid");
	CHECK(!text_is(IG_PG_UUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", &v) &&
		      !text_is(IG_PG_UUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1g", &v),
	      "uuid: short, or a bad digit");
	CHECK(text_is(IG_PG_DATE, "2000-01-01", &v) && v.date == 0, "date 2000-01-01 is day 0");
	CHECK(text_is(IG_PG_DATE, "2024-02-29", &v) && v.date == 8825, "date on a leap day");
	CHECK(text_is(IG_PG_DATE, "0001-01-01 BC", &v) && v.date == -730485, "date BC (year 0, a leap year)");
	CHECK(text_is(IG_PG_DATE, "infinity", &v) && v.date == IG_PG_DATE_INFINITY, "date infinity");
	CHECK(!text_is(IG_PG_DATE, "2023-02-29", &v) && !text_is(IG_PG_DATE, "2023-13-01", &v) &&
		      !text_is(IG_PG_DATE, "2023-1-01", &v),
	      "date: Feb 29 of a common year, month 13, a one-digit month");
	CHECK(text_is(IG_PG_TIMESTAMP, "2024-05-06 07:08:09.123456", &v) && v.ts == 768294489123456,
	      "timestamp with microseconds");
	CHECK(text_is(IG_PG_TIMESTAMP, "1970-01-01 00:00:00", &v) && v.ts == -946684800000000,
	      "timestamp at the Unix epoch");
	CHECK(text_is(IG_PG_TIMESTAMPTZ, "2024-05-06 07:08:09.5+02", &v) && v.ts == 768287289500000,
	      "timestamptz with an offset is taken to UTC");
	CHECK(text_is(IG_PG_TIMESTAMPTZ, "2024-05-06 05:08:09.5+00", &v) && v.ts == 768287289500000,
	      "timestamptz in UTC");
	CHECK(text_is(IG_PG_TIMESTAMPTZ, "2024-05-06 01:38:09.5-03:30", &v) && v.ts == 768287289500000,
	      "timestamptz with a negative half-hour offset");
	CHECK(!text_is(IG_PG_TIMESTAMPTZ, "2024-05-06 05:08:09", &v), "timestamptz without an offset");
	CHECK(!text_is(IG_PG_TIMESTAMP, "2024-05-06 05:08:09.1234567", &v), "timestamp with 7 fraction digits");
	CHECK(text_is(IG_PG_TIMESTAMP, "-infinity", &v) && v.ts == IG_PG_TS_NEG_INFINITY, "timestamp -infinity");
	CHECK(text_is(IG_PG_JSONB, "{\"a\": 1}", &v) && ig_str_eq(v.s, "{\"a\": 1}", 8), "jsonb as text");
	CHECK(text_is(9999, "(1,2)", &v) && v.oid == 9999 && ig_str_eq(v.s, "(1,2)", 5), "an unknown oid keeps its text");
	CHECK(ig_pg_value_decode(IG_PG_INT4, 0, NULL, -1, &arena, &v) && v.null && v.oid == IG_PG_INT4,
	      "NULL has null and its oid");
	CHECK(!ig_pg_value_decode(IG_PG_INT4, 2, "1", 1, &arena, &v), "format 2 is refused");
}

static bool numeric_is(const char *bin, size_t n, const char *want)
{
	ig_pg_value v;
	return ig_pg_value_decode(IG_PG_NUMERIC, 1, bin, (int32_t)n, &arena, &v) && ig_str_eq(v.s, want, strlen(want));
}
#define NUM(s) s, sizeof(s) - 1

static void test_binary(void)
{
	/* ndigits, weight, sign, dscale, then base-10000 digits */
	CHECK(numeric_is(NUM("\0\3\0\1\0\0\0\3\0\1\x09\x29\x1a\x7c"), "12345.678"), "numeric 12345.678");
	CHECK(numeric_is(NUM("\0\1\xff\xff\0\0\0\4\0\x0c"), "0.0012"), "numeric 0.0012 (negative weight)");
	CHECK(numeric_is(NUM("\0\1\0\0\x40\0\0\0\0\5"), "-5"), "numeric -5");
	CHECK(numeric_is(NUM("\0\1\0\2\0\0\0\0\0\1"), "100000000"), "numeric 1e8 (trailing groups left out)");
	CHECK(numeric_is(NUM("\0\0\0\0\0\0\0\2"), "0.00"), "numeric 0.00 (no digits)");
	CHECK(numeric_is(NUM("\0\0\0\0\xc0\0\0\0"), "NaN"), "numeric NaN");
	CHECK(numeric_is(NUM("\0\0\0\0\xd0\0\0\0"), "Infinity"), "numeric Infinity");
	ig_pg_value v;
	CHECK(!ig_pg_value_decode(IG_PG_NUMERIC, 1, NUM("\0\2\0\0\0\0\0\0\0\1"), &arena, &v),
	      "numeric with fewer digits than it says");
	CHECK(!ig_pg_value_decode(IG_PG_NUMERIC, 1, NUM("\0\1\0\0\0\0\0\0\x27\x10"), &arena, &v),
	      "numeric with a digit of 10000");
	CHECK(!ig_pg_value_decode(IG_PG_NUMERIC, 1, NUM("\0\0\0\0\x12\x34\0\0"), &arena, &v), "numeric with a bad sign");

	CHECK(!ig_pg_value_decode(IG_PG_INT4, 1, "\0\0\1", 3, &arena, &v), "int4 of 3 bytes");
	CHECK(!ig_pg_value_decode(IG_PG_INT8, 1, "\0\0\0\0\0\0\0\0\0", 9, &arena, &v), "int8 of 9 bytes");
	CHECK(!ig_pg_value_decode(IG_PG_BOOL, 1, "\2", 1, &arena, &v), "bool 2");
	CHECK(!ig_pg_value_decode(IG_PG_UUID, 1, "0123456789abcde", 15, &arena, &v), "uuid of 15 bytes");
	CHECK(!ig_pg_value_decode(IG_PG_JSONB, 1, "\2{}", 3, &arena, &v), "jsonb with version 2");
	CHECK(ig_pg_value_decode(IG_PG_INT2, 1, "\xff\xfe", 2, &arena, &v) && v.i == -2, "int2 -2 sign-extends");
	CHECK(ig_pg_value_decode(IG_PG_FLOAT8, 1, "\x3f\xf8\0\0\0\0\0\0", 8, &arena, &v) && v.f == 1.5, "float8 1.5");
	CHECK(ig_pg_value_decode(IG_PG_DATE, 1, "\xff\xff\xff\xff", 4, &arena, &v) && v.date == -1, "date -1");
	CHECK(!ig_pg_value_decode(IG_PG_INT4, 1, "\0\0\0\1", -2, &arena, &v), "a length below -1");

	/* Results: binary asked for the fixed-size types, text for the rest. */
	CHECK(ig_pg_result_format(IG_PG_INT4) == 1 && ig_pg_result_format(IG_PG_UUID) == 1 &&
		      ig_pg_result_format(IG_PG_BYTEA) == 1 && ig_pg_result_format(IG_PG_TIMESTAMPTZ) == 1 &&
		      ig_pg_result_format(IG_PG_NUMERIC) == 0 && ig_pg_result_format(IG_PG_JSONB) == 0 &&
		      ig_pg_result_format(IG_PG_TEXT) == 0 && ig_pg_result_format(12345) == 0,
	      "result formats: binary for fixed-size types, bytea and uuid; text for numeric, json(b), text, unknown");

	/* Strings go into the arena: a full one fails the decode. */
	ig_arena tiny;
	ig_arena_init(&tiny, &blocks, 16);
	char big[64];
	memset(big, 'x', sizeof big);
	CHECK(!ig_pg_value_decode(IG_PG_TEXT, 0, big, sizeof big, &tiny, &v), "text larger than the arena's limit fails");
	ig_arena_reset(&tiny);
}

static void test_calendar(void)
{
	bool ok = true;
	/* Every day from 1600 to 2400 maps back to itself, one day apart. */
	int32_t prev = ig_pg_date_from_ymd(1599, 12, 31);
	for (int32_t y = 1600; y <= 2400 && ok; y++)
		for (unsigned m = 1; m <= 12 && ok; m++)
			for (unsigned d = 1; d <= 31; d++) {
				static const unsigned char mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
				bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
				if (d > mdays[m - 1] || (m == 2 && d == 29 && !leap))
					break;
				int32_t days = ig_pg_date_from_ymd(y, m, d), yy;
				unsigned mm, dd;
				ig_pg_date_to_ymd(days, &yy, &mm, &dd);
				ok &= days == prev + 1 && yy == y && mm == m && dd == d;
				prev = days;
			}
	CHECK(ok, "calendar: every day of 1600-2400 follows the one before and maps back");
	CHECK(ig_pg_date_from_ymd(9999, 12, 31) == 2921939, "calendar: 9999-12-31");
}

int main(void)
{
	ig_pool_init(&blocks, 16384, 16, 1024);
	ig_arena_init(&arena, &blocks, 16 << 20);
	test_round_trips();
	test_text();
	test_binary();
	test_calendar();
	ig_arena_reset(&arena);
	return check_done();
}
