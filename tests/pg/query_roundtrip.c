/* query_roundtrip: the code schemac --queries generates for the schemac
 * suite's test queries (tools/schemac/test/queries), run against a real
 * PostgreSQL through the callback form (ig_pg_pool_query): every mapped
 * type's parameter built by db_PutEverything_params, stored, read back
 * twice (a statement's first execution gets text results, the next binary)
 * and decoded by db_GetEverything_decode; NULLs; extremes; timestamps
 * given with zones; the rows of `-- returns: Item` in Item's struct (json
 * into a free-form property and an array of numbers too; jsonb into an
 * array of objects and a nullable object through api.c's decoders, JSON
 * null, and values that do not fit the schema: those rows do not decode).
 * Prints one JSON line per decoded row (tools/schemac/test/run compares
 * them with queries/roundtrip.expect). DATABASE_URL names a database where
 * the suite's migrations ran. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/runtime/arena.h"
#include "kernel/runtime/config.h"
#include "kernel/runtime/loop.h"
#include "net/pg/settings.h"
#include "net/tls/tls.h"
#include "queries.h"

static struct ig_loop loop;
static struct ig_pool blocks;
static ig_arena arena;
static struct ig_pg_pool *pool;
static int failures;

#define S(lit) IG_STR(lit)
static const ig_str none = { NULL, 0 };

struct step {
	const char *sql;
	ig_pg_value p[17];
	size_t np;
	void (*then)(const ig_pg_result *res);
};
static struct step steps[48];
static size_t nsteps, at;

static void put_text(ig_str s, bool hex)
{
	putchar('"');
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		if (hex)
			printf("%02x", c);
		else if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void put_str(const char *key, bool has, ig_str s, bool hex)
{
	printf(",\"%s\":", key);
	if (has)
		put_text(s, hex);
	else
		printf("null");
}

static void put_elem(const char *sep, ig_str s)
{
	printf("%s", sep);
	put_text(s, false);
}

/* An array member as JSON: each element by fmt's printer. */
#define PUT_ARRAY(key, has, arr, print)                                  \
	do {                                                             \
		printf(",\"%s\":", key);                                  \
		if (!(has)) {                                            \
			printf("null");                                  \
			break;                                           \
		}                                                        \
		printf("[");                                             \
		for (size_t j = 0; j < (arr).len; j++) {                 \
			if (j)                                           \
				printf(",");                             \
			print((arr).items[j]);                           \
		}                                                        \
		printf("]");                                             \
	} while (0)
static void p_bool(bool b) { printf(b ? "true" : "false"); }
static void p_int(int64_t i) { printf("%" PRId64, i); }
static void p_f4(float f) { printf("%.9g", (double)f); }
static void p_f8(double f) { printf("%.17g", f); }
static void p_str(ig_str s) { put_text(s, false); }
static void p_hex(ig_str s) { put_text(s, true); }

static void print_arrays(const ig_pg_result *res)
{
	struct db_GetArrays_row r;
	if (!db_GetArrays_decode(res, 0, &arena, &r)) {
		printf("{\"decode\":false}\n");
		return;
	}
	printf("{\"k\":%" PRId32, r.k);
	PUT_ARRAY("b", r.has_b, r.b, p_bool);
	PUT_ARRAY("i2", r.has_i2, r.i2, p_int);
	PUT_ARRAY("i4", r.has_i4, r.i4, p_int);
	PUT_ARRAY("i8", r.has_i8, r.i8, p_int);
	PUT_ARRAY("f4", r.has_f4, r.f4, p_f4);
	PUT_ARRAY("f8", r.has_f8, r.f8, p_f8);
	PUT_ARRAY("n", r.has_n, r.n, p_str);
	PUT_ARRAY("t", r.has_t, r.t, p_str);
	PUT_ARRAY("vc", r.has_vc, r.vc, p_str);
	PUT_ARRAY("by", r.has_by, r.by, p_hex);
	PUT_ARRAY("u", r.has_u, r.u, p_str);
	PUT_ARRAY("d", r.has_d, r.d, p_str);
	PUT_ARRAY("ts", r.has_ts, r.ts, p_str);
	PUT_ARRAY("tz", r.has_tz, r.tz, p_str);
	PUT_ARRAY("j", r.has_j, r.j, p_str);
	PUT_ARRAY("jb", r.has_jb, r.jb, p_str);
	printf("}\n");
}

