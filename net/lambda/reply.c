/* The answers Lambda's HTTP front ends expect (event.h): the captured
 * response's status, fields and body written as the event's kind wants
 * them. Date, Content-Length, Transfer-Encoding and Connection belong to
 * the memory connection: the front end writes its own. */
#include "event.h"
#include "kernel/runtime/base64.h"
#include "kernel/runtime/json.h"
#include "ingot/json_read.h"
#include "net/http/codec.h"
#include "net/http/internal.h"

#include <string.h>

static bool named(ig_str name, const char *lower)
{
	return ig_http_eq_nocase(name.ptr, name.len, lower);
}

static bool excluded(ig_str name)
{
	return named(name, "date") || named(name, "content-length") || named(name, "connection") ||
	       named(name, "transfer-encoding");
}

static bool same_name(ig_str a, ig_str b)
{
	return a.len == b.len && ig_http_same_nocase(a.ptr, b.ptr, a.len);
}

/* True if an earlier field has h's name: its values were written with it. */
static bool seen_before(const struct http_inproc_response *res, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (same_name(res->headers[k].name, res->headers[i].name))
			return true;
	return false;
}

/* A field value as JSON string text: UTF-8 as it is (escaped); any
 * other bytes (obs-text, RFC 9110 5.5) read as ISO-8859-1, as HTTP's old
 * texts did, since a JSON string cannot hold them raw. */
static void put_value_text(ig_wbuf *w, ig_str v)
{
	if (ig_utf8_valid(v.ptr, v.len)) {
		char *d = ig_wbuf_reserve(w, 6 * v.len);
		if (d)
			w->len += ig_json_escape(d, v.ptr, v.len);
		return;
	}
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < v.len; i++) {
		unsigned char c = (unsigned char)v.ptr[i];
		if (c < 0x80) {
			char *d = ig_wbuf_reserve(w, 6);
			if (d)
				w->len += ig_json_escape(d, (const char *)&c, 1);
		} else {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			ig_wbuf_put(w, e, 6);
		}
	}
}

enum header_form {
	FORM_JOINED,      /* {name: "v1, v2"} */
	FORM_JOINED_ONE_COOKIE, /* the same, but Set-Cookie's first value only (ALB) */
	FORM_LISTS,       /* {name: ["v1", "v2"]} */
};

/* The fields as one JSON object; v2.0 leaves Set-Cookie to cookies. */
static void put_headers(ig_wbuf *w, const struct http_inproc_response *res, enum header_form form, bool skip_cookies)
{
	ig_wbuf_lit(w, "{");
	bool first = true;
	for (size_t i = 0; i < res->header_count; i++) {
		ig_str name = res->headers[i].name;
		if (excluded(name) || (skip_cookies && named(name, "set-cookie")) || seen_before(res, i))
			continue;
		if (!first)
			ig_wbuf_lit(w, ",");
		first = false;
		ig_json_string(w, name.ptr, name.len);
		if (form == FORM_LISTS)
			ig_wbuf_lit(w, ":[");
		else
			ig_wbuf_lit(w, ":\"");
		bool one = form == FORM_JOINED_ONE_COOKIE && named(name, "set-cookie");
		bool first_value = true;
		for (size_t k = i; k < res->header_count; k++) {
			if (!same_name(res->headers[k].name, name))
				continue;
			ig_str v = res->headers[k].value;
			if (form == FORM_LISTS) {
				if (!first_value)
					ig_wbuf_lit(w, ",");
				ig_wbuf_lit(w, "\"");
				put_value_text(w, v);
				ig_wbuf_lit(w, "\"");
			} else {
				if (!first_value)
					ig_wbuf_lit(w, ", ");
				put_value_text(w, v);
			}
			first_value = false;
			if (one)
				break;
		}
		if (form == FORM_LISTS)
			ig_wbuf_lit(w, "]");
		else
			ig_wbuf_lit(w, "\"");
	}
	ig_wbuf_lit(w, "}");
}

