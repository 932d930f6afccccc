/* query_roundtrip: the code schemac --queries generates for the schemac
 * suite's test queries (tools/schemac/test/queries), run against a real
 * PostgreSQL through the callback form (ig_pg_pool_query): every mapped
 * type's parameter built by db_PutEverything_params, stored, read back
 * twice (a statement's first execution gets text results, the next binary)
 * and decoded by db_GetEverything_decode; NULLs; extremes; timestamps
 * given with zones; the rows of `-- returns: Item` in Item's struct.
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
static struct step steps[32];
static size_t nsteps, at;

static void put_str(const char *key, bool has, ig_str s, bool hex)
{
	printf(",\"%s\":", key);
	if (!has) {
		printf("null");
		return;
	}
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
		printf("}\n");
	}
}

static void print_affected(const ig_pg_result *res)
{
	printf("{\"affected\":%" PRIu64 "}\n", res->affected);
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
	/* Item, through `-- returns: Item`: uuid and date-time as strings. */
	db_AddItem_params(step(db_AddItem_sql, db_AddItem_nparams, NULL)->p, S("first"),
			  S("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), S("2024-01-02T03:04:05+01:00"), S("a note"));
	db_AddItem_params(step(db_AddItem_sql, db_AddItem_nparams, NULL)->p, S("second"),
			  S("b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), S("2024-01-02T03:04:05.5Z"), none);
	db_Rename_params(step(db_Rename_sql, db_Rename_nparams, print_affected)->p, 2, S("second, renamed"));
	db_ListItems_params(step(db_ListItems_sql, db_ListItems_nparams, print_items)->p, S("%"), 10, 0);
	db_ListItems_params(step(db_ListItems_sql, db_ListItems_nparams, print_items)->p, S("s%"), 10, 0);
	run_next();
	ig_loop_run(&loop);
	return failures ? 1 : 0;
}
