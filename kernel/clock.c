/* Clock and Date cache. The Date line is formatted by hand: strftime would
 * depend on the locale, which a scratch image does not have. */
#include "clock.h"

#include <string.h>

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

static void format_date_line(char *out, time_t t)
{
	static const char days[] = "SunMonTueWedThuFriSat";
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	struct tm tm;
	gmtime_r(&t, &tm);
	memcpy(out, "Date: Sun, 00 Jan 0000 00:00:00 GMT\r\n", IG_DATE_LINE_LEN);
	memcpy(out + 6, days + 3 * tm.tm_wday, 3);
	two_digits(out + 11, tm.tm_mday);
	memcpy(out + 14, months + 3 * tm.tm_mon, 3);
	int y = tm.tm_year + 1900;
	two_digits(out + 18, y / 100);
	two_digits(out + 20, y % 100);
	two_digits(out + 23, tm.tm_hour);
	two_digits(out + 26, tm.tm_min);
	two_digits(out + 29, tm.tm_sec);
	out[IG_DATE_LINE_LEN] = 0;
}

void ig_clock_update(struct ig_clock *c)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	c->now_ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	/* CLOCK_REALTIME_COARSE is enough for a one-second header. */
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	if (ts.tv_sec != c->date_second) {
		c->date_second = ts.tv_sec;
		format_date_line(c->date_line, ts.tv_sec);
	}
}
