/* A connection's I/O below its protocol: the output buffer that startup
 * messages and queries are written into, its flush after the loop batch
 * (held back on a pool connection while written queries are unanswered),
 * and closing, which fails the queries in flight and tells the owner. */
#include "internal.h"

#include <stdlib.h>

#include "ingot/log.h"

bool ig_pg_conn_out_grow(struct pg_conn *k, size_t need)
{
	if (need > ((size_t)1 << 31))
		return false;
	size_t cap = k->out.cap * 2;
	while (cap - k->out.len < need)
		cap *= 2;
	char *b = realloc(k->obuf, cap);
	if (!b)
		return false;
	k->obuf = k->out.buf = b;
	k->out.cap = cap;
	return true;
}

void ig_pg_conn_schedule_flush(struct pg_conn *k)
{
	ig_loop_defer(k->core->loop, &k->flush);
}

/* Nothing left to write: out empties, and with it the tail's Sync that a
 * read could have shared (pipeline.c's share_tail_sync). */
void ig_pg_conn_out_empty(struct pg_conn *k)
{
	k->out.len = k->opos = 0;
	k->tail_sync_end = 0;
}

void ig_pg_conn_flush(struct pg_conn *k)
{
	while (k->opos < k->out.len) {
		struct iovec iov = { k->obuf + k->opos, k->out.len - k->opos };
		ssize_t w = k->t->ops->writev(k->t, &iov, 1);
		if (w == IG_WOULD_BLOCK) {
			k->flushing = true;
			return;
		}
		if (w < 0) {
			ig_pg_conn_close(k, IG_PG_CONNECTION_LOST, "writing to the database failed");
			return;
		}
		k->opos += (size_t)w;
	}
	ig_pg_conn_out_empty(k);
	k->flushing = false;
	k->written = k->inflight;
}

/* After the loop batch. A pool connection whose written queries are still
 * unanswered keeps what came since in out: the answers' arrival sends it
 * (pipeline.c's pop_head), in one write with whatever more came
 * meanwhile, where a write per loop batch would cost a send here and a
 * wakeup and a flush at the server each. The server runs a connection's
 * queries one by one, so the wait adds at most one round trip. */
void ig_pg_conn_flush_deferred(struct ig_deferred *d)
{
	struct pg_conn *k = (struct pg_conn *)((char *)d - offsetof(struct pg_conn, flush));
	if (k->t && k->state != PGC_IDLE && k->state != PGC_CONNECTING && !k->flushing &&
	    !(k->state == PGC_READY && k->role == PGR_POOL && k->written > 0))
		ig_pg_conn_flush(k);
}

void ig_pg_conn_close(struct pg_conn *k, enum ig_pg_error_kind kind, const char *message)
{
	if (k->state == PGC_IDLE)
		return;
	bool was_ready = k->state == PGC_READY;
	ig_dial_cancel(&k->dial);
	if (k->t)
		k->t->ops->close(k->t, 0);
	k->t = k->sock = NULL;
	k->tls = false;
	ig_timer_cancel(&k->core->loop->timers, &k->timer);
	k->state = PGC_IDLE;
	k->generation++;
	ig_pg_conn_out_empty(k);
	k->out.overflow = false;
	k->flushing = false;
	k->rpos = k->rlen = 0;
	k->tx_status = 0;
	ig_pg_stmts_clear(k);
	struct pg_query *list = k->head, *q;
	k->head = k->tail = NULL;
	k->inflight = k->written = 0;
	k->cancels_open = 0; /* those still open are for the connection closed (generation) */
	if (was_ready) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_WARN, "database connection lost")) {
			ig_pg_log_peer(&l);
			ig_log_cstr(&l, "reason", message);
			ig_log_end(&l);
		}
	}
	k->owner_ops->lost(k->owner, k, was_ready, kind, message);
	/* The queries it carried fail after the connection is out of the
	   pool's choice, so that a done starting another never lands here. */
	while ((q = list)) {
		list = q->next;
		q->next = NULL;
		q->conn = NULL;
		ig_pg_query_set_error(q, kind, message);
		ig_pg_query_deliver(k->core, q);
	}
}
