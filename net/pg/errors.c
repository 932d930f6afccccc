/* A failed query's two readers: the client, who gets a problem+json that
 * names the class of failure and a SQLSTATE and nothing of the SQL, the
 * schema or the values; and the log, which gets the whole error once per
 * request, with the request's id and route. The app's own answers to
 * SQLSTATEs (struct ig_pg_answer) are picked here. */
#include "internal.h"
#include "net/http/internal.h"

#include <stdio.h>
#include <string.h>

const char *ig_pg_error_name(enum ig_pg_error_kind kind)
{
	static const char *const names[IG_PG_ERROR_KINDS] = {
		[IG_PG_OK] = "ok",
		[IG_PG_NOT_CONFIGURED] = "not_configured",
		[IG_PG_UNAVAILABLE] = "unavailable",
		[IG_PG_BUSY] = "busy",
		[IG_PG_CONNECT] = "connect",
		[IG_PG_AUTH] = "auth",
		[IG_PG_TLS] = "tls",
		[IG_PG_SERVER] = "server",
		[IG_PG_CONNECTION_LOST] = "connection_lost",
		[IG_PG_TIMEOUT] = "timeout",
		[IG_PG_PROTOCOL] = "protocol",
		[IG_PG_TOO_LARGE] = "too_large",
		[IG_PG_BAD_PARAMS] = "bad_params",
		[IG_PG_ABORTED] = "aborted",
		[IG_PG_CANCELLED] = "cancelled",
		[IG_PG_ROW_MISMATCH] = "row_mismatch",
	};
	return (unsigned)kind < IG_PG_ERROR_KINDS ? names[kind] : "unknown";
}

static const struct ig_pg_answer *app_answer(const ig_pg_error *err, const struct ig_pg_answer *answers, size_t n)
{
	if (err->kind != IG_PG_SERVER)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(answers[i].sqlstate);
		if (len && len <= 5 && !memcmp(answers[i].sqlstate, err->sqlstate, len))
			return &answers[i];
	}
	return NULL;
}

/* The runtime's own answer: a status and what failed, in its words. */
static int runtime_answer(const ig_pg_error *err, const char **what)
{
	switch (err->kind) {
	case IG_PG_NOT_CONFIGURED: *what = "no database configured"; return 503;
	case IG_PG_UNAVAILABLE:
	case IG_PG_BUSY:
	case IG_PG_CONNECT:
	case IG_PG_AUTH:
	case IG_PG_TLS: *what = "database unavailable"; return 503;
	case IG_PG_CONNECTION_LOST: *what = "database connection lost"; return 503;
	case IG_PG_TIMEOUT: *what = "database query timed out"; return 503;
	case IG_PG_CANCELLED: *what = "request cancelled"; return 503;
	case IG_PG_SERVER:
		if (!strcmp(err->sqlstate, "23505")) {
			*what = "conflict: a unique value is taken already";
			return 409;
		}
		break;
	default: break;
	}
	*what = "database error";
	return 500;
}

size_t ig_pg_query_label(ig_str sql, char *out, size_t cap)
{
	static const char annotation[] = "-- name:";
	const char *p = sql.ptr, *end = sql.ptr + sql.len;
	size_t n = 0;
	if (!cap)
		return 0;
	if (sql.len > sizeof annotation - 1 && !memcmp(p, annotation, sizeof annotation - 1)) {
		p += sizeof annotation - 1;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		while (p < end && n + 1 < cap && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			out[n++] = *p++;
		out[n] = 0;
		return n;
	}
	/* The first words, each run of white space as one space, cut after
	   the last whole word that fits. */
	size_t whole = 0;
	bool space = false;
	for (; p < end && n + 1 < cap; p++) {
		bool ws = *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
		if (ws) {
			space = n > 0;
			continue;
		}
		if (space) {
			whole = n;
			if (n + 2 >= cap)
				break;
			out[n++] = ' ';
			space = false;
		}
		out[n++] = *p;
	}
	if (p < end && whole && !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		n = whole; /* stopped inside a word */
	out[n] = 0;
	return n;
}

#define QUERY_LABEL_MAX 48

/* The request's one line about its database error: a 5xx's is its error
 * line (net/http/error_log.c: one a second for identical failures on a
 * route, then their count), so that the answer adds none; a 4xx's and a
 * cancelled request's are debug lines. */
static void log_error(ig_ctx *ctx, const ig_pg_error *err, int status, const char *cause)
{
	struct ig_logline l;
	if (err->kind != IG_PG_CANCELLED && status >= 500) {
		if (!ig_http_error_line_begin(ctx, &l, "database error", status, cause))
			return;
	} else {
		ig_http_error_mark_logged(ctx); /* a cancelled request's 503: nobody reads it */
		if (!ig_log_begin(&l, IG_LOG_DEBUG, "database error"))
			return;
		ig_http_log_exchange(ctx, &l);
		ig_log_int(&l, "status", status);
	}
	ig_log_cstr(&l, "error", ig_pg_error_name(err->kind));
	if (err->sqlstate[0])
		ig_log_cstr(&l, "sqlstate", err->sqlstate);
	ig_log_str(&l, "message", err->message.ptr, err->message.len);
	if (err->detail.len)
		ig_log_str(&l, "detail", err->detail.ptr, err->detail.len);
	if (err->constraint.len)
		ig_log_str(&l, "constraint", err->constraint.ptr, err->constraint.len);
	char label[QUERY_LABEL_MAX];
	size_t n = ig_pg_query_label(err->query, label, sizeof label);
	if (n)
		ig_log_str(&l, "query", label, n);
	ig_log_end(&l);
}

int ig_pg_respond_error_as(ig_ctx *ctx, const ig_pg_error *err, const struct ig_pg_answer *answers, size_t n)
{
	const struct ig_pg_answer *own = app_answer(err, answers, n);
	const char *what;
	int status = runtime_answer(err, &what);
	char detail[128];
	if (own)
		status = own->status;
	else if (err->sqlstate[0])
		snprintf(detail, sizeof detail, "%s (%s %s)", what, ig_pg_error_name(err->kind), err->sqlstate);
	else
		snprintf(detail, sizeof detail, "%s (%s)", what, ig_pg_error_name(err->kind));
	log_error(ctx, err, status, own ? own->detail : detail);
	ig_respond_problem(ctx, status, own ? own->detail : detail);
	return status;
}

int ig_pg_respond_error(ig_ctx *ctx, const ig_pg_error *err)
{
	return ig_pg_respond_error_as(ctx, err, NULL, 0);
}
