/* One connection to one origin: the client-side sibling of net/http/conn.c.
 * It writes its FIFO's requests (pipelined ones in one writev), reads the
 * responses in order with the strict head parser and the chunked decoder,
 * and hands heads and body pieces to each call. One timer carries whichever
 * deadline the state needs. What fails and what is sent again when the
 * stream breaks is the contract in client.h ("Client, Pool, Agent"). */
#include "internal.h"
#include "kernel/runtime/list.h"
#include "net/rbuf.h"
#include "net/stack.h"
#include "net/tls/tls.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_IOV 128
/* Request pieces up to this size are copied together into the core's write
 * scratch: a writev of many tiny iovecs costs the kernel more per byte
 * than one copy here. Larger pieces (bodies) go as they are. */
#define SMALL_PIECE 512

static const struct ig_stream_ops conn_stream_ops;

static const struct call_holder_ops conn_holder;

static struct client_core *core_of(const struct client_conn *k)
{
	return k->origin->core;
}

static uint64_t now_ms(const struct client_conn *k)
{
	return k->origin->core->loop->clock.now_ms;
}

/* ---- lifetime ----
 * A closed connection stays readable until the end of the batch (its own
 * frames and its calls' callbacks may be on the stack); then this gives
 * its memory back and tells the owner. */
static void conn_release(struct ig_deferred *d)
{
	struct client_conn *k = (struct client_conn *)((char *)d - offsetof(struct client_conn, release));
	struct client_core *core = core_of(k);
	const struct conn_owner_ops *ops = k->owner_ops;
	void *owner = k->owner;
	ig_timer_cancel(&core->loop->timers, &k->timer);
	if (k->rbuf)
		ig_pool_give(&core->rbufs, k->rbuf);
	ig_pool_give(&core->conns, k);
	ops->released(owner, k);
}

/* Closes the transport and tells the owner; its FIFO must be empty
 * (conn_fail empties it first). */
static void conn_close(struct client_conn *k, bool graceful)
{
	if (k->state == CC_CLOSED)
		return;
	ig_timer_cancel(&core_of(k)->loop->timers, &k->timer);
	k->dl = DL_NONE;
	ig_dial_cancel(&k->dial);
	if (k->t)
		k->t->ops->close(k->t, graceful);
	k->t = k->sock = NULL;
	k->state = CC_CLOSED;
	ig_client_metrics_conn_open(k->origin, -1);
	ig_loop_defer(core_of(k)->loop, &k->release);
	k->owner_ops->closed(k->owner, k);
}

void ig_conn_retire(struct client_conn *k)
{
	k->retiring = true;
	if (!k->head)
		conn_close(k, false);
}

/* ---- deadlines ---- */

static void conn_set_deadline(struct client_conn *k, enum cconn_deadline dl, uint64_t deadline)
{
	k->dl = dl;
	k->deadline_ms = deadline;
	if (dl != DL_NONE)
		ig_timer_set_lazy(&core_of(k)->loop->timers, &k->timer, deadline);
}

/* Picks the deadline for the state after a batch. Headers and idle
 * deadlines start when the state is entered; the body deadline restarts
 * with every batch of bytes (it bounds a stall, not the whole body). */
static void conn_update_deadline(struct client_conn *k, bool got_bytes)
{
	struct client_call *c = k->head;
	if (k->state == CC_DIALING || k->state == CC_CLOSED)
		return;
	if (!c) {
		if (k->dl != DL_IDLE)
			conn_set_deadline(k, DL_IDLE, now_ms(k) + k->idle_ms);
	} else if (c->paused) {
		conn_set_deadline(k, DL_NONE, 0); /* the caller is slow, not the upstream */
	} else if (k->rd == RD_HEAD) {
		if (k->dl != DL_HEADERS)
			conn_set_deadline(k, DL_HEADERS, now_ms(k) + c->headers_ms);
	} else if (got_bytes || k->dl != DL_BODY) {
		conn_set_deadline(k, DL_BODY, now_ms(k) + c->body_ms);
	}
}

