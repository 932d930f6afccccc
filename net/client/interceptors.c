/* What the interceptors (retry.c, redirect.c) and the mock agent (mock.c)
 * share: finding a response header by name, the call that stands for one
 * that ended before it had any state, the lifetime of their call states,
 * and the interceptors' plumbing around their inner calls (internal.h). */
#include "ingot/client_interceptors.h"
#include "kernel/runtime/list.h"
#include "net/client/internal.h"

#include <stdlib.h>
#include <strings.h>

const ig_str *ig_header_find(const ig_header *headers, size_t count, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < count; i++)
		if (headers[i].name.len == n && strncasecmp(headers[i].name.ptr, name, n) == 0)
			return &headers[i].value;
	return NULL;
}

static void ended_call_noop(ig_call *call)
{
	(void)call;
}

static const struct ig_call_ops ended_call_ops = { .abort = ended_call_noop, .resume = ended_call_noop };

ig_call ig_ended_call = { .ops = &ended_call_ops };

/* ---- call states (internal.h) ---- */

void *ig_wrap_call_take(struct wrap_slots *s)
{
	if (!s->ready) {
		ig_pool_init(&s->pool, s->size, s->chunk_objs, s->max_objs);
		s->ready = true;
	}
	return ig_pool_take(&s->pool);
}

static void wrap_call_release(struct ig_deferred *d);

void ig_wrap_call_link(struct wrap_owner *o, struct wrap_slots *s, struct wrap_call *w)
{
	w->owner = o;
	w->release = (struct ig_deferred){ .fn = wrap_call_release };
	w->slots = s;
	IG_DLIST_PUSH(o->calls, w);
	o->live++;
}

/* After the batch in which the caller had its last callback. */
static void wrap_call_release(struct ig_deferred *d)
{
	struct wrap_call *w = (struct wrap_call *)((char *)d - offsetof(struct wrap_call, release));
	struct wrap_owner *o = w->owner;
	IG_DLIST_REMOVE(o->calls, w);
	ig_pool_give(&w->slots->pool, w);
	if (--o->live == 0 && o->destroying)
		o->free(o);
}

void ig_wrap_call_ended(struct wrap_call *w)
{
	ig_loop_defer(w->owner->d.loop, &w->release);
}

void ig_wrap_destroy_begin(struct wrap_owner *o)
{
	o->destroying = true;
}

/* With no state left, nothing of ours can be using o: the states of calls
 * ended inside the destroy are only released after the batch. */
void ig_wrap_destroy_end(struct wrap_owner *o)
{
	if (o->live == 0)
		o->free(o);
}

/* ---- an interceptor's call (internal.h) ---- */

/* The totals the caller sees: the interceptor's, those of ended inner
 * calls, and the running inner call's. */
static void sync_counts(struct wrap_fwd *c, const ig_call *inner)
{
	c->w.call.retries = c->retries + c->done_retries + (inner ? inner->retries : 0);
	c->w.call.redirects = c->redirects + c->done_redirects + (inner ? inner->redirects : 0);
}

static void inner_ended(struct wrap_fwd *c, const ig_call *inner)
{
	c->inner_live = false;
	c->done_retries += inner->retries;
	c->done_redirects += inner->redirects;
}

void ig_wrap_fwd_end_with_error(struct wrap_fwd *c, enum ig_client_error error, const char *message)
{
	if (c->state == WRAP_WAIT && c->kind->cancel_wait)
		c->kind->cancel_wait(c);
	c->state = WRAP_ENDED;
	ig_wrap_call_ended(&c->w);
	sync_counts(c, NULL);
	if (c->h->on_error)
		c->h->on_error(&c->w.call, error, message, c->arg);
}

static const ig_dispatch_handler fwd_handler;

void ig_wrap_fwd_start(struct wrap_fwd *c, ig_dispatcher *inner_dispatcher)
{
	c->state = WRAP_TRY;
	c->inner_live = true;
	c->inner = NULL; /* not the last inner call's: known once dispatch returns */
	c->drained = 0;
	ig_call *inner = ig_dispatch(inner_dispatcher, &c->opts, &fwd_handler, c);
	if (c->inner_live) {
		c->inner = inner;
		if (c->aborting) /* asked while the dispatch ran */
			ig_call_abort(inner);
	}
}

/* -- the inner call's callbacks -- */

static void inner_on_connect(ig_call *inner, void *arg)
{
	struct wrap_fwd *c = arg;
	c->inner = inner;
	if (c->aborting) {
		ig_call_abort(inner); /* asked before the inner call was known */
		return;
	}
	if (c->state != WRAP_TRY || c->connected || !c->h->on_connect)
		return;
	c->connected = true;
	sync_counts(c, inner);
	c->h->on_connect(&c->w.call, c->arg);
}

static bool inner_on_headers(ig_call *inner, int status, const ig_header *headers, size_t count, void *arg)
{
	struct wrap_fwd *c = arg;
	c->inner = inner;
	if (c->aborting) {
		ig_call_abort(inner); /* asked before the inner call was known */
		return false;
	}
	if (c->state != WRAP_TRY)
		return true;
	if (c->kind->drop(c, status, headers, count)) {
		c->state = WRAP_DRAIN;
		return true; /* read the body to its end, and drop it */
	}
	c->state = WRAP_PASS;
	if (!c->h->on_headers)
		return true;
	sync_counts(c, inner);
	bool more = c->h->on_headers(&c->w.call, status, headers, count, c->arg);
	bool ended = c->state == WRAP_ENDED;
	return more && !ended;
}

