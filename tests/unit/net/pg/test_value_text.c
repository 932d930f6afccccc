/* Unit tests of net/pg/value_text.c: the text generated query code hands
 * out for uuid, date and timestamp(tz) values (RFC 3339), including
 * fractions, times before 2000 (negative counts), leap days, infinities
 * and the oids it refuses. Expected texts were computed with Python's
 * datetime. */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "ingot/pg.h"
#include "tests/unit/check.h"

#include <string.h>

static struct ig_pool blocks;
static ig_arena arena;

static bool text_is(ig_pg_value v, const char *want)
{
	ig_str s;
	return ig_pg_value_text(&v, &arena, &s) && s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

int main(void)
{
	ig_pool_init(&blocks, 16384, 16, 1024);
	ig_arena_init(&arena, &blocks, 1 << 20);
	static const uint8_t u[16] = { 0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8,
				       0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11 };
	CHECK(text_is(ig_pg_uuid(u), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), "uuid: canonical, lowercase");
	CHECK(text_is(ig_pg_date(0), "2000-01-01"), "date: the epoch");
	CHECK(text_is(ig_pg_date(1520), "2004-02-29"), "date: a leap day");
	CHECK(text_is(ig_pg_date(-10957), "1970-01-01"), "date: before 2000");
	CHECK(text_is(ig_pg_date(IG_PG_DATE_INFINITY), "infinity"), "date: infinity");
	CHECK(text_is(ig_pg_date(IG_PG_DATE_NEG_INFINITY), "-infinity"), "date: -infinity");
	CHECK(text_is(ig_pg_timestamptz(0), "2000-01-01T00:00:00Z"), "timestamptz: the epoch, Z");
	CHECK(text_is(ig_pg_timestamp(0), "2000-01-01T00:00:00"), "timestamp: no zone");
	/* 2024-02-29 13:05:07.25 UTC */
	CHECK(text_is(ig_pg_timestamptz(762527107250000LL), "2024-02-29T13:05:07.25Z"), "timestamptz: fraction trimmed");
	CHECK(text_is(ig_pg_timestamptz(762527107000001LL), "2024-02-29T13:05:07.000001Z"), "timestamptz: a microsecond");
	/* 1969-12-31 23:59:59.5 UTC: a negative count rounds down to the day before */
	CHECK(text_is(ig_pg_timestamptz(-946684800500000LL), "1969-12-31T23:59:59.5Z"), "timestamptz: before 1970");
	CHECK(text_is(ig_pg_timestamptz(IG_PG_TS_INFINITY), "infinity"), "timestamptz: infinity");
	CHECK(text_is(ig_pg_timestamp(IG_PG_TS_NEG_INFINITY), "-infinity"), "timestamp: -infinity");
	ig_str s;
	ig_pg_value i = ig_pg_int4(5);
	CHECK(!ig_pg_value_text(&i, &arena, &s), "int4: not its business");
	ig_arena_reset(&arena);
	return check_done();
}
