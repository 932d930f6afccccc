/* TLS as a transport over a transport (tls.h). Each connection is one
 * object from the core's pool: the transport the engine above sees, the
 * state machine below, and the backend's engine with its record buffer.
 * Records go from the lower transport straight into the engine's buffer;
 * plaintext goes from there straight into the buffer the engine above
 * lends; writes are copied once, into the engine's buffer, and encrypted
 * in place. The engine is half-duplex (one buffer): when the engine above
 * writes while input it has not taken blocks the engine, that input moves
 * aside to a spill buffer taken from the core for as long as it waits. */
#include "tls.h"

#include "kernel/runtime/clock.h"
#include "kernel/process/cores.h"
#include "kernel/runtime/file.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/membudget_log.h"
#include "kernel/runtime/pool.h"
#include "kernel/runtime/timer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPILL_BYTES 16384 /* the most plaintext one record holds */
#define DEFAULT_CLOSE_TIMEOUT_MS 5000

struct ig_tls_core {
	struct ig_tls_core *next_made; /* in the list of every core made */
	struct ig_loop *loop;
	struct tls_core *backend;
	struct ig_tls_limits limits;
	struct ig_pool conns;  /* struct tls_conn with its engine */
	struct ig_pool spills; /* SPILL_BYTES each, only while input waits */
	struct ig_tls_stats stats;
	/* What a connection is charged in the memory budget (limits.mem):
	   its pooled state with the engine, a spill buffer (reserved, so
	   that an open connection never waits for one) and the backend's
	   own allocations. */
	size_t mem_charge;
	uint32_t in_handshake; /* connections of this core in the handshake */
	bool serves;           /* made with credentials: the server role */
	/* Connections in the handshake, oldest first: at max_handshakes the
	   oldest that has sent nothing yet makes room for a newcomer. */
	struct tls_conn *shaking_head, *shaking_tail;
	const char *last_error;
	char error_buf[96];
	/* A reload's credentials, posted from core 0 for this core to adopt
	   on its own thread; the pointer holds one reference. */
	struct tls_credentials *_Atomic posted;
};

enum tls_conn_state {
	TC_HANDSHAKE,
	TC_OPEN,
	TC_CLOSING, /* the engine above has left: sending what is left and close_notify */
	TC_DONE,    /* the lower transport is closed; freed when the stack unwinds */
};

struct tls_conn {
	struct ig_transport up; /* first: the handle of the engine above */
	struct ig_transport *lower;
	struct ig_tls_core *core;
	struct ig_timer timer; /* the handshake's deadline, then the close's */
	uint64_t start_us;     /* the handshake's start, for its duration */
	struct tls_conn *shaking_prev, *shaking_next; /* while in the handshake */
	enum tls_conn_state state;
	uint32_t depth; /* our entry points on the stack */
	bool pumping, again;
	bool above_paused;  /* the engine above lent nothing: wait for resume_read */
	bool want_write;    /* the engine above was told to wait: call writable */
	bool lower_paused;  /* we lent the lower transport nothing */
	bool lower_blocked; /* its writev would block: wait for writable */
	bool lower_eof, eof_delivered;
	bool heard; /* the peer has sent bytes */
	bool told_above; /* read_now: the engine above was handed bytes or EOF */
	bool got_bytes;  /* read_now: the lower transport brought bytes in */
	char *spill;
	uint32_t spill_off, spill_len;
	_Alignas(16) unsigned char engine[];
};

static const struct ig_transport_ops tls_ops;
static const struct ig_stream_ops lower_ops;

static struct tls_engine *engine_of(struct tls_conn *tc)
{
	return (struct tls_engine *)(void *)tc->engine;
}

static uint64_t now_ms(const struct tls_conn *tc)
{
	return tc->core->loop->clock.now_ms;
}

static void set_error(struct ig_tls_core *c, const char *why)
{
	snprintf(c->error_buf, sizeof c->error_buf, "%s", why);
	c->last_error = c->error_buf;
}

/* ---- lifetime ---- */

