/* A handler that waits (include/ingot/http.h, "waiting"): the coroutine an
 * exchange's handler runs on, from its core's pool (a loop slot), the
 * callback-form calls the handler started and waits for, and what a
 * cancelled exchange does. net/api runs every handler through
 * ig_wait_run; the linear calls (ig_sleep and ig_wait_all here, net/pg's,
 * net/client's) are built on the call records below. On the exchange's
 * core only. */
#ifndef NET_HTTP_WAIT_H
#define NET_HTTP_WAIT_H

#include "ingot/http.h"
#include "kernel/runtime/coro.h"

/* What ig_wait_run runs, in ctx's arena (the caller's, which may embed
 * it): handle(ctx, in, out) as the generated handlers take them, its
 * name (the operationId, which a crash's line names; may be NULL), its
 * status, and finish(ctx, work), called when a handler that waited has
 * returned. */
struct ig_wait_work {
	int (*handle)(ig_ctx *ctx, const void *in, void *out);
	const char *name;
	const void *in;
	void *out;
	ig_ctx_fn *finish;
	int status;
};

/* Runs work->handle on a coroutine of ctx's core. Returns: 1 when it has
 * returned (work->status set) and nothing it started is still running:
 * the caller finishes the exchange now, as for a handler that never
 * waited; 0 when it waits, or returned with calls still running:
 * work->finish(ctx, work) runs once it has returned and they have all
 * completed, on the loop (never inside a call of the caller's); -1 when
 * no coroutine could be had (the core's INGOT_MAX_WAITING are alive, or no
 * stack could be mapped): nothing ran, and the refusal is counted. */
IG_MUST_USE int ig_wait_run(ig_ctx *ctx, struct ig_wait_work *work);

/* The exchange was cancelled (its client left, or the drain cut it): a
 * waiting handler is resumed, after the loop's current batch, to return
 * IG_WAIT_CANCELLED; calls that can end early (ops->cancel) are ended.
 * Its answer reaches nobody, so a 5xx is no failure to log (no "server
 * error" line). net/http's own upcall (ig_http_ctx_cancel). */
void ig_wait_cancel(ig_ctx *ctx);

/* ---- calls: what a linear call waits on ---- */

struct ig_wait_call;
struct ig_wait_call_ops {
	/* ig_wait_all, for a call started without waiting (grouped): puts
	   its outcome where the handler asked for it, on the handler's
	   stack: the completed one's, or "cancelled" if it has not completed
	   (call->done false; the exchange was cancelled) */
	void (*collect)(struct ig_wait_call *call);
	/* NULL, or ends the call early (an outbound call's abort: its
	   completion may run inside); when the exchange is cancelled, or when
	   the handler returned without waiting for it */
	void (*cancel)(struct ig_wait_call *call);
};

/* The head of every call's record, in the exchange's arena: it lives
 * until the exchange ends, so a completion may always write its record
 * (never the handler's stack, which a cancelled handler has left). */
struct ig_wait_call {
	ig_ctx *ctx;
	const struct ig_wait_call_ops *ops;
	struct ig_wait_call *next_grouped;  /* since the last ig_wait_all */
	struct ig_wait_call *next_cancel;   /* calls with ops->cancel */
	bool done;
	bool grouped;
};

/* The ops of a call made ungrouped, with nothing to collect or cancel: a
 * stream's wait for room. */
extern const struct ig_wait_call_ops ig_wait_plain_ops;

/* Whether the caller is ctx's handler, on its coroutine: where the linear
 * calls may wait. */
IG_NONNULL(1) bool ig_wait_in_handler(const ig_ctx *ctx);

/* A call's record of size bytes (struct ig_wait_call first) in ctx's
 * arena, counted as running until ig_wait_call_done. Only its header is
 * set: the rest is the caller's to set (a batch of queries makes a record
 * each, and clearing what the caller then writes cost a memset per query).
 * grouped: started without waiting (ig_wait_all waits for it). From ctx's
 * handler, or from a completion of one of ctx's calls (a transaction's
 * rollback). Returns: NULL when the arena is full. */
IG_MUST_USE IG_NONNULL(1, 3) void *ig_wait_call_new(ig_ctx *ctx, size_t size, const struct ig_wait_call_ops *ops,
						    bool grouped);

/* The call has completed (its outcome is in its record): the handler
 * waiting for it is resumed, after the loop's batch; the exchange may end
 * then. Once: from the call's completion, wherever that runs (the call's
 * start included). */
IG_NONNULL(1) void ig_wait_call_done(struct ig_wait_call *call);

/* Counts call, done, as running again, so that a handler that waits on
 * the same event over and over (room in a stream's window) waits on one
 * record rather than one more in its arena each time. For a call made
 * ungrouped and without ops->cancel, once it is done. */
IG_NONNULL(1) void ig_wait_call_again(struct ig_wait_call *call);

/* From ctx's handler: waits until call is done. Returns: IG_WAIT_OK; or
 * IG_WAIT_CANCELLED when the exchange is cancelled (then or before; the
 * call may still be running, and its record stays the exchange's). */
IG_MUST_USE IG_NONNULL(1) enum ig_wait_result ig_wait_for(struct ig_wait_call *call);

/* Whether ctx's waiting calls return cancelled (ig_wait_cancel has run). */
IG_NONNULL(1) bool ig_wait_cancelled(const ig_ctx *ctx);

/* ---- hooks: what a part does when the handler returns ---- */

/* In the exchange's arena, registered by a part with state on the exchange
 * (net/pg's open transaction). on_return runs once, on the loop, when the
 * handler has returned (also after a cancel); it may start calls
 * (ig_wait_call_new), which the exchange's end waits for. */
struct ig_wait_hook;
typedef void ig_wait_hook_fn(struct ig_wait_hook *hook, ig_ctx *ctx);
struct ig_wait_hook {
	struct ig_wait_hook *next;
	ig_wait_hook_fn *on_return;
};
/* Registers hook (on_return set) for ctx's handler. Returns: false when
 * the arena is full (nothing registered). */
IG_MUST_USE IG_NONNULL(1, 2) bool ig_wait_hook_add(ig_ctx *ctx, struct ig_wait_hook *hook);
/* ctx's hook whose on_return is fn, or NULL. */
IG_NONNULL(1, 2) struct ig_wait_hook *ig_wait_hook_find(ig_ctx *ctx, ig_wait_hook_fn *fn);

/* ---- the drain's end ---- */

struct ig_loop;
/* A core whose drain has closed its last connection: its parked runner
 * ends and its pool's idle stacks are unmapped (ig_coro_pool_trim), so a
 * drained core holds no stack; a later handler maps one again. Nothing
 * before the core's first handler. On the loop's thread. */
void ig_wait_release(struct ig_loop *loop);
/* The core's pool, or NULL before its first handler (tests, metrics). */
const struct ig_coro_pool *ig_wait_pool(struct ig_loop *loop);

/* ---- settings ---- */

/* INGOT_MAX_WAITING's default for cores cores: what keeps the process's
 * mappings under vm.max_map_count (65,530 by default; two a stack, the
 * guard page's and the stack's), leaving room for the rest. */
uint32_t ig_wait_default_cap(uint32_t cores);

#endif
