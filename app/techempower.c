/* TechEmpower's test types by its rules: /plaintext, and /db, /queries,
 * /updates and /fortunes on the core's PostgreSQL pool (include/ingot/pg.h). A
 * handler starts its queries (pipelined) and returns IG_PENDING; the last
 * completion fills out and calls ig_finish. A database error is answered
 * by ig_pg_respond_error (503/409/500 problem+json). */
#include "api.h"
#include "ingot/pg.h"

#include <stdlib.h>
#include <sys/random.h>

#define WORLD_ROWS 10000
#define MAX_QUERIES 500

static const char world_select[] = "SELECT id, randomnumber FROM world WHERE id = $1";
/* One statement for the whole batch: two int4 arrays (ids sorted). */
static const char world_update[] = "UPDATE world SET randomnumber = v.r "
				   "FROM unnest($1::int4[], $2::int4[]) AS v(id, r) WHERE world.id = v.id";
static const char fortune_select[] = "SELECT id, message FROM fortune";

/* TechEmpower asks every response for Server (Date is always sent). */
static void te_server(ig_ctx *ctx)
{
	ig_add_header(ctx, "Server", IG_STR("ingot"));
}

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
 * an integer is 1 (the rule of the queries and updates tests). */
static size_t queries_count(bool has, ig_str s)
{
	if (!has || s.len == 0)
		return 1;
	size_t i = (s.ptr[0] == '-' || s.ptr[0] == '+') ? 1 : 0;
	if (i == s.len)
		return 1;
	uint64_t n = 0;
	for (; i < s.len; i++) {
		if (s.ptr[i] < '0' || s.ptr[i] > '9')
			return 1;
		if (n <= MAX_QUERIES)
			n = n * 10 + (uint64_t)(s.ptr[i] - '0');
	}
	if (s.ptr[0] == '-' || n < 1)
		return 1;
	return n > MAX_QUERIES ? MAX_QUERIES : (size_t)n;
}

/* A completion's error as the answer. ig_pg_respond_error answers with
 * ig_respond_problem, which finishes the exchange: no ig_finish after it
 * (a pending ctx may be gone once finished). */
static void finish_error(ig_ctx *ctx, const ig_pg_error *err)
{
	(void)ig_pg_respond_error(ctx, err);
}

/* A World row from a result of world_select. */
static bool world_from(const ig_pg_result *res, struct World *w)
{
	if (res->rows != 1 || res->cols != 2)
		return false;
	*w = (struct World){ .id = ig_pg_at(res, 0, 0)->i, .randomNumber = ig_pg_at(res, 0, 1)->i };
	return true;
}

int getPlaintext(ig_ctx *ctx, const struct getPlaintext_in *in, struct getPlaintext_out *out)
{
	(void)in;
	te_server(ctx);
	out->r200 = IG_STR("Hello, World!");
	return 200;
}

/* ---- /db ---- */

struct db_one {
	ig_ctx *ctx;
	struct World *row;
};

static void db_done(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct db_one *d = arg;
	if (err)
		finish_error(d->ctx, err);
	else if (!world_from(res, d->row))
		ig_respond_problem(d->ctx, 500, "the World row was not found");
	else
		ig_finish(d->ctx, 200);
}

int getDb(ig_ctx *ctx, const struct getDb_in *in, struct getDb_out *out)
{
	(void)in;
	te_server(ctx);
	struct db_one *d = ig_alloc(ctx, sizeof *d);
	if (!d)
		return 500;
	*d = (struct db_one){ ctx, &out->r200 };
	ig_pg_value id = ig_pg_int4(random_world_number());
	ig_pg_read(ctx, world_select, &id, 1, db_done, d);
	return IG_PENDING;
}

/* ---- /queries and /updates: n reads pipelined, each with its own slot ---- */

struct world_batch;
struct world_read {
	struct world_batch *batch;
	size_t index;
};

struct world_batch {
	ig_ctx *ctx;
	struct World *rows;
	size_t n, pending;
	ig_pg_error error; /* the first failure, kind IG_PG_OK while none */
	bool missing;      /* a read found no row */
	void (*then)(struct world_batch *b); /* once every read has ended well */
};

static void world_read_done(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct world_read *r = arg;
	struct world_batch *b = r->batch;
	if (err) {
		if (b->error.kind == IG_PG_OK)
			b->error = *err; /* its strings are in the request's arena */
	} else if (!world_from(res, &b->rows[r->index])) {
		b->missing = true;
	}
	if (--b->pending)
		return;
	if (b->error.kind != IG_PG_OK)
		finish_error(b->ctx, &b->error);
	else if (b->missing)
		ig_respond_problem(b->ctx, 500, "a World row was not found");
	else
		b->then(b);
}

/* Starts n reads of random rows (n from ?queries=, the rows into *items and
 * *len); then runs when all have succeeded. */
static int world_batch_start(ig_ctx *ctx, bool has_queries, ig_str queries, const struct World **items, size_t *len,
			     void (*then)(struct world_batch *))
{
	te_server(ctx);
	size_t n = queries_count(has_queries, queries);
	struct world_batch *b = ig_alloc(ctx, sizeof *b);
	struct World *r = ig_alloc(ctx, n * sizeof *r);
	struct world_read *reads = ig_alloc(ctx, n * sizeof *reads);
	if (!b || !r || !reads)
		return 500;
	*b = (struct world_batch){ .ctx = ctx, .rows = r, .n = n, .pending = n, .then = then };
	*items = r;
	*len = n;
	for (size_t i = 0; i < n; i++) {
		reads[i] = (struct world_read){ b, i };
		ig_pg_value id = ig_pg_int4(random_world_number());
		ig_pg_read(ctx, world_select, &id, 1, world_read_done, &reads[i]);
	}
	return IG_PENDING;
}

