/* A ready connection's queries: each written as its own
 * Parse?/Bind/Describe?/Execute/Sync, or reads sharing one Sync, all of a
 * batch in one write; in flight in a FIFO, answered in order, one
 * ReadyForQuery each (a failing read's skipped followers are sent again
 * alone); a statement the server dropped prepared again once; and the
 * query timeout, which cancels the head with a CancelRequest.
 *
 * A CancelRequest stops whatever the backend runs when it arrives (one
 * that finds it waiting for a query is dropped). So while one may still
 * arrive, the connection takes no new query (ig_pg_conn_cancelling); one
 * is sent again only with nothing behind the cancelled query; and a read
 * that was already on the connection behind it, stopped with 57014 (the
 * cancelled query had ended as the request came), is sent again once:
 * it did nothing. A write so stopped fails (sent again, it would run
 * after queries that came after it). */
#include "internal.h"

#include <string.h>

static const struct ig_pg_settings_values *cfg(void) { return &ig_pg_settings_values; }

static void encode(struct pg_conn *k, struct pg_query *q)
{
	switch (q->kind) {
	case PGQ_EXTENDED: ig_pg_stmt_encode(k, q); break;
	case PGQ_SIMPLE: ig_pg_put_query(&k->out, q->sql); break;
	case PGQ_HOLD:
		if (q->begin)
			ig_pg_put_query(&k->out, "BEGIN");
		else
			ig_pg_put_sync(&k->out); /* answered by ReadyForQuery alone */
		break;
	}
}

static void arm_query_timer(struct pg_conn *k)
{
	if (!cfg()->query_timeout_ms || !k->head) {
		ig_timer_cancel(&k->core->loop->timers, &k->timer);
		return;
	}
	ig_timer_set(&k->core->loop->timers, &k->timer, k->head->deadline_ms);
}

/* A read after a read whose Sync is still unwritten at the end of out
 * takes that Sync off and ends with its own: the server flushes its
 * output at a Sync, so the reads of one batch cost one flush (one wakeup
 * here) instead of one each. Reads only: the statements between two Syncs
 * run in one implicit transaction, and one that fails makes the server
 * skip the rest, which is harmless for reads sent again alone. */
static bool share_tail_sync(struct pg_conn *k, const struct pg_query *q)
{
	if (!q->read_only || q->kind != PGQ_EXTENDED || k->held || !k->tail || !k->tail->read_only ||
	    k->tail->kind != PGQ_EXTENDED || !k->tail_sync_end || k->tail_sync_end != k->out.len ||
	    k->opos + PG_SYNC_BYTES > k->out.len)
		return false;
	k->out.len -= PG_SYNC_BYTES;
	k->tail->sync_shared = true;
	return true;
}

bool ig_pg_conn_send(struct pg_conn *k, struct pg_query *q)
{
	bool shared = share_tail_sync(k, q);
	size_t mark = k->out.len;
	size_t estimate = q->sql_len + 64;
	for (uint16_t i = 0; i < q->nparams; i++)
		estimate += 16 + ig_pg_param_size(&q->params[i]);
	for (int tries = 0; tries < 3; tries++) {
		if (k->out.cap - k->out.len < estimate * 2 && !ig_pg_conn_out_grow(k, estimate * 2))
			return false;
		encode(k, q);
		if (!k->out.overflow)
			break;
		/* A statement slot taken for it stays: harmless, it will be
		   prepared by whichever query uses it next. */
		k->out.len = mark;
		k->out.overflow = false;
		if (q->stmt >= 0)
			ig_pg_stmt_drop(k, q->stmt, q->stmt_gen);
		estimate *= 4;
		if (tries == 2) {
			if (shared) { /* the tail's Sync back, in the bytes it had */
				ig_pg_put_sync(&k->out);
				k->tail->sync_shared = false;
			}
			return false;
		}
	}
	k->tail_sync_end = q->kind == PGQ_EXTENDED ? k->out.len : 0;
	q->conn = k;
	q->deadline_ms = pg_now_ms(k->core) + cfg()->query_timeout_ms;
	IG_FIFO_PUSH(k->head, k->tail, q);
	k->inflight++;
	if (k->head == q)
		arm_query_timer(k);
	ig_pg_conn_schedule_flush(k);
	return true;
}

static struct pg_query *pop_head(struct pg_conn *k)
{
	struct pg_query *q = IG_FIFO_POP(k->head, k->tail);
	if (!k->head)
		k->tail_sync_end = 0;
	k->inflight--;
	if (k->written > 0 && --k->written == 0 && k->out.len > k->opos)
		ig_pg_conn_schedule_flush(k);
	return q;
}