/* ---- failing ---- */

/* A head over the client's limits is the response's size, not a fault of
 * the protocol. */
static enum ig_client_error head_error(enum http_error_kind kind)
{
	switch (kind) {
	case HTTP_ERR_LINE_TOO_LONG:
	case HTTP_ERR_HEAD_TOO_LARGE:
	case HTTP_ERR_TOO_MANY_FIELDS: return IG_CLIENT_TOO_LARGE;
	default: return IG_CLIENT_PROTOCOL;
	}
}

/* A call left the FIFO: with the last, the connection is idle again. */
static void inflight_down(struct client_conn *k)
{
	if (--k->inflight == 0)
		ig_client_metrics_conn_busy(k->origin, -1);
}

/* Detaches the FIFO: the connection owes nothing any more. */
static struct client_call *conn_detach_fifo(struct client_conn *k)
{
	struct client_call *first = k->head;
	k->head = k->tail = k->unsent = NULL;
	k->unsent_off = 0;
	if (k->inflight)
		ig_client_metrics_conn_busy(k->origin, -1);
	k->inflight = 0;
	k->rd = RD_HEAD;
	return first;
}

/* Gives a detached list of calls back to the owner's queue; zombies are
 * dropped (their response will never come). */
static void requeue(struct client_conn *k, struct client_call *list)
{
	struct client_call *keep = NULL, **tail = &keep;
	for (struct client_call *c = list, *next; c; c = next) {
		next = c->next;
		c->next = NULL;
		if (c->state == CALL_ZOMBIE) {
			ig_call_free(c);
			continue;
		}
		c->state = CALL_QUEUED;
		c->sent = c->responding = c->paused = false;
		*tail = c;
		tail = &c->next;
	}
	if (keep)
		k->owner_ops->requeue(k->owner, keep);
}

/* The stream cannot go on. The first call of the FIFO fails with error if
 * any of its request was written (a connection that died under a request
 * it had not started is no fault of that request); the others go back to
 * the pool. One exception saves a common race: a reused keep-alive
 * connection that the upstream closed just as an idempotent request left
 * gets that request sent once more, on a new connection. */
static void conn_fail(struct client_conn *k, enum ig_client_error error, const char *message)
{
	bool written = k->head && (k->head->sent || (k->head == k->unsent && k->unsent_off > 0));
	struct client_call *first = conn_detach_fifo(k);
	struct client_call *failing = NULL;
	if (first && written) {
		bool stale = error == IG_CLIENT_RESET && k->responses > 0 && !first->responding &&
			     first->idempotent && !first->resent;
		if (stale) {
			first->resent = true;
		} else {
			failing = first;
			first = first->next;
			failing->next = NULL;
		}
	}
	requeue(k, first); /* at the queue's front, before the close drives it */
	conn_close(k, false);
	if (failing) {
		if (failing->state == CALL_ZOMBIE)
			ig_call_free(failing);
		else
			ig_call_end(failing, error, message);
	}
	k->owner_ops->drive(k->owner);
}

/* Connecting failed (name, connect, TLS setup): every call waiting on
 * this connection fails, as none of them can be sent. */
static void conn_fail_all(struct client_conn *k, enum ig_client_error error, const char *message)
{
	struct client_call *list = conn_detach_fifo(k);
	conn_close(k, false);
	for (struct client_call *c = list, *next; c; c = next) {
		next = c->next;
		if (c->state == CALL_ZOMBIE)
			ig_call_free(c);
		else
			ig_call_end(c, error, message);
	}
	k->owner_ops->drive(k->owner);
}

