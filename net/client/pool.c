/* A pool: the connections to one origin on one core, and the queue of
 * calls waiting for one. A Client (ig_client_new) is a pool of one
 * connection. A call goes to the first connection that can take it
 * (conn_can_take: the pipelining depth, and a call that is not idempotent
 * only on an empty connection), in an order that puts the connection that
 * most recently finished a response first, so the search is short and warm
 * connections are reused while the others expire; if none can, a new
 * connection opens while the pool is under its limit; otherwise the call
 * waits in the queue (up to max_queued) for a connection to free up. */
#include "internal.h"
#include "kernel/list.h"

#include <errno.h>
#include <stdio.h>

static const struct ig_dispatcher_ops pool_ops;

struct client_pool *pool_new(struct client_core *core, const struct ig_url *origin,
			     const ig_client_opts *opts, struct client_agent *agent)
{
	struct client_pool *p = ig_pool_take(&core->pools);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	memset(p, 0, sizeof *p);
	/* Parsed again into the pool's own struct: an ig_url's slices point
	   into its own buffer. */
	if (ig_url_parse_origin(origin->origin.ptr, origin->origin.len, &p->url) != 0) {
		ig_pool_give(&core->pools, p);
		errno = EINVAL;
		return NULL;
	}
	memcpy(p->host, p->url.host.ptr, p->url.host.len);
	p->host[p->url.host.len] = 0;
	p->core = core;
	p->agent = agent;
	client_opts_resolve(&p->opts, opts);
	/* The status line is bounded by the head's limit. */
	p->limits = (struct http_limits){ .max_request_line = p->opts.max_header_bytes,
					  .max_header_bytes = p->opts.max_header_bytes,
					  .max_headers = p->opts.max_headers };
	p->d.ops = &pool_ops;
	p->d.loop = core->loop;
	p->d.max_body_bytes = p->opts.max_body_bytes;
	return p;
}

/* ---- the queue ---- */

static void queue_push(struct client_pool *p, struct client_call *c)
{
	c->state = CALL_QUEUED;
	IG_FIFO_PUSH(p->queue, p->queue_tail, c);
	p->queued++;
}

static struct client_call *queue_pop(struct client_pool *p)
{
	struct client_call *c = p->queue;
	p->queue = c->next;
	if (!p->queue)
		p->queue_tail = NULL;
	p->queued--;
	c->next = NULL;
	return c;
}

void pool_unqueue(struct client_pool *p, struct client_call *c)
{
	struct client_call **pp = &p->queue, *prev = NULL;
	while (*pp && *pp != c) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return;
	*pp = c->next;
	if (p->queue_tail == c)
		p->queue_tail = prev;
	p->queued--;
	c->next = NULL;
}

void pool_requeue(struct client_pool *p, struct client_call *first)
{
	struct client_call *last = first;
	uint32_t n = 1;
	while (last->next) {
		last = last->next;
		n++;
	}
	last->next = p->queue;
	if (!p->queue)
		p->queue_tail = last;
	p->queue = first;
	p->queued += n;
}

void pool_fail_queued(struct client_pool *p, enum ig_client_error error, const char *message)
{
	p->busy++;
	while (p->queue)
		call_end(queue_pop(p), error, message);
	p->busy--;
	pool_settle(p);
}

/* ---- connections ---- */

void pool_conn_ready(struct client_pool *p, struct client_conn *k)
{
	if (p->conns == k)
		return;
	IG_DLIST_REMOVE(p->conns, k);
	IG_DLIST_PUSH(p->conns, k);
}

static struct client_conn *pick(struct client_pool *p, const struct client_call *c)
{
	for (struct client_conn *k = p->conns; k; k = k->next)
		if (conn_can_take(k, c))
			return k;
	return NULL;
}

void pool_drive(struct client_pool *p)
{
	if (p->driving) {
		p->drive_again = true; /* the outer loop goes round again */
		return;
	}
	p->driving = true;
	p->busy++;
	do {
		p->drive_again = false;
		while (p->queue && !p->destroyed) {
			struct client_call *c = p->queue;
			struct client_conn *k = pick(p, c);
			bool fresh = false;
			if (!k) {
				if (p->conn_count >= p->opts.connections)
					break;
				k = conn_open(p, c->connect_ms);
				if (!k && p->conn_count)
					break; /* ours drive the queue again as they free up */
				if (!k) {
					/* Nothing of ours would ever come back to it. */
					call_end(queue_pop(p), IG_CLIENT_BUSY, "out of connection slots on this core");
					continue;
				}
				fresh = true;
			}
			conn_take(k, queue_pop(p));
			if (fresh)
				conn_start(k);
		}
		/* Calls put back by a connection of a destroyed pool (it broke,
		   or the upstream closed with calls behind): no connection will
		   take them again. */
		if (p->destroyed && p->queue)
			pool_fail_queued(p, IG_CLIENT_ABORTED, "the dispatcher was destroyed");
	} while (p->drive_again);
	p->driving = false;
	p->busy--;
	pool_settle(p);
}

/* ---- dispatch ---- */

