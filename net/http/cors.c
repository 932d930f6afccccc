/* CORS on the request path (cors.h): judging an Origin against the allowed
 * list, the headers of an allowed cross-origin answer, and the preflight's
 * answer. Only reached with CORS on: while it is off a request pays the
 * one test of ig_cors_on in exchange.c. */
#include "cors.h"
#include "net/ascii.h"

#include <string.h>

struct ig_cors_config ig_cors_config;
struct ig_cors_origin ig_cors_origins[IG_CORS_MAX_ORIGINS];
bool ig_cors_on;

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool ieq(ig_str a, const char *b, size_t blen)
{
	if (a.len != blen)
		return false;
	for (size_t i = 0; i < blen; i++)
		if (lower(a.ptr[i]) != lower(b[i]))
			return false;
	return true;
}

static const ig_str *find_field(const ig_header *h, size_t count, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < count; i++)
		if (ieq(h[i].name, name, n))
			return &h[i].value;
	return NULL;
}

static const ig_str *find_header(const ig_request *q, const char *name)
{
	return find_field(q->headers, q->num_headers, name);
}


/* What a pattern's '*' may stand for: labels of a host name, dots between. */
static bool host_labels(const char *p, size_t n)
{
	if (!n || p[0] == '.' || p[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = lower(p[i]);
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.'))
			return false;
	}
	return true;
}

/* Schemes and hosts compare without case (browsers send them lower-case). */
bool ig_cors_allows(const struct ig_cors_config *c, ig_str origin)
{
	if (c->any)
		return true;
	for (size_t i = 0; i < c->count; i++) {
		const struct ig_cors_origin *e = &ig_cors_origins[i];
		if (!e->pattern) {
			if (ieq(origin, e->prefix.ptr, e->prefix.len))
				return true;
			continue;
		}
		size_t fixed = e->prefix.len + e->suffix.len;
		if (origin.len <= fixed)
			continue;
		ig_str head = { origin.ptr, e->prefix.len };
		ig_str tail = { origin.ptr + origin.len - e->suffix.len, e->suffix.len };
		if (ieq(head, e->prefix.ptr, e->prefix.len) && ieq(tail, e->suffix.ptr, e->suffix.len) &&
		    host_labels(origin.ptr + e->prefix.len, origin.len - fixed))
			return true;
	}
	return false;
}

/* '*' answers any origin only without credentials: a browser refuses '*'
 * on a request that sent cookies, so the origin is echoed then. */
static ig_str allow_value(const struct ig_cors_config *c, ig_str origin)
{
	return c->any && !c->credentials ? IG_STR("*") : origin;
}

static void allow_origin(ig_ctx *ctx, const struct ig_cors_config *c, ig_str origin)
{
	ig_add_header(ctx, "Access-Control-Allow-Origin", allow_value(c, origin));
	if (c->credentials)
		ig_add_header(ctx, "Access-Control-Allow-Credentials", IG_STR("true"));
}

/* Composed whole and appended once by the caller: an exchange's header
 * writer copies byte by byte, for values it must clean, and an Origin is
 * already clean (visible ASCII: the parser's field rules). */
size_t ig_cors_request_lines(const ig_request *q, char *out, size_t cap)
{
	static const char vary[] = "Vary: Origin\r\n";
	const ig_str *origin = find_header(q, "Origin");
	size_t n = 0;
	/* A preflight's answer is ig_cors_preflight's, or its 404's. */
	if (origin && !(ig_str_eq(q->method, "OPTIONS", 7) && find_header(q, "Access-Control-Request-Method")) &&
	    ig_cors_allows(&ig_cors_config, *origin))
		n = ig_cors_head_lines(out, cap, *origin);
	if (!n && cap >= sizeof vary - 1) {
		/* Every answer depends on Origin once CORS is on: a cache must
		   not hand one origin's answer to another. */
		memcpy(out, vary, sizeof vary - 1);
		n = sizeof vary - 1;
	}
	return n;
}

/* Whether method is one of allow's comma-separated tokens. */
static bool method_listed(ig_str allow, ig_str method)
{
	const char *p = allow.ptr, *end = p + allow.len;
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		ig_str t = ig_ascii_trim_ows(p, comma ? comma : end);
		if (method.len && t.len == method.len && memcmp(t.ptr, method.ptr, t.len) == 0)
			return true;
		p = comma ? comma + 1 : end;
	}
	return false;
}

bool ig_cors_preflight(ig_ctx *ctx, ig_str allow, ig_str headers)
{
	const struct ig_cors_config *c = &ig_cors_config;
	const ig_request *q = ig_req(ctx);
	const ig_str *origin = find_header(q, "Origin");
	const ig_str *method = find_header(q, "Access-Control-Request-Method");
	if (!origin || !method)
		return false;
	/* Refused: no CORS header at all, and the browser stops the request. */
	if (ig_cors_allows(c, *origin) && method_listed(allow, *method)) {
		allow_origin(ctx, c, *origin);
		ig_add_header(ctx, "Access-Control-Allow-Methods", allow);
		if (headers.len)
			ig_add_header(ctx, "Access-Control-Allow-Headers", headers);
		if (c->max_age) {
			char n[24];
			size_t k = sizeof n;
			uint64_t v = (uint64_t)c->max_age;
			do
				n[--k] = (char)('0' + v % 10);
			while (v /= 10);
			ig_add_header(ctx, "Access-Control-Max-Age", (ig_str){ n + k, sizeof n - k });
		}
	}
	ig_add_header(ctx, "Allow", allow);
	ig_finish(ctx, 204);
	return true;
}

size_t ig_cors_keep_origin(const ig_header *headers, size_t n, char out[IG_CORS_ORIGIN_MAX])
{
	const ig_str *origin = find_field(headers, n, "Origin");
	if (!origin || origin->len > IG_CORS_ORIGIN_MAX || !ig_cors_allows(&ig_cors_config, *origin))
		return 0;
	memcpy(out, origin->ptr, origin->len);
	return origin->len;
}

/* The lines of an answer to an allowed origin: ig_cors_request_lines's, and
 * a failed connection's (conn.c); an Origin is visible ASCII (the parser's
 * field rules). */
size_t ig_cors_head_lines(char *out, size_t cap, ig_str origin)
{
	const struct ig_cors_config *c = &ig_cors_config;
	ig_str allow = allow_value(c, origin);
	size_t expose = strlen(c->expose_headers), n = 0;
	ig_str parts[] = {
		IG_STR("Vary: Origin\r\nAccess-Control-Allow-Origin: "), allow, IG_STR("\r\n"),
		c->credentials ? IG_STR("Access-Control-Allow-Credentials: true\r\n") : IG_STR(""),
		expose ? IG_STR("Access-Control-Expose-Headers: ") : IG_STR(""), { c->expose_headers, expose },
		expose ? IG_STR("\r\n") : IG_STR(""),
	};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		if (parts[i].len > cap - n)
			return 0;
		memcpy(out + n, parts[i].ptr, parts[i].len);
		n += parts[i].len;
	}
	return n;
}