static void conn_failf(struct client_conn *k, bool all, enum ig_client_error error, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void conn_failf(struct client_conn *k, bool all, enum ig_client_error error, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (all)
		conn_fail_all(k, error, msg);
	else
		conn_fail(k, error, msg);
}

static const char *origin_of(const struct client_conn *k)
{
	return k->origin->url.origin.ptr; /* "http://host:port", then the rest of buf */
}

static int origin_len(const struct client_conn *k)
{
	return (int)k->origin->url.origin.len;
}

/* ---- writing ---- */

/* Tells on_connect to each call that has been fully written; user code
 * may change the FIFO, so the walk restarts after each callback. */
static void conn_tell_connected(struct client_conn *k)
{
	for (struct client_call *c = k->head; c && c->sent && k->state == CC_OPEN;) {
		if (c->connect_told) {
			c = c->next;
			continue;
		}
		c->connect_told = true;
		if (!c->h->on_connect || c->state != CALL_ON_CONN) {
			c = c->next;
			continue;
		}
		ig_call_connected(c);
		c = k->head;
	}
}

/* Merges runs of small pieces into the core's scratch. The pieces are
 * made again from the calls at every flush, so the scratch holds nothing
 * between two flushes and a partial write needs no copy kept. */
static int coalesce(struct client_core *core, struct iovec *iov, int n)
{
	char *at = core->wscratch, *end = core->wscratch + sizeof core->wscratch;
	int out = 0;
	for (int i = 0; i < n; i++) {
		size_t len = iov[i].iov_len;
		if (len > SMALL_PIECE || (size_t)(end - at) < len) {
			if (len <= SMALL_PIECE)
				return out; /* the scratch is full: write what is ready */
			iov[out++] = iov[i];
			continue;
		}
		memcpy(at, iov[i].iov_base, len);
		if (out && (char *)iov[out - 1].iov_base + iov[out - 1].iov_len == at)
			iov[out - 1].iov_len += len;
		else
			iov[out++] = (struct iovec){ at, len };
		at += len;
	}
	return out;
}

/* Writes what is unsent. Returns false if the connection failed. */
static bool conn_flush(struct client_conn *k)
{
	if (k->state != CC_OPEN || k->processing)
		return k->state != CC_CLOSED;
	bool wrote = false;
	while (k->unsent) {
		struct iovec iov[MAX_IOV];
		int n = 0;
		size_t skip = k->unsent_off;
		for (struct client_call *c = k->unsent; c && n < MAX_IOV; c = c->next) {
			bool more;
			n += ig_call_iov(c, skip, iov + n, MAX_IOV - n, &more);
			skip = 0;
			if (more)
				break;
		}
		n = coalesce(core_of(k), iov, n);
		ssize_t w = k->t->ops->writev(k->t, iov, n);
		if (w == IG_WOULD_BLOCK)
			break;
		if (w < 0) {
			/* Whatever was written of the first request counts as
			   sent: it fails rather than go round again. */
			if (k->head == k->unsent)
				k->unsent_off += 1;
			conn_failf(k, false, IG_CLIENT_RESET, "writing the request to %.*s failed",
				   origin_len(k), origin_of(k));
			return false;
		}
		size_t left = (size_t)w;
		while (left && k->unsent) {
			struct client_call *c = k->unsent;
			size_t rest = c->request_bytes - k->unsent_off;
			if (left < rest) {
				k->unsent_off += left;
				left = 0;
			} else {
				left -= rest;
				c->sent = true;
				k->unsent = c->next;
				k->unsent_off = 0;
				wrote = true;
			}
		}
	}
	if (wrote)
		conn_tell_connected(k);
	return k->state != CC_CLOSED;
}

/* ---- taking calls ---- */

bool ig_conn_can_take(const struct client_conn *k, const struct client_call *c)
{
	if (k->state == CC_CLOSED || !k->reusable || k->retiring)
		return false;
	if (k->inflight == 0)
		return k->rpos == k->rlen; /* never behind bytes nobody asked for */
	return c->idempotent && k->inflight < k->origin->opts.pipelining;
}

void ig_conn_take(struct client_conn *k, struct client_call *c)
{
	c->state = CALL_ON_CONN;
	c->holder_ops = &conn_holder;
	c->holder = k;
	c->sent = c->responding = c->paused = c->connect_told = false;
	IG_FIFO_PUSH(k->head, k->tail, c);
	if (k->inflight++ == 0)
		ig_client_metrics_conn_busy(k->origin, 1);
	if (!k->unsent) {
		k->unsent = c;
		k->unsent_off = 0;
	}
	if (c->conn_close)
		k->reusable = false;
	if (k->state == CC_OPEN) {
		if (k->head == c)
			k->dl = DL_NONE; /* a fresh headers deadline */
		if (conn_flush(k))
			conn_update_deadline(k, false);
	}
}

/* ---- reading ---- */

static void rbuf_release(struct client_conn *k)
{
	if (k->rbuf && k->rpos == k->rlen) {
		ig_pool_give(&core_of(k)->rbufs, k->rbuf);
		k->rbuf = NULL;
		k->rpos = k->rlen = 0;
	}
}

/* "Keep-Alive: timeout=N": the upstream closes idle connections after N
 * seconds, so leave them a second earlier, rather than race its close. */
static void note_keep_alive_hint(struct client_conn *k, const struct http_response_head *h)
{
	for (size_t i = 0; i < h->num_headers; i++) {
		const ig_header *f = &h->headers[i];
		if (f->name.len != 10 || strncasecmp(f->name.ptr, "keep-alive", 10) != 0)
			continue;
		for (size_t j = 0; j + 8 <= f->value.len; j++) {
			if (strncasecmp(f->value.ptr + j, "timeout=", 8) != 0)
				continue;
			uint64_t s = 0;
			for (size_t d = j + 8; d < f->value.len && f->value.ptr[d] >= '0' && f->value.ptr[d] <= '9' && s < 100000; d++)
				s = s * 10 + (uint64_t)(f->value.ptr[d] - '0');
			uint64_t ms = s > 1 ? (s - 1) * 1000 : 500;
			if (ms < k->idle_ms)
				k->idle_ms = ms;
			return;
		}
	}
}

/* The FIFO's first call has its whole response. */
static void conn_complete(struct client_conn *k)
{
	struct client_call *c = k->head;
	if (!c->sent) {
		/* Answered before all of its request was written (an early 401
		   or 413): the rest cannot follow on this stream, as the
		   upstream would read it as the next request. Stop writing,
		   and close once the response is delivered. */
		k->unsent = NULL;
		k->unsent_off = 0;
		k->reusable = false;
	}
	k->head = c->next;
	if (!k->head)
		k->tail = NULL;
	inflight_down(k);
	k->responses++;
	k->rd = RD_HEAD;
	k->dl = DL_NONE;
	c->next = NULL;
	if (c->state == CALL_ZOMBIE)
		ig_call_free(c);
	else
		ig_call_end(c, IG_CLIENT_OK, NULL);
	if (k->state != CC_OPEN)
		return;
	if (!k->reusable && k->head) {
		/* The upstream closes after that response: what is behind it
		   will not be answered here. */
		requeue(k, conn_detach_fifo(k));
		conn_close(k, true);
	} else if (!k->head && (!k->reusable || k->retiring)) {
		conn_close(k, true);
	} else if (k->reusable) {
		k->owner_ops->ready(k->owner, k);
	}
}

/* One parsed head for the FIFO's first call. Returns false to stop. */
static bool conn_on_head(struct client_conn *k, struct client_call *c, const struct http_response_head *h)
{
	if (!h->keep_alive)
		k->reusable = false;
	note_keep_alive_hint(k, h);
	switch (h->framing) {
	case BODY_NONE: k->rd = RD_HEAD; break;
	case BODY_LENGTH: k->rd = RD_LENGTH; k->body_left = h->content_length; break;
	case BODY_CHUNKED:
		k->rd = RD_CHUNKED;
		k->chunked = (struct http_chunked_decoder){ .max_trailer_bytes = k->origin->limits.max_header_bytes };
		break;
	case BODY_UNTIL_CLOSE: k->rd = RD_UNTIL_CLOSE; k->reusable = false; break;
	}
	bool body = h->framing == BODY_CHUNKED || h->framing == BODY_UNTIL_CLOSE ||
		    (h->framing == BODY_LENGTH && h->content_length > 0);
	if (!body)
		k->rd = RD_HEAD;
	if (c->state == CALL_ON_CONN && ig_call_headers(c, h->status, h->headers, h->num_headers) == CALL_GONE)
		return false;
	if (k->state != CC_OPEN)
		return false;
	if (!body)
		conn_complete(k);
	return true;
}

/* Parses and delivers what the read buffer holds, for as long as the
 * first call takes it. */
static void conn_process(struct client_conn *k)
{
	const struct client_origin *p = k->origin;
	struct client_core *core = p->core;
	k->processing = true;
	while (k->state == CC_OPEN && k->rpos < k->rlen) {
		struct client_call *c = k->head;
		if (!c || (c == k->unsent && k->unsent_off == 0)) {
			conn_failf(k, false, IG_CLIENT_PROTOCOL,
				   "%.*s sent bytes with no request in flight (a response to a request never sent)",
				   origin_len(k), origin_of(k));
			break;
		}
		if (c->paused)
			break;
		c->responding = true;
		char *at = k->rbuf + k->rpos;
		size_t avail = k->rlen - k->rpos;
		enum call_verdict v = CALL_GO;
		if (k->rd == RD_HEAD) {
			struct http_response_head h = { .headers = core->scratch,
							.header_capacity = p->limits.max_headers };
			struct http_error why = { HTTP_ERR_SYNTAX, "malformed" };
			int n = ig_http_parse_response(at, avail, c->head_request, &p->limits, &h, &why);
			if (n == HTTP_INCOMPLETE)
				break;
			if (n == HTTP_ERROR) {
				conn_failf(k, false, head_error(why.kind), "invalid response from %.*s: %s",
					   origin_len(k), origin_of(k), why.detail);
				break;
			}
			k->rpos += (uint32_t)n;
			if (http_response_is_interim(&h))
				continue;
			if (!conn_on_head(k, c, &h))
				break;
			continue;
		}
		if (k->rd == RD_CHUNKED) {
			size_t len = avail;
			ssize_t after = ig_http_decode_chunked(&k->chunked, at, &len);
			if (after == HTTP_ERROR) {
				conn_failf(k, false, IG_CLIENT_PROTOCOL, "invalid chunked body from %.*s: %s",
					   origin_len(k), origin_of(k), k->chunked.error.detail);
				break;
			}
			/* at[0..len) is decoded body; what followed it (the next
			   response) was moved to at[len..len+after). */
			k->rpos += (uint32_t)len;
			k->rlen = k->rpos + (uint32_t)(after == HTTP_INCOMPLETE ? 0 : after);
			if (c->state == CALL_ON_CONN)
				v = ig_call_data(c, at, len);
			if (v != CALL_GONE && k->state == CC_OPEN && after != HTTP_INCOMPLETE)
				conn_complete(k);
			continue;
		}
		size_t n = avail;
		if (k->rd == RD_LENGTH && n > k->body_left)
			n = (size_t)k->body_left;
		k->rpos += (uint32_t)n;
		if (k->rd == RD_LENGTH)
			k->body_left -= n;
		if (c->state == CALL_ON_CONN)
			v = ig_call_data(c, at, n);
		if (v != CALL_GONE && k->state == CC_OPEN && k->rd == RD_LENGTH && k->body_left == 0)
			conn_complete(k);
	}
	k->processing = false;
}

/* After bytes, a resume or a completion: process, release the buffer if
 * drained, give the pool a chance to use the capacity, write. */
static void conn_run(struct client_conn *k, bool got_bytes)
{
	conn_process(k);
	if (k->state != CC_OPEN)
		return;
	rbuf_release(k);
	k->owner_ops->drive(k->owner);
	if (conn_flush(k))
		conn_update_deadline(k, got_bytes);
}

/* The stream ended. orderly: a FIN over TCP, close_notify over TLS; a
 * bare FIN under TLS is not, as a truncating attacker can forge one, so
 * it cannot end a close-delimited body. */
static void conn_on_eof(struct client_conn *k, bool orderly)
{
	struct client_call *c = k->head;
	if (c && k->rd == RD_UNTIL_CLOSE && !c->paused) {
		if (!orderly) {
			conn_failf(k, false, IG_CLIENT_RESET,
				   "%.*s closed the connection without TLS close_notify: the body may be truncated",
				   origin_len(k), origin_of(k));
			return;
		}
		conn_complete(k);
		if (k->state == CC_OPEN)
			conn_fail(k, IG_CLIENT_RESET, "the connection closed"); /* requeues the rest */
		return;
	}
	if (!c) {
		conn_close(k, false); /* an idle connection the upstream let go */
		return;
	}
	conn_failf(k, false, IG_CLIENT_RESET, "%.*s closed the connection %s", origin_len(k),
		   origin_of(k), c->responding ? "in the middle of the response" : "before responding");
}

/* ---- transport callbacks ---- */

static char *conn_lend(void *engine, size_t *cap)
{
	struct client_conn *k = engine;
	if (k->state != CC_OPEN || (k->head && k->head->paused))
		return NULL;
	if (k->rpos == k->rlen) /* all read: start over at the front */
		k->rpos = k->rlen = 0;
	return ig_rbuf_lend(&core_of(k)->rbufs, &k->rbuf, &k->rpos, &k->rlen, CLIENT_RBUF_SIZE, cap);
}

static void conn_received(void *engine, size_t n)
{
	struct client_conn *k = engine;
	if (n == 0) {
		/* Over TLS, received(0) is the peer's FIN with no close_notify
		   (net/tls/tls.c); close_notify comes as closed(). */
		conn_on_eof(k, k->t == k->sock);
	} else {
		k->rlen += (uint32_t)n;
		conn_run(k, true);
	}
}

static void conn_writable(void *engine)
{
	struct client_conn *k = engine;
	if (conn_flush(k))
		conn_update_deadline(k, false);
}

static void conn_closed(void *engine)
{
	struct client_conn *k = engine;
	int err = k->sock && k->t == k->sock ? ig_net_stream_error(k->sock, AF_INET) : 0; /* its addresses are IP ones */
	bool tls = k->t && k->t != k->sock;
	k->t = k->sock = NULL; /* the transport is gone already */
	/* TLS says why it closed; NULL after the peer's close_notify, an
	   orderly end of the stream (what ends a close-delimited body). */
	const char *tls_why = tls ? ig_tls_last_error(ig_tls_client_core(core_of(k)->loop)) : NULL;
	bool handshake = k->responses == 0 && !(k->head && k->head->responding);
	if (tls && !tls_why)
		conn_on_eof(k, true); /* close_notify */
	else if (tls && handshake) /* no call can go over this origin's TLS */
		conn_failf(k, true, IG_CLIENT_TLS, "TLS with %.*s failed: %s", origin_len(k), origin_of(k), tls_why);
	else
		conn_failf(k, false, IG_CLIENT_RESET, "the connection to %.*s failed: %s", origin_len(k),
			   origin_of(k), tls ? tls_why : err ? strerror(err) : "reset");
}

static const struct ig_stream_ops conn_stream_ops = {
	.lend = conn_lend,
	.received = conn_received,
	.writable = conn_writable,
	.closed = conn_closed,
};

/* ---- connecting: the dial (net/dial) ---- */

static void on_dial_connected(struct ig_dial *d, struct ig_transport *t, struct ig_transport *sock, void *arg)
{
	(void)d;
	struct client_conn *k = arg;
	k->t = t;
	k->sock = sock;
	t->engine_ops = &conn_stream_ops;
	t->engine = k;
	k->state = CC_OPEN;
	core_of(k)->connects++;
	k->dl = DL_NONE;
	/* The socket is writable now and will not say so again (edge
	   triggered): let TLS send its hello, whether or not a call waits. */
	if (t != sock) {
		t->ops->resume_read(t);
		if (k->state != CC_OPEN)
			return;
	}
	if (conn_flush(k))
		conn_update_deadline(k, false);
}

/* The calls waiting fail, with the texts each failure had before the
 * dialer: the origin, and for a connect the last address tried. */
static void on_dial_failed(struct ig_dial *d, enum ig_dial_error kind, const char *why, void *arg)
{
	struct client_conn *k = arg;
	char where[IG_PEER_TEXT_MAX];
	switch (kind) {
	case IG_DIAL_RESOLVE:
		conn_failf(k, true, IG_CLIENT_DNS, "%s", why);
		break;
	case IG_DIAL_CONNECT:
		ig_dial_address_text(d, where, sizeof where);
		conn_failf(k, true, IG_CLIENT_CONNECT, "connect to %.*s (%s) failed: %s", origin_len(k),
			   origin_of(k), where, why);
		break;
	case IG_DIAL_TIMEOUT:
		conn_failf(k, true, IG_CLIENT_CONNECT_TIMEOUT, "%s %.*s timed out after %u ms",
			   d->state == IG_DIAL_RESOLVING ? "resolving the host of" : "connecting to", origin_len(k),
			   origin_of(k), k->connect_ms);
		break;
	case IG_DIAL_TLS:
		conn_failf(k, true, IG_CLIENT_TLS, "cannot start TLS to %.*s: %s", origin_len(k), origin_of(k), why);
		break;
	}
}

static const struct ig_dial_ops conn_dial_ops = {
	.connected = on_dial_connected,
	.failed = on_dial_failed,
};

static void on_conn_timer(struct ig_timer *t)
{
	struct client_conn *k = (struct client_conn *)((char *)t - offsetof(struct client_conn, timer));
	if (k->dl == DL_NONE)
		return;
	if (now_ms(k) < k->deadline_ms) {
		ig_timer_set(&core_of(k)->loop->timers, &k->timer, k->deadline_ms);
		return;
	}
	struct client_call *c = k->head;
	switch (k->dl) {
	case DL_HEADERS:
		conn_failf(k, false, IG_CLIENT_HEADERS_TIMEOUT, "no response head from %.*s within %u ms",
			   origin_len(k), origin_of(k), c ? c->headers_ms : 0);
		break;
	case DL_BODY:
		conn_failf(k, false, IG_CLIENT_BODY_TIMEOUT, "the response body from %.*s stalled for %u ms",
			   origin_len(k), origin_of(k), c ? c->body_ms : 0);
		break;
	case DL_IDLE:
		if (!k->head)
			conn_close(k, false);
		break;
	case DL_NONE:
		break;
	}
}

static void conn_run_resume(struct ig_deferred *d);

struct client_conn *ig_conn_open(const struct client_origin *origin, const struct conn_owner_ops *ops, void *owner,
			      uint32_t connect_ms)
{
	struct client_core *core = origin->core;
	struct client_conn *k = ig_pool_take(&core->conns);
	if (!k)
		return NULL;
	*k = (struct client_conn){ .origin = origin, .owner_ops = ops, .owner = owner, .state = CC_DIALING,
				   .rd = RD_HEAD, .reusable = true, .idle_ms = origin->opts.keep_alive_ms,
				   .connect_ms = connect_ms };
	k->timer.fn = on_conn_timer;
	k->resume.fn = conn_run_resume;
	k->release.fn = conn_release;
	ig_client_metrics_conn_open(origin, 1);
	return k;
}

void ig_conn_start(struct client_conn *k)
{
	const struct client_origin *p = k->origin;
	struct client_core *core = core_of(k);
	/* Over https, the origin's trust (else the default anchors) and its
	   host name, always verified. */
	struct ig_dial_tls tls = { .verify = true, .trust = p->opts.trust, .server_name = p->host };
	struct ig_dial_params params = { .sock = &core->sock, .host = p->host, .port = p->url.port,
					 .timeout_ms = k->connect_ms, .tls = p->url.https ? &tls : NULL };
	ig_dial_start(&k->dial, core->loop, &params, &conn_dial_ops, k);
}

/* ---- abort and resume ---- */

static void conn_abort_call(void *holder, struct client_call *c)
{
	struct client_conn *k = holder;
	bool started = c->sent || (c == k->unsent && k->unsent_off > 0);
	if (!started) {
		/* Never on the wire: just leave the FIFO. */
		struct client_call **pp = &k->head, *prev = NULL;
		while (*pp != c) {
			prev = *pp;
			pp = &(*pp)->next;
		}
		*pp = c->next;
		if (k->tail == c)
			k->tail = prev;
		if (k->unsent == c)
			k->unsent = c->next;
		inflight_down(k);
		ig_call_end(c, IG_CLIENT_ABORTED, "the call was aborted");
		if (k->state == CC_OPEN && !k->head && k->retiring)
			conn_close(k, true);
		else if (k->state == CC_OPEN && !k->head)
			k->owner_ops->ready(k->owner, k);
		if (k->state == CC_OPEN)
			conn_update_deadline(k, false);
	} else if (c->sent && !c->responding) {
		/* Its response is still owed: read it and drop it, so the
		   connection stays in step. */
		ig_call_end_zombie(c, IG_CLIENT_ABORTED, "the call was aborted");
	} else if (c != k->head) {
		/* Half written behind requests sent whole: their responses can
		   still come. Stop writing; once they have, the connection
		   closes (not reusable, a call left in the FIFO) and the calls
		   behind go back to the pool. */
		k->unsent = NULL;
		k->unsent_off = 0;
		k->reusable = false;
		ig_call_end_zombie(c, IG_CLIENT_ABORTED, "the call was aborted");
	} else {
		/* Half written, or its response half read: the stream cannot be
		   resynchronised. It ends first, then the others move on. */
		ig_call_end_zombie(c, IG_CLIENT_ABORTED, "the call was aborted");
		if (k->state == CC_OPEN)
			conn_fail(k, IG_CLIENT_RESET, "the connection was closed: a call on it was aborted");
	}
}

/* The caller resumed a paused call: the connection reads on after the
 * batch, when no callback is on the stack (one may still be reading the
 * core's header array, or be inside this connection's parser). */
static void conn_resume_call(void *holder, struct client_call *c)
{
	struct client_conn *k = holder;
	c->paused = false;
	ig_loop_defer(core_of(k)->loop, &k->resume);
}

static void conn_run_resume(struct ig_deferred *d)
{
	struct client_conn *k = (struct client_conn *)((char *)d - offsetof(struct client_conn, resume));
	/* Paused again since, or closed: nothing to do. The drain runs with
	   no callback on the stack, so no parser of k is either. */
	if (k->state == CC_OPEN && !k->processing && !(k->head && k->head->paused)) {
		conn_run(k, false);
		if (k->state == CC_OPEN && !(k->head && k->head->paused))
			k->t->ops->resume_read(k->t);
	}
}

static const struct call_holder_ops conn_holder = {
	.abort = conn_abort_call,
	.resume = conn_resume_call,
};
