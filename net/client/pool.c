/* A pool: the connections to one origin on one core, and the queue of
 * calls waiting for one. A Client (ig_client_new) is a pool of one
 * connection. A call goes to the first connection that can take it
 * (ig_conn_can_take: the pipelining depth, and a call that is not idempotent
 * only on an empty connection), in an order that puts the connection that
 * most recently finished a response first, so the search is short and warm
 * connections are reused while the others expire; if none can, a new
 * connection opens while the pool is under its limit; otherwise the call
 * waits in the queue (up to max_queued) for a connection to free up.
 * Its connections tell it what happens to them through conn_events; a
 * call's slot comes back through call_release, after the batch in which
 * the call ended. */
#include "internal.h"
#include "kernel/runtime/clock.h"
#include "kernel/runtime/list.h"
#include "net/tls/tls.h"

#include <errno.h>
#include <stdio.h>

static const struct ig_dispatcher_ops pool_ops;
static const struct conn_owner_ops conn_events;
static const struct call_holder_ops queue_holder;
static void pool_release(struct ig_deferred *d);
static void pool_settle(struct client_pool *p);

struct client_pool *ig_client_pool_new(struct client_core *core, const struct ig_url *origin,
			     const ig_client_opts *opts, const struct pool_owner_ops *owner_ops, void *owner)
{
	struct client_pool *p = ig_pool_take(&core->pools);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	memset(p, 0, sizeof *p);
	/* Parsed again into the pool's own struct: an ig_url's slices point
	   into its own buffer. */
	struct client_origin *o = &p->o;
	if (ig_url_parse_origin(origin->origin.ptr, origin->origin.len, &o->url) != 0) {
		ig_pool_give(&core->pools, p);
		errno = EINVAL;
		return NULL;
	}
	memcpy(o->host, o->url.host.ptr, o->url.host.len);
	o->host[o->url.host.len] = 0;
	o->core = core;
	o->metrics_origin = ig_client_metrics_origin(core, o->host, o->url.port);
	p->owner_ops = owner_ops;
	p->owner = owner;
	ig_client_opts_resolve(&o->opts, opts);
	/* The status line is bounded by the head's limit. */
	o->limits = (struct http_limits){ .max_request_line = o->opts.max_header_bytes,
					  .max_header_bytes = o->opts.max_header_bytes,
					  .max_headers = o->opts.max_headers };
	p->release.fn = pool_release;
	p->d.ops = &pool_ops;
	p->d.loop = core->loop;
	p->d.max_body_bytes = o->opts.max_body_bytes;
	return p;
}

/* ---- the queue ---- */