/* A connection's state back to the pool, its charge back to the budget. */
static void conn_give(struct ig_tls_core *c, struct tls_conn *tc)
{
	ig_pool_give(&c->conns, tc);
	if (c->limits.mem)
		ig_membudget_give(c->limits.mem, c->mem_charge);
}

static void conn_free(struct tls_conn *tc)
{
	struct ig_tls_core *c = tc->core;
	ig_tls_engine_free(engine_of(tc));
	if (tc->spill)
		ig_pool_give(&c->spills, tc->spill);
	conn_give(c, tc);
}

static void hold(struct tls_conn *tc)
{
	tc->depth++;
}

static void release(struct tls_conn *tc)
{
	if (--tc->depth == 0 && tc->state == TC_DONE)
		conn_free(tc);
}

static void shaking_unlink(struct tls_conn *tc)
{
	struct ig_tls_core *c = tc->core;
	*(tc->shaking_prev ? &tc->shaking_prev->shaking_next : &c->shaking_head) = tc->shaking_next;
	*(tc->shaking_next ? &tc->shaking_next->shaking_prev : &c->shaking_tail) = tc->shaking_prev;
	tc->shaking_prev = tc->shaking_next = NULL;
	c->in_handshake--;
}

/* Closes the lower transport and stops everything; the object goes back
 * to the pool once no entry point of it is on the stack. */
static void conn_done(struct tls_conn *tc, bool graceful)
{
	struct ig_tls_core *c = tc->core;
	if (tc->state == TC_HANDSHAKE)
		shaking_unlink(tc);
	tc->state = TC_DONE;
	ig_timer_cancel(&c->loop->timers, &tc->timer);
	if (tc->lower) {
		struct ig_transport *l = tc->lower;
		tc->lower = NULL;
		l->ops->close(l, graceful);
	}
}

/* The TLS layer gave up: the engine above learns it through closed(). */
static void conn_abort(struct tls_conn *tc, const char *why)
{
	bool above = tc->state == TC_HANDSHAKE || tc->state == TC_OPEN;
	set_error(tc->core, why);
	conn_done(tc, false);
	if (above)
		tc->up.engine_ops->closed(tc->up.engine);
}

static void conn_fail(struct tls_conn *tc, const char *why)
{
	if (tc->state == TC_HANDSHAKE)
		ig_counter_add(&tc->core->stats.failed, 1);
	conn_abort(tc, why);
}

/* ---- moving bytes ---- */

/* Writes the engine's finished records to the lower transport. Calls no
 * engine above. Returns false if the lower transport failed. */
static bool send_records(struct tls_conn *tc)
{
	struct tls_engine *e = engine_of(tc);
	while (tc->lower && !tc->lower_blocked) {
		size_t len;
		unsigned char *buf = ig_tls_engine_sendrec_buf(e, &len);
		if (!buf)
			return true;
		struct iovec iov = { buf, len };
		ssize_t w = tc->lower->ops->writev(tc->lower, &iov, 1);
		if (w == IG_WOULD_BLOCK) {
			tc->lower_blocked = true;
			return true;
		}
		if (w < 0)
			return false;
		ig_tls_engine_sendrec_ack(e, (size_t)w);
		if ((size_t)w < len)
			tc->lower_blocked = true; /* the socket's buffer is full */
	}
	return true;
}

/* Moves the plaintext the engine above has not taken out of the engine, so
 * that it can send. Returns false if there is none or no spill buffer. */
static bool spill_input(struct tls_conn *tc)
{
	struct tls_engine *e = engine_of(tc);
	size_t len;
	unsigned char *src = ig_tls_engine_recvapp_buf(e, &len);
	if (!src || tc->spill_len)
		return false;
	if (!tc->spill && !(tc->spill = ig_pool_take(&tc->core->spills)))
		return false;
	if (len > SPILL_BYTES)
		len = SPILL_BYTES;
	memcpy(tc->spill, src, len);
	ig_tls_engine_recvapp_ack(e, len);
	tc->spill_off = 0;
	tc->spill_len = (uint32_t)len;
	return true;
}

