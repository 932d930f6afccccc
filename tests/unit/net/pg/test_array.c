/* Unit tests of net/pg/array.c: array columns' text (as PostgreSQL 15
 * writes it) split into decoded elements, with quoting, escapes, NULL and
 * "NULL", empty arrays and strings; what is refused (two dimensions, bounds,
 * malformed text); and array literals written for parameters, read back by
 * the same decoder. */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "ingot/pg.h"
#include "tests/unit/check.h"

#include <math.h>
#include <string.h>

static struct ig_pool blocks;
static ig_arena arena;

static bool split(const char *text, uint32_t elem, ig_pg_value **items, size_t *n)
{
	ig_pg_value v = { .oid = 0, .s = { text, strlen(text) } };
	return ig_pg_array_decode(&v, elem, &arena, items, n);
}

static bool str_is(ig_str s, const char *want, size_t len)
{
	return s.len == len && memcmp(s.ptr, want, len) == 0;
}

#define lit_is(s, lit) str_is((s), (lit), sizeof(lit) - 1)

static void test_decode(void)
{
	ig_pg_value *it;
	size_t n;
	CHECK(split("{1,-2,NULL,32767}", IG_PG_INT2, &it, &n) && n == 4 && it[0].i == 1 && it[1].i == -2 && it[2].null &&
		      it[3].i == 32767,
	      "int2[]: numbers and NULL");
	CHECK(split("{}", IG_PG_TEXT, &it, &n) && n == 0, "an empty array");
	CHECK(split("{\"a\\\"b\",\"c\\\\d\",NULL,\"NULL\",\"\",plain,\"x, y\"}", IG_PG_TEXT, &it, &n) && n == 7 &&
		      str_is(it[0].s, "a\"b", 3) && str_is(it[1].s, "c\\d", 3) && it[2].null && !it[3].null &&
		      str_is(it[3].s, "NULL", 4) && str_is(it[4].s, "", 0) && str_is(it[5].s, "plain", 5) &&
		      str_is(it[6].s, "x, y", 4),
	      "text[]: quotes, escapes, NULL and the string NULL, empty, commas inside quotes");
	CHECK(split("{\"\\\\x00ff\",\"\\\\x\"}", IG_PG_BYTEA, &it, &n) && n == 2 && str_is(it[0].s, "\0\xff", 2) &&
		      it[1].s.len == 0,
	      "bytea[]: hex elements");
	CHECK(split("{t,f}", IG_PG_BOOL, &it, &n) && n == 2 && it[0].b && !it[1].b, "bool[]");
	CHECK(split("{1.5,NaN,-Infinity}", IG_PG_FLOAT8, &it, &n) && n == 3 && it[0].f == 1.5 && isnan(it[1].f) &&
		      isinf(it[2].f) && it[2].f < 0,
	      "float8[]: NaN and infinities");
	CHECK(split("{\"2024-02-29 13:05:07.25+00\"}", IG_PG_TIMESTAMPTZ, &it, &n) && n == 1 && it[0].ts == 762527107250000LL,
	      "timestamptz[]: the server's text");
	CHECK(!split("{{1,2},{3,4}}", IG_PG_INT4, &it, &n), "two dimensions are refused");
	CHECK(!split("[0:1]={1,2}", IG_PG_INT4, &it, &n), "explicit bounds are refused");
	CHECK(!split("{1,2", IG_PG_INT4, &it, &n), "an unclosed array is refused");
	CHECK(!split("{1,x}", IG_PG_INT4, &it, &n), "an element not of the type is refused");
	CHECK(!split("{\"a}", IG_PG_TEXT, &it, &n), "an unclosed quote is refused");
	CHECK(!split("{1}x", IG_PG_INT4, &it, &n), "bytes after the array are refused");
	ig_pg_value null_col = ig_pg_null(1007);
	CHECK(!ig_pg_array_decode(&null_col, IG_PG_INT4, &arena, &it, &n), "a NULL column is no array");
}

