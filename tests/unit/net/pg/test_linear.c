/* The linear database calls (net/pg/linear.c) through the real engine, on
 * the test core (include/ingot/testing.h) with an app written by hand: each
 * route runs its handler on a coroutine through ig_run_operation, as the
 * generated code's do. Against DATABASE_URL (tests/integration/
 * pg_linear.test.mjs starts a PostgreSQL and runs this); without it there
 * is nothing to check: a TAP plan of 0, skipped. Checked: ig_pg_run and
 * its errors, ig_pg_send and ig_wait_all, and transactions: committed,
 * rolled back, rolled back when the handler returns with one open, its
 * queries in order on its connection, a failed one's COMMIT. */
#include "ingot/pg.h"
#include "ingot/testing.h"
#include "tests/unit/check.h"
#include "tests/unit/hand_app.h"

#include <stdlib.h>

/* The handler's answer: text, in the request's arena. */
static int say(ig_ctx *ctx, int status, const char *text)
{
	ig_set_content_type(ctx, "text/plain");
	ig_wbuf_put(ig_body(ctx), text, strlen(text));
	return status;
}

static int fail(ig_ctx *ctx, const ig_pg_error *err)
{
	char text[160];
	snprintf(text, sizeof text, "%s %s", ig_pg_error_name(err->kind), err->sqlstate);
	return say(ctx, 500, text);
}

static int run(ig_ctx *ctx, const char *sql)
{
	ig_pg_error err;
	return ig_pg_run(ctx, sql, NULL, 0, &err) ? 0 : fail(ctx, &err);
}

static int h_setup(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	int s = run(ctx, "CREATE TABLE IF NOT EXISTS linear_t (v int4 NOT NULL)");
	return s ? s : run(ctx, "DELETE FROM linear_t") ? 500 : say(ctx, 200, "ready");
}

/* The values in linear_t, in order: "1,4,5". */
static int h_list(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	ig_pg_error err;
	const ig_pg_result *r = ig_pg_run(ctx, "SELECT coalesce(string_agg(v::text, ',' ORDER BY v), '') FROM linear_t",
					  NULL, 0, &err);
	if (!r)
		return fail(ctx, &err);
	ig_str s = ig_pg_at(r, 0, 0)->s;
	ig_wbuf_put(ig_body(ctx), s.ptr, s.len);
	return 200;
}

static int insert(ig_ctx *ctx, int32_t v)
{
	ig_pg_value p = ig_pg_int4(v);
	ig_pg_error err;
	return ig_pg_run(ctx, "INSERT INTO linear_t VALUES ($1)", &p, 1, &err) ? 0 : fail(ctx, &err);
}

static int h_commit(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	ig_pg_error err;
	if (!ig_pg_transaction_begin(ctx, &err))
		return fail(ctx, &err);
	int s = insert(ctx, 1);
	if (s)
		return s;
	return ig_pg_transaction_commit(ctx, &err) ? say(ctx, 200, "committed") : fail(ctx, &err);
}

static int h_rollback(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	ig_pg_error err;
	if (!ig_pg_transaction_begin(ctx, &err))
		return fail(ctx, &err);
	int s = insert(ctx, 2);
	if (s)
		return s;
	ig_pg_transaction_rollback(ctx);
	return say(ctx, 200, "rolled back");
}

/* Returns with its transaction open: the runtime rolls it back. */
static int h_left_open(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	ig_pg_error err;
	if (!ig_pg_transaction_begin(ctx, &err))
		return fail(ctx, &err);
	int s = insert(ctx, 3);
	return s ? s : say(ctx, 200, "left open");
}

/* Three statements sent at once inside a transaction: they run in order
 * on its connection (the count sees both inserts), then COMMIT. */
static int h_sent(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	ig_pg_error err;
	if (!ig_pg_transaction_begin(ctx, &err))
		return fail(ctx, &err);
	ig_pg_value a = ig_pg_int4(4), b = ig_pg_int4(5);
	ig_pg_call c[3];
	ig_pg_send(ctx, "INSERT INTO linear_t VALUES ($1)", &a, 1, &c[0]);
	ig_pg_send(ctx, "INSERT INTO linear_t VALUES ($1)", &b, 1, &c[1]);
	ig_pg_send_read(ctx, "SELECT count(*) FROM linear_t WHERE v IN (4, 5)", NULL, 0, &c[2]);
	if (ig_wait_all(ctx) != IG_WAIT_OK)
		return say(ctx, 503, "cancelled");
	for (int i = 0; i < 3; i++)
		if (!c[i].res)
			return fail(ctx, &c[i].err);
	if (!ig_pg_transaction_commit(ctx, &err))
		return fail(ctx, &err);
	char text[32];
	snprintf(text, sizeof text, "seen %lld", (long long)ig_pg_at(c[2].res, 0, 0)->i);
	return say(ctx, 200, text);
}