/* q again, alone (its own Sync), from a clean result; false when it does
 * not fit (q then carries the error). */
static bool send_again(struct pg_conn *k, struct pg_query *q)
{
	q->answered = q->read_only = q->sync_shared = q->skipped = false;
	q->cols = q->rows = q->cap = 0;
	q->values = NULL;
	q->names = NULL;
	if (ig_pg_conn_send(k, q))
		return true;
	ig_pg_query_set_error(q, IG_PG_TOO_LARGE, "cannot write the query");
	return false;
}

/* A statement the server dropped is prepared again, once. */
static bool retried(struct pg_conn *k, struct pg_query *q)
{
	if (!q->retry || q->retried || q->zombie)
		return false;
	q->retried = true;
	q->retry = false;
	return send_again(k, q);
}

/* The head, which shared the next query's Sync, failed: the server skips
 * what follows up to that Sync, and its ReadyForQuery sends each skipped
 * read again alone (send_skipped): one failing read fails alone. */
static void shared_failed(struct pg_conn *k)
{
	struct pg_query *q = pop_head(k);
	for (struct pg_query *p = k->head; p; p = p->next) {
		p->skipped = true;
		if (p->parsed_here && p->stmt >= 0) /* its Parse was skipped too */
			ig_pg_stmt_drop(k, p->stmt, p->stmt_gen);
		if (!p->sync_shared)
			break;
	}
	arm_query_timer(k);
	if (!retried(k, q))
		ig_pg_query_deliver(k->core, q);
}

/* The head shared the next query's Sync: its answer ends at its
 * CommandComplete, with no ReadyForQuery of its own. */
static void shared_done(struct pg_conn *k)
{
	struct pg_query *q = pop_head(k);
	arm_query_timer(k);
	ig_pg_query_deliver(k->core, q);
}

static void send_skipped(struct pg_conn *k)
{
	bool last;
	do {
		struct pg_query *q = pop_head(k);
		last = !q->sync_shared;
		if (q->zombie || !send_again(k, q))
			ig_pg_query_deliver(k->core, q);
	} while (!last && k->head);
	arm_query_timer(k);
}

static void on_ready(struct pg_conn *k, const struct pg_msg *m)
{
	struct pg_query *q = k->head;
	if (!ig_pg_read_ready(m, &k->tx_status)) {
		ig_pg_conn_close(k, IG_PG_PROTOCOL, "malformed ReadyForQuery");
		return;
	}
	if (q->skipped) {
		send_skipped(k);
		return;
	}
	pop_head(k);
	arm_query_timer(k);
	if (retried(k, q))
		return;
	if (q->commit && !q->failed && ig_str_eq(q->tag, "ROLLBACK", 8))
		ig_pg_query_set_error(q, IG_PG_ABORTED, "the transaction had failed: COMMIT rolled it back");
	if (q->release_after || (q->kind == PGQ_HOLD && q->failed))
		k->held = false;
	ig_pg_query_deliver(k->core, q);
	if (k->state == PGC_READY && !k->held && k->owner_ops->room)
		k->owner_ops->room(k->owner, k);
}

void ig_pg_pipeline_message(struct pg_conn *k, const struct pg_msg *m)
{
	struct pg_query *q = k->head;
	switch (m->type) {
	case PG_MSG_NOTIFICATION: {
		uint32_t pid;
		ig_str ch, payload;
		if (ig_pg_read_notification(m, &pid, &ch, &payload))
			k->owner_ops->notify(k->owner, k, ch, payload);
		return;
	}
	case PG_MSG_NOTICE:
	case PG_MSG_PARAMETER_STATUS:
		return;
	case PG_MSG_ERROR:
		if (q)
			q->answered = true;
		if (!ig_pg_result_error(k, q, m)) {
			ig_pg_conn_close(k, IG_PG_PROTOCOL, "malformed ErrorResponse");
			return;
		}
		if (q && k->head == q && q->sync_shared)
			shared_failed(k);
		return;
	default:
		break;
	}
	if (!q) {
		ig_pg_conn_close(k, IG_PG_PROTOCOL, "a message from the database with no query in flight");
		return;
	}
	q->answered = true;
	switch (m->type) {
	case PG_MSG_NO_DATA:
		/* A statement without result columns (an UPDATE): known too. */
		if (ig_pg_read_empty(m))
			ig_pg_stmt_no_data(k, q);
		/* fall through */
	case PG_MSG_PARSE_COMPLETE:
	case PG_MSG_BIND_COMPLETE:
	case PG_MSG_CLOSE_COMPLETE:
	case PG_MSG_PORTAL_SUSPENDED:
		if (!ig_pg_read_empty(m))
			ig_pg_conn_close(k, IG_PG_PROTOCOL, "malformed message");
		return;
	case PG_MSG_PARAMETER_DESCRIPTION:
		return;
	case PG_MSG_ROW_DESCRIPTION:
		ig_pg_result_columns(k, q, m);
		return;
	case PG_MSG_DATA_ROW:
		ig_pg_result_row(k, q, m);
		return;
	case PG_MSG_COMMAND_COMPLETE: {
		ig_str tag;
		uint64_t rows;
		if (!ig_pg_read_command_complete(m, &tag, &rows)) {
			ig_pg_conn_close(k, IG_PG_PROTOCOL, "malformed CommandComplete");
			return;
		}
		ig_pg_result_tag(q, tag, rows);
		if (q->sync_shared)
			shared_done(k);
		return;
	}
	case PG_MSG_EMPTY_QUERY:
		if (q->sync_shared)
			shared_done(k);
		return;
	case PG_MSG_READY:
		on_ready(k, m);
		return;
	default:
		ig_pg_conn_close(k, IG_PG_PROTOCOL, "unexpected message from the database");
	}
}

