/* The JSON writer primitives (kernel/runtime/json.h): escaped strings,
 * integers, shortest round-trip doubles, into the arena's buffer. */
#include "kernel/runtime/arena.h"
#include "ingot/base.h"
#include "kernel/runtime/json.h"
#include "kernel/runtime/pool.h"
#include "tests/unit/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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
	/* ig_fmt_u64 writes two digits a step: every length, both parities, and
	   each power of ten and its neighbours, against printf. */
	bool digits_agree = true;
	for (uint64_t p = 1, k = 0; k < 20; k++, p *= 10) {
		uint64_t vs[] = { p - 1, p, p + 1, p * 5 + 3 };
		for (size_t i = 0; i < IG_COUNTOF(vs); i++) {
			char got[24], want[24];
			got[ig_fmt_u64(got, vs[i])] = 0;
			snprintf(want, sizeof want, "%llu", (unsigned long long)vs[i]);
			digits_agree &= strcmp(got, want) == 0;
		}
	}
	for (uint64_t v = 0; v < 100000; v += 7) {
		char got[24], want[24];
		got[ig_fmt_u64(got, v)] = 0;
		snprintf(want, sizeof want, "%llu", (unsigned long long)v);
		digits_agree &= strcmp(got, want) == 0;
	}
	CHECK(digits_agree, "json: ig_fmt_u64 agrees with printf at every length");
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
	/* A fraction below 1 with zeros after the point (0.000012) is longer
	   than its digits: what is written stays inside what was reserved,
	   with the room left exactly what a shorter value would need. */
	static const struct { double v; const char *text; } small[] = {
		{ 0.000012, "0.000012" }, { -0.000012, "-0.000012" }, { 0.00001, "0.00001" },
		{ 0.000123456, "0.000123456" }, { 0.5, "0.5" },
	};
	for (size_t i = 0; i < IG_COUNTOF(small); i++) {
		char buf[64 + 16];
		memset(buf, '#', sizeof buf);
		for (size_t room = 0; room <= 12; room++) {
			ig_wbuf f = { .ptr = buf, .cap = 64, .len = 64 - room, .arena = &a };
			ig_json_double(&f, small[i].v);
			size_t n = strlen(small[i].text);
			bool fits = f.len <= f.cap && memcmp(buf + 64, "################", 16) == 0;
			bool text = f.ptr == buf ? f.len == 64 - room + n && memcmp(buf + 64 - room, small[i].text, n) == 0
						 : f.len == 64 - room + n && memcmp(f.ptr + 64 - room, small[i].text, n) == 0;
			if (!fits || !text) {
				printf("# %s with %zu bytes of room: len %zu of cap %zu\n", small[i].text, room, f.len, f.cap);
				CHECK(false, "json: a small fraction is written inside its reservation");
				goto small_done;
			}
		}
	}
	CHECK(true, "json: a small fraction is written inside its reservation");
small_done:;
	double third = 1.0 / 3.0;
	CHECK(strtod(json_of(ig_json_double, third, &a), NULL) == third, "json: doubles round-trip");
	ig_arena_reset(&a);
}

int main(void)
{
	ig_pool_init(&blocks, 16384, 4, 64);
	test_json();
	return check_done();
}