static void print_everything(const ig_pg_result *res)
{
	struct db_GetEverything_row r;
	if (!db_GetEverything_decode(res, 0, &arena, &r)) {
		printf("{\"decode\":false}\n");
		failures++;
		return;
	}
	printf("{\"k\":%" PRId32, r.k);
	printf(",\"b\":%s", r.has_b ? (r.b ? "true" : "false") : "null");
	if (r.has_i2) printf(",\"i2\":%d", r.i2); else printf(",\"i2\":null");
	if (r.has_i4) printf(",\"i4\":%" PRId32, r.i4); else printf(",\"i4\":null");
	if (r.has_i8) printf(",\"i8\":%" PRId64, r.i8); else printf(",\"i8\":null");
	if (r.has_f4) printf(",\"f4\":%.9g", (double)r.f4); else printf(",\"f4\":null");
	if (r.has_f8) printf(",\"f8\":%.17g", r.f8); else printf(",\"f8\":null");
	put_str("n", r.has_n, r.n, false);
	put_str("t", r.has_t, r.t, false);
	put_str("vc", r.has_vc, r.vc, false);
	put_str("by", r.has_by, r.by, true);
	put_str("u", r.has_u, r.u, false);
	put_str("d", r.has_d, r.d, false);
	put_str("ts", r.has_ts, r.ts, false);
	put_str("tz", r.has_tz, r.tz, false);
	put_str("j", r.has_j, r.j, false);
	put_str("jb", r.has_jb, r.jb, false);
	printf("}\n");
}

static void print_affected(const ig_pg_result *res)
{
	printf("{\"affected\":%" PRIu64 "}\n", res->affected);
}

static void print_items(const ig_pg_result *res)
{
	for (uint32_t i = 0; i < res->rows; i++) {
		struct Item it;
		if (!db_ListItems_decode(res, i, &arena, &it)) {
			printf("{\"decode\":false}\n");
			failures++;
			continue;
		}
		printf("{\"id\":%" PRId64, it.id);
		put_str("name", true, it.name, false);
		put_str("uid", true, it.uid, false);
		put_str("made", true, it.made, false);
		put_str("note", it.has_note, it.note, false);
		printf(",\"tags\":");
		if (!it.has_tags)
			printf("null");
		for (size_t j = 0; it.has_tags && j <= it.tags.len; j++)
			if (j == it.tags.len)
				printf("%s]", j ? "" : "[");
			else
				put_elem(j ? "," : "[", it.tags.items[j]);
		printf(",\"scores\":[");
		for (size_t j = 0; j < it.scores.len; j++)
			printf("%s%" PRId64, j ? "," : "", it.scores.items[j]);
		printf("]");
		/* meta: free-form, the tree (its type and its text as stored) */
		if (it.has_meta)
			printf(",\"meta\":{\"type\":%d,\"raw\":%.*s}", (int)it.meta->type, (int)it.meta->raw.len,
			       it.meta->raw.ptr);
		else
			printf(",\"meta\":null");
		PUT_ARRAY("ratios", it.has_ratios, it.ratios, p_f8);
		/* parts and spot: jsonb decoded into Item's structs */
		printf(",\"parts\":");
		if (!it.has_parts)
			printf("null");
		for (size_t j = 0; it.has_parts && j <= it.parts.len; j++)
			if (j == it.parts.len)
				printf("%s]", j ? "" : "[");
			else if (it.parts.items[j].has_a)
				put_elem(j ? ",{\"a\":" : "[{\"a\":", it.parts.items[j].a), printf("}");
			else
				printf("%s{}", j ? "," : "[");
		if (!it.has_spot || it.null_spot)
			printf(",\"spot\":%s", it.has_spot ? "\"json null\"" : "null");
		else if (it.spot.has_label)
			printf(",\"spot\":{\"x\":%" PRId64 ",\"label\":\"%.*s\"}", it.spot.x, (int)it.spot.label.len,
			       it.spot.label.ptr);
		else
			printf(",\"spot\":{\"x\":%" PRId64 "}", it.spot.x);
		printf("}\n");
	}
}

/* Rows whose JSON does not fit Item: none decodes. */
static void print_misfits(const ig_pg_result *res)
{
	for (uint32_t i = 0; i < res->rows; i++) {
		struct Item it;
		bool ok = db_ListItems_decode(res, i, &arena, &it);
		printf("{\"misfit\":%u,\"decode\":%s}\n", i, ok ? "true" : "false");
		failures += ok;
	}
}

