/* TechEmpower's test types by its rules: /plaintext, and /db, /queries,
 * /updates and /fortunes over schemas/queries/techempower.sql (the
 * generated db_* of queries.h), written top to bottom. The reads of one
 * request start together (ig_pg_send_read: they share a Sync with other
 * requests' reads) and the handler waits for all (ig_wait_all). A database
 * error is answered by ig_pg_respond_error (503/409/500 problem+json). */
#include "api.h"
#include "queries.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define WORLD_ROWS 10000
#define MAX_QUERIES 500

/* 1..WORLD_ROWS from a per-core xorshift64* (each core is one thread, so
 * no lock), seeded once per core from the kernel. */
static _Thread_local uint64_t te_rng;

static int32_t random_world_number(void)
{
	if (!te_rng) {
		if (getrandom(&te_rng, sizeof te_rng, GRND_NONBLOCK) != sizeof te_rng || !te_rng)
			te_rng = 0x9e3779b97f4a7c15u ^ (uint64_t)(uintptr_t)&te_rng;
	}
	te_rng ^= te_rng >> 12;
	te_rng ^= te_rng << 25;
	te_rng ^= te_rng >> 27;
	return (int32_t)((te_rng * 0x2545f4914f6cdd1du >> 32) % WORLD_ROWS) + 1;
}

/* ?queries=: an integer clamped to 1..MAX_QUERIES; absent, empty or not
 * an integer is 1 (the rule of the queries and updates tests). strtol
 * saturates; a value past the buffer is read as far as it goes. */
static size_t queries_count(bool has, ig_str s)
{
	char buf[24] = "", *end;
	if (has && s.len)
		memcpy(buf, s.ptr, s.len < sizeof buf ? s.len : sizeof buf - 1);
	long n = strtol(buf, &end, 10);
	if (*end || end == buf || n < 1)
		return 1;
	return n > MAX_QUERIES ? MAX_QUERIES : (size_t)n;
}

int getPlaintext(ig_ctx *ctx, const struct getPlaintext_in *in, struct getPlaintext_out *out)
{
	(void)in;
	ig_add_header(ctx, "Server", IG_STR("ingot")); /* TechEmpower asks every response for it */
	out->r200 = IG_STR("Hello, World!");
	return 200;
}

/* ---- /db, /queries, /updates: n reads of random rows at once ---- */

/* Reads n random rows into rows, in the order of their ids when sorted_ids
 * is given (n of them: the ids go there). Returns: 200, or the status it
 * answered with. */
static int read_worlds(ig_ctx *ctx, size_t n, struct World *rows, int32_t *sorted_ids)
{
	ig_add_header(ctx, "Server", IG_STR("ingot"));
	ig_pg_call *calls = ig_alloc(ctx, n * sizeof *calls);
	int32_t *ids = sorted_ids ? sorted_ids : ig_alloc(ctx, n * sizeof *ids);
	if (!calls || !ids || !rows)
		return 500; /* out of request memory */
	for (size_t i = 0; i < n; i++) { /* an insertion sort: n is 20 usually, 500 at most */
		int32_t id = random_world_number();
		size_t j = i;
		for (; sorted_ids && j > 0 && ids[j - 1] > id; j--)
			ids[j] = ids[j - 1];
		ids[j] = id;
	}
	for (size_t i = 0; i < n; i++) {
		ig_pg_value id;
		db_GetWorld_params(&id, ids[i]);
		ig_pg_send_read(ctx, db_GetWorld_sql, &id, 1, &calls[i]);
	}
	if (ig_wait_all(ctx) != IG_WAIT_OK)
		return 503; /* cancelled: nobody reads the answer */
	for (size_t i = 0; i < n; i++) {
		if (!calls[i].res)
			return ig_pg_respond_error(ctx, &calls[i].err);
		if (calls[i].res->rows != 1 || !db_GetWorld_decode(calls[i].res, 0, ig_ctx_arena(ctx), &rows[i])) {
			ig_respond_problem(ctx, 500, "a World row was not found");
			return 500;
		}
	}
	return 200;
}

