/* Tasks (task.h): an exchange with no connection whose answer goes to its
 * starter through the stream upcall an exchange already has (hand_off in
 * exchange.c calls stream->ops->finished for an exchange without a
 * connection). */
#include "task.h"
#include "kernel/runtime/list.h"

#include <stddef.h>

static void report(struct ig_deferred *d)
{
	struct http_task *t = (struct http_task *)((char *)d - offsetof(struct http_task, report));
	struct ig_ctx *x = t->ctx;
	struct http_core *core = t->core;
	t->ctx = NULL;
	t->done(t, x); /* may start t again */
	ig_http_ctx_free(x);
	core->count--;
	ig_http_core_left(core);
}

/* ig_finish's hand_off: the answer is whole. It is reported after the
 * batch, outside whatever call finished it. */
static void finished(struct http_stream *s, struct ig_ctx *x)
{
	struct http_task *t = (struct http_task *)s;
	x->state = CTX_READY; /* a second ig_finish hands nothing off again */
	IG_DLIST_REMOVE(t->core->tasks, t);
	t->report.fn = report;
	ig_loop_defer(&x->core->loop, &t->report);
}

/* Only finished: the others are a connection's, and a task has none. */
static const struct http_stream_ops task_ops = { .finished = finished };

struct ig_ctx *ig_http_task_begin(struct http_task *t, struct http_core *core, const struct http_request *r,
				  ig_str body, http_task_done_fn *done)
{
	if (core->draining)
		return NULL;
	struct ig_ctx *x = ig_http_ctx_new(core, NULL);
	if (!x)
		return NULL;
	*t = (struct http_task){ .stream = { .ops = &task_ops }, .core = core, .ctx = x, .done = done };
	x->stream = &t->stream;
	x->task = true;
	ig_http_ctx_set_request(x, r, body.ptr, body.len);
	IG_DLIST_PUSH(core->tasks, t);
	core->count++;
	core->requests++; /* work, for the idle exit and the stopped line */
	return x;
}
