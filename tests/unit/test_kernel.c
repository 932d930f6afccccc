/* Unit tests of kernel/ pieces that have no I/O: the timer wheel, the JSON
 * writer primitives, the arena and its growable buffer, the option parser
 * and the object pool. */
#include "kernel/arena.h"
#include "kernel/clock.h"
#include "kernel/config.h"
#include "kernel/ingot.h"
#include "kernel/json.h"
#include "kernel/pool.h"
#include "kernel/timer.h"
#include "tests/unit/check.h"

#include <math.h>
#include <time.h>
#include <stdlib.h>

static int fired[4];
static struct ig_timer timers[4];
static void on_fire_indexed(struct ig_timer *t) { fired[t - timers]++; }

static void test_timers(void)
{
	struct ig_timers w;
	ig_timers_init(&w, 1000);
	for (int i = 0; i < 4; i++)
		timers[i] = (struct ig_timer){ .fn = on_fire_indexed };
	ig_timer_set(&w, &timers[0], 1010);
	ig_timer_set(&w, &timers[1], 1100);
	ig_timer_set(&w, &timers[2], 1000 + 10000); /* beyond one rotation */
	ig_timer_set(&w, &timers[3], 1050);
	ig_timer_cancel(&w, &timers[3]);
	CHECK(ig_timers_wait_ms(&w, 1000) > 0 && ig_timers_wait_ms(&w, 1000) <= 12,
	      "timer wheel: wait time reaches the earliest timer");
	ig_timers_run(&w, 1009);
	CHECK_INT(fired[0], 0, "timer: not fired before its deadline");
	ig_timers_run(&w, 1012);
	CHECK_INT(fired[0], 1, "timer: fired once at its deadline");
	ig_timers_run(&w, 1060);
	CHECK_INT(fired[3], 0, "timer: a cancelled timer never fires");
	ig_timers_run(&w, 5000);
	CHECK_INT(fired[1], 1, "timer: fired after a long gap");
	CHECK_INT(fired[2], 0, "timer: a timer one rotation away waits its turn");
	ig_timers_run(&w, 11000);
	CHECK_INT(fired[2], 1, "timer: fires after more than one rotation");
	CHECK_INT(ig_timers_wait_ms(&w, 11000), -1, "timer wheel: no wait when empty");
}

static struct ig_pool blocks;

static const char *json_of(void (*fn)(ig_wbuf *, double), double v, ig_arena *a)
{
	static char out[64];
	ig_wbuf w = { .arena = a };
	fn(&w, v);
	size_t n = w.failed ? 0 : w.len;
	if (n)
		memcpy(out, w.ptr, n);
	out[n] = 0;
	ig_arena_reset(a);
	return out;
}

