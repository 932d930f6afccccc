/* The NATS connection (nats.h): the dial, INFO, TLS when asked, CONNECT
 * and its PING, then frames from proto.c dispatched to subscriptions and
 * to the inbox's requests; output written into one buffer flushed after
 * the loop's batch; the keepalive PING; and the reconnect with backoff,
 * which restores the subscriptions. One timer serves whichever phase the
 * connection is in (connect deadline, keepalive, reconnect delay). */
#include "nats.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingot/http.h"
#include "ingot/json_read.h"
#include "ingot/log.h"
#include "kernel/runtime/arena.h"
#include "kernel/runtime/json.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "kernel/runtime/rng.h"
#include "net/dial/dial.h"
#include "net/nats/proto.h"
#include "net/nats/url.h"
#include "net/sock/sock.h"
#include "net/transport.h"

#define NATS_OUT_MAX ((size_t)64 << 20) /* unsent bytes past this: NO_MEMORY */
#define NATS_INBOX_RANDOM 22

enum nats_state {
	NS_WAITING,   /* for the reconnect timer */
	NS_DIALING,
	NS_INFO,      /* connected, waiting for the server's INFO */
	NS_CONNECTING, /* CONNECT and PING sent, waiting for the PONG */
	NS_UP,
	NS_CLOSED,
};

struct ig_nats_sub {
	struct ig_nats *nc;
	struct ig_nats_sub *next, **pprev;
	uint64_t sid;
	ig_nats_msg_fn *on_msg;
	void *arg;
	size_t subject_len, queue_len;
	char text[]; /* subject, then queue */
};

struct ig_nats_request {
	struct ig_nats *nc;
	struct ig_nats_request *next, **pprev;
	uint64_t token;
	uint64_t sid; /* a subscription of its own (ig_nats_request_many); 0: the inbox's */
	struct ig_timer timer;
	ig_nats_reply_fn *fn;
	void *arg;
};

struct ig_nats {
	struct ig_loop *loop;
	const struct ig_nats_conn_ops *ops;
	void *arg;
	struct ig_nats_options o;
	struct ig_nats_server servers[IG_NATS_MAX_SERVERS];
	uint8_t nservers, cur; /* servers[cur] is dialed next, or connected */
	char name[64];
	enum nats_state state;
	uint32_t generation; /* bumped by every loss: a callback up the stack
				sees the connection it ran on is gone */
	struct sock_core sock;
	struct ig_dial dial;
	struct ig_transport *t, *raw; /* t: TLS over raw, or raw */
	bool tls;
	struct ig_nats_parser parser;
	char *rbuf;
	size_t rpos, rlen, rcap;
	char *obuf;
	size_t olen, opos, ocap;
	bool flushing;
	struct ig_deferred flush;
	struct ig_timer timer;
	uint64_t deadline_ms; /* the connect's, while it connects */
	uint32_t backoff_ms, pings_out;
	uint64_t connects;
	size_t max_payload;
	struct ig_rng rng;
	uint64_t next_sid, inbox_sid, next_token;
	char inbox[8 + NATS_INBOX_RANDOM + 1]; /* "_INBOX.<random>." */
	struct ig_nats_sub *subs;
	/* Oldest first: answers mostly come in the order asked, so the
	   search for a reply's request mostly stops at the head. */
	struct ig_nats_request *requests, **requests_tail;
	struct ig_pool blocks;
	ig_arena scratch;
	/* What a request's life takes, from pools, not malloc: the requests,
	   and their callers' contexts (ig_nats_ctx_take) */
	struct ig_pool request_pool, ctx_pool;
};

static const struct ig_stream_ops nats_stream_ops;
static void start_connect(struct ig_nats *nc);
static void conn_lost(struct ig_nats *nc, enum ig_nats_error kind, const char *why);

const char *ig_nats_error_name(enum ig_nats_error e)
{
	static const char *const names[] = {
		[IG_NATS_OK] = "ok", [IG_NATS_NOT_CONNECTED] = "not connected",
		[IG_NATS_DISCONNECTED] = "disconnected", [IG_NATS_TIMEOUT] = "timeout",
		[IG_NATS_NO_RESPONDERS] = "no responders", [IG_NATS_NO_MEMORY] = "out of memory",
		[IG_NATS_TOO_LARGE] = "too large", [IG_NATS_BAD_ARGUMENT] = "bad argument",
		[IG_NATS_SERVER] = "server error", [IG_NATS_PROTOCOL] = "protocol error",
		[IG_NATS_CONNECT] = "connect failed", [IG_NATS_AUTH] = "authorization refused",
		[IG_NATS_TLS] = "tls failed", [IG_NATS_CLOSED] = "closed",
	};
	return (size_t)e < sizeof names / sizeof names[0] && names[e] ? names[e] : "?";
}

/* ---- output ---- */

