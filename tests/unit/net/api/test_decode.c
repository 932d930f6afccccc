/* Unit tests of net/api/decode: typed reads from the pull reader (a wrong
 * type is one "type" violation and the value is skipped, so decoding goes
 * on; integers outside int64 are violations, never wrapped), nulls,
 * free-form values through their validator, arrays that grow in the
 * arena, and duplicate keys. */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "net/api/decode.h"
#include "tests/unit/check.h"

#include <stdio.h>

static struct ig_pool blocks;
static ig_arena arena;
static ig_json_reader reader;
static int reports;
static char last_keyword[32], last_message[80];

static void record(void *arg, const char *pointer, const char *keyword, const char *message)
{
	(void)arg;
	(void)pointer;
	reports++;
	snprintf(last_keyword, sizeof last_keyword, "%s", keyword);
	snprintf(last_message, sizeof last_message, "%s", message);
}

/* A decoding context over text (a C string). */
static struct ig_dctx start(const char *text)
{
	ig_arena_reset(&arena);
	ig_jr_init(&reader, text, strlen(text), &arena, 64);
	reports = 0;
	last_keyword[0] = last_message[0] = 0;
	return (struct ig_dctx){ &reader, { .report = record, .arena = &arena }, true };
}

static void test_scalars(void)
{
	struct ig_dctx d = start("[\"x\", 12, 1e2, 2.5, true, 9223372036854775808, null]");
	ig_str s;
	int64_t i;
	double f;
	bool b;
	ig_json_value num;
	CHECK(ig_begin_array(&d, NULL, "must be an array"), "an array begins");
	CHECK(ig_jr_array_next(d.r) && ig_read_string(&d, NULL, &s, "must be a string"), "a string reads");
	check_slice(s.ptr, s.len, "x", "the string's value", "s");
	CHECK(ig_jr_array_next(d.r) && ig_read_integer(&d, NULL, &i, &num, "must be an integer") && i == 12,
	      "an integer reads");
	CHECK(ig_jr_array_next(d.r) && ig_read_integer(&d, NULL, &i, &num, "must be an integer") && i == 100,
	      "1e2 is the integer 100");
	CHECK(ig_jr_array_next(d.r) && !ig_read_integer(&d, NULL, &i, &num, "must be an integer"),
	      "2.5 is not an integer");
	CHECK(reports == 1 && strcmp(last_keyword, "type") == 0, "one type violation for 2.5");
	CHECK(ig_jr_array_next(d.r) && !ig_read_string(&d, NULL, &s, "must be a string"),
	      "true where a string belongs is a type violation");
	check_slice(last_message, strlen(last_message), "must be a string", "the message given is the one reported",
		    "message");
	CHECK(ig_jr_array_next(d.r) && !ig_read_integer(&d, NULL, &i, &num, "must be an integer"),
	      "2^63 is not within int64");
	check_slice(last_message, strlen(last_message), "must be an integer within the 64-bit range",
		    "outside int64 says so (never wrapped)", "message");
	CHECK(ig_jr_array_next(d.r) && ig_read_null(&d), "a null reads as null");
	CHECK(!ig_jr_array_next(d.r) && ig_jr_finish(d.r), "decoding went on to the end after violations");
	CHECK_INT(reports, 3, "three violations in all");

	d = start("7");
	CHECK(ig_read_number(&d, NULL, &f, &num, "must be a number") && f == 7.0, "an integer literal as a number");
	d = start("false");
	CHECK(ig_read_boolean(&d, NULL, &b, "must be a boolean") && !b, "a boolean reads");
	d = start("");
	CHECK(!ig_read_string(&d, NULL, &s, "must be a string") && reader.error &&
		      strcmp(reader.error, "unexpected end of input") == 0 && reports == 0,
	      "the end of input where a value belongs is a reader error, not a violation");
	d = start("{\"a\": [1, {\"b\": 2}]}");
	CHECK(!ig_begin_array(&d, NULL, "must be an array") && ig_jr_finish(d.r),
	      "an object where an array belongs is skipped whole");
}

static bool no_objects(const ig_json_value *v, struct ig_vctx *x, const struct ig_where *at)
{
	return v->type != IG_JSON_OBJECT || ig_fail(x, at, "type", "must not be an object");
}

static void test_values(void)
{
	struct ig_dctx d = start("{\"k\": 1}");
	ig_json_value *v = ig_read_value(&d, NULL, no_objects);
	CHECK(v && v->type == IG_JSON_OBJECT && reports == 1, "a free-form value is read and validated");
	d = start("{\"k\": 1}");
	d.check = false;
	v = ig_read_value(&d, NULL, no_objects);
	CHECK(v && reports == 0, "without checks (x-ingot-validate: false) the validator does not run");
}

static void test_grow(void)
{
	struct ig_dctx d = start("0");
	int64_t *items = NULL;
	size_t cap = 0;
	for (size_t n = 0; n < 100; n++) {
		items = ig_grow_items(&d, items, n, &cap, sizeof *items);
		if (!items)
			break;
		if (n == 4) /* the first growth: 4 -> 8 */
			CHECK(items[n] == 0, "room past the old items is zeroed");
		items[n] = (int64_t)n;
	}
	bool kept = items != NULL;
	for (size_t n = 0; kept && n < 100; n++)
		kept = items[n] == (int64_t)n;
	CHECK(kept && cap >= 100, "100 items grow in the arena and keep their values");
}

static void test_keyset(void)
{
	struct ig_dctx d = start("0");
	struct ig_keyset ks = { NULL, 0, 0 };
	char names[50][16];
	bool added = true;
	for (int i = 0; i < 50; i++) {
		snprintf(names[i], sizeof names[i], "k%d", i);
		added &= ig_keyset_add(&d, &ks, (ig_str){ names[i], strlen(names[i]) });
	}
	CHECK(added && ks.n == 50, "50 distinct keys are added (the set grows)");
	CHECK(ig_keyset_add(&d, &ks, (ig_str){ NULL, 0 }), "the empty key is a key");
	CHECK(!ig_keyset_add(&d, &ks, (ig_str){ "k17", 3 }), "a repeated key is refused");
	CHECK(reader.error && strcmp(reader.error, "duplicate key") == 0, "the reader fails with duplicate key");
}

int main(void)
{
	ig_pool_init(&blocks, 16384, 16, 1 << 10);
	ig_arena_init(&arena, &blocks, 1 << 20);
	test_scalars();
	test_values();
	test_grow();
	test_keyset();
	ig_arena_reset(&arena);
	return check_done();
}