static bool inner_on_data(ig_call *inner, const char *data, size_t len, void *arg)
{
	struct wrap_fwd *c = arg;
	if (c->state == WRAP_DRAIN) {
		c->drained += len;
		if (c->drained <= WRAP_DRAIN_MAX)
			return true;
		/* Enough dropped: its on_error (WRAP_DRAIN) lets the kind go on. */
		ig_call_abort(inner);
		return false;
	}
	if (c->state != WRAP_PASS || !c->h->on_data)
		return true;
	sync_counts(c, inner);
	bool more = c->h->on_data(&c->w.call, data, len, c->arg);
	bool ended = c->state == WRAP_ENDED;
	return more && !ended;
}

static void inner_on_complete(ig_call *inner, void *arg)
{
	struct wrap_fwd *c = arg;
	inner_ended(c, inner);
	if (c->state == WRAP_DRAIN) {
		c->kind->dropped(c);
	} else if (c->state == WRAP_PASS) {
		c->state = WRAP_ENDED;
		ig_wrap_call_ended(&c->w);
		sync_counts(c, NULL);
		if (c->h->on_complete)
			c->h->on_complete(&c->w.call, c->arg);
	}
}

static void inner_on_error(ig_call *inner, enum ig_client_error error, const char *message, void *arg)
{
	struct wrap_fwd *c = arg;
	inner_ended(c, inner);
	if (c->aborting)
		ig_wrap_fwd_end_with_error(c, IG_CLIENT_ABORTED, message);
	else if (!c->kind->failed(c, error, message) && c->state != WRAP_ENDED)
		ig_wrap_fwd_end_with_error(c, error, message);
}

static const ig_dispatch_handler fwd_handler = {
	.on_connect = inner_on_connect,
	.on_headers = inner_on_headers,
	.on_data = inner_on_data,
	.on_complete = inner_on_complete,
	.on_error = inner_on_error,
};

/* -- the caller's side -- */

static void fwd_call_abort(ig_call *call)
{
	struct wrap_fwd *c = (struct wrap_fwd *)call;
	if (c->state == WRAP_ENDED)
		return;
	c->aborting = true;
	if (!c->inner_live)
		ig_wrap_fwd_end_with_error(c, IG_CLIENT_ABORTED, "aborted");
	else if (c->inner)
		ig_call_abort(c->inner); /* its on_error ends ours */
	/* else it is being dispatched: ig_wrap_fwd_start or its first callback
	   aborts it once it is known. */
}

static void fwd_call_resume(ig_call *call)
{
	struct wrap_fwd *c = (struct wrap_fwd *)call;
	if (c->state == WRAP_PASS && c->inner_live)
		ig_call_resume(c->inner);
}

static const struct ig_call_ops fwd_call_ops = {
	.abort = fwd_call_abort,
	.resume = fwd_call_resume,
};

void *ig_wrap_fwd_take(struct wrap_owner *o, struct wrap_slots *s, const struct wrap_fwd_kind *kind,
		    const ig_dispatch_handler *h, void *arg)
{
	if (o->destroying) {
		if (h->on_error)
			h->on_error(&ig_ended_call, IG_CLIENT_ABORTED, kind->destroyed_message, arg);
		return NULL;
	}
	void *c = ig_wrap_call_take(s);
	if (!c && h->on_error)
		h->on_error(&ig_ended_call, IG_CLIENT_BUSY, kind->busy_message, arg);
	return c;
}

ig_call *ig_wrap_fwd_begin(struct wrap_fwd *c, struct wrap_owner *o, struct wrap_slots *s,
			const struct wrap_fwd_kind *kind, ig_dispatcher *inner, const ig_dispatch_opts *opts,
			const ig_dispatch_handler *h, void *arg)
{
	*c = (struct wrap_fwd){
		.w = { .call = { .ops = &fwd_call_ops } }, .kind = kind, .opts = *opts, .h = h, .arg = arg
	};
	ig_wrap_call_link(o, s, &c->w);
	ig_wrap_fwd_start(c, inner);
	bool ended = c->state == WRAP_ENDED;
	return ended ? NULL : &c->w.call;
}

static void fwd_owner_free(struct wrap_owner *o)
{
	free(o);
}

void ig_wrap_fwd_owner_init(struct wrap_owner *o, const struct ig_dispatcher_ops *ops, ig_dispatcher *inner)
{
	o->d = (ig_dispatcher){ .ops = ops, .loop = inner->loop, .max_body_bytes = inner->max_body_bytes };
	o->free = fwd_owner_free;
}

void ig_wrap_fwd_destroy_end(struct wrap_owner *o, ig_dispatcher **inner)
{
	ig_dispatcher *d = *inner;
	*inner = NULL;
	d->ops->destroy(d);
	ig_wrap_destroy_end(o);
}