static bool out_room(struct ig_nats *nc, size_t need)
{
	if (nc->ocap - nc->olen >= need)
		return true;
	if (nc->opos > 0) {
		memmove(nc->obuf, nc->obuf + nc->opos, nc->olen - nc->opos);
		nc->olen -= nc->opos;
		nc->opos = 0;
		if (nc->ocap - nc->olen >= need)
			return true;
	}
	if (nc->olen + need > NATS_OUT_MAX)
		return false;
	size_t cap = nc->ocap ? nc->ocap : 4096;
	while (cap - nc->olen < need)
		cap *= 2;
	char *b = realloc(nc->obuf, cap);
	if (!b)
		return false;
	nc->obuf = b;
	nc->ocap = cap;
	return true;
}

static void out_put(struct ig_nats *nc, const char *s, size_t n)
{
	memcpy(nc->obuf + nc->olen, s, n);
	nc->olen += n;
}

static void flush_now(struct ig_nats *nc)
{
	uint32_t gen = nc->generation;
	while (nc->t && nc->opos < nc->olen) {
		struct iovec iov = { nc->obuf + nc->opos, nc->olen - nc->opos };
		ssize_t w = nc->t->ops->writev(nc->t, &iov, 1);
		if (w == IG_WOULD_BLOCK) {
			nc->flushing = true;
			return;
		}
		if (w < 0) {
			conn_lost(nc, IG_NATS_DISCONNECTED, "writing to the NATS server failed");
			return;
		}
		nc->opos += (size_t)w;
	}
	if (nc->generation == gen) {
		nc->opos = nc->olen = 0;
		nc->flushing = false;
	}
}

static void flush_deferred(struct ig_deferred *d)
{
	struct ig_nats *nc = (struct ig_nats *)((char *)d - offsetof(struct ig_nats, flush));
	if (nc->t && nc->state >= NS_CONNECTING && nc->state != NS_CLOSED && !nc->flushing)
		flush_now(nc);
}

static void schedule_flush(struct ig_nats *nc)
{
	ig_loop_defer(nc->loop, &nc->flush);
}

static bool subject_ok(ig_str s)
{
	if (s.len == 0)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		if (c > ' ') /* one compare for most bytes: every ack's reply subject comes here */
			continue;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == 0)
			return false;
	}
	return true;
}

/* SUB for sub, into the output. */
static bool put_sub(struct ig_nats *nc, const struct ig_nats_sub *s)
{
	char tail[32];
	int n = snprintf(tail, sizeof tail, " %" PRIu64 "\r\n", s->sid);
	if (!out_room(nc, 5 + s->subject_len + s->queue_len + 1 + (size_t)n))
		return false;
	out_put(nc, "SUB ", 4);
	out_put(nc, s->text, s->subject_len);
	if (s->queue_len) {
		out_put(nc, " ", 1);
		out_put(nc, s->text + s->subject_len, s->queue_len);
	}
	out_put(nc, tail, (size_t)n);
	return true;
}

static bool put_inbox_sub(struct ig_nats *nc)
{
	char line[96];
	int n = snprintf(line, sizeof line, "SUB %s* %" PRIu64 "\r\n", nc->inbox, nc->inbox_sid);
	if (!out_room(nc, (size_t)n))
		return false;
	out_put(nc, line, (size_t)n);
	return true;
}

/* ---- the connection's life ---- */

static void arm(struct ig_nats *nc, uint64_t deadline_ms)
{
	ig_timer_set(&nc->loop->timers, &nc->timer, deadline_ms);
}

static void conn_lost(struct ig_nats *nc, enum ig_nats_error kind, const char *why)
{
	if (nc->state == NS_CLOSED || nc->state == NS_WAITING)
		return;
	bool was_up = nc->state == NS_UP;
	ig_dial_cancel(&nc->dial);
	if (nc->t)
		nc->t->ops->close(nc->t, 0);
	nc->t = nc->raw = NULL;
	nc->tls = false;
	nc->generation++;
	nc->opos = nc->olen = 0;
	nc->flushing = false;
	nc->rpos = nc->rlen = 0;
	ig_nats_parser_init(&nc->parser, nc->o.max_message);
	ig_timer_cancel(&nc->loop->timers, &nc->timer);
	bool closing = kind == IG_NATS_CLOSED;
	nc->state = closing ? NS_CLOSED : NS_WAITING;
	if (was_up && nc->o.backend)
		ig_backend_set_up(nc->o.backend - 1, false);
	if (!closing) {
		/* The next server of the list, round and round. */
		nc->cur = (uint8_t)((nc->cur + 1) % nc->nservers);
		/* The first retry is quick (a restart of the server); the next
		   ones back off, with jitter so that a fleet does not return
		   in step. */
		uint32_t d = nc->backoff_ms;
		nc->backoff_ms = d * 2 > nc->o.reconnect_max_ms ? nc->o.reconnect_max_ms : d * 2;
		d = d / 2 + (uint32_t)(ig_rng_next(&nc->rng) % (d / 2 + 1));
		arm(nc, nc->loop->clock.now_ms + d);
	}
	struct ig_logline l;
	if (was_up && !closing && ig_log_begin(&l, IG_LOG_WARN, "NATS connection lost")) {
		ig_log_cstr(&l, "host", nc->servers[nc->cur].host);
		ig_log_cstr(&l, "reason", why);
		ig_log_end(&l);
	}
	/* What waited for an answer on this connection fails; detached
	   first, so that a callback starting a request meets an empty list. */
	struct ig_nats_request *list = nc->requests, *r;
	nc->requests = NULL;
	nc->requests_tail = &nc->requests;
	while ((r = list)) {
		list = r->next;
		ig_timer_cancel(&nc->loop->timers, &r->timer);
		r->fn(r->arg, NULL, closing ? IG_NATS_CLOSED : IG_NATS_DISCONNECTED);
		ig_pool_give(&r->nc->request_pool, r);
	}
	if (nc->ops && nc->ops->down)
		nc->ops->down(nc->arg, nc, kind, why);
}

