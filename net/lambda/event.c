/* Lambda events as requests (event.h): the event is read as a JSON tree
 * in the invocation's arena, its kind told by its shape, and the request's
 * target, fields and body gathered from the members that kind uses. */
#include "event.h"
#include "kernel/runtime/base64.h"
#include "ingot/json_read.h"
#include "net/http/codec.h"
#include "net/cron/jobs.h"

#include <string.h>

#define EVENT_MAX_DEPTH 32
#define EXTRA_HEADERS 4 /* room for the runtime's own: X-Request-Id, traceparent */

static const ig_json_value *member(const ig_json_value *o, const char *key)
{
	return o && o->type == IG_JSON_OBJECT ? ig_json_get(o, key, strlen(key)) : NULL;
}

static const ig_json_value *object(const ig_json_value *o, const char *key)
{
	const ig_json_value *v = member(o, key);
	return v && v->type == IG_JSON_OBJECT ? v : NULL;
}

static ig_str string(const ig_json_value *o, const char *key)
{
	const ig_json_value *v = member(o, key);
	return v && v->type == IG_JSON_STRING ? v->s : (ig_str){ NULL, 0 };
}

static bool flag(const ig_json_value *o, const char *key)
{
	const ig_json_value *v = member(o, key);
	return v && v->type == IG_JSON_BOOL && v->b;
}

/* ---- the target ---- */

/* What a request-target keeps as it is, by component: a path as sent
 * keeps every target octet but '?'; a decoded path those but '%' too (a
 * '%' there is a character, not an escape: "/a%41" came from /a%2541); a
 * raw query keeps every target octet; a decoded query key or value only
 * the unreserved ones (RFC 3986 2.3). */
enum target_part { PART_PATH, PART_DECODED_PATH, PART_RAW_QUERY, PART_DECODED };

static bool keeps(char c, enum target_part part)
{
	switch (part) {
	case PART_PATH: return c != '?' && http_has_class(c, HTTP_C_TARGET);
	case PART_DECODED_PATH: return c != '?' && c != '%' && http_has_class(c, HTTP_C_TARGET);
	case PART_RAW_QUERY: return http_has_class(c, HTTP_C_TARGET);
	case PART_DECODED:
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
		       c == '.' || c == '_' || c == '~';
	}
	return false;
}

static void put_encoded(ig_wbuf *w, ig_str s, enum target_part part)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < s.len; i++) {
		char c = s.ptr[i];
		if (keeps(c, part)) {
			ig_wbuf_put(w, &c, 1);
		} else {
			char e[3] = { '%', hex[(unsigned char)c >> 4], hex[c & 15] };
			ig_wbuf_put(w, e, 3);
		}
	}
}

/* key=value pairs of a {key: value} or {key: [values]} object. */
static void put_query_object(ig_wbuf *w, const ig_json_value *q, enum target_part part, bool *first)
{
	for (size_t i = 0; q && i < q->object.len; i++) {
		const ig_json_member *m = &q->object.members[i];
		size_t n = m->value->type == IG_JSON_ARRAY ? m->value->array.len : 1;
		for (size_t k = 0; k < n; k++) {
			const ig_json_value *v = m->value->type == IG_JSON_ARRAY ? m->value->array.items[k] : m->value;
			if (v->type != IG_JSON_STRING)
				continue;
			ig_wbuf_put(w, *first ? "?" : "&", 1);
			*first = false;
			put_encoded(w, m->key, part);
			ig_wbuf_put(w, "=", 1);
			put_encoded(w, v->s, part);
		}
	}
}

/* Whether the event's path arrives %-decoded: an HTTP API's does (its
 * 2.0 rawPath and its 1.0 path alike); a REST API's (a 1.0 event without
 * "version"), a function URL's and a load balancer's come as sent. */
static bool is_function_url(const ig_json_value *e)
{
	ig_str domain = string(object(e, "requestContext"), "domainName");
	static const char url[] = ".lambda-url.";
	for (size_t i = 0; i + sizeof url - 1 <= domain.len; i++)
		if (memcmp(domain.ptr + i, url, sizeof url - 1) == 0)
			return true;
	return false;
}

static bool path_decoded(const ig_json_value *e, bool v2)
{
	return v2 ? !is_function_url(e) : string(e, "version").len > 0;
}

static ig_str target_v2(const ig_json_value *e, ig_arena *a)
{
	ig_wbuf w = { .arena = a };
	ig_str path = string(e, "rawPath");
	put_encoded(&w, path.len ? path : (ig_str){ "/", 1 }, path_decoded(e, true) ? PART_DECODED_PATH : PART_PATH);
	ig_str q = string(e, "rawQueryString");
	if (q.len) {
		ig_wbuf_put(&w, "?", 1);
		put_encoded(&w, q, PART_RAW_QUERY);
	}
	return (ig_str){ w.ptr, w.failed ? 0 : w.len };
}

