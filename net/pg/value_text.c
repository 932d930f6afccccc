/* The text generated query code hands out for values net/pg decodes into
 * numbers (pg.h, "values"): uuid in its canonical form, date and
 * timestamp(tz) as RFC 3339 (the document's `format: date`/`date-time`).
 * Pure formatting into the caller's arena. */
#include "ingot/pg.h"

#include <stdio.h>
#include <string.h>

#define US_PER_DAY 86400000000LL

static bool copy(ig_arena *arena, const char *s, size_t n, ig_str *out)
{
	char *p = ig_arena_alloc(arena, n ? n : 1);
	if (!p)
		return false;
	memcpy(p, s, n);
	*out = (ig_str){ p, n };
	return true;
}

static int put_date(char *b, size_t cap, int32_t days)
{
	int32_t y;
	unsigned m, d;
	ig_pg_date_to_ymd(days, &y, &m, &d);
	return snprintf(b, cap, y < 0 ? "%05d-%02u-%02u" : "%04d-%02u-%02u", y, m, d);
}

bool ig_pg_value_text(const ig_pg_value *v, ig_arena *arena, ig_str *out)
{
	char b[64];
	int n = 0;
	switch (v->oid) {
	case IG_PG_UUID:
		for (int i = 0; i < 16; i++)
			n += snprintf(b + n, sizeof b - (size_t)n, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
				      v->uuid[i]);
		break;
	case IG_PG_DATE:
		if (v->date == IG_PG_DATE_INFINITY || v->date == IG_PG_DATE_NEG_INFINITY)
			return copy(arena, v->date > 0 ? "infinity" : "-infinity", v->date > 0 ? 8 : 9, out);
		n = put_date(b, sizeof b, v->date);
		break;
	case IG_PG_TIMESTAMP:
	case IG_PG_TIMESTAMPTZ: {
		if (v->ts == IG_PG_TS_INFINITY || v->ts == IG_PG_TS_NEG_INFINITY)
			return copy(arena, v->ts > 0 ? "infinity" : "-infinity", v->ts > 0 ? 8 : 9, out);
		int64_t days = v->ts / US_PER_DAY, us = v->ts % US_PER_DAY;
		if (us < 0) {
			us += US_PER_DAY;
			days--;
		}
		n = put_date(b, sizeof b, (int32_t)days);
		int64_t s = us / 1000000;
		n += snprintf(b + n, sizeof b - (size_t)n, "T%02d:%02d:%02d", (int)(s / 3600), (int)(s / 60 % 60),
			      (int)(s % 60));
		int frac = (int)(us % 1000000);
		if (frac) {
			int digits = 6;
			while (frac % 10 == 0) {
				frac /= 10;
				digits--;
			}
			n += snprintf(b + n, sizeof b - (size_t)n, ".%0*d", digits, frac);
		}
		if (v->oid == IG_PG_TIMESTAMPTZ)
			b[n++] = 'Z';
		break;
	}
	default:
		return false;
	}
	return n > 0 && copy(arena, b, (size_t)n, out);
}