static void on_timer(struct ig_timer *t)
{
	struct ig_nats *nc = (struct ig_nats *)((char *)t - offsetof(struct ig_nats, timer));
	switch (nc->state) {
	case NS_WAITING:
		start_connect(nc);
		break;
	case NS_DIALING:
	case NS_INFO:
	case NS_CONNECTING:
		conn_lost(nc, IG_NATS_TIMEOUT, "connect timeout");
		break;
	case NS_UP:
		if (nc->pings_out >= nc->o.max_pings_out) {
			conn_lost(nc, IG_NATS_TIMEOUT, "the server did not answer PINGs");
			return;
		}
		if (!out_room(nc, 6)) {
			conn_lost(nc, IG_NATS_NO_MEMORY, "out of memory for a PING");
			return;
		}
		out_put(nc, "PING\r\n", 6);
		nc->pings_out++;
		schedule_flush(nc);
		arm(nc, nc->loop->clock.now_ms + nc->o.ping_interval_ms);
		break;
	case NS_CLOSED:
		break;
	}
}

static void on_dial_connected(struct ig_dial *d, struct ig_transport *t, struct ig_transport *sock, void *arg)
{
	struct ig_nats *nc = arg;
	t->engine_ops = &nats_stream_ops;
	t->engine = nc;
	nc->t = t;
	nc->raw = sock;
	nc->tls = t != sock;
	nc->state = NS_INFO;
	arm(nc, d->deadline_ms ? d->deadline_ms : nc->loop->clock.now_ms + nc->o.connect_timeout_ms);
	/* The server speaks first (INFO, in clear). */
	t->ops->resume_read(t);
}

static void on_dial_failed(struct ig_dial *d, enum ig_dial_error kind, const char *why, void *arg)
{
	(void)d;
	conn_lost(arg, kind == IG_DIAL_TLS ? IG_NATS_TLS : kind == IG_DIAL_TIMEOUT ? IG_NATS_TIMEOUT : IG_NATS_CONNECT,
		  kind == IG_DIAL_TIMEOUT ? "connect timeout" : why);
}

static const struct ig_dial_ops nats_dial_ops = {
	.connected = on_dial_connected,
	.failed = on_dial_failed,
};

static void start_connect(struct ig_nats *nc)
{
	nc->state = NS_DIALING;
	/* Plain first, always: the server sends its INFO in clear and the
	   handshake follows it (on_info). */
	const struct ig_nats_server *sv = &nc->servers[nc->cur];
	struct ig_dial_params p = {
		.sock = &nc->sock, .host = sv->host, .port = sv->port, .timeout_ms = nc->o.connect_timeout_ms,
	};
	ig_dial_start(&nc->dial, nc->loop, &p, &nats_dial_ops, nc);
}

/* A JSON string's value for CONNECT, escaped, with its quotes. */
static bool put_json_field(struct ig_nats *nc, const char *key, const char *value)
{
	size_t kn = strlen(key), vn = strlen(value);
	if (!out_room(nc, kn + 6 * vn + 8))
		return false;
	out_put(nc, ",\"", 2);
	out_put(nc, key, kn);
	out_put(nc, "\":\"", 3);
	nc->olen += ig_json_escape(nc->obuf + nc->olen, value, vn);
	out_put(nc, "\"", 1);
	return true;
}

/* The server's INFO: TLS if it wants it, then CONNECT, the inbox's and
 * every subscription's SUB, and a PING whose PONG says all went through. */
