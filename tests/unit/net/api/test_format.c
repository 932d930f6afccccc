/* Unit tests of net/api/format: every string case of the JSON-Schema-Test-
 * Suite's optional/format/<name>.json for the formats ingot asserts (read
 * at test time with the project's own JSON reader), then edge cases of our
 * own. Each input sits flush against an unreadable page. */
#define _DEFAULT_SOURCE
#include "kernel/runtime/arena.h"
#include "net/api/format.h"
#include "kernel/runtime/json_read.h"
#include "kernel/runtime/pool.h"
#include "tests/unit/check.h"
#include "tests/unit/guard.h"
#include "tests/unit/suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static struct ig_pool blocks;
static struct guard g;

typedef bool (*format_fn)(const char *, size_t);

static const struct format {
	const char *name;
	format_fn fn;
} formats[] = {
	{ "date-time", ig_format_date_time },
	{ "date", ig_format_date },
	{ "email", ig_format_email },
	{ "uuid", ig_format_uuid },
	{ "uri", ig_format_uri },
};

/* Runs fn on s[0..n) placed right before the guard page. */
static bool try_format(format_fn fn, const char *s, size_t n)
{
	const char *p = guard_put(&g, s, n);
	if (!p) {
		fprintf(stderr, "input of %zu bytes does not fit the guard mapping\n", n);
		exit(2);
	}
	return fn(p, n);
}

/* ---- the suite ---- */

static const ig_json_value *member(const ig_json_value *o, const char *key)
{
	return ig_json_get(o, key, strlen(key));
}

/* One format's file: every test whose data is a string must get the
 * suite's answer (formats ignore other types, so those are not run). */
static void suite_format(const char *dir, const struct format *f)
{
	char path[1024], name[600];
	snprintf(path, sizeof path, "%s/optional/format/%s.json", dir, f->name);
	size_t len;
	char *text = read_file(path, &len);
	if (!text) {
		char missing[1100];
		snprintf(missing, sizeof missing, "suite not found at %s", path);
		check_that(false, missing, NULL);
		return;
	}
	ig_arena a;
	ig_arena_init(&a, &blocks, 16 << 20);
	ig_json_reader r;
	ig_jr_init(&r, text, len, &a, 64);
	const ig_json_value *doc = ig_jr_value(&r);
	snprintf(name, sizeof name, "suite %s.json: parsed with ig_jr_value", f->name);
	if (!check_that(doc && ig_jr_finish(&r) && doc->type == IG_JSON_ARRAY, name, "%s at byte %zu",
			r.error ? r.error : "not an array", r.error_offset)) {
		free(text);
		ig_arena_reset(&a);
		return;
	}
	unsigned run = 0, passed = 0;
	for (size_t i = 0; i < doc->array.len; i++) {
		const ig_json_value *group = doc->array.items[i];
		const ig_json_value *desc = member(group, "description"), *tests = member(group, "tests");
		if (!tests || tests->type != IG_JSON_ARRAY)
			continue;
		for (size_t j = 0; j < tests->array.len; j++) {
			const ig_json_value *t = tests->array.items[j];
			const ig_json_value *data = member(t, "data"), *valid = member(t, "valid");
			const ig_json_value *what = member(t, "description");
			if (!data || data->type != IG_JSON_STRING || !valid || valid->type != IG_JSON_BOOL)
				continue;
			bool got = try_format(f->fn, data->s.ptr, data->s.len);
			run++;
			passed += got == valid->b;
			snprintf(name, sizeof name, "suite %s: %.*s: %.*s", f->name,
				 desc ? (int)desc->s.len : 0, desc ? desc->s.ptr : "",
				 what ? (int)what->s.len : 0, what ? what->s.ptr : "");
			check_that(got == valid->b, name, "\"%.*s\" judged %s", (int)data->s.len, data->s.ptr,
				   got ? "valid" : "invalid");
		}
	}
	printf("# suite %s: %u cases run, %u passed\n", f->name, run, passed);
	snprintf(name, sizeof name, "suite %s.json: has string cases", f->name);
	check_that(run > 0, name, NULL);
	ig_arena_reset(&a);
	free(text);
}

/* ---- our own cases ---- */

struct fcase {
	const char *in;
	size_t len; /* 0: strlen */
	bool valid;
};

