/* CancelRequest: a query that ran past INGOT_PG_QUERY_TIMEOUT_MS is
 * stopped by the server when a new connection to it sends the backend's
 * pid and secret key (and nothing else: the server answers nothing and
 * closes). Plain TCP even when queries go over TLS, as libpq does. */
#include "internal.h"
#include "net/stack.h"

struct pg_cancel {
	struct pg_core *core;
	struct ig_transport *t;
	char msg[16];
	uint8_t sent;
	char sink[16];
};
_Static_assert(sizeof(struct pg_cancel) <= 256, "cancels come from a pool of 256-byte objects");

static void cancel_done(struct pg_cancel *x)
{
	if (x->t)
		x->t->ops->close(x->t, 1);
	x->t = NULL;
	ig_pool_give(&x->core->cancels, x);
}

static char *cancel_lend(void *engine, size_t *cap)
{
	struct pg_cancel *x = engine;
	*cap = sizeof x->sink;
	return x->sink;
}

static void cancel_received(void *engine, size_t n)
{
	(void)n; /* the server sends nothing; its close ends us */
	struct pg_cancel *x = engine;
	if (n == 0)
		cancel_done(x);
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
			cancel_done(x);
			return;
		}
		x->sent += (uint8_t)w;
	}
	cancel_done(x); /* graceful: the request reaches the server */
}

static void cancel_closed(void *engine)
{
	struct pg_cancel *x = engine;
	x->t = NULL;
	ig_pool_give(&x->core->cancels, x);
}

static const struct ig_stream_ops cancel_ops = {
	.lend = cancel_lend,
	.received = cancel_received,
	.writable = cancel_writable,
	.closed = cancel_closed,
};

void ig_pg_cancel_send(struct pg_core *c, const struct pg_conn *k)
{
	struct pg_cancel *x = ig_pool_take(&c->cancels);
	if (!x)
		return;
	*x = (struct pg_cancel){ .core = c };
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
}
