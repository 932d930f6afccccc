/* The client's linear calls (client.h): ig_fetch_wait and ig_fetch_send,
 * ig_fetch underneath with a record in the request's arena
 * (net/http/wait.h) that its completion fills. A call is aborted when the
 * request is cancelled or its handler returns without waiting for it, so
 * nothing reads the handler's stack (opts) once the handler has left. */
#include "ingot/client.h"
#include "net/http/wait.h"

struct fetch_wait {
	struct ig_wait_call call;
	ig_response res;  /* the outcome, copied (ig_fetch's may be static) */
	ig_call *running; /* for the abort; NULL once ended */
};

/* When no record can be had (the arena is full, or not a handler's call):
 * the thread's, valid until the next such failure. */
static _Thread_local ig_response no_record;

static ig_response *failed(enum ig_client_error error, const char *message)
{
	no_record = (ig_response){ .error = error, .error_message = message };
	return &no_record;
}

static void cancelled(ig_response *res)
{
	*res = (ig_response){ .error = IG_CLIENT_CANCELLED, .error_message = "the request was cancelled" };
}

static void on_response(ig_response *res, void *arg)
{
	struct fetch_wait *f = arg;
	f->res = *res;
	f->running = NULL;
	ig_wait_call_done(&f->call);
}

static void abort_call(struct ig_wait_call *c)
{
	struct fetch_wait *f = (struct fetch_wait *)c;
	if (f->running)
		ig_call_abort(f->running); /* on_response runs inside */
}

static void collect(struct ig_wait_call *c)
{
	struct fetch_wait *f = (struct fetch_wait *)c;
	/* A call that ended before the cancel keeps its outcome; one the
	   cancel aborted says so. */
	if (!c->done || (ig_wait_cancelled(c->ctx) && f->res.error == IG_CLIENT_ABORTED))
		cancelled(&f->res);
}

static const struct ig_wait_call_ops waited_ops = { .cancel = abort_call };
static const struct ig_wait_call_ops grouped_ops = { .collect = collect, .cancel = abort_call };

static struct fetch_wait *start(ig_ctx *ctx, ig_dispatcher *d, const ig_fetch_opts *opts, bool grouped)
{
	if (!ig_wait_in_handler(ctx) || ig_wait_cancelled(ctx))
		return NULL;
	struct fetch_wait *f = ig_wait_call_new(ctx, sizeof *f, grouped ? &grouped_ops : &waited_ops, grouped);
	if (!f)
		return NULL;
	f->running = NULL;
	ig_call *call = ig_fetch(d, ig_ctx_arena(ctx), opts, on_response, f);
	if (!f->call.done) /* else it ended inside */
		f->running = call;
	return f;
}

/* Why start gave no record. */
static ig_response *not_started(ig_ctx *ctx)
{
	if (!ig_wait_in_handler(ctx))
		return failed(IG_CLIENT_CANCELLED, "a linear call outside its handler's coroutine");
	if (ig_wait_cancelled(ctx))
		return failed(IG_CLIENT_CANCELLED, "the request was cancelled");
	return failed(IG_CLIENT_TOO_LARGE, "out of request memory");
}

ig_response *ig_fetch_wait(ig_ctx *ctx, ig_dispatcher *d, const ig_fetch_opts *opts)
{
	struct fetch_wait *f = start(ctx, d, opts, false);
	if (!f)
		return not_started(ctx);
	if (ig_wait_for(&f->call) != IG_WAIT_OK)
		cancelled(&f->res);
	return &f->res;
}

ig_response *ig_fetch_send(ig_ctx *ctx, ig_dispatcher *d, const ig_fetch_opts *opts)
{
	struct fetch_wait *f = start(ctx, d, opts, true);
	return f ? &f->res : not_started(ctx);
}
