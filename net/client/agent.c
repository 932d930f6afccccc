/* The Agent: a pool per origin (scheme, host, port) on one core, made on
 * the origin's first call and let go when its last connection has closed
 * and nothing waits; each pool has the agent's options, so `connections`
 * is a limit per origin and keep_alive_ms expires idle connections. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>

/* A destroyed agent is freed after the batch in which its last pool went. */
static void agent_release(struct ig_deferred *d)
{
	struct client_agent *a = (struct client_agent *)((char *)d - offsetof(struct client_agent, release));
	ig_pool_give(&a->core->agents, a);
}

static void agent_settle(struct client_agent *a)
{
	if (a->destroyed && !a->pool_count)
		ig_loop_defer(a->core->loop, &a->release);
}

/* A pool of the agent has nothing left and is being freed. */
static void agent_pool_gone(void *owner, struct client_pool *p)
{
	struct client_agent *a = owner;
	struct client_pool **pp = &a->pools;
	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	a->pool_count--;
	agent_settle(a);
}

static const struct pool_owner_ops agent_pool_ops = { .gone = agent_pool_gone };

/* The pool for origin: a byte match first (ig_fetch passes the normalised
 * origin), then by the parsed origin; made if there is none. */
static struct client_pool *agent_pool(struct client_agent *a, ig_str origin, const char **why)
{
	struct client_pool *p, **pp;
	for (pp = &a->pools; (p = *pp); pp = &p->next)
		if (ig_str_eq(origin, p->o.url.origin.ptr, p->o.url.origin.len))
			goto found;
	struct ig_url url;
	if (!origin.len || ig_url_parse_origin(origin.ptr, origin.len, &url) != 0) {
		*why = "the origin is not an http:// or https:// origin";
		return NULL;
	}
	for (pp = &a->pools; (p = *pp); pp = &p->next)
		if (ig_url_same_origin(&url, &p->o.url))
			goto found;
	p = ig_client_pool_new(a->core, &url, &a->opts, &agent_pool_ops, a);
	if (!p) {
		*why = "out of pool slots on this core";
		return NULL;
	}
	p->next = a->pools;
	a->pools = p;
	a->pool_count++;
	return p;
found:
	*pp = p->next; /* to the front */
	p->next = a->pools;
	a->pools = p;
	return p;
}

static ig_call *agent_dispatch(ig_dispatcher *d, const ig_dispatch_opts *opts,
			       const ig_dispatch_handler *handler, void *arg)
{
	struct client_agent *a = (struct client_agent *)d;
	if (a->destroyed) {
		ig_call_fail_now(handler, arg, IG_CLIENT_ABORTED, "the agent has been destroyed");
		return NULL;
	}
	const char *why = NULL;
	struct client_pool *p = agent_pool(a, opts->origin, &why);
	if (!p) {
		char msg[160];
		snprintf(msg, sizeof msg, "%s: \"%.*s\"", why, (int)(opts->origin.len > 100 ? 100 : opts->origin.len),
			 opts->origin.ptr ? opts->origin.ptr : "");
		ig_call_fail_now(handler, arg, IG_CLIENT_BAD_REQUEST, msg);
		return NULL;
	}
	return ig_pool_dispatch(&p->d, opts, handler, arg);
}

static void agent_destroy(ig_dispatcher *d)
{
	struct client_agent *a = (struct client_agent *)d;
	if (a->destroyed)
		return;
	a->destroyed = true;
	for (struct client_pool *p = a->pools, *next; p; p = next) {
		next = p->next;
		p->d.ops->destroy(&p->d);
	}
	agent_settle(a);
}

static const struct ig_dispatcher_ops agent_ops = {
	.dispatch = agent_dispatch,
	.destroy = agent_destroy,
};

ig_dispatcher *ig_agent_new(struct ig_loop *loop, const ig_client_opts *opts)
{
	struct client_core *core = ig_client_core_of(loop);
	struct client_agent *a = core ? ig_pool_take(&core->agents) : NULL;
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	*a = (struct client_agent){ .core = core, .release.fn = agent_release };
	ig_client_opts_resolve(&a->opts, opts);
	a->d.ops = &agent_ops;
	a->d.loop = loop;
	a->d.max_body_bytes = a->opts.max_body_bytes;
	return &a->d;
}
