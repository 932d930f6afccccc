/* Handlers that wait (wait.h): each runs on a coroutine from its core's
 * pool (a loop slot, made on the first request), a runner that a handler
 * which never waits leaves parked for the next; a linear call starts a
 * callback-form call whose completion marks its record in the arena, and
 * the handler is resumed from the loop's deferred queue, never inside the
 * call that completed it. The exchange is held (ig_finish answers but does
 * not hand it to the connection) until the handler has returned and every
 * call it started has completed: no completion writes into a freed arena. */
#include "wait.h"
#include "internal.h"
#include "kernel/process/fatal.h"

#include <stdatomic.h>
#include <stdlib.h>

enum waiting { WAIT_NONE, WAIT_CALL, WAIT_GROUP, WAIT_SLEEP };

struct ig_waiter {
	ig_ctx *ctx;
	struct ig_deferred step; /* resumes the handler, or ends the exchange */
	struct ig_wait_call *grouped, **grouped_tail, *cancellable, *awaited;
	struct ig_wait_hook *hooks;
	uint32_t running, grouped_running; /* calls started, not completed */
	enum waiting waiting;
	bool suspended; /* yielded, until the step resumes it */
	bool sleeping;
	bool counted;   /* in meter.handlers_waiting */
	bool cancelled, calls_cancelled;
	bool returned;  /* the handler has returned */
};

static void waiter_step(struct ig_deferred *d);

/* ---- the core's pool, and its parked runner ---- */

/* A core's coroutines. Each runs handlers in a loop (runner_main): one that
 * never waited parks itself at the loop's top as the core's idle runner,
 * so that the next handler costs two switches and no stack set-up; one
 * that waited ends instead, and its stack goes back to the pool (trimmed
 * of what the wait had touched). */
struct wait_core {
	struct ig_coro_pool pool;
	struct ig_coro *idle; /* the parked runner, or NULL */
	ig_ctx *ctx; /* whose work the next resume of a runner takes */
	struct wait_core *all_next;
};
static struct ig_loop_slot coro_slot;
/* The calling thread's (a core is a thread): no allocation on the first
 * request, whose pages would be the allocator's. A second loop on one
 * thread (a test's) takes memory of its own. */
static _Thread_local struct wait_core thread_core;
static _Thread_local bool thread_core_taken;
/* The cores' pools that had to be allocated, for the process's life:
 * reachable for a leak checker after their thread is gone. */
static _Atomic(struct wait_core *) all_wait_cores;

uint32_t ig_wait_default_cap(uint32_t cores)
{
	/* vm.max_map_count's default, less room for everything else the
	   process maps (pools, arenas, the binary, a database's buffers). */
	uint32_t stacks = (65530u - 5530u) / 2u;
	uint32_t per_core = stacks / (cores ? cores : 1);
	return per_core ? per_core : 1;
}

/* Once per core, on its first request: on the request path's pages (hot),
 * so that the first request faults in no other block (net/cold.ld). */
IG_HOT __attribute__((noinline)) static struct wait_core *make_core(ig_ctx *x)
{
	void **slot = ig_loop_slot(&x->core->loop, &coro_slot);
	if (!slot)
		return NULL;
	struct wait_core *w = &thread_core;
	if (thread_core_taken) {
		w = calloc(1, sizeof *w);
		if (!w)
			return NULL;
		w->all_next = atomic_load(&all_wait_cores);
		while (!atomic_compare_exchange_weak(&all_wait_cores, &w->all_next, w))
			;
	}
	thread_core_taken = true;
	const struct http_config *cfg = x->core->cfg;
	uint32_t cap = cfg->max_waiting > 0 ? (uint32_t)cfg->max_waiting : ig_wait_default_cap(ig_core_count(x));
	ig_coro_pool_init(&w->pool, (size_t)cfg->stack_size, cap);
	/* Upkeep once a second: under load the number of handlers alive swings
	   between batches, and unmapping and trimming as each came back cost
	   the database routes 12-36% CPU. */
	ig_coro_pool_pace(&w->pool, &x->core->loop.clock.now_ms);
	*slot = w;
	return w;
}

/* A runner: each turn runs the handler ig_wait_run handed over; the
 * handler has returned when it clears ctx->coro. */
IG_HOT static void runner_main(void *arg)
{
	struct wait_core *wc = arg;
	struct ig_coro *self = ig_coro_self();
	for (;;) {
		ig_ctx *x = wc->ctx;
		struct ig_wait_work *k = x->work;
		k->status = k->handle(x, k->in, k->out);
		bool waited = x->waiter && x->waiter->counted;
		x->coro = NULL;
		if (waited || wc->idle)
			return;
		wc->idle = self;
		ig_coro_yield();
		if (!wc->ctx) /* ig_wait_release: the core is drained */
			return;
	}
}

/* ---- the waiter: made by the handler's first linear call ---- */

/* The waiter's size in the arena: what follows it stays aligned. */
#define WAITER_SIZE ((sizeof(struct ig_waiter) + 7) & ~(size_t)7)
_Static_assert(WAITER_SIZE % _Alignof(struct ig_wait_call) == 0, "a call record after the waiter is aligned");

