/* net/pg/errors.c: a failed query's answer and its log line. The exchange
 * beneath is stubbed (what ig_respond_problem was given, the request's id
 * and route on the line) and the log's lines are taken at ig_log_queue, so
 * each case sees exactly what the client and the log would get. */
#include "kernel/runtime/log_ring.h"
#include "net/pg/internal.h"
#include "tests/unit/check.h"
#include "tests/unit/log_capture.h"

#include <stdlib.h>
#include <string.h>

/* ---- the exchange, stubbed ---- */

static int answered_status, answers;
static char answered_detail[256];

void ig_respond_problem(ig_ctx *ctx, int status, const char *detail)
{
	(void)ctx;
	answers++;
	answered_status = status;
	snprintf(answered_detail, sizeof answered_detail, "%s", detail ? detail : "");
}

void ig_http_log_exchange(const void *exchange, struct ig_logline *line)
{
	(void)exchange;
	ig_log_cstr(line, "request_id", "rid-1");
	ig_log_cstr(line, "route", "/things/{id}");
}

/* The 5xx's error line (net/http/error_log.c): begun as the real one
 * begins it, without its storm bound (a case of its own). */
static int marked;

bool ig_http_error_line_begin(struct ig_ctx *x, struct ig_logline *l, const char *msg, int status, const char *cause)
{
	marked++;
	if (!ig_log_begin(l, IG_LOG_ERROR, msg))
		return false;
	ig_http_log_exchange(x, l);
	ig_log_int(l, "status", status);
	ig_log_cstr(l, "cause", cause);
	return true;
}

void ig_http_error_mark_logged(struct ig_ctx *x)
{
	(void)x;
	marked++;
}

static void reset(void)
{
	answers = answered_status = marked = 0;
	answered_detail[0] = 0;
	lines_clear();
}

static bool logged(const char *field)
{
	return strstr(lines, field) != NULL;
}

/* A server error whose every string names the schema or a value. */
static ig_pg_error server_error(const char *sqlstate)
{
	ig_pg_error e = {
		.kind = IG_PG_SERVER,
		.message = IG_STR("relation \"secret_table\" does not exist"),
		.detail = IG_STR("Key (email)=(who@example.com) already exists."),
		.constraint = IG_STR("secret_table_email_key"),
		.query = IG_STR("SELECT secret_column FROM secret_table WHERE id = $1"),
	};
	memcpy(e.sqlstate, sqlstate, 6);
	return e;
}

static ig_ctx *const ctx = (ig_ctx *)&lines; /* never dereferenced: the stubs ignore it */

static bool leaks(const char *detail)
{
	return strstr(detail, "secret") || strstr(detail, "who@") || strstr(detail, "SELECT") ||
	       strstr(detail, "Key");
}

static void test_server_error_is_a_bare_500(void)
{
	reset();
	ig_pg_error e = server_error("42P01");
	CHECK_INT(ig_pg_respond_error(ctx, &e), 500, "a server error: 500");
	CHECK_INT(answers, 1, "answered once");
	check_slice(answered_detail, strlen(answered_detail), "database error (server 42P01)",
		    "the client's detail: the class and the SQLSTATE", "detail");
	CHECK(!leaks(answered_detail), "no SQL, table, column, constraint or value in the answer");
	CHECK_INT(line_count, 1, "one log line");
	CHECK(logged("\"level\":\"error\"") && logged("\"msg\":\"database error\""), "at error level");
	CHECK(logged("\"request_id\":\"rid-1\"") && logged("\"route\":\"/things/{id}\""), "with the request's id and route");
	CHECK(logged("\"status\":500") && logged("\"error\":\"server\"") && logged("\"sqlstate\":\"42P01\""),
	      "with the status, the kind and the SQLSTATE");
	CHECK(logged("\"message\":\"relation \\\"secret_table\\\" does not exist\""), "with the server's message");
	CHECK(logged("\"detail\":\"Key (email)=(who@example.com) already exists.\""), "with its detail");
	CHECK(logged("\"constraint\":\"secret_table_email_key\""), "with the constraint");
	CHECK(logged("\"query\":\"SELECT secret_column FROM secret_table WHERE id\""), "with the query's first words");
	CHECK_INT(marked, 1, "through the exchange's error line: the answer's ig_finish adds no second one");
}

static void test_unique_violation_is_409_without_the_constraint(void)
{
	reset();
	ig_pg_error e = server_error("23505");
	CHECK_INT(ig_pg_respond_error(ctx, &e), 409, "23505: 409");
	CHECK(!leaks(answered_detail), "the 409's detail names no constraint or value");
	CHECK(strstr(answered_detail, "23505") != NULL, "it names the SQLSTATE");
	CHECK_INT(line_count, 0, "a 4xx writes no line at info");
	ig_log_threshold = IG_LOG_DEBUG;
	reset();
	(void)ig_pg_respond_error(ctx, &e);
	CHECK(line_count == 1 && logged("\"level\":\"debug\"") && logged("secret_table_email_key"),
	      "at debug it is one debug line, with the constraint");
	ig_log_threshold = IG_LOG_INFO;
}