static bool same_origin(const struct client_pool *p, ig_str origin)
{
	if (ig_str_eq(origin, p->url.origin.ptr, p->url.origin.len))
		return true; /* already normalised, as ig_fetch passes it */
	struct ig_url u;
	return ig_url_parse_origin(origin.ptr, origin.len, &u) == 0 && ig_url_same_origin(&u, &p->url);
}

static void fail_at_once(struct client_call *c, enum ig_client_error error, const char *message)
{
	call_end(c, error, message);
}

ig_call *pool_dispatch(ig_dispatcher *d, const ig_dispatch_opts *opts,
		       const ig_dispatch_handler *handler, void *arg)
{
	struct client_pool *p = (struct client_pool *)d;
	struct client_core *core = p->core;
	struct client_call *c = ig_pool_take(&core->calls);
	if (!c) {
		call_fail_now(core, handler, arg, IG_CLIENT_BUSY, "out of call slots on this core");
		return NULL;
	}
	memset(c, 0, sizeof *c);
	c->base.ops = &client_call_ops;
	c->pool = p;
	c->h = handler;
	c->arg = arg;
	c->state = CALL_QUEUED;
	p->calls++;
	p->busy++;
	/* Held as if in a callback, so that a call that ends before this
	   returns keeps its slot until then and NULL can be returned. */
	c->in_callback = 1;
	const char *why = NULL;
	char msg[160];
	if (p->destroyed) {
		fail_at_once(c, IG_CLIENT_ABORTED, "the dispatcher has been destroyed");
	} else if (call_init(c, opts, &why) != 0) {
		fail_at_once(c, IG_CLIENT_BAD_REQUEST, why);
	} else if (opts->origin.len && !p->agent && !same_origin(p, opts->origin)) {
		snprintf(msg, sizeof msg, "the origin %.*s is not this client's (%.*s)", (int)opts->origin.len,
			 opts->origin.ptr, (int)p->url.origin.len, p->url.origin.ptr);
		fail_at_once(c, IG_CLIENT_BAD_REQUEST, msg);
	} else if (p->queued >= p->opts.max_queued) {
		snprintf(msg, sizeof msg, "%u calls already wait for a connection to %.*s", p->queued,
			 (int)p->url.origin.len, p->url.origin.ptr);
		fail_at_once(c, IG_CLIENT_BUSY, msg);
	} else {
		c->connect_ms = opts->connect_timeout_ms ? opts->connect_timeout_ms : p->opts.connect_timeout_ms;
		c->headers_ms = opts->headers_timeout_ms ? opts->headers_timeout_ms : p->opts.headers_timeout_ms;
		c->body_ms = opts->body_timeout_ms ? opts->body_timeout_ms : p->opts.body_timeout_ms;
		queue_push(p, c);
		pool_drive(p);
	}
	c->in_callback = 0;
	ig_call *ret = &c->base;
	if (c->state == CALL_DONE) {
		call_free(c);
		ret = NULL;
	}
	p->busy--;
	pool_settle(p);
	return ret;
}

/* ---- destroy ---- */

static void pool_destroy(ig_dispatcher *d)
{
	struct client_pool *p = (struct client_pool *)d;
	if (p->destroyed)
		return;
	p->destroyed = true;
	p->busy++;
	pool_fail_queued(p, IG_CLIENT_ABORTED, "the dispatcher was destroyed");
	for (struct client_conn *k = p->conns, *next; k; k = next) {
		next = k->next;
		/* A busy one finishes what it has in flight and then closes:
		   conn_can_take and conn_complete look at p->destroyed. */
		if (!k->head)
			conn_close_idle(k);
	}
	p->busy--;
	pool_settle(p);
}

void pool_settle(struct client_pool *p)
{
	if (p->busy || p->driving || p->conns || p->closing || p->queue || p->calls)
		return;
	/* An agent's pool goes once it has nothing: the agent makes it again
	   on the origin's next call. */
	if (!p->destroyed && !p->agent)
		return;
	struct client_agent *a = p->agent;
	struct client_core *core = p->core;
	p->destroyed = true;
	ig_pool_give(&core->pools, p);
	if (a)
		agent_pool_gone(a, p);
}

static const struct ig_dispatcher_ops pool_ops = {
	.dispatch = pool_dispatch,
	.destroy = pool_destroy,
};

/* ---- Client and Pool ---- */

static ig_dispatcher *new_pool(struct ig_loop *loop, const char *origin, const ig_client_opts *opts,
			       bool single)
{
	struct ig_url url;
	if (!origin || ig_url_parse_origin(origin, strlen(origin), &url) != 0) {
		errno = EINVAL;
		return NULL;
	}
	struct client_core *core = client_core_of(loop);
	if (!core) {
		errno = ENOMEM;
		return NULL;
	}
	ig_client_opts o = opts ? *opts : (ig_client_opts){ 0 };
	if (single)
		o.connections = 1;
	struct client_pool *p = pool_new(core, &url, &o, NULL);
	return p ? &p->d : NULL;
}

ig_dispatcher *ig_client_new(struct ig_loop *loop, const char *origin, const ig_client_opts *opts)
{
	return new_pool(loop, origin, opts, true);
}

ig_dispatcher *ig_pool_new(struct ig_loop *loop, const char *origin, const ig_client_opts *opts)
{
	return new_pool(loop, origin, opts, false);
}