/* Drops the plaintext nobody will read (the engine above has closed). */
static void drop_input(struct tls_conn *tc)
{
	struct tls_engine *e = engine_of(tc);
	size_t len;
	if (tc->spill) {
		ig_pool_give(&tc->core->spills, tc->spill);
		tc->spill = NULL;
		tc->spill_len = 0;
	}
	while (ig_tls_engine_recvapp_buf(e, &len))
		ig_tls_engine_recvapp_ack(e, len);
}

/* Hands plaintext (the spill first) to the engine above while it lends
 * buffers, then the end of the stream. Returns false if the connection
 * left the open state meanwhile. */
static bool deliver(struct tls_conn *tc)
{
	struct tls_engine *e = engine_of(tc);
	while (!tc->above_paused) {
		size_t avail;
		const unsigned char *src;
		bool spilled = tc->spill_len > 0;
		if (spilled) {
			src = (unsigned char *)tc->spill + tc->spill_off;
			avail = tc->spill_len;
		} else if (!(src = ig_tls_engine_recvapp_buf(e, &avail))) {
			break;
		}
		size_t cap = 0;
		char *dst = tc->up.engine_ops->lend(tc->up.engine, &cap);
		if (!dst || cap == 0) {
			tc->above_paused = true;
			return true;
		}
		size_t n = avail < cap ? avail : cap;
		memcpy(dst, src, n);
		if (spilled) {
			tc->spill_off += (uint32_t)n;
			tc->spill_len -= (uint32_t)n;
			if (!tc->spill_len) {
				ig_pool_give(&tc->core->spills, tc->spill);
				tc->spill = NULL;
			}
		} else {
			/* Before received(): the engine must be free to take the
			   response the engine above may write at once. */
			ig_tls_engine_recvapp_ack(e, n);
		}
		tc->told_above = true;
		tc->up.engine_ops->received(tc->up.engine, n);
		if (tc->state != TC_OPEN)
			return false;
		tc->again = true;
	}
	size_t left;
	if (tc->lower_eof && !tc->eof_delivered && !tc->above_paused && !tc->spill_len &&
	    !ig_tls_engine_recvapp_buf(e, &left)) {
		/* The peer's FIN without close_notify: an end like TCP's. */
		tc->eof_delivered = true;
		tc->told_above = true;
		tc->up.engine_ops->received(tc->up.engine, 0);
		if (tc->state != TC_OPEN)
			return false;
	}
	return true;
}

static void handshake_done(struct tls_conn *tc)
{
	struct ig_tls_core *c = tc->core;
	shaking_unlink(tc);
	tc->state = TC_OPEN;
	ig_counter_add(ig_tls_engine_resumed(engine_of(tc)) ? &c->stats.resumed : &c->stats.full, 1);
	ig_histogram_observe(&c->stats.handshake_us, &ig_duration_bounds, ig_monotonic_us() - tc->start_us);
	ig_timer_cancel(&c->loop->timers, &tc->timer);
}

/* The engine reports closed: a failure, the peer's close_notify (answered
 * by ours already), or ours sent after the engine above closed. */
static void engine_closed(struct tls_conn *tc)
{
	struct tls_engine *e = engine_of(tc);
	int err = ig_tls_engine_error(e);
	switch (tc->state) {
	case TC_HANDSHAKE:
		conn_fail(tc, err ? ig_tls_engine_error_text(e) : "the peer closed during the handshake");
		return;
	case TC_OPEN:
		if (err) {
			conn_fail(tc, ig_tls_engine_error_text(e));
		} else {
			/* Nothing more can come or go (RFC 5246 7.2.1). */
			tc->core->last_error = NULL;
			conn_done(tc, true);
			tc->up.engine_ops->closed(tc->up.engine);
		}
		return;
	case TC_CLOSING:
		conn_done(tc, err == 0);
		return;
	case TC_DONE:
		return;
	}
}

static void resume_lower(struct tls_conn *tc)
{
	size_t len;
	if (!tc->lower_paused || !tc->lower || tc->lower_eof || tc->spill_len || tc->state == TC_DONE ||
	    !ig_tls_engine_recvrec_buf(engine_of(tc), &len))
		return;
	tc->lower_paused = false;
	/* Reads at once, calling back into low_received (which pumps again). */
	tc->lower->ops->resume_read(tc->lower);
}