static void on_info(struct ig_nats *nc, ig_str json)
{
	bool tls_required = false, tls_available = false, auth_required = false;
	int64_t max_payload = 0;
	ig_json_reader r;
	ig_arena_reset(&nc->scratch);
	ig_jr_init(&r, json.ptr, json.len, &nc->scratch, 8);
	ig_str key;
	if (ig_jr_object_begin(&r)) {
		while (ig_jr_object_next_key(&r, &key)) {
			ig_json_value v;
			if (key.len == 12 && !memcmp(key.ptr, "tls_required", 12) && ig_jr_peek(&r) >= IG_JN_FALSE &&
			    ig_jr_peek(&r) <= IG_JN_TRUE)
				(void)ig_jr_bool(&r, &tls_required);
			else if (key.len == 13 && !memcmp(key.ptr, "tls_available", 13) && ig_jr_peek(&r) >= IG_JN_FALSE &&
				 ig_jr_peek(&r) <= IG_JN_TRUE)
				(void)ig_jr_bool(&r, &tls_available);
			else if (key.len == 13 && !memcmp(key.ptr, "auth_required", 13) && ig_jr_peek(&r) >= IG_JN_FALSE &&
				 ig_jr_peek(&r) <= IG_JN_TRUE)
				(void)ig_jr_bool(&r, &auth_required);
			else if (key.len == 11 && !memcmp(key.ptr, "max_payload", 11) && ig_jr_peek(&r) == IG_JN_NUMBER &&
				 ig_jr_number(&r, &v) && v.type == IG_JSON_INT)
				max_payload = v.i;
			else
				(void)ig_jr_skip(&r);
		}
	}
	bool bad = r.error != NULL;
	ig_arena_reset(&nc->scratch);
	if (bad) {
		conn_lost(nc, IG_NATS_PROTOCOL, "the server's INFO is not a JSON object");
		return;
	}
	if (max_payload > 0)
		nc->max_payload = (size_t)max_payload;
	const struct ig_nats_server *sv = &nc->servers[nc->cur];
	if (sv->tls_url && !tls_required && !tls_available) {
		conn_lost(nc, IG_NATS_TLS, "the URL says tls:// and the NATS server offers no TLS");
		return;
	}
	if ((tls_required || sv->tls_url) && !nc->tls) {
		struct ig_dial_tls tls = { .verify = nc->o.tls_verify, .trust = nc->o.trust, .server_name = sv->host };
		const char *why;
		struct ig_transport *t = ig_dial_tls(nc->loop, nc->raw, &tls, &why);
		if (!t) {
			conn_lost(nc, IG_NATS_TLS, why);
			return;
		}
		nc->t = t;
		nc->tls = true;
	}
	(void)auth_required; /* credentials go whenever the URL has them */
	if (!out_room(nc, 256)) {
		conn_lost(nc, IG_NATS_NO_MEMORY, "out of memory for CONNECT");
		return;
	}
	int n = snprintf(nc->obuf + nc->olen, 256,
			 "CONNECT {\"verbose\":false,\"pedantic\":false,\"tls_required\":%s,\"lang\":\"c\","
			 "\"version\":\"ingot\",\"protocol\":1,\"headers\":true,\"no_responders\":true",
			 nc->tls ? "true" : "false");
	nc->olen += (size_t)n;
	bool ok = put_json_field(nc, "name", nc->name);
	if (ok && sv->token_auth)
		ok = put_json_field(nc, "auth_token", sv->user);
	else if (ok && sv->user[0])
		ok = put_json_field(nc, "user", sv->user) && put_json_field(nc, "pass", sv->pass);
	ok = ok && out_room(nc, 3);
	if (ok)
		out_put(nc, "}\r\n", 3);
	ok = ok && put_inbox_sub(nc);
	for (struct ig_nats_sub *s = nc->subs; ok && s; s = s->next)
		ok = put_sub(nc, s);
	ok = ok && out_room(nc, 6);
	if (!ok) {
		conn_lost(nc, IG_NATS_NO_MEMORY, "out of memory for CONNECT");
		return;
	}
	out_put(nc, "PING\r\n", 6);
	nc->state = NS_CONNECTING;
	flush_now(nc);
}

static void on_up(struct ig_nats *nc)
{
	nc->state = NS_UP;
	nc->connects++;
	nc->pings_out = 0;
	nc->backoff_ms = nc->o.reconnect_min_ms;
	arm(nc, nc->loop->clock.now_ms + nc->o.ping_interval_ms);
	if (nc->o.backend)
		ig_backend_set_up(nc->o.backend - 1, true);
	if (nc->ops && nc->ops->up)
		nc->ops->up(nc->arg, nc);
}

/* ---- dispatch ---- */

