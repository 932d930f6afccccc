/* A query's answer into its result or its error, message by message:
 * RowDescription (its columns), DataRow (a row decoded into the query's
 * arena), CommandComplete's tag and ErrorResponse. Which query a message
 * is for, and what comes next, is the pipeline's (pipeline.c). */
#include "internal.h"

#include <string.h>

static ig_str arena_copy(ig_arena *a, ig_str s)
{
	if (!s.len)
		return (ig_str){ "", 0 };
	char *p = ig_arena_alloc(a, s.len + 1);
	if (!p)
		return (ig_str){ "", 0 };
	memcpy(p, s.ptr, s.len);
	p[s.len] = 0;
	return (ig_str){ p, s.len };
}

static bool live(const struct pg_query *q) { return !q->zombie && !q->internal && !q->failed; }

void ig_pg_result_columns(struct pg_conn *k, struct pg_query *q, const struct pg_msg *m)
{
	uint16_t n = 0;
	struct pg_field *f = k->core->fields;
	if (!ig_pg_read_row_description(m, f, PG_MAX_COLS, &n)) {
		ig_pg_query_set_error(q, IG_PG_PROTOCOL, n > PG_MAX_COLS ? "too many result columns"
									: "malformed RowDescription");
		return;
	}
	ig_pg_stmt_described(k, q, f, n);
	if (!live(q))
		return;
	q->cols = n;
	q->rows = q->cap = 0; /* a simple query's next statement starts over */
	q->values = NULL;
	q->names = ig_arena_alloc(q->arena, sizeof(ig_str) * (n ? n : 1));
	q->oids = ig_arena_alloc(q->arena, sizeof(uint32_t) * (n ? n : 1));
	q->formats = ig_arena_alloc(q->arena, sizeof(int16_t) * (n ? n : 1));
	if (!q->names || !q->oids || !q->formats) {
		ig_pg_query_set_error(q, IG_PG_TOO_LARGE, "the result does not fit in the arena");
		return;
	}
	for (uint16_t i = 0; i < n; i++) {
		q->names[i] = arena_copy(q->arena, f[i].name);
		q->oids[i] = f[i].type_oid;
		q->formats[i] = f[i].format;
	}
}

void ig_pg_result_row(struct pg_conn *k, struct pg_query *q, const struct pg_msg *m)
{
	if (!live(q))
		return;
	uint16_t n = 0;
	struct pg_col *cols = k->core->cols;
	if (!ig_pg_read_data_row(m, cols, PG_MAX_COLS, &n) || n != q->cols || !q->names) {
		ig_pg_query_set_error(q, IG_PG_PROTOCOL, "malformed DataRow");
		return;
	}
	if (q->rows == q->cap) {
		/* Room for one row first: most queries return one (a lookup by
		   key), and a request's arena is what its core's cache holds
		   for each request in flight. A second row makes it 8, then
		   twice as many each time. */
		uint32_t cap = q->cap > 1 ? q->cap * 2 : q->cap ? 8 : 1;
		size_t old = (size_t)q->cap * q->cols * sizeof(ig_pg_value);
		size_t bytes = (size_t)cap * q->cols * sizeof(ig_pg_value);
		ig_pg_value *v = q->values ? ig_arena_grow(q->arena, q->values, old, bytes)
					   : ig_arena_alloc(q->arena, bytes ? bytes : 1);
		if (!v) {
			ig_pg_query_set_error(q, IG_PG_TOO_LARGE, "the result does not fit in the arena");
			return;
		}
		q->values = v;
		q->cap = cap;
	}
	ig_pg_value *row = q->values + (size_t)q->rows * q->cols;
	for (uint16_t i = 0; i < n; i++) {
		if (!ig_pg_value_decode(q->oids[i], q->formats[i], cols[i].ptr, cols[i].len, q->arena, &row[i])) {
			ig_pg_query_set_error(q, IG_PG_PROTOCOL, "a column's value does not decode (or the arena is full)");
			return;
		}
	}
	q->rows++;
}

void ig_pg_result_tag(struct pg_query *q, ig_str tag, uint64_t rows)
{
	if (!q->zombie && !q->internal) {
		q->tag = arena_copy(q->arena, tag);
		q->affected = rows;
	}
}

bool ig_pg_result_error(struct pg_conn *k, struct pg_query *q, const struct pg_msg *m)
{
	struct pg_error_fields e;
	if (!ig_pg_read_error(m, &e))
		return false;
	if (!q) {
		/* Not about a query: the server is going away (FATAL). */
		return true;
	}
	bool stale = !strcmp(e.sqlstate, "26000") || !strcmp(e.sqlstate, "0A000");
	if (q->stmt >= 0 && (q->parsed_here || stale))
		ig_pg_stmt_drop(k, q->stmt, q->stmt_gen);
	if (stale && !q->parsed_here && !q->retried && q->kind == PGQ_EXTENDED) {
		q->retry = true; /* prepared again once, at its ReadyForQuery */
		return true;
	}
	if (q->behind_cancel && !strcmp(e.sqlstate, "57014") && q->read_only && !k->held && !q->retried &&
	    !q->zombie && !q->failed) {
		q->retry = true; /* stopped by the CancelRequest of the query before it: again, once */
		return true;
	}
	if (q->failed || q->zombie || q->internal)
		return true;
	/* The server is going away (a shutdown, a crash, a terminated
	   backend): to the caller that is a lost connection. */
	bool going = (e.sqlstate[0] == '5' && e.sqlstate[1] == '7' && e.sqlstate[2] == 'P') ||
		     ig_str_eq(e.severity, "FATAL", 5) || ig_str_eq(e.severity, "PANIC", 5);
	q->failed = true;
	q->err = (ig_pg_error){ .kind = going ? IG_PG_CONNECTION_LOST : IG_PG_SERVER };
	memcpy(q->err.sqlstate, e.sqlstate, sizeof q->err.sqlstate);
	q->err.message = arena_copy(q->arena, e.message);
	q->err.detail = arena_copy(q->arena, e.detail);
	q->err.constraint = arena_copy(q->arena, e.constraint);
	return true;
}