static void queries_then(struct world_batch *b)
{
	ig_finish(b->ctx, 200);
}

int getQueries(ig_ctx *ctx, const struct getQueries_in *in, struct getQueries_out *out)
{
	return world_batch_start(ctx, in->has_queries, in->queries, &out->r200.items, &out->r200.len, queries_then);
}

static void updates_written(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct world_batch *b = arg;
	(void)res;
	if (err)
		finish_error(b->ctx, err);
	else
		ig_finish(b->ctx, 200);
}

static int by_id(const void *a, const void *b)
{
	const struct World *x = *(const struct World *const *)a, *y = *(const struct World *const *)b;
	return (x->id > y->id) - (x->id < y->id);
}

/* By id: an insertion sort for the usual 20 (musl's qsort, a smoothsort
 * through a comparison callback, costs several times more there), qsort
 * beyond, where n^2 would. */
#define SORT_INLINE_MAX 32
static void sort_by_id(struct World **w, size_t n)
{
	if (n > SORT_INLINE_MAX) {
		qsort(w, n, sizeof *w, by_id);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct World *x = w[i];
		size_t j = i;
		for (; j > 0 && w[j - 1]->id > x->id; j--)
			w[j] = w[j - 1];
		w[j] = x;
	}
}

/* Every row read gets a new number; the batch goes out sorted by id, so
 * that two batches lock their rows in the same order. A row read twice
 * gets one number, which is what the table ends up with. */
static void updates_then(struct world_batch *b)
{
	struct World **sorted = ig_alloc(b->ctx, b->n * sizeof *sorted);
	ig_wbuf ids = { .arena = ig_ctx_arena(b->ctx) }, numbers = { .arena = ig_ctx_arena(b->ctx) };
	if (!sorted) {
		ig_respond_problem(b->ctx, 500, "out of request memory");
		return;
	}
	for (size_t i = 0; i < b->n; i++)
		sorted[i] = &b->rows[i];
	sort_by_id(sorted, b->n);
	ig_wbuf_lit(&ids, "{");
	ig_wbuf_lit(&numbers, "{");
	for (size_t i = 0; i < b->n; i++) {
		if (i && sorted[i]->id == sorted[i - 1]->id) {
			sorted[i]->randomNumber = sorted[i - 1]->randomNumber;
			continue;
		}
		sorted[i]->randomNumber = random_world_number();
		char num[24];
		if (i)
			ig_wbuf_lit(&ids, ","), ig_wbuf_lit(&numbers, ",");
		ig_wbuf_put(&ids, num, ig_fmt_i64(num, sorted[i]->id));
		ig_wbuf_put(&numbers, num, ig_fmt_i64(num, sorted[i]->randomNumber));
	}
	ig_wbuf_lit(&ids, "}");
	ig_wbuf_lit(&numbers, "}");
	if (ids.failed || numbers.failed) {
		ig_respond_problem(b->ctx, 500, "out of request memory");
		return;
	}
	/* int4[] in its text form: the statement casts them. */
	ig_pg_value params[2] = { ig_pg_untyped((ig_str){ ids.ptr, ids.len }),
				  ig_pg_untyped((ig_str){ numbers.ptr, numbers.len }) };
	ig_pg_query(b->ctx, world_update, params, 2, updates_written, b);
}

int getUpdates(ig_ctx *ctx, const struct getUpdates_in *in, struct getUpdates_out *out)
{
	return world_batch_start(ctx, in->has_queries, in->queries, &out->r200.items, &out->r200.len, updates_then);
}

/* ---- /fortunes ---- */

struct fortune {
	int64_t id;
	ig_str message;
};

struct fortunes_req {
	ig_ctx *ctx;
	struct getFortunes_out *out;
};

static int by_message(const void *a, const void *b)
{
	const struct fortune *x = a, *y = b;
	size_t n = x->message.len < y->message.len ? x->message.len : y->message.len;
	int c = memcmp(x->message.ptr, y->message.ptr, n);
	return c ? c : (x->message.len > y->message.len) - (x->message.len < y->message.len);
}

static int fortunes_page(ig_ctx *ctx, const ig_pg_result *res, struct getFortunes_out *out)
{
	if (res->cols != 2)
		return 500;
	size_t n = res->rows + 1;
	struct fortune *f = ig_alloc(ctx, n * sizeof *f);
	if (!f)
		return 500;
	for (uint32_t i = 0; i < res->rows; i++)
		f[i] = (struct fortune){ ig_pg_at(res, i, 0)->i, ig_pg_at(res, i, 1)->s };
	f[res->rows] = (struct fortune){ 0, IG_STR("Additional fortune added at request time.") };
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
		return 500;
	out->r200 = (ig_str){ w.ptr, w.len };
	return 200;
}

static void fortunes_done(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct fortunes_req *r = arg;
	if (err) {
		finish_error(r->ctx, err);
		return;
	}
	int status = fortunes_page(r->ctx, res, r->out);
	if (status == 200)
		ig_finish(r->ctx, 200);
	else
		ig_respond_problem(r->ctx, status, "the fortunes could not be listed");
}

int getFortunes(ig_ctx *ctx, const struct getFortunes_in *in, struct getFortunes_out *out)
{
	(void)in;
	te_server(ctx);
	struct fortunes_req *r = ig_alloc(ctx, sizeof *r);
	if (!r)
		return 500;
	*r = (struct fortunes_req){ ctx, out };
	ig_pg_read(ctx, fortune_select, NULL, 0, fortunes_done, r);
	return IG_PENDING;
}
