/* net/pg's per-core state, made on a loop's first use (a process without a
 * database never makes it), and a query's life: taken from the core's
 * pool, delivered once, given back. A core's state is found in its loop's
 * slot (kernel/runtime/loop.h). */
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>

static struct ig_loop_slot pg_slot;

/* Every core's state, for the process's lifetime: reachable after its
 * thread has gone, so a leak checker at exit sees memory in use, not
 * lost (as net/client's). Pushed once per core, never on a query's path. */
static _Atomic(struct pg_core *) all_pg_cores;

static void deliver_failed(struct ig_deferred *d)
{
	struct pg_core *c = (struct pg_core *)((char *)d - offsetof(struct pg_core, deliver));
	struct pg_query *q;
	while ((q = IG_FIFO_POP(c->failed_head, c->failed_tail)))
		ig_pg_query_deliver(c, q);
}

struct pg_core *ig_pg_core_of(struct ig_loop *loop)
{
	void **slot = ig_loop_slot(loop, &pg_slot);
	if (!slot)
		return NULL;
	if (*slot)
		return *slot;
	/* Once per core, for the process's lifetime. */
	struct pg_core *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->all_next = atomic_load(&all_pg_cores);
	while (!atomic_compare_exchange_weak(&all_pg_cores, &c->all_next, c))
		;
	c->loop = loop;
	ig_pool_init(&c->queries, sizeof(struct pg_query), 256, 1u << 20);
	ig_pool_init(&c->cancels, 256, 8, 1024);
	ig_sock_core_init(&c->sock, loop, -1, 4 * PG_MAX_POOL, NULL, NULL);
	c->deliver.fn = deliver_failed;
	ig_pool_init(&c->blocks, 4096, 1, 16);
	ig_arena_init(&c->scratch, &c->blocks, 16384);
	ig_pg_pool_init(&c->pool, c);
	*slot = c;
	return c;
}

struct pg_query *ig_pg_query_new(struct pg_core *c)
{
	struct pg_query *q = ig_pool_take(&c->queries);
	if (q)
		*q = (struct pg_query){ .stmt = -1 };
	return q;
}

void ig_pg_query_free(struct pg_core *c, struct pg_query *q)
{
	ig_pool_give(&c->queries, q);
}

void ig_pg_query_set_error(struct pg_query *q, enum ig_pg_error_kind kind, const char *message)
{
	if (q->failed)
		return; /* the first error is the one that says why */
	q->failed = true;
	q->err = (ig_pg_error){ .kind = kind, .message = { message, strlen(message) } };
}

void ig_pg_fail_later(struct pg_core *c, struct pg_query *q, enum ig_pg_error_kind kind, const char *message)
{
	ig_pg_query_set_error(q, kind, message);
	IG_FIFO_PUSH(c->failed_head, c->failed_tail, q);
	ig_loop_defer(c->loop, &c->deliver);
}

void ig_pg_query_deliver(struct pg_core *c, struct pg_query *q)
{
	/* set here, whoever failed it: the log line names the query */
	q->err.query = (ig_str){ q->sql, q->sql_len };
	if (!q->zombie && !q->internal) {
		if (q->kind == PGQ_HOLD) {
			if (q->failed)
				q->ready(NULL, &q->err, q->arg);
			else
				q->ready((ig_pg_tx *)q->conn, NULL, q->arg);
		} else if (q->done) {
			if (q->failed) {
				q->done(NULL, &q->err, q->arg);
			} else {
				ig_pg_result r = {
					.rows = q->rows, .cols = q->cols, .values = q->values,
					.names = q->names, .affected = q->affected, .tag = q->tag,
				};
				ig_pg_result *res = ig_arena_alloc(q->arena, sizeof r);
				if (res) {
					*res = r;
					q->done(res, NULL, q->arg);
				} else {
					ig_pg_query_set_error(q, IG_PG_TOO_LARGE, "the result does not fit in the arena");
					q->err.query = (ig_str){ q->sql, q->sql_len };
					q->done(NULL, &q->err, q->arg);
				}
			}
		}
	}
	ig_pg_query_free(c, q);
}