static void put_cookies(ig_wbuf *w, const struct http_inproc_response *res)
{
	bool first = true;
	for (size_t i = 0; i < res->header_count; i++) {
		if (!named(res->headers[i].name, "set-cookie"))
			continue;
		if (first)
			ig_wbuf_lit(w, ",\"cookies\":[");
		else
			ig_wbuf_lit(w, ",");
		first = false;
		ig_wbuf_lit(w, "\"");
		put_value_text(w, res->headers[i].value);
		ig_wbuf_lit(w, "\"");
	}
	if (!first)
		ig_wbuf_lit(w, "]");
}

#define ESCAPE_PIECE 4096

/* A body that is text goes as it is; any other bytes as base64. */
static void put_body(ig_wbuf *w, ig_str body)
{
	bool text = ig_utf8_valid(body.ptr, body.len);
	ig_wbuf_lit(w, ",\"body\":\"");
	if (text) {
		/* In pieces: six bytes a byte reserved at once would ask for six
		 * times the body (a 5.6 MB body, the arena's whole 64 MB). */
		for (size_t at = 0; at < body.len; at += ESCAPE_PIECE) {
			size_t n = body.len - at < ESCAPE_PIECE ? body.len - at : ESCAPE_PIECE;
			char *d = ig_wbuf_reserve(w, 6 * n);
			if (!d)
				break;
			w->len += ig_json_escape(d, body.ptr + at, n);
		}
	} else {
		char *d = ig_wbuf_reserve(w, ig_base64_len(body.len));
		if (d)
			w->len += ig_base64_encode((const uint8_t *)body.ptr, body.len, d);
	}
	ig_wbuf_lit(w, "\",\"isBase64Encoded\":");
	ig_json_bool(w, !text);
}

bool ig_lambda_reply_encode(const struct lambda_event *ev, const struct http_inproc_response *res, ig_wbuf *w)
{
	ig_wbuf_lit(w, "{\"statusCode\":");
	ig_json_int(w, res->status);
	switch (ev->kind) {
	case LAMBDA_EVENT_V2:
		ig_wbuf_lit(w, ",\"headers\":");
		put_headers(w, res, FORM_JOINED, true);
		put_cookies(w, res);
		break;
	case LAMBDA_EVENT_V1:
		ig_wbuf_lit(w, ",\"multiValueHeaders\":");
		put_headers(w, res, FORM_LISTS, false);
		break;
	case LAMBDA_EVENT_ALB: {
		ig_wbuf_lit(w, ",\"statusDescription\":\"");
		char code[24];
		ig_wbuf_put(w, code, ig_fmt_u64(code, (uint64_t)res->status));
		ig_wbuf_lit(w, " ");
		const char *reason = ig_http_reason(res->status);
		ig_wbuf_put(w, reason, strlen(reason));
		ig_wbuf_lit(w, "\"");
		if (ev->multi_value)
			ig_wbuf_lit(w, ",\"multiValueHeaders\":");
		else
			ig_wbuf_lit(w, ",\"headers\":");
		put_headers(w, res, ev->multi_value ? FORM_LISTS : FORM_JOINED_ONE_COOKIE, false);
		break;
	}
	case LAMBDA_EVENT_CRON: /* the scheduler reads no fields: the status and body only */
	case LAMBDA_EVENT_RECORDS: /* never a request's answer: net/pubsub/sqs.c makes its own */
		break;
	}
	put_body(w, res->body);
	ig_wbuf_lit(w, "}");
	return !w->failed;
}

bool ig_lambda_reply_prelude(const struct http_inproc_response *res, ig_wbuf *w)
{
	ig_wbuf_lit(w, "{\"statusCode\":");
	ig_json_int(w, res->status);
	ig_wbuf_lit(w, ",\"headers\":");
	put_headers(w, res, FORM_JOINED, true);
	put_cookies(w, res);
	ig_wbuf_lit(w, "}");
	ig_wbuf_put(w, "\0\0\0\0\0\0\0\0", 8);
	return !w->failed;
}