static struct ig_nats_request *request_of(struct ig_nats *nc, ig_str subject)
{
	size_t pre = strlen(nc->inbox);
	if (subject.len <= pre || memcmp(subject.ptr, nc->inbox, pre) != 0)
		return NULL;
	uint64_t token;
	if (!ig_nats_uint((ig_str){ subject.ptr + pre, subject.len - pre }, &token))
		return NULL;
	for (struct ig_nats_request *r = nc->requests; r; r = r->next)
		if (r->token == token)
			return r;
	return NULL;
}

static void request_link(struct ig_nats *nc, struct ig_nats_request *r)
{
	r->next = NULL;
	r->pprev = nc->requests_tail;
	*nc->requests_tail = r;
	nc->requests_tail = &r->next;
}

static void request_remove(struct ig_nats_request *r)
{
	*r->pprev = r->next;
	if (r->next)
		r->next->pprev = r->pprev;
	else
		r->nc->requests_tail = r->pprev;
}

/* The connection's SUBs have gone out (on_info): a change is sent now;
 * before, on_info sends the list as it then is. */
static bool subs_sent(const struct ig_nats *nc)
{
	return nc->state == NS_CONNECTING || nc->state == NS_UP;
}

static void put_unsub(struct ig_nats *nc, uint64_t sid)
{
	char line[48];
	int n = snprintf(line, sizeof line, "UNSUB %" PRIu64 "\r\n", sid);
	/* Without room the server keeps sending what nobody reads until the
	   next reconnect: ignored on arrival (no sid matches). */
	if (subs_sent(nc) && out_room(nc, (size_t)n)) {
		out_put(nc, line, (size_t)n);
		schedule_flush(nc);
	}
}

/* A request ended, from the list or not: its timer and its own
 * subscription go. */
static void request_end(struct ig_nats_request *r)
{
	ig_timer_cancel(&r->nc->loop->timers, &r->timer);
	if (r->sid)
		put_unsub(r->nc, r->sid);
}

static void request_unlink(struct ig_nats_request *r)
{
	request_remove(r);
	request_end(r);
}

/* A reply to r. Out of the list while its callback runs: a loss of the
 * connection from inside it ends every request but this one, which hears
 * of it here. */
static void deliver_reply(struct ig_nats *nc, struct ig_nats_request *r, const struct ig_nats_msg *m)
{
	if (m->status == 503) {
		request_unlink(r);
		r->fn(r->arg, NULL, IG_NATS_NO_RESPONDERS);
		ig_pool_give(&r->nc->request_pool, r);
		return;
	}
	uint32_t gen = nc->generation;
	request_remove(r);
	bool more = r->fn(r->arg, m, IG_NATS_OK);
	if (more && nc->generation == gen) {
		request_link(nc, r);
		return;
	}
	request_end(r);
	if (more)
		r->fn(r->arg, NULL, nc->state == NS_CLOSED ? IG_NATS_CLOSED : IG_NATS_DISCONNECTED);
	ig_pool_give(&r->nc->request_pool, r);
}

static void on_message(struct ig_nats *nc, const struct ig_nats_frame *f)
{
	struct ig_nats_msg m = { .subject = f->subject, .reply = f->reply, .headers = f->headers, .payload = f->payload };
	if (f->headers.len)
		(void)ig_nats_headers_status(f->headers, &m.status, &m.description);
	if (f->sid == nc->inbox_sid) {
		struct ig_nats_request *r = request_of(nc, f->subject);
		if (r)
			deliver_reply(nc, r, &m);
		return; /* else late: its request timed out or was cancelled */
	}
	for (struct ig_nats_sub *s = nc->subs; s; s = s->next) {
		if (s->sid == f->sid) {
			s->on_msg(s->arg, &m);
			return;
		}
	}
	for (struct ig_nats_request *r = nc->requests; r; r = r->next) {
		if (r->sid == f->sid) {
			deliver_reply(nc, r, &m);
			return;
		}
	}
}

static void on_err(struct ig_nats *nc, ig_str text)
{
	char why[160];
	snprintf(why, sizeof why, "the NATS server said: %.*s", (int)(text.len < 120 ? text.len : 120), text.ptr);
	/* A permissions violation is about one subject; the connection
	   stays. Every other -ERR is followed by the server's close. */
	if (text.len >= 11 && !strncasecmp(text.ptr, "Permissions", 11)) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_WARN, "NATS permissions violation")) {
			ig_log_str(&l, "reason", text.ptr, text.len);
			ig_log_end(&l);
		}
		return;
	}
	bool auth = text.len >= 13 && (!strncasecmp(text.ptr, "Authorization", 13) ||
				       !strncasecmp(text.ptr, "Authentication", 14));
	conn_lost(nc, auth ? IG_NATS_AUTH : IG_NATS_SERVER, why);
}