static void queue_push(struct client_pool *p, struct client_call *c)
{
	c->state = CALL_QUEUED;
	c->holder_ops = &queue_holder;
	c->holder = p;
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

static void pool_unqueue(struct client_pool *p, struct client_call *c)
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

/* Fails every queued call with error (pool destroyed, origin unreachable). */
static void pool_fail_queued(struct client_pool *p, enum ig_client_error error, const char *message)
{
	while (p->queue)
		ig_call_end(queue_pop(p), error, message);
}

/* The caller aborted a queued call. */
static void queue_abort(void *holder, struct client_call *c)
{
	pool_unqueue(holder, c);
	ig_call_end(c, IG_CLIENT_ABORTED, "the call was aborted");
}

static const struct call_holder_ops queue_holder = { .abort = queue_abort };

/* After the batch in which a call of p ended. */
static void call_release(struct ig_deferred *d)
{
	struct client_call *c = (struct client_call *)((char *)d - offsetof(struct client_call, release));
	struct client_pool *p = (struct client_pool *)((char *)c->origin - offsetof(struct client_pool, o));
	ig_pool_give(&p->o.core->calls, c);
	p->calls--;
	pool_settle(p);
}

/* ---- connections: what they tell the pool (conn_owner_ops) ---- */

static void pool_drive(struct client_pool *p);

static void conns_push(struct client_pool *p, struct client_conn *k)
{
	IG_DLIST_PUSH(p->conns, k);
}

static void conns_unlink(struct client_pool *p, struct client_conn *k)
{
	IG_DLIST_REMOVE(p->conns, k);
	k->next = k->prev = NULL;
}

/* A connection finished a response and can take more: first in the list. */
static void conn_ready(void *owner, struct client_conn *k)
{
	struct client_pool *p = owner;
	if (p->conns != k) {
		conns_unlink(p, k);
		conns_push(p, k);
	}
}

static void conn_closed(void *owner, struct client_conn *k)
{
	struct client_pool *p = owner;
	conns_unlink(p, k);
	p->conn_count--;
	p->closing++;
	pool_drive(p); /* the queue may use the freed connection slot */
}

/* Calls a connection will not send go back to the front of the queue, in
 * their order (a list linked by next). */
static void conn_requeue(void *owner, struct client_call *first)
{
	struct client_pool *p = owner;
	struct client_call *last = first;
	uint32_t n = 0;
	for (struct client_call *c = first; c; c = c->next) {
		c->holder_ops = &queue_holder;
		c->holder = p;
		last = c;
		n++;
	}
	last->next = p->queue;
	if (!p->queue)
		p->queue_tail = last;
	p->queue = first;
	p->queued += n;
}

static void conn_drive(void *owner)
{
	pool_drive(owner);
}

static void conn_released(void *owner, struct client_conn *k)
{
	(void)k;
	struct client_pool *p = owner;
	p->closing--;
	pool_settle(p);
}

static const struct conn_owner_ops conn_events = {
	.ready = conn_ready,
	.closed = conn_closed,
	.requeue = conn_requeue,
	.drive = conn_drive,
	.released = conn_released,
};

/* A new connection for c, first in the list. */
static struct client_conn *open_conn(struct client_pool *p, const struct client_call *c)
{
	struct client_conn *k = ig_conn_open(&p->o, &conn_events, p, c->connect_ms);
	if (k) {
		conns_push(p, k);
		p->conn_count++;
	}
	return k;
}

static struct client_conn *pick(struct client_pool *p, const struct client_call *c)
{
	for (struct client_conn *k = p->conns; k; k = k->next)
		if (ig_conn_can_take(k, c))
			return k;
	return NULL;
}

/* Assigns queued calls to connections, opening new ones up to the limit.
 * A callback inside may drive again: the walk under way goes round once
 * more instead. */
static void pool_drive(struct client_pool *p)
{
	if (p->driving) {
		p->drive_again = true; /* the outer loop goes round again */
		return;
	}
	p->driving = true;
	do {
		p->drive_again = false;
		while (p->queue && !p->destroyed) {
			struct client_call *c = p->queue;
			struct client_conn *k = pick(p, c);
			bool fresh = false;
			if (!k) {
				if (p->conn_count >= p->o.opts.connections)
					break;
				k = open_conn(p, c);
				if (!k && p->conn_count)
					break; /* ours drive the queue again as they free up */
				if (!k) {
					/* Nothing of ours would ever come back to it. */
					ig_call_end(queue_pop(p), IG_CLIENT_BUSY, "out of connection slots on this core");
					continue;
				}
				fresh = true;
			}
			ig_conn_take(k, queue_pop(p));
			if (fresh)
				ig_conn_start(k);
		}
		/* Calls put back by a connection of a destroyed pool (it broke,
		   or the upstream closed with calls behind): no connection will
		   take them again. */
		if (p->destroyed && p->queue)
			pool_fail_queued(p, IG_CLIENT_ABORTED, "the dispatcher was destroyed");
	} while (p->drive_again);
	p->driving = false;
	pool_settle(p);
}

/* ---- dispatch ---- */

static bool same_origin(const struct client_pool *p, ig_str origin)
{
	if (ig_str_eq(origin, p->o.url.origin.ptr, p->o.url.origin.len))
		return true; /* already normalised, as ig_fetch passes it */
	struct ig_url u;
	return ig_url_parse_origin(origin.ptr, origin.len, &u) == 0 && ig_url_same_origin(&u, &p->o.url);
}

ig_call *ig_pool_dispatch(ig_dispatcher *d, const ig_dispatch_opts *opts,
		       const ig_dispatch_handler *handler, void *arg)
{
	struct client_pool *p = (struct client_pool *)d;
	const ig_client_opts *po = &p->o.opts;
	struct client_call *c = ig_pool_take(&p->o.core->calls);
	if (!c) {
		ig_call_fail_now(handler, arg, IG_CLIENT_BUSY, "out of call slots on this core");
		return NULL;
	}
	memset(c, 0, sizeof *c);
	c->base.ops = &ig_client_call_ops;
	c->origin = &p->o;
	c->release.fn = call_release;
	c->h = handler;
	c->arg = arg;
	c->state = CALL_QUEUED;
	c->start_us = ig_monotonic_us();
	p->calls++;
	const char *why = NULL;
	char msg[200];
	if (p->destroyed) {
		ig_call_end(c, IG_CLIENT_ABORTED, "the dispatcher has been destroyed");
	} else if (ig_call_init(c, opts, &why) != 0) {
		ig_call_end(c, IG_CLIENT_BAD_REQUEST, why);
	} else if (opts->origin.len && !p->owner_ops && !same_origin(p, opts->origin)) {
		snprintf(msg, sizeof msg, "the origin %.*s is not this client's (%.*s)", (int)opts->origin.len,
			 opts->origin.ptr, (int)p->o.url.origin.len, p->o.url.origin.ptr);
		ig_call_end(c, IG_CLIENT_BAD_REQUEST, msg);
	} else if (p->o.url.https && !po->trust && !ig_tls_default_trust(&why)) {
		/* Refused before any connection: the build has no TLS
		   (TLS=none), or the anchors did not load. */
		snprintf(msg, sizeof msg, "cannot use %.*s: %s", (int)p->o.url.origin.len, p->o.url.origin.ptr,
			 why);
		ig_call_end(c, IG_CLIENT_TLS, msg);
	} else if (p->queued >= po->max_queued) {
		snprintf(msg, sizeof msg, "%u calls already wait for a connection to %.*s", p->queued,
			 (int)p->o.url.origin.len, p->o.url.origin.ptr);
		ig_call_end(c, IG_CLIENT_BUSY, msg);
	} else {
		c->connect_ms = opts->connect_timeout_ms ? opts->connect_timeout_ms : po->connect_timeout_ms;
		c->headers_ms = opts->headers_timeout_ms ? opts->headers_timeout_ms : po->headers_timeout_ms;
		c->body_ms = opts->body_timeout_ms ? opts->body_timeout_ms : po->body_timeout_ms;
		if (opts->parent)
			ig_call_cap_to_deadline(c, ig_deadline_ms(opts->parent), d->loop->clock.now_ms);
		queue_push(p, c);
		pool_drive(p);
	}
	/* A call that has ended already is still readable: its slot goes
	   back after the batch. */
	return c->state == CALL_DONE ? NULL : &c->base;
}

/* ---- destroy ---- */

static void pool_destroy(ig_dispatcher *d)
{
	struct client_pool *p = (struct client_pool *)d;
	if (p->destroyed)
		return;
	p->destroyed = true;
	pool_fail_queued(p, IG_CLIENT_ABORTED, "the dispatcher was destroyed");
	for (struct client_conn *k = p->conns, *next; k; k = next) {
		next = k->next;
		/* A busy one finishes what it has in flight and then closes. */
		ig_conn_retire(k);
	}
	pool_settle(p);
}

static bool pool_unused(const struct client_pool *p)
{
	/* An agent's pool goes once it has nothing: the agent makes it again
	   on the origin's next call. */
	return !p->conns && !p->closing && !p->queue && !p->calls && (p->destroyed || p->owner_ops);
}

/* Frees p after the batch if it has nothing left by then. */
static void pool_settle(struct client_pool *p)
{
	if (pool_unused(p))
		ig_loop_defer(p->o.core->loop, &p->release);
}

static void pool_release(struct ig_deferred *d)
{
	struct client_pool *p = (struct client_pool *)((char *)d - offsetof(struct client_pool, release));
	if (!pool_unused(p))
		return; /* an agent's pool that took a call since */
	if (p->owner_ops)
		p->owner_ops->gone(p->owner, p);
	ig_pool_give(&p->o.core->pools, p);
}

static const struct ig_dispatcher_ops pool_ops = {
	.dispatch = ig_pool_dispatch,
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
	struct client_core *core = ig_client_core_of(loop);
	if (!core) {
		errno = ENOMEM;
		return NULL;
	}
	ig_client_opts o = opts ? *opts : (ig_client_opts){ 0 };
	if (single)
		o.connections = 1;
	struct client_pool *p = ig_client_pool_new(core, &url, &o, NULL, NULL);
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