static void pump_step(struct tls_conn *tc)
{
	struct tls_engine *e = engine_of(tc);
	unsigned st = ig_tls_engine_state(e);
	if (!(st & TLS_CLOSED) && (st & TLS_SENDREC) && !tc->lower_blocked) {
		if (!send_records(tc)) {
			if (tc->state == TC_CLOSING)
				conn_done(tc, false);
			else
				conn_fail(tc, "the connection failed while sending");
			return;
		}
		st = ig_tls_engine_state(e);
	}
	if (st & TLS_CLOSED) {
		/* A failed engine may still hold its fatal alert: one try. */
		if ((st & TLS_SENDREC) && !tc->lower_blocked)
			send_records(tc);
		engine_closed(tc);
		return;
	}
	switch (tc->state) {
	case TC_HANDSHAKE:
		if (ig_tls_engine_established(e)) {
			handshake_done(tc);
			tc->again = true;
			return;
		}
		if (tc->lower_eof) {
			conn_fail(tc, "the peer closed during the handshake");
			return;
		}
		break;
	case TC_OPEN:
		if (!deliver(tc))
			return;
		/* A write refused while a record was half in, now complete and
		   not taken (the engine above lends nothing): move it aside, or
		   the engine above waits for writable() forever. */
		if (tc->want_write && !(ig_tls_engine_state(e) & TLS_SENDAPP))
			spill_input(tc);
		if (tc->want_write && (ig_tls_engine_state(e) & TLS_SENDAPP)) {
			tc->want_write = false;
			tc->up.engine_ops->writable(tc->up.engine);
			if (tc->state != TC_OPEN)
				return;
			tc->again = true;
		}
		break;
	case TC_CLOSING:
		/* Input nobody reads: dropped, so that the engine can finish
		   (a half-duplex engine sends nothing while it holds input).
		   The peer's FIN only ends its half: what is queued still goes,
		   until TLS_CLOSED or the close timer. */
		drop_input(tc);
		if (tc->lower_eof && !(ig_tls_engine_state(e) & TLS_SENDREC)) {
			conn_done(tc, false); /* nothing more can come or go */
			return;
		}
		break;
	case TC_DONE:
		return;
	}
	resume_lower(tc);
}

/* Moves bytes every way they can go. Re-entered (from a callback of the
 * engine above or of the lower transport), it only asks for one more turn. */
static void pump(struct tls_conn *tc)
{
	if (tc->pumping) {
		tc->again = true;
		return;
	}
	tc->pumping = true;
	do {
		tc->again = false;
		pump_step(tc);
	} while (tc->again && tc->state != TC_DONE);
	tc->pumping = false;
}

/* ---- the lower transport's callbacks: we are its engine ---- */

static char *low_lend(void *arg, size_t *cap)
{
	struct tls_conn *tc = arg;
	size_t len = 0;
	unsigned char *buf = NULL;
	if (tc->state != TC_DONE && !tc->spill_len)
		buf = ig_tls_engine_recvrec_buf(engine_of(tc), &len);
	if (!buf) {
		tc->lower_paused = true;
		return NULL;
	}
	*cap = len;
	return (char *)buf;
}

static void low_received(void *arg, size_t n)
{
	struct tls_conn *tc = arg;
	hold(tc);
	if (n == 0) {
		tc->lower_eof = true;
	} else {
		tc->heard = tc->got_bytes = true;
		ig_tls_engine_recvrec_ack(engine_of(tc), n);
	}
	pump(tc);
	release(tc);
}

static void low_writable(void *arg)
{
	struct tls_conn *tc = arg;
	hold(tc);
	tc->lower_blocked = false;
	pump(tc);
	release(tc);
}

static void low_closed(void *arg)
{
	struct tls_conn *tc = arg;
	hold(tc);
	tc->lower = NULL; /* gone: no call on it any more */
	if (tc->state == TC_HANDSHAKE || tc->state == TC_OPEN)
		conn_fail(tc, "the connection was reset");
	else
		conn_done(tc, false);
	release(tc);
}

