/* The cached clock and the Date line (kernel/runtime/clock.h). */
#include "kernel/runtime/clock.h"
#include "tests/unit/check.h"

#include <time.h>

static void test_clock(void)
{
	char out[20] = { 0 };
	ig_format_utc(out, 0);
	CHECK(strcmp(out, "1970-01-01T00:00:00") == 0, "clock: the epoch");
	ig_format_utc(out, 951782400); /* a leap day */
	CHECK(strcmp(out, "2000-02-29T00:00:00") == 0, "clock: 2000-02-29");
	ig_format_utc(out, 1796011199);
	CHECK(strcmp(out, "2026-11-30T03:59:59") == 0, "clock: 2026-11-30T03:59:59");
	/* The Date line agrees with gmtime for a spread of times. */
	bool agree = true;
	for (time_t t = -86400 * 400; t < (time_t)4102444800; t += 86400 * 37 + 3671) {
		struct tm tm;
		gmtime_r(&t, &tm);
		char want[20];
		strftime(want, sizeof want, "%Y-%m-%dT%H:%M:%S", &tm);
		ig_format_utc(out, t);
		if (strcmp(out, want) != 0) {
			printf("# %lld: %s, want %s\n", (long long)t, out, want);
			agree = false;
			break;
		}
	}
	CHECK(agree, "clock: UTC formatting agrees with gmtime from 1968 to 2100");
	struct ig_clock c = { 0 };
	ig_clock_update(&c);
	CHECK(strlen(c.date_line) == IG_DATE_LINE_LEN && memcmp(c.date_line, "Date: ", 6) == 0 &&
		      memcmp(c.date_line + IG_DATE_LINE_LEN - 6, " GMT\r\n", 6) == 0,
	      "clock: the cached Date line has the IMF-fixdate shape");
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	char want[40];
	strftime(want, sizeof want, "Date: %a, %d %b %Y", &tm);
	CHECK(memcmp(c.date_line, want, strlen(want)) == 0, "clock: the Date line's day matches gmtime's");
}

int main(void)
{
	test_clock();
	return check_done();
}