static void test_json(void)
{
	ig_arena a;
	ig_arena_init(&a, &blocks, 1 << 20);
	ig_wbuf w = { .arena = &a };
	ig_json_string(&w, "a\"b\\c\n\x01\xc3\xa9", 9);
	CHECK(w.len == 19 && memcmp(w.ptr, "\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\"", 19) == 0,
	      "json: strings escape quote, backslash, controls; UTF-8 passes");
	w.len = 0;
	ig_json_int(&w, INT64_MIN);
	CHECK(w.len == 20 && memcmp(w.ptr, "-9223372036854775808", 20) == 0, "json: INT64_MIN");
	w.len = 0;
	ig_json_uint(&w, UINT64_MAX);
	CHECK(w.len == 20 && memcmp(w.ptr, "18446744073709551615", 20) == 0, "json: UINT64_MAX");
	CHECK(strcmp(json_of(ig_json_double, 12.5, &a), "12.5") == 0, "json: 12.5");
	CHECK(strcmp(json_of(ig_json_double, 0.1, &a), "0.1") == 0, "json: 0.1 is shortest");
	CHECK(strcmp(json_of(ig_json_double, 1e300, &a), "1e+300") == 0, "json: 1e300");
	CHECK(strcmp(json_of(ig_json_double, 3.0, &a), "3") == 0, "json: integral double");
	CHECK(strcmp(json_of(ig_json_double, NAN, &a), "null") == 0, "json: NaN is null");
	CHECK(strcmp(json_of(ig_json_double, -0.05, &a), "-0.05") == 0, "json: -0.05 keeps its leading zero");
	CHECK(strcmp(json_of(ig_json_double, 1234.5678, &a), "1234.5678") == 0, "json: 1234.5678");
	CHECK(strcmp(json_of(ig_json_double, 0.3, &a), "0.3") == 0, "json: 0.3 (not 0.29999999999999999)");
	CHECK(strcmp(json_of(ig_json_double, 19.99, &a), "19.99") == 0, "json: 19.99 without a trailing zero");
	CHECK(strcmp(json_of(ig_json_double, 1.5e-7, &a), "1.5e-07") == 0, "json: tiny values use an exponent");
	/* Every shortest form must parse back to the same double. */
	bool all_round_trip = true;
	uint64_t seed = 42;
	for (int i = 0; i < 20000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		double v = (double)(seed >> 11) / (double)(1ull << (seed % 40 + 1));
		if (i % 2)
			v = (double)(int64_t)(v * 1000) / 1000;
		const char *s = json_of(ig_json_double, v, &a);
		size_t sl = strlen(s);
		bool trailing_zero = strchr(s, '.') && !strchr(s, 'e') && s[sl - 1] == '0';
		if (strtod(s, NULL) != v || trailing_zero) {
			all_round_trip = false;
			printf("# %.17g printed as %s\n", v, s);
			break;
		}
	}
	CHECK(all_round_trip, "json: 20000 random doubles round-trip, without trailing zeros");
	double third = 1.0 / 3.0;
	CHECK(strtod(json_of(ig_json_double, third, &a), NULL) == third, "json: doubles round-trip");
	ig_arena_reset(&a);
}

static void test_arena(void)
{
	ig_arena a;
	ig_arena_init(&a, &blocks, 100000);
	char *p = ig_arena_alloc(&a, 10);
	char *q = ig_arena_alloc(&a, 10);
	CHECK(p && q && q - p == 16 && ((uintptr_t)p & 7) == 0, "arena: 8-byte aligned bump allocation");
	void *big = ig_arena_alloc(&a, 50000);
	CHECK(big != NULL, "arena: allocations beyond a block get their own mapping");
	memset(big, 1, 50000);
	CHECK(ig_arena_alloc(&a, 60000) == NULL, "arena: the limit is enforced");
	ig_arena_reset(&a);
	ig_arena_init(&a, &blocks, 1 << 20);
	ig_wbuf w = { .arena = &a };
	for (int i = 0; i < 10000; i++)
		ig_wbuf_lit(&w, "0123456789");
	CHECK(!w.failed && w.len == 100000 && w.ptr[99999] == '9', "wbuf: grows beyond a block");
	ig_arena_reset(&a);
	ig_arena_init(&a, &blocks, 1000);
	ig_wbuf small = { .arena = &a };
	for (int i = 0; i < 200; i++)
		ig_wbuf_lit(&small, "0123456789");
	CHECK(small.failed, "wbuf: growth past the arena limit marks it failed");
	ig_arena_reset(&a);
	CHECK_INT(blocks.in_use, 0, "arena: reset gives every block back");
}