static const struct ig_stream_ops lower_ops = {
	.lend = low_lend,
	.received = low_received,
	.writable = low_writable,
	.closed = low_closed,
};

static void on_timer(struct ig_timer *t)
{
	struct tls_conn *tc = (struct tls_conn *)((char *)t - offsetof(struct tls_conn, timer));
	hold(tc);
	if (tc->state == TC_HANDSHAKE) {
		ig_counter_add(&tc->core->stats.timed_out, 1);
		conn_abort(tc, "handshake timeout");
	} else if (tc->state == TC_CLOSING) {
		conn_done(tc, false);
	}
	release(tc);
}

/* ---- the transport the engine above sees ---- */

/* Copies the engine above's bytes into the engine and sends the records.
 * Calls nothing of the engine above (it is in the middle of writing). */
static ssize_t up_writev(struct ig_transport *t, const struct iovec *iov, int iovcnt)
{
	struct tls_conn *tc = (struct tls_conn *)t;
	struct tls_engine *e = engine_of(tc);
	if (tc->state == TC_HANDSHAKE) {
		/* The bytes wait for the handshake; a client's starts now. */
		tc->want_write = true;
		if (!send_records(tc))
			return -1;
		return IG_WOULD_BLOCK;
	}
	if (tc->state != TC_OPEN)
		return -1;
	size_t total = 0, off = 0;
	int i = 0;
	while (i < iovcnt) {
		if (off == iov[i].iov_len) {
			i++, off = 0;
			continue;
		}
		size_t room;
		unsigned char *dst = ig_tls_engine_sendapp_buf(e, &room);
		if (!dst) {
			if (ig_tls_engine_state(e) & TLS_CLOSED)
				return total ? (ssize_t)total : -1;
			if (spill_input(tc))
				continue;
			if (ig_tls_engine_state(e) & TLS_SENDREC) {
				/* A full record: push it out and go on. */
				if (!send_records(tc))
					return -1;
				if (!tc->lower_blocked)
					continue;
			}
			break;
		}
		size_t n = iov[i].iov_len - off;
		if (n > room)
			n = room;
		memcpy(dst, (const char *)iov[i].iov_base + off, n);
		ig_tls_engine_sendapp_ack(e, n);
		off += n;
		total += n;
	}
	if (total) {
		ig_tls_engine_flush(e);
		if (!send_records(tc))
			return -1;
	}
	if (total == 0) {
		tc->want_write = true;
		return IG_WOULD_BLOCK;
	}
	if (i < iovcnt)
		tc->want_write = true;
	return (ssize_t)total;
}

static void up_resume_read(struct ig_transport *t)
{
	struct tls_conn *tc = (struct tls_conn *)t;
	if (tc->state == TC_DONE || tc->state == TC_CLOSING)
		return;
	hold(tc);
	tc->above_paused = false;
	pump(tc);
	release(tc);
}

/* Plaintext the engine holds, a spill, or records still in the lower
 * transport all count as arrived: the lower's own read_now brings the
 * latter in (low_received pumps). True also for part of a record (the
 * rest will follow), so the engine above may still be idle then; false
 * when nothing came. */
static bool up_read_now(struct ig_transport *t)
{
	struct tls_conn *tc = (struct tls_conn *)t;
	if (tc->state != TC_OPEN)
		return false;
	hold(tc);
	tc->told_above = tc->got_bytes = false;
	tc->above_paused = false;
	pump(tc);
	if (tc->state == TC_OPEN && !tc->told_above && tc->lower && tc->lower->ops->read_now)
		tc->lower->ops->read_now(tc->lower);
	/* Left the open state: the engine above closed itself or was told. */
	bool told = tc->told_above || tc->got_bytes || tc->state != TC_OPEN;
	release(tc);
	return told;
}

