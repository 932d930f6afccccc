/* CancelRequest: a query that ran past INGOT_PG_QUERY_TIMEOUT_MS is
 * stopped by the server when a new connection to it sends the backend's
 * pid and secret key (and nothing else: the server signals the backend,
 * answers nothing and closes). Plain TCP even when queries go over TLS, as
 * libpq does. The request is over when the server has closed: until then
 * it could still stop whatever the backend runs, so the connection it was
 * for takes no new query (ig_pg_conn_cancelling). */
#include "internal.h"
#include "net/stack.h"

struct pg_cancel {
	struct pg_core *core;
	struct pg_conn *conn;
	uint32_t generation; /* conn's when sent: a closed one is no longer waiting */
	struct ig_transport *t;
	struct ig_timer timer;
	char msg[16];
	uint8_t sent;
	char sink[16];
};
_Static_assert(sizeof(struct pg_cancel) <= 256, "cancels come from a pool of 256-byte objects");

static void cancel_end(struct pg_cancel *x)
{
	ig_timer_cancel(&x->core->loop->timers, &x->timer);
	if (x->t)
		x->t->ops->close(x->t, 0);
	x->t = NULL;
	struct pg_conn *k = x->conn;
	bool current = k->generation == x->generation;
	ig_pool_give(&x->core->cancels, x);
	if (current)
		ig_pg_pipeline_cancel_ended(k);
}

static void cancel_timeout(struct ig_timer *tm)
{
	cancel_end((struct pg_cancel *)((char *)tm - offsetof(struct pg_cancel, timer)));
}

static char *cancel_lend(void *engine, size_t *cap)
{
	struct pg_cancel *x = engine;
	*cap = sizeof x->sink;
	return x->sink;
}

static void cancel_received(void *engine, size_t n)
{
	if (n == 0) /* the server sends nothing; its close is the end */
		cancel_end(engine);
}

static void cancel_writable(void *engine)
{
	struct pg_cancel *x = engine;
	while (x->sent < sizeof x->msg) {
		struct iovec iov = { x->msg + x->sent, sizeof x->msg - x->sent };
		ssize_t w = x->t->ops->writev(x->t, &iov, 1);
		if (w == IG_WOULD_BLOCK)
			return;
		if (w < 0) {
			cancel_end(x);
			return;
		}
		x->sent += (uint8_t)w;
	}
}

static void cancel_closed(void *engine)
{
	struct pg_cancel *x = engine;
	x->t = NULL;
	cancel_end(x);
}

static const struct ig_stream_ops cancel_ops = {
	.lend = cancel_lend,
	.received = cancel_received,
	.writable = cancel_writable,
	.closed = cancel_closed,
};

void ig_pg_cancel_send(struct pg_core *c, struct pg_conn *k)
{
	struct pg_cancel *x = ig_pool_take(&c->cancels);
	if (!x)
		return;
	*x = (struct pg_cancel){ .core = c, .conn = k, .generation = k->generation };
	struct pg_out o;
	pg_out_init(&o, x->msg, sizeof x->msg);
	ig_pg_put_cancel(&o, k->pid, k->key);
	x->t = ig_net_connect(&c->sock, c->loop, (const struct sockaddr *)&k->addr, k->addr_len);
	if (o.overflow || o.len != sizeof x->msg || !x->t) {
		if (x->t)
			x->t->ops->close(x->t, 0);
		ig_pool_give(&c->cancels, x);
		return;
	}
	x->t->engine_ops = &cancel_ops;
	x->t->engine = x;
	x->timer.fn = cancel_timeout;
	ig_timer_set(&c->loop->timers, &x->timer, pg_now_ms(c) + PG_CANCEL_WAIT_MS);
	k->cancels_open++;
}