static void test_pool(void)
{
	struct ig_pool p;
	ig_pool_init(&p, 24, 2, 3);
	void *a = ig_pool_take(&p), *b = ig_pool_take(&p), *c = ig_pool_take(&p);
	CHECK(a && b && c && ig_pool_take(&p) == NULL, "pool: take stops at the cap");
	ig_pool_give(&p, b);
	CHECK(ig_pool_take(&p) == b, "pool: the last object given is the next taken");
	/* A chunk's objects fill its pages: 2 of 144 bytes map a page, which
	   holds 28, carved one after the other before any second mapping. */
	struct ig_pool q;
	ig_pool_init(&q, 144, 2, 1000);
	char *first = ig_pool_take(&q), *last = first;
	for (int i = 1; i < 28; i++)
		last = ig_pool_take(&q);
	CHECK(q.total == 28 && last == first + 27 * 144, "pool: a chunk's objects fill its whole pages");
	ig_pool_init(&q, 144, 2, 5);
	for (int i = 0; i < 5; i++)
		ig_pool_take(&q);
	CHECK(q.total == 5 && ig_pool_take(&q) == NULL, "pool: filling the pages keeps to the cap");
}

/* The table as one part named "t". */
static enum ig_config_result parse(const struct ig_option *o, int argc, char **argv)
{
	const struct ig_settings part = { .part = "t", .opts = o, .count = 4 };
	const struct ig_settings *const parts[] = { &part };
	return ig_config_parse(parts, 1, &(struct ig_config_args){ .argc = argc, .argv = argv, .name = "t", .version = "0" });
}

static void test_config(void)
{
	int64_t port = 8080, threads = 0;
	const char *host = "0.0.0.0";
	bool flag = false;
	struct ig_option o[] = {
		{ "T_PORT", IG_OPT_INT, &port, 0, 65535, "port" },
		{ "T_HOST", IG_OPT_STR, &host, 0, 0, "host" },
		{ "T_THREADS", IG_OPT_INT, &threads, 0, 256, "threads" },
		{ "T_FLAG", IG_OPT_BOOL, &flag, 0, 0, "flag" },
	};
	setenv("T_PORT", "9000", 1);
	setenv("T_FLAG", "yes", 1);
	char *argv1[] = { "x", "--t-threads", "3", "--t-host=::1", NULL };
	CHECK(parse(o, 4, argv1) == IG_CONFIG_OK && port == 9000 &&
		      threads == 3 && strcmp(host, "::1") == 0 && flag,
	      "config: environment then flags, both forms");
	char *argv2[] = { "x", "--t-port", "9001", NULL };
	CHECK(parse(o, 3, argv2) == IG_CONFIG_OK && port == 9001,
	      "config: a flag wins over the environment");
	setenv("T_PORT", "80x", 1);
	char *argv3[] = { "x", NULL };
	CHECK(parse(o, 1, argv3) == IG_CONFIG_ERROR, "config: trailing garbage is an error");
	setenv("T_PORT", "70000", 1);
	CHECK(parse(o, 1, argv3) == IG_CONFIG_ERROR, "config: out of range is an error");
	setenv("T_PORT", "", 1);
	CHECK(parse(o, 1, argv3) == IG_CONFIG_ERROR, "config: empty is an error");
	unsetenv("T_PORT");
	char *argv4[] = { "x", "--nope", "1", NULL };
	CHECK(parse(o, 3, argv4) == IG_CONFIG_ERROR, "config: unknown flag is an error");
	char *argv5[] = { "x", "--t-port", NULL };
	CHECK(parse(o, 2, argv5) == IG_CONFIG_ERROR, "config: a flag without value is an error");
	setenv("T_FLAG", "maybe", 1);
	CHECK(parse(o, 1, argv3) == IG_CONFIG_ERROR, "config: a bad boolean is an error");
}