/* api.c's one operation (linked for its JSON decoders): never called. */
int getItem(ig_ctx *ctx, const struct getItem_in *in, struct getItem_out *out)
{
	(void)ctx, (void)in, (void)out;
	return 500;
}

static void run_next(void);

static void on_done(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct step *s = arg;
	if (err) {
		printf("{\"error\":\"%s\",\"sqlstate\":\"%s\",\"message\":\"%.*s\"}\n", ig_pg_error_name(err->kind),
		       err->sqlstate, (int)err->message.len, err->message.ptr);
		failures++;
	} else if (s->then) {
		s->then(res);
	}
	run_next();
}

static void run_next(void)
{
	if (at == nsteps) {
		loop.running = false;
		return;
	}
	struct step *s = &steps[at++];
	ig_pg_pool_query(pool, &arena, s->sql, s->p, s->np, on_done, s);
}

static struct step *step(const char *sql, size_t np, void (*then)(const ig_pg_result *))
{
	struct step *s = &steps[nsteps++];
	s->sql = sql;
	s->np = np;
	s->then = then;
	return s;
}

static void read_back(int32_t k)
{
	for (int twice = 0; twice < 2; twice++)
		db_GetEverything_params(step(db_GetEverything_sql, db_GetEverything_nparams, print_everything)->p, k);
}