/* A statement that fails inside the transaction: COMMIT rolls back. */
static int h_aborted(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	ig_pg_error err;
	if (!ig_pg_transaction_begin(ctx, &err))
		return fail(ctx, &err);
	int s = insert(ctx, 6);
	if (s)
		return s;
	if (ig_pg_run(ctx, "SELECT 1 / 0", NULL, 0, &err))
		return say(ctx, 500, "1 / 0 answered");
	char first[16];
	snprintf(first, sizeof first, "%s", err.sqlstate);
	if (ig_pg_transaction_commit(ctx, &err))
		return say(ctx, 500, "committed");
	char text[96];
	snprintf(text, sizeof text, "%s then %s", first, ig_pg_error_name(err.kind));
	return say(ctx, 200, text);
}

/* Two transactions on one request: the second begins while none is open;
 * one begun twice is refused. */
static int h_twice(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	ig_pg_error err;
	if (!ig_pg_transaction_begin(ctx, &err))
		return fail(ctx, &err);
	bool refused = !ig_pg_transaction_begin(ctx, &err) && err.kind == IG_PG_BAD_PARAMS;
	ig_pg_transaction_rollback(ctx);
	if (!ig_pg_transaction_begin(ctx, &err))
		return fail(ctx, &err);
	int s = insert(ctx, 7);
	if (s)
		return s;
	if (!ig_pg_transaction_commit(ctx, &err))
		return fail(ctx, &err);
	return say(ctx, 200, refused ? "refused, then committed" : "not refused");
}

/* ---- the app, by hand ---- */

static const struct ig_operation ops[] = {
	HAND_OP("setup", h_setup), HAND_OP("list", h_list), HAND_OP("commit", h_commit), HAND_OP("rollback", h_rollback),
	HAND_OP("left_open", h_left_open), HAND_OP("sent", h_sent), HAND_OP("aborted", h_aborted), HAND_OP("twice", h_twice),
};
static const char *const routes[] = { "/setup", "/list", "/commit", "/rollback", "/left_open", "/sent",
				      "/aborted", "/twice" };

static void route(ig_ctx *ctx)
{
	hand_route(ctx, routes, ops, IG_COUNTOF(routes));
}

static const struct ig_app app = {
	.name = "linear", .version = "0", .route = route, .routes = routes, .route_count = IG_COUNTOF(routes),
	.openapi_json = "{}", .openapi_len = 2,
};

/* GET target: the status and body, as "200 text". */
static const char *get(const char *target)
{
	static char text[256];
	struct ig_test_response r;
	enum ig_test_error e = ig_test_request("GET", target, NULL, 0, IG_STR(""), &r);
	if (e != IG_TEST_OK)
		snprintf(text, sizeof text, "error %s", ig_test_error_name(e));
	else
		snprintf(text, sizeof text, "%d %.*s", r.status, (int)r.body.len, r.body.ptr);
	return text;
}

static void expect(const char *target, const char *want, const char *name)
{
	const char *got = get(target);
	check_that(strcmp(got, want) == 0, name, "%s: got \"%s\", want \"%s\"", target, got, want);
}

int main(void)
{
	if (!getenv("DATABASE_URL")) {
		printf("1..0 # SKIP no DATABASE_URL (tests/integration/pg_linear.test.mjs gives one)\n");
		return 0;
	}
	if (ig_test_init(&app) != IG_TEST_OK) {
		printf("not ok 1 - the test core starts\n1..1\n");
		return 1;
	}
	expect("/setup", "200 ready", "ig_pg_run: a table made and emptied");
	expect("/commit", "200 committed", "a transaction committed");
	expect("/list", "200 1", "its row is there");
	expect("/rollback", "200 rolled back", "a transaction rolled back");
	expect("/left_open", "200 left open", "a handler returns with its transaction open");
	expect("/list", "200 1", "rolled back: neither row is there");
	expect("/sent", "200 seen 2", "sent inside a transaction: in order on its connection, then committed");
	expect("/list", "200 1,4,5", "both sent rows committed");
	expect("/aborted", "200 22012 then aborted", "a failed statement aborts: COMMIT reports IG_PG_ABORTED");
	expect("/list", "200 1,4,5", "the aborted transaction left nothing");
	expect("/twice", "200 refused, then committed", "a second begin is refused; a new one after the rollback");
	expect("/list", "200 1,4,5,7", "the second transaction's row");
	return check_done();
}
