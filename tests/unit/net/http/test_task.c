/* Tasks (net/http/task.h) on the test core: a task's request is the one
 * given (method, path, the traceparent's trace); its answer reaches done
 * after the batch, never inside the call that finished it, once, with the
 * status; a waiting handler's task is not cancelled; the drain counts a
 * task (core->count) and hears its end; a draining core starts none. */
#include "ingot/testing.h"
#include "net/http/internal.h"
#include "net/http/task.h"
#include "net/http/wait.h"
#include "tests/unit/check.h"

static const struct ig_app app = {
	.name = "task", .version = "0", .routes = NULL, .route_count = 0, .openapi_json = "{}", .openapi_len = 2,
};

static struct {
	int done_calls, status, finishing;
	bool done_inside, saw_cancelled, drained;
	char path[64], trace_id[40];
} seen;

static int h_quick(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	ig_str p = ig_req(ctx)->path;
	snprintf(seen.path, sizeof seen.path, "%.*s", (int)p.len, p.ptr);
	snprintf(seen.trace_id, sizeof seen.trace_id, "%s", ig_trace_id(ctx));
	return 204;
}

static int h_sleep(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	int r = ig_sleep(ctx, 1);
	seen.saw_cancelled = ig_cancelled(ctx);
	return r == IG_WAIT_OK ? 202 : 500;
}

static void waited(ig_ctx *ctx, void *arg)
{
	seen.finishing++;
	ig_finish(ctx, ((struct ig_wait_work *)arg)->status);
	ig_finish(ctx, 500); /* a second answer changes nothing */
	seen.finishing--;
}

static void done(struct http_task *t, struct ig_ctx *x)
{
	(void)t;
	seen.done_calls++;
	seen.done_inside = seen.done_inside || seen.finishing;
	seen.status = x->status;
	x->core->loop.running = false;
}

static void on_drained(struct http_core *core)
{
	(void)core;
	seen.drained = true;
}

static void on_guard(struct ig_timer *timer)
{
	(void)timer;
	ig_test_core()->loop.running = false;
}

/* Runs the loop until done stops it (or a guard of 5 s). */
static void run_loop(struct http_core *core)
{
	struct ig_timer guard = { .fn = on_guard };
	ig_timer_set(&core->loop.timers, &guard, core->loop.clock.now_ms + 5000);
	ig_loop_run(&core->loop);
	ig_timer_cancel(&core->loop.timers, &guard);
}

static struct ig_ctx *begin(struct http_task *t, struct http_core *core, ig_header *field)
{
	static const char path[] = "/_ingot/pubsub/events";
	const struct http_request r = {
		.method = "POST", .method_len = 4, .target = path, .target_len = sizeof path - 1,
		.path = path, .path_len = sizeof path - 1, .minor_version = 1,
		.headers = field, .header_capacity = 1, .num_headers = 1, .traceparent_field = 1, .traceparents = 1,
	};
	return ig_http_task_begin(t, core, &r, IG_STR("{\"n\":1}"), done);
}

int main(void)
{
	if (ig_test_init(&app) != IG_TEST_OK) {
		printf("not ok 1 - the test core starts\n1..1\n");
		return 1;
	}
	struct http_core *core = ig_test_core();
	ig_header field = { IG_STR("traceparent"), IG_STR("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") };
	struct http_task t;

	/* A handler that returns at once. */
	uint32_t count = core->count;
	struct ig_ctx *x = begin(&t, core, &field);
	CHECK(x != NULL, "a task starts");
	if (!x)
		return check_done();
	CHECK(core->count == count + 1 && core->tasks == &t, "the drain counts it");
	CHECK(!ig_cancelled(x), "a task is not cancelled: it has no connection to lose");
	struct ig_wait_work w = { .handle = h_quick, .name = "quick", .finish = waited };
	CHECK(ig_wait_run(x, &w) == 1, "its handler ran to its end");
	seen.finishing++;
	ig_finish(x, w.status);
	seen.finishing--;
	CHECK(seen.done_calls == 0, "done waits for the batch's end");
	run_loop(core);
	CHECK(seen.done_calls == 1 && seen.status == 204 && !seen.done_inside, "done once, after, with the status");
	CHECK(strcmp(seen.path, "/_ingot/pubsub/events") == 0, "the handler saw the task's path");
	CHECK(strcmp(seen.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736") == 0, "and the traceparent's trace");
	CHECK(core->count == count && core->tasks == NULL, "the count is back");

	/* A handler that waits: not cancelled meanwhile; the drain hears its end. */
	seen = (__typeof__(seen)){ 0 };
	x = begin(&t, core, &field);
	CHECK(x != NULL, "a second task on the same record");
	if (!x)
		return check_done();
	w = (struct ig_wait_work){ .handle = h_sleep, .name = "sleep", .finish = waited };
	CHECK(ig_wait_run(x, &w) == 0, "its handler waits");
	void (*drained)(struct http_core *) = core->drained;
	core->drained = on_drained;
	core->draining = true;
	struct http_task refused;
	CHECK(begin(&refused, core, &field) == NULL && core->count == count + 1, "a draining core starts no task");
	run_loop(core);
	CHECK(seen.done_calls == 1 && seen.status == 202 && !seen.done_inside, "done once, after the handler's wait");
	CHECK(!seen.saw_cancelled, "the waiting handler was not told cancelled");
	CHECK(seen.drained && core->count == count, "its end told the drain");
	core->draining = false;
	core->drained = drained;
	return check_done();
}
