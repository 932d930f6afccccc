/* JetStream's API (js.h): each call's subject and JSON body, its answer
 * read into an ig_js_result, the pull's stream of messages and statuses,
 * and the ack subjects' metadata. Requests go through nats.h only. */
#include "js.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ingot/json_read.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/json.h"
#include "net/nats/proto.h"

/* A request's text built on the stack; ok turns false past its end. */
struct js_text {
	char buf[4096];
	size_t len;
	bool ok;
};

static void put(struct js_text *t, const char *s, size_t n)
{
	if (!t->ok || n > sizeof t->buf - t->len) {
		t->ok = false;
		return;
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

static void puts_(struct js_text *t, const char *s) { put(t, s, strlen(s)); }

/* prefix, then v's decimal digits: no snprintf (a pull's body is made
 * for every few messages). */
static void put_num(struct js_text *t, const char *prefix, int64_t v)
{
	char b[24];
	puts_(t, prefix);
	put(t, b, ig_fmt_i64(b, v));
}

/* A JSON string with its quotes. */
static void put_json(struct js_text *t, ig_str s)
{
	if (!t->ok || 6 * s.len + 2 > sizeof t->buf - t->len) {
		t->ok = false;
		return;
	}
	t->buf[t->len++] = '"';
	t->len += ig_json_escape(t->buf + t->len, s.ptr, s.len);
	t->buf[t->len++] = '"';
}

/* A stream's or consumer's name: one subject token. */
static bool name_ok(ig_str s)
{
	if (s.len == 0 || s.len > 255)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		char c = s.ptr[i];
		if (c == '.' || c == '*' || c == '>' || c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == 0)
			return false;
	}
	return true;
}

/* ---- answers ---- */

static bool key_is(ig_str k, const char *lit)
{
	return k.len == strlen(lit) && !memcmp(k.ptr, lit, k.len);
}

static bool read_uint(ig_json_reader *r, uint64_t *out)
{
	ig_json_value v;
	if (ig_jr_peek(r) != IG_JN_NUMBER)
		return ig_jr_skip(r);
	if (!ig_jr_number(r, &v))
		return false;
	if (v.type == IG_JSON_INT && v.i >= 0)
		*out = (uint64_t)v.i;
	return true;
}

static bool read_int(ig_json_reader *r, int *out)
{
	uint64_t v = 0;
	if (!read_uint(r, &v))
		return false;
	*out = v > 1000000 ? 0 : (int)v;
	return true;
}

static bool read_error(ig_json_reader *r, struct ig_js_result *res)
{
	ig_str k;
	if (ig_jr_peek(r) != IG_JN_OBJECT)
		return ig_jr_skip(r);
	res->err = IG_NATS_SERVER;
	if (!ig_jr_object_begin(r))
		return false;
	while (ig_jr_object_next_key(r, &k)) {
		bool ok = key_is(k, "code")	     ? read_int(r, &res->code)
			  : key_is(k, "err_code")    ? read_int(r, &res->err_code)
			  : key_is(k, "description") && ig_jr_peek(r) == IG_JN_STRING ? ig_jr_string(r, &res->description)
						     : ig_jr_skip(r);
		if (!ok)
			return false;
	}
	return r->error == NULL;
}

static bool read_state(ig_json_reader *r, struct ig_js_result *res)
{
	ig_str k;
	if (ig_jr_peek(r) != IG_JN_OBJECT)
		return ig_jr_skip(r);
	if (!ig_jr_object_begin(r))
		return false;
	while (ig_jr_object_next_key(r, &k)) {
		bool ok = key_is(k, "messages")   ? read_uint(r, &res->messages)
			  : key_is(k, "last_seq") ? read_uint(r, &res->last_seq)
						  : ig_jr_skip(r);
		if (!ok)
			return false;
	}
	return r->error == NULL;
}

/* The fields every answer kind may carry, read in one pass. */
static void read_answer(ig_arena *a, ig_str json, struct ig_js_result *res)
{
	ig_json_reader r;
	ig_jr_init(&r, json.ptr, json.len, a, 64);
	res->json = json;
	ig_str k;
	if (!ig_jr_object_begin(&r)) {
		res->err = IG_NATS_PROTOCOL;
		return;
	}
	while (ig_jr_object_next_key(&r, &k)) {
		bool ok;
		if (key_is(k, "error"))
			ok = read_error(&r, res);
		else if (key_is(k, "stream") && ig_jr_peek(&r) == IG_JN_STRING)
			ok = ig_jr_string(&r, &res->stream);
		else if (key_is(k, "seq"))
			ok = read_uint(&r, &res->seq);
		else if (key_is(k, "duplicate") && ig_jr_peek(&r) >= IG_JN_FALSE && ig_jr_peek(&r) <= IG_JN_TRUE)
			ok = ig_jr_bool(&r, &res->duplicate);
		else if (key_is(k, "state"))
			ok = read_state(&r, res);
		else if (key_is(k, "num_pending"))
			ok = read_uint(&r, &res->num_pending);
		else if (key_is(k, "num_ack_pending"))
			ok = read_uint(&r, &res->num_ack_pending);
		else
			ok = ig_jr_skip(&r);
		if (!ok)
			break;
	}
	if (r.error)
		res->err = IG_NATS_PROTOCOL;
}

/* ---- API calls ---- */

struct js_call {
	struct ig_nats *nc;
	ig_js_done_fn *done;
	void *arg;
};
_Static_assert(sizeof(struct js_call) <= IG_NATS_CTX_MAX, "a call's context fits the client's pool");

static bool on_api_reply(void *arg, const struct ig_nats_msg *m, enum ig_nats_error err)
{
	struct js_call *c = arg;
	struct ig_js_result res = { .err = err };
	ig_arena *a = ig_nats_scratch(c->nc);
	ig_arena_reset(a);
	if (m && m->status >= 300) {
		res.err = m->status == 503 ? IG_NATS_NO_RESPONDERS : IG_NATS_SERVER;
		res.code = m->status;
		res.description = m->description;
	} else if (m) {
		read_answer(a, m->payload, &res);
	}
	c->done(c->arg, &res);
	ig_arena_reset(a);
	ig_nats_ctx_give(c->nc, c);
	return false;
}

static enum ig_nats_error api_call(struct ig_nats *nc, const struct js_text *subject, const struct js_text *body,
				   ig_str headers, uint32_t timeout_ms, ig_js_done_fn *done, void *arg)
{
	if (!subject->ok || !body->ok)
		return IG_NATS_BAD_ARGUMENT;
	struct js_call *c = ig_nats_ctx_take(nc);
	if (!c)
		return IG_NATS_NO_MEMORY;
	*c = (struct js_call){ nc, done, arg };
	enum ig_nats_error e = ig_nats_request(nc, (ig_str){ subject->buf, subject->len }, headers,
					       (ig_str){ body->buf, body->len }, timeout_ms, on_api_reply, c, NULL);
	if (e != IG_NATS_OK)
		ig_nats_ctx_give(nc, c);
	return e;
}

static void api_subject(struct js_text *t, const char *what, ig_str a, ig_str b)
{
	*t = (struct js_text){ .ok = true };
	puts_(t, "$JS.API.");
	puts_(t, what);
	put(t, a.ptr, a.len);
	if (b.len) {
		put(t, ".", 1);
		put(t, b.ptr, b.len);
	}
}

enum ig_nats_error ig_js_stream_create(struct ig_nats *nc, const struct ig_js_stream_config *c, uint32_t timeout_ms,
				       ig_js_done_fn *done, void *arg)
{
	if (!name_ok(c->name) || c->nsubjects == 0)
		return IG_NATS_BAD_ARGUMENT;
	struct js_text s, b = { .ok = true };
	api_subject(&s, "STREAM.CREATE.", c->name, (ig_str){ 0 });
	puts_(&b, "{\"name\":");
	put_json(&b, c->name);
	puts_(&b, ",\"subjects\":[");
	for (size_t i = 0; i < c->nsubjects; i++) {
		if (i)
			put(&b, ",", 1);
		put_json(&b, c->subjects[i]);
	}
	puts_(&b, "],\"retention\":\"limits\",\"storage\":");
	puts_(&b, c->memory ? "\"memory\"" : "\"file\"");
	put_num(&b, ",\"num_replicas\":", c->replicas ? c->replicas : 1);
	put_num(&b, ",\"max_age\":", c->max_age_ns);
	puts_(&b, ",\"discard\":\"old\"}");
	return api_call(nc, &s, &b, (ig_str){ 0 }, timeout_ms, done, arg);
}

enum ig_nats_error ig_js_stream_info(struct ig_nats *nc, ig_str stream, uint32_t timeout_ms, ig_js_done_fn *done,
				     void *arg)
{
	if (!name_ok(stream))
		return IG_NATS_BAD_ARGUMENT;
	struct js_text s, b = { .ok = true };
	api_subject(&s, "STREAM.INFO.", stream, (ig_str){ 0 });
	return api_call(nc, &s, &b, (ig_str){ 0 }, timeout_ms, done, arg);
}

enum ig_nats_error ig_js_consumer_create(struct ig_nats *nc, const struct ig_js_consumer_config *c,
					 uint32_t timeout_ms, ig_js_done_fn *done, void *arg)
{
	if (!name_ok(c->stream) || !name_ok(c->durable))
		return IG_NATS_BAD_ARGUMENT;
	struct js_text s, b = { .ok = true };
	api_subject(&s, "CONSUMER.DURABLE.CREATE.", c->stream, c->durable);
	puts_(&b, "{\"stream_name\":");
	put_json(&b, c->stream);
	puts_(&b, ",\"config\":{\"durable_name\":");
	put_json(&b, c->durable);
	puts_(&b, ",\"deliver_policy\":\"all\",\"ack_policy\":\"explicit\",\"replay_policy\":\"instant\"");
	if (c->filter_subject.len) {
		puts_(&b, ",\"filter_subject\":");
		put_json(&b, c->filter_subject);
	}
	if (c->ack_wait_ns)
		put_num(&b, ",\"ack_wait\":", c->ack_wait_ns);
	if (c->max_deliver)
		put_num(&b, ",\"max_deliver\":", c->max_deliver);
	if (c->max_ack_pending)
		put_num(&b, ",\"max_ack_pending\":", c->max_ack_pending);
	if (c->nbackoff) {
		puts_(&b, ",\"backoff\":[");
		for (size_t i = 0; i < c->nbackoff; i++)
			put_num(&b, i ? "," : "", c->backoff_ns[i]);
		put(&b, "]", 1);
	}
	puts_(&b, "}}");
	return api_call(nc, &s, &b, (ig_str){ 0 }, timeout_ms, done, arg);
}

enum ig_nats_error ig_js_publish(struct ig_nats *nc, ig_str subject, ig_str headers, ig_str payload, ig_str msg_id,
				 uint32_t timeout_ms, ig_js_done_fn *done, void *arg)
{
	struct js_text h = { .ok = true };
	if (msg_id.len) {
		/* Nats-Msg-Id joins the message's own headers (before their
		   blank line), or starts a block of its own. */
		if (headers.len >= 12 && !memcmp(headers.ptr + headers.len - 4, "\r\n\r\n", 4))
			put(&h, headers.ptr, headers.len - 2);
		else
			puts_(&h, "NATS/1.0\r\n");
		puts_(&h, "Nats-Msg-Id: ");
		put(&h, msg_id.ptr, msg_id.len);
		puts_(&h, "\r\n\r\n");
		headers = (ig_str){ h.buf, h.len };
		if (!h.ok)
			return IG_NATS_BAD_ARGUMENT;
	}
	struct js_call *c = ig_nats_ctx_take(nc);
	if (!c)
		return IG_NATS_NO_MEMORY;
	*c = (struct js_call){ nc, done, arg };
	enum ig_nats_error e = ig_nats_request(nc, subject, headers, payload, timeout_ms, on_api_reply, c, NULL);
	if (e != IG_NATS_OK)
		ig_nats_ctx_give(nc, c);
	return e;
}

/* ---- the ack subject ---- */

bool ig_js_meta_parse(ig_str reply, struct ig_js_meta *m)
{
	ig_str tok[12];
	size_t n = 0, start = 0;
	for (size_t i = 0; i <= reply.len; i++) {
		if (i == reply.len || reply.ptr[i] == '.') {
			if (n == 12)
				return false;
			tok[n++] = (ig_str){ reply.ptr + start, i - start };
			start = i + 1;
		}
	}
	if (n < 9 || !key_is(tok[0], "$JS") || !key_is(tok[1], "ACK"))
		return false;
	/* The longer form puts a domain and an account hash after ACK (and
	   may end with a random token). */
	size_t b = n == 9 ? 2 : 4;
	if (n != 9 && n < 11)
		return false;
	uint64_t ts;
	*m = (struct ig_js_meta){ .stream = tok[b], .consumer = tok[b + 1] };
	if (!ig_nats_uint(tok[b + 2], &m->delivered) || !ig_nats_uint(tok[b + 3], &m->stream_seq) ||
	    !ig_nats_uint(tok[b + 4], &m->consumer_seq) || !ig_nats_uint(tok[b + 5], &ts) ||
	    !ig_nats_uint(tok[b + 6], &m->pending))
		return false;
	m->timestamp_ns = (int64_t)ts;
	return true;
}

/* ---- pulls ---- */

struct js_pull {
	struct ig_nats *nc;
	ig_js_msg_fn *on_msg;
	ig_js_pull_end_fn *on_end;
	void *arg;
	uint32_t batch, received;
};
_Static_assert(sizeof(struct js_pull) <= IG_NATS_CTX_MAX, "a pull's context fits the client's pool");

static bool on_pull_reply(void *arg, const struct ig_nats_msg *m, enum ig_nats_error err)
{
	struct js_pull *p = arg;
	if (!m) {
		p->on_end(p->arg, err, 0, p->received);
		ig_nats_ctx_give(p->nc, p);
		return false;
	}
	if (m->status == 100)
		return true; /* an idle heartbeat */
	if (m->status) {
		p->on_end(p->arg, IG_NATS_OK, m->status, p->received);
		ig_nats_ctx_give(p->nc, p);
		return false;
	}
	struct ig_js_meta meta;
	if (!ig_js_meta_parse(m->reply, &meta))
		meta = (struct ig_js_meta){ 0 };
	p->received++;
	p->on_msg(p->arg, m, &meta);
	if (p->received < p->batch)
		return true;
	p->on_end(p->arg, IG_NATS_OK, 0, p->received);
	ig_nats_ctx_give(p->nc, p);
	return false;
}

enum ig_nats_error ig_js_pull(struct ig_nats *nc, ig_str stream, ig_str consumer, const struct ig_js_pull_options *o,
			      ig_js_msg_fn *on_msg, ig_js_pull_end_fn *on_end, void *arg)
{
	if (!name_ok(stream) || !name_ok(consumer))
		return IG_NATS_BAD_ARGUMENT;
	struct js_text s, b = { .ok = true };
	api_subject(&s, "CONSUMER.MSG.NEXT.", stream, consumer);
	uint32_t batch = o->batch ? o->batch : 1;
	put_num(&b, "{\"batch\":", batch);
	if (o->expires_ns)
		put_num(&b, ",\"expires\":", o->expires_ns);
	if (o->no_wait)
		puts_(&b, ",\"no_wait\":true");
	put(&b, "}", 1);
	if (!s.ok || !b.ok)
		return IG_NATS_BAD_ARGUMENT;
	struct js_pull *p = ig_nats_ctx_take(nc);
	if (!p)
		return IG_NATS_NO_MEMORY;
	*p = (struct js_pull){ nc, on_msg, on_end, arg, batch, 0 };
	uint32_t timeout = o->timeout_ms ? o->timeout_ms
			   : (uint32_t)(o->expires_ns / 1000000) + 5000;
	enum ig_nats_error e = ig_nats_request_many(nc, (ig_str){ s.buf, s.len }, (ig_str){ 0 },
						    (ig_str){ b.buf, b.len }, timeout, on_pull_reply, p, NULL);
	if (e != IG_NATS_OK)
		ig_nats_ctx_give(p->nc, p);
	return e;
}

/* ---- acknowledgements ---- */

enum ig_nats_error ig_js_ack(struct ig_nats *nc, ig_str reply)
{
	return ig_nats_publish(nc, reply, (ig_str){ 0 }, (ig_str){ 0 }, IG_STR("+ACK"));
}

enum ig_nats_error ig_js_nak(struct ig_nats *nc, ig_str reply, int64_t delay_ns)
{
	if (delay_ns <= 0)
		return ig_nats_publish(nc, reply, (ig_str){ 0 }, (ig_str){ 0 }, IG_STR("-NAK"));
	char b[48];
	int n = snprintf(b, sizeof b, "-NAK {\"delay\": %" PRId64 "}", delay_ns);
	return ig_nats_publish(nc, reply, (ig_str){ 0 }, (ig_str){ 0 }, (ig_str){ b, (size_t)n });
}

enum ig_nats_error ig_js_term(struct ig_nats *nc, ig_str reply)
{
	return ig_nats_publish(nc, reply, (ig_str){ 0 }, (ig_str){ 0 }, IG_STR("+TERM"));
}