static void run_cases(const char *fname, format_fn fn, const struct fcase *c, size_t n)
{
	char name[300];
	for (size_t i = 0; i < n; i++) {
		size_t len = c[i].len ? c[i].len : strlen(c[i].in);
		bool got = try_format(fn, c[i].in, len);
		snprintf(name, sizeof name, "%s: \"%.*s\" is %s", fname, (int)len, c[i].in,
			 c[i].valid ? "valid" : "invalid");
		check_that(got == c[i].valid, name, NULL);
	}
}

static void test_date_time(void)
{
	static const struct fcase c[] = {
		{ "2020-02-29T00:00:00Z", 0, true },
		{ "2021-02-29T00:00:00Z", 0, false },
		{ "2000-02-29T12:00:00Z", 0, true },
		{ "1900-02-29T12:00:00Z", 0, false },
		{ "0000-01-01T00:00:00Z", 0, true },
		{ "9999-12-31T23:59:59.999999999+23:59", 0, true },
		{ "2020-01-01T00:00:00-00:00", 0, true },
		{ "2020-01-01t00:00:00z", 0, true },
		{ "2020-01-01 00:00:00Z", 0, false },
		{ "2020-01-01T00:00:00", 0, false },
		{ "2020-01-01T00:00Z", 0, false },
		{ "2020-01-01T00:00:00.Z", 0, false },
		{ "2020-01-01T00:00:00,5Z", 0, false },
		{ "2020-01-01T00:00:00+0100", 0, false },
		{ "2020-01-01T00:00:00+01:00:00", 0, false },
		{ "2020-01-01T00:00:00+1:00", 0, false },
		{ "2020-01-01T00:00:00+24:00", 0, false },
		{ "2020-01-01T00:00:00ZZ", 0, false },
		{ "2020-01-01T00:00:00 Z", 0, false },
		{ "2020-13-01T00:00:00Z", 0, false },
		{ "2020-00-01T00:00:00Z", 0, false },
		{ "2020-04-31T00:00:00Z", 0, false },
		{ "2020-01-01T23:59:60Z", 0, true },
		{ "2020-01-01T23:59:60.5Z", 0, true },
		{ "2020-01-01T00:59:60+01:00", 0, true },   /* 23:59 UTC */
		{ "2020-01-01T23:29:60-00:30", 0, true },   /* 23:59 UTC, the day after */
		{ "2020-01-01T23:59:60+01:00", 0, false },  /* 22:59 UTC */
		{ "2020-01-01T12:00:60Z", 0, false },
		{ "2020-01-01T23:59:61Z", 0, false },
		{ "2020-01-01T00:00:00Z\0", 21, false },
		{ "2020-01-01T00:00:00\0Z", 21, false },
		{ "", 0, false },
		{ "2020-01-01", 0, false },
	};
	run_cases("date-time", ig_format_date_time, c, IG_COUNTOF(c));
}

static void test_date(void)
{
	static const struct fcase c[] = {
		{ "2024-02-29", 0, true },
		{ "2023-02-29", 0, false },
		{ "2023-02-28", 0, true },
		{ "2000-02-29", 0, true },
		{ "1900-02-29", 0, false },
		{ "2024-12-31", 0, true },
		{ "2024-11-31", 0, false },
		{ "2024-1-01", 0, false },
		{ "2024/01/01", 0, false },
		{ "2024-01-01T", 0, false },
		{ "", 0, false },
	};
	run_cases("date", ig_format_date, c, IG_COUNTOF(c));
}

static void test_email(void)
{
	static const struct fcase c[] = {
		{ "a@b", 0, true },
		{ "a.b.c@d-e.f", 0, true },
		{ "!#$%&'*+-/=?^_`{|}~@example.com", 0, true },
		{ "\"a\\\"b\"@example.com", 0, true },
		{ "\"\"@example.com", 0, true },
		{ "\"a\\\\\"@example.com", 0, true },
		{ "\"a\"b\"@example.com", 0, false },
		{ "\"unterminated@example.com", 0, false },
		{ "a@[IPv6:2001:db8::1]", 0, true },
		{ "a@[ipv6:::ffff:192.0.2.1]", 0, true },
		{ "a@[IPv6:2001:db8::1::2]", 0, false },
		{ "a@[IPv6:1:2:3:4:5:6:7:8]", 0, true },
		{ "a@[IPv6:1:2:3:4:5:6:7:8:9]", 0, false },
		{ "a@[IPv6:12345::]", 0, false },
		{ "a@[192.0.2.1]", 0, true },
		{ "a@[192.0.2]", 0, false },
		{ "a@[192.0.2.01]", 0, false },
		{ "a@[IPv6:192.0.2.1]", 0, false },
		{ "a@b@c", 0, false },
		{ "a@-b.com", 0, false },
		{ "a@b-.com", 0, false },
		{ "a@b..com", 0, false },
		{ "a@b.com.", 0, false },
		{ "a@.b.com", 0, false },
		{ "a@b_c.com", 0, false },
		{ "a@xn--nw2a.xn--j6w193g", 0, true },
		{ "a@aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com", 0, true },
		{ "a@aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com", 0, false },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@b.c", 0, true },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@b.c", 0, false },
		{ "a@", 0, false },
		{ "@", 0, false },
		{ "", 0, false },
		{ "a\0@b.c", 6, false },
		{ "a@b.c\0", 6, false },
		{ "\xc3\xa9@b.c", 0, false },
	};
	run_cases("email", ig_format_email, c, IG_COUNTOF(c));
}

