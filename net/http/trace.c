/* Request ids and trace context (trace.h): validating what the request
 * brought and making ids from the core's rng (exchange.c serves them to
 * handlers). A made id is 128 bits in hex; the server span's id is new
 * for every request, the trace id is the caller's when its traceparent is
 * valid. Nothing here allocates except joining several tracestate fields. */
#include "trace.h"
#include "parser.h"

IG_HOT void ig_http_trace_begin(struct http_trace *t, const struct http_request *r)
{
	t->request_id_field = r->request_id_field;
	t->traceparent_field = r->traceparent_field;
	t->tracestate_field = r->tracestate_field;
	t->traceparents = r->traceparents;
	t->tracestates = r->tracestates;
}

IG_HOT bool ig_http_request_id_valid(ig_str v)
{
	if (v.len == 0 || v.len > HTTP_REQUEST_ID_MAX)
		return false;
	for (size_t i = 0; i < v.len; i++)
		if ((unsigned char)v.ptr[i] < 0x21 || (unsigned char)v.ptr[i] > 0x7e)
			return false;
	return true;
}

IG_HOT static void make_id(struct ig_rng *rng, char out[HTTP_MADE_ID_LEN])
{
	uint64_t hi = ig_rng_next(rng);
	ig_hex128(out, hi, ig_rng_next(rng));
}

size_t ig_http_request_id_of(const struct http_request *r, struct ig_rng *rng, char out[HTTP_REQUEST_ID_MAX])
{
	if (r->request_id_field) {
		ig_str v = r->headers[r->request_id_field - 1].value;
		if (ig_http_request_id_valid(v)) {
			memcpy(out, v.ptr, v.len);
			return v.len;
		}
	}
	make_id(rng, out);
	return HTTP_MADE_ID_LEN;
}

static bool lower_hex(const char *p, size_t n, bool *all_zero)
{
	*all_zero = true;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		if (c != '0')
			*all_zero = false;
	}
	return true;
}

bool ig_http_traceparent_parse(ig_str v, char trace_id[32], uint8_t *flags)
{
	const char *p = v.ptr;
	bool zero;
	if (v.len < 55 || !lower_hex(p, 2, &zero) || (p[0] == 'f' && p[1] == 'f'))
		return false;
	if (zero ? v.len != 55 : v.len > 55 && p[55] != '-')
		return false; /* 00 is exactly 55; a later version may extend it */
	if (p[2] != '-' || p[35] != '-' || p[52] != '-')
		return false;
	if (!lower_hex(p + 3, 32, &zero) || zero || !lower_hex(p + 36, 16, &zero) || zero ||
	    !lower_hex(p + 53, 2, &zero))
		return false;
	memcpy(trace_id, p + 3, 32);
	*flags = (uint8_t)(ig_hex_digit(p[53]) << 4 | ig_hex_digit(p[54]));
	return true;
}

uint64_t ig_http_request_id_hash(ig_str id)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (size_t i = 0; i < id.len; i++)
		h = (h ^ (unsigned char)id.ptr[i]) * 0x100000001b3u;
	return h;
}

/* ---- an exchange's ids, made on first use ---- */

static uint64_t nonzero(struct ig_rng *rng)
{
	uint64_t v;
	while ((v = ig_rng_next(rng)) == 0)
		;
	return v;
}

/* Several tracestate fields are one list (RFC 9110 5.3): joined with ','.
 * Over HTTP_TRACESTATE_MAX, none is passed on. Into the arena: a call made
 * for the request may write it after the read buffer the request came in
 * has gone. */
static ig_str joined_tracestate(const struct http_trace *t, const ig_header *fields, size_t num_fields,
				ig_arena *arena)
{
	char buf[HTTP_TRACESTATE_MAX];
	size_t n = 0;
	for (size_t i = t->tracestate_field - 1u; i < num_fields; i++) {
		const ig_header *h = &fields[i];
		if (h->name.len != 10 || !ig_http_same_nocase(h->name.ptr, "tracestate", 10) || !h->value.len)
			continue;
		if (n + (n != 0) + h->value.len > sizeof buf)
			return (ig_str){ NULL, 0 };
		if (n)
			buf[n++] = ',';
		memcpy(buf + n, h->value.ptr, h->value.len);
		n += h->value.len;
	}
	char *d = n ? ig_arena_alloc(arena, n) : NULL;
	if (!d)
		return (ig_str){ NULL, 0 };
	memcpy(d, buf, n);
	return (ig_str){ d, n };
}

struct http_trace *ig_http_trace_context(struct http_trace *t, const ig_header *fields, size_t num_fields,
					 ig_arena *arena, struct ig_rng *rng)
{
	if (t->trace_ready)
		return t;
	bool continued = t->traceparents == 1 &&
			 ig_http_traceparent_parse(fields[t->traceparent_field - 1].value, t->trace_id, &t->flags);
	if (!continued) {
		/* A new trace; its tracestate, if any, belonged to the other. */
		ig_hex64(t->trace_id, nonzero(rng));
		ig_hex64(t->trace_id + 16, ig_rng_next(rng));
		t->flags = 1; /* sampled: the access log records this span */
	}
	t->trace_id[32] = 0;
	ig_hex64(t->span_id, nonzero(rng));
	t->span_id[16] = 0;
	t->tracestate = continued && t->tracestates ? joined_tracestate(t, fields, num_fields, arena)
						    : (ig_str){ NULL, 0 };
	t->trace_ready = true;
	return t;
}

IG_HOT ig_str ig_http_trace_request_id(struct http_trace *t, const ig_header *fields, struct ig_rng *rng)
{
	if (!t->id_len) {
		ig_str v = t->request_id_field ? fields[t->request_id_field - 1].value : (ig_str){ NULL, 0 };
		if (ig_http_request_id_valid(v)) {
			memcpy(t->id, v.ptr, v.len);
			t->id_len = (uint8_t)v.len;
		} else {
			make_id(rng, t->id);
			t->id_len = HTTP_MADE_ID_LEN;
		}
	}
	return (ig_str){ t->id, t->id_len };
}

void ig_http_trace_child(const struct http_trace *t, struct ig_rng *rng, char out[HTTP_TRACEPARENT_LEN])
{
	static const char digits[] = "0123456789abcdef";
	memcpy(out, "00-", 3);
	memcpy(out + 3, t->trace_id, 32);
	out[35] = '-';
	ig_hex64(out + 36, nonzero(rng));
	out[52] = '-';
	out[53] = digits[t->flags >> 4];
	out[54] = digits[t->flags & 15];
}
