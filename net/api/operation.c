/* The one body every operation runs (operation.h): in and out in the
 * request arena, the decoder's verdict, the handler with its encoder, and,
 * in debug builds, the response check the descriptor points to. Also the
 * router's fixed answers (path segments, OPTIONS, 405). */
#include "operation.h"

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

IG_HOT void ig_run_operation(ig_ctx *ctx, const struct ig_operation *op, const ig_str *seg)
{
	/* In the arena, zeroed: a pending handler may keep pointers to them. */
	void *in = ig_alloc(ctx, op->in_size);
	void *out = ig_alloc(ctx, op->out_size);
	if (!in || !out) {
		ig_respond_problem(ctx, 500, "out of request memory");
		return;
	}
	memset(in, 0, op->in_size);
	memset(out, 0, op->out_size);
	if (op->decode) {
		int bad = op->decode(ctx, seg, in);
		if (bad) {
			answer_rejected(ctx, bad);
			return;
		}
	}
	/* With a check, the checker encodes (now, or when a pending answer
	 * finishes) so that it sees the body before it leaves. */
	bool checked = op->encode && op->check;
	if (op->encode && !checked)
		ig_set_encoder(ctx, op->encode, out);
	int status = op->handle(ctx, in, out);
	if (checked)
		status = op->check(ctx, op, status, out);
	if (status != IG_PENDING)
		ig_finish(ctx, status);
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

void ig_answer_options(ig_ctx *ctx, ig_str allow)
{
	ig_add_header(ctx, "Allow", allow);
	ig_finish(ctx, 204);
}

void ig_answer_other_method(ig_ctx *ctx, ig_str allow)
{
	if (ig_str_eq(ig_req(ctx)->method, "OPTIONS", 7)) {
		ig_answer_options(ctx, allow);
		return;
	}
	ig_add_header(ctx, "Allow", allow);
	ig_respond_problem(ctx, 405, "the method is not allowed for this resource");
}
