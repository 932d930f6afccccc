/* Clock and Date cache. Dates are formatted by hand: strftime would depend
 * on the locale, which a scratch image does not have, and gmtime's code is
 * more to page in on a cold start than this. */
#include "clock.h"

#include <string.h>

bool ig_clock_counts_from_boot;

uint64_t ig_monotonic_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void two_digits(char *d, int v)
{
	d[0] = (char)('0' + v / 10);
	d[1] = (char)('0' + v % 10);
}

static void civil_from_days(int64_t z, int *y, int *m, int *d);

static void format_date_line(char *out, time_t t)
{
	static const char days[] = "SunMonTueWedThuFriSat";
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	int64_t day = (int64_t)t / 86400, secs = (int64_t)t % 86400;
	if (secs < 0) {
		secs += 86400;
		day--;
	}
	int y, m, d;
	civil_from_days(day, &y, &m, &d);
	int wday = (int)(((day % 7) + 11) % 7); /* 1970-01-01 was a Thursday */
	memcpy(out, "Date: Sun, 00 Jan 0000 00:00:00 GMT\r\n", IG_DATE_LINE_LEN);
	memcpy(out + 6, days + 3 * wday, 3);
	two_digits(out + 11, d);
	memcpy(out + 14, months + 3 * (m - 1), 3);
	two_digits(out + 18, y / 100);
	two_digits(out + 20, y % 100);
	two_digits(out + 23, (int)(secs / 3600));
	two_digits(out + 26, (int)(secs / 60 % 60));
	two_digits(out + 29, (int)(secs % 60));
	out[IG_DATE_LINE_LEN] = 0;
}

/* Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm), so
 * that formatting a time needs neither gmtime's nor strftime's code. */
static void civil_from_days(int64_t z, int *y, int *m, int *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

size_t ig_format_utc(char *out, time_t t)
{
	int64_t days = (int64_t)t / 86400, secs = (int64_t)t % 86400;
	if (secs < 0) {
		secs += 86400;
		days--;
	}
	int y, m, d;
	civil_from_days(days, &y, &m, &d);
	memcpy(out, "0000-00-00T00:00:00", 19);
	two_digits(out, y / 100);
	two_digits(out + 2, y % 100);
	two_digits(out + 5, m);
	two_digits(out + 8, d);
	two_digits(out + 11, (int)(secs / 3600));
	two_digits(out + 14, (int)(secs / 60 % 60));
	two_digits(out + 17, (int)(secs % 60));
	return 19;
}

void ig_clock_update(struct ig_clock *c)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	c->now_ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	c->now_us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	/* CLOCK_REALTIME_COARSE is enough for a one-second header. */
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	if (ts.tv_sec != c->date_second) {
		c->date_second = ts.tv_sec;
		format_date_line(c->date_line, ts.tv_sec);
	}
}