static void test_text(void)
{
	static const uint8_t u[16] = { 0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8,
				       0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11 };
	ig_pg_value items[] = { ig_pg_text(IG_STR("a\"b\\c")), ig_pg_null(IG_PG_TEXT), ig_pg_text(IG_STR("")),
				ig_pg_text(IG_STR("NULL")) };
	ig_str s;
	CHECK(ig_pg_array_text(items, 4, &arena, &s) && lit_is(s, "{\"a\\\"b\\\\c\",NULL,\"\",\"NULL\"}"),
	      "text elements quoted and escaped, NULL bare, the string NULL quoted");
	ig_pg_value *back;
	size_t n;
	ig_pg_value col = { .s = s };
	CHECK(ig_pg_array_decode(&col, IG_PG_TEXT, &arena, &back, &n) && n == 4 && str_is(back[0].s, "a\"b\\c", 5) &&
		      back[1].null && str_is(back[3].s, "NULL", 4),
	      "text elements read back");
	ig_pg_value nums[] = { ig_pg_int8(INT64_MIN), ig_pg_float8(NAN), ig_pg_float8(-INFINITY), ig_pg_bool(true),
			       ig_pg_float8(0.1) };
	CHECK(ig_pg_array_text(nums, 5, &arena, &s) &&
		      lit_is(s, "{-9223372036854775808,NaN,-Infinity,t,0.10000000000000001}"),
	      "numbers and bools bare, floats exact");
	ig_pg_value misc[] = { ig_pg_bytea((ig_str){ "\0\xff", 2 }), ig_pg_uuid(u), ig_pg_timestamptz(0), ig_pg_date(1520) };
	CHECK(ig_pg_array_text(misc, 4, &arena, &s) &&
		      lit_is(s, "{\"\\\\x00ff\",\"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\",\"2000-01-01T00:00:00Z\",\"2004-02-29\"}"),
	      "bytea as escaped hex, uuid and times as their RFC 3339 text");
	ig_pg_value nul = ig_pg_text((ig_str){ "a\0b", 3 });
	CHECK(!ig_pg_array_text(&nul, 1, &arena, &s), "a string with a NUL is refused");
	CHECK(ig_pg_array_text(NULL, 0, &arena, &s) && lit_is(s, "{}"), "no elements: {}");
	const int16_t i16[] = { INT16_MIN, 0, INT16_MAX };
	const int32_t i32[] = { 7, -42, INT32_MIN, INT32_MAX, 10000 };
	const int64_t i64[] = { INT64_MIN, INT64_MAX, -1 };
	CHECK(ig_pg_array_text_int16(i16, 3, &arena, &s) && lit_is(s, "{-32768,0,32767}"), "int16 elements");
	CHECK(ig_pg_array_text_int32(i32, 5, &arena, &s) && lit_is(s, "{7,-42,-2147483648,2147483647,10000}"),
	      "int32 elements");
	CHECK(ig_pg_array_text_int64(i64, 3, &arena, &s) &&
		      lit_is(s, "{-9223372036854775808,9223372036854775807,-1}"),
	      "int64 elements, the longest");
	CHECK(ig_pg_array_text_int32(NULL, 0, &arena, &s) && lit_is(s, "{}"), "no integers: {}");
	ig_pg_value *ints;
	size_t nints;
	ig_pg_value icol = { 0 };
	CHECK(ig_pg_array_text_int32(i32, 5, &arena, &icol.s) && ig_pg_array_decode(&icol, IG_PG_INT4, &arena, &ints, &nints) &&
		      nints == 5 && ints[1].i == -42 && ints[2].i == INT32_MIN,
	      "int32 elements read back");
	static ig_arena small;
	ig_arena_init(&small, &blocks, 64);
	CHECK(!ig_pg_array_text_int64(i64, 3, &small, &s), "an arena too small: false");
}

int main(void)
{
	ig_pool_init(&blocks, 16384, 16, 1024);
	ig_arena_init(&arena, &blocks, 1 << 20);
	test_decode();
	test_text();
	ig_arena_reset(&arena);
	return check_done();
}