/* A decimal from 0 to 1 in millionths: each accepted form, each refusal. */
static void test_config_fraction(void)
{
	uint32_t share = IG_FRACTION_ONE;
	const struct ig_option o[] = { { "T_SHARE", IG_OPT_FRACTION, &share, 0, 0, "share" } };
	const struct ig_settings part = { .part = "t", .opts = o, .count = 1 };
	const struct ig_settings *const parts[] = { &part };
	static const struct { const char *in; uint32_t want; } good[] = {
		{ "0", 0 }, { "1", IG_FRACTION_ONE }, { "0.25", 250000 }, { ".5", 500000 },
		{ "1.000", IG_FRACTION_ONE }, { "0.000001", 1 },
	};
	static const char *const bad[] = { "", ".", "2", "1.5", "0.0000001", "-0.1", "0.5x", "1e-1" };
	bool ok = true;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		char arg[32];
		snprintf(arg, sizeof arg, "--t-share=%s", good[i].in);
		char *argv[] = { "x", arg, NULL };
		ok = ok && ig_config_parse(parts, 1, &(struct ig_config_args){ .argc = 2, .argv = argv }) == IG_CONFIG_OK &&
		     share == good[i].want;
	}
	CHECK(ok, "config: a fraction: 0, 1, 0.25, .5, 1.000, 0.000001");
	ok = true;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char arg[32];
		snprintf(arg, sizeof arg, "--t-share=%s", bad[i]);
		char *argv[] = { "x", arg, NULL };
		ok = ok && ig_config_parse(parts, 1, &(struct ig_config_args){ .argc = 2, .argv = argv }) == IG_CONFIG_ERROR;
	}
	CHECK(ok, "config: not a fraction: empty, '.', 2, 1.5, 7 decimals, negative, trailing garbage, exponent");
}

static int mode_index;
static const char *check_says;
static const char *check_stub(char *err, size_t errlen)
{
	(void)err, (void)errlen;
	return check_says;
}

/* Two parts, one with its defaults apart, a choice, a part's check and a
 * machine's command-line words. */
static void test_config_parts(void)
{
	int64_t size = 0;
	static const int64_t size_default = 1;
	static const struct ig_choice modes = { &mode_index, "add|replace" };
	const struct ig_option a[] = { { "T_SIZE", IG_OPT_INT, &size, 0, 9, "size" } };
	const struct ig_option b[] = { { "T_MODE", IG_OPT_CHOICE, (void *)&modes, 0, 0, "mode" } };
	const struct ig_settings pa = { .part = "a", .opts = a, .count = 1,
					.values = &size, .defaults = &size_default, .size = sizeof size },
				 pb = { .part = "b", .opts = b, .count = 1, .check = check_stub };
	const struct ig_settings *const parts[] = { &pa, &pb };
	char *flags[] = { "x", "--t-size=4", "--t-mode", "replace", NULL };
	struct ig_config_args args = { .argc = 4, .argv = flags };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_OK && size == 4 && mode_index == 1,
	      "config: flags of two parts, a choice by its word");
	char *bad_choice[] = { "x", "--t-mode=both", NULL };
	args = (struct ig_config_args){ .argc = 2, .argv = bad_choice };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_ERROR, "config: a word that is not a choice is an error");
	check_says = "no";
	args = (struct ig_config_args){ .argc = 1, .argv = flags };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_ERROR, "config: a part's failed check is an error");
	check_says = NULL;
	char *words[] = { "x", "console=ttyS0", "quiet", "T_SIZE=7", NULL };
	args = (struct ig_config_args){ .argc = 4, .argv = words };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_ERROR, "config: bare words are errors outside a machine");
	args.command_line_words = true;
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_OK && size == 7,
	      "config: a machine's command line: NAME=value of a setting sets it, other words are ignored");
	char *bad_word[] = { "x", "T_SIZE=70", NULL };
	args = (struct ig_config_args){ .argc = 2, .argv = bad_word, .command_line_words = true };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_ERROR, "config: a bad NAME=value word is an error");
	args = (struct ig_config_args){ .argc = 1, .argv = flags };
	CHECK(ig_config_parse(parts, 2, &args) == IG_CONFIG_OK && size == 1,
	      "config: a part's defaults are copied in before the environment and the flags");
}

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
	ig_pool_init(&blocks, 16384, 4, 64);
	test_timers();
	test_json();
	test_arena();
	test_pool();
	test_config();
	test_config_parts();
	test_config_fraction();
	return check_done();
}
