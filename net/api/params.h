/* Runtime helpers for the generated request decoders and response
 * encoders: parameter values from the path, the query string and headers
 * (percent-decoding, strict numbers), the JSON request body (media type,
 * a reader over an arena copy, errors held until the end) and a writer for
 * free-form JSON values.
 * Built only on the public API (include/ingot/http.h, json_read.h), so the generated
 * code's test stand-in links it as the service does. */
#ifndef NET_API_PARAMS_H
#define NET_API_PARAMS_H

#include "ingot/api_hooks.h"
#include "ingot/json_read.h"

/* ---- parameter values ---- */

enum ig_param_status {
	IG_PARAM_OK,
	IG_PARAM_SYNTAX,     /* not a number / boolean of the strict form */
	IG_PARAM_ABOVE,      /* an integer above INT64_MAX (never wrapped) */
	IG_PARAM_BELOW,      /* an integer below INT64_MIN */
	IG_PARAM_BAD_ESCAPE, /* a '%' not followed by two hex digits */
	IG_PARAM_BAD_UTF8,   /* the decoded bytes are not UTF-8 */
	IG_PARAM_NO_MEMORY,
};

/* Where a value comes from: path and query values are %-decoded (in the
 * query, '+' is a space too); header values are taken as they are. */
enum ig_param_in { IG_IN_PATH, IG_IN_QUERY, IG_IN_HEADER };

/* Each takes the raw text and returns an ig_param_status. Strings are copied into the request
 * arena, so they outlive the connection's buffer (a pending handler keeps
 * them), and must be UTF-8. Integers are strict decimal int64 (no '+', no
 * leading zeros); numbers use JSON's syntax and are correctly rounded;
 * *literal gets the decoded text, for exact multipleOf checks. Booleans
 * are true or false. */
int ig_param_string(ig_ctx *ctx, ig_str raw, enum ig_param_in in, ig_str *out);
int ig_param_int64(ig_ctx *ctx, ig_str raw, enum ig_param_in in, int64_t *out, ig_str *literal);
int ig_param_double(ig_ctx *ctx, ig_str raw, enum ig_param_in in, double *out, ig_str *literal);
int ig_param_bool(ig_ctx *ctx, ig_str raw, enum ig_param_in in, bool *out);

/* The query string's name=value pairs in order, raw ("a&b=" gives a with
 * an empty value, then b). */
typedef struct ig_query {
	const char *p, *end;
} ig_query;

void ig_query_init(ig_query *q, ig_str query);
bool ig_query_next(ig_query *q, ig_str *name, ig_str *value);
/* Whether a raw query name decodes to name[0..len). */
bool ig_query_name_is(ig_str raw, const char *name, size_t len);
/* Pairs in the query: the most items a repeated parameter can have. */
size_t ig_query_count(ig_str query);
/* Items of a comma-separated value (style form, explode false): the
 * next item of *rest, or false at its end. An empty value has no items. */
bool ig_param_next_item(ig_str *rest, ig_str *item);
size_t ig_param_count_items(ig_str value);

/* ---- JSON request bodies ---- */

/* Whether a Content-Type is application/json: any case, parameters
 * allowed, but a charset must be UTF-8. */
bool ig_is_json(ig_str content_type);

struct ig_held_error;

typedef struct ig_body_reader {
	ig_json_reader r;
	ig_ctx *ctx;
	struct ig_held_error *held, **tail;
	unsigned nheld;
} ig_body_reader;

/* Starts reading the request body from a copy in the request arena (the
 * values decoded from it then outlive the connection's buffer). False when
 * the arena is full. */
bool ig_body_begin(ig_ctx *ctx, ig_body_reader *b, int max_depth);
/* Reports one violation in the body (the report callback of the generated
 * validators, arg is the reader); held until ig_body_end. */
void ig_body_error(void *b, const char *pointer, const char *keyword, const char *message);
/* Ends the body: only whitespace may follow. If the JSON is malformed, the
 * one error is {"pointer":"","keyword":"json","message":"<reader's
 * message> at byte <offset>"}; else the held violations are added. True
 * when the body was well-formed JSON. */
bool ig_body_end(ig_body_reader *b);

/* ---- responses ---- */

/* Writes a free-form value as JSON; NULL is written as null. */
void ig_json_write_value(ig_wbuf *w, const ig_json_value *v);

#endif
