/* Unit tests of net/api/json_read and json_value: a table of valid and
 * invalid documents (each placed flush against an unreadable page, every
 * prefix too, the tree builder and the skipper required to agree), pull
 * walks, trees, duplicate keys, depth, numbers, UTF-8, equality, and the
 * JSON-Schema-Test-Suite's files as a corpus of valid JSON. */
#define _DEFAULT_SOURCE
#include "kernel/runtime/arena.h"
#include "kernel/runtime/json_read.h"
#include "kernel/runtime/pool.h"
#include "tests/unit/check.h"
#include "tests/unit/guard.h"
#include "tests/unit/suite.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#define IN(s) .in = (s), .len = sizeof(s) - 1

static struct ig_pool blocks;
static ig_arena arena;
static struct guard g;

/* ---- running one document ---- */

struct outcome {
	const char *error;
	size_t offset;
	ig_json_value *value;
};

/* Reads one whole document with the tree builder (skip = false) or the
 * skipper, the input's last byte right before the guard page. */
static struct outcome run(const char *in, size_t len, int max_depth, bool skip)
{
	ig_arena_reset(&arena);
	const char *p = guard_put(&g, in, len);
	if (!p) {
		fprintf(stderr, "input of %zu bytes does not fit the guard mapping\n", len);
		exit(2);
	}
	ig_json_reader r;
	ig_jr_init(&r, p, len, &arena, max_depth);
	struct outcome o = { 0 };
	if (skip)
		ig_jr_skip(&r);
	else
		o.value = ig_jr_value(&r);
	ig_jr_finish(&r);
	o.error = r.error;
	o.offset = r.error_offset;
	if (o.error)
		o.value = NULL;
	return o;
}