int getDb(ig_ctx *ctx, const struct getDb_in *in, struct getDb_out *out)
{
	(void)in;
	return read_worlds(ctx, 1, &out->r200, NULL);
}

int getQueries(ig_ctx *ctx, const struct getQueries_in *in, struct getQueries_out *out)
{
	size_t n = queries_count(in->has_queries, in->queries);
	struct World *rows = ig_alloc(ctx, n * sizeof *rows);
	out->r200 = (struct getQueries_200){ rows, n };
	return read_worlds(ctx, n, rows, NULL);
}

/* Every row read gets a new number; the batch goes out sorted by id, so
 * that two batches lock their rows in the same order. A row read twice
 * gets one number (twice in the batch), which is what the table ends up with. */
int getUpdates(ig_ctx *ctx, const struct getUpdates_in *in, struct getUpdates_out *out)
{
	size_t n = queries_count(in->has_queries, in->queries);
	struct World *rows = ig_alloc(ctx, n * sizeof *rows);
	int32_t *ids = ig_alloc(ctx, n * sizeof *ids), *numbers = ig_alloc(ctx, n * sizeof *numbers);
	int status = ids && numbers ? read_worlds(ctx, n, rows, ids) : 500;
	if (status != 200)
		return status;
	for (size_t i = 0; i < n; i++)
		rows[i].randomNumber = numbers[i] = i && ids[i] == ids[i - 1] ? numbers[i - 1] : random_world_number();
	out->r200 = (struct getUpdates_200){ rows, n };
	ig_pg_error err;
	if (db_UpdateWorlds(ctx, (struct db_array_int32){ ids, n }, (struct db_array_int32){ numbers, n }, &err) < 0)
		return ig_pg_respond_error(ctx, &err);
	return 200;
}

/* ---- /fortunes ---- */

typedef struct db_ListFortunes_row fortune;

static int by_message(const void *a, const void *b)
{
	const fortune *x = a, *y = b;
	size_t n = x->message.len < y->message.len ? x->message.len : y->message.len;
	int c = memcmp(x->message.ptr, y->message.ptr, n);
	return c ? c : (x->message.len > y->message.len) - (x->message.len < y->message.len);
}

int getFortunes(ig_ctx *ctx, const struct getFortunes_in *in, struct getFortunes_out *out)
{
	(void)in;
	ig_add_header(ctx, "Server", IG_STR("ingot"));
	/* A read (shared Sync): db_ListFortunes's ig_pg_run would Sync alone,
	   a third more CPU per request. */
	ig_pg_call call;
	ig_pg_send_read(ctx, db_ListFortunes_sql, NULL, 0, &call);
	if (ig_wait_all(ctx) != IG_WAIT_OK)
		return 503; /* cancelled: nobody reads the answer */
	if (!call.res)
		return ig_pg_respond_error(ctx, &call.err);
	size_t n = call.res->rows + 1;
	fortune *f = ig_alloc(ctx, n * sizeof *f);
	if (!f)
		return 500; /* out of request memory */
	for (uint32_t i = 0; i + 1 < n; i++)
		if (!db_ListFortunes_decode(call.res, i, ig_ctx_arena(ctx), &f[i]))
			return 500;
	f[n - 1] = (fortune){ 0, IG_STR("Additional fortune added at request time.") };
	qsort(f, n, sizeof *f, by_message);

	ig_wbuf w = { .arena = ig_ctx_arena(ctx) };
	ig_wbuf_lit(&w, "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
			"<tr><th>id</th><th>message</th></tr>");
	for (size_t i = 0; i < n; i++) {
		char num[24];
		ig_wbuf_lit(&w, "<tr><td>");
		ig_wbuf_put(&w, num, ig_fmt_i64(num, f[i].id));
		ig_wbuf_lit(&w, "</td><td>");
		ig_html_escape(&w, f[i].message.ptr, f[i].message.len);
		ig_wbuf_lit(&w, "</td></tr>");
	}
	ig_wbuf_lit(&w, "</table></body></html>");
	if (w.failed)
		return 500; /* out of request memory */
	out->r200 = (ig_str){ w.ptr, w.len };
	return 200;
}