/* v1.0: the query decoded, so encoded again; ALB: as received. */
static ig_str target_v1_alb(const ig_json_value *e, ig_arena *a, bool alb)
{
	ig_wbuf w = { .arena = a };
	ig_str path = string(e, "path");
	put_encoded(&w, path.len ? path : (ig_str){ "/", 1 },
		    !alb && path_decoded(e, false) ? PART_DECODED_PATH : PART_PATH);
	const ig_json_value *q = object(e, "multiValueQueryStringParameters");
	if (!q)
		q = object(e, "queryStringParameters");
	bool first = true;
	put_query_object(&w, q, alb ? PART_RAW_QUERY : PART_DECODED, &first);
	return (ig_str){ w.ptr, w.failed ? 0 : w.len };
}

/* ---- fields ---- */

static size_t count_values(const ig_json_value *h)
{
	size_t n = 0;
	for (size_t i = 0; h && i < h->object.len; i++)
		n += h->object.members[i].value->type == IG_JSON_ARRAY ? h->object.members[i].value->array.len : 1;
	return n;
}

static void add_field(struct lambda_event *ev, ig_str name, ig_str value)
{
	ig_header *hs = (ig_header *)ev->req.headers;
	if (ev->req.header_count < ev->header_room)
		hs[ev->req.header_count++] = (ig_header){ name, value };
}

/* Every string value of a {name: value} or {name: [values]} object. */
static void add_fields(struct lambda_event *ev, const ig_json_value *h)
{
	for (size_t i = 0; h && i < h->object.len; i++) {
		const ig_json_member *m = &h->object.members[i];
		size_t n = m->value->type == IG_JSON_ARRAY ? m->value->array.len : 1;
		for (size_t k = 0; k < n; k++) {
			const ig_json_value *v = m->value->type == IG_JSON_ARRAY ? m->value->array.items[k] : m->value;
			if (v->type == IG_JSON_STRING)
				add_field(ev, m->key, v->s);
		}
	}
}

/* v2.0's cookies array as the one Cookie field a client sends. */
static bool add_cookies(struct lambda_event *ev, const ig_json_value *cookies, ig_arena *a)
{
	if (!cookies || cookies->type != IG_JSON_ARRAY || !cookies->array.len)
		return true;
	ig_wbuf w = { .arena = a };
	for (size_t i = 0; i < cookies->array.len; i++) {
		const ig_json_value *c = cookies->array.items[i];
		if (c->type != IG_JSON_STRING)
			continue;
		if (w.len)
			ig_wbuf_lit(&w, "; ");
		ig_wbuf_put(&w, c->s.ptr, c->s.len);
	}
	if (w.failed)
		return false;
	ig_lambda_event_set_header(ev, "cookie", (ig_str){ w.ptr, w.len });
	return true;
}

static bool alloc_fields(struct lambda_event *ev, ig_arena *a, size_t n)
{
	ev->header_room = n + EXTRA_HEADERS;
	ev->req.headers = ig_arena_alloc(a, ev->header_room * sizeof(ig_header));
	ev->req.header_count = 0;
	return ev->req.headers != NULL;
}

/* ---- the body ---- */

static bool take_body(struct lambda_event *ev, const ig_json_value *e, ig_arena *a, const char **why)
{
	ig_str body = string(e, "body");
	if (!flag(e, "isBase64Encoded") || !body.len) {
		ev->req.body = body;
		return true;
	}
	uint8_t *out = ig_arena_alloc(a, body.len / 4 * 3 + 3);
	long n = out ? ig_base64_decode(body.ptr, body.len, out, body.len / 4 * 3 + 3) : -1;
	if (n < 0) {
		*why = out ? "the event's body is not base64" : "out of memory for the event's body";
		return false;
	}
	ev->req.body = (ig_str){ (const char *)out, (size_t)n };
	return true;
}

/* ---- the kinds ---- */

static int decode_v2(const ig_json_value *e, ig_arena *a, struct lambda_event *ev, const char **why)
{
	const ig_json_value *http = object(object(e, "requestContext"), "http");
	ev->kind = LAMBDA_EVENT_V2;
	ev->function_url = is_function_url(e);
	ev->req.method = string(http, "method");
	ev->req.peer = string(http, "sourceIp");
	ev->req.target = target_v2(e, a);
	const ig_json_value *headers = object(e, "headers");
	if (!alloc_fields(ev, a, count_values(headers) + 1)) {
		*why = "out of memory for the event's fields";
		return -1;
	}
	add_fields(ev, headers);
	if (!add_cookies(ev, member(e, "cookies"), a)) {
		*why = "out of memory for the event's cookies";
		return -1;
	}
	return take_body(ev, e, a, why) ? 0 : -1;
}