/* x's waiter, made on first use with extra bytes after it (the first
 * call's record: one allocation for both); NULL when the arena is full. */
static struct ig_waiter *waiter_make(ig_ctx *x, size_t extra)
{
	struct ig_waiter *w = ig_arena_alloc(&x->arena, WAITER_SIZE + extra);
	if (!w)
		return NULL;
	*w = (struct ig_waiter){ .ctx = x, .step.fn = waiter_step };
	w->grouped_tail = &w->grouped;
	x->waiter = w;
	return w;
}

static struct ig_waiter *waiter_of(ig_ctx *x)
{
	return x->waiter ? x->waiter : waiter_make(x, 0);
}

static bool satisfied(const struct ig_waiter *w)
{
	switch (w->waiting) {
	case WAIT_CALL:
		return w->awaited->done;
	case WAIT_GROUP:
		return w->grouped_running == 0;
	case WAIT_SLEEP:
		return !w->sleeping;
	default:
		return true;
	}
}

static void step_later(struct ig_waiter *w)
{
	ig_loop_defer(&w->ctx->core->loop, &w->step);
}

/* Something w's handler may wait for has happened. */
static void wake(struct ig_waiter *w)
{
	if ((w->suspended && (w->cancelled || satisfied(w))) || (w->returned && !w->running))
		step_later(w);
}

static enum ig_wait_result wait_until(struct ig_waiter *w, enum waiting what)
{
	w->waiting = what;
	while (!w->cancelled && !satisfied(w)) {
		w->suspended = true;
		if (!w->counted) {
			w->counted = true;
			ig_counter_add(&w->ctx->core->meter.handlers_waiting, 1);
		}
		ig_coro_yield();
	}
	w->waiting = WAIT_NONE;
	return w->cancelled ? IG_WAIT_CANCELLED : IG_WAIT_OK;
}

/* Ends the calls that can end early; their completions may run inside. */
static void cancel_calls(struct ig_waiter *w)
{
	w->calls_cancelled = true;
	for (struct ig_wait_call *c = w->cancellable; c; c = c->next_cancel)
		if (!c->done)
			c->ops->cancel(c);
}

/* The handler's coroutine has returned: what it left open is closed. */
static void handler_returned(ig_ctx *x, struct ig_waiter *w)
{
	w->returned = true;
	if (w->counted)
		ig_counter_add(&x->core->meter.handlers_waiting, UINT64_MAX); /* - 1 */
	for (struct ig_wait_hook *h = w->hooks; h; h = h->next)
		h->on_return(h, x);
	if (!w->calls_cancelled)
		cancel_calls(w);
}

/* Whether the exchange may end now: its handler has returned, no call is
 * running, and no step is queued (it would run on a freed waiter). */
static bool may_end(const struct ig_waiter *w)
{
	return w->returned && !w->running && !w->step.queued;
}

/* Hands the exchange on: its held answer leaves (ig_finish again), or the
 * handler's status goes through the caller's finish. x may be freed. */
static void end(ig_ctx *x)
{
	x->held = false;
	x->waiter = NULL; /* in the arena, which the end may reset */
	ig_timer_cancel(&x->core->loop.timers, &x->timer); /* a cancelled sleep's */
	if (x->finished)
		ig_finish(x, x->status);
	else
		x->work->finish(x, x->work);
}

static void resume(ig_ctx *x, struct ig_waiter *w)
{
	const void *was = ig_fatal_running;
	ig_fatal_running = x; /* a crash's line names the request */
	(void)ig_coro_resume(x->coro);
	ig_fatal_running = was;
	if (!x->coro)
		handler_returned(x, w);
}

static void waiter_step(struct ig_deferred *d)
{
	struct ig_waiter *w = (struct ig_waiter *)((char *)d - offsetof(struct ig_waiter, step));
	ig_ctx *x = w->ctx;
	if (w->cancelled && !w->calls_cancelled)
		cancel_calls(w);
	if (x->coro && w->suspended && (w->cancelled || satisfied(w))) {
		w->suspended = false;
		resume(x, w);
	}
	if (may_end(w))
		end(x);
}

/* ---- running a handler ---- */

/* After the run: the handler waits, or has returned with a waiter. */
__attribute__((noinline)) static int run_waited(ig_ctx *x)
{
	struct ig_waiter *w = x->waiter;
	if (!x->coro) {
		handler_returned(x, w);
		if (may_end(w)) {
			x->held = false;
			x->waiter = NULL;
			return 1;
		}
	}
	return 0;
}

__attribute__((cold, noinline)) static int refuse(ig_ctx *x)
{
	ig_counter_add(&x->core->meter.stack_rejected, 1);
	return -1;
}