int main(void)
{
	static const struct ig_settings *const parts[] = { &ig_pg_settings, &ig_tls_trust_settings };
	char *no_args[] = { "query_roundtrip", NULL };
	const struct ig_config_args env_only = { .argc = 1, .argv = no_args, .name = "query_roundtrip", .version = "0" };
	if (ig_config_parse(parts, IG_COUNTOF(parts), &env_only) != IG_CONFIG_OK)
		return 2;
	if (ig_loop_init(&loop, 0) != 0)
		return 1;
	ig_pool_init(&blocks, 16 * 1024, 16, 1u << 16);
	ig_arena_init(&arena, &blocks, (size_t)1 << 28);
	ig_clock_update(&loop.clock);
	pool = ig_pg_core_pool(&loop);

	/* 1: extremes, text with quotes and a newline, bytes with NUL and
	 * 0xff, an upper-case uuid, timestamps with zones, json kept as
	 * written, jsonb normalised. */
	db_PutEverything_params(step(db_PutEverything_sql, db_PutEverything_nparams, NULL)->p, 1, true, INT16_MIN,
				INT32_MAX, INT64_MIN, 3.40282347e38f, 1.7976931348623157e308,
				S("-123456789012345678901234567890.000000000000000000001"), S("h\xc3\xa9llo \"quoted\"\n"),
				S("varchar"), (ig_str){ "\0\xff\x01z", 4 }, S("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"),
				S("2024-02-29"), S("1999-12-31T23:59:59.999999"), S("2024-02-29T13:05:07.25+02:00"),
				S("{\"a\": [1, 2]}"), S("{\"b\": 1, \"a\": [1,2]}"));
	read_back(1);
	/* 2: every column NULL (strings by a NULL ptr; the rest by replacing
	 * the built value, as callback-style code may). */
	struct step *s = step(db_PutEverything_sql, db_PutEverything_nparams, NULL);
	db_PutEverything_params(s->p, 2, false, 0, 0, 0, 0, 0, none, none, none, none, none, none, none, none, none,
				none);
	s->p[1] = ig_pg_null(IG_PG_BOOL);
	s->p[2] = ig_pg_null(IG_PG_INT2);
	s->p[3] = ig_pg_null(IG_PG_INT4);
	s->p[4] = ig_pg_null(IG_PG_INT8);
	s->p[5] = ig_pg_null(IG_PG_FLOAT4);
	s->p[6] = ig_pg_null(IG_PG_FLOAT8);
	read_back(2);
	/* 3: the other ends: tiny and huge numbers, NaN, infinities, the
	 * first and last years, an empty string and empty bytes. */
	db_PutEverything_params(step(db_PutEverything_sql, db_PutEverything_nparams, NULL)->p, 3, false, INT16_MAX,
				INT32_MIN, INT64_MAX, -1.17549435e-38f, 4.9406564584124654e-324,
				S("0.0000000000000000000000000000001"), S(""), S(""), S(""),
				S("00000000-0000-0000-0000-000000000000"), S("0001-01-01"), S("infinity"),
				S("-infinity"), S("null"), S("[]"));
	read_back(3);
	db_PutEverything_params(step(db_PutEverything_sql, db_PutEverything_nparams, NULL)->p, 4, true, -1, -1, -1,
				NAN, -INFINITY, S("NaN"), S("x"), S("y"), S("\\"), S("ffffffff-ffff-ffff-ffff-ffffffffffff"),
				S("9999-12-31"), S("9999-12-31T23:59:59.999999"), S("1970-01-01T00:00:00-15:59"),
				S("\"s\""), S("1.5e3"));
	read_back(4);
	/* Arrays of every mapped type: extremes, quoting, empty, NULL. */
	static const bool bs[] = { true, false };
	static const int16_t i2s[] = { INT16_MIN, 0, INT16_MAX };
	static const int32_t i4s[] = { INT32_MIN, INT32_MAX };
	static const int64_t i8s[] = { INT64_MIN, -1, INT64_MAX };
	static const float f4s[] = { 1.5f, -0.0f, INFINITY };
	static const double f8s[] = { 0.1, NAN, -INFINITY, 4.9406564584124654e-324 };
	static const ig_str ns[] = { S("-1.000000000000000000001"), S("NaN") };
	static const ig_str ts_[] = { S("a\"b\\c"), S(""), S("NULL"), S("x, {y}") };
	static const ig_str vcs[] = { S("v") };
	static const ig_str bys[] = { { "\0\xff", 2 }, { "", 0 } };
	static const ig_str us[] = { S("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11") };
	static const ig_str ds[] = { S("2024-02-29"), S("infinity") };
	static const ig_str tss[] = { S("1999-12-31T23:59:59.999999") };
	static const ig_str tzs[] = { S("2024-02-29T13:05:07.25+02:00"), S("-infinity") };
	static const ig_str js[] = { S("{\"a\": [1, \"}\"]}") };
	static const ig_str jbs[] = { S("{\"b\": 1, \"a\": \"\\\"q\\\"\"}"), S("[]") };
#define A(arr) { (arr), IG_COUNTOF(arr) }
	if (!db_PutArrays_params(step(db_PutArrays_sql, db_PutArrays_nparams, NULL)->p, &arena, 1,
				 (struct db_array_bool)A(bs), (struct db_array_int16)A(i2s), (struct db_array_int32)A(i4s),
				 (struct db_array_int64)A(i8s), (struct db_array_float)A(f4s), (struct db_array_double)A(f8s),
				 (struct db_array_str)A(ns), (struct db_array_str)A(ts_), (struct db_array_str)A(vcs),
				 (struct db_array_str)A(bys), (struct db_array_str)A(us), (struct db_array_str)A(ds),
				 (struct db_array_str)A(tss), (struct db_array_str)A(tzs), (struct db_array_str)A(js),
				 (struct db_array_str)A(jbs)))
		return 1;
	db_GetArrays_params(step(db_GetArrays_sql, db_GetArrays_nparams, print_arrays)->p, 1);
	db_GetArrays_params(step(db_GetArrays_sql, db_GetArrays_nparams, print_arrays)->p, 1);
	/* NULL arrays (items NULL), and empty ones (items set, len 0). */
	static const bool no_b[1];
	static const ig_str no_s[1];
	if (!db_PutArrays_params(step(db_PutArrays_sql, db_PutArrays_nparams, NULL)->p, &arena, 2,
				 (struct db_array_bool){ NULL, 0 }, (struct db_array_int16){ NULL, 0 },
				 (struct db_array_int32){ NULL, 0 }, (struct db_array_int64){ NULL, 0 },
				 (struct db_array_float){ NULL, 0 }, (struct db_array_double){ NULL, 0 },
				 (struct db_array_str){ NULL, 0 }, (struct db_array_str){ no_s, 0 },
				 (struct db_array_str){ NULL, 0 }, (struct db_array_str){ NULL, 0 },
				 (struct db_array_str){ NULL, 0 }, (struct db_array_str){ NULL, 0 },
				 (struct db_array_str){ NULL, 0 }, (struct db_array_str){ NULL, 0 },
				 (struct db_array_str){ NULL, 0 }, (struct db_array_str){ no_s, 0 }))
		return 1;
	(void)no_b;
	db_GetArrays_params(step(db_GetArrays_sql, db_GetArrays_nparams, print_arrays)->p, 2);
	/* A NULL element (a string whose ptr is NULL) is stored; the decoder
	 * refuses to read it back, as its C type has no NULL. */
	static const ig_str with_null[] = { S("a"), { NULL, 0 } };
	if (!db_PutArrays_params(step(db_PutArrays_sql, db_PutArrays_nparams, NULL)->p, &arena, 3,
				 (struct db_array_bool){ NULL, 0 }, (struct db_array_int16){ NULL, 0 },
				 (struct db_array_int32){ NULL, 0 }, (struct db_array_int64){ NULL, 0 },
				 (struct db_array_float){ NULL, 0 }, (struct db_array_double){ NULL, 0 },
				 (struct db_array_str){ NULL, 0 }, (struct db_array_str)A(with_null),
				 (struct db_array_str){ NULL, 0 }, (struct db_array_str){ NULL, 0 },
				 (struct db_array_str){ NULL, 0 }, (struct db_array_str){ NULL, 0 },
				 (struct db_array_str){ NULL, 0 }, (struct db_array_str){ NULL, 0 },
				 (struct db_array_str){ NULL, 0 }, (struct db_array_str){ NULL, 0 }))
		return 1;
	db_GetArrays_params(step(db_GetArrays_sql, db_GetArrays_nparams, print_arrays)->p, 3);
	/* Item, through `-- returns: Item`: uuid and date-time as strings,
	 * text[] into Item's tags, int4[] into its integer scores. */
	static const ig_str tags[] = { S("x"), S("y z") };
	static const int32_t scores[] = { 3, -4 };
	if (!db_AddItem_params(step(db_AddItem_sql, db_AddItem_nparams, NULL)->p, &arena, S("first"),
			       S("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), S("2024-01-02T03:04:05+01:00"), S("a note"),
			       (struct db_array_str)A(tags), (struct db_array_int32)A(scores),
			       S("{\"k\": [1, {\"x\": null}], \"s\": \"\\u00e9\"}"), S("[1, 2.5, -1e-3]"),
			       S("[{\"a\": \"x\"}, {\"b\": 1}, {\"a\": \"y\", \"c\": [2]}]"), S("{\"x\": 5, \"label\": \"here\"}")) ||
	    !db_AddItem_params(step(db_AddItem_sql, db_AddItem_nparams, NULL)->p, &arena, S("second"),
			       S("b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), S("2024-01-02T03:04:05.5Z"), none,
			       (struct db_array_str){ NULL, 0 }, (struct db_array_int32){ scores, 0 }, S("7"), S("[]"), none,
			       S("null")))
		return 1;
	db_Rename_params(step(db_Rename_sql, db_Rename_nparams, print_affected)->p, 2, S("second, renamed"));
	/* twice: text results, then binary (jsonb's version byte) */
	db_ListItems_params(step(db_ListItems_sql, db_ListItems_nparams, print_items)->p, S("%"), 10, 0);
	db_ListItems_params(step(db_ListItems_sql, db_ListItems_nparams, print_items)->p, S("%"), 10, 0);
	db_ListItems_params(step(db_ListItems_sql, db_ListItems_nparams, print_items)->p, S("s%"), 10, 0);
	/* JSON that does not fit Item: an item of the wrong type, a required
	 * member missing, a string over maxLength, not an array. */
	static const char *const misfits[][2] = {
		{ "[{\"a\": 1}]", "{\"x\": 1}" },
		{ "[]", "{\"label\": \"no x\"}" },
		{ "[]", "{\"x\": 1, \"label\": \"too long a label\"}" },
		{ "{\"a\": \"x\"}", "null" },
	};
	for (size_t i = 0; i < sizeof misfits / sizeof *misfits; i++) {
		static char names[4][8];
		char *name = names[i];
		snprintf(name, sizeof names[i], "bad %zu", i);
		if (!db_AddItem_params(step(db_AddItem_sql, db_AddItem_nparams, NULL)->p, &arena,
				       (ig_str){ name, strlen(name) }, S("c0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
				       S("2024-01-02T03:04:05Z"), none, (struct db_array_str){ NULL, 0 },
				       (struct db_array_int32){ scores, 0 }, none, none,
				       (ig_str){ misfits[i][0], strlen(misfits[i][0]) },
				       (ig_str){ misfits[i][1], strlen(misfits[i][1]) }))
			return 1;
	}
	db_ListItems_params(step(db_ListItems_sql, db_ListItems_nparams, print_misfits)->p, S("bad%"), 10, 0);
	run_next();
	ig_loop_run(&loop);
	return failures ? 1 : 0;
}
