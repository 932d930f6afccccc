/* Unit tests of net/api/validate: the JSON pointers errors carry (escaped,
 * cut short), the quiet and reporting failure rule, $ref depth, exact
 * number comparison against bounds, decimal multipleOf on the literal,
 * and uniqueItems for each item type, pairwise and hashed. */
#include "kernel/runtime/arena.h"
#include "kernel/runtime/pool.h"
#include "net/api/validate.h"
#include "tests/unit/check.h"

#include <stdio.h>
#include <stdlib.h>

static struct ig_pool blocks;
static ig_arena arena;

/* ---- pointers and reports ---- */

struct reports {
	int n;
	char pointer[64], keyword[32];
};

static void record(void *arg, const char *pointer, const char *keyword, const char *message)
{
	struct reports *r = arg;
	(void)message;
	r->n++;
	snprintf(r->pointer, sizeof r->pointer, "%s", pointer);
	snprintf(r->keyword, sizeof r->keyword, "%s", keyword);
}

static void test_pointer(void)
{
	char buf[64];
	CHECK_INT(ig_pointer_text(NULL, buf, sizeof buf), 0, "the root is the empty pointer");
	CHECK(buf[0] == 0, "the root's text is empty");
	struct ig_where a = { NULL, "a/b~c", 5 }, i = { &a, NULL, 12 }, k = { &i, "", 0 };
	size_t n = ig_pointer_text(&k, buf, sizeof buf);
	check_slice(buf, n, "/a~1b~0c/12/", "keys are escaped (RFC 6901), indexes are decimal", "pointer");
	n = ig_pointer_text(&k, buf, 6);
	CHECK(n < 6 && buf[n] == 0, "a pointer that does not fit is cut short and terminated");
}

static void test_fail(void)
{
	struct reports r = { 0 };
	struct ig_vctx x = { .report = record, .arg = &r };
	struct ig_where at = { NULL, "title", 5 };
	CHECK(ig_fail(&x, &at, "maxLength", "too long"), "a reporting validation goes on after a failure");
	CHECK_INT(r.n, 1, "the failure is reported once");
	check_slice(r.pointer, strlen(r.pointer), "/title", "the report names the place", "pointer");
	check_slice(r.keyword, strlen(r.keyword), "maxLength", "the report names the keyword", "keyword");
	struct ig_vctx q = ig_quietly(&x);
	CHECK(!ig_fail(&q, &at, "type", "no"), "a quiet validation stops at its first failure");
	CHECK_INT(r.n, 1, "a quiet failure is not reported");
	CHECK_INT(q.failures, 1, "a quiet failure is counted in the quiet context");
	CHECK_INT(x.failures, 1, "the quiet context has its own count");
}

/* A schema that refers to itself without going deeper into the value. */
static bool loop_forever(const ig_json_value *v, struct ig_vctx *x, const struct ig_where *at)
{
	return ig_via_ref(loop_forever, v, x, at);
}

static void test_via_ref(void)
{
	struct reports r = { 0 };
	struct ig_vctx x = { .report = record, .arg = &r };
	ig_json_value v = { .type = IG_JSON_NULL };
	CHECK(!loop_forever(&v, &x, NULL), "a $ref loop fails instead of overflowing the stack");
	check_slice(r.keyword, strlen(r.keyword), "$ref", "the loop is reported as $ref", "keyword");
	CHECK_INT(x.depth, 0, "the depth is back to 0 afterwards");
}

/* ---- numbers ---- */

static ig_json_value int_value(int64_t i)
{
	return (ig_json_value){ .type = IG_JSON_INT, .i = i };
}

static ig_json_value double_value(double d)
{
	return (ig_json_value){ .type = IG_JSON_NUMBER, .d = d };
}

static void test_numbers(void)
{
	ig_json_value big = int_value(INT64_MAX), half = double_value(2.5), one = double_value(1.0);
	CHECK(ig_is_integer(&one), "1.0 is an integer");
	CHECK(!ig_is_integer(&half), "2.5 is not an integer");
	CHECK_INT(ig_compare_number(&big, (double)INT64_MAX, true, INT64_MAX - 1), 1,
		  "integers compare exactly (INT64_MAX above INT64_MAX - 1, equal as doubles)");
	CHECK_INT(ig_compare_number(&big, 0x1p63, false, 0), -1, "an integer is below 2^63");
	ig_json_value three = int_value(3);
	CHECK_INT(ig_compare_number(&three, 2.5, false, 0), 1, "3 is above 2.5");
	CHECK_INT(ig_compare_number(&three, 3.5, false, 0), -1, "3 is below 3.5");
	CHECK_INT(ig_compare_number(&half, 0, true, 2), 1, "2.5 is above the integer bound 2");
	CHECK_INT(ig_compare_number(&half, 0, true, 3), -1, "2.5 is below the integer bound 3");
	ig_json_value two = double_value(2.0);
	CHECK_INT(ig_compare_number(&two, 0, true, 2), 0, "2.0 is at the integer bound 2");
	CHECK_INT(ig_compare_number(&half, 2.5, false, 0), 0, "2.5 is at 2.5");
	CHECK(ig_int_multiple(-12, 4) && !ig_int_multiple(13, 4), "integer multipleOf");
}

