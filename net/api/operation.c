/* The one body every operation runs (operation.h): its rate limit and
 * door, in and out in the request arena, the decoder's verdict, the
 * before-hooks of an operation with x-ingot-hooks (include/ingot/hooks.h),
 * the handler on its coroutine (net/http/wait.h; the door too when an auth
 * handler may wait) with its encoder, and,
 * in debug builds, the response check the descriptor points to. Also the
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
	/* The door on the coroutine (door_then_handle): the handler's in
	   (work.in is the run), the path's segments in the arena (the
	   router's are on its stack, gone once the door has waited), and
	   whether the door, the limit or the decoder answered instead. */
	void *in;
	const ig_str *seg;
	bool answered;
};

/* The handler's status, now or once it has waited: the check and the
 * encoder, as for every answer. */
IG_HOT static inline __attribute__((always_inline)) void op_end(ig_ctx *ctx, struct op_run *r)
{
	int status = r->work.status;
	if (__builtin_expect(r->answered, 0)) {
		ig_finish(ctx, status); /* hands the held answer on: it stands */
		return;
	}
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

/* The decoder's verdict on the request: true to go on, false when it has
 * been answered. */
IG_HOT static inline __attribute__((always_inline)) bool decoded(ig_ctx *ctx, const struct ig_operation *op,
								 const ig_str *seg, void *in)
{
	int bad = op->decode ? op->decode(ctx, seg, in) : 0;
	if (__builtin_expect(bad != 0, 0)) {
		answer_rejected(ctx, bad);
		return false;
	}
	return true;
}

/* A limit by subject needs the principal the door has set. */
static bool admitted_by_subject(ig_ctx *ctx, const struct ig_rate_limit *limit)
{
	return !limit || limit->key != IG_RATE_KEY_SUBJECT || ig_rate_limit_admit(ctx, limit);
}

/* The handler's work for an operation whose door may wait (an auth
 * handler's linear call): the door, a limit by subject and the decoder on
 * the handler's coroutine, in the order ig_run_operation keeps for the
 * others, then the handler. run is the op_run. */
static int door_then_handle(ig_ctx *ctx, const void *run, void *out)
{
	struct op_run *r = (struct op_run *)run;
	const struct ig_operation *op = r->op;
	if (!op->security->check(ctx, op->security) || !admitted_by_subject(ctx, op->rate_limit) ||
	    !decoded(ctx, op, r->seg, r->in)) {
		r->answered = true;
		return 0;
	}
	if (op->hooks && op->hooks->nbefore && !before_hooks(ctx, op, r->in)) {
		r->answered = true;
		return 0;
	}
	if (op->encode && !op->check)
		ig_set_encoder(ctx, op->encode, out);
	return op->handle(ctx, r->in, out);
}

/* The path's segments, copied into the arena for a decoder that runs once
 * the door has waited; NULL when the arena is full. */
__attribute__((noinline)) static const ig_str *kept_segments(ig_ctx *ctx)
{
	ig_str path = ig_req(ctx)->path;
	size_t n = 1;
	for (size_t i = 1; i < path.len; i++)
		n += path.ptr[i] == '/';
	ig_str *seg = ig_alloc(ctx, n * sizeof *seg);
	if (seg)
		ig_split_path(path, seg, n);
	return seg;
}

/* The rate limit and the door, on the loop; false when one has answered.
 * The door before the decoder: a caller without credentials learns
 * nothing of the parameters' rules and costs no decoding. *waits: the
 * door may wait, so it is left to door_then_handle, with a limit by
 * subject. */
__attribute__((noinline)) static bool door(ig_ctx *ctx, const struct ig_operation *op, bool *waits)
{
	const struct ig_rate_limit *limit = op->rate_limit;
	const struct ig_security *sec = op->security;
	if (limit && limit->key != IG_RATE_KEY_SUBJECT && !ig_rate_limit_admit(ctx, limit))
		return false;
	if (sec && ig_security_may_wait(sec))
		return *waits = true;
	return (!sec || sec->check(ctx, sec)) && admitted_by_subject(ctx, limit);
}

/* One body for both runs: hooks is NULL (a constant) in the one every
 * operation without x-ingot-hooks takes, so that it has no hook code. */
IG_HOT static inline __attribute__((always_inline)) void run_operation(ig_ctx *ctx, const struct ig_operation *op,
								     const ig_str *seg, const struct ig_op_hooks *hooks)
{
	bool door_waits = false;
	if (hooks) /* first: every answer of the operation runs its after-hooks */
		ig_http_set_op_hooks(ctx, hooks);
	if (__builtin_expect(op->rate_limit != NULL || op->security != NULL, 0) && !door(ctx, op, &door_waits))
		return;
	/* In the arena, zeroed: a pending or waiting handler keeps them. One
	   allocation: the run, then in, then out. */
	size_t in_size = OP_ALIGN(op->in_size), out_size = OP_ALIGN(op->out_size);
	struct op_run *r = ig_alloc(ctx, OP_ALIGN(sizeof *r) + in_size + out_size);
	const ig_str *kept = seg;
	if (!r || (door_waits && op->decode && !(kept = kept_segments(ctx)))) {
		ig_respond_problem(ctx, 500, "out of request memory");
		return;
	}
	char *in = (char *)r + OP_ALIGN(sizeof *r);
	memset(in, 0, in_size + out_size);
	*r = (struct op_run){
		.work = { .handle = op->handle, .name = op->id, .in = in, .out = in + in_size, .finish = op_finish },
		.op = op,
	};
	if (__builtin_expect(door_waits, 0)) {
		r->work.handle = door_then_handle;
		r->work.in = r;
		r->in = in;
		r->seg = kept;
	} else {
		if (!decoded(ctx, op, seg, in))
			return;
		if (hooks && hooks->nbefore && !before_hooks(ctx, op, in))
			return;
		/* With a check, the checker encodes (now, or when a pending
		   answer finishes) so that it sees the body before it leaves. */
		if (op->encode && !op->check)
			ig_set_encoder(ctx, op->encode, r->work.out);
	}
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

bool ig_path_fits(ig_str path, const char *tmpl)
{
	const char *p = path.ptr, *end = path.ptr + path.len;
	while (*tmpl) {
		if (p == end || *p != '/' || *tmpl != '/')
			return false;
		p++, tmpl++;
		const char *seg_end = memchr(p, '/', (size_t)(end - p));
		size_t seg = (size_t)((seg_end ? seg_end : end) - p);
		size_t t = strcspn(tmpl, "/");
		if (tmpl[0] == '{' ? !seg : t != seg || memcmp(p, tmpl, seg) != 0)
			return false;
		p += seg;
		tmpl += t;
	}
	return p == end;
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