static void test_uuid(void)
{
	static const struct fcase c[] = {
		{ "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", 0, true },
		{ "F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6", 0, true },
		{ "f81d4fae-7dec-11d0-a765-00a0c91e6bf", 0, false },
		{ "f81d4fae-7dec-11d0-a765-00a0c91e6bf66", 0, false },
		{ "{f81d4fae-7dec-11d0-a765-00a0c91e6bf6}", 0, false },
		{ "f81d4fae_7dec_11d0_a765_00a0c91e6bf6", 0, false },
		{ "g81d4fae-7dec-11d0-a765-00a0c91e6bf6", 0, false },
		{ "", 0, false },
	};
	run_cases("uuid", ig_format_uuid, c, IG_COUNTOF(c));
}

static void test_uri(void)
{
	static const struct fcase c[] = {
		{ "a:", 0, true },
		{ "HTTP://EXAMPLE.COM", 0, true },
		{ "file:///etc/passwd", 0, true },
		{ "http://[::1]:8080/", 0, true },
		{ "http://[v1.fe]/", 0, true },
		{ "http://[v1.]/", 0, false },
		{ "http://[vz.x]/", 0, false },
		{ "http://[::1]x/", 0, false },
		{ "http://[1:2:3:4:5:6:7::]/", 0, true },
		{ "http://[1::2:3:4:5:6:7]/", 0, true },
		{ "http://[1:2:3:4:5:6:7:8::]/", 0, false },
		{ "http://[1:2:3:4:5:6:7]/", 0, false },
		{ "http://[::1.2.3.4]/", 0, true },
		{ "http://[1:2:3:4:5:6:1.2.3.4]/", 0, true },
		{ "http://[1:2:3:4:5:6:7:1.2.3.4]/", 0, false },
		{ "http://[::1.2.3.4:5]/", 0, false },
		{ "http://[:1::]/", 0, false },
		{ "http://[1:]/", 0, false },
		{ "http://[::]/", 0, true },
		{ "http://[::1/", 0, false },
		{ "http://[]/", 0, false },
		{ "http://host:/", 0, true },
		{ "http://a:b:c/", 0, false },
		{ "http://user:pass@host:1/p?q#f", 0, true },
		{ "http://user@@host", 0, false },
		{ "http://example.com/?q=a?b/c:d@e", 0, true },
		{ "http://example.com/#a/b?c", 0, true },
		{ "http://example.com/#frag#frag", 0, false },
		{ "http://example.com/%zz", 0, false },
		{ "http://example.com/%4", 0, false },
		{ "http://example.com/%41%7e", 0, true },
		{ "http://ex ample.com", 0, false },
		{ "urn:isbn:0451450523", 0, true },
		{ "a+b-c.d:x", 0, true },
		{ "-a:x", 0, false },
		{ "mailto:a@b?subject=hi", 0, true },
		{ "http://example.com/a[b]", 0, false },
		{ "http://example.com\0", 19, false },
		{ "http:", 0, true },
		{ ":", 0, false },
		{ "", 0, false },
	};
	run_cases("uri", ig_format_uri, c, IG_COUNTOF(c));
}

int main(int argc, char **argv)
{
	ig_pool_init(&blocks, 16384, 16, 10000);
	if (!guard_init(&g, 4096)) {
		perror("guard_init");
		return 2;
	}
	const char *dir = suite_dir(argc, argv);
	if (!dir) {
		check_skip("suite: the JSON Schema Test Suite's format files", SUITE_SKIP);
	} else {
		for (size_t i = 0; i < IG_COUNTOF(formats); i++)
			suite_format(dir, &formats[i]);
	}
	test_date_time();
	test_date();
	test_email();
	test_uuid();
	test_uri();
	guard_free(&g);
	return check_done();
}
