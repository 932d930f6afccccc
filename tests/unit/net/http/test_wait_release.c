/* The drain's end for a core's coroutines (net/http/wait.c's
 * ig_wait_release), on the test core with an app written by hand: after a
 * handler that slept (its stack back among the pool's idle ones), and
 * after one that never waited (its runner parked for the next), the
 * release leaves no coroutine alive and no stack mapped; the core then
 * serves again, on stacks mapped anew. */
#include "ingot/testing.h"
#include "kernel/runtime/coro.h"
#include "net/http/internal.h"
#include "net/http/wait.h"
#include "tests/unit/check.h"
#include "tests/unit/hand_app.h"

static int say(ig_ctx *ctx, const char *text)
{
	ig_set_content_type(ctx, "text/plain");
	ig_wbuf_put(ig_body(ctx), text, strlen(text));
	return 200;
}

static int h_quick(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	return say(ctx, "quick");
}

static int h_sleep(ig_ctx *ctx, const void *in, void *out)
{
	(void)in, (void)out;
	return say(ctx, ig_sleep(ctx, 1) == IG_WAIT_OK ? "slept" : "not slept");
}

static const struct ig_operation ops[] = { HAND_OP("quick", h_quick), HAND_OP("sleep", h_sleep) };
static const char *const routes[] = { "/quick", "/sleep" };

static void route(ig_ctx *ctx)
{
	hand_route(ctx, routes, ops, IG_COUNTOF(routes));
}

static const struct ig_app app = {
	.name = "wait_release", .version = "0", .route = route, .routes = routes, .route_count = IG_COUNTOF(routes),
	.openapi_json = "{}", .openapi_len = 2,
};

static bool answers(const char *target, const char *body)
{
	struct ig_test_response r;
	return ig_test_request("GET", target, NULL, 0, IG_STR(""), &r) == IG_TEST_OK && r.status == 200 &&
	       ig_test_body_is(&r, body);
}

int main(void)
{
	if (ig_test_init(&app) != IG_TEST_OK) {
		printf("not ok 1 - the test core starts\n1..1\n");
		return 1;
	}
	struct ig_loop *loop = &ig_test_core()->loop;
	CHECK(!ig_wait_pool(loop), "no pool before the first handler");
	ig_wait_release(loop); /* nothing to release: no effect */
	CHECK(answers("/sleep", "slept"), "a handler that sleeps");
	const struct ig_coro_pool *p = ig_wait_pool(loop);
	CHECK(p != NULL, "the core has a pool");
	if (!p)
		return check_done();
	CHECK(p->live == 0 && p->idle == 1, "its stack is back, idle in the pool");
	ig_wait_release(loop);
	CHECK(p->live == 0 && p->idle == 0 && !p->free_list, "released: no idle stack stays mapped");
	CHECK(answers("/quick", "quick"), "a handler that never waits, on a stack mapped anew");
	CHECK(p->live == 1 && p->idle == 0, "its runner is parked, alive, for the next");
	ig_wait_release(loop);
	CHECK(p->live == 0 && p->idle == 0 && !p->free_list, "released: the parked runner has ended, its stack unmapped");
	CHECK(answers("/quick", "quick") && answers("/sleep", "slept") && answers("/quick", "quick"),
	      "the core serves again after");
	return check_done();
}