static void up_close(struct ig_transport *t, int graceful)
{
	struct tls_conn *tc = (struct tls_conn *)t;
	struct ig_tls_core *c = tc->core;
	hold(tc);
	if (tc->state == TC_HANDSHAKE) {
		conn_done(tc, false);
	} else if (tc->state == TC_OPEN) {
		/* Input nobody will read would hold the engine (half-duplex). */
		drop_input(tc);
		ig_tls_engine_close(engine_of(tc));
		tc->state = TC_CLOSING;
		if (graceful) {
			uint32_t ms = c->limits.close_timeout_ms ? c->limits.close_timeout_ms : DEFAULT_CLOSE_TIMEOUT_MS;
			ig_timer_set(&c->loop->timers, &tc->timer, now_ms(tc) + ms);
			pump(tc);
		} else {
			/* One try at close_notify; no waiting. */
			send_records(tc);
			conn_done(tc, false);
		}
	}
	release(tc);
}

/* The peer is the lower transport's. */
static size_t up_peer(struct ig_transport *t, char *out, size_t cap)
{
	struct tls_conn *tc = (struct tls_conn *)t;
	struct ig_transport *lo = tc->lower;
	return tc->state != TC_DONE && lo && lo->ops->peer ? lo->ops->peer(lo, out, cap) : 0;
}

static bool up_peer_addr(struct ig_transport *t, uint8_t out[16])
{
	struct tls_conn *tc = (struct tls_conn *)t;
	struct ig_transport *lo = tc->lower;
	return tc->state != TC_DONE && lo && lo->ops->peer_addr && lo->ops->peer_addr(lo, out);
}

static const char *up_peer_subject(struct ig_transport *t)
{
	struct tls_conn *tc = (struct tls_conn *)t;
	return tc->state == TC_OPEN ? ig_tls_engine_peer_subject(engine_of(tc)) : NULL;
}

static const struct ig_transport_ops tls_ops = {
	.writev = up_writev,
	.resume_read = up_resume_read,
	.read_now = up_read_now,
	.close = up_close,
	.peer = up_peer,
	.peer_addr = up_peer_addr,
	.peer_subject = up_peer_subject,
};

/* ---- connections ---- */

static struct tls_conn *conn_new(struct ig_tls_core *c, struct ig_transport *lower)
{
	if (c->limits.mem && !ig_membudget_take(c->limits.mem, c->mem_charge)) {
		ig_membudget_refused(IG_MEM_TLS, c->loop->clock.now_ms, "TLS handshake refused: the memory budget is spent",
				     "rejections_total", "connection_bytes", (int64_t)c->mem_charge);
		return NULL;
	}
	struct tls_conn *tc = ig_pool_take(&c->conns);
	if (!tc) {
		if (c->limits.mem)
			ig_membudget_give(c->limits.mem, c->mem_charge);
		return NULL;
	}
	*tc = (struct tls_conn){ .core = c, .lower = lower, .state = TC_HANDSHAKE };
	tc->up.ops = &tls_ops;
	tc->up.loop = lower->loop;
	tc->timer.fn = on_timer;
	return tc;
}

static struct ig_transport *ig_conn_start(struct tls_conn *tc)
{
	struct ig_tls_core *c = tc->core;
	tc->lower->engine = tc;
	tc->lower->engine_ops = &lower_ops;
	c->in_handshake++;
	tc->start_us = ig_monotonic_us();
	tc->shaking_prev = c->shaking_tail;
	*(c->shaking_tail ? &c->shaking_tail->shaking_next : &c->shaking_head) = tc;
	c->shaking_tail = tc;
	ig_timer_set(&c->loop->timers, &tc->timer, now_ms(tc) + c->limits.handshake_timeout_ms);
	return &tc->up;
}

/* At max_handshakes: closes the oldest handshake whose peer has sent
 * nothing (an idle TCP connection holding a slot), if there is one. */
static void evict_silent(struct ig_tls_core *c)
{
	struct tls_conn *tc = c->shaking_head;
	while (tc && tc->heard)
		tc = tc->shaking_next;
	if (!tc)
		return;
	hold(tc);
	ig_counter_add(&c->stats.refused, 1);
	conn_abort(tc, "no ClientHello while handshakes were at the limit");
	release(tc);
}