/* The head's query timeout (a ready connection's timer). */
void ig_pg_pipeline_timeout(struct pg_conn *k)
{
	struct pg_query *q = k->head;
	if (!q)
		return;
	uint64_t now = pg_now_ms(k->core);
	if (now < q->deadline_ms) {
		arm_query_timer(k);
		return;
	}
	if (q->cancelled) {
		/* Still the head a timeout after its CancelRequest: the server
		   ignores one that comes while it waits for the query's messages
		   rather than runs it, so send another, but only while none of
		   its answer came: once some did, the server was running it, and
		   a CancelRequest landing after its end would cancel the query
		   pipelined behind it. After PG_CANCEL_TRIES timeouts, a query
		   that will not stop is not waited on: the connection goes
		   (which ends the backend's work too). */
		if (q->cancels >= PG_CANCEL_TRIES) {
			ig_pg_conn_close(k, IG_PG_CONNECTION_LOST, "the database did not stop a cancelled query");
			return;
		}
		q->cancels++;
		/* Not while one is open (it may yet stop q), nor once some of
		   q's answer came (the server was running it: a request landing
		   after its end would stop what follows), nor with queries
		   behind q. */
		if (!k->cancels_open && !q->answered && !q->next)
			ig_pg_cancel_send(k->core, k);
		/* At least a second between CancelRequests: a loaded server may
		   take longer than a short query timeout to send the error of a
		   query the first one did stop, and another CancelRequest landing
		   then would stop the query queued behind it. */
		uint64_t again = cfg()->query_timeout_ms;
		q->deadline_ms = now + (again < 1000 ? 1000 : again);
		arm_query_timer(k);
		return;
	}
	if (!q->zombie && q->kind != PGQ_HOLD) {
		/* The server is running q (every query before it has ended):
		   a CancelRequest stops it; its error then arrives and is
		   dropped, as is the rest of its answer. */
		q->cancelled = true;
		q->cancels = 1;
		for (struct pg_query *p = q->next; p; p = p->next)
			p->behind_cancel = true;
		struct ig_logline l;
		if (ig_log_enabled(IG_LOG_DEBUG) && ig_log_begin(&l, IG_LOG_DEBUG, "database query timed out: cancelled")) {
			ig_pg_log_peer(&l);
			ig_log_int(&l, "timeout_ms", cfg()->query_timeout_ms);
			ig_log_end(&l);
		}
		ig_pg_cancel_send(k->core, k);
		uint64_t again = cfg()->query_timeout_ms;
		q->deadline_ms = now + (again < 1000 ? 1000 : again);
		arm_query_timer(k);
		bool internal = q->internal;
		q->zombie = true;
		if (!internal && q->done) {
			ig_pg_error e = { .kind = IG_PG_TIMEOUT, .message = IG_STR("the query timed out and was cancelled"),
					  .query = { q->sql, q->sql_len } };
			q->done(NULL, &e, q->arg);
		}
	}
}

void ig_pg_pipeline_cancel_ended(struct pg_conn *k)
{
	if (k->cancels_open)
		k->cancels_open--;
	if (!ig_pg_conn_cancelling(k) && k->state == PGC_READY && !k->held && k->owner_ops->room)
		k->owner_ops->room(k->owner, k);
}