static void process(struct ig_nats *nc)
{
	uint32_t gen = nc->generation;
	while (nc->generation == gen && nc->rpos < nc->rlen) {
		struct ig_nats_frame f;
		int r = ig_nats_parse(&nc->parser, nc->rbuf + nc->rpos, nc->rlen - nc->rpos, &f);
		if (r == IG_NATS_PARSE_MORE)
			break;
		if (r < 0) {
			conn_lost(nc, IG_NATS_PROTOCOL, nc->parser.error);
			return;
		}
		nc->rpos += (size_t)r;
		switch (f.op) {
		case IG_NATS_OP_INFO:
			if (nc->state == NS_INFO)
				on_info(nc, f.payload);
			break; /* later INFOs (cluster changes) need nothing yet */
		case IG_NATS_OP_PING:
			if (!out_room(nc, 6)) {
				conn_lost(nc, IG_NATS_NO_MEMORY, "out of memory for a PONG");
				return;
			}
			out_put(nc, "PONG\r\n", 6);
			schedule_flush(nc);
			break;
		case IG_NATS_OP_PONG:
			if (nc->state == NS_CONNECTING)
				on_up(nc);
			else
				nc->pings_out = 0;
			break;
		case IG_NATS_OP_OK:
			break;
		case IG_NATS_OP_ERR:
			on_err(nc, f.payload);
			break;
		case IG_NATS_OP_MSG:
			if (nc->state == NS_UP)
				on_message(nc, &f);
			break;
		}
	}
	if (nc->generation == gen && nc->rpos == nc->rlen)
		nc->rpos = nc->rlen = 0;
}

/* ---- the transport's events ---- */

static char *nats_lend(void *engine, size_t *cap)
{
	struct ig_nats *nc = engine;
	if (nc->rpos > 0 && nc->rlen == nc->rcap) {
		memmove(nc->rbuf, nc->rbuf + nc->rpos, nc->rlen - nc->rpos);
		nc->rlen -= nc->rpos;
		nc->rpos = 0;
	}
	if (nc->rlen == nc->rcap) {
		/* A frame larger than the buffer: room for the largest one
		   allowed (its line, its payload, CRLF), no more: the parser
		   refuses larger ones before they fill it. */
		size_t limit = nc->parser.max_line + nc->o.max_message + 2;
		size_t want = nc->rcap * 2 > limit ? limit : nc->rcap * 2;
		char *b = want > nc->rcap ? realloc(nc->rbuf, want) : NULL;
		if (!b) {
			*cap = 0;
			return NULL;
		}
		nc->rbuf = b;
		nc->rcap = want;
	}
	*cap = nc->rcap - nc->rlen;
	return nc->rbuf + nc->rlen;
}

static void nats_received(void *engine, size_t n)
{
	struct ig_nats *nc = engine;
	if (n == 0) {
		conn_lost(nc, IG_NATS_DISCONNECTED, "the NATS server closed the connection");
		return;
	}
	nc->rlen += n;
	process(nc);
}

static void nats_writable(void *engine)
{
	struct ig_nats *nc = engine;
	nc->flushing = false;
	flush_now(nc);
}

static void nats_closed(void *engine)
{
	struct ig_nats *nc = engine;
	nc->t = nc->raw = NULL; /* gone already: conn_lost must not close it */
	/* Before the PONG over TLS: the handshake or the certificate's check
	   failed (the server's refusals come as -ERR). */
	if (nc->tls && nc->state == NS_CONNECTING)
		conn_lost(nc, IG_NATS_TLS, "TLS with the NATS server failed (the handshake or the certificate's check)");
	else
		conn_lost(nc, IG_NATS_DISCONNECTED, "the connection to the NATS server failed");
}

static const struct ig_stream_ops nats_stream_ops = {
	.lend = nats_lend,
	.received = nats_received,
	.writable = nats_writable,
	.closed = nats_closed,
};

/* ---- the API ---- */