struct ig_transport *ig_tls_server(struct ig_tls_core *c, struct ig_transport *lower)
{
	if (c->in_handshake >= c->limits.max_handshakes)
		evict_silent(c);
	if (c->in_handshake >= c->limits.max_handshakes) {
		ig_counter_add(&c->stats.refused, 1);
		return NULL;
	}
	struct tls_conn *tc = conn_new(c, lower);
	if (!tc)
		return NULL;
	if (ig_tls_engine_init_server(engine_of(tc), c->backend) != 0) {
		conn_give(c, tc);
		return NULL;
	}
	return ig_conn_start(tc);
}

struct ig_transport *ig_tls_client(struct ig_tls_core *c, struct ig_transport *lower,
				   const struct tls_trust *trust, const char *server_name)
{
	if (c->in_handshake >= c->limits.max_handshakes) {
		ig_counter_add(&c->stats.refused, 1);
		return NULL;
	}
	struct tls_peer_name peer;
	if (server_name && ig_tls_peer_name_parse(&peer, server_name) != 0)
		return NULL;
	struct tls_conn *tc = conn_new(c, lower);
	if (!tc)
		return NULL;
	if (ig_tls_engine_init_client(engine_of(tc), c->backend, trust, server_name ? &peer : NULL) != 0) {
		conn_give(c, tc);
		return NULL;
	}
	return ig_conn_start(tc);
}

/* ---- per core ---- */

static struct ig_tls_core *_Atomic cores_made;

struct ig_tls_core *ig_tls_core_new(struct ig_loop *loop, const struct tls_credentials *server,
				    const struct ig_tls_limits *limits)
{
	struct ig_tls_core *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->backend = ig_tls_backend_core_new(server, limits->session_cache_bytes);
	if (!c->backend) {
		free(c);
		return NULL;
	}
	c->loop = loop;
	c->limits = *limits;
	c->serves = server != NULL;
	/* Cores live as long as the process; the list keeps them reachable
	   (the leak checker then sees them, not a leak). */
	c->next_made = atomic_load(&cores_made);
	while (!atomic_compare_exchange_weak(&cores_made, &c->next_made, c))
		;
	/* Pools grow on the first connection: nothing is touched before. */
	size_t conn_bytes = offsetof(struct tls_conn, engine) + ig_tls_engine_size();
	ig_pool_init(&c->conns, conn_bytes, 16, ((size_t)1 << 40) / conn_bytes);
	c->mem_charge = conn_bytes + SPILL_BYTES + ig_tls_engine_heap_bytes();
	ig_pool_init(&c->spills, SPILL_BYTES, 4, ((size_t)1 << 40) / SPILL_BYTES);
	return c;
}

const struct ig_tls_stats *ig_tls_core_stats(const struct ig_tls_core *c)
{
	return &c->stats;
}

const struct ig_tls_core *ig_tls_next_server_core(const struct ig_tls_core *prev)
{
	const struct ig_tls_core *c = prev ? prev->next_made : atomic_load(&cores_made);
	while (c && !c->serves)
		c = c->next_made;
	return c;
}

__attribute__((cold)) void ig_tls_credentials_serial_hex(const struct tls_credentials *cred, char *hex, size_t len)
{
	unsigned char serial[32];
	size_t n = ig_tls_credentials_serial(cred, serial, sizeof serial), i = 0;
	while (i + 1 < n && serial[i] == 0) /* the sign's byte */
		i++;
	size_t w = 0;
	for (; i < n && w + 3 <= len; i++, w += 2)
		snprintf(hex + w, 3, "%02X", serial[i]);
	if (len)
		hex[w < len ? w : len - 1] = 0;
}

__attribute__((cold)) void ig_tls_core_post_credentials(struct ig_tls_core *c, const struct tls_credentials *cred)
{
	struct tls_credentials *mine = (struct tls_credentials *)cred;
	ig_tls_credentials_ref(mine);
	struct tls_credentials *unadopted = atomic_exchange(&c->posted, mine);
	if (unadopted) /* two reloads before the core turned: the newer wins */
		ig_tls_credentials_unref(unadopted);
}