static int decode_v1_alb(const ig_json_value *e, ig_arena *a, struct lambda_event *ev, bool alb, const char **why)
{
	ev->kind = alb ? LAMBDA_EVENT_ALB : LAMBDA_EVENT_V1;
	ev->req.method = string(e, "httpMethod");
	ev->req.peer = string(object(object(e, "requestContext"), "identity"), "sourceIp");
	ev->req.target = target_v1_alb(e, a, alb);
	/* An ALB target group in multi-value mode wants its answer that way even
	 * if the request had no fields; an empty multiValueHeaders (API Gateway
	 * 1.0 sends one beside a full headers) says nothing about the fields. */
	const ig_json_value *headers = object(e, "multiValueHeaders");
	ev->multi_value = alb && headers;
	if (!headers || !headers->object.len)
		headers = object(e, "headers");
	if (!alloc_fields(ev, a, count_values(headers))) {
		*why = "out of memory for the event's fields";
		return -1;
	}
	add_fields(ev, headers);
	return take_body(ev, e, a, why) ? 0 : -1;
}

/* An EventBridge Scheduler target's Input, {"source":"ingot.cron","job":
 * "<name>"} (schemac --cron-export eventbridge): a request to the job's
 * operation, as the scheduler of a long-lived process makes it. */
static int decode_cron(const ig_json_value *e, ig_arena *a, struct lambda_event *ev, const char **why)
{
	ig_str name = string(e, "job");
	const struct ig_cron_job *job = NULL;
	for (size_t i = 0; &ig_api_cron && i < ig_api_cron.count && !job; i++)
		if (strlen(ig_api_cron.jobs[i].name) == name.len && memcmp(ig_api_cron.jobs[i].name, name.ptr, name.len) == 0)
			job = &ig_api_cron.jobs[i];
	if (!job) {
		*why = "the ingot.cron event names no cron job of this app";
		return -1;
	}
	ev->kind = LAMBDA_EVENT_CRON;
	if (!alloc_fields(ev, a, 1)) {
		*why = "out of memory";
		return -1;
	}
	add_field(ev, IG_STR("Ingot-Cron-Job"), (ig_str){ job->name, strlen(job->name) });
	ev->req.method = (ig_str){ job->method, strlen(job->method) };
	ev->req.target = (ig_str){ job->path, strlen(job->path) };
	ev->req.peer = IG_STR("ingot.cron");
	return 0;
}

int ig_lambda_event_decode(const char *json, size_t len, ig_arena *a, struct lambda_event *ev, const char **why)
{
	*ev = (struct lambda_event){ 0 };
	ig_json_reader r;
	ig_jr_init(&r, json, len, a, EVENT_MAX_DEPTH);
	const ig_json_value *e = ig_jr_value(&r);
	if (!e || !ig_jr_finish(&r) || e->type != IG_JSON_OBJECT) {
		*why = "the event is not a JSON object";
		return -1;
	}
	const ig_json_value *ctx = object(e, "requestContext");
	ig_str version = string(e, "version");
	int rc;
	if (object(ctx, "http") && version.len == 3 && memcmp(version.ptr, "2.0", 3) == 0)
		rc = decode_v2(e, a, ev, why);
	else if (member(e, "httpMethod"))
		rc = decode_v1_alb(e, a, ev, object(ctx, "elb") != NULL, why);
	else if (string(e, "source").len == 10 && memcmp(string(e, "source").ptr, "ingot.cron", 10) == 0)
		rc = decode_cron(e, a, ev, why);
	else if (member(e, "Records") && member(e, "Records")->type == IG_JSON_ARRAY) {
		ev->kind = LAMBDA_EVENT_RECORDS;
		ev->event = e;
		return 0;
	} else {
		*why = "the event is not an HTTP event (API Gateway 1.0 or 2.0, a function URL, or ALB) nor an ingot.cron one";
		return -1;
	}
	if (rc == 0 && (!ev->req.method.len || !ev->req.target.len)) {
		*why = "the event has no method or path";
		return -1;
	}
	return rc;
}

bool ig_lambda_event_set_header(struct lambda_event *ev, const char *name, ig_str value)
{
	size_t n = strlen(name);
	ig_header *hs = (ig_header *)ev->req.headers;
	size_t kept = 0;
	for (size_t i = 0; i < ev->req.header_count; i++)
		if (!(hs[i].name.len == n && ig_http_eq_nocase(hs[i].name.ptr, n, name)))
			hs[kept++] = hs[i];
	ev->req.header_count = kept;
	if (kept >= ev->header_room)
		return false;
	hs[ev->req.header_count++] = (ig_header){ { name, n }, value };
	return true;
}

ig_str ig_lambda_event_header(const struct lambda_event *ev, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < ev->req.header_count; i++)
		if (ev->req.headers[i].name.len == n && ig_http_eq_nocase(ev->req.headers[i].name.ptr, n, name))
			return ev->req.headers[i].value;
	return (ig_str){ NULL, 0 };
}