static bool multiple(const char *literal, uint64_t digits, int scale)
{
	return ig_decimal_multiple((ig_str){ literal, strlen(literal) }, digits, scale);
}

static void test_decimal_multiple(void)
{
	CHECK(multiple("0.0075", 1, 4), "0.0075 is a multiple of 0.0001 (not in binary floating point)");
	CHECK(!multiple("0.00751", 1, 4), "0.00751 is not a multiple of 0.0001");
	CHECK(multiple("1e308", 1, 0), "1e308 is a multiple of 1, without overflow");
	CHECK(!multiple("1e308", 123456789, 9), "1e308 is not a multiple of 0.123456789");
	CHECK(multiple("-4.50", 15, 1), "-4.50 is a multiple of 1.5");
	CHECK(multiple("0", 7, 3), "zero is a multiple of everything");
	CHECK(multiple("12E-1", 3, 1), "12E-1 is a multiple of 0.3");
	CHECK(!multiple("1.25", 5, 1), "1.25 is not a multiple of 0.5");
}

/* ---- uniqueItems ---- */

static void test_unique(void)
{
	static const int64_t few[] = { 1, 2, 3, 2 };
	CHECK(!ig_unique_ints(few, 4, &arena), "a repeated integer among few items (pairwise)");
	int64_t many[100];
	for (int i = 0; i < 100; i++)
		many[i] = i * 7;
	CHECK(ig_unique_ints(many, 100, &arena), "100 distinct integers (hashed)");
	many[99] = many[3];
	CHECK(!ig_unique_ints(many, 100, &arena), "a repeated integer among 100 (hashed)");
	CHECK(!ig_unique_ints(many, 100, NULL), "a repeated integer among 100 without an arena (pairwise)");

	static const double d[] = { 0.0, 1.5, -0.0 };
	CHECK(!ig_unique_doubles(d, 3, &arena), "0 and -0 are equal");
	ig_str s[40];
	char text[40][16];
	for (int i = 0; i < 40; i++) {
		snprintf(text[i], sizeof text[i], "s%d", i);
		s[i] = (ig_str){ text[i], strlen(text[i]) };
	}
	CHECK(ig_unique_strings(s, 40, &arena), "40 distinct strings");
	s[39] = (ig_str){ "s1", 2 };
	CHECK(!ig_unique_strings(s, 40, &arena), "a repeated string (another pointer, same bytes)");
	static const bool b[] = { true, false };
	CHECK(ig_unique_bools(b, 2), "true and false are distinct");
	static const bool bb[] = { true, false, true };
	CHECK(!ig_unique_bools(bb, 3), "a repeated boolean");

	/* Values: 1 and 1.0 are equal, objects whatever their member order. */
	ig_json_value one = int_value(1), one_d = double_value(1.0), two = int_value(2);
	ig_json_value *v[] = { &one, &two, &one_d };
	CHECK(!ig_unique_values(v, 3, &arena), "1 and 1.0 are equal items");
	ig_json_value a = int_value(1), b2 = int_value(2);
	ig_json_member m1[] = { { { "a", 1 }, &a }, { { "b", 1 }, &b2 } };
	ig_json_member m2[] = { { { "b", 1 }, &b2 }, { { "a", 1 }, &a } };
	ig_json_value o1 = { .type = IG_JSON_OBJECT, .object = { m1, 2 } };
	ig_json_value o2 = { .type = IG_JSON_OBJECT, .object = { m2, 2 } };
	ig_json_value *objects[20];
	for (int i = 0; i < 20; i++)
		objects[i] = i % 2 ? &two : &one;
	CHECK(!ig_unique_values(objects, 20, &arena), "repeated values among 20 (hashed)");
	objects[0] = &o1;
	objects[1] = &o2;
	CHECK(!ig_unique_values(objects, 2, &arena), "objects with members in another order are equal");
}

int main(void)
{
	ig_pool_init(&blocks, 16384, 16, 1 << 10);
	ig_arena_init(&arena, &blocks, 1 << 20);
	test_pointer();
	test_fail();
	test_via_ref();
	test_numbers();
	test_decimal_multiple();
	test_unique();
	ig_arena_reset(&arena);
	return check_done();
}
