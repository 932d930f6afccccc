/* TechEmpower's test types by its rules: /plaintext, and /db, /queries,
 * /updates and /fortunes on the core's PostgreSQL pool (include/ingot/pg.h),
 * written top to bottom: a handler sends its reads (pipelined, sharing one
 * Sync), waits for them all (ig_wait_all) and fills out. A database error
 * is answered by ig_pg_respond_error (503/409/500 problem+json). */
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

/* A World row from a read of world_select: the status to answer, 200 when
 * the row is there (a failed read is answered as ig_pg_respond_error does). */
static int world_from(ig_ctx *ctx, const ig_pg_call *c, struct World *w)
{
	if (!c->res)
		return ig_pg_respond_error(ctx, &c->err);
	if (c->res->rows != 1 || c->res->cols != 2) {
		ig_respond_problem(ctx, 500, "a World row was not found");
		return 500;
	}
	*w = (struct World){ .id = ig_pg_at(c->res, 0, 0)->i, .randomNumber = ig_pg_at(c->res, 0, 1)->i };
	return 200;
}

int getPlaintext(ig_ctx *ctx, const struct getPlaintext_in *in, struct getPlaintext_out *out)
{
	(void)in;
	te_server(ctx);
	out->r200 = IG_STR("Hello, World!");
	return 200;
}

/* n reads of random rows at once, into rows[0..n): 200, or the status
 * answered. Reads sent together share one Sync (ig_pg_send_read). */
static int read_worlds(ig_ctx *ctx, struct World *rows, size_t n)
{
	ig_pg_call *calls = ig_alloc(ctx, n * sizeof *calls);
	if (!calls)
		return 500;
	for (size_t i = 0; i < n; i++) {
		ig_pg_value id = ig_pg_int4(random_world_number());
		ig_pg_send_read(ctx, world_select, &id, 1, &calls[i]);
	}
	if (ig_wait_all(ctx) != IG_WAIT_OK)
		return 503; /* the client left: the answer is dropped */
	for (size_t i = 0; i < n; i++) {
		int status = world_from(ctx, &calls[i], &rows[i]);
		if (status != 200)
			return status;
	}
	return 200;
}

int getDb(ig_ctx *ctx, const struct getDb_in *in, struct getDb_out *out)
{
	(void)in;
	te_server(ctx);
	return read_worlds(ctx, &out->r200, 1);
}

/* ?queries= rows for /queries and /updates: their count in *n. */
static struct World *worlds(ig_ctx *ctx, bool has_queries, ig_str queries, size_t *n)
{
	te_server(ctx);
	*n = queries_count(has_queries, queries);
	return ig_alloc(ctx, *n * sizeof(struct World));
}

int getQueries(ig_ctx *ctx, const struct getQueries_in *in, struct getQueries_out *out)
{
	size_t n;
	struct World *rows = worlds(ctx, in->has_queries, in->queries, &n);
	out->r200 = (struct getQueries_200){ rows, n };
	return rows ? read_worlds(ctx, rows, n) : 500;
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
int getUpdates(ig_ctx *ctx, const struct getUpdates_in *in, struct getUpdates_out *out)
{
	size_t n;
	struct World *rows = worlds(ctx, in->has_queries, in->queries, &n);
	out->r200 = (struct getUpdates_200){ rows, n };
	int status = rows ? read_worlds(ctx, rows, n) : 500;
	struct World **sorted = status == 200 ? ig_alloc(ctx, n * sizeof *sorted) : NULL;
	if (!sorted)
		return status == 200 ? 500 : status;
	ig_wbuf ids = { .arena = ig_ctx_arena(ctx) }, numbers = { .arena = ig_ctx_arena(ctx) };
	for (size_t i = 0; i < n; i++)
		sorted[i] = &rows[i];
	sort_by_id(sorted, n);
	ig_wbuf_lit(&ids, "{");
	ig_wbuf_lit(&numbers, "{");
	for (size_t i = 0; i < n; i++) {
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
	if (ids.failed || numbers.failed)
		return 500;
	/* int4[] in its text form: the statement casts them. */
	ig_pg_value params[2] = { ig_pg_untyped((ig_str){ ids.ptr, ids.len }),
				  ig_pg_untyped((ig_str){ numbers.ptr, numbers.len }) };
	ig_pg_error err;
	if (!ig_pg_run(ctx, world_update, params, 2, &err))
		return ig_pg_respond_error(ctx, &err);
	return 200;
}

/* ---- /fortunes ---- */

struct fortune {
	int64_t id;
	ig_str message;
};

static int by_message(const void *a, const void *b)
{
	const struct fortune *x = a, *y = b;
	size_t n = x->message.len < y->message.len ? x->message.len : y->message.len;
	int c = memcmp(x->message.ptr, y->message.ptr, n);
	return c ? c : (x->message.len > y->message.len) - (x->message.len < y->message.len);
}

int getFortunes(ig_ctx *ctx, const struct getFortunes_in *in, struct getFortunes_out *out)
{
	(void)in;
	te_server(ctx);
	ig_pg_call c;
	ig_pg_send_read(ctx, fortune_select, NULL, 0, &c);
	if (ig_wait_all(ctx) != IG_WAIT_OK)
		return 503;
	if (!c.res)
		return ig_pg_respond_error(ctx, &c.err);
	const ig_pg_result *res = c.res;
	size_t n = res->rows + 1;
	struct fortune *f = res->cols == 2 ? ig_alloc(ctx, n * sizeof *f) : NULL;
	if (!f) {
		ig_respond_problem(ctx, 500, "the fortunes could not be listed");
		return 500;
	}
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
	if (w.failed) {
		ig_respond_problem(ctx, 500, "the fortunes could not be listed");
		return 500;
	}
	out->r200 = (ig_str){ w.ptr, w.len };
	return 200;
}