struct ig_nats *ig_nats_new(struct ig_loop *loop, const struct ig_nats_options *o,
			    const struct ig_nats_conn_ops *ops, void *arg, const char **why)
{
	struct ig_nats *nc = calloc(1, sizeof *nc);
	if (!nc) {
		*why = "out of memory";
		return NULL;
	}
	if (!o->url || !(nc->nservers = (uint8_t)ig_nats_url_parse(o->url, nc->servers, IG_NATS_MAX_SERVERS, why))) {
		free(nc);
		return NULL;
	}
	nc->rbuf = malloc(16384);
	if (!nc->rbuf) {
		free(nc);
		*why = "out of memory";
		return NULL;
	}
	nc->rcap = 16384;
	nc->requests_tail = &nc->requests;
	nc->loop = loop;
	nc->ops = ops;
	nc->arg = arg;
	nc->o = *o;
	nc->o.url = NULL;
	nc->o.name = NULL;
	snprintf(nc->name, sizeof nc->name, "%s", o->name ? o->name : "ingot");
	if (!nc->o.connect_timeout_ms)
		nc->o.connect_timeout_ms = 5000;
	if (!nc->o.ping_interval_ms)
		nc->o.ping_interval_ms = 60000;
	if (!nc->o.max_pings_out)
		nc->o.max_pings_out = 2;
	if (!nc->o.reconnect_min_ms)
		nc->o.reconnect_min_ms = 100;
	if (!nc->o.reconnect_max_ms)
		nc->o.reconnect_max_ms = 5000;
	if (!nc->o.max_message)
		nc->o.max_message = (size_t)8 << 20;
	nc->backoff_ms = nc->o.reconnect_min_ms;
	ig_nats_parser_init(&nc->parser, nc->o.max_message);
	ig_sock_core_init(&nc->sock, loop, -1, 2, NULL, NULL);
	ig_pool_init(&nc->blocks, 4096, 1, 16);
	ig_arena_init(&nc->scratch, &nc->blocks, 65536);
	ig_pool_init(&nc->request_pool, sizeof(struct ig_nats_request), 64, (size_t)1 << 20);
	ig_pool_init(&nc->ctx_pool, IG_NATS_CTX_MAX, 64, (size_t)1 << 20);
	nc->flush.fn = flush_deferred;
	nc->timer.fn = on_timer;
	ig_rng_seed(&nc->rng);
	static const char alnum[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	memcpy(nc->inbox, "_INBOX.", 7);
	for (int i = 0; i < NATS_INBOX_RANDOM; i++)
		nc->inbox[7 + i] = alnum[ig_rng_next(&nc->rng) % 62];
	nc->inbox[7 + NATS_INBOX_RANDOM] = '.';
	nc->inbox_sid = ++nc->next_sid;
	start_connect(nc);
	return nc;
}

void ig_nats_close(struct ig_nats *nc)
{
	if (nc->state == NS_CLOSED)
		return;
	if (nc->state == NS_WAITING) {
		ig_timer_cancel(&nc->loop->timers, &nc->timer);
		nc->state = NS_CLOSED;
		return;
	}
	if (nc->t && nc->state == NS_UP)
		flush_now(nc); /* what was published before the close leaves */
	conn_lost(nc, IG_NATS_CLOSED, "closed");
}

bool ig_nats_connected(const struct ig_nats *nc) { return nc->state == NS_UP; }
uint64_t ig_nats_connects(const struct ig_nats *nc) { return nc->connects; }
size_t ig_nats_max_payload(const struct ig_nats *nc) { return nc->max_payload; }
struct ig_loop *ig_nats_loop(const struct ig_nats *nc) { return nc->loop; }
ig_arena *ig_nats_scratch(struct ig_nats *nc) { return &nc->scratch; }

static enum ig_nats_error put_pub(struct ig_nats *nc, ig_str subject, ig_str reply, ig_str headers, ig_str payload)
{
	if (nc->state != NS_UP)
		return IG_NATS_NOT_CONNECTED;
	if (!subject_ok(subject) || (reply.len && !subject_ok(reply)))
		return IG_NATS_BAD_ARGUMENT;
	size_t total = headers.len + payload.len;
	if (nc->max_payload && total > nc->max_payload)
		return IG_NATS_TOO_LARGE;
	/* " [<headers> ]<total>\r\n", without snprintf: a consumer's every
	   ack comes here. */
	char sizes[48];
	size_t n = 0;
	sizes[n++] = ' ';
	if (headers.len) {
		n += ig_fmt_u64(sizes + n, headers.len);
		sizes[n++] = ' ';
	}
	n += ig_fmt_u64(sizes + n, total);
	sizes[n++] = '\r';
	sizes[n++] = '\n';
	if (!out_room(nc, 5 + subject.len + 1 + reply.len + n + total + 2))
		return IG_NATS_NO_MEMORY;
	if (headers.len)
		out_put(nc, "HPUB ", 5);
	else
		out_put(nc, "PUB ", 4);
	out_put(nc, subject.ptr, subject.len);
	if (reply.len) {
		out_put(nc, " ", 1);
		out_put(nc, reply.ptr, reply.len);
	}
	out_put(nc, sizes, n);
	if (headers.len)
		out_put(nc, headers.ptr, headers.len);
	if (payload.len)
		out_put(nc, payload.ptr, payload.len);
	out_put(nc, "\r\n", 2);
	schedule_flush(nc);
	return IG_NATS_OK;
}

enum ig_nats_error ig_nats_publish(struct ig_nats *nc, ig_str subject, ig_str reply, ig_str headers, ig_str payload)
{
	return put_pub(nc, subject, reply, headers, payload);
}

struct ig_nats_sub *ig_nats_subscribe(struct ig_nats *nc, ig_str subject, ig_str queue, ig_nats_msg_fn *on_msg,
				      void *arg, enum ig_nats_error *err)
{
	if (!subject_ok(subject) || (queue.len && !subject_ok(queue))) {
		*err = IG_NATS_BAD_ARGUMENT;
		return NULL;
	}
	struct ig_nats_sub *s = malloc(sizeof *s + subject.len + queue.len);
	if (!s) {
		*err = IG_NATS_NO_MEMORY;
		return NULL;
	}
	*s = (struct ig_nats_sub){ .nc = nc, .sid = ++nc->next_sid, .on_msg = on_msg, .arg = arg,
				   .subject_len = subject.len, .queue_len = queue.len };
	memcpy(s->text, subject.ptr, subject.len);
	if (queue.len)
		memcpy(s->text + subject.len, queue.ptr, queue.len);
	if (subs_sent(nc)) {
		if (!put_sub(nc, s)) {
			free(s);
			*err = IG_NATS_NO_MEMORY;
			return NULL;
		}
		schedule_flush(nc);
	}
	s->next = nc->subs;
	if (s->next)
		s->next->pprev = &s->next;
	s->pprev = &nc->subs;
	nc->subs = s;
	*err = IG_NATS_OK;
	return s;
}

void ig_nats_unsubscribe(struct ig_nats_sub *s)
{
	struct ig_nats *nc = s->nc;
	*s->pprev = s->next;
	if (s->next)
		s->next->pprev = s->pprev;
	put_unsub(nc, s->sid);
	free(s);
}

static void on_request_timer(struct ig_timer *t)
{
	struct ig_nats_request *r = (struct ig_nats_request *)((char *)t - offsetof(struct ig_nats_request, timer));
	request_unlink(r);
	r->fn(r->arg, NULL, IG_NATS_TIMEOUT);
	ig_pool_give(&r->nc->request_pool, r);
}

static enum ig_nats_error request(struct ig_nats *nc, bool own_sub, ig_str subject, ig_str headers, ig_str payload,
				  uint32_t timeout_ms, ig_nats_reply_fn *on_reply, void *arg,
				  struct ig_nats_request **handle)
{
	if (nc->state != NS_UP)
		return IG_NATS_NOT_CONNECTED;
	struct ig_nats_request *r = ig_pool_take(&nc->request_pool);
	if (!r)
		return IG_NATS_NO_MEMORY;
	*r = (struct ig_nats_request){ 0 };
	r->nc = nc;
	r->token = ++nc->next_token;
	r->fn = on_reply;
	r->arg = arg;
	r->timer.fn = on_request_timer;
	char reply[64];
	/* Its own subscription's subject has one token more than the
	   inbox's wildcard matches. */
	int n = snprintf(reply, sizeof reply, own_sub ? "%sm.%" PRIu64 : "%s%" PRIu64, nc->inbox, r->token);
	size_t mark = nc->olen;
	if (own_sub) {
		char line[96];
		r->sid = ++nc->next_sid;
		int k = snprintf(line, sizeof line, "SUB %s %" PRIu64 "\r\n", reply, r->sid);
		if (!out_room(nc, (size_t)k)) {
			ig_pool_give(&r->nc->request_pool, r);
			return IG_NATS_NO_MEMORY;
		}
		mark = nc->olen;
		out_put(nc, line, (size_t)k);
	}
	enum ig_nats_error e = put_pub(nc, subject, (ig_str){ reply, (size_t)n }, headers, payload);
	if (e != IG_NATS_OK) {
		nc->olen = mark; /* its SUB goes too */
		ig_pool_give(&r->nc->request_pool, r);
		return e;
	}
	request_link(nc, r);
	if (timeout_ms)
		ig_timer_set(&nc->loop->timers, &r->timer, nc->loop->clock.now_ms + timeout_ms);
	if (handle)
		*handle = r;
	return IG_NATS_OK;
}

enum ig_nats_error ig_nats_request(struct ig_nats *nc, ig_str subject, ig_str headers, ig_str payload,
				   uint32_t timeout_ms, ig_nats_reply_fn *on_reply, void *arg,
				   struct ig_nats_request **handle)
{
	return request(nc, false, subject, headers, payload, timeout_ms, on_reply, arg, handle);
}

enum ig_nats_error ig_nats_request_many(struct ig_nats *nc, ig_str subject, ig_str headers, ig_str payload,
					uint32_t timeout_ms, ig_nats_reply_fn *on_reply, void *arg,
					struct ig_nats_request **handle)
{
	return request(nc, true, subject, headers, payload, timeout_ms, on_reply, arg, handle);
}

void *ig_nats_ctx_take(struct ig_nats *nc)
{
	return ig_pool_take(&nc->ctx_pool);
}

void ig_nats_ctx_give(struct ig_nats *nc, void *ctx)
{
	ig_pool_give(&nc->ctx_pool, ctx);
}

void ig_nats_request_cancel(struct ig_nats_request *r)
{
	request_unlink(r);
	ig_pool_give(&r->nc->request_pool, r);
}