static bool same_error(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* ---- the table ---- */

enum { VALID, DUP = 1 }; /* DUP: only the tree builder sees the error */

struct doc_case {
	const char *name;
	const char *in;
	size_t len;
	const char *error; /* NULL: valid */
	size_t offset;
	int flags;
	int max_depth; /* 0: 64 */
};

static const char EOF_[] = "unexpected end of input";
static const char CHAR_[] = "unexpected character";
static const char AFTER[] = "unexpected data after the value";
static const char LITERAL[] = "invalid literal";
static const char DIGIT[] = "digit expected";
static const char FRAC[] = "digit expected after '.'";
static const char EXP[] = "digit expected in exponent";
static const char ZERO[] = "leading zeros are not allowed";
static const char RANGE[] = "number out of range";
static const char UNTERM[] = "unterminated string";
static const char CONTROL[] = "unescaped control character in string";
static const char ESCAPE[] = "invalid escape";
static const char HEX[] = "invalid \\u escape";
static const char SURR[] = "lone surrogate in \\u escape";
static const char UTF8[] = "invalid UTF-8";
static const char DEPTH[] = "nesting too deep";
static const char KEY[] = "object key expected";
static const char COLON[] = "':' expected";
static const char OBJSEP[] = "',' or '}' expected";
static const char ARRSEP[] = "',' or ']' expected";
static const char TCOMMA[] = "trailing comma";
static const char DUPKEY[] = "duplicate key";

static const struct doc_case cases[] = {
	/* valid */
	{ "null", IN("null") },
	{ "true", IN("true") },
	{ "false", IN("false") },
	{ "zero", IN("0") },
	{ "minus zero", IN("-0") },
	{ "integer", IN("123") },
	{ "negative fraction with signed exponent", IN("-1.5e+10") },
	{ "upper-case exponent", IN("1E5") },
	{ "negative exponent", IN("1e-5") },
	{ "zero with exponent", IN("0e0") },
	{ "zero point zero", IN("0.0") },
	{ "empty string", IN("\"\"") },
	{ "plain string", IN("\"abc\"") },
	{ "long plain string (word-at-a-time scan)", IN("\"abcdefghijklmnopqrstuvwxyz0123456789ABCDEF\"") },
	{ "every simple escape", IN("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"") },
	{ "\\u0000 escape", IN("\"\\u0000\"") },
	{ "\\u escapes in both cases", IN("\"\\u00e9\\u00E9\\uFFFF\"") },
	{ "surrogate pair", IN("\"\\ud83d\\ude00\"") },
	{ "highest surrogate pair", IN("\"\\uDBFF\\uDFFF\"") },
	{ "two-byte UTF-8", IN("\"\xc3\xa9\"") },
	{ "three-byte UTF-8", IN("\"\xe2\x82\xac\"") },
	{ "U+FFFF in UTF-8", IN("\"\xef\xbf\xbf\"") },
	{ "four-byte UTF-8", IN("\"\xf0\x9f\x98\x80\"") },
	{ "U+10FFFF in UTF-8", IN("\"\xf4\x8f\xbf\xbf\"") },
	{ "lowest three-byte and four-byte forms", IN("\"\xe0\xa0\x80\xf0\x90\x80\x80\"") },
	{ "DEL is not a control character", IN("\"\x7f\"") },
	{ "empty array", IN("[]") },
	{ "empty object", IN("{}") },
	{ "empty containers with whitespace", IN("[ ] ") },
	{ "array", IN("[1,2,3]") },
	{ "object", IN("{\"a\":1,\"b\":[true,null]}") },
	{ "empty key", IN("{\"\":0}") },
	{ "keys differing only in length", IN("{\"a\":1,\"aa\":2,\"\":3}") },
	{ "equal values under distinct keys", IN("{\"a\":1,\"b\":1}") },
	{ "all four whitespace bytes", IN(" \t\n\r[ 1 ,\t2 ]\r\n") },
	{ "whitespace around ':' and ','", IN("{ \"a\" : 1 , \"b\" : 2 }") },
	{ "nesting at the limit", IN("[[[[1]]]]"), .max_depth = 4 },
	{ "objects nesting at the limit", IN("{\"a\":{\"b\":{}}}"), .max_depth = 3 },
	{ "scalars need no depth", IN("1"), .max_depth = -1 },
	{ "duplicate keys in different objects", IN("[{\"a\":1},{\"a\":1}]") },
	{ "same key at different levels", IN("{\"a\":{\"a\":1}}") },

	/* structure */
	{ "empty input", IN(""), EOF_, 0 },
	{ "only whitespace", IN("   "), EOF_, 3 },
	{ "two values", IN("1 2"), AFTER, 2 },
	{ "a literal glued to garbage", IN("truex"), AFTER, 4 },
	{ "array not closed", IN("[1"), EOF_, 2 },
	{ "array ends after ','", IN("[1,"), EOF_, 3 },
	{ "lone '['", IN("["), EOF_, 1 },
	{ "lone '{'", IN("{"), EOF_, 1 },
	{ "object ends after key", IN("{\"a\""), EOF_, 4 },
	{ "object ends after ':'", IN("{\"a\":"), EOF_, 5 },
	{ "trailing comma in array", IN("[1,]"), TCOMMA, 3 },
	{ "trailing comma in object", IN("{\"a\":1,}"), TCOMMA, 7 },
	{ "leading comma in array", IN("[,1]"), CHAR_, 1 },
	{ "comma alone in object", IN("{,}"), KEY, 1 },
	{ "double comma", IN("[1,,2]"), CHAR_, 3 },
	{ "missing comma in array", IN("[1 2]"), ARRSEP, 3 },
	{ "missing comma in object", IN("{\"a\":1 \"b\":2}"), OBJSEP, 7 },
	{ "missing colon", IN("{\"a\" 1}"), COLON, 5 },
	{ "missing value", IN("{\"a\":}"), CHAR_, 5 },
	{ "number as key", IN("{1:2}"), KEY, 1 },
	{ "single-quoted key", IN("{'a':1}"), KEY, 1 },
	{ "mismatched ']' for '{'", IN("{\"a\":1]"), OBJSEP, 6 },
	{ "mismatched '}' for '['", IN("[1}"), ARRSEP, 2 },
	{ "stray closing bracket", IN("]"), CHAR_, 0 },
	{ "comment", IN("/* c */ 1"), CHAR_, 0 },
	{ "byte order mark", IN("\xef\xbb\xbf{}"), CHAR_, 0 },
	{ "form feed is not whitespace", IN("\f1"), CHAR_, 0 },
	{ "vertical tab is not whitespace", IN("[1,\v2]"), CHAR_, 3 },
	{ "no-break space is not whitespace", IN("[1,\xc2\xa0 2]"), CHAR_, 3 },
	{ "NUL after a value", .in = "1\0", .len = 2, AFTER, 1 },
	{ "nesting past the limit", IN("[[[[[1]]]]]"), DEPTH, 4, .max_depth = 4 },
	{ "objects nesting past the limit", IN("{\"a\":{\"b\":{}}}"), DEPTH, 10, .max_depth = 2 },
	{ "max_depth 0 admits no container", IN("[]"), DEPTH, 0, .max_depth = -1 },

	/* literals */
	{ "truncated true", IN("tru"), LITERAL, 0 },
	{ "truncated null", IN("nul"), LITERAL, 0 },
	{ "capitalised True", IN("True"), CHAR_, 0 },
	{ "upper-case NULL", IN("NULL"), CHAR_, 0 },
	{ "falsy", IN("falsy"), LITERAL, 0 },
	{ "NaN", IN("NaN"), CHAR_, 0 },
	{ "Infinity", IN("Infinity"), CHAR_, 0 },
	{ "-Infinity", IN("-Infinity"), DIGIT, 1 },

	/* numbers */
	{ "leading zero", IN("01"), ZERO, 0 },
	{ "leading zero after minus", IN("-01"), ZERO, 1 },
	{ "leading zeros before a fraction", IN("00.5"), ZERO, 0 },
	{ "plus sign", IN("+1"), CHAR_, 0 },
	{ "fraction without integer part", IN(".5"), CHAR_, 0 },
	{ "fraction without digits", IN("1."), FRAC, 2 },
	{ "exponent after a bare '.'", IN("1.e5"), FRAC, 2 },
	{ "minus alone", IN("-"), DIGIT, 1 },
	{ "minus then letter", IN("-a"), DIGIT, 1 },
	{ "exponent without digits", IN("1e"), EXP, 2 },
	{ "signed exponent without digits", IN("1e+"), EXP, 3 },
	{ "exponent with a letter", IN("1E-x"), EXP, 3 },
	{ "hex literal", IN("0x10"), AFTER, 1 },
	{ "two fractions", IN("1.5.3"), AFTER, 3 },
	{ "overflow to infinity", IN("1e400"), RANGE, 0 },
	{ "negative overflow", IN("[-1e400]"), RANGE, 1 },
	{ "just above the largest double", IN("1.7976931348623159e308"), RANGE, 0 },
	{ "a long literal above the largest double",
	  IN("179769313486231580793728971405303415079934132710037826936173778980444968292764750946649"
	     "017977587207096330286416692887910946555547851940402630657488671505820681908902000708383"
	     "676273854845817711531764475730270069855571366959622842914819860834936475292719074168444"
	     "365510704342711559699508093042880177904174497792"),
	  RANGE, 0 },
	{ "huge exponent", IN("1e99999999999999999999999"), RANGE, 0 },
	{ "tiny numbers underflow to zero", IN("[1e-400,-1e-400,1e-99999999999999999999]") },
	{ "the largest double", IN("1.7976931348623157e308") },
	{ "just below the overflow threshold", IN("1.7976931348623158e308") },
	{ "a long literal just below the overflow threshold",
	  IN("179769313486231580793728971405303415079934132710037826936173778980444968292764750946649"
	     "017977587207096330286416692887910946555547851940402630657488671505820681908902000708383"
	     "676273854845817711531764475730270069855571366959622842914819860834936475292719074168444"
	     "365510704342711559699508093042880177904174497791") },
	{ "many digits, small value", IN("0.000000000000000000000000000000000000000000000000000000000000000000000000001") },
	{ "integers beyond int64 are numbers", IN("[18446744073709551616,-98249283749234923498293171823948729348710298301928331]") },

	/* strings */
	{ "unterminated string", IN("\"abc"), UNTERM, 0 },
	{ "unterminated long string", IN("\"abcdefghijklmnop"), UNTERM, 0 },
	{ "backslash at the end", IN("\"\\"), UNTERM, 1 },
	{ "unknown escape", IN("\"\\x\""), ESCAPE, 1 },
	{ "escaped single quote", IN("\"\\'\""), ESCAPE, 1 },
	{ "upper-case \\U", IN("\"\\U0041\""), ESCAPE, 1 },
	{ "short \\u escape", IN("\"\\u12\""), HEX, 1 },
	{ "\\u escape at the end of input", IN("\"\\u12"), HEX, 1 },
	{ "non-hex \\u escape", IN("\"\\u12G4\""), HEX, 1 },
	{ "lone high surrogate", IN("\"\\ud800\""), SURR, 1 },
	{ "lone high surrogate at the end of input", IN("\"\\ud800"), SURR, 1 },
	{ "lone low surrogate", IN("\"\\udc00\""), SURR, 1 },
	{ "high surrogate then a letter", IN("\"\\ud800x\""), SURR, 1 },
	{ "high surrogate then a BMP escape", IN("\"\\ud800\\u0041\""), SURR, 1 },
	{ "two high surrogates", IN("\"\\ud800\\ud800\""), SURR, 1 },
	{ "high surrogate then a bad escape", IN("\"\\ud800\\u00zz\""), HEX, 1 },
	{ "reversed surrogate pair", IN("\"\\ude00\\ud83d\""), SURR, 1 },
	{ "raw control byte", IN("\"\x01\""), CONTROL, 1 },
	{ "raw tab", IN("\"a\tb\""), CONTROL, 2 },
	{ "raw newline", IN("\"a\nb\""), CONTROL, 2 },
	{ "raw 0x1f", IN("\"\x1f\""), CONTROL, 1 },
	{ "raw NUL", .in = "\"\0\"", .len = 3, CONTROL, 1 },
	{ "control byte after eight plain bytes", IN("\"abcdefgh\x02\""), CONTROL, 9 },

	/* UTF-8 */
	{ "overlong two-byte '/'", IN("\"\xc0\xaf\""), UTF8, 1 },
	{ "overlong two-byte 0x7f", IN("\"\xc1\xbf\""), UTF8, 1 },
	{ "overlong three-byte", IN("\"\xe0\x80\xaf\""), UTF8, 1 },
	{ "overlong three-byte U+07FF", IN("\"\xe0\x9f\xbf\""), UTF8, 1 },
	{ "overlong four-byte", IN("\"\xf0\x80\x80\xaf\""), UTF8, 1 },
	{ "overlong four-byte U+FFFF", IN("\"\xf0\x8f\xbf\xbf\""), UTF8, 1 },
	{ "encoded high surrogate", IN("\"\xed\xa0\x80\""), UTF8, 1 },
	{ "encoded low surrogate", IN("\"\xed\xbf\xbf\""), UTF8, 1 },
	{ "U+110000", IN("\"\xf4\x90\x80\x80\""), UTF8, 1 },
	{ "lead byte 0xf5", IN("\"\xf5\x80\x80\x80\""), UTF8, 1 },
	{ "byte 0xff", IN("\"\xff\""), UTF8, 1 },
	{ "byte 0xfe", IN("\"a\xfe\""), UTF8, 2 },
	{ "lone continuation byte", IN("\"\x80\""), UTF8, 1 },
	{ "sequence cut by the closing quote", IN("\"\xe2\x82\""), UTF8, 1 },
	{ "sequence cut by the end of input", IN("\"\xe2\x82"), UTF8, 1 },
	{ "two-byte lead at the end of input", IN("\"\xc3"), UTF8, 1 },
	{ "four-byte sequence missing its last byte", IN("\"\xf0\x9f\x98\""), UTF8, 1 },
	{ "continuation replaced by ASCII", IN("\"\xc3\x41\""), UTF8, 1 },
	{ "invalid UTF-8 in a key", IN("{\"\xc0\x80\":1}"), UTF8, 2 },
	{ "invalid UTF-8 after eight plain bytes", IN("\"abcdefgh\xff\""), UTF8, 9 },

	/* duplicate keys (the skipper does not look) */
	{ "duplicate key", IN("{\"a\":1,\"a\":2}"), DUPKEY, 7, DUP },
	{ "duplicate key found after decoding", IN("{\"a\":1,\"\\u0061\":2}"), DUPKEY, 7, DUP },
	{ "duplicate decoded keys", IN("{\"\\u00e9\":1,\"\xc3\xa9\":2}"), DUPKEY, 12, DUP },
	{ "duplicate empty key", IN("{\"\":1,\"x\":0,\"\":2}"), DUPKEY, 12, DUP },
	{ "the first repeat is reported", IN("{\"b\":0,\"a\":1,\"b\":2,\"a\":3}"), DUPKEY, 13, DUP },
	{ "duplicate in a nested object", IN("[{\"x\":{\"k\":1,\"k\":1}}]"), DUPKEY, 13, DUP },
};

static void test_table(void)
{
	char name[200];
	for (size_t i = 0; i < IG_COUNTOF(cases); i++) {
		const struct doc_case *c = &cases[i];
		int depth = c->max_depth == 0 ? 64 : c->max_depth < 0 ? 0 : c->max_depth;
		struct outcome v = run(c->in, c->len, depth, false);
		struct outcome s = run(c->in, c->len, depth, true);
		snprintf(name, sizeof name, "%s: %s", c->error ? "invalid" : "valid", c->name);
		if (!c->error) {
			check_that(!v.error && v.value && !s.error, name, "value: %s at %zu; skip: %s at %zu",
				   v.error ? v.error : "ok", v.offset, s.error ? s.error : "ok", s.offset);
			continue;
		}
		bool skip_ok = c->flags & DUP ? !s.error
					      : same_error(s.error, c->error) && s.offset == c->offset;
		check_that(same_error(v.error, c->error) && v.offset == c->offset && skip_ok, name,
			   "value: \"%s\" at %zu; skip: \"%s\" at %zu; want \"%s\" at %zu",
			   v.error ? v.error : "ok", v.offset, s.error ? s.error : "ok", s.offset,
			   c->error, c->offset);
	}
}

/* Every prefix of every case, flush against the guard page: nothing reads
 * past the end, and the builder and the skipper agree. */
static void test_prefixes(void)
{
	size_t tried = 0, disagree = 0;
	const char *first = NULL;
	for (size_t i = 0; i < IG_COUNTOF(cases); i++) {
		const struct doc_case *c = &cases[i];
		for (size_t n = 0; n <= c->len; n++) {
			struct outcome v = run(c->in, n, 64, false);
			struct outcome s = run(c->in, n, 64, true);
			tried++;
			/* A repeated key is an error only to the builder; the
			 * skipper meets the prefix's end later. */
			bool agree = same_error(v.error, DUPKEY)
					     ? !s.error || s.offset > v.offset
					     : same_error(v.error, s.error) && v.offset == s.offset;
			if (!agree && disagree++ == 0)
				first = c->name;
		}
	}
	check_that(disagree == 0, "every prefix of every case: no read past the end; builder and skipper agree",
		   "%zu of %zu disagree, first in \"%s\"", disagree, tried, first);
}

/* ---- the pull API ---- */

static ig_json_reader reader_on(const char *s, int max_depth)
{
	ig_arena_reset(&arena);
	size_t len = strlen(s);
	const char *p = guard_put(&g, s, len);
	ig_json_reader r;
	ig_jr_init(&r, p, len, &arena, max_depth);
	return r;
}

static bool key_is(ig_str k, const char *s)
{
	return ig_str_eq(k, s, strlen(s));
}

static void test_pull_object(void)
{
	ig_json_reader r = reader_on(" {\"id\": 42, \"name\" : \"x\\u00e9\", \"tags\":[\"a\",\"b\"],"
				     "\"ok\":true,\"none\":null,\"price\":12.5,\"extra\":{\"deep\":[1,{}]},"
				     "\"plain\":\"zero copy\"} ",
				     8);
	const char *buf = r.start;
	int64_t id = 0;
	ig_str name = { 0 }, plain = { 0 };
	int tags = 0, seen = 0;
	bool ok = false, none = false;
	double price = 0;
	CHECK_INT(ig_jr_peek(&r), IG_JN_OBJECT, "pull: peek sees an object after whitespace");
	CHECK(ig_jr_object_begin(&r), "pull: object_begin");
	ig_str k;
	while (ig_jr_object_next_key(&r, &k)) {
		seen++;
		ig_json_value n;
		if (key_is(k, "id")) {
			if (ig_jr_number(&r, &n) && n.type == IG_JSON_INT)
				id = n.i;
		} else if (key_is(k, "name")) {
			ig_jr_string(&r, &name);
		} else if (key_is(k, "tags")) {
			if (ig_jr_array_begin(&r))
				while (ig_jr_array_next(&r)) {
					ig_str t;
					if (ig_jr_string(&r, &t))
						tags++;
				}
		} else if (key_is(k, "ok")) {
			ig_jr_bool(&r, &ok);
		} else if (key_is(k, "none")) {
			none = ig_jr_peek(&r) == IG_JN_NULL && ig_jr_null(&r);
		} else if (key_is(k, "price")) {
			if (ig_jr_number(&r, &n) && n.type == IG_JSON_NUMBER)
				price = n.d;
		} else if (key_is(k, "plain")) {
			ig_jr_string(&r, &plain);
		} else {
			ig_jr_skip(&r); /* an unknown member */
		}
	}
	CHECK(r.error == NULL, "pull: the object walks without error");
	CHECK(ig_jr_finish(&r), "pull: finish after the object");
	CHECK_INT(seen, 8, "pull: every key is seen");
	CHECK_INT(id, 42, "pull: integer member");
	check_slice(name.ptr, name.len, "x\xc3\xa9", "pull: escaped string decoded", "name");
	CHECK(name.ptr < buf || name.ptr >= r.end, "pull: a decoded string lives in the arena");
	check_slice(plain.ptr, plain.len, "zero copy", "pull: plain string", "plain");
	CHECK(plain.ptr > buf && plain.ptr < r.end, "pull: a string without escapes is a slice of the input");
	CHECK_INT(tags, 2, "pull: array inside an object");
	CHECK(ok && none, "pull: true and null members");
	CHECK(price == 12.5, "pull: double member");
	CHECK_INT(r.depth, 0, "pull: depth back to zero");
}

static void test_pull_arrays(void)
{
	ig_json_reader r = reader_on("[[1,2],[],[[3]],4]", 8);
	int64_t sum = 0;
	int inner = 0;
	ig_json_value n;
	CHECK(ig_jr_array_begin(&r), "pull: array_begin");
	while (ig_jr_array_next(&r)) {
		if (ig_jr_peek(&r) == IG_JN_ARRAY) {
			inner++;
			ig_jr_array_begin(&r);
			while (ig_jr_array_next(&r)) {
				if (ig_jr_peek(&r) == IG_JN_ARRAY) {
					ig_jr_array_begin(&r);
					while (ig_jr_array_next(&r))
						if (ig_jr_number(&r, &n))
							sum += n.i;
				} else if (ig_jr_number(&r, &n)) {
					sum += n.i;
				}
			}
		} else if (ig_jr_number(&r, &n)) {
			sum += n.i;
		}
	}
	CHECK(r.error == NULL && ig_jr_finish(&r), "pull: nested arrays walk without error");
	CHECK_INT(sum, 10, "pull: every number of nested arrays is read");
	CHECK_INT(inner, 3, "pull: inner arrays seen");

	r = reader_on("[ ]", 8);
	CHECK(ig_jr_array_begin(&r) && !ig_jr_array_next(&r) && !r.error && ig_jr_finish(&r),
	      "pull: empty array");
	r = reader_on("{ }", 8);
	ig_str k;
	CHECK(ig_jr_object_begin(&r) && !ig_jr_object_next_key(&r, &k) && !r.error && ig_jr_finish(&r),
	      "pull: empty object");
}

struct pull_error {
	const char *name, *in, *error;
	size_t offset;
};

/* Walks `in` as an object of numbers, or an array of numbers. */
static ig_json_reader pull_numbers(const char *in)
{
	ig_json_reader r = reader_on(in, 2);
	ig_json_value n;
	ig_str k;
	if (ig_jr_peek(&r) == IG_JN_OBJECT) {
		ig_jr_object_begin(&r);
		while (ig_jr_object_next_key(&r, &k))
			ig_jr_number(&r, &n);
	} else {
		ig_jr_array_begin(&r);
		while (ig_jr_array_next(&r))
			if (ig_jr_peek(&r) == IG_JN_ARRAY)
				ig_jr_skip(&r);
			else
				ig_jr_number(&r, &n);
	}
	ig_jr_finish(&r);
	return r;
}

static void test_pull_errors(void)
{
	static const struct pull_error errs[] = {
		{ "trailing comma in object", "{\"a\":1,}", TCOMMA, 7 },
		{ "trailing comma in array", "[1,]", TCOMMA, 3 },
		{ "missing comma in object", "{\"a\":1 \"b\":2}", OBJSEP, 7 },
		{ "missing comma in array", "[1 2]", ARRSEP, 3 },
		{ "leading comma in object", "{,\"a\":1}", KEY, 1 },
		{ "leading comma in array", "[,1]", CHAR_, 1 },
		{ "missing colon", "{\"a\" 1}", COLON, 5 },
		{ "object not closed", "{\"a\":1", EOF_, 6 },
		{ "array not closed", "[1,2", EOF_, 4 },
		{ "wrong type", "[\"x\"]", "number expected", 1 },
		{ "garbage where a number should be", "[?]", CHAR_, 1 },
		{ "depth limit reached by skip", "[[[1]]]", DEPTH, 2 },
		{ "number out of range", "{\"a\":1e999}", RANGE, 5 },
		{ "trailing data", "[1] x", AFTER, 4 },
	};
	char name[160];
	for (size_t i = 0; i < IG_COUNTOF(errs); i++) {
		ig_json_reader r = pull_numbers(errs[i].in);
		snprintf(name, sizeof name, "pull error: %s", errs[i].name);
		check_that(same_error(r.error, errs[i].error) && r.error_offset == errs[i].offset, name,
			   "\"%s\" at %zu, want \"%s\" at %zu", r.error ? r.error : "ok", r.error_offset,
			   errs[i].error, errs[i].offset);
	}

	ig_json_reader r = reader_on("[[[1]]]", 2);
	bool b1 = ig_jr_array_begin(&r), b2 = ig_jr_array_next(&r) && ig_jr_array_begin(&r);
	bool b3 = ig_jr_array_next(&r) && ig_jr_array_begin(&r);
	CHECK(b1 && b2 && !b3 && same_error(r.error, DEPTH) && r.error_offset == 2,
	      "pull: array_begin past max_depth fails");

	r = reader_on("{\"a\":nul}", 8);
	ig_str k;
	bool got = ig_jr_object_begin(&r) && ig_jr_object_next_key(&r, &k);
	CHECK(got && !ig_jr_null(&r) && same_error(r.error, LITERAL) && r.error_offset == 5,
	      "pull: a broken literal is reported where it starts");

	r = reader_on("[true, 1]", 8);
	bool b;
	ig_json_value n;
	ig_jr_array_begin(&r);
	ig_jr_array_next(&r);
	ig_jr_bool(&r, &b);
	ig_jr_array_next(&r);
	bool wrong = !ig_jr_string(&r, &k) && same_error(r.error, "string expected") && r.error_offset == 7;
	CHECK(wrong, "pull: a number where a string is wanted");
	bool sticky = !ig_jr_number(&r, &n) && !ig_jr_array_next(&r) && ig_jr_peek(&r) == IG_JN_ERROR &&
		      !ig_jr_value(&r) && !ig_jr_skip(&r) && !ig_jr_finish(&r) && !ig_jr_fail(&r, "later");
	CHECK(sticky && same_error(r.error, "string expected") && r.error_offset == 7,
	      "pull: after an error every call fails and the first error stays");

	r = reader_on("[1]", 8);
	CHECK(!ig_jr_object_begin(&r) && same_error(r.error, "object expected"), "pull: object_begin on an array");
	r = reader_on("{}", 8);
	CHECK(!ig_jr_array_begin(&r) && same_error(r.error, "array expected"), "pull: array_begin on an object");
	r = reader_on("\"x\"", 8);
	CHECK(!ig_jr_bool(&r, &b) && same_error(r.error, "boolean expected"), "pull: bool on a string");
	r = reader_on("0", 8);
	CHECK(!ig_jr_null(&r) && same_error(r.error, "null expected"), "pull: null on a number");
	ig_jr_init(&r, NULL, 0, &arena, 8);
	CHECK(!ig_jr_value(&r) && same_error(r.error, EOF_) && r.error_offset == 0,
	      "pull: a NULL buffer of length 0 is an empty document");
	r = reader_on("  ", 8);
	CHECK(ig_jr_peek(&r) == IG_JN_END && !r.error, "pull: peek at the end is END, not an error");
	CHECK(!ig_jr_string(&r, &k) && same_error(r.error, EOF_), "pull: reading at the end is an error");
	r = reader_on(" @", 8);
	CHECK(ig_jr_peek(&r) == IG_JN_ERROR && same_error(r.error, CHAR_) && r.error_offset == 1,
	      "pull: peek on a byte that starts no value");
	r = reader_on("[1,2]", 8);
	ig_jr_array_begin(&r);
	ig_jr_array_next(&r);
	CHECK(!ig_jr_fail(&r, "custom") && same_error(r.error, "custom") && r.error_offset == 1,
	      "pull: ig_jr_fail records the caller's message at the current position");

	static const struct { const char *in; enum ig_json_next k; } kinds[] = {
		{ "null", IG_JN_NULL }, { "false", IG_JN_FALSE }, { "true", IG_JN_TRUE },
		{ "-1", IG_JN_NUMBER }, { "7", IG_JN_NUMBER }, { "\"s\"", IG_JN_STRING },
		{ "[", IG_JN_ARRAY }, { "{", IG_JN_OBJECT },
	};
	bool all = true;
	for (size_t i = 0; i < IG_COUNTOF(kinds); i++) {
		r = reader_on(kinds[i].in, 8);
		all &= ig_jr_peek(&r) == kinds[i].k && r.p == r.start;
	}
	CHECK(all, "pull: peek tells every kind by its first byte without consuming it");
}

/* ---- trees ---- */

static ig_json_value *tree(const char *s, ig_json_reader *r)
{
	*r = reader_on(s, 64);
	ig_json_value *v = ig_jr_value(r);
	return ig_jr_finish(r) ? v : NULL;
}

static void test_tree(void)
{
	ig_json_reader r;
	ig_json_value *v = tree("{\"a\":[1,2.5,\"s\\n\",true,false,null,{},[]],\"b\":{\"c\":-7}}", &r);
	CHECK(v && v->type == IG_JSON_OBJECT && v->object.len == 2, "tree: object with two members");
	if (!v)
		return;
	const ig_json_value *a = ig_json_get(v, "a", 1);
	CHECK(a && a->type == IG_JSON_ARRAY && a->array.len == 8, "tree: array member");
	if (a && a->array.len == 8) {
		ig_json_value **it = a->array.items;
		CHECK(it[0]->type == IG_JSON_INT && it[0]->i == 1, "tree: INT element");
		CHECK(it[1]->type == IG_JSON_NUMBER && it[1]->d == 2.5, "tree: NUMBER element");
		check_slice(it[1]->raw.ptr, it[1]->raw.len, "2.5", "tree: a number keeps its literal", "raw");
		CHECK(it[2]->type == IG_JSON_STRING && it[2]->s.len == 2 && memcmp(it[2]->s.ptr, "s\n", 2) == 0,
		      "tree: string element decoded");
		CHECK(it[3]->type == IG_JSON_BOOL && it[3]->b && it[4]->type == IG_JSON_BOOL && !it[4]->b,
		      "tree: booleans");
		CHECK(it[5]->type == IG_JSON_NULL, "tree: null");
		CHECK(it[6]->type == IG_JSON_OBJECT && it[6]->object.len == 0, "tree: empty object");
		CHECK(it[7]->type == IG_JSON_ARRAY && it[7]->array.len == 0, "tree: empty array");
	}
	const ig_json_value *b = ig_json_get(v, "b", 1), *c = ig_json_get(b, "c", 1);
	CHECK(c && c->type == IG_JSON_INT && c->i == -7, "tree: nested member");
	CHECK(ig_json_get(v, "c", 1) == NULL && ig_json_get(a, "a", 1) == NULL && ig_json_get(NULL, "a", 1) == NULL,
	      "ig_json_get: absent key, non-object, NULL");
	CHECK(v->object.members[0].key.len == 1 && v->object.members[0].key.ptr[0] == 'a' &&
		      v->object.members[1].key.ptr[0] == 'b',
	      "tree: members keep document order");
	check_slice(b->raw.ptr, b->raw.len, "{\"c\":-7}", "tree: a container's raw is its text", "raw");

	v = tree(" \"only\" ", &r);
	CHECK(v && v->type == IG_JSON_STRING && v->s.ptr > r.start && v->s.ptr < r.end,
	      "tree: a scalar document; an unescaped string stays a slice");

	/* A pull walk that builds trees for some members. */
	r = reader_on("{\"free\":{\"x\":[1,2]},\"n\":3}", 8);
	ig_str k;
	ig_json_value *free_form = NULL, n = { 0 };
	ig_jr_object_begin(&r);
	while (ig_jr_object_next_key(&r, &k))
		if (key_is(k, "free"))
			free_form = ig_jr_value(&r);
		else
			ig_jr_number(&r, &n);
	CHECK(free_form && free_form->type == IG_JSON_OBJECT && !r.error && ig_jr_finish(&r) &&
		      n.type == IG_JSON_INT && n.i == 3,
	      "tree: ig_jr_value inside a pull walk");

	r = reader_on("[[[[1]]]]", 3);
	ig_jr_array_begin(&r);
	ig_jr_array_next(&r);
	CHECK(!ig_jr_value(&r) && same_error(r.error, DEPTH) && r.error_offset == 3,
	      "tree: depth counts the levels the pull walk opened");

	/* The arena's limit is an error, not a crash. */
	ig_arena small;
	ig_arena_init(&small, &blocks, 256);
	static const char many[] = "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]";
	const char *p = guard_put(&g, many, sizeof many - 1);
	ig_jr_init(&r, p, sizeof many - 1, &small, 8);
	CHECK(!ig_jr_value(&r) && same_error(r.error, "out of memory"), "tree: arena exhaustion is an error");
	ig_arena_reset(&small);
	ig_jr_init(&r, p, sizeof many - 1, NULL, 8);
	CHECK(ig_jr_skip(&r) && ig_jr_finish(&r), "skip: needs no arena");
	ig_jr_init(&r, p, sizeof many - 1, NULL, 8);
	CHECK(!ig_jr_value(&r) && same_error(r.error, "out of memory"), "tree: without an arena, an error");
}

/* A big buffer of many members, for the large-object paths. */
static char *big_object(size_t n, bool dup_at_end, size_t *len, size_t *dup_offset)
{
	char *s = malloc(n * 32 + 64), *d = s;
	*d++ = '{';
	for (size_t i = 0; i < n; i++) {
		if (i == n - 1 && dup_at_end) {
			*dup_offset = (size_t)(d - s);
			d += sprintf(d, "\"k%zu\":%zu", n / 2, i); /* repeats a middle key */
		} else {
			d += sprintf(d, "\"k%zu\":%zu", i, i);
		}
		*d++ = i + 1 < n ? ',' : '}';
	}
	*len = (size_t)(d - s);
	return s;
}

static void test_duplicates_large(void)
{
	struct guard big;
	size_t len, dup = 0;
	char *s = big_object(100000, false, &len, &dup);
	if (!guard_init(&big, 4 << 20)) {
		CHECK(false, "guard mapping");
		return;
	}
	ig_arena a;
	ig_arena_init(&a, &blocks, 64 << 20);
	ig_json_reader r;
	const char *p = guard_put(&big, s, len);
	clock_t t0 = clock();
	ig_jr_init(&r, p, len, &a, 8);
	ig_json_value *v = ig_jr_value(&r);
	double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	CHECK(v && v->type == IG_JSON_OBJECT && v->object.len == 100000 && ig_jr_finish(&r),
	      "duplicates: an object of 100000 distinct keys is accepted");
	/* Pairwise checks would take seconds here (5e9 comparisons). */
	check_that(secs < 1.0, "duplicates: 100000 keys are checked without quadratic time", "%.3f s", secs);
	const ig_json_value *k = ig_json_get(v, "k99999", 6);
	CHECK(k && k->type == IG_JSON_INT && k->i == 99999, "duplicates: the last of 100000 members");
	ig_arena_reset(&a);
	free(s);

	s = big_object(10000, true, &len, &dup);
	p = guard_put(&big, s, len);
	ig_jr_init(&r, p, len, &a, 8);
	check_that(!ig_jr_value(&r) && same_error(r.error, DUPKEY) && r.error_offset == dup,
		   "duplicates: a repeated key among 10000 is found at its second occurrence",
		   "\"%s\" at %zu, want at %zu", r.error ? r.error : "ok", r.error_offset, dup);
	ig_arena_reset(&a);
	free(s);

	/* 17 members: the sorted path, with two repeats; the earlier second
	 * occurrence is reported. */
	static const char seventeen[] = "{\"a\":0,\"b\":0,\"c\":0,\"d\":0,\"e\":0,\"f\":0,\"g\":0,\"h\":0,"
					"\"i\":0,\"j\":0,\"k\":0,\"l\":0,\"m\":0,\"n\":0,\"o\":0,\"h\":1,\"b\":1}";
	struct outcome o = run(seventeen, sizeof seventeen - 1, 8, false);
	check_that(same_error(o.error, DUPKEY) && o.offset == 6 * 15 + 1, "duplicates: sorted path reports the earliest repeat",
		   "\"%s\" at %zu", o.error ? o.error : "ok", o.offset);
	guard_free(&big);
}

static void test_depth_deep(void)
{
	enum { N = 5000 };
	static char deep[2 * N + 1];
	memset(deep, '[', N);
	memset(deep + N, ']', N);
	struct guard big;
	if (!guard_init(&big, sizeof deep)) {
		CHECK(false, "guard mapping");
		return;
	}
	ig_json_reader r;
	const char *p = guard_put(&big, deep, 2 * N);
	ig_arena_reset(&arena);
	ig_jr_init(&r, p, 2 * N, &arena, N);
	CHECK(ig_jr_value(&r) && ig_jr_finish(&r), "depth: 5000 nested arrays build without recursion");
	ig_arena_reset(&arena);
	ig_jr_init(&r, p, 2 * N, &arena, N);
	CHECK(ig_jr_skip(&r) && ig_jr_finish(&r), "depth: 5000 nested arrays skip (kinds spill to the arena)");
	ig_arena_reset(&arena);
	ig_jr_init(&r, p, 2 * N, &arena, N - 1);
	CHECK(!ig_jr_skip(&r) && same_error(r.error, DEPTH) && r.error_offset == N - 1,
	      "depth: one level too many is refused at its bracket");
	/* Alternate objects and arrays past 256 levels: the kind of each
	 * level must survive the spill. */
	char *mixed = malloc(8 * 300 + 1), *d = mixed;
	for (int i = 0; i < 300; i++)
		d += sprintf(d, i % 2 ? "[" : "{\"k\":");
	*d++ = '1';
	for (int i = 299; i >= 0; i--)
		*d++ = i % 2 ? ']' : '}';
	size_t len = (size_t)(d - mixed);
	p = guard_put(&big, mixed, len);
	ig_arena_reset(&arena);
	ig_jr_init(&r, p, len, &arena, 300);
	CHECK(ig_jr_skip(&r) && ig_jr_finish(&r), "depth: objects and arrays alternating 300 deep (skip)");
	ig_arena_reset(&arena);
	ig_jr_init(&r, p, len, &arena, 300);
	CHECK(ig_jr_value(&r) && ig_jr_finish(&r), "depth: objects and arrays alternating 300 deep (tree)");
	free(mixed);
	guard_free(&big);
}

/* ---- numbers ---- */

static ig_json_value num(const char *s)
{
	ig_json_reader r = reader_on(s, 8);
	ig_json_value v = { .type = IG_JSON_NULL };
	if (!ig_jr_number(&r, &v) || !ig_jr_finish(&r))
		v.type = IG_JSON_NULL;
	return v;
}

static void check_int(const char *s, int64_t want)
{
	ig_json_value v = num(s);
	char name[128];
	snprintf(name, sizeof name, "number: %s is INT", s);
	check_that(v.type == IG_JSON_INT && v.i == want, name, "type %d, i %" PRId64, v.type, v.i);
}

static void check_double(const char *s, double want)
{
	ig_json_value v = num(s);
	char name[160];
	snprintf(name, sizeof name, "number: %.60s%s is %a", s, strlen(s) > 60 ? "..." : "", want);
	check_that(v.type == IG_JSON_NUMBER && memcmp(&v.d, &want, sizeof want) == 0, name,
		   "type %d, got %a", v.type, v.type == IG_JSON_NUMBER ? v.d : 0.0);
}

static void test_numbers(void)
{
	check_int("0", 0);
	check_int("-0", 0);
	check_int("42", 42);
	check_int("-42", -42);
	check_int("9223372036854775807", INT64_MAX);
	check_int("-9223372036854775808", INT64_MIN);
	check_int("-9223372036854775807", -INT64_MAX);
	check_int("9007199254740993", 9007199254740993);
	check_int("1000000000000000000", 1000000000000000000);
	check_double("9223372036854775808", 0x1p63);
	check_double("-9223372036854775809", -0x1p63);
	check_double("18446744073709551615", 0x1p64);
	check_double("12345678901234567890123", 1.2345678901234567890123e22);
	check_double("-0.0", -0.0);
	check_double("0.0", 0.0);
	check_double("-0e10", -0.0);
	check_double("1.0", 1.0);
	check_double("1e0", 1.0);
	check_double("0.1", 0.1);
	check_double("0.3", 0.3);
	check_double("12.5", 12.5);
	check_double("-1.5e+10", -1.5e10);
	check_double("1E5", 1e5);
	check_double("1e23", 1e23);
	check_double("1e22", 1e22);
	check_double("8.98846567431158e307", 8.98846567431158e307);
	check_double("2.2250738585072011e-308", 0x0.fffffffffffffp-1022);
	check_double("2.2250738585072012e-308", 0x1p-1022);
	check_double("4.9e-324", 0x1p-1074);
	check_double("2.4703282292062327e-324", 0.0);
	check_double("2.4703282292062328e-324", 0x1p-1074);
	check_double("1e-400", 0.0);
	check_double("-1e-400", -0.0);
	check_double("1.7976931348623157e308", DBL_MAX);
	check_double("1.7976931348623158e308", DBL_MAX);
	check_double("9007199254740993.0", 9007199254740992.0);
	check_double("9007199254740995e0", 9007199254740996.0);
	check_double("9007199254740993.0000000000000000001", 9007199254740994.0);
	check_double("0.1000000000000000000000000000000000000000000000000000000000000000000000000001", 0.1);
	check_double("3.141592653589793238462643383279", 3.141592653589793);
	check_double("123456789e-30", 123456789e-30);
	check_double("0.000001e6", 1.0);
	check_double("100000000000000000000000e-23", 1.0);

	ig_json_value v = num("-12.50e1");
	check_slice(v.raw.ptr, v.raw.len, "-12.50e1", "number: raw keeps the literal", "raw");
	v = num("1e400");
	CHECK(v.type == IG_JSON_NULL, "number: 1e400 is refused by ig_jr_number");
	v = num("1e-400");
	CHECK(v.type == IG_JSON_NUMBER && v.d == 0, "number: 1e-400 underflows to 0");
}

/* ---- strings and UTF-8 ---- */

static void check_string(const char *name, const char *in, const char *want, size_t want_len)
{
	ig_json_reader r = reader_on(in, 8);
	ig_str s = { 0 };
	bool ok = ig_jr_string(&r, &s) && ig_jr_finish(&r);
	check_that(ok && s.len == want_len && memcmp(s.ptr, want, want_len) == 0, name,
		   "%s; got %zu bytes", r.error ? r.error : "ok", s.len);
}

static void test_strings(void)
{
	check_string("string: simple escapes decode", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t", 8);
	check_string("string: \\u0000 decodes to a NUL byte", "\"a\\u0000b\"", "a\0b", 3);
	check_string("string: \\u007f is one byte", "\"\\u007F\"", "\x7f", 1);
	check_string("string: \\u0080 is two bytes", "\"\\u0080\"", "\xc2\x80", 2);
	check_string("string: \\u07ff is two bytes", "\"\\u07ff\"", "\xdf\xbf", 2);
	check_string("string: \\u0800 is three bytes", "\"\\u0800\"", "\xe0\xa0\x80", 3);
	check_string("string: \\uffff is three bytes", "\"\\uFfFf\"", "\xef\xbf\xbf", 3);
	check_string("string: surrogate pair U+1F600", "\"\\uD83D\\uDE00\"", "\xf0\x9f\x98\x80", 4);
	check_string("string: surrogate pair U+10000", "\"\\ud800\\udc00\"", "\xf0\x90\x80\x80", 4);
	check_string("string: surrogate pair U+10FFFF", "\"\\udbff\\udfff\"", "\xf4\x8f\xbf\xbf", 4);
	check_string("string: escapes between plain runs",
		     "\"plain text then \\n and \\u00e9 then more plain text\"",
		     "plain text then \n and \xc3\xa9 then more plain text", 45);
	check_string("string: raw UTF-8 passes through", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
		     "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9);

	CHECK_INT(ig_utf8_length("", 0), 0, "utf8_length: empty");
	CHECK_INT(ig_utf8_length("abc", 3), 3, "utf8_length: ASCII");
	CHECK_INT(ig_utf8_length("\xc3\xa9", 2), 1, "utf8_length: two-byte sequence");
	CHECK_INT(ig_utf8_length("\xe2\x82\xac", 3), 1, "utf8_length: three-byte sequence");
	CHECK_INT(ig_utf8_length("\xf0\x9f\x98\x80", 4), 1, "utf8_length: four-byte sequence");
	CHECK_INT(ig_utf8_length("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z", 11), 5, "utf8_length: mixed");
	CHECK_INT(ig_utf8_length("a\0b", 3), 3, "utf8_length: NUL is a code point");
	/* Long mixed strings cross the eight-byte steps at every alignment:
	   compare with a byte-at-a-time count. */
	static const char *const pieces[] = { "a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\x7f" };
	char buf[512];
	bool agree = true;
	uint32_t seed = 7;
	for (int round = 0; round < 200 && agree; round++) {
		size_t n = 0, cps = 0;
		while (n < sizeof buf - 4) {
			seed = seed * 1103515245u + 12345u;
			const char *p = pieces[(seed >> 16) % 5];
			size_t k = strlen(p);
			if ((seed >> 8) % 61 == 0)
				break;
			memcpy(buf + n, p, k);
			n += k;
			cps++;
		}
		for (size_t off = 0; off < 8 && off <= n; off++) {
			size_t want = 0;
			for (size_t i = off; i < n; i++)
				want += ((unsigned char)buf[i] & 0xc0) != 0x80;
			if (ig_utf8_length(buf + off, n - off) != want)
				agree = false;
		}
		if (ig_utf8_length(buf, n) != cps)
			agree = false;
	}
	CHECK(agree, "utf8_length: long mixed strings at every alignment");
}

/* ---- equality ---- */

static ig_json_value *parse_in(ig_arena *a, const char *s)
{
	ig_json_reader r;
	ig_jr_init(&r, s, strlen(s), a, 64);
	ig_json_value *v = ig_jr_value(&r);
	return ig_jr_finish(&r) ? v : NULL;
}

static void test_equal(void)
{
	static const struct { const char *a, *b; bool eq; } pairs[] = {
		{ "1", "1.0", true },
		{ "1", "1e0", true },
		{ "1", "1.5", false },
		{ "0", "-0.0", true },
		{ "-0", "0", true },
		{ "9223372036854775807", "9223372036854775808", false },
		{ "9223372036854775807", "9223372036854775807.0", false }, /* the double is 2^63 */
		{ "-9223372036854775808", "-9223372036854775808.0", true },
		{ "9007199254740992", "9007199254740992.0", true },
		{ "9007199254740991", "9007199254740992.0", false },
		{ "1.5", "15e-1", true },
		{ "0.1", "0.2", false },
		{ "\"a\"", "\"\\u0061\"", true },
		{ "\"a\"", "\"b\"", false },
		{ "\"a\"", "\"ab\"", false },
		{ "\"\"", "\"\"", true },
		{ "null", "null", true },
		{ "null", "false", false },
		{ "true", "true", true },
		{ "true", "false", false },
		{ "true", "1", false },
		{ "\"1\"", "1", false },
		{ "[]", "{}", false },
		{ "[]", "[]", true },
		{ "[1,2]", "[1,2]", true },
		{ "[1,2]", "[2,1]", false },
		{ "[1,2]", "[1,2,3]", false },
		{ "[1,[2]]", "[1.0,[2.0]]", true },
		{ "{}", "{}", true },
		{ "{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}", true },
		{ "{\"a\":1,\"b\":2}", "{\"a\":1,\"b\":3}", false },
		{ "{\"a\":1}", "{\"a\":1,\"b\":2}", false },
		{ "{\"a\":1}", "{\"b\":1}", false },
		{ "{\"a\":{\"x\":[1,{\"y\":null}]}}", "{\"a\":{\"x\":[1.0,{\"y\":null}]}}", true },
		{ "{\"a\":{\"x\":[1,{\"y\":null}]}}", "{\"a\":{\"x\":[1,{\"y\":false}]}}", false },
	};
	ig_arena a;
	ig_arena_init(&a, &blocks, 1 << 20);
	char name[200];
	for (size_t i = 0; i < IG_COUNTOF(pairs); i++) {
		ig_json_value *x = parse_in(&a, pairs[i].a), *y = parse_in(&a, pairs[i].b);
		bool e1 = x && y && ig_json_equal(x, y), e2 = x && y && ig_json_equal(y, x);
		snprintf(name, sizeof name, "equal: %s %s %s", pairs[i].a, pairs[i].eq ? "==" : "!=", pairs[i].b);
		check_that(x && y && e1 == pairs[i].eq && e2 == pairs[i].eq, name, "parsed %d %d, got %d %d",
			   x != NULL, y != NULL, e1, e2);
	}
	ig_json_value *x = parse_in(&a, "[1]");
	CHECK(ig_json_equal(x, x) && !ig_json_equal(x, NULL) && ig_json_equal(NULL, NULL), "equal: identity and NULL");
	ig_arena_reset(&a);
}

/* ---- the JSON-Schema-Test-Suite as a corpus ---- */

static int json_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return n > 5 && strcmp(e->d_name + n - 5, ".json") == 0;
}

/* Parses one suite file (and a variant with a repeated key) flush against
 * the guard page. */
static void suite_file(const char *dir, const char *rel, const char *file)
{
	char path[1024], name[512];
	snprintf(path, sizeof path, "%s/%s%s", dir, rel, file);
	size_t len;
	char *text = read_file(path, &len);
	struct guard big;
	if (!text || !guard_init(&big, len + 16)) {
		snprintf(name, sizeof name, "suite: %s%s is readable", rel, file);
		CHECK(false, name);
		free(text);
		return;
	}
	ig_arena a;
	ig_arena_init(&a, &blocks, 64 << 20);
	ig_json_reader r;
	const char *p = guard_put(&big, text, len);
	ig_jr_init(&r, p, len, &a, 64);
	ig_json_value *v = ig_jr_value(&r);
	bool ok = v && ig_jr_finish(&r);
	ig_jr_init(&r, p, len, &a, 64);
	bool skipped = ig_jr_skip(&r) && ig_jr_finish(&r);
	snprintf(name, sizeof name, "suite: %s%s parses (tree and skip)", rel, file);
	check_that(ok && skipped, name, "%s at byte %zu", r.error ? r.error : "ok", r.error_offset);
	ig_arena_reset(&a);

	/* The same text with "x" twice in its first object. */
	const char *brace = memchr(text, '{', len);
	if (brace) {
		static const char extra[] = "\"x\":0,\"x\":1,";
		size_t at = (size_t)(brace - text) + 1, n = len + sizeof extra - 1;
		char *dup = malloc(n);
		memcpy(dup, text, at);
		memcpy(dup + at, extra, sizeof extra - 1);
		memcpy(dup + at + sizeof extra - 1, text + at, len - at);
		guard_free(&big);
		guard_init(&big, n);
		p = guard_put(&big, dup, n);
		ig_jr_init(&r, p, n, &a, 64);
		bool refused = !ig_jr_value(&r) && same_error(r.error, DUPKEY) && r.error_offset == at + 6;
		snprintf(name, sizeof name, "suite: %s%s with a repeated key is refused", rel, file);
		check_that(refused, name, "%s at %zu", r.error ? r.error : "ok", r.error_offset);
		ig_arena_reset(&a);
		free(dup);
	}
	guard_free(&big);
	free(text);
}

static void test_suite(const char *dir)
{
	static const char *const subdirs[] = { "", "optional/", "optional/format/" };
	size_t files = 0;
	for (size_t s = 0; s < IG_COUNTOF(subdirs); s++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, subdirs[s]);
		struct dirent **list;
		int n = scandir(path, &list, json_file, alphasort);
		if (n < 0) {
			if (s == 0)
				break;
			continue;
		}
		for (int i = 0; i < n; i++) {
			suite_file(dir, subdirs[s], list[i]->d_name);
			free(list[i]);
			files++;
		}
		free(list);
	}
	if (files == 0) {
		char name[1200];
		snprintf(name, sizeof name, "suite not found at %s", dir);
		check_that(false, name, NULL);
	}
}

int main(int argc, char **argv)
{
	ig_pool_init(&blocks, 16384, 16, 100000);
	ig_arena_init(&arena, &blocks, 16 << 20);
	if (!guard_init(&g, 4096)) {
		perror("guard_init");
		return 2;
	}
	test_table();
	test_prefixes();
	test_pull_object();
	test_pull_arrays();
	test_pull_errors();
	test_tree();
	test_duplicates_large();
	test_depth_deep();
	test_numbers();
	test_strings();
	test_equal();
	const char *suite = suite_dir(argc, argv);
	if (suite)
		test_suite(suite);
	else
		check_skip("suite: every file of the JSON Schema Test Suite parses", SUITE_SKIP);
	ig_arena_reset(&arena);
	guard_free(&g);
	return check_done();
}