IG_HOT int ig_wait_run(ig_ctx *x, struct ig_wait_work *work)
{
	struct wait_core *wc = ig_loop_slot_get(&x->core->loop, &coro_slot);
	if (__builtin_expect(!wc, 0) && !(wc = make_core(x)))
		return refuse(x);
	struct ig_coro *co = wc->idle;
	if (co)
		wc->idle = NULL;
	else if (!(co = ig_coro_new(&wc->pool, runner_main, wc)))
		return refuse(x);
	wc->ctx = x;
	x->work = work;
	x->coro = co;
	x->held = true;
	(void)ig_coro_resume(co);
	if (__builtin_expect(!x->coro && !x->waiter, 1)) { /* returned, and never made a linear call */
		x->held = false;
		return 1;
	}
	return run_waited(x);
}

void ig_wait_release(struct ig_loop *loop)
{
	struct wait_core *wc = ig_loop_slot_get(loop, &coro_slot);
	if (!wc)
		return;
	struct ig_coro *co = wc->idle;
	if (co) {
		wc->idle = NULL;
		wc->ctx = NULL;
		(void)ig_coro_resume(co); /* it returns: its stack goes back to the pool */
	}
	ig_coro_pool_trim(&wc->pool);
}

const struct ig_coro_pool *ig_wait_pool(struct ig_loop *loop)
{
	struct wait_core *wc = ig_loop_slot_get(loop, &coro_slot);
	return wc ? &wc->pool : NULL;
}

void ig_wait_cancel(ig_ctx *x)
{
	struct ig_waiter *w = x->waiter;
	if (!w || w->cancelled)
		return;
	w->cancelled = true;
	ig_http_error_mark_logged(x); /* its answer, a 5xx or not, reaches nobody: no failure to log */
	step_later(w);
}

/* ---- calls ---- */

bool ig_wait_in_handler(const ig_ctx *x)
{
	return x->coro && x->coro == ig_coro_self();
}

void *ig_wait_call_new(ig_ctx *x, size_t size, const struct ig_wait_call_ops *ops, bool grouped)
{
	struct ig_waiter *w = x->waiter;
	struct ig_wait_call *c;
	if (w)
		c = ig_arena_alloc(&x->arena, size);
	else
		c = (w = waiter_make(x, size)) ? (struct ig_wait_call *)((char *)w + WAITER_SIZE) : NULL;
	if (!c)
		return NULL;
	*c = (struct ig_wait_call){ .ctx = x, .ops = ops, .grouped = grouped };
	if (grouped) {
		*w->grouped_tail = c;
		w->grouped_tail = &c->next_grouped;
		w->grouped_running++;
	}
	if (ops->cancel) {
		c->next_cancel = w->cancellable;
		w->cancellable = c;
	}
	w->running++;
	return c;
}

void ig_wait_call_done(struct ig_wait_call *c)
{
	struct ig_waiter *w = c->ctx->waiter;
	c->done = true;
	w->running--;
	if (c->grouped)
		w->grouped_running--;
	wake(w);
}

static void plain_collect(struct ig_wait_call *c)
{
	(void)c; /* never grouped */
}

const struct ig_wait_call_ops ig_wait_plain_ops = { .collect = plain_collect };

void ig_wait_call_again(struct ig_wait_call *c)
{
	c->done = false;
	c->ctx->waiter->running++;
}

enum ig_wait_result ig_wait_for(struct ig_wait_call *c)
{
	struct ig_waiter *w = c->ctx->waiter;
	w->awaited = c;
	return wait_until(w, WAIT_CALL);
}

bool ig_wait_cancelled(const ig_ctx *x)
{
	return x->waiter && x->waiter->cancelled;
}

bool ig_wait_hook_add(ig_ctx *x, struct ig_wait_hook *h)
{
	struct ig_waiter *w = waiter_of(x);
	if (!w)
		return false;
	h->next = w->hooks;
	w->hooks = h;
	return true;
}

struct ig_wait_hook *ig_wait_hook_find(ig_ctx *x, ig_wait_hook_fn *fn)
{
	for (struct ig_wait_hook *h = x->waiter ? x->waiter->hooks : NULL; h; h = h->next)
		if (h->on_return == fn)
			return h;
	return NULL;
}

/* ---- the public calls (include/ingot/http.h) ---- */

enum ig_wait_result ig_wait_all(ig_ctx *x)
{
	struct ig_waiter *w = x->waiter;
	if (!w || !ig_wait_in_handler(x))
		return w && w->cancelled ? IG_WAIT_CANCELLED : IG_WAIT_OK;
	enum ig_wait_result r = wait_until(w, WAIT_GROUP);
	for (struct ig_wait_call *c = w->grouped; c; c = c->next_grouped)
		c->ops->collect(c);
	w->grouped = NULL;
	w->grouped_tail = &w->grouped;
	return r;
}

static void on_sleep(ig_ctx *x, void *arg)
{
	(void)x;
	struct ig_waiter *w = arg;
	w->sleeping = false;
	wake(w);
}

enum ig_wait_result ig_sleep(ig_ctx *x, uint32_t ms)
{
	struct ig_waiter *w = ig_wait_in_handler(x) ? waiter_of(x) : NULL;
	if (!w || w->cancelled)
		return IG_WAIT_CANCELLED;
	w->sleeping = true;
	ig_after(x, ms, on_sleep, w);
	return wait_until(w, WAIT_SLEEP);
}
