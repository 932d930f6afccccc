/* kernel/runtime/cron_expr.c: next fire times against dates written out
 * (converted with libc's timegm, an independent calendar), month ends,
 * February 29 across leap and century years, Vixie's day-of-month/day-
 * of-week rule, steps, ranges, names and macros, `every` periods; a
 * brute-force minute scan (gmtime) agreeing with ig_cron_next; and bad
 * expressions refused with their kind and position. */
#include "kernel/runtime/cron_expr.h"
#include "tests/unit/check.h"

#include <stdio.h>
#include <time.h>

/* "YYYY-MM-DD HH:MM[:SS]" UTC as Unix seconds. */
static int64_t at(const char *s)
{
	struct tm tm = { 0 };
	int sec = 0;
	if (sscanf(s, "%d-%d-%d %d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &sec) < 5)
		return -2;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_sec = sec;
	return (int64_t)timegm(&tm);
}

static void next_is(const char *expr, const char *after, const char *want)
{
	struct ig_cron_expr e;
	struct ig_cron_error err = { 0 };
	char name[160];
	snprintf(name, sizeof name, "\"%s\" after %s is %s", expr, after, want);
	if (!ig_cron_parse(expr, &e, &err)) {
		check_that(false, name, "refused: %s at %zu", ig_cron_strerror(err.kind), err.pos);
		return;
	}
	int64_t got = ig_cron_next(&e, at(after)), w = at(want);
	time_t g = (time_t)got;
	struct tm tm;
	char text[32] = "none";
	if (got >= 0 && gmtime_r(&g, &tm))
		strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S %a", &tm);
	check_that(got == w, name, "got %s", text);
}

static void every_is(const char *period, int64_t after, int64_t want)
{
	struct ig_cron_expr e;
	struct ig_cron_error err;
	char name[96];
	snprintf(name, sizeof name, "every %s after %lld is %lld", period, (long long)after, (long long)want);
	if (!ig_cron_parse_every(period, &e, &err)) {
		check_that(false, name, "refused: %s", ig_cron_strerror(err.kind));
		return;
	}
	CHECK_INT(ig_cron_next(&e, after), want, name);
}

static void refused(bool every, const char *text, enum ig_cron_err kind, size_t pos)
{
	struct ig_cron_expr e;
	struct ig_cron_error err = { IG_CRON_OK, 999 };
	bool ok = every ? ig_cron_parse_every(text, &e, &err) : ig_cron_parse(text, &e, &err);
	char name[128];
	snprintf(name, sizeof name, "%s\"%s\" is refused: %s at %zu", every ? "every " : "", text, ig_cron_strerror(kind),
		 pos);
	check_that(!ok && err.kind == kind && err.pos == pos, name, "ok %d, kind %d at %zu", ok, (int)err.kind, err.pos);
}

/* Whether a minute matches, from gmtime's fields: the rule restated. */
static bool minute_matches(const struct ig_cron_expr *e, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	bool dom = e->dom >> tm.tm_mday & 1, dow = e->dow >> tm.tm_wday & 1;
	bool day = (e->flags & (IG_CRON_DOM_STAR | IG_CRON_DOW_STAR)) ? dom && dow : dom || dow;
	return (e->minutes >> tm.tm_min & 1) && (e->hours >> tm.tm_hour & 1) && (e->months >> (tm.tm_mon + 1) & 1) && day;
}

static void scan_agrees(const char *expr)
{
	struct ig_cron_expr e;
	struct ig_cron_error err;
	if (!CHECK(ig_cron_parse(expr, &e, &err), expr))
		return;
	static const char *const starts[] = { "2023-12-31 23:59:30", "2024-02-28 13:07", "2025-06-30 23:59",
					      "2100-02-27 00:00" };
	bool ok = true;
	int64_t bad = 0, got = 0, want = 0;
	for (size_t i = 0; i < sizeof starts / sizeof starts[0] && ok; i++) {
		int64_t from = at(starts[i]);
		/* Ten fire times in a row from each start. */
		for (int n = 0; n < 10 && ok; n++) {
			got = ig_cron_next(&e, from);
			want = (from / 60 + 1) * 60;
			while (!minute_matches(&e, want) && want - from < 3LL * 366 * 86400)
				want += 60;
			if (got != want) {
				ok = false;
				bad = from;
			}
			from = got;
		}
	}
	char name[128];
	snprintf(name, sizeof name, "\"%s\" agrees with a minute-by-minute scan", expr);
	check_that(ok, name, "after %lld: got %lld, scan %lld", (long long)bad, (long long)got, (long long)want);
}

int main(void)
{
	/* minutes, hours, steps, ranges, lists */
	next_is("*/5 * * * *", "2024-01-01 00:00", "2024-01-01 00:05");
	next_is("*/5 * * * *", "2024-01-01 00:04:59", "2024-01-01 00:05");
	next_is("* * * * *", "2024-01-01 00:00:30", "2024-01-01 00:01");
	next_is("0 * * * *", "2024-01-01 00:59:59", "2024-01-01 01:00");
	next_is("1-10/2 * * * *", "2024-01-01 00:09", "2024-01-01 01:01");
	next_is("5/15 * * * *", "2024-01-01 00:50", "2024-01-01 01:05");
	next_is("0,30 9-17 * * *", "2024-01-01 17:30", "2024-01-02 09:00");
	next_is("15 */6 * * *", "2024-01-01 06:15", "2024-01-01 12:15");
	/* month ends and the year's end */
	next_is("0 0 31 * *", "2024-04-01 00:00", "2024-05-31 00:00");
	next_is("0 0 30,31 * *", "2024-02-01 00:00", "2024-03-30 00:00");
	next_is("59 23 31 12 *", "2024-12-31 23:59", "2025-12-31 23:59");
	next_is("30 9 * JAN-MAR/2 *", "2024-01-31 10:00", "2024-03-01 09:30");
	/* February 29: leap years, and 2100, which is not one */
	next_is("0 0 29 2 *", "2024-03-01 00:00", "2028-02-29 00:00");
	next_is("0 0 29 2 *", "2023-06-01 00:00", "2024-02-29 00:00");
	next_is("0 0 29 2 *", "2096-03-01 00:00", "2104-02-29 00:00");
	next_is("0 0 28-31 feb *", "2100-02-28 00:00", "2101-02-28 00:00");
	/* Vixie's rule: both restricted, either day fires */
	next_is("0 0 13 * FRI", "2024-01-01 00:00", "2024-01-05 00:00");
	next_is("0 0 13 * FRI", "2024-01-12 00:00", "2024-01-13 00:00");
	next_is("0 0 1 * MON", "2024-01-01 00:00", "2024-01-08 00:00");
	next_is("0 0 1 * MON", "2024-01-29 00:00", "2024-02-01 00:00");
	next_is("0 0 31 4 MON", "2024-04-01 00:00", "2024-04-08 00:00");
	/* one starts with *: both must match (*\/2 counts as *, as in Vixie) */
	next_is("0 0 */2 * MON", "2024-01-01 00:00", "2024-01-15 00:00");
	next_is("0 0 * * MON", "2024-01-01 00:00", "2024-01-08 00:00");
	next_is("0 0 13 * *", "2024-01-01 00:00", "2024-01-13 00:00");
	next_is("0 2 8 9 */7", "2024-01-01 00:00", "2024-09-08 02:00");
	next_is("0 2 8 9 */7", "2024-09-08 02:00", "2030-09-08 02:00");
	/* weekdays: names in any case, ranges of names, 7 is Sunday */
	next_is("0 0 * * 7", "2024-01-01 00:00", "2024-01-07 00:00");
	next_is("0 0 * * 0", "2024-01-01 00:00", "2024-01-07 00:00");
	next_is("0 8 * * mon-fri", "2024-01-05 09:00", "2024-01-08 08:00");
	next_is("0 8 * * Sat,sun", "2024-01-01 09:00", "2024-01-06 08:00");
	next_is("0 8 * * 5-7", "2024-01-06 09:00", "2024-01-07 08:00");
	/* macros */
	next_is("@yearly", "2024-06-01 00:00", "2025-01-01 00:00");
	next_is("@annually", "2024-01-01 00:00", "2025-01-01 00:00");
	next_is("@monthly", "2024-01-31 12:00", "2024-02-01 00:00");
	next_is("@weekly", "2024-01-01 00:00", "2024-01-07 00:00");
	next_is("@daily", "2024-02-28 23:59:59", "2024-02-29 00:00");
	next_is("@midnight", "2024-12-31 00:00", "2025-01-01 00:00");
	next_is("@hourly", "2024-01-01 00:00", "2024-01-01 01:00");
	next_is("  @hourly  ", "2024-01-01 00:00", "2024-01-01 01:00");
	next_is("\t0  0 *\t* *  ", "2024-01-01 00:00", "2024-01-02 00:00");

	/* every: multiples of the period since the epoch */
	every_is("1s", 100, 101);
	every_is("90s", 0, 90);
	every_is("90s", 89, 90);
	every_is("90s", 90, 180);
	every_is("5m", at("2024-01-01 00:04:59"), at("2024-01-01 00:05"));
	every_is("1h", at("2024-01-01 00:00"), at("2024-01-01 01:00"));
	every_is("1d", at("2024-02-28 12:00"), at("2024-02-29 00:00"));
	every_is("7d", 0, 7 * 86400);

	/* outside the clock's range: none */
	{
		struct ig_cron_expr e;
		struct ig_cron_error err;
		bool ok = ig_cron_parse("* * * * *", &e, &err);
		CHECK(ok && ig_cron_next(&e, -1) == -1, "a start before the epoch has no next fire time");
		CHECK(ok && ig_cron_next(&e, IG_CRON_MAX_S + 1) == -1, "a start past year 9999 has none");
		CHECK(ok && ig_cron_next(&e, IG_CRON_MAX_S) == IG_CRON_MAX_S + 1, "the last start's is 10000-01-01");
		ok = ig_cron_parse_every("7d", &e, &err);
		CHECK(ok && ig_cron_next(&e, INT64_MAX) == -1, "every 7d from INT64_MAX: none, no overflow");
	}

	const char *scans[] = { "*/7 */5 * * *", "0 0 29 2,3 *", "0 12 13 * FRI", "0 0 */2 * MON", "0 0 31 * *",
				"45 23 * 2,12 sun", "0 0 1-7 * 1", "@weekly", "3-58/11 1,13,22 28-31 1-12/3 *" };
	for (size_t i = 0; i < sizeof scans / sizeof scans[0]; i++)
		scan_agrees(scans[i]);

	/* bad expressions: kind and position */
	refused(false, "", IG_CRON_EMPTY, 0);
	refused(false, "   ", IG_CRON_EMPTY, 3);
	refused(false, "* * * *", IG_CRON_FIELDS, 7);
	refused(false, "* * * * * *", IG_CRON_FIELDS, 10);
	refused(false, "60 * * * *", IG_CRON_RANGE, 0);
	refused(false, "* 24 * * *", IG_CRON_RANGE, 2);
	refused(false, "* * 0 * *", IG_CRON_RANGE, 4);
	refused(false, "* * 32 * *", IG_CRON_RANGE, 4);
	refused(false, "* * * 13 *", IG_CRON_RANGE, 6);
	refused(false, "* * * * 8", IG_CRON_RANGE, 8);
	refused(false, "99999999999 * * * *", IG_CRON_RANGE, 0);
	refused(false, "5-1 * * * *", IG_CRON_REVERSED, 2);
	refused(false, "* * * DEC-JAN *", IG_CRON_REVERSED, 10);
	refused(false, "*/0 * * * *", IG_CRON_STEP, 2);
	refused(false, "*/61 * * * *", IG_CRON_STEP, 2);
	refused(false, "* * * FOO *", IG_CRON_NAME, 6);
	refused(false, "* * * * MONDAY", IG_CRON_NAME, 8);
	refused(false, "JAN * * * *", IG_CRON_NAME, 0);
	refused(false, "* * MON * *", IG_CRON_NAME, 4);
	refused(false, "@often", IG_CRON_NAME, 0);
	refused(false, "@HOURLY", IG_CRON_NAME, 0);
	refused(false, "@hourly *", IG_CRON_FIELDS, 8);
	refused(false, "0 0 30 2 *", IG_CRON_NEVER, 0);
	refused(false, "0 0 31 4,6,9,11 *", IG_CRON_NEVER, 0);
	refused(false, "0 0 30 2 */2", IG_CRON_NEVER, 0);
	next_is("0 0 30 2 MON", "2024-01-01 00:00", "2024-02-05 00:00");
	refused(false, "1,,2 * * * *", IG_CRON_SYNTAX, 2);
	refused(false, "*x * * * *", IG_CRON_SYNTAX, 1);
	refused(false, "1- * * * *", IG_CRON_SYNTAX, 2);
	refused(false, "*/ * * * *", IG_CRON_SYNTAX, 2);
	refused(false, "? * * * *", IG_CRON_SYNTAX, 0);
	refused(false, "L * * * *", IG_CRON_NAME, 0);
	refused(true, "", IG_CRON_EMPTY, 0);
	refused(true, "0s", IG_CRON_PERIOD, 0);
	refused(true, "8d", IG_CRON_PERIOD, 0);
	refused(true, "604801s", IG_CRON_PERIOD, 0);
	refused(true, "99999999999999999999s", IG_CRON_PERIOD, 0);
	refused(true, "5", IG_CRON_UNIT, 1);
	refused(true, "5x", IG_CRON_UNIT, 1);
	refused(true, "1 s", IG_CRON_UNIT, 1);
	refused(true, "5ms", IG_CRON_UNIT, 1);
	refused(true, "s", IG_CRON_SYNTAX, 0);
	refused(true, "-1s", IG_CRON_SYNTAX, 0);
	return check_done();
}
