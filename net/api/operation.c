/* The one body every operation runs (operation.h): in and out in the
 * request arena, the decoder's verdict, the handler on its coroutine
 * (net/http/wait.h) with its encoder, and,
 * in debug builds, the response check the descriptor points to; an
 * operation with x-ingot-hooks runs its before-hooks between the decoder
 * and the handler (include/ingot/hooks.h). Also the
 * router's fixed answers (path segments, OPTIONS, 405). */
#include "operation.h"
#include "net/http/wait.h"
#include "net/http/cors.h"
#include "net/http/exchange.h"

#include <string.h>

/* A decoder's verdict: 400 with the collected errors, 415, or 500. */
static void answer_rejected(ig_ctx *ctx, int status)
{
	ig_count_rejected(ctx, status);
	if (status == 400)
		ig_respond_errors(ctx, "the request does not match the API");
	else if (status == 415)
		ig_respond_problem(ctx, 415, "the request body must be application/json");
	else
		ig_respond_problem(ctx, status, "out of request memory");
}

/* One run of an operation, in the request arena with its in and out
 * structs: a handler that waits returns on its coroutine long after
 * ig_run_operation has. */
struct op_run {
	struct ig_wait_work work; /* first: finish gets it */
	const struct ig_operation *op;
};

/* The handler's status, now or once it has waited: the check and the
 * encoder, as for every answer. */
IG_HOT static inline __attribute__((always_inline)) void op_end(ig_ctx *ctx, struct op_run *r)
{
	int status = r->work.status;
	if (r->op->encode && r->op->check)
		status = r->op->check(ctx, r->op, status, r->work.out);
	if (status != IG_PENDING)
		ig_finish(ctx, status);
}

static void op_finish(ig_ctx *ctx, void *work)
{
	op_end(ctx, work);
}

#define OP_ALIGN(n) (((n) + 15) & ~(size_t)15)

/* The core has INGOT_MAX_WAITING handlers alive (or no stack could be
 * mapped): the client may try again in a moment. */
__attribute__((cold, noinline)) static void answer_no_stack(ig_ctx *ctx)
{
	ig_add_header(ctx, "Retry-After", IG_STR("1"));
	ig_respond_problem(ctx, 503, "too many requests are waiting on this core");
}

/* The before-hooks, in order, until one answers (include/ingot/hooks.h).
 * Returns whether the handler runs. */
__attribute__((noinline)) static bool before_hooks(ig_ctx *ctx, const struct ig_operation *op, const void *in)
{
	const struct ig_op_hooks *h = op->hooks;
	for (uint32_t i = 0; i < h->nbefore; i++) {
		int status = h->before[i](ctx, op->id, in);
		if (status != IG_HOOK_NEXT || ig_http_answered(ctx)) {
			/* A hook that answered itself keeps its answer (a second
			   ig_finish changes nothing). */
			ig_finish(ctx, status >= 100 && status <= 599 ? status : 500);
			return false;
		}
	}
	return true;
}

/* One body for both runs: hooks is NULL (a constant) in the one every
 * operation without x-ingot-hooks takes, so that it has no hook code. */
IG_HOT static inline __attribute__((always_inline)) void run_operation(ig_ctx *ctx, const struct ig_operation *op,
								     const ig_str *seg, const struct ig_op_hooks *hooks)
{
	if (hooks) /* first: every answer of the operation runs its after-hooks */
		ig_http_set_op_hooks(ctx, hooks);
	if (__builtin_expect(op->rate_limit != NULL, 0) && !ig_rate_limit_admit(ctx, op->rate_limit))
		return;
	/* The door before the decoder: a caller without credentials learns
	   nothing of the parameters' rules and costs no decoding. */
	if (__builtin_expect(op->security != NULL, 0) && !op->security->check(ctx, op->security))
		return;
	/* In the arena, zeroed: a pending or waiting handler keeps them. One
	   allocation: the run, then in, then out. */
	size_t in_size = OP_ALIGN(op->in_size), out_size = OP_ALIGN(op->out_size);
	struct op_run *r = ig_alloc(ctx, OP_ALIGN(sizeof *r) + in_size + out_size);
	if (!r) {
		ig_respond_problem(ctx, 500, "out of request memory");
		return;
	}
	char *in = (char *)r + OP_ALIGN(sizeof *r);
	memset(in, 0, in_size + out_size);
	*r = (struct op_run){
		.work = { .handle = op->handle, .name = op->id, .in = in, .out = in + in_size, .finish = op_finish },
		.op = op,
	};
	if (op->decode) {
		int bad = op->decode(ctx, seg, in);
		if (bad) {
			answer_rejected(ctx, bad);
			return;
		}
	}
	if (hooks && hooks->nbefore && !before_hooks(ctx, op, in))
		return;
	/* With a check, the checker encodes (now, or when a pending answer
	   finishes) so that it sees the body before it leaves. */
	if (op->encode && !op->check)
		ig_set_encoder(ctx, op->encode, r->work.out);
	switch (ig_wait_run(ctx, &r->work)) {
	case 1:
		op_end(ctx, r);
		break;
	case 0: /* it waits: op_finish runs when it has returned */
		break;
	default:
		answer_no_stack(ctx);
	}
}

__attribute__((noinline)) static void run_hooked(ig_ctx *ctx, const struct ig_operation *op, const ig_str *seg)
{
	run_operation(ctx, op, seg, op->hooks);
}

IG_HOT void ig_run_operation(ig_ctx *ctx, const struct ig_operation *op, const ig_str *seg)
{
	if (__builtin_expect(op->hooks != NULL, 0))
		run_hooked(ctx, op, seg);
	else
		run_operation(ctx, op, seg, NULL);
}

/* ---- the router's answers ---- */

IG_HOT size_t ig_split_path(ig_str path, ig_str *seg, size_t max)
{
	const char *p = path.ptr + 1, *end = path.ptr + path.len;
	size_t n = 0;
	for (;;) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		if (n == max)
			return max + 1;
		seg[n++] = (ig_str){ p, (size_t)((slash ? slash : end) - p) };
		if (!slash)
			return n;
		p = slash + 1;
	}
}

void ig_answer_options(ig_ctx *ctx, ig_str allow, ig_str headers)
{
	if (ig_cors_on && ig_cors_preflight(ctx, allow, headers))
		return;
	ig_add_header(ctx, "Allow", allow);
	ig_finish(ctx, 204);
}

void ig_answer_other_method(ig_ctx *ctx, ig_str allow, ig_str headers)
{
	if (ig_str_eq(ig_req(ctx)->method, "OPTIONS", 7)) {
		ig_answer_options(ctx, allow, headers);
		return;
	}
	ig_add_header(ctx, "Allow", allow);
	ig_respond_problem(ctx, 405, "the method is not allowed for this resource");
}