static void test_the_apps_answers(void)
{
	static const struct ig_pg_answer own[] = {
		{ "23505", 409, "this email is registered" },
		{ "23", 422, "the thing breaks a rule" },
		{ "42P01", 503, "not migrated yet" },
	};
	ig_pg_error unique = server_error("23505"), check = server_error("23514"), missing = server_error("42P01"),
		    other = server_error("22012");
	reset();
	CHECK_INT(ig_pg_respond_error_as(ctx, &unique, own, 3), 409, "a code the app lists: its status");
	check_slice(answered_detail, strlen(answered_detail), "this email is registered", "and its detail", "detail");
	reset();
	CHECK_INT(ig_pg_respond_error_as(ctx, &check, own, 3), 422, "a class the app lists (\"23\"): its status");
	check_slice(answered_detail, strlen(answered_detail), "the thing breaks a rule", "and its detail", "detail");
	reset();
	CHECK_INT(ig_pg_respond_error_as(ctx, &missing, own, 3), 503, "an app's 5xx");
	CHECK(line_count == 1 && logged("\"level\":\"error\"") && logged("\"status\":503"), "is an error line");
	reset();
	CHECK_INT(ig_pg_respond_error_as(ctx, &other, own, 3), 500, "a code the app does not list: the runtime's answer");
	ig_pg_error lost = { .kind = IG_PG_CONNECTION_LOST, .message = IG_STR("gone") };
	reset();
	CHECK_INT(ig_pg_respond_error_as(ctx, &lost, (const struct ig_pg_answer[]){ { "", 400, "no" } }, 1), 503,
		  "an empty entry matches nothing; a lost connection is 503");
	check_slice(answered_detail, strlen(answered_detail), "database connection lost (connection_lost)",
		    "its detail names the class", "detail");
}

static void test_runtime_classes(void)
{
	static const struct {
		enum ig_pg_error_kind kind;
		int status;
		const char *detail;
	} cases[] = {
		{ IG_PG_NOT_CONFIGURED, 503, "no database configured (not_configured)" },
		{ IG_PG_UNAVAILABLE, 503, "database unavailable (unavailable)" },
		{ IG_PG_TIMEOUT, 503, "database query timed out (timeout)" },
		{ IG_PG_PROTOCOL, 500, "database error (protocol)" },
		/* a typed query's row that does not fit (schemac --queries) */
		{ IG_PG_ROW_MISMATCH, 500, "database error (row_mismatch)" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		reset();
		ig_pg_error e = { .kind = cases[i].kind, .message = IG_STR("net/pg's words") };
		CHECK_INT(ig_pg_respond_error(ctx, &e), cases[i].status, ig_pg_error_name(cases[i].kind));
		check_slice(answered_detail, strlen(answered_detail), cases[i].detail, "its detail", "detail");
		CHECK(line_count == 1 && logged("\"level\":\"error\"") && logged("\"message\":\"net/pg's words\""),
		      "a 5xx: one error line with net/pg's message");
	}
}

static void test_cancelled_is_no_error(void)
{
	reset();
	ig_pg_error e = { .kind = IG_PG_CANCELLED, .message = IG_STR("the request was cancelled") };
	CHECK_INT(ig_pg_respond_error(ctx, &e), 503, "cancelled: 503 (nobody reads it)");
	check_slice(answered_detail, strlen(answered_detail), "request cancelled (cancelled)", "its detail", "detail");
	CHECK_INT(line_count, 0, "and no line at info: the client left, nothing failed");
	CHECK_INT(marked, 1, "and its 503 is marked, so that ig_finish logs no error for it");
}

static void label_is(const char *sql, size_t cap, const char *want, const char *name)
{
	char out[64];
	size_t n = ig_pg_query_label((ig_str){ sql, strlen(sql) }, out, cap);
	check_slice(out, n, want, name, "label");
	CHECK(strlen(out) == n, "NUL-terminated at its length");
}

static void test_query_labels(void)
{
	label_is("-- name: GetPost :one\nSELECT * FROM posts WHERE id = $1", 48, "GetPost", "sqlc's name");
	label_is("  SELECT a,\n\t b   FROM t", 48, "SELECT a, b FROM t", "white space runs as one space");
	label_is("SELECT id, title FROM posts WHERE id = $1", 20, "SELECT id, title", "cut after a whole word");
	label_is("SELECT id, title FROM posts", 17, "SELECT id, title", "a word that ends where the room does is whole");
	label_is("SELECT", 48, "SELECT", "one word");
	label_is("", 48, "", "no query: empty");
	label_is("averyveryverylongidentifier", 8, "averyve", "a first word longer than the room: cut");
}

int main(void)
{
	ig_log_threshold = IG_LOG_INFO;
	atomic_store(&ig_log_queue, capture);
	test_server_error_is_a_bare_500();
	test_unique_violation_is_409_without_the_constraint();
	test_the_apps_answers();
	test_runtime_classes();
	test_cancelled_is_no_error();
	test_query_labels();
	return check_done();
}