__attribute__((cold)) int ig_tls_core_adopt_credentials(struct ig_tls_core *c)
{
	struct tls_credentials *cred = atomic_exchange(&c->posted, NULL);
	if (!cred)
		return 0;
	int ret = ig_tls_backend_core_set_credentials(c->backend, cred);
	ig_tls_credentials_unref(cred); /* the core took its own */
	return ret == 0 ? 1 : -1;
}

const char *ig_tls_last_error(const struct ig_tls_core *c)
{
	return c->last_error;
}

struct ig_tls_core *ig_tls_client_core(struct ig_loop *loop)
{
	static struct ig_loop_slot client_slot;
	void **slot = ig_loop_slot(loop, &client_slot);
	if (!slot)
		return NULL;
	if (!*slot) {
		struct ig_tls_limits limits = { .handshake_timeout_ms = 10000, .max_handshakes = 100000 };
		*slot = ig_tls_core_new(loop, NULL, &limits);
	}
	return *slot;
}

/* ---- startup: files, credentials, trust ---- */

/* Reads a whole (small) file. NULL with a message. */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	return ig_read_file(path, (size_t)16 << 20, 0, len, err, errlen);
}

static struct tls_credentials *load_credentials(const char *cert_path, const char *cert_pem,
					       const char *key_path, const char *key_pem, char *err, size_t errlen)
{
	char why[200];
	size_t cert_len = cert_pem ? strlen(cert_pem) : 0, key_len = key_pem ? strlen(key_pem) : 0;
	char *cert_file = NULL, *key_file = NULL;
	if (!cert_pem && !(cert_pem = cert_file = read_file(cert_path, &cert_len, why, sizeof why))) {
		snprintf(err, errlen, "TLS certificate: %s", why);
		return NULL;
	}
	if (!key_pem && !(key_pem = key_file = read_file(key_path, &key_len, why, sizeof why))) {
		snprintf(err, errlen, "TLS private key: %s", why);
		free(cert_file);
		return NULL;
	}
	struct tls_credentials *cred = ig_tls_credentials_load(cert_pem, cert_len, key_pem, key_len, why, sizeof why);
	if (!cred)
		snprintf(err, errlen, "TLS %s", why); /* "certificate: ..." or "private key: ..." */
	free(cert_file);
	if (key_file) {
		memset(key_file, 0, key_len);
		free(key_file);
	}
	return cred;
}

const struct tls_credentials *ig_tls_server_credentials(const char *cert_path, const char *cert_pem,
							const char *key_path, const char *key_pem,
							bool *no_entropy, char *err, size_t errlen)
{
	char why[200];
	int seeded = ig_tls_backend_init(why, sizeof why);
	*no_entropy = seeded == IG_TLS_NO_ENTROPY;
	if (seeded != 0) {
		snprintf(err, errlen, "TLS: %s", why);
		return NULL;
	}
	return load_credentials(cert_path, cert_pem, key_path, key_pem, err, errlen);
}

int ig_tls_client_ca_load(const char *path, char *err, size_t errlen)
{
	char why[200];
	size_t len;
	char *pem = read_file(path, &len, why, sizeof why);
	if (!pem) {
		snprintf(err, errlen, "INGOT_TLS_CLIENT_CA: %s", why);
		return -1;
	}
	/* Only the file's CAs: the public ones issue no client certificate
	   this service should take. Kept for the process's life. */
	const struct tls_trust *ca = ig_tls_trust_load_pem(pem, len, why, sizeof why);
	free(pem);
	if (!ca || ig_tls_backend_set_client_ca(ca, why, sizeof why) != 0) {
		snprintf(err, errlen, "INGOT_TLS_CLIENT_CA %s: %s", path, why);
		return -1;
	}
	return 0;
}

__attribute__((cold)) struct tls_credentials *ig_tls_reload_credentials(const char *cert_path, const char *key_path,
								       char *err, size_t errlen)
{
	return load_credentials(cert_path, NULL, key_path, NULL, err, errlen);
}

